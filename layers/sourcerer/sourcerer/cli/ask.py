"""`sourcerer ask` and `sourcerer search`: questions and queries, as a person reads them or as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sourcerer.cli.common import groups, index_options, open_index_of, require_known_tenant, search_filter
from sourcerer.errors import InvalidRequest, SourcererError
from sourcerer.models import Answer
from sourcerer.passage_files import load_passages


def load_schema(path: str) -> dict[str, Any]:
    """A JSON Schema from a file (`ask --schema`): an object of strings, lists of strings and such objects."""
    try:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SourcererError(f"no such file: {path}") from exc
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(schema, dict):
        raise InvalidRequest(f"{path}: a JSON Schema is an object")
    return schema


def render(answer: Answer, *, question: str | None = None) -> str:
    """A readable rendering: the answer, its citations with their text, or the refusal and its reason."""
    lines = []
    if question:
        lines.append(f"Q: {question}")
    if answer.structured is not None:
        for f in answer.structured.fields:  # each field with its own citations, or why it was refused
            lines.append(f"{f.path}: " + (f"REFUSED ({f.reason})" if f.refused else f"{f.text}"))
            for c in f.citations:
                lines.append(f"   [{c.index}] {c.label} ({_where(c.locator)}, {c.receipt[:19]}…)")
        lines.append(f"   ({answer.provider}, via {answer.via}, {answer.trace.total_ms:.0f} ms)")
        return "\n".join(lines)
    if answer.refused:
        lines.append(f"REFUSED ({answer.reason}): {answer.answer}")
    else:
        lines.append(f"A: {answer.answer}")
        for citation in answer.citations:
            lines.append(f"   [{citation.index}] {citation.label} ({_where(citation.locator)}, {citation.receipt[:19]}…)")
            lines.append(f"       “{citation.quote or citation.text}”")
    if answer.faithfulness is not None:
        f = answer.faithfulness
        lines.append(f"   verified by {f.judge} judge: faithful={f.faithful} score={f.score:.2f}")
        if f.relevant is not None:
            lines.append(f"   answers the question: {'yes' if f.relevant else 'no'} (p={f.relevance:.2f})")
        for claim in f.claims:
            mark = "✓" if claim.supported else "✗"
            lines.append(f"     {mark} {claim.claim} — {claim.why}")
        if f.removed and not answer.refused:
            lines.append(f"   partial: {len(f.removed)} unsupported claim(s) removed, marked [removed: …] in the answer")
    if answer.trace.draft:
        lines.append(f"   {'refused draft' if answer.refused else 'draft before removal'}: {answer.trace.draft}")
    lines += [f"   note: {note}" for note in answer.trace.notes]  # why it was refused, what ran instead
    lines.append(f"   ({answer.provider}, via {answer.via}, {answer.trace.total_ms:.0f} ms)")
    return "\n".join(lines)


def _where(loc: Any) -> str:
    """A locator as a person reads it: chars 10-42, lines 3-4, p.2, 00:13:05-00:13:09."""
    if loc.kind == "char_span":
        return f"chars {loc.start}-{loc.end}"
    if loc.kind == "lines":
        return f"lines {loc.start}-{loc.end}" if loc.end != loc.start else f"line {loc.start}"
    if loc.kind == "page":
        return f"p.{loc.page}"
    return f"{_clock(loc.t_start_ms)}-{_clock(loc.t_end_ms)}"


def _clock(ms: int) -> str:
    seconds = ms // 1000
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def load_history(path: str) -> list[dict[str, str]]:
    """A conversation so far: a JSON list of {"role": "user"|"assistant", "text"} turns, or one turn per line, in a
    file or written inline (`--history '[{"role": "user", "text": "..."}]'`)."""
    inline = path.lstrip().startswith(("[", "{")) and not Path(path).exists()
    if not inline and not Path(path).is_file():
        raise InvalidRequest(f"--history {path}: no such file (give a file, or the JSON list inline)")
    raw = path.strip() if inline else Path(path).read_text(encoding="utf-8").strip()
    path = "--history" if inline else path
    try:
        turns = json.loads(raw) if raw.startswith("[") else [json.loads(line) for line in raw.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{path}: not a JSON list of turns or JSON lines ({exc.msg}, line {exc.lineno})") from exc
    from sourcerer.history import validate_history

    return validate_history(turns)


def verify_value(argv: list[str]) -> list[str]:
    """`ask --verify "the question"`: a word after --verify that is not "strict" or "partial" (nor an option) is the question,
    not --verify's value, which argparse would refuse. Rewritten to `--verify=yes` before parsing."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--verify" and out[i + 1] not in ("strict", "partial") and not out[i + 1].startswith("-"):
            out[i] = "--verify=yes"
    return out


def _cmd_ask(args: argparse.Namespace) -> int:
    from sourcerer.pipeline import ask

    # the index's options filter nothing in a file or at an endpoint: said, not silently ignored
    if (args.passages or args.endpoint) and (ignored := _index_only(args)):
        raise InvalidRequest(f"{', '.join(ignored)}: for the index, not with {'--passages' if args.passages else '--endpoint'}")
    _say_model_loading(args)
    kwargs: dict[str, Any] = {"k": args.k, "min_score": args.min_score, "verify": args.verify}
    if args.passages:
        kwargs["passages"] = load_passages(args.passages)
    elif args.endpoint:
        kwargs["endpoint"] = args.endpoint
    else:
        kwargs["retriever"] = _retriever(args, args.question)
    if args.history:
        kwargs["history"] = load_history(args.history)
    if args.chat:
        kwargs["chat"] = args.chat
    if args.judge:
        kwargs["judge"] = args.judge
    if args.schema:
        kwargs["schema"] = load_schema(args.schema)
        if args.stream:
            raise InvalidRequest("--schema answers are not streamed: drop --stream")
    if args.stream:
        return _stream(args.question, kwargs, args.json)
    answer = ask(args.question, **kwargs)
    if args.json:
        print(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(render(answer, question=args.question))
    return 0


def _index_only(args: argparse.Namespace) -> list[str]:
    """The options given that only an index search reads (a tenant named outright, not the default)."""
    named = [f"--{name}" for name in ("index", "scope", "groups", "plane", "modality", "filter", "rerank") if getattr(args, name)]
    return ["--tenant"] * (args.tenant_given == "--tenant") + named + ["--mode"] * (args.mode != "hybrid")


def _say_model_loading(args: argparse.Namespace) -> None:
    """A one-shot `ask` loads the bundled model (a few seconds on 2 cores): say so, rather than sit silent."""
    from sourcerer.retrieval.embedders import local_model_available
    from sourcerer.settings import get_settings

    if not args.json and not args.endpoint and local_model_available() and get_settings().embedder in (None, "local"):
        print("sourcerer: loading the bundled model (a few seconds, once per command)…", file=sys.stderr, flush=True)


def _stream(question: str, kwargs: dict[str, Any], as_json: bool) -> int:
    """`ask --stream`: the answer printed as it is made (with --json, one event per line), then its citations."""
    import asyncio

    from sourcerer.pipeline import astream
    from sourcerer.streaming import event_json

    async def run() -> None:
        async for event in astream(question, **kwargs):
            if as_json:
                print(json.dumps(event_json(event), ensure_ascii=False), flush=True)
            elif event["event"] == "delta":
                print(event["text"], end="", flush=True)
            elif event["event"] == "reset":
                print("\n   (the text above is withdrawn; the answer follows)", flush=True)
            elif event["event"] == "done":
                print("\n" + "\n".join(render(event["answer"]).splitlines()[1:]))

    asyncio.run(run())
    return 0


def _retriever(args: argparse.Namespace, text: str) -> Any:
    """The index's retriever for `ask` and `search` (`IndexRetriever`, as the library and the service use it);
    with --rerank it reranks the best candidates, and its trace says how."""
    index = open_index_of(args)
    within = _search_within(args, text)
    require_known_tenant(index, args.tenant)
    return index.retriever(**within, rerank=args.rerank)


def _search_within(args: argparse.Namespace, text: str) -> dict[str, Any]:
    """What `search` and `ask` over the index search within: tenant, scope, groups, depth, mode, filter."""
    return {
        "tenant": args.tenant,
        "scope": args.scope,
        "groups": groups(args.groups),
        "k": args.k,
        "mode": args.mode,
        "only": search_filter(args, text),
    }


def _cmd_search(args: argparse.Namespace) -> int:
    hits, trace = _retriever(args, args.query).search(args.query)  # the query object is checked first, as the API checks it
    if args.json:
        print(
            json.dumps(
                {"hits": [h.model_dump(mode="json") for h in hits], "trace": trace},
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not hits:
        print("no results")
    for rank, hit in enumerate(hits, start=1):  # located as `ask` cites ("p.2", "lines 3-4"), the text on one line
        print(f"{rank:>2}. {hit.score:.3f}  {hit.label}  ({hit.source_uri}, {_where(hit.locator)})")
        text = " ".join(hit.text.split())
        print(f"    {text[:200]}{'…' if len(text) > 200 else ''}")
    return 0


def register(sub: Any) -> None:
    ask_p = sub.add_parser(
        "ask",
        help="answer a question from the index, passages or a grounding endpoint",
        description="Answer QUESTION with enforced citations, or refuse with a reason. Grounding: --passages, "
        "--endpoint, or (by default) the index, filtered by --tenant, --scope and --groups.",
        epilog='example: sourcerer ask "How long does shipping take?" --passages policies.jsonl --verify strict',
    )
    ask_p.add_argument("question", help="the question to answer")
    source = ask_p.add_mutually_exclusive_group()
    source.add_argument(
        "--passages", metavar="PATH", help=".jsonl of {text, source}, or a document or folder of documents, read and chunked as `sourcerer ingest` reads them"
    )
    source.add_argument("--endpoint", metavar="URL", help="a grounding endpoint")
    ask_p.add_argument("--k", type=int, default=5, help="passages to retrieve (default 5)")
    ask_p.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="refuse when the best passage scores under this (0-1; default 0.2, none where the reading model decides)",
    )
    ask_p.add_argument(
        "--verify",
        nargs="?",
        const=True,
        default=False,
        choices=[True, "strict", "partial"],
        type=lambda v: v if v in ("strict", "partial") else True if v == "yes" else v,
        metavar="strict|partial",
        help="check every claim against its cited passages, and that the answer answers the question; 'strict' refuses "
        "an unfaithful or off-topic answer; 'partial' keeps the supported claims and marks each removed one [removed: why]",
    )
    ask_p.add_argument(
        "--chat", choices=["extractive", "openai", "bedrock"], help="synthesiser (default: from the environment, extractive last)"
    )
    ask_p.add_argument(
        "--judge", choices=["local", "llm"], help="verifier (default: llm when a chat model is configured, else local)"
    )
    ask_p.add_argument(
        "--history",
        metavar="FILE",
        help='the conversation so far, for a follow-up: a JSON list of {"role": "user"|"assistant", "text": ...}, in a '
        "file or inline",
    )
    ask_p.add_argument("--json", action="store_true", help="print the full answer as JSON (with --stream: one event per line)")
    ask_p.add_argument(
        "--schema",
        metavar="FILE",
        help="answer in this JSON Schema's shape (strings, lists of strings, nested objects): each string with its own "
        "citations, or null and the reason it was refused",
    )
    ask_p.add_argument(
        "--stream",
        action="store_true",
        help="print the answer as it is made: an LLM's sentences as they are written and checked; with strict or "
        "partial verification, each claim after its verdict",
    )
    index_options(ask_p)
    ask_p.set_defaults(func=_cmd_ask)

    search_p = sub.add_parser(
        "search",
        help="hybrid, keyword or semantic search over the index",
        description="Search the index within --tenant, --scope and --groups, narrowed by the query object's "
        "--plane, --modality and --filter (the same rules as POST /v1/search).",
        epilog='example: sourcerer search "failover" --tenant acme --plane audio --filter lang=en --json',
    )
    search_p.add_argument("query")
    search_p.add_argument("--k", type=int, default=8, help="results (default 8)")
    search_p.add_argument("--json", action="store_true", help="print hits as JSON")
    index_options(search_p)
    search_p.set_defaults(func=_cmd_search)
