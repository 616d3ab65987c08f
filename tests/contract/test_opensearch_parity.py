"""The parity benchmark's reduced gate: OpenSearch ranks documents as the SQLite index does.

`make bench` runs the full comparison (1,000 SciFact abstracts, 150 queries, latency at 1 and 8 clients). Here:
the committed FAQ set (bench/data/faq.jsonl: 158 passages, 79 questions in ten languages), so the gate never
depends on the eval folder, with the bundled model's vectors, the same in both engines. A drift in BM25
parameters, normalisation or tie order, in filters or in fusion fails the suite.
"""


def test_opensearch_ranks_documents_like_sqlite(opensearch_url):
    from bench.opensearch_parity import run

    result = run(opensearch_url, docs=0, queries=0, write=False, clients=(1,), data="faq")
    assert result["passed"], result
    assert result["keyword"]["same_top10"] >= 0.95 and result["keyword"]["ndcg_gap"] <= 0.01
    assert result["hybrid"]["ndcg_gap"] <= 0.01
    assert result["ingest"]["other"]["docs_per_s"] > 0 and result["latency"]["other"]["keyword@1"]["p50_ms"] > 0
