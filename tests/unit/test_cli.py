"""The `sourcerer` command line, run as a user runs it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import RETURNS, SHIPPING
from sourcerer.cli import main


def _jsonl(tmp_path):
    path = tmp_path / "policies.jsonl"
    path.write_text(
        json.dumps({"text": SHIPPING, "source": "Shipping Policy"})
        + "\n"
        + json.dumps({"text": RETURNS, "source": "Returns Policy"})
        + "\n",
        encoding="utf-8",
    )
    return path


def test_ask_prints_why_a_plain_reading_check_refused(tmp_path, capsys, monkeypatch):
    """A refusal by a plain-reading check says why: here an answer across languages without the reader."""
    monkeypatch.setenv("SOURCERER_READER", "off")
    page = tmp_path / "cartes.md"
    page.write_text("# Cartes\n\nPour activer une carte cadeau :\n\n1. Connectez-vous.\n2. Saisissez le code au dos de la carte.\n")
    main(["ask", "Where do I enter the code?", "--passages", str(page)])
    out = capsys.readouterr().out
    assert "REFUSED (unsupported)" in out and "note: the closest sentence is in fr and the question in en" in out, out


def test_ask_prints_a_readable_cited_answer(tmp_path, capsys):
    assert main(["ask", "How long does standard shipping take?", "--passages", str(_jsonl(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "A: Standard shipping takes 3 to 5 business days" in out
    assert "[1] Shipping Policy" in out


def test_ask_json_with_strict_verification(tmp_path, capsys):
    code = main(
        ["ask", "How long does standard shipping take?", "--passages", str(_jsonl(tmp_path)), "--verify", "strict", "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["refused"] is False and data["faithfulness"]["faithful"] is True
    assert data["citations"][0]["label"] == "Shipping Policy"


def test_ask_over_a_folder_reads_it_as_ingest_does(tmp_path, capsys):
    """A folder is parsed and chunked as `sourcerer ingest` would: a Markdown heading labels the text under it and
    is never an answer of its own ("# Support policy" once answered "Is there a company car policy?"), a list
    item is a sentence without its marker, and a file Sourcerer cannot read is named and left out."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "shipping.txt").write_text(f"{SHIPPING}\n\nWe ship from Ohio.\n", encoding="utf-8")
    (folder / "support.md").write_text(
        "# Support policy\n\n## Hours\n\nSupport is available by chat from 8 am to 8 pm, Monday to Friday.\n\n"
        "## Returns\n\n- Unused items: 30 days\n- Sale items: final sale\n",
        encoding="utf-8",
    )
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    main(["ask", "How long does standard shipping take?", "--passages", str(folder), "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["citations"][0]["label"] == "shipping.txt"
    assert data["answer"].startswith(SHIPPING) and data["citations"][0]["quote"].startswith(SHIPPING)
    assert "logo.png left out: unsupported file type '.png'" in captured.err

    main(["ask", "When is support available?", "--passages", str(folder), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["citations"][0]["label"] == "support.md › Support policy › Hours"
    assert data["answer"].startswith("Support is available by chat") and "#" not in data["answer"]

    main(["ask", "How long do I have to return unused items?", "--passages", str(folder), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["answer"].startswith("Unused items: 30 days. [1]"), data["answer"]

    main(["ask", "Is there a company car policy?", "--passages", str(folder), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["refused"] is True, data["answer"]


def test_ask_over_one_document_reads_it_as_ingest_does(tmp_path, capsys):
    """`--passages notes.txt` once failed as "not valid JSON": a file that is not .jsonl is one document. Notes
    written without capitals still answer with one sentence, not the whole paragraph."""
    notes = tmp_path / "notes.txt"
    notes.write_text("meeting notes. the launch moves to march 3. sara owns the pricing page.\n", encoding="utf-8")
    assert main(["ask", "who owns the pricing page?", "--passages", str(notes), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == "sara owns the pricing page. [1]" and data["citations"][0]["label"] == "notes.txt"

    unknown = tmp_path / "notes.xyz"
    unknown.write_text("text", encoding="utf-8")
    assert main(["ask", "Anything?", "--passages", str(unknown)]) == 2
    assert "notes.xyz: unsupported file type '.xyz'" in capsys.readouterr().err


def test_a_refusal_prints_its_reason(tmp_path, capsys):
    main(["ask", "Do you offer a lifetime warranty?", "--passages", str(_jsonl(tmp_path))])
    assert "REFUSED (not_in_sources)" in capsys.readouterr().out


def test_bad_passages_file_is_a_clear_error(tmp_path, capsys):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    assert main(["ask", "Anything?", "--passages", str(broken)]) == 2
    assert "broken.jsonl:2: not valid JSON" in capsys.readouterr().err
    assert main(["ask", "Anything?", "--passages", str(tmp_path / "missing.jsonl")]) == 2


def test_demo_runs_end_to_end_as_a_subprocess(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sourcerer.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"SOURCERER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "A: Standard shipping takes 3 to 5 business days" in result.stdout
    assert "REFUSED (not_in_sources)" in result.stdout or "REFUSED (unsupported)" in result.stdout
    assert "REFUSED (unfaithful)" in result.stdout and "number not in source: 7" in result.stdout
    assert "audit status source_changed: chunk 0 of handbook/operations.md changed" in result.stdout
    assert not (tmp_path / "ledger.db").exists() and not (tmp_path / "index.db").exists()  # the user's home untouched
    again = subprocess.run(
        [sys.executable, "-m", "sourcerer.cli", "demo", "--library-only"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"SOURCERER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert again.returncode == 0 and "untouched" in again.stdout


def test_help_is_useful(capsys):
    try:
        main(["ask", "--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "--passages" in out and "--verify" in out and "strict" in out


def test_ask_follow_up_with_history_file(tmp_path, capsys):
    history = tmp_path / "conversation.json"
    history.write_text(
        json.dumps(
            [
                {"role": "user", "text": "How long does standard shipping take?"},
                {"role": "assistant", "text": "Standard shipping takes 3 to 5 business days. [1]"},
            ]
        ),
        encoding="utf-8",
    )
    code = main(["ask", "And what about returns?", "--passages", str(_jsonl(tmp_path)), "--history", str(history), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["refused"] is False
    assert [c["label"] for c in data["citations"]] == ["Returns Policy"]
    assert data["citations"][0]["quote"] == RETURNS


def test_an_entity_swap_follow_up_is_answered_about_the_new_entity(tmp_path, capsys):
    """The issue's example through the CLI, over the README's policies: "And express shipping?" after the
    standard shipping question quotes the express rule, never the standard one."""
    from pathlib import Path

    history = tmp_path / "conversation.json"
    history.write_text(json.dumps([{"role": "user", "text": "How long does standard shipping take?"}]), encoding="utf-8")
    policies = Path(__file__).parents[2] / "examples" / "policies.jsonl"
    code = main(["ask", "And express shipping?", "--passages", str(policies), "--history", str(history), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["refused"] is False, data
    assert data["citations"][0]["quote"].startswith("Express shipping arrives the next business day")


def test_a_standalone_question_is_answered_about_the_kind_it_asks_for(capsys):
    """"How long does express shipping take?" over the README's policies quotes the express rule, not the standard
    one that shares as many of its words (`synthesis.scope.other_kind`)."""
    from pathlib import Path

    policies = Path(__file__).parents[2] / "examples" / "policies.jsonl"
    code = main(["ask", "How long does express shipping take?", "--passages", str(policies), "--verify", "strict", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["refused"] is False, data
    assert [c["quote"] for c in data["citations"]] == ["Express shipping arrives the next business day when ordered before 2 pm."]


def test_a_question_about_a_price_the_sources_never_state_is_refused(capsys):
    """"How much does express shipping cost?" over the README's policies: the express rule says when it arrives and
    no price, so the CLI refuses rather than quote it (`synthesis.scope`, the asked value)."""
    from pathlib import Path

    policies = Path(__file__).parents[2] / "examples" / "policies.jsonl"
    code = main(["ask", "How much does express shipping cost?", "--passages", str(policies), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["refused"] is True and data["reason"] == "unsupported", data
    assert data["citations"] == []


def test_bad_history_file_is_a_clear_error(tmp_path, capsys):
    history = tmp_path / "h.json"
    history.write_text('[{"role": "robot", "text": "hi"}]', encoding="utf-8")
    assert main(["ask", "And returns?", "--passages", str(_jsonl(tmp_path)), "--history", str(history)]) == 2
    assert "each history turn must be" in capsys.readouterr().err


def test_history_may_be_written_inline(tmp_path, capsys):
    """Found trying the README's follow-up as a user: `--history '[{"role": ...}]'` failed with "[Errno 2] No such
    file or directory: '[{...'". A JSON list written inline is the conversation; a missing file says so plainly."""
    from pathlib import Path

    policies = Path(__file__).parents[2] / "examples" / "policies.jsonl"
    inline = '[{"role": "user", "text": "How long does standard shipping take?"}]'
    code = main(["ask", "And express shipping?", "--passages", str(policies), "--history", inline, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["answer"].startswith("Express shipping arrives the next business day"), data
    assert main(["ask", "And returns?", "--passages", str(policies), "--history", str(tmp_path / "none.json")]) == 2
    assert "no such file (give a file, or the JSON list inline)" in capsys.readouterr().err


def test_ask_answers_what_the_passage_plainly_says(tmp_path, capsys):
    path = tmp_path / "eng.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(row)
            for row in (
                {"text": "The API rate limit is 600 requests per minute per key.", "source": "api.md"},
                {
                    "text": "Production deployments happen on Tuesdays and Thursdays between 10:00 and 16:00 UTC.",
                    "source": "deploys.md",
                },
                {"text": "Hotfixes need approval from the on-call lead.", "source": "hotfixes.md"},
            )
        ),
        encoding="utf-8",
    )
    for question, label in (
        ("What is the API rate limit?", "api.md"),
        ("When are production deployments allowed?", "deploys.md"),
        ("Who approves hotfixes?", "hotfixes.md"),
    ):
        assert main(["ask", question, "--passages", str(path), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["refused"] is False and [c["label"] for c in data["citations"]] == [label], question


def test_every_subcommand_has_a_description_and_an_example():
    from sourcerer.cli.main import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for name, command in commands.items():
        assert command.description or command.format_help().count("\n") > 3, name
        assert "example" in (command.epilog or ""), f"{name} has no example"


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "--verify", "How long does standard shipping take?"],
        ["ask", "How long does standard shipping take?", "--verify", "strict"],
        ["ask", "--verify", "strict", "How long does standard shipping take?"],
    ],
)
def test_verify_takes_strict_or_nothing_and_never_eats_the_question(argv, seed_passages, tmp_path, capsys):
    passages = tmp_path / "p.jsonl"
    passages.write_text("\n".join(json.dumps(p) for p in seed_passages))
    assert main([*argv, "--passages", str(passages), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["refused"] is False and answer["faithfulness"]["faithful"] is True


def test_a_reader_that_leaves_and_a_broken_backend_end_in_one_line(monkeypatch, capsys):
    class Gone:
        def write(self, text):
            raise BrokenPipeError

        def flush(self):
            raise BrokenPipeError

    monkeypatch.setattr("sys.stdout", Gone())
    assert main(["tenants", "list", "--json"]) == 0  # `sourcerer tenants list --json | head -0`
    monkeypatch.undo()
    from botocore.exceptions import NoCredentialsError

    def no_credentials(*args, **kwargs):
        raise NoCredentialsError()

    monkeypatch.setattr("sourcerer.ledger.open_ledger", no_credentials)
    assert main(["tenants", "list"]) == 1
    err = capsys.readouterr().err
    assert "Unable to locate credentials" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.local_model
def test_ask_with_the_reader_never_answers_the_refunds_question_with_the_shipping_rule(capsys, monkeypatch):
    """The issue's example through the CLI, with the reading model on: without it the shipping sentence answered
    "How long do refunds take?"; with it the answer is never the shipping rule, and the README's follow-up is
    answered about returns or refused."""
    monkeypatch.setenv("SOURCERER_READER", "on")
    examples = "examples/policies.jsonl"
    assert main(["ask", "How long do refunds take?", "--passages", examples, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "Shipping Policy" not in [c["label"] for c in data["citations"]], data["answer"]
    assert data["trace"]["stages"][-1]["stage"] in ("synthesize", "cite")
    main(["ask", "And what about returns?", "--passages", examples, "--history", "examples/conversation.json", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["refused"] or "Shipping Policy" not in [c["label"] for c in data["citations"]], data["answer"]


def test_a_question_naming_what_no_passage_mentions_is_refused_with_the_name(tmp_path, capsys):
    """The issue's example: the travel policy gives the allowance for Europe and the United States, not Japan."""
    travel = tmp_path / "travel.jsonl"
    travel.write_text(
        json.dumps({"text": "The daily meal allowance is 60 EUR in Europe and 75 USD in the United States.", "source": "Travel"}) + "\n",
        encoding="utf-8",
    )
    assert main(["ask", "What is the meal allowance in Japan?", "--passages", str(travel), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["refused"] and data["reason"] == "unsupported", data["answer"]
    assert any("names Japan, which no passage mentions" in note for note in data["trace"]["notes"])


def test_a_question_asking_about_a_kind_no_passage_mentions_is_refused_with_the_kinds(capsys):
    """The README's passages speak of standard and express shipping: international shipping is neither."""
    assert main(["ask", "How long does international shipping take?", "--passages", "examples/policies.jsonl", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["refused"] and data["reason"] == "unsupported", data["answer"]
    assert any("asks about international shipping, which no passage mentions" in n for n in data["trace"]["notes"])


def test_a_one_shot_ask_says_it_is_loading_the_model(capsys, seed_passages, tmp_path):
    """Never silent for seconds: the bundled model's load is announced on stderr (not with --json)."""
    import json as json_module

    from sourcerer.cli.main import main as cli_main
    from sourcerer.retrieval.embedders import local_model_available

    passages = tmp_path / "p.jsonl"
    passages.write_text("\n".join(json_module.dumps(p) for p in seed_passages), encoding="utf-8")
    assert cli_main(["ask", "How long does standard shipping take?", "--passages", str(passages)]) == 0
    err = capsys.readouterr().err
    assert ("loading the bundled model" in err) == local_model_available()
    assert cli_main(["ask", "How long does standard shipping take?", "--passages", str(passages), "--json"]) == 0
    assert "loading" not in capsys.readouterr().err


def test_a_recordings_greeting_is_no_part_of_its_answer(capsys):
    # the README's transcript opens "Welcome to the review of the March failover drill.", which shares "failover"
    # with the question and was said as a second sentence, then verified as a claim
    transcript = Path(__file__).parents[2] / "examples" / "drill-review.vtt"
    assert main(["ask", "How long did the failover take?", "--passages", str(transcript), "--verify", "strict", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == "The failover cutover from the primary region to the standby region took 42 seconds. [1]", data["answer"]
    assert [c["claim"] for c in data["faithfulness"]["claims"]] == [data["answer"][: -len(" [1]")]]


@pytest.mark.parametrize(
    "options, named",
    [(["--filter", "x"], "--filter"), (["--tenant", "acme", "--rerank"], "--tenant, --rerank"), (["--mode", "keyword"], "--mode")],
)
def test_the_index_options_beside_passages_are_an_error_not_ignored(tmp_path, capsys, options, named):
    # "--filter x" beside --passages filtered nothing and said nothing
    assert main(["ask", "How long does standard shipping take?", "--passages", str(_jsonl(tmp_path)), *options]) == 2
    assert f"{named}: for the index, not with --passages" in capsys.readouterr().err


@pytest.mark.local_model
def test_ask_refuses_an_answer_the_reader_reads_as_none(tmp_path, capsys):
    """The reader's veto through the CLI: the refusal and the reading behind it in the trace's notes."""
    page = tmp_path / "library.md"
    page.write_text(
        "# Greenfield Public Library\n\nAdults can borrow up to 12 items at a time, and children up to 8.\n"
        "Books can be borrowed for three weeks and DVDs for one week.\n",
        encoding="utf-8",
    )
    main(["ask", "Can I borrow a laptop?", "--passages", str(page), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["refused"] is True and data["reason"] == "unsupported", data
    assert any("reads the closest sentence as no answer" in note for note in data["trace"]["notes"]), data["trace"]["notes"]

