"""The service logic behind the HTTP API: auth, scopes, tiers, quotas, usage — without HTTP."""

import base64

import pytest
from pydantic import ValidationError
from sourcerer.errors import Forbidden, NotFound, PayloadTooLarge, QuotaExceeded, Unauthorized, UpgradeRequired
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.core import Service
from sourcerer.service.schemas import AnswerRequest, DocumentRequest, SearchRequest
from sourcerer.service.tenancy import month_of, new_key
from sourcerer.store.sqlite import SQLiteIndex

RUNBOOK = (
    "# Failover\n\nDuring the March drill, the failover cutover from the primary region to the standby region completed "
    "in 42 seconds.\nThe database replica lag stayed under two seconds throughout.\n"
)


@pytest.fixture
def service(tmp_path):
    from sourcerer.retrieval.embedders import local_embedder

    return Service(
        index=SQLiteIndex(tmp_path / "index.db", embedder=local_embedder()), ledger=SQLiteLedger(tmp_path / "ledger.db")
    )


def _key(service, tenant="acme", tier="pro", scopes=("acme/alpha",), perms=("read", "write"), groups=()):
    service.ledger.create_tenant(tenant, tier)
    key, record = new_key(tenant, list(scopes), list(perms), list(groups))
    service.ledger.put_key(record)
    return key, service.authenticate(f"Bearer {key}")


def test_missing_unknown_and_revoked_keys_are_unauthorized(service):
    key, ctx = _key(service)
    for header in (None, "", "Basic abc", "Bearer ", "Bearer sk_nope"):
        with pytest.raises(Unauthorized):
            service.authenticate(header)
    service.ledger.revoke_key(ctx.key_id)
    with pytest.raises(Unauthorized, match="revoked"):
        service.authenticate(f"Bearer {key}")


def test_ingest_search_answer_delete_round_trip(service):
    _, ctx = _key(service)
    first = service.ingest(ctx, "acme/alpha/backend", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(
        mode="json"
    )
    again = service.ingest(ctx, "acme/alpha/backend", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(
        mode="json"
    )
    assert (first["status"], again["status"]) == ("ingested", "unchanged")
    assert (
        service.usage(ctx).model_dump(mode="json")["units"]["chunks"]["used"] == first["chunks"]
    )  # the unchanged re-ingest cost nothing

    found = service.search(ctx, None, SearchRequest(q="failover cutover time")).model_dump(mode="json")
    assert "42 seconds" in found["hits"][0]["text"]
    assert found["context"] == {"tenant": "acme", "tier": "pro", "scopes": ["acme/alpha"], "perms": ["read", "write"]}

    answered = service.answer(
        ctx, "acme/alpha", AnswerRequest(q="How long did the failover cutover take?", verify="strict")
    ).model_dump(mode="json")
    assert answered["answer"]["refused"] is False
    citation = answered["answer"]["citations"][0]
    assert set(citation) >= {"index", "unit_id", "source_uri", "label", "locator", "receipt"}
    assert answered["answer"]["faithfulness"]["faithful"] is True

    service.delete_document(ctx, None, first["document_id"]).model_dump(mode="json")
    assert service.search(ctx, None, SearchRequest(q="failover")).model_dump(mode="json")["hits"] == []
    usage = service.usage(ctx).model_dump(mode="json")
    assert usage["units"]["queries"] == {"used": 3, "quota": 50_000}
    assert [r.route for r in service.ledger.usage_records("acme")] == [
        "POST /v1/documents",
        "POST /v1/search",
        "POST /v1/answer",
        "POST /v1/search",
    ]


def test_scopes_outside_the_grant_and_other_tenants_are_invisible(service):
    _, acme = _key(service)
    _, globex = _key(service, tenant="globex", scopes=("globex",))
    service.ingest(acme, "acme/alpha", DocumentRequest(source_uri="a.md", text=RUNBOOK)).model_dump(mode="json")
    with pytest.raises(Forbidden):
        service.search(acme, "acme/alphabet", SearchRequest(q="failover")).model_dump(mode="json")
    assert service.search(globex, None, SearchRequest(q="failover cutover")).model_dump(mode="json")["hits"] == []


def test_free_tier_gets_upgrade_required_for_answers(service):
    _, ctx = _key(service, tier="free", perms=("read",))
    with pytest.raises(UpgradeRequired) as caught:
        service.answer(ctx, None, AnswerRequest(q="anything")).model_dump(mode="json")
    assert caught.value.required_tier == "pro"


def test_quota_exhaustion_is_429_with_retry_after(service):
    _, ctx = _key(service, tier="free", perms=("read",))
    service.ledger.consume("acme", "queries", 999, None, month_of())
    service.search(ctx, None, SearchRequest(q="failover")).model_dump(mode="json")
    with pytest.raises(QuotaExceeded) as caught:
        service.search(ctx, None, SearchRequest(q="failover")).model_dump(mode="json")
    assert caught.value.retry_after_s > 0


def test_bad_documents_are_clear_errors(service):
    _, ctx = _key(service, groups=("engineering",))
    with pytest.raises(PayloadTooLarge):
        service.ingest(ctx, None, DocumentRequest(source_uri="big.txt", text="x" * (5 * 1024 * 1024 + 1))).model_dump(mode="json")
    with pytest.raises(ValidationError, match="content_base64"):  # the schema says what base64 is: a 422
        DocumentRequest(source_uri="a.txt", content_base64="!!!")
    with pytest.raises(Forbidden, match="ACL groups it holds"):
        service.ingest(ctx, None, DocumentRequest(source_uri="a.txt", text="hi there", acl=["finance"])).model_dump(mode="json")
    ok = service.ingest(
        ctx,
        None,
        DocumentRequest(source_uri="a.txt", content_base64=base64.b64encode(b"Hello world.").decode(), acl=["engineering"]),
    ).model_dump(mode="json")
    assert ok["status"] == "ingested"
    _, reader = _key(service, tenant="acme", perms=("read",))
    with pytest.raises(Forbidden):
        service.ingest(reader, None, DocumentRequest(source_uri="b.txt", text="nope")).model_dump(mode="json")


def test_top_k_above_the_tier_limit_is_capped_and_the_trace_says_so(service):
    _, ctx = _key(service, tier="free", perms=("read",))
    found = service.search(ctx, None, SearchRequest(q="x", top_k=11)).model_dump(mode="json")
    assert found["trace"]["stages"][0]["units"]["top_k"] == 10


def test_a_malformed_price_table_is_the_operators_fault_a_503_that_charges_nothing(tmp_path, monkeypatch):
    import json

    from sourcerer.errors import ConfigurationError
    from sourcerer.http import api
    from sourcerer.http.serve import LocalContext, to_event

    monkeypatch.setenv("SOURCERER_PRICES", '{"query": "free"')
    with pytest.raises(ConfigurationError, match="SOURCERER_PRICES"):
        Service(index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    api.get_service.cache_clear()
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    try:
        event = to_event("POST", "/v1/search", {"Authorization": "Bearer sk_x"}, json.dumps({"q": "failover"}))
        result = api.build_app().resolve(event, LocalContext())
    finally:
        api.get_service.cache_clear()
    assert result["statusCode"] == 503 and json.loads(result["body"])["error"]["code"] == "configuration_error"
    assert "free" not in result["body"]  # the parser's message is for the operator's log, not the client


class _SlowEmbedder:
    """Holds every ingest in its embedding step long enough for concurrent requests to overlap."""

    model_id = "test:slow"

    def embed(self, texts, role):
        import time

        import numpy as np

        time.sleep(0.3)
        return np.ones((len(texts), 4), dtype=np.float32) / 2

    def calibrate(self, cosine):
        return cosine


def test_the_same_content_ingested_concurrently_is_written_and_charged_once(tmp_path):
    import threading

    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=_SlowEmbedder()), ledger=SQLiteLedger(tmp_path / "l.db"))
    _, ctx = _key(service)
    barrier = threading.Barrier(4)
    results = []

    def post():
        barrier.wait()
        results.append(
            service.ingest(ctx, "acme/alpha", DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(mode="json")[
                "status"
            ]
        )

    threads = [threading.Thread(target=post) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    chunks = service.index.stats()["chunks"]
    assert sorted(results) == ["ingested", "unchanged", "unchanged", "unchanged"]
    assert service.ledger.usage("acme", month_of())["chunks"] == chunks
    assert [r.units["chunks"] for r in service.ledger.usage_records("acme")] == [chunks]


def test_requests_refused_before_running_never_hold_quota(tmp_path):
    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    _, ctx = _key(service, tier="free")
    with pytest.raises(Forbidden):
        service.search(ctx, "acme/beta", SearchRequest(q="failover")).model_dump(mode="json")
    with pytest.raises(UpgradeRequired):
        service.answer(ctx, None, AnswerRequest(q="failover")).model_dump(mode="json")
    with pytest.raises(ValidationError):  # filters are reserved: the schema itself refuses them, before any route
        SearchRequest(q="failover", filters={"lang": "en"})
    assert service.ledger.usage("acme", month_of()) == {} and service.ledger.usage_records("acme") == []


def test_a_request_that_dies_after_its_charge_leaves_quota_and_usage_record_in_agreement(tmp_path):
    class Dying(SQLiteIndex):
        def search(self, *args, **kwargs):
            raise KeyboardInterrupt  # not an Exception: nothing is released, as when the process is killed

    service = Service(index=Dying(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    _, ctx = _key(service)
    for _ in range(3):
        with pytest.raises(KeyboardInterrupt):
            service.search(ctx, None, SearchRequest(q="failover")).model_dump(mode="json")
    records = service.ledger.usage_records("acme")
    assert service.ledger.usage("acme", month_of())["queries"] == sum(r.units["queries"] for r in records) == 3


def test_a_request_that_fails_gives_its_quota_back_and_leaves_no_usage_record(tmp_path):
    from sourcerer.errors import ProviderError

    class Down(SQLiteIndex):
        def search(self, *args, **kwargs):
            raise ProviderError("backend down")

    service = Service(index=Down(tmp_path / "i.db", embedder=None), ledger=SQLiteLedger(tmp_path / "l.db"))
    _, ctx = _key(service)
    with pytest.raises(ProviderError):
        service.search(ctx, None, SearchRequest(q="failover")).model_dump(mode="json")
    assert service.ledger.usage("acme", month_of()) == {"queries": 0} and service.ledger.usage_records("acme") == []


def test_concurrent_requests_never_see_each_others_trace_or_embedding_tokens(tmp_path):
    """The soak that found 19% of traces crossed: 400 searches on 16 threads, each checked against itself."""
    import concurrent.futures
    import time

    import numpy as np
    from sourcerer.accounting import add_embedding_tokens

    class CountingEmbedder:
        model_id = "test:counting"

        def embed(self, texts, role):
            time.sleep(0.002)  # long enough for requests to interleave
            add_embedding_tokens(sum(len(t.split()) for t in texts))
            return np.ones((len(texts), 4), dtype=np.float32) / 2

        def calibrate(self, cosine):
            return cosine

    service = Service(index=SQLiteIndex(tmp_path / "i.db", embedder=CountingEmbedder()), ledger=SQLiteLedger(tmp_path / "l.db"))
    _, ctx = _key(service, tier="enterprise", scopes=("acme",))
    service.ingest(ctx, None, DocumentRequest(source_uri="runbook.md", text=RUNBOOK)).model_dump(mode="json")

    def one(n):
        words = n % 12 + 1
        mode = "keyword" if n % 2 else "hybrid"
        found = service.search(
            ctx, None, SearchRequest(q=" ".join(["failover"] * words), mode=mode), request_id=f"r{n}"
        ).model_dump(mode="json")
        return n, words, mode, found["trace"]["stages"][0]["detail"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(one, range(400)))
    tokens = {
        r.request_id: r.units["embedding_tokens"] for r in service.ledger.usage_records("acme") if r.request_id.startswith("r")
    }
    crossed = [
        n
        for n, words, mode, detail in results
        if detail.get("mode") != mode
        or ("query_embedding_ms" in detail) != (mode == "hybrid")
        or tokens[f"r{n}"] != (words if mode == "hybrid" else 0)
    ]
    assert crossed == []


def test_one_visibility_rule_for_list_search_answer_original_and_delete(service):
    """An admin key without groups reads every ACL group everywhere (as the README says); a key without the group
    sees the document nowhere; a member sees it everywhere. What a key may see, it finds (completeness)."""
    from sourcerer.service.schemas import AnswerRequest, DocumentRequest, SearchRequest
    from sourcerer.store.originals import DirectoryOriginals

    service.index.originals = DirectoryOriginals(service.index.path.parent / "originals")
    _, writer = _key(service, scopes=("acme",), groups=("legal",))
    document = service.ingest(writer, "acme/alpha", DocumentRequest(source_uri="legal.md", text=RUNBOOK, acl=["legal"]))
    _, admin = _key(service, scopes=("acme",), perms=("read", "write", "admin"))
    _, outsider = _key(service, scopes=("acme",), perms=("read", "write"))
    question = "How long did the failover cutover take?"

    def sees(ctx):
        listed = [d.document_id for d in service.list_documents(ctx, None).documents]
        found = [h.document_id for h in service.search(ctx, None, SearchRequest(q=question)).hits]
        answered = service.answer(ctx, None, AnswerRequest(q=question))
        return listed, found, [c.unit_id for c in answered.answer.citations]

    for ctx in (writer, admin):
        listed, found, cited = sees(ctx)
        assert listed == [document.document_id] and found and set(found) == {document.document_id} and cited
        assert service.original(ctx, None, document.document_id).content == RUNBOOK.encode()
    assert sees(outsider) == ([], [], [])
    with pytest.raises(NotFound):
        service.original(outsider, None, document.document_id)
    with pytest.raises(NotFound):
        service.delete_document(outsider, None, document.document_id)
    assert service.delete_document(admin, None, document.document_id).deleted


def test_a_utf16_upload_is_answered_from_and_its_original_opens_as_text(service):
    """Excel's "Unicode Text" export (UTF-16 with its byte-order mark), uploaded as `content_base64`, was refused
    as "not UTF-8"; it is read, answered from, and its original is kept as the UTF-8 text a citation opens."""
    import base64

    from sourcerer.service.schemas import AnswerRequest, DocumentRequest
    from sourcerer.store.originals import DirectoryOriginals

    service.index.originals = DirectoryOriginals(service.index.path.parent / "originals")
    _, ctx = _key(service, scopes=("acme",))
    table = "Plan\tPrice\nTeam\t12 €\nBusiness\t25 €\n"
    upload = DocumentRequest(source_uri="plans.tsv", content_base64=base64.b64encode(table.encode("utf-16")).decode())
    document = service.ingest(ctx, "acme/alpha", upload)
    answered = service.answer(ctx, None, AnswerRequest(q="How much is the Business plan?")).answer
    assert "25 €" in answered.text and not answered.refused, answered.text
    assert service.original(ctx, None, document.document_id).content == table.encode()


LIBRARY = (
    "# Greenfield Public Library\n\n"
    "The library is open Monday to Friday from 9am to 7pm and on Saturday from 10am to 4pm.\n"
    "It is closed on Sundays and public holidays.\n"
    "Library membership is free for everyone who lives, works or studies in Greenfield.\n"
    "You need a photo ID and proof of address to join.\n"
    "Adults can borrow up to 12 items at a time, and children up to 8.\n"
    "Books can be borrowed for three weeks and DVDs for one week.\n"
    "You can renew an item twice online or by phone, unless someone else has reserved it.\n"
    "Reserving a book costs 50p, and you will get an email when it is ready to collect.\n"
    "Free Wi-Fi and public computers are available; computer sessions are limited to one hour per day.\n"
)


@pytest.mark.local_model
def test_an_answer_the_reader_reads_as_none_is_refused_where_the_service_answers_too(service):
    """The reader's veto (docs/how-it-decides.md, "By default the reader vetoes an answer it reads as none") runs where the service
    answers from its index: "Can I borrow a laptop?" is refused, not answered with how many items adults may borrow."""
    _, ctx = _key(service)
    service.ingest(ctx, "acme/alpha/library", DocumentRequest(source_uri="library.md", text=LIBRARY))
    laptop = service.answer(ctx, "acme/alpha", AnswerRequest(q="Can I borrow a laptop?")).model_dump(mode="json")
    assert laptop["answer"]["refused"] is True and laptop["answer"]["reason"] == "unsupported", laptop["answer"]
    synthesis = next(s for s in laptop["trace"]["stages"] if s["stage"] == "synthesize")
    assert synthesis["detail"]["decided_by"] == "reader veto", synthesis
    dvd = service.answer(ctx, "acme/alpha", AnswerRequest(q="How long can I keep a DVD?")).model_dump(mode="json")
    assert dvd["answer"]["refused"] is False and "DVDs for one week" in dvd["answer"]["text"], dvd["answer"]

