"""The OpenSearch adapter's exact requests, sent by the real opensearch-py client to a loopback server."""

import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeOpenSearch
from sourcerer.errors import ProviderError
from sourcerer.models import receipt_of
from sourcerer.scopes import Access, scope_ancestors
from sourcerer.store.models import document_id_for, unit_id_for
from sourcerer.store.opensearch import OpenSearchIndex, access_filter, index_body
from sourcerer.text import terms

ROOT = Path(__file__).resolve().parents[2]
TEXT = "The failover cutover took 42 seconds."


class FourD:
    """A deterministic 4-d embedder so request bodies can be asserted exactly."""

    model_id = "test:4d"

    def embed(self, texts, role):
        return np.array([[0.5, 0.5, 0.5, 0.5]] * len(texts), dtype=np.float32)

    def calibrate(self, cosine):
        return max(0.0, min(1.0, cosine))


@pytest.fixture
def cluster():
    fake = FakeOpenSearch()
    yield fake
    fake.close()


def _index(cluster, **kw):
    return OpenSearchIndex(host="127.0.0.1", port=cluster.port, index="docs", embedder=FourD(), backoff_s=0.0, **kw)


def _no_existing(cluster):
    cluster.route("POST", "/docs/_search", (200, {"hits": {"total": {"value": 0}, "hits": []}}))


def test_committed_mapping_matches_the_code():
    assert json.loads((ROOT / "infra/opensearch/index.json").read_text()) == index_body(384)


def test_init_creates_the_index_with_the_embedder_dimension(cluster):
    cluster.route("HEAD", "/docs", (404, {}))
    cluster.route("PUT", "/docs", (200, {"acknowledged": True}))
    assert _index(cluster).init() == {"index": "docs", "action": "created"}
    body = cluster.sent("PUT", "/docs")[0]["body"]
    assert body == index_body(4)
    assert body["mappings"]["properties"]["embedding"]["dimension"] == 4
    assert body["settings"]["index"]["knn"] is True


def test_the_knn_engine_comes_from_the_url_or_the_cli_and_is_checked(cluster, capsys):
    from sourcerer.cli import main
    from sourcerer.errors import ConfigurationError
    from sourcerer.store import open_index

    assert open_index("opensearch://h:9200/docs?engine=lucene", embedder="none").knn_engine == "lucene"
    assert open_index("opensearch://h:9200/docs", embedder="none").knn_engine == "faiss"  # the AWS default
    with pytest.raises(ConfigurationError, match="k-NN engine"):
        open_index("opensearch://h:9200/docs?engine=nmslib", embedder="none")
    assert main(["opensearch", "mapping", "--dimension", "8", "--engine", "lucene"]) == 0
    printed = json.loads(capsys.readouterr().out)["mappings"]["properties"]["embedding"]
    assert printed["method"]["engine"] == "lucene" and printed["dimension"] == 8
    cluster.route("HEAD", "/docs", (404, {}))
    cluster.route("PUT", "/docs", (200, {"acknowledged": True}))
    _index(cluster, knn_engine="lucene").init()
    assert cluster.sent("PUT", "/docs")[0]["body"]["mappings"]["properties"]["embedding"]["method"]["engine"] == "lucene"


def test_init_updates_an_existing_index(cluster):
    cluster.route("HEAD", "/docs", (200, {}))
    cluster.route("GET", "/docs/_mapping", (200, {"docs": {"mappings": {"properties": {"embedding": {"dimension": 4}}}}}))
    cluster.route("PUT", "/docs/_mapping", (200, {"acknowledged": True}))
    result = _index(cluster).init()
    assert result["action"] == "updated" and "default BM25" in result["warning"]  # made before the similarity
    # only the fields the index lacks: an existing field's parameters cannot change
    wanted = {k: v for k, v in index_body(4)["mappings"]["properties"].items() if k != "embedding"}
    assert cluster.sent("PUT", "/docs/_mapping")[0]["body"] == {"properties": wanted}


def test_ingest_sends_one_bulk_with_ids_terms_vectors_and_filters(cluster):
    _no_existing(cluster)
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 201}}]}))
    result = _index(cluster).ingest_document(
        {"source_uri": "ops.txt", "text": TEXT, "tenant": "acme", "scope": "acme/alpha/backend", "acl": ["eng"]}
    )

    assert result["status"] == "ingested" and result["chunks"] == 1
    lookup = cluster.sent("POST", "/docs/_search")[0]["body"]
    assert lookup["query"]["bool"]["filter"] == [{"term": {"tenant": "acme"}}, {"term": {"document_id": result["document_id"]}}]
    bulk = cluster.sent("POST", "/_bulk")[0]
    assert "refresh=wait_for" in bulk["query"]
    action, source = bulk["body"]
    # the write's own moment as an external version: of two versions writing a shared chunk, the later one wins
    written = datetime.fromisoformat(source["ingested_at"]).timestamp()
    assert action == {
        "index": {"_index": "docs", "_id": source["unit_id"], "version": int(written * 1_000_000), "version_type": "external"}
    }
    assert source["tenant"] == "acme" and source["scope"] == "acme/alpha/backend"
    assert source["scope_ancestors"] == ["acme", "acme/alpha", "acme/alpha/backend"] == scope_ancestors("acme/alpha/backend")
    assert source["acl"] == ["eng"] and source["public"] is False
    assert source["terms"] == " ".join(terms(TEXT))
    assert source["text"] == TEXT and source["receipt"] == receipt_of(TEXT)
    assert source["locator"] == {"kind": "lines", "start": 1, "end": 1}
    assert source["embedding"] == [0.5, 0.5, 0.5, 0.5]


def test_serverless_sends_no_document_ids_and_never_refreshes(cluster):
    _no_existing(cluster)
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 201}}]}))
    _index(cluster, aws_service=None).ingest_document({"source_uri": "a.txt", "text": TEXT})
    serverless = _index(cluster)
    serverless.serverless = True
    serverless.ingest_document({"source_uri": "b.txt", "text": TEXT})
    bulk = cluster.sent("POST", "/_bulk")[-1]
    assert bulk["body"][0] == {"index": {"_index": "docs"}}
    assert "refresh" not in bulk["query"]


def test_bulk_items_rejected_with_429_are_retried_alone(cluster):
    _no_existing(cluster)
    text = " ".join(f"Sentence {i} is about failover drills number {i}." for i in range(60))
    cluster.route(
        "POST",
        "/_bulk",
        (
            200,
            {
                "errors": True,
                "items": [
                    {"index": {"status": 201}},
                    {"index": {"status": 429, "error": {"type": "es_rejected_execution_exception"}}},
                ],
            },
        ),
        (200, {"errors": False, "items": [{"index": {"status": 201}}]}),
    )
    index = _index(cluster)
    index.chunk_settings = None
    result = index.ingest_document({"source_uri": "long.txt", "text": text})
    first, retry = cluster.sent("POST", "/_bulk")
    assert result["chunks"] == len(first["body"]) // 2 >= 2
    assert retry["body"] == first["body"][2:4]


def test_other_bulk_item_errors_fail_loudly(cluster):
    _no_existing(cluster)
    cluster.route(
        "POST",
        "/_bulk",
        (200, {"errors": True, "items": [{"index": {"status": 400, "error": {"type": "mapper_parsing_exception"}}}]}),
    )
    with pytest.raises(ProviderError, match="mapper_parsing_exception"):
        _index(cluster).ingest_document({"source_uri": "a.txt", "text": TEXT})


def test_changed_document_indexes_new_chunks_then_deletes_old_ones(cluster):
    cluster.route(
        "POST",
        "/docs/_search",
        (200, {"hits": {"hits": [{"_source": {"content_hash": "old", "scope": "acme", "acl": [], "source_uri": "a.txt"}}]}}),
    )
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 201}}]}))
    cluster.route("POST", "/docs/_delete_by_query", (200, {"deleted": 3}))
    result = _index(cluster).ingest_document({"source_uri": "a.txt", "text": TEXT, "tenant": "acme"})
    assert result["status"] == "replaced"
    order = [r["path"] for r in cluster.requests]
    assert order.index("/_bulk") < order.index("/docs/_delete_by_query")
    query = cluster.sent("POST", "/docs/_delete_by_query")[0]["body"]["query"]["bool"]
    assert query["filter"][:2] == [{"term": {"tenant": "acme"}}, {"term": {"document_id": result["document_id"]}}]
    # only versions written before this one go (two writers at once must not delete each other's chunks)
    written = cluster.sent("POST", "/_bulk")[0]["body"][1]["ingested_at"]
    assert query["filter"][2:] == [{"range": {"ingested_at": {"lt": written}}}]
    assert query["must_not"] == [{"term": {"content_hash": cluster.sent("POST", "/_bulk")[0]["body"][1]["content_hash"]}}]


def _source(unit, text, doc="d1"):
    return {
        "unit_id": unit,
        "document_id": doc,
        "source_uri": f"{doc}.txt",
        "label": doc,
        "text": text,
        "locator": {"kind": "lines", "start": 1, "end": 1},
        "receipt": receipt_of(text),
        "scope": "acme/alpha",
        "metadata": {},
        "content_hash": "h",
        "ingested_at": "2026-11-30T00:00:00+00:00",
    }


def test_hybrid_search_is_one_msearch_with_the_filter_inside_both_queries(cluster):
    cluster.route(
        "POST",
        "/_msearch",
        (
            200,
            {
                "responses": [
                    {"hits": {"hits": [{"_score": 2.0, "_source": _source("u1", "failover cutover", "d1")}]}},
                    {"hits": {"total": {"value": 10}}, "aggregations": {"t0": {"doc_count": 1}, "t1": {"doc_count": 1}}},
                    {
                        "hits": {
                            "hits": [
                                {"_score": 0.9, "_source": _source("u2", "switch to standby", "d2")},
                                {"_score": 0.8, "_source": _source("u1", "failover cutover", "d1")},
                            ]
                        }
                    },
                ]
            },
        ),
    )
    hits = _index(cluster).search("failover cutover", tenant="acme", scope="acme/alpha", groups=["eng"], k=5)

    lines = cluster.sent("POST", "/_msearch")[0]["body"]
    filters = access_filter("acme", "acme/alpha", ["eng"])
    assert filters == [
        {"term": {"tenant": "acme"}},
        {"term": {"scope_ancestors": "acme/alpha"}},
        {"bool": {"should": [{"term": {"public": True}}, {"terms": {"acl": ["eng"]}}], "minimum_should_match": 1}},
    ]
    assert lines[0] == lines[2] == lines[4] == {"index": "docs"}
    assert lines[1]["query"] == {"bool": {"must": {"match": {"terms": {"query": "failover cutover"}}}, "filter": filters}}
    assert lines[3]["aggs"] == {
        "t0": {"filter": {"term": {"terms": "failover"}}},
        "t1": {"filter": {"term": {"terms": "cutover"}}},
    }
    assert lines[5]["query"] == {
        "knn": {"embedding": {"vector": [0.5, 0.5, 0.5, 0.5], "k": 50, "filter": {"bool": {"filter": filters}}}}
    }
    assert lines[1]["size"] == lines[5]["size"] == 50
    assert [h.unit_id for h in hits] == ["u1", "u2"]  # u1 is in both lists: RRF puts it first
    assert all(0 <= h.score <= 1 for h in hits)


def test_a_failed_msearch_item_is_a_provider_error(cluster):
    cluster.route("POST", "/_msearch", (200, {"responses": [{"error": {"type": "search_phase_execution_exception"}}, {}, {}]}))
    with pytest.raises(ProviderError, match="search_phase_execution_exception"):
        _index(cluster).search("failover", tenant="acme")


def test_keyword_search_without_acl_groups_sees_only_public_chunks(cluster):
    cluster.route(
        "POST",
        "/_msearch",
        (
            200,
            {"responses": [{"hits": {"hits": []}}, {"hits": {"total": {"value": 0}}, "aggregations": {"t0": {"doc_count": 0}}}]},
        ),
    )
    assert list(_index(cluster).search("failover", tenant="acme", mode="keyword")) == []
    lines = cluster.sent("POST", "/_msearch")[0]["body"]
    assert len(lines) == 4
    assert lines[1]["query"]["bool"]["filter"][-1] == {
        "bool": {"should": [{"term": {"public": True}}], "minimum_should_match": 1}
    }


def test_constructing_the_adapter_connects_nowhere():
    index = OpenSearchIndex(host="127.0.0.1", port=9, index="docs")
    assert index._client is None


def test_document_chunks_reads_one_document_in_order_and_keeps_only_the_newest_version(cluster):
    old = {**_source("u_old", "The cutover took 42 seconds."), "position": 0, "ingested_at": "2026-11-29T00:00:00+00:00"}
    new = [
        {**_source("u_b", "Replica lag stayed low."), "position": 1},
        {**_source("u_a", "The cutover took 97 seconds."), "position": 0},
    ]
    cluster.route("POST", "/docs/_search", (200, {"hits": {"hits": [{"_source": s} for s in (old, *new)]}}))

    chunks = _index(cluster).document_chunks("acme", "d1")

    body = cluster.sent("POST", "/docs/_search")[0]["body"]
    assert body["query"] == {"bool": {"filter": [{"term": {"tenant": "acme"}}, {"term": {"document_id": "d1"}}]}}
    assert body["sort"] == [{"position": "asc"}] and "position" in body["_source"]
    assert [(c.unit_id, c.position) for c in chunks] == [("u_a", 0), ("u_b", 1)]  # mid-replacement: old chunk hidden


def _stored(scope="acme/alpha", acl=()):
    return (
        200,
        {"hits": {"hits": [{"_source": {"content_hash": "h", "scope": scope, "acl": list(acl), "source_uri": "a.txt"}}]}},
    )


def test_delete_by_a_caller_who_cannot_read_the_document_sends_no_delete(cluster):
    cluster.route("POST", "/docs/_search", _stored(acl=["secret"]))
    outsider = Access(scopes=("acme/alpha",), groups=frozenset({"staff"}))
    assert _index(cluster).delete_document("acme", "doc_1", access=outsider) is False
    assert not cluster.sent("POST", "/docs/_delete_by_query")


def test_move_rewrites_the_chunks_with_their_vectors_under_the_new_identity_then_deletes_the_old(cluster):
    chunk = {**_source("u1", "Failover takes 42 seconds.", doc="doc_1"), "position": 0, "embedding": [0.1, 0.2]}
    cluster.route(
        "POST",
        "/docs/_search",
        _stored(),  # the document, where it is
        (200, {"hits": {"hits": []}}),  # nothing at the target identity
        (200, {"hits": {"hits": [{"_source": chunk}]}}),  # its chunks
    )
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 200}}]}))
    cluster.route("POST", "/docs/_delete_by_query", (200, {"deleted": 1}))
    moved = _index(cluster).move_document("acme", "doc_1", "acme/beta", access=Access(scopes=("acme",), groups=None))
    assert moved["scope"] == "acme/beta" and moved["document_id"] == document_id_for("acme", "acme/beta", "a.txt")
    action, source = cluster.sent("POST", "/_bulk")[0]["body"]
    assert action == {
        "index": {"_index": "docs", "_id": unit_id_for("acme", moved["document_id"], 0, "Failover takes 42 seconds.")}
    }
    assert source["unit_id"] == action["index"]["_id"]
    assert source["embedding"] == [0.1, 0.2] and source["text"] == "Failover takes 42 seconds."
    assert source["updated_at"] > source.get("created_at", 0)  # a move moves the tenant's version (the answer cache)
    assert (source["document_id"], source["scope"], source["scope_ancestors"]) == (
        moved["document_id"],
        "acme/beta",
        ["acme", "acme/beta"],
    )
    deleted = cluster.sent("POST", "/docs/_delete_by_query")[0]["body"]["query"]["bool"]["filter"]
    assert deleted == [{"term": {"tenant": "acme"}}, {"term": {"document_id": "doc_1"}}]
    order = [r["path"] for r in cluster.requests]
    assert order.index("/_bulk") < order.index("/docs/_delete_by_query")


def test_the_version_counts_documents_latest_write_and_pending_chunks(cluster):
    cluster.route(
        "POST",
        "/docs/_search",
        (
            200,
            {
                "hits": {"total": {"value": 7}, "hits": []},
                "aggregations": {"documents": {"value": 2}, "latest": {"value": 1.5e9}},
            },
        ),
    )
    cluster.route("POST", "/docs/_count", (200, {"count": 3}))  # chunks still waiting for their vectors
    assert _index(cluster).version("acme") == "7:2:1500000000.0:3"
    body = cluster.sent("POST", "/docs/_search")[0]["body"]
    assert body["query"] == {"bool": {"filter": [{"term": {"tenant": "acme"}}]}} and body["size"] == 0
    assert body["aggs"] == {"documents": {"cardinality": {"field": "document_id"}}, "latest": {"max": {"field": "updated_at"}}}


def test_ingest_stores_each_chunks_synthesis_vectors_and_search_hands_them_to_the_answer(cluster):
    _no_existing(cluster)
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 201}}]}))
    _index(cluster).ingest_document({"source_uri": "a.txt", "text": TEXT})
    source = cluster.sent("POST", "/_bulk")[0]["body"][1]
    hit = _hit_from(source)
    texts = [source["text"]] + [source["text"][s["start"] : s["end"]] for s in source["sentences"]]
    assert set(hit.vectors) == set(texts)
    expected = FourD().embed(texts, "passage")
    assert all(np.allclose(hit.vectors[t], expected[i], atol=2e-3) for i, t in enumerate(texts))
    assert hit.as_passage()["vectors"] is hit.vectors


def _hit_from(source):
    from sourcerer.store.opensearch import _hit

    return _hit(source, 0.5)


# --- deferred embedding: the cloud split (ingest writes keyword-searchable chunks; the embed function fills vectors)


def test_a_deferred_ingest_writes_no_vectors_and_queues_its_chunks(cluster):
    _no_existing(cluster)
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 201}}]}))
    queued = []
    index = _index(cluster, defer_embedding=True, on_pending=lambda tenant, units: queued.append((tenant, units)))
    result = index.ingest_document({"source_uri": "ops.txt", "text": TEXT, "tenant": "acme", "scope": "acme/alpha"})
    _, source = cluster.sent("POST", "/_bulk")[0]["body"]
    assert "embedding" not in source and "synthesis_vectors" not in source and source["title"] == ""
    assert queued == [("acme", [source["unit_id"]])] and result["status"] == "ingested"


def test_a_retried_deferred_ingest_requeues_what_still_waits(cluster):
    stored = {"content_hash": None, "scope": "local", "acl": [], "source_uri": "ops.txt"}
    index = _index(cluster, defer_embedding=True, on_pending=lambda tenant, units: queued.append((tenant, units)))
    from sourcerer.store.models import Document

    document = Document(source_uri="ops.txt", text=TEXT)
    stored["content_hash"] = document.content_hash()
    queued = []
    cluster.route(
        "POST",
        "/docs/_search",
        (200, {"hits": {"hits": [{"_source": stored}]}}),  # the stored document: unchanged
        (200, {"hits": {"hits": [{"_source": {"unit_id": "u1"}}, {"_source": {"unit_id": "u2"}}]}}),  # still pending
    )
    cluster.route("POST", "/docs/_count", (200, {"count": 2}))
    assert index.ingest_document(document)["status"] == "unchanged"
    assert queued == [("local", ["u1", "u2"])]
    pending = cluster.sent("POST", "/docs/_search")[1]["body"]["query"]["bool"]
    assert pending["must_not"] == [{"exists": {"field": "embedding"}}, {"term": {"vectorless": True}}]


@pytest.mark.parametrize("serverless", [False, True])
def test_embed_units_rewrites_pending_chunks_with_vectors_once(cluster, serverless):
    source = {
        "unit_id": "u1",
        "tenant": "acme",
        "text": TEXT,
        "title": "Runbook",
        "sentences": [{"start": 0, "end": len(TEXT)}],
        "document_id": "d1",
    }
    cluster.route(
        "POST",
        "/docs/_search",
        (200, {"hits": {"hits": [{"_source": source}]}}),
        (200, {"hits": {"hits": []}}),  # a redelivered message: nothing left
    )
    cluster.route("POST", "/_bulk", (200, {"errors": False, "items": [{"index": {"status": 201}}]}))
    cluster.route("POST", "/docs/_delete_by_query", (200, {"deleted": 1}))
    index = _index(cluster)
    index.serverless = serverless
    assert index.embed_units("acme", ["u1", "u9"]) == 1
    query = cluster.sent("POST", "/docs/_search")[0]["body"]["query"]["bool"]
    assert query["filter"] == [{"term": {"tenant": "acme"}}, {"terms": {"unit_id": ["u1", "u9"]}}]
    action, written = cluster.sent("POST", "/_bulk")[0]["body"]
    assert written["embedding"] == [0.5, 0.5, 0.5, 0.5] and written["synthesis_vectors"] and written["text"] == TEXT
    assert action == ({"index": {"_index": "docs"}} if serverless else {"index": {"_index": "docs", "_id": "u1"}})
    deletes = cluster.sent("POST", "/docs/_delete_by_query")
    assert len(deletes) == (1 if serverless else 0)  # Serverless cannot overwrite by id: the vectorless copy goes
    if serverless:
        assert deletes[0]["body"]["query"]["bool"]["must_not"] == [
            {"exists": {"field": "embedding"}},
            {"term": {"vectorless": True}},
        ]
    assert index.embed_units("acme", ["u1"]) == 0 and len(cluster.sent("POST", "/_bulk")) == 1


def test_a_chunk_a_later_version_already_holds_is_no_error(cluster):
    """Two versions replacing one document at once: the earlier one's write of a chunk they share is refused with
    409 (the later version's external version is higher), and that is the outcome wanted, not a failure."""
    _no_existing(cluster)
    conflict = {"index": {"status": 409, "error": {"type": "version_conflict_engine_exception"}}}
    cluster.route("POST", "/_bulk", (200, {"errors": True, "items": [conflict]}))
    assert _index(cluster).ingest_document({"source_uri": "a.txt", "text": TEXT})["status"] == "ingested"
