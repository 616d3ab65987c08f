"""The parity benchmark's reduced gate: OpenSearch ranks a SciFact subset as the SQLite index does.

`make bench` runs the full comparison (1,000 abstracts, 150 queries, the bundled model, latency at 1 and 8
clients); here 60 abstracts and 20 queries with hashed vectors (the same in both engines), so a drift in BM25
normalisation, filters or fusion fails the suite.
"""

import pytest
from fakes import HashedEmbedder

from bench.common import EVAL


def test_opensearch_ranks_a_scifact_subset_like_sqlite(opensearch_url):
    if not (EVAL / "scifact").exists():
        pytest.skip(f"SciFact is not at {EVAL} (set SOURCERER_EVAL_DIR to the shared eval folder)")
    from bench.opensearch_parity import run

    result = run(opensearch_url, docs=60, queries=20, write=False, embedder=HashedEmbedder(), clients=(1,))
    assert result["passed"], result
    assert result["keyword"]["same_top10"] >= 0.95 and result["hybrid"]["ndcg_gap"] <= 0.01
    assert result["ingest"]["other"]["docs_per_s"] > 0 and result["latency"]["other"]["keyword@1"]["p50_ms"] > 0
