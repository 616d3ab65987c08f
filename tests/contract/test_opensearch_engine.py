"""What the real engine does differently from the documented requests, and what the adapter does about it.

Each test here failed (or could not be written) before the adapter met OpenSearch 2.19: they run on the
embedded node (`opensearch_index` fixture), or on OPENSEARCH_URL when it is set.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from fakes import HashedEmbedder
from sourcerer.errors import ConfigurationError
from sourcerer.store import open_index
from sourcerer.store.models import SearchFilter
from sourcerer.store.sqlite import SQLiteIndex

RUNBOOK = "The failover cutover from the primary region to the standby region completed in 42 seconds."


class ZeroPassages(HashedEmbedder):
    """Every passage embeds to the zero vector (as an embedder may for a text it has no tokens for)."""

    model_id = "test:zero-passages"

    def embed(self, texts, role):
        vectors = super().embed(texts, role)
        return vectors if role == "query" else np.zeros_like(vectors)


def test_the_vector_field_uses_the_configured_engine(opensearch_index, opensearch_url):
    index = opensearch_index(HashedEmbedder())
    name = index.index
    mapping = index.client.indices.get_mapping(index=name)[name]["mappings"]["properties"]["embedding"]
    settings = index.client.indices.get_settings(index=name)[name]["settings"]["index"]
    engine = "lucene" if "engine=lucene" in opensearch_url else "faiss"
    assert mapping["method"]["engine"] == engine and mapping["dimension"] == 16 and settings["knn"] == "true"


def test_a_zero_vector_chunk_is_stored_keyword_searchable_and_never_pending(opensearch_index):
    # cosine k-NN rejects the zero vector (mapper_parsing_exception): the whole ingest failed before
    index = opensearch_index(ZeroPassages())
    report = index.ingest_document({"source_uri": "runbook.md", "text": RUNBOOK})
    assert report["status"] == "ingested"
    assert [h.source_uri for h in index.search("failover cutover", tenant="local", mode="keyword")] == ["runbook.md"]
    assert index.pending_count("local") == 0
    assert [h.source_uri for h in index.search("failover cutover", tenant="local", mode="hybrid")] == ["runbook.md"]


def test_a_missing_index_is_a_configuration_error_that_says_how_to_create_it(opensearch_index):
    index = opensearch_index(init=False)
    for call in (
        lambda: index.search("failover", tenant="local", mode="keyword"),  # an _msearch item error, HTTP 200
        lambda: index.list_documents("local"),
        lambda: index.ingest_document({"source_uri": "a.md", "text": RUNBOOK}),
    ):
        with pytest.raises(ConfigurationError, match="does not exist: create it with `sourcerer opensearch init`"):
            call()


def test_init_updates_an_index_once_made_and_refuses_vectors_on_a_keyword_only_one(opensearch_index, opensearch_url):
    keyword_only = opensearch_index("none")
    assert keyword_only.init() == {"index": keyword_only.index, "action": "updated", "added": []}
    root, _, query = opensearch_url.partition("?")
    with_vectors = open_index(f"{root}/{keyword_only.index}?{query}", embedder=HashedEmbedder())
    # the engine answers 400 "Cannot set modelId or method parameters when index.knn setting is false"
    with pytest.raises(ConfigurationError, match="created without vectors"):
        with_vectors.init()


def test_concurrent_replacements_of_one_document_leave_exactly_one_whole_version(opensearch_index, tmp_path):
    # delete_by_query answered 409 (version conflicts) to 22 of 60 concurrent writes, and two writers could
    # delete each other's chunks; now each deletes only versions older than its own and proceeds on conflicts
    index = opensearch_index("none")
    versions = {f"{n}-{i}": f"Version {n}-{i}. " + f"{RUNBOOK} " * 40 for n in range(4) for i in range(6)}
    errors: list[str] = []

    def writer(n: int) -> None:
        for i in range(6):
            try:
                index.ingest_document({"source_uri": "same.md", "text": versions[f"{n}-{i}"]})
            except Exception as error:  # noqa: BLE001 - the test counts every failure
                errors.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    (document,) = index.list_documents("local")
    chunks = index.document_chunks("local", document["document_id"])
    text = " ".join(c.text for c in chunks)
    survivors = {key for key in versions if f"Version {key}." in text}
    assert len(survivors) == 1 and document["chunks"] == len(chunks) and len(chunks) > 1
    probe = SQLiteIndex(tmp_path / "probe.db", embedder=None)
    probe.ingest_document({"source_uri": "same.md", "text": versions[survivors.pop()]})
    assert len(chunks) == probe.list_documents("local")[0]["chunks"]  # the whole version, not a mix


def test_list_documents_pages_past_one_request(opensearch_index):
    index = opensearch_index("none")
    index.list_page = 3  # documents per page: 8 documents take three pages
    for n in range(8):
        index.ingest_document({"source_uri": f"doc-{n}.md", "text": f"Document {n}. " + RUNBOOK * (1 + n % 2)})
    listed = index.list_documents("local")
    assert [d["source_uri"] for d in listed] == [f"doc-{n}.md" for n in range(8)]
    assert all(d["chunks"] >= 1 for d in listed)


# --- congruence: generated filters give the same visible hit sets on SQLite and on OpenSearch -------------------

TENANTS = ("acme", "globex")
SCOPES = ("alpha", "alpha/backend", "alpha/frontend", "beta")
GROUPS = ("eng", "hr", "legal")
WORDS = "failover cutover region standby primary replica invoice payment refund shipping parcel courier".split()


def corpus(rng: random.Random) -> list[dict]:
    documents = []
    for n in range(36):
        tenant = rng.choice(TENANTS)
        kind = rng.choice(["md", "txt", "vtt", "html"])
        sentences = [" ".join(rng.sample(WORDS, 4)).capitalize() + f" number {n}." for _ in range(3)]
        if kind == "vtt":
            text = "WEBVTT\n\n" + "\n\n".join(f"00:00:0{i}.000 --> 00:00:0{i + 1}.000\n{s}" for i, s in enumerate(sentences))
        elif kind == "html":
            text = "<html><body>" + "".join(f"<p>{s}</p>" for s in sentences) + "</body></html>"
        else:
            text = "\n\n".join(sentences)
        documents.append(
            {
                "tenant": tenant,
                "scope": f"{tenant}/{rng.choice(SCOPES)}",
                "source_uri": f"{rng.choice(['handbook', 'runbooks', 'calls'])}/{n:02d}.{kind}",
                "text": text,
                "acl": rng.sample(GROUPS, rng.randint(0, 2)),
                "metadata": {"team": rng.choice(["ops", "finance"]), "year": rng.choice([2025, 2026])},
            }
        )
    return documents


def filters(rng: random.Random) -> list[tuple[str, str | None, list[str] | None, SearchFilter | None]]:
    cases = []
    for _ in range(40):
        tenant = rng.choice(TENANTS)
        scope = rng.choice([None, tenant, f"{tenant}/alpha", f"{tenant}/alpha/backend", f"{tenant}/beta"])
        groups = rng.choice([None, [], ["eng"], ["hr", "legal"], list(GROUPS)])
        only = SearchFilter(
            planes=rng.choice([None, ("text",), ("audio",), ("text", "audio")]),
            source_uri_prefix=rng.choice([None, "handbook/", "runbooks/", "calls/0"]),
            metadata=rng.choice([None, {"team": "ops"}, {"year": 2026}, {"team": "finance", "year": 2025}]),
        )
        cases.append((tenant, scope, groups, None if only.empty else only))
    return cases


def visible(index, query: str, mode: str, case) -> set[tuple[str, int]]:
    tenant, scope, groups, only = case
    hits = index.search(query, tenant=tenant, scope=scope, groups=groups, k=100, mode=mode, only=only)
    return {(h.source_uri, h.position) for h in hits}


def test_generated_filters_see_the_same_chunks_on_sqlite_and_opensearch(opensearch_index, tmp_path):
    rng = random.Random(27)
    embedder = HashedEmbedder()
    engines = [SQLiteIndex(tmp_path / "congruence.db", embedder=embedder), opensearch_index(embedder)]
    for document in corpus(rng):
        for index in engines:
            index.ingest_document(dict(document))
    compared = 0
    for case in filters(rng):
        for query in ("failover region", "invoice payment refund", "courier number"):
            for mode in ("keyword", "hybrid"):
                expected = visible(engines[0], query, mode, case)
                assert visible(engines[1], query, mode, case) == expected, (query, mode, case)
                compared += bool(expected)
    assert compared >= 80  # most generated cases see something, so equality is not the trivial empty set
