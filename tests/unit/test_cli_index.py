"""`sourcerer ingest / search / documents / ask` over the embedded index, as a user runs them."""

import json

import pytest
from sourcerer.cli import main

HANDBOOK = {
    "ops.md": (
        "# Operations\n\n## Failover\n\nDuring the March drill, the failover cutover from the primary region to the standby "
        "region completed in 42 seconds.\nThe database replica lag stayed under two seconds throughout.\n"
    ),
    "people.md": "# People\n\nEngineers get a laptop on their first day.\n",
    "broken.json": "{not json",
    "image.png": "\x89PNG",
}


@pytest.fixture
def handbook(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path / "home"))
    folder = tmp_path / "handbook"
    folder.mkdir()
    for name, text in HANDBOOK.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ingest_shows_progress_and_a_summary_with_reasons(handbook, capsys):
    code, out, err = _run(
        capsys, "ingest", str(handbook), "--scope", "acme/alpha/backend", "--acl", "engineering", "--tenant", "acme"
    )
    assert code == 0
    assert "4/4 files" in err
    assert out.startswith("2 ingested, 0 unchanged, 0 replaced, 2 skipped")
    assert "broken.json: not valid JSON" in out and "image.png: unsupported file type '.png'" in out
    code, out, _ = _run(
        capsys, "ingest", str(handbook), "--scope", "acme/alpha/backend", "--acl", "engineering", "--tenant", "acme"
    )
    assert out.startswith("0 ingested, 2 unchanged")


def test_search_json_respects_scope_and_groups(handbook, capsys):
    _run(capsys, "ingest", str(handbook), "--scope", "acme/alpha/backend", "--acl", "engineering", "--tenant", "acme")
    _, out, _ = _run(
        capsys,
        "search",
        "failover cutover time",
        "--tenant",
        "acme",
        "--scope",
        "acme/alpha",
        "--groups",
        "engineering",
        "--json",
    )
    hits = json.loads(out)["hits"]
    assert hits[0]["source_uri"].endswith("ops.md") and hits[0]["locator"]["kind"] == "lines"
    _, out, _ = _run(capsys, "search", "failover cutover time", "--tenant", "acme", "--scope", "acme/alpha", "--json")
    assert json.loads(out)["hits"] == []  # no group, no ACL'd documents
    _, out, _ = _run(capsys, "search", "failover", "--tenant", "acme", "--scope", "acme/alphabet", "--groups", "engineering")
    assert out.strip() == "no results"


def test_ask_over_the_index_with_strict_verification(handbook, capsys):
    _run(capsys, "ingest", str(handbook), "--scope", "acme/alpha/backend", "--tenant", "acme")
    code, out, _ = _run(
        capsys,
        "ask",
        "How long did the failover cutover take?",
        "--tenant",
        "acme",
        "--scope",
        "acme/alpha",
        "--verify",
        "strict",
        "--json",
    )
    answer = json.loads(out)
    assert code == 0 and answer["refused"] is False
    assert "42 seconds" in answer["answer"]
    assert answer["citations"][0]["unit_id"].startswith("u_")
    assert answer["faithfulness"]["faithful"] is True


def test_documents_list_and_delete(handbook, capsys):
    _run(capsys, "ingest", str(handbook), "--scope", "acme/alpha", "--tenant", "acme")
    _, out, _ = _run(capsys, "documents", "list", "--tenant", "acme", "--scope", "acme/alpha", "--json")
    docs = json.loads(out)
    assert sorted(d["source_uri"].split("/")[-1] for d in docs) == ["ops.md", "people.md"]
    code, out, _ = _run(capsys, "documents", "delete", docs[0]["document_id"], "--tenant", "acme")
    assert code == 0 and "deleted" in out
    code, _, err = _run(capsys, "documents", "delete", docs[0]["document_id"], "--tenant", "acme")
    assert code == 2 and "no document" in err


def test_bad_scope_is_a_clear_error(handbook, capsys):
    with pytest.raises(SystemExit) as stopped:  # argparse refuses it, before anything runs
        main(["search", "x", "--scope", "acme/../globex"])
    assert stopped.value.code == 2 and "invalid scope" in capsys.readouterr().err


def test_documents_move_is_the_explicit_way_to_change_a_documents_scope(handbook, capsys):
    _run(capsys, "ingest", str(handbook / "ops.md"), "--tenant", "acme", "--scope", "acme/alpha")
    code, out, _ = _run(capsys, "documents", "list", "--tenant", "acme", "--json")
    doc_id = json.loads(out)[0]["document_id"]
    code, out, err = _run(capsys, "documents", "move", doc_id, "--tenant", "acme", "--to", "acme/beta")
    assert code == 0 and "to acme/beta" in out
    _, out, _ = _run(capsys, "documents", "list", "--tenant", "acme", "--json")
    assert [d["scope"] for d in json.loads(out)] == ["acme/beta"]
    code, _, err = _run(capsys, "documents", "move", doc_id, "--tenant", "acme", "--to", "acme/gamma")
    assert code != 0 and "no document" in err  # the old identity is gone


def test_search_takes_the_query_objects_planes_modalities_and_filters(handbook, capsys):
    (handbook / "drill.vtt").write_text(
        "WEBVTT\n\n00:12:47.000 --> 00:12:55.000\nThe failover drill went well: the cutover took 42 seconds.\n", encoding="utf-8"
    )
    _run(capsys, "ingest", str(handbook), "--tenant", "acme")

    def found(*flags):
        code, out, err = _run(capsys, "search", "failover", "--tenant", "acme", "--json", *flags)
        assert code == 0, err
        return sorted({h["source_uri"].rsplit("/", 1)[-1] for h in json.loads(out)["hits"]}), json.loads(out)["trace"]

    assert found()[0] == ["drill.vtt", "ops.md"]
    assert found("--plane", "audio")[0] == ["drill.vtt"]
    assert found("--modality", "text/markdown")[0] == ["ops.md"]
    hits, trace = found("--filter", "source_uri=ops", "--rerank")  # identities are relative to the ingested folder
    assert hits == ["ops.md"] and trace["filter"]["source_uri_prefix"] == "ops" and trace["rerank"]["by"] == "local"
    assert found("--filter", "created_before=2000-01-01T00:00:00Z")[0] == []
    code, out, err = _run(capsys, "ask", "How long did the failover cutover take?", "--tenant", "acme", "--rerank", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert "42 seconds" in answer["answer"]
    retrieve = next(s for s in answer["trace"]["stages"] if s["stage"] == "retrieve")
    assert retrieve["detail"]["rerank"]["by"] == "local" and "rerank" in {s["stage"] for s in answer["trace"]["stages"]}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--filter", "created_after=yesterday"], "created_after"),
        (["--filter", "lang"], "key=value"),
        (["--modality", "image/png"], "modalities"),
    ],
)
def test_the_cli_validates_the_query_object_like_the_api(handbook, capsys, flags, message):
    code, out, err = _run(capsys, "search", "failover", "--tenant", "acme", *flags)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_folders_documents_are_the_same_from_any_working_directory(handbook, capsys, monkeypatch):
    code, out, _ = _run(capsys, "ingest", str(handbook), "--tenant", "acme")
    assert out.startswith("2 ingested")
    monkeypatch.chdir(handbook)
    code, out, _ = _run(capsys, "ingest", ".", "--tenant", "acme")
    assert out.startswith("0 ingested, 2 unchanged")  # not two more documents
    monkeypatch.chdir(handbook.parent)
    code, out, _ = _run(capsys, "ingest", "handbook", "--tenant", "acme")
    assert out.startswith("0 ingested, 2 unchanged")
    code, out, _ = _run(capsys, "documents", "list", "--tenant", "acme", "--json")
    assert sorted(d["source_uri"] for d in json.loads(out)) == ["ops.md", "people.md"]


def test_the_cli_has_a_version_lists_tenants_and_never_shows_a_traceback(handbook, capsys, monkeypatch):
    with pytest.raises(SystemExit) as version:
        main(["--version"])
    assert version.value.code == 0 and capsys.readouterr().out.startswith("sourcerer ")
    _run(capsys, "tenants", "create", "--tenant", "acme", "--tier", "pro")
    code, out, _ = _run(capsys, "tenants", "list", "--json")
    assert code == 0 and [t["tenant"] for t in json.loads(out)] == ["acme"]

    def boom(*args, **kwargs):
        raise KeyError("internal detail")

    monkeypatch.setattr("sourcerer.store.open_index", boom)
    code, out, err = _run(capsys, "search", "failover", "--tenant", "acme")
    assert code == 1 and "Traceback" not in err and "--debug" in err
    with pytest.raises(KeyError):
        main(["--debug", "search", "failover", "--tenant", "acme"])


def test_serve_refuses_a_busy_port_before_minting_a_key_and_mints_one_only_once(handbook, capsys):
    import socket

    from sourcerer.ledger import open_ledger
    from sourcerer.service.admin import local_admin_key

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code, out, err = _run(capsys, "serve", "--port", str(busy.getsockname()[1]), "--tenant", "acme")
    assert code == 2 and "cannot listen" in err and "admin key" not in out
    assert open_ledger().list_keys("acme") == []
    assert local_admin_key(open_ledger(), "acme") is not None
    assert local_admin_key(open_ledger(), "acme") is None  # a restart does not mint another


def test_re_ingest_keeps_the_stored_scope_and_moving_needs_move(handbook, capsys):
    _run(capsys, "ingest", str(handbook), "--tenant", "acme", "--scope", "acme/ops")
    code, out, _ = _run(capsys, "ingest", str(handbook), "--tenant", "acme")  # no --scope: stays in acme/ops
    assert out.startswith("0 ingested, 2 unchanged")
    code, out, _ = _run(capsys, "ingest", str(handbook), "--tenant", "acme", "--scope", "acme/beta")
    assert "already in scope acme/ops: pass --move to move it to acme/beta" in out and out.startswith("0 ingested")
    code, out, _ = _run(capsys, "ingest", str(handbook), "--tenant", "acme", "--scope", "acme/beta", "--move")
    assert code == 0 and out.startswith("0 ingested")  # moved (then rewritten there: the scope is part of the hash)
    _, out, _ = _run(capsys, "documents", "list", "--tenant", "acme", "--json")
    assert sorted((d["source_uri"], d["scope"]) for d in json.loads(out)) == [("ops.md", "acme/beta"), ("people.md", "acme/beta")]


def test_a_bad_tenant_or_scope_fails_at_once_in_one_line(handbook, capsys):
    for flags in (["--tenant", "bad tenant"], ["--tenant", "acme", "--scope", "a/../b"]):
        with pytest.raises(SystemExit) as stopped:
            main(["ingest", str(handbook), *flags])
        err = capsys.readouterr().err
        assert stopped.value.code == 2 and err.strip().splitlines()[-1].startswith("sourcerer ingest: error: argument")
        assert "validation error" not in err


def test_tenant_and_scope_mistakes_are_loud(handbook, capsys):
    """No silent tenant: --scope acme/... files under acme and says so; a scope outside its tenant, a question to
    a tenant that holds nothing (a typo) and a bad id are errors with exit 2; `tenants list` lists every tenant
    that holds documents."""
    code, _, err = _run(capsys, "ingest", str(handbook / "ops.md"), "--scope", "acme/alpha/backend")
    assert code == 0 and "tenant acme (from --scope" in err
    code, out, _ = _run(capsys, "documents", "list", "--tenant", "acme", "--json")
    assert [d["scope"] for d in json.loads(out)] == ["acme/alpha/backend"]

    code, _, err = _run(capsys, "ingest", str(handbook / "ops.md"), "--tenant", "acme", "--scope", "other/place")
    assert code == 2 and "outside tenant acme" in err and len(err.strip().splitlines()) == 1

    code, out, err = _run(capsys, "ask", "How long did the failover cutover take?", "--tenant", "acmee")
    assert code == 2 and "tenant acmee holds no documents" in err and out == ""
    code, _, err = _run(capsys, "search", "failover", "--tenant", "acmee")
    assert code == 2 and "holds no documents" in err
    code, out, _ = _run(capsys, "ask", "How long did the failover cutover take?", "--scope", "acme/alpha")
    assert code == 0 and "42 seconds" in out  # the tenant from the scope

    code, _, err = _run(capsys, "ingest", str(handbook / "people.md"))  # no tenant, no scope: local, said out loud
    assert code == 0 and "tenant local (the default" in err
    code, out, _ = _run(capsys, "tenants", "list", "--json")
    assert {t["tenant"] for t in json.loads(out)} >= {"acme", "local"}
    code, _, err = _run(capsys, "documents", "delete", "doc_nope", "--tenant", "acme")
    assert code == 2 and "no document doc_nope" in err


def test_the_library_the_cli_and_the_service_retrieve_through_one_object_with_one_trace(handbook, capsys):
    """The same question over the same index, reranked, through `index.retriever()`, `sourcerer ask` and the
    service: the same cited chunk, the same stages, the same retrieve detail (the index's own trace)."""
    from sourcerer import ask
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.service.core import Service
    from sourcerer.service.schemas import AnswerRequest
    from sourcerer.service.tenancy import Context, tier_named
    from sourcerer.settings import get_settings
    from sourcerer.store import open_index

    _run(capsys, "ingest", str(handbook), "--tenant", "acme")
    question = "How long did the failover cutover take?"
    code, out, err = _run(capsys, "ask", question, "--tenant", "acme", "--rerank", "--json")
    assert code == 0, err
    by_cli = json.loads(out)
    index = open_index()
    by_library = ask(question, retriever=index.retriever(tenant="acme", rerank=True)).model_dump(mode="json")
    ledger = SQLiteLedger(get_settings().home / "ledger.db")
    ledger.create_tenant("acme", "pro")
    caller = Context(tenant="acme", tier=tier_named("pro"), key_id="k", scopes=["acme"], perms=["read"])
    request = AnswerRequest.model_validate({"q": question, "rerank": True, "top_k": 8})
    by_service = Service(index=index, ledger=ledger).answer(caller, None, request).model_dump(mode="json")

    def shape(trace):
        stages = [s["stage"] for s in trace["stages"] if s["stage"] != "cache"]
        retrieve = next(s for s in trace["stages"] if s["stage"] == "retrieve")["detail"]
        return stages, sorted(k for k in retrieve if k not in ("via",)), retrieve["rerank"]["by"]

    assert shape(by_cli["trace"]) == shape(by_library["trace"]) == shape(by_service["trace"])
    cited = {a["citations"][0]["unit_id"] for a in (by_cli, by_library, by_service["answer"])}
    assert len(cited) == 1
