"""The `sourcerer` command line: ask questions over passages, and a demo of the whole answer pipeline."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from sourcerer.errors import SourcererError
from sourcerer.models import Answer


def load_passages(path: str | Path) -> list[dict[str, Any]]:
    """Passages from a `.jsonl` file of `{text, source}` objects, or a folder of text files (one passage per
    paragraph, labelled with the file name)."""
    path = Path(path)
    if path.is_dir():
        passages = []
        for file in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in {".txt", ".md", ""}):
            text = file.read_text(encoding="utf-8", errors="replace")
            for paragraph in text.split("\n\n"):
                if paragraph.strip():
                    passages.append({"text": " ".join(paragraph.split()), "source": file.name})
        return passages
    if not path.exists():
        raise SourcererError(f"no such file or folder: {path}")
    passages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourcererError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise SourcererError(f'{path}:{number}: each line must be an object with a "text" string')
        passages.append(item)
    return passages


def render(answer: Answer, *, question: str | None = None) -> str:
    """A readable rendering: the answer, its citations with their text, or the refusal and its reason."""
    lines = []
    if question:
        lines.append(f"Q: {question}")
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
        for claim in f.claims:
            mark = "✓" if claim.supported else "✗"
            lines.append(f"     {mark} {claim.claim} — {claim.why}")
    if answer.trace.draft:
        lines.append(f"   refused draft: {answer.trace.draft}")
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
    """A conversation so far: a JSON list of {"role": "user"|"assistant", "text"} turns, or one turn per line."""
    raw = Path(path).read_text(encoding="utf-8").strip()
    try:
        turns = json.loads(raw) if raw.startswith("[") else [json.loads(line) for line in raw.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON list of turns or JSON lines ({exc.msg}, line {exc.lineno})") from exc
    from sourcerer.history import validate_history

    return validate_history(turns)


def _groups(value: str | None) -> list[str]:
    return [g.strip() for g in (value or "").split(",") if g.strip()]


def _open(args: argparse.Namespace):
    from sourcerer.store import open_index

    return open_index(args.index)


def _cmd_ask(args: argparse.Namespace) -> int:
    from sourcerer.pipeline import ask

    kwargs: dict[str, Any] = {"k": args.k, "min_score": args.min_score, "verify": args.verify}
    if args.passages:
        kwargs["passages"] = load_passages(args.passages)
    elif args.endpoint:
        kwargs["endpoint"] = args.endpoint
    else:
        kwargs["retriever"] = _open(args).retriever(
            tenant=args.tenant, scope=args.scope, groups=_groups(args.groups), k=args.k, mode=args.mode
        )
    if args.history:
        kwargs["history"] = load_history(args.history)
    if args.chat:
        kwargs["chat"] = args.chat
    if args.judge:
        kwargs["judge"] = args.judge
    answer = ask(args.question, **kwargs)
    if args.json:
        print(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(render(answer, question=args.question))
    return 0


def _bar(done: int, total: int, width: int = 24) -> str:
    filled = int(width * done / max(total, 1))
    return "█" * filled + "·" * (width - filled)


def _cmd_ingest(args: argparse.Namespace) -> int:
    from sourcerer.store.base import files_under

    index = _open(args)
    deferred = hasattr(index, "embed_pending") and index.embedder is not None
    if deferred:  # phase 1 writes text and keyword terms (searchable at once); phase 2 computes the vectors
        index.defer_embedding = True
    total, done, chunks = len(files_under(args.path)), 0, 0
    started = time.perf_counter()
    live = not args.json and sys.stderr.isatty()  # no carriage-return frames in logs and pipes

    def progress(path: str, written: int) -> None:
        nonlocal done, chunks
        done += 1
        chunks += written
        if live:
            sys.stderr.write(f"\r[{_bar(done, total)}] {done}/{total} files, {chunks} chunks indexed  ")
            sys.stderr.flush()

    report = index.ingest_path(args.path, tenant=args.tenant, scope=args.scope, acl=_groups(args.acl), progress=progress)
    if not args.json:  # the last frame, as one plain line where there is no terminal to redraw
        sys.stderr.write("\n" if live else f"[{_bar(done, total)}] {done}/{total} files, {chunks} chunks indexed\n")
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(f"{report.summary()} in {time.perf_counter() - started:.1f} s (keyword-searchable now)")
        for outcome in report.files:
            if outcome.status == "skipped":
                print(f"  skipped {outcome.path}: {outcome.reason}")
    if deferred and not args.no_embed:
        _embed(index, quiet=args.json)
    elif deferred and not args.json:
        print(
            f"{index.pending_embeddings()} chunks wait for their vectors: run `sourcerer embed` (or keep `sourcerer serve` running)"
        )
    return 0


def _embed(index: Any, quiet: bool = False) -> int:
    """Embed every pending chunk with a progress bar; Ctrl-C leaves the rest for later, losing nothing."""
    total, done, started = index.pending_embeddings(), 0, time.perf_counter()
    live = not quiet and sys.stderr.isatty()

    def progress(count: int) -> None:
        nonlocal done
        done += count
        if live:
            rate = done / max(time.perf_counter() - started, 1e-6)
            sys.stderr.write(f"\r[{_bar(done, total)}] {done}/{total} chunks embedded ({rate:.1f}/s)  ")
            sys.stderr.flush()

    try:
        index.embed_pending(progress=progress)
    except KeyboardInterrupt:
        if live:
            sys.stderr.write("\n")
        print(f"stopped: {index.pending_embeddings()} chunks still to embed; `sourcerer embed` finishes them", file=sys.stderr)
        return 130
    if not quiet:
        sys.stderr.write("\n" if live else f"[{_bar(done, total)}] {done}/{total} chunks embedded\n")
        print(f"{done} chunks embedded in {time.perf_counter() - started:.1f} s")
    return 0


def _cmd_embed(args: argparse.Namespace) -> int:
    index = _open(args)
    if not hasattr(index, "embed_pending") or index.embedder is None:
        print("nothing to embed: this index has no embedding model or computes vectors at ingest", file=sys.stderr)
        return 0
    return _embed(index, quiet=args.json)


def _cmd_search(args: argparse.Namespace) -> int:
    index = _open(args)
    from sourcerer.accounting import tally

    with tally() as spent:
        hits = index.search(
            args.query, tenant=args.tenant, scope=args.scope, groups=_groups(args.groups), k=args.k, mode=args.mode
        )
    if args.json:
        print(
            json.dumps(
                {"hits": [h.model_dump(mode="json") for h in hits], "trace": spent.search},
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not hits:
        print("no results")
    for rank, hit in enumerate(hits, start=1):
        loc = hit.locator.model_dump()
        where = ", ".join(f"{k}={v}" for k, v in loc.items() if k != "kind" and v is not None)
        print(f"{rank:>2}. {hit.score:.3f}  {hit.label}  ({hit.source_uri}, {loc['kind']} {where})")
        print(f"    {hit.text[:200]}{'…' if len(hit.text) > 200 else ''}")
    return 0


def _cmd_documents(args: argparse.Namespace) -> int:
    index = _open(args)
    if args.action == "list":
        docs = index.list_documents(args.tenant, args.scope)
        if args.json:
            print(json.dumps(docs, ensure_ascii=False, indent=2, default=str))
        else:
            for d in docs:
                print(f"{d['document_id']}  {d['chunks']:>4} chunks  {d['scope']}  {d['source_uri']}")
            print(f"{len(docs)} documents")
        return 0
    if not args.document_id:
        raise SourcererError(f"documents {args.action} needs a DOCUMENT_ID")
    if args.action == "move":
        if not args.to:
            raise SourcererError("documents move needs --to SCOPE")
        moved = index.move_document(args.tenant, args.document_id, args.to)
        print(f"moved {args.document_id} to {moved['scope']}: now {moved['document_id']}")
        return 0
    if index.delete_document(args.tenant, args.document_id):
        print(f"deleted {args.document_id}")
        return 0
    print(f"sourcerer: error: no document {args.document_id} for tenant {args.tenant}", file=sys.stderr)
    return 1


def _cmd_opensearch(args: argparse.Namespace) -> int:
    from sourcerer.store.opensearch import OpenSearchIndex, index_body

    if args.action == "mapping":
        print(json.dumps(index_body(args.dimension), indent=2))
        return 0
    index = _open(args)
    if not isinstance(index, OpenSearchIndex):
        raise SourcererError("opensearch init needs an OpenSearch index URL (--index or SOURCERER_INDEX)")
    print(json.dumps(index.init()))
    return 0


def _cmd_tenants(args: argparse.Namespace) -> int:
    from sourcerer.ledger import open_ledger
    from sourcerer.store.models import validate_tenant

    ledger = open_ledger()
    if args.action == "create":
        tenant = ledger.create_tenant(validate_tenant(args.tenant), args.tier or "free")
    else:
        if args.store_text is None and args.tier is None:
            raise SourcererError("tenants set needs --tier or --store-text")
        if ledger.get_tenant(args.tenant) is None:
            raise SourcererError(f"no tenant {args.tenant}: run `sourcerer tenants create` first")
        if args.tier:
            ledger.create_tenant(args.tenant, args.tier)
        if args.store_text is not None:
            ledger.update_tenant_settings(args.tenant, {"store_text": args.store_text == "true"})
        tenant = ledger.get_tenant(args.tenant) or {}
    settings = ", ".join(f"{k}={json.dumps(v)}" for k, v in tenant["settings"].items())
    print(json.dumps(tenant) if args.json else f"tenant {tenant['tenant']} on tier {tenant['tier']} ({settings})")
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    import time

    from sourcerer.audit import Auditor, parse_since
    from sourcerer.ledger import open_ledger

    since = parse_since(args.since, time.time())
    auditor = Auditor(_open(args), open_ledger(), rejudge=args.rejudge)
    report = auditor.run(since, tenants=[args.tenant] if args.tenant else None)
    if args.json:
        print(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        for f in report.as_json():
            mark = "new " if f["new"] else "    "
            print(f"{mark}{f['status']:15} {f['tenant']:12} {f['answer_id']}  {f['detail']}")
        new = report.by_status(only_new=True)
        counts = ", ".join(f"{n} {s}" for s, n in report.by_status().items() if n)
        print(
            f"{report.answers_checked} answers checked ({counts or 'none'}); {len(report.recorded)} new findings"
            + (f" ({', '.join(f'{n} {s}' for s, n in new.items() if n)})" if report.recorded else "")
            + f"; {report.refusals_skipped} refusals skipped"
        )
    for error in report.errors:
        print(f"sourcerer: audit: {error}", file=sys.stderr)
    return 0 if report.complete and not report.errors and not report.by_status()["error"] else 1


def _cmd_keys(args: argparse.Namespace) -> int:
    from sourcerer.ledger import open_ledger
    from sourcerer.tenancy import new_key

    ledger = open_ledger()
    if args.action == "create":
        if args.tier:
            ledger.create_tenant(args.tenant, args.tier)
        tenant = ledger.get_tenant(args.tenant)
        if tenant is None:
            raise SourcererError(f"no tenant {args.tenant}: pass --tier or run `sourcerer tenants create` first")
        key, record = new_key(args.tenant, _groups(args.scopes), _groups(args.perms), _groups(args.groups))
        ledger.put_key(record)
        shown = {
            "key": key,
            "key_id": record.key_id,
            "tenant": record.tenant,
            "tier": tenant["tier"],
            "scopes": record.scopes,
            "perms": record.perms,
            "groups": record.groups,
        }
        if args.json:
            print(json.dumps(shown))
        else:
            print(
                f"{key}\n(shown once; key id {record.key_id}, tenant {record.tenant}, tier {tenant['tier']}, "
                f"scopes {', '.join(record.scopes)}, perms {', '.join(record.perms)})"
            )
        return 0
    if args.action == "list":
        if not args.tenant:
            raise SourcererError("keys list needs --tenant")
        tier = (ledger.get_tenant(args.tenant) or {}).get("tier")
        keys = [{**k.public(), "tier": tier} for k in ledger.list_keys(args.tenant)]
        if args.json:
            print(json.dumps(keys))
        else:
            for k in keys:
                state = "revoked" if k["revoked"] else "active"
                print(f"{k['key_id']}  {state:7}  {','.join(k['perms']):16}  {','.join(k['scopes'])}")
        return 0
    if not args.key_id:
        raise SourcererError("keys revoke needs a KEY_ID")
    if ledger.revoke_key(args.key_id):
        print(f"revoked {args.key_id}")
        return 0
    print(f"sourcerer: error: no key {args.key_id}", file=sys.stderr)
    return 1


def _cmd_serve(args: argparse.Namespace) -> int:
    from sourcerer.ledger import open_ledger
    from sourcerer.serve import default_workers, run
    from sourcerer.tenancy import new_key

    ledger = open_ledger()
    if not args.no_admin_key:
        tenant = args.tenant
        if ledger.get_tenant(tenant) is None:
            ledger.create_tenant(tenant, "enterprise")
        key, record = new_key(tenant, [tenant], ["read", "write", "admin"])
        ledger.put_key(record)
        print(f"local admin key for tenant {tenant} (shown once): {key}")

    def ready(url: str) -> None:
        print(f"Sourcerer API on {url}  ({args.workers or default_workers()} workers; Ctrl-C stops it)", flush=True)

    run(args.host, args.port, workers=args.workers, on_ready=ready)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from sourcerer.demo import run_demo, run_http_demo

    run_demo()
    if not args.library_only:
        print()
        run_http_demo()
    return 0


def _index_options(parser: argparse.ArgumentParser, search: bool = True) -> None:
    parser.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    parser.add_argument("--tenant", default="local", help="tenant (default: local)")
    parser.add_argument("--scope", help="scope path, e.g. acme/alpha (searches see it and everything below it)")
    if search:
        parser.add_argument("--groups", help="comma-separated ACL groups the caller holds")
        parser.add_argument(
            "--mode", choices=["hybrid", "keyword", "semantic"], default="hybrid", help="search mode (default hybrid)"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sourcerer",
        description="Ask your documents: a cited answer, or a refusal with its reason.",
        epilog="Environment: SOURCERER_API_KEY / OPENROUTER_API_KEY, SOURCERER_MODEL, SOURCERER_ENDPOINT, "
        "SOURCERER_BEDROCK_MODEL, SOURCERER_PROVIDERS, SOURCERER_EMBEDDER, SOURCERER_GROUNDING_URL, "
        "SOURCERER_INDEX, SOURCERER_TABLE, SOURCERER_HOME. See README.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

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
        "--passages", metavar="PATH", help=".jsonl of {text, source}, or a folder of text files (one passage per paragraph)"
    )
    source.add_argument("--endpoint", metavar="URL", help="a grounding endpoint")
    ask_p.add_argument("--k", type=int, default=5, help="passages to retrieve (default 5)")
    ask_p.add_argument(
        "--min-score", type=float, default=0.2, help="refuse when the best passage scores under this (0-1, default 0.2)"
    )
    ask_p.add_argument(
        "--verify",
        nargs="?",
        const=True,
        default=False,
        choices=[True, "strict"],
        type=lambda v: "strict" if v == "strict" else v,
        metavar="strict",
        help="check every claim against its cited passages; 'strict' refuses an unfaithful answer",
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
        help='the conversation so far, for a follow-up: a JSON list of {"role": "user"|"assistant", "text": ...}',
    )
    ask_p.add_argument("--json", action="store_true", help="print the full answer as JSON")
    _index_options(ask_p)
    ask_p.set_defaults(func=_cmd_ask)

    ingest_p = sub.add_parser(
        "ingest",
        help="ingest a file or folder into the index (txt md html pdf vtt srt json jsonl)",
        epilog="example: sourcerer ingest ./handbook --scope acme/alpha/backend --acl engineering",
    )
    ingest_p.add_argument("path", help="a file or a folder (searched recursively)")
    ingest_p.add_argument(
        "--acl", metavar="GROUPS", help="comma-separated groups allowed to see these documents (default: everyone)"
    )
    ingest_p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    ingest_p.add_argument(
        "--no-embed",
        action="store_true",
        help="index text only (keyword-searchable) and leave the vectors to `sourcerer embed` or a running `sourcerer serve`",
    )
    _index_options(ingest_p, search=False)
    ingest_p.set_defaults(func=_cmd_ingest)

    embed_p = sub.add_parser(
        "embed",
        help="compute the vectors of chunks ingested without them (after `ingest --no-embed` or an interrupted ingest)",
        epilog="example: sourcerer ingest ./docs --no-embed && sourcerer embed",
    )
    embed_p.add_argument("--json", action="store_true", help="no progress output")
    embed_p.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    embed_p.set_defaults(func=_cmd_embed)

    search_p = sub.add_parser("search", help="hybrid, keyword or semantic search over the index")
    search_p.add_argument("query")
    search_p.add_argument("--k", type=int, default=8, help="results (default 8)")
    search_p.add_argument("--json", action="store_true", help="print hits as JSON")
    _index_options(search_p)
    search_p.set_defaults(func=_cmd_search)

    docs_p = sub.add_parser(
        "documents",
        help="list, delete or move ingested documents",
        description="List, delete or move documents. A document's identity is its tenant, scope and source; "
        "moving keeps its chunks and vectors and gives it the identity of the new scope.",
        epilog="example: sourcerer documents move doc_0123abcd --tenant acme --to acme/beta",
    )
    docs_p.add_argument("action", choices=["list", "delete", "move"])
    docs_p.add_argument("document_id", nargs="?", help="the document to delete or move")
    docs_p.add_argument("--to", metavar="SCOPE", help="with move: the scope to move the document to")
    docs_p.add_argument("--json", action="store_true")
    _index_options(docs_p, search=False)
    docs_p.set_defaults(func=_cmd_documents)

    os_p = sub.add_parser("opensearch", help="create or update the OpenSearch index, or print its mapping")
    os_p.add_argument("action", choices=["init", "mapping"])
    os_p.add_argument("--dimension", type=int, default=384, help="vector dimension for `mapping` (default 384)")
    os_p.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX)")
    os_p.set_defaults(func=_cmd_opensearch)

    tenants_p = sub.add_parser(
        "tenants",
        help="create a tenant, or change its tier or settings",
        epilog="example: sourcerer tenants set --tenant acme --store-text false",
    )
    tenants_p.add_argument("action", choices=["create", "set"], help="create (tier defaults to free) or set")
    tenants_p.add_argument("--tenant", required=True)
    tenants_p.add_argument("--tier", choices=["free", "pro", "enterprise"])
    tenants_p.add_argument(
        "--store-text",
        choices=["true", "false"],
        help="keep question and answer text in the answer log (default true); false keeps only their SHA-256 hashes",
    )
    tenants_p.add_argument("--json", action="store_true")
    tenants_p.set_defaults(func=_cmd_tenants)

    audit_p = sub.add_parser(
        "audit",
        help="re-check logged answers against their sources now (ok, source_changed, source_deleted, unfaithful)",
        description="Re-check the answers logged since --since: every citation's receipt against the index as it is "
        "now, then every claim with the configured judge. One finding per answer is stored in the ledger; a finding "
        "the same as the answer's latest is not stored again, so re-running is safe. Exit status 1 when an answer "
        "or tenant could not be checked.",
        epilog="example: sourcerer audit --since 7d --tenant acme --json",
    )
    audit_p.add_argument(
        "--since",
        help="answers created since: ISO 8601 time, epoch seconds or an age like 7d, 12h "
        "(default SOURCERER_AUDIT_WINDOW_DAYS, 30 days)",
    )
    audit_p.add_argument("--tenant", help="audit one tenant (default: every tenant)")
    audit_p.add_argument(
        "--rejudge",
        action="store_true",
        help="ask the judge again about answers it already ruled on (by default its verdict on unchanged sources stands)",
    )
    audit_p.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    audit_p.add_argument(
        "--json", action="store_true", help="print the findings as a JSON list of {answer_id, tenant, status, claims, ...}"
    )
    audit_p.set_defaults(func=_cmd_audit)

    keys_p = sub.add_parser(
        "keys",
        help="create, list or revoke API keys (stored only as hashes)",
        epilog="example: sourcerer keys create --tenant acme --tier pro --scopes acme/alpha --perms read,write",
    )
    keys_p.add_argument("action", choices=["create", "list", "revoke"])
    keys_p.add_argument("key_id", nargs="?", help="the key to revoke")
    keys_p.add_argument("--tenant", help="the key's tenant")
    keys_p.add_argument("--tier", choices=["free", "pro", "enterprise"], help="create the tenant on this tier (or change it)")
    keys_p.add_argument("--scopes", help="comma-separated scope paths the key may reach (default: the whole tenant)")
    keys_p.add_argument("--perms", default="read", help="comma-separated permissions: read, write, admin (default read)")
    keys_p.add_argument("--groups", help="comma-separated ACL groups the key holds")
    keys_p.add_argument("--json", action="store_true")
    keys_p.set_defaults(func=_cmd_keys)

    serve_p = sub.add_parser("serve", help="run the HTTP API locally against the embedded index and ledger")
    serve_p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    serve_p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    serve_p.add_argument("--tenant", default="local", help="tenant of the admin key printed at start (default local)")
    serve_p.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: one per core); each runs a few threads"
    )
    serve_p.add_argument("--no-admin-key", action="store_true", help="do not create and print a local admin key")
    serve_p.set_defaults(func=_cmd_serve)

    demo_p = sub.add_parser("demo", help="answer sample questions over bundled passages, then over the local HTTP API")
    demo_p.add_argument("--library-only", action="store_true", help="skip the HTTP part")
    demo_p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (SourcererError, ValueError, FileNotFoundError) as exc:
        print(f"sourcerer: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
