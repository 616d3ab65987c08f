"""One contract every `Index` adapter passes. Subclass `IndexContract` and provide an `index` fixture."""

from __future__ import annotations

import pytest
from sourcerer import ask
from sourcerer.errors import DocumentConflict, DocumentNotFound
from sourcerer.models import receipt_of
from sourcerer.scopes import EVERY_GROUP, Access
from sourcerer.store.base import SearchResult
from sourcerer.store.models import Hit
from sourcerer.store.originals import DirectoryOriginals

FAILOVER = (
    "# Operations handbook\n\n## Failover\n\n"
    "During the March drill, the failover cutover from the primary region to the standby region completed in 42 seconds.\n"
    "The database replica lag stayed under two seconds throughout.\n\n"
    "## Billing\n\nInvoices are sent on the first business day of each month.\n"
)


def _doc(uri, text, **kw):
    return {"source_uri": uri, "text": text, "tenant": kw.pop("tenant", "acme"), **kw}


class IndexContract:
    @pytest.fixture
    def index(self):  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    # --- ingest, search, delete ---------------------------------------------------------------------

    def test_ingest_then_search_returns_located_receipted_hits(self, index):
        result = index.ingest_document(_doc("handbook/ops.md", FAILOVER, scope="acme/alpha/backend", metadata={"title": "Ops"}))
        assert result["status"] == "ingested" and result["chunks"] >= 2

        hits = index.search("failover cutover time", tenant="acme", scope="acme/alpha", k=3)

        top = hits[0]
        assert isinstance(top, Hit)
        assert "42 seconds" in top.text
        assert top.document_id == result["document_id"]
        assert top.source_uri == "handbook/ops.md"
        assert top.label == "ops.md › Operations handbook › Failover"
        assert top.receipt == receipt_of(top.text)
        assert top.locator.kind == "lines" and top.locator.start == 5
        assert top.scope == "acme/alpha/backend"
        assert top.metadata == {"title": "Ops"}
        assert all(0.0 <= h.score <= 1.0 for h in hits)

    @pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
    def test_every_mode_ranks_the_answer_first(self, index, mode):
        index.ingest_document(_doc("ops.md", FAILOVER))
        index.ingest_document(_doc("menu.md", "# Cafeteria\n\nThe cafeteria serves lunch from noon until two.\n"))
        hits = index.search("how long did the failover cutover take", tenant="acme", k=5, mode=mode)
        assert hits and "failover" in hits[0].text

    def test_a_query_sharing_no_word_is_found_below_the_semantic_floor_only_when_asked(self, index):
        """An English question over a German policy shares no word with it and reads under the floor: a search
        returns nothing, and with `semantic_floor=0` (`ask()` where the reader decides) the best semantic match."""
        index.ingest_document(_doc("reise.md", "# Reiserichtlinie\n\n## Flüge\n\nFlüge müssen mindestens 14 Tage vor Abflug "
                                   "gebucht werden.\n\n## Verpflegung\n\nDie Tagespauschale für Verpflegung beträgt 40 EUR in "
                                   "Deutschland und 55 EUR im Ausland.\n"))
        index.ingest_document(_doc("menu.md", "# Cafeteria\n\nThe cafeteria serves lunch from noon until two.\n"))
        question = "What is the daily meal allowance abroad?"
        assert not index.search(question, tenant="acme", k=3)
        hits = index.search(question, tenant="acme", k=3, semantic_floor=0.0)
        assert hits and "55 EUR" in hits[0].text

    def test_reingesting_unchanged_content_changes_nothing(self, index):
        first = index.ingest_document(_doc("ops.md", FAILOVER))
        before = [h.unit_id for h in index.search("failover", tenant="acme", k=10, mode="keyword")]
        again = index.ingest_document(_doc("ops.md", FAILOVER))
        after = [h.unit_id for h in index.search("failover", tenant="acme", k=10, mode="keyword")]
        assert again == {"document_id": first["document_id"], "chunks": first["chunks"], "status": "unchanged"}
        assert before == after
        assert len(index.list_documents("acme")) == 1

    def test_changed_content_replaces_every_old_chunk(self, index):
        first = index.ingest_document(_doc("ops.md", FAILOVER))
        old_ids = [h.unit_id for h in index.search("failover cutover", tenant="acme", k=10, mode="keyword")]
        changed = FAILOVER.replace("42 seconds", "97 seconds")
        second = index.ingest_document(_doc("ops.md", changed))
        assert second["status"] == "replaced" and second["document_id"] == first["document_id"]
        texts = [h.text for h in index.search("failover cutover seconds", tenant="acme", k=10)]
        assert any("97 seconds" in t for t in texts)
        assert not any("42 seconds" in t for t in texts)
        changed_ids = {h.unit_id for h in index.get_chunks("acme", old_ids)}
        assert all("42 seconds" not in h.text for h in index.get_chunks("acme", old_ids))
        assert len(changed_ids) < len(old_ids) or not old_ids

    def test_a_batch_ingest_reports_each_document_in_order_and_writes_all_it_can(self, index):
        index.ingest_document(_doc("kept.md", "Invoices are sent on the first business day."))
        index.ingest_document(_doc("changed.md", "Refunds take five days."))
        beta_writer = Access(scopes=("acme/beta",), groups=frozenset())
        index.ingest_document(_doc("theirs.md", "Only alpha may read this.", scope="acme/alpha"))
        outcomes = index.ingest_documents(
            [
                _doc("new.md", FAILOVER, scope="acme/beta"),
                _doc("kept.md", "Invoices are sent on the first business day.", scope="acme/beta"),
                _doc("empty.md", "   ", scope="acme/beta"),
                _doc("theirs.md", "Overwritten.", scope="acme/alpha"),
                _doc("javascript:alert(1)", "A link that runs a script.", scope="acme/beta"),
                _doc("later.md", "The standby region takes over in a minute.", scope="acme/beta"),
            ],
            access=beta_writer,
        )
        assert [o["status"] if isinstance(o, dict) else type(o).__name__ for o in outcomes] == [
            "ingested",
            "ingested",  # the same source in another scope is another document
            "UnsupportedDocument",
            "DocumentNotFound",
            "UnsupportedDocument",
            "ingested",
        ]
        assert "no text" in str(outcomes[2])
        changed = index.ingest_documents([_doc("changed.md", "Refunds take ten days."), _doc("kept.md", "Invoices are sent on the first business day.")])
        assert [o["status"] for o in changed] == ["replaced", "unchanged"]
        hits = index.search("standby region", tenant="acme", k=10, mode="keyword")
        assert {h.source_uri for h in hits} == {"new.md", "later.md"}
        assert [h.text for h in index.search("refunds", tenant="acme", k=5, mode="keyword")] == ["Refunds take ten days."]
        assert [h.text for h in index.search("overwritten", tenant="acme", k=5, mode="keyword")] == []

    def test_a_retried_batch_is_unchanged_and_stores_what_one_at_a_time_stores(self, index):
        docs = [_doc(f"doc{i}.md", FAILOVER.replace("42", str(40 + i)), scope="acme/batch") for i in range(5)]
        first = index.ingest_documents(docs)
        again = index.ingest_documents(docs)
        assert [o["status"] for o in first] == ["ingested"] * 5
        assert again == [{**o, "status": "unchanged"} for o in first]
        one_at_a_time = [index.ingest_document({**d, "scope": "acme/single"}) for d in docs]
        batched = [[(c.text, c.position, c.locator) for c in index.document_chunks("acme", o["document_id"])] for o in first]
        single = [[(c.text, c.position, c.locator) for c in index.document_chunks("acme", o["document_id"])] for o in one_at_a_time]
        assert batched == single and all(batched)
        assert sorted(d["chunks"] for d in index.list_documents("acme", scope="acme/batch")) == sorted(o["chunks"] for o in first)
        hits = index.search("failover cutover", tenant="acme", scope="acme/batch", k=20, mode="keyword")
        assert {h.document_id for h in hits} == {o["document_id"] for o in first}

    def test_document_chunks_follow_the_document_in_order(self, index):
        """What an audit reads: the current chunks of one document, by position; nothing once it is gone."""
        first = index.ingest_document(_doc("ops.md", FAILOVER))
        chunks = index.document_chunks("acme", first["document_id"])
        assert [c.position for c in chunks] == list(range(first["chunks"]))
        assert all(c.receipt == receipt_of(c.text) for c in chunks)
        assert index.get_chunks("acme", [chunks[-1].unit_id])[0].position == chunks[-1].position
        assert index.document_chunks("globex", first["document_id"]) == []  # never across tenants

        index.ingest_document(_doc("ops.md", FAILOVER.replace("42 seconds", "97 seconds")))
        changed = index.document_chunks("acme", first["document_id"])
        assert any("97 seconds" in c.text for c in changed) and not any("42 seconds" in c.text for c in changed)
        unchanged_receipts = {c.receipt for c in chunks} & {c.receipt for c in changed}
        assert unchanged_receipts and len(unchanged_receipts) < len(chunks)  # only the edited chunk's receipt moved

        index.delete_document("acme", first["document_id"])
        assert index.document_chunks("acme", first["document_id"]) == []

    def test_the_version_changes_with_every_write_and_only_then(self, index):
        empty = index.version("acme")
        first = index.ingest_document(_doc("ops.md", FAILOVER))
        after_ingest = index.version("acme")
        assert after_ingest != empty
        index.ingest_document(_doc("ops.md", FAILOVER))  # unchanged: nothing a search sees changed
        assert index.version("acme") == after_ingest and index.version("globex") == index.version("globex")
        moved = index.move_document("acme", first["document_id"], "acme/beta")
        after_move = index.version("acme")
        assert after_move != after_ingest
        index.delete_document("acme", moved["document_id"])
        assert index.version("acme") not in (after_move, after_ingest)

    def test_delete_removes_the_document_and_its_chunks(self, index):
        result = index.ingest_document(_doc("ops.md", FAILOVER))
        assert index.delete_document("acme", result["document_id"]) is True
        assert list(index.search("failover", tenant="acme", k=5)) == []
        assert index.list_documents("acme") == []
        assert index.delete_document("acme", result["document_id"]) is False

    # --- originals ---------------------------------------------------------------------------------

    def test_originals_are_kept_shared_restored_and_released(self, index, tmp_path):
        index.originals = kept = DirectoryOriginals(tmp_path / "originals")
        first = index.ingest_document(_doc("ops.md", FAILOVER))
        twin = index.ingest_document(_doc("copy.md", FAILOVER))  # same bytes, scope, ACL and metadata: stored once
        stored = index.stored_document("acme", first["document_id"])
        assert stored.source_uri == "ops.md" and kept.get("acme", stored.content_hash) == FAILOVER.encode()
        assert index.stored_document("acme", twin["document_id"]).content_hash == stored.content_hash

        kept.delete("acme", stored.content_hash)  # lost, or ingested before originals were kept
        assert index.ingest_document(_doc("ops.md", FAILOVER))["status"] == "unchanged"
        assert kept.get("acme", stored.content_hash) == FAILOVER.encode()  # an unchanged re-ingest restores it

        changed = FAILOVER.replace("42 seconds", "97 seconds")
        assert index.ingest_document(_doc("ops.md", changed))["status"] == "replaced"
        new_hash = index.stored_document("acme", first["document_id"]).content_hash
        assert kept.get("acme", new_hash) == changed.encode()
        assert kept.has("acme", stored.content_hash)  # the twin still holds the old content
        index.delete_document("acme", twin["document_id"])
        assert not kept.has("acme", stored.content_hash)  # no document holds it any more
        index.delete_document("acme", first["document_id"])
        assert not kept.has("acme", new_hash)

    def test_a_refused_write_keeps_no_original_for_another_caller(self, index, tmp_path):
        index.originals = kept = DirectoryOriginals(tmp_path / "originals")
        with pytest.raises(DocumentNotFound):
            index.ingest_document(_doc("x.md", FAILOVER, scope="acme/beta"), access=Access(scopes=("acme/alpha",)))
        assert not any(p.is_file() for p in (tmp_path / "originals").rglob("*")) and kept.root.name == "originals"

    # --- isolation ---------------------------------------------------------------------------------

    def test_scope_sees_its_subtree_never_a_prefix_look_alike(self, index):
        index.ingest_document(_doc("a.md", "The alpha team owns the failover runbook.", scope="acme/alpha"))
        index.ingest_document(_doc("b.md", "The backend failover takes 42 seconds.", scope="acme/alpha/backend"))
        index.ingest_document(_doc("c.md", "The alphabet team owns the failover poster.", scope="acme/alphabet"))
        for mode in ("keyword", "semantic", "hybrid"):
            scopes = {h.scope for h in index.search("failover", tenant="acme", scope="acme/alpha", k=10, mode=mode)}
            assert scopes <= {"acme/alpha", "acme/alpha/backend"} and "acme/alpha/backend" in scopes
        assert {d["scope"] for d in index.list_documents("acme", "acme/alpha")} == {"acme/alpha", "acme/alpha/backend"}

    def test_tenants_never_see_each_other(self, index):
        index.ingest_document(_doc("ops.md", FAILOVER, tenant="acme", scope="acme"))
        index.ingest_document(_doc("ops.md", FAILOVER.replace("42", "13"), tenant="globex", scope="acme"))
        for mode in ("keyword", "semantic", "hybrid"):
            texts = [h.text for h in index.search("failover cutover", tenant="globex", k=10, mode=mode)]
            assert texts and all("42 seconds" not in t for t in texts)
        assert [d["source_uri"] for d in index.list_documents("globex")] == ["ops.md"]
        assert index.tenants() == ["acme", "globex"]  # who holds data, for `sourcerer tenants list`
        hit = index.search("failover", tenant="acme", k=1)[0]
        assert index.get_chunks("globex", [hit.unit_id]) == []

    def test_acl_groups_gate_visibility(self, index):
        index.ingest_document(_doc("secret.md", "The failover password rotates weekly.", acl=["engineering"]))
        index.ingest_document(_doc("public.md", "The failover drill is announced by email."))
        for mode in ("keyword", "semantic", "hybrid"):

            def sources(groups, mode=mode):
                return {h.source_uri for h in index.search("failover", tenant="acme", groups=groups, k=10, mode=mode)}

            assert sources(None) == {"public.md"}
            assert sources(["sales"]) == {"public.md"}
            assert sources(["engineering"]) == {"public.md", "secret.md"}
            assert sources(EVERY_GROUP) == {"public.md", "secret.md"}  # an administrator reads every group

    # --- the write rule: who may replace, move and delete what ------------------------------------------

    def test_the_same_source_in_another_scope_is_another_document(self, index):
        alpha = index.ingest_document(_doc("runbook.md", FAILOVER, scope="acme/alpha/backend"))
        beta = index.ingest_document(_doc("runbook.md", "The beta runbook is empty.", scope="acme/beta"))
        assert beta["status"] == "ingested" and beta["document_id"] != alpha["document_id"]
        assert {d["scope"] for d in index.list_documents("acme")} == {"acme/alpha/backend", "acme/beta"}
        assert "42 seconds" in index.search("failover cutover", tenant="acme", scope="acme/alpha", k=1)[0].text

    def test_replacing_a_document_the_writer_could_not_read_changes_nothing(self, index):
        original = index.ingest_document(
            _doc("secret.md", "The failover password rotates weekly.", scope="acme/alpha", acl=["secret"])
        )
        outsider = Access(scopes=("acme/alpha",), groups=frozenset({"staff"}))
        with pytest.raises(DocumentNotFound):
            index.ingest_document(_doc("secret.md", "Nothing to see.", scope="acme/alpha", acl=[]), access=outsider)
        with pytest.raises(DocumentNotFound):  # not even an identical re-post says the document is there
            index.ingest_document(
                _doc("secret.md", "The failover password rotates weekly.", scope="acme/alpha", acl=["secret"]), access=outsider
            )
        hits = index.search("failover password", tenant="acme", groups=["secret"], k=3, mode="keyword")
        assert [(h.document_id, h.text) for h in hits] == [(original["document_id"], "The failover password rotates weekly.")]
        assert list(index.search("nothing to see", tenant="acme", groups=["staff"], k=3, mode="keyword")) == []
        insider = Access(scopes=("acme/alpha",), groups=frozenset({"secret"}))
        replaced = index.ingest_document(
            _doc("secret.md", "Rotation is monthly.", scope="acme/alpha", acl=["secret"]), access=insider
        )
        assert replaced["status"] == "replaced"

    def test_writing_outside_the_granted_scopes_is_refused(self, index):
        beta_writer = Access(scopes=("acme/beta",), groups=frozenset())
        for scope in ("acme/alpha", "acme/betamax", "acme"):
            with pytest.raises(DocumentNotFound):
                index.ingest_document(_doc("x.md", "Text.", scope=scope), access=beta_writer)
        assert index.list_documents("acme") == []
        assert index.ingest_document(_doc("x.md", "Text.", scope="acme/beta/team"), access=beta_writer)["status"] == "ingested"

    def test_delete_needs_the_right_to_read_the_document(self, index):
        doc = index.ingest_document(
            _doc("secret.md", "The failover password rotates weekly.", scope="acme/alpha", acl=["secret"])
        )
        for outsider in (
            Access(scopes=("acme/alpha",), groups=frozenset()),
            Access(scopes=("acme/alphabet",), groups=frozenset({"secret"})),
            Access(scopes=("acme/alpha/backend",), groups=None),
        ):
            assert index.delete_document("acme", doc["document_id"], access=outsider) is False
        assert [d["document_id"] for d in index.list_documents("acme")] == [doc["document_id"]]
        insider = Access(scopes=("acme",), groups=frozenset({"secret"}))
        assert index.delete_document("acme", doc["document_id"], access=insider) is True
        assert index.list_documents("acme") == []

    def test_move_carries_the_chunks_to_the_new_scope(self, index):
        doc = index.ingest_document(_doc("ops.md", FAILOVER, scope="acme/alpha"))
        both = Access(scopes=("acme/alpha", "acme/beta"), groups=frozenset())
        with pytest.raises(DocumentNotFound):  # the target must be granted too
            index.move_document("acme", doc["document_id"], "acme/gamma", access=both)
        with pytest.raises(DocumentNotFound):  # and the document readable where it is
            index.move_document("acme", doc["document_id"], "acme/beta", access=Access(scopes=("acme/beta",), groups=None))
        moved = index.move_document("acme", doc["document_id"], "acme/beta", access=both)
        assert moved["scope"] == "acme/beta" and moved["document_id"] != doc["document_id"]
        assert list(index.search("failover cutover", tenant="acme", scope="acme/alpha", k=3)) == []
        hits = index.search("failover cutover", tenant="acme", scope="acme/beta", k=3)
        assert hits and hits[0].document_id == moved["document_id"] and hits[0].scope == "acme/beta"
        assert [d["scope"] for d in index.list_documents("acme")] == ["acme/beta"]
        assert len(index.document_chunks("acme", moved["document_id"])) == doc["chunks"]

    def test_move_onto_a_document_from_the_same_source_is_a_conflict(self, index):
        here = index.ingest_document(_doc("ops.md", FAILOVER, scope="acme/alpha"))
        index.ingest_document(_doc("ops.md", "The beta copy.", scope="acme/beta"))
        with pytest.raises(DocumentConflict):
            index.move_document("acme", here["document_id"], "acme/beta")
        assert {d["scope"] for d in index.list_documents("acme")} == {"acme/alpha", "acme/beta"}

    # --- hostile and unusual queries -----------------------------------------------------------------

    @pytest.mark.parametrize("query", ["", "   ", "the of and"])
    def test_empty_or_stopword_queries_return_nothing_in_keyword_mode(self, index, query):
        index.ingest_document(_doc("ops.md", FAILOVER))
        assert list(index.search(query, tenant="acme", k=5, mode="keyword")) == []

    def test_operator_characters_are_just_text(self, index):
        index.ingest_document(_doc("ops.md", FAILOVER))
        for query in [
            '"failover',
            "failover*",
            "-failover",
            "failover NEAR cutover",
            "title:failover",
            "a OR b AND (c",
            "^~{}[]\\/!",
        ]:
            hits = index.search(query, tenant="acme", k=3)
            assert isinstance(hits, SearchResult) and all(isinstance(h, Hit) for h in hits)
        assert "failover" in index.search('title:"failover" AND -cutover*', tenant="acme", k=3, mode="keyword")[0].text

    def test_huge_query_is_cut_not_fatal(self, index):
        index.ingest_document(_doc("ops.md", FAILOVER))
        hits = index.search("failover cutover " + "lorem ipsum " * 5000, tenant="acme", k=3)
        assert hits and "failover" in hits[0].text

    def test_unicode_documents_and_queries(self, index):
        index.ingest_document(_doc("zh.txt", "北京是中华人民共和国的首都。上海是最大的城市。"))
        index.ingest_document(_doc("ar.txt", "القاهرة هي عاصمة جمهورية مصر العربية."))
        index.ingest_document(_doc("fr.txt", "Le café de la gare ouvre à sept heures."))
        assert index.search("中国的首都", tenant="acme", k=1, mode="keyword")[0].source_uri == "zh.txt"
        assert index.search("ما هي عاصمة مصر", tenant="acme", k=1, mode="keyword")[0].source_uri == "ar.txt"
        assert index.search("CAFE gare", tenant="acme", k=1, mode="keyword")[0].source_uri == "fr.txt"

    def test_bad_k_and_mode_are_errors(self, index):
        with pytest.raises(ValueError):
            index.search("failover", tenant="acme", k=0)
        with pytest.raises(ValueError):
            index.search("failover", tenant="acme", mode="fuzzy")

    # --- the retriever for ask() -----------------------------------------------------------------------

    def test_retriever_grounds_a_cited_answer(self, index):
        index.ingest_document(_doc("handbook/ops.md", FAILOVER, scope="acme/alpha/backend"))
        answer = ask(
            "How long did the failover cutover take?",
            retriever=index.retriever(tenant="acme", scope="acme/alpha"),
            verify="strict",
        )
        assert answer.refused is False, answer.trace
        citation = answer.citations[0]
        assert "42 seconds" in citation.text
        assert citation.unit_id and citation.locator.kind == "lines"
        # the source with a fragment that opens the cited lines (the locator is unchanged)
        assert citation.source_uri == f"handbook/ops.md#L{citation.locator.start}" + (
            f"-L{citation.locator.end}" if citation.locator.end != citation.locator.start else ""
        )
        assert answer.faithfulness.faithful is True

    def test_citation_quotes_the_sentence_and_narrows_the_locator_to_it(self, index):
        index.ingest_document(_doc("handbook/ops.md", FAILOVER, scope="acme/alpha/backend"))
        answer = ask("How long did the failover cutover take?", retriever=index.retriever(tenant="acme"))
        citation = answer.citations[0]
        assert citation.quote.startswith("During the March drill") and citation.quote.endswith("42 seconds.")
        assert citation.locator.model_dump() == {"kind": "lines", "start": 5, "end": 5}  # not the chunk's 5-6
        start, end = citation.quote_spans[0]
        assert citation.text[start:end] == citation.quote
        assert citation.receipt == receipt_of(citation.text)  # audits still check the whole passage

    def test_transcript_citation_points_at_the_cue_that_holds_the_answer(self, index):
        cues = [
            ("00:00:01.000", "00:00:06.000", "Welcome to the quarterly operations review."),
            ("00:04:10.000", "00:04:15.000", "Billing moved to the first business day of the month."),
            ("00:13:05.000", "00:13:09.500", "The failover cutover finished in 42 seconds."),
            ("00:13:10.000", "00:13:14.000", "Replica lag stayed below two seconds."),
        ]
        vtt = "WEBVTT\n\n" + "\n\n".join(f"{a} --> {b}\n{text}" for a, b, text in cues) + "\n"
        index.ingest_document(_doc("talks/review.vtt", vtt))
        answer = ask("How long did the failover cutover take?", retriever=index.retriever(tenant="acme"))
        assert answer.refused is False
        citation = answer.citations[0]
        assert citation.quote == "The failover cutover finished in 42 seconds."
        assert citation.locator.model_dump() == {"kind": "time_range", "t_start_ms": 785000, "t_end_ms": 789500}
