"""Readers never wait for writers: past a bound of chunks waiting for their vectors, an ingest is refused with a
429 and a Retry-After at the measured embedding pace — nothing parsed, written or charged — while searches go on;
`GET /v1/documents` and `sourcerer documents list` report the backlog."""

import json

import pytest
from fakes import HashedEmbedder
from sourcerer.errors import EmbeddingBacklog
from sourcerer.http import api
from sourcerer.http.serve import LocalContext, to_event
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.core import Service
from sourcerer.service.schemas import DocumentRequest, SearchRequest
from sourcerer.service.tenancy import new_key
from sourcerer.store.sqlite import SQLiteIndex


@pytest.fixture
def service(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCERER_EMBED_BACKLOG", "2")
    index = SQLiteIndex(tmp_path / "index.db", embedder=HashedEmbedder(), defer_embedding=True)
    return Service(index=index, ledger=SQLiteLedger(tmp_path / "ledger.db"), reranker=None)


def _ctx(service):
    service.ledger.create_tenant("acme", "pro")
    key, record = new_key("acme", ["acme"], ["read", "write"], [])
    service.ledger.put_key(record)
    return key, service.authenticate(f"Bearer {key}")


def _doc(n):
    return DocumentRequest(source_uri=f"note-{n}.md", text=f"# Note {n}\n\nThe failover drill number {n} took {n} minutes.\n")


def test_an_ingest_past_the_backlog_is_refused_untouched_and_uncharged(service):
    key, ctx = _ctx(service)
    for n in range(3):
        service.ingest(ctx, None, _doc(n))
    assert service.embedding_backlog() == 3 and service.index.embed_rate() is None
    with pytest.raises(EmbeddingBacklog, match="3 chunks are waiting") as refused:
        service.ingest(ctx, None, _doc(9))
    assert refused.value.retry_after_s == 60  # no pace measured yet
    assert [d.source_uri for d in service.list_documents(ctx, None).documents] == ["note-0.md", "note-1.md", "note-2.md"]
    assert service.usage(ctx).units["chunks"].used == 3  # the refused one charged nothing
    # searches go on meanwhile: by keyword for the waiting chunks, the model for the question alone
    found = service.search(ctx, None, SearchRequest(q="failover drill number 2"))
    assert found.hits[0].source_uri == "note-2.md" and found.trace.stages[0].detail["pending_embeddings"] == 3
    assert service.list_documents(ctx, None).embedding_backlog == 3

    service.index.embed_pending(batch=1, limit=1)  # the embedder measures its pace and catches up a little
    assert service.index.embed_rate() > 0 and service.embedding_backlog() == 2
    service.ingest(ctx, None, _doc(9))  # at the bound again: admitted
    assert service.list_documents(ctx, None).embedding_backlog == 3


def test_the_api_says_429_with_retry_after(service, monkeypatch):
    key, ctx = _ctx(service)
    for n in range(3):
        service.ingest(ctx, None, _doc(n))
    service.index.embed_pending(batch=1, limit=1)
    service.ingest(ctx, None, _doc(3))
    monkeypatch.setattr(api, "get_service", lambda: service)
    app = api.build_app()
    body = json.dumps({"source_uri": "late.md", "text": "# Late\n\nA late note.\n"})
    response = app.resolve(to_event("POST", "/v1/documents", {"Authorization": f"Bearer {key}"}, body), LocalContext())
    assert response["statusCode"] == 429
    error = json.loads(response["body"])["error"]
    assert error["code"] == "embedding_backlog" and "waiting for their vectors" in error["message"]
    assert int(response["multiValueHeaders"]["Retry-After"][0]) >= 1
    listed = app.resolve(to_event("GET", "/v1/documents", {"Authorization": f"Bearer {key}"}, None), LocalContext())
    assert json.loads(listed["body"])["embedding_backlog"] == 3


def test_an_index_that_embeds_at_ingest_has_no_backlog(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCERER_EMBED_BACKLOG", "1")
    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=HashedEmbedder()), ledger=SQLiteLedger(tmp_path / "l.db"), reranker=None)
    _, ctx = _ctx(service)
    for n in range(3):
        service.ingest(ctx, None, _doc(n))
    assert service.list_documents(ctx, None).embedding_backlog is None


def test_cli_documents_list_reports_the_backlog(tmp_path, capsys, monkeypatch):
    from sourcerer.cli import index as cli_index
    from sourcerer.cli.main import main

    index = SQLiteIndex(tmp_path / "index.db", embedder=HashedEmbedder(), defer_embedding=True)
    index.ingest_document({"source_uri": "a.md", "text": "# A\n\nAlpha.\n", "tenant": "acme"})
    monkeypatch.setattr(cli_index, "open_index_of", lambda args: index)  # the test's embedder, not the bundled one
    assert main(["documents", "list", "--tenant", "acme"]) == 0
    out = capsys.readouterr().out
    assert "1 documents" in out and "1 chunks wait for their vectors" in out
    index.embed_pending()
    assert main(["documents", "list", "--tenant", "acme"]) == 0
    assert "wait for their vectors" not in capsys.readouterr().out
