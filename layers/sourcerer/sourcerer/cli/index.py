"""`sourcerer ingest`, `embed`, `documents` and `opensearch`: what is in the index and how it got there."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from sourcerer.cli.common import bar, groups, index_options, open_index_of
from sourcerer.errors import SourcererError
from sourcerer.store.parsers import READABLE


def _cmd_ingest(args: argparse.Namespace) -> int:
    from sourcerer.store.base import EmbeddedIndex
    from sourcerer.store.folders import files_under

    index = open_index_of(args)
    deferred = isinstance(index, EmbeddedIndex) and index.embedder is not None
    if deferred:  # phase 1 writes text and keyword terms (searchable at once); phase 2 computes the vectors
        index.defer_embedding = True
    total, done, chunks = len(files_under(args.path)), 0, 0
    started = time.perf_counter()
    if not args.json and args.tenant_given != "--tenant":  # never filed under a tenant nobody named, silently
        print(f"tenant {args.tenant} ({args.tenant_given}; --tenant names another)", file=sys.stderr)
    live = not args.json and sys.stderr.isatty()  # no carriage-return frames in logs and pipes

    def progress(path: str, written: int) -> None:
        nonlocal done, chunks
        done += 1
        chunks += written
        if live:
            sys.stderr.write(f"\r[{bar(done, total)}] {done}/{total} files, {chunks} chunks indexed  ")
            sys.stderr.flush()

    placed, refused = _placement(index, args)
    report = index.ingest_path(
        args.path, tenant=args.tenant, scope=args.scope, acl=groups(args.acl), progress=progress, placed=placed, refused=refused
    )
    if not args.json:  # the last frame, as one plain line where there is no terminal to redraw
        sys.stderr.write("\n" if live else f"[{bar(done, total)}] {done}/{total} files, {chunks} chunks indexed\n")
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


def _placement(index: Any, args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    """Where re-ingested files go. Without --scope, a file already in the index keeps its scope (one scope: it
    stays; several: it is refused, since which one is meant is unclear). With --scope, a file stored in one other
    scope (and not in this one) is refused unless --move, which moves it there first, keeping its chunks."""
    from collections import defaultdict
    from pathlib import Path

    from sourcerer.scopes import normalize_scope
    from sourcerer.store.folders import files_under, identity_of

    where: dict[str, dict[str, str]] = defaultdict(dict)  # source_uri -> scope -> document id
    for d in index.list_documents(args.tenant):
        where[d["source_uri"]][d["scope"]] = d["document_id"]
    root = Path(args.path)
    mine = {identity_of(f, root) for f in files_under(args.path)} & set(where)
    if args.scope is None:
        placed = {uri: next(iter(where[uri])) for uri in mine if len(where[uri]) == 1}
        refused = {
            uri: f"in several scopes ({', '.join(sorted(where[uri]))}): pass --scope" for uri in mine if len(where[uri]) > 1
        }
        return placed, refused
    target = normalize_scope(args.scope, args.tenant)
    elsewhere = {uri: next(iter(where[uri].items())) for uri in mine if target not in where[uri] and len(where[uri]) == 1}
    if not args.move:
        return {}, {uri: f"already in scope {scope}: pass --move to move it to {target}" for uri, (scope, _) in elsewhere.items()}
    for _, document_id in elsewhere.values():
        index.move_document(args.tenant, document_id, target)
    return {}, {}


def _embed(index: Any, quiet: bool = False) -> int:
    """Embed every pending chunk with a progress bar that moves every two seconds or so, with its pace and what
    is left; Ctrl-C leaves the rest for later, losing nothing."""
    total, done, started = index.pending_embeddings(), 0, time.perf_counter()
    live = not quiet and sys.stderr.isatty()

    def progress(count: int) -> None:
        nonlocal done
        done += count
        if live:
            rate = done / max(time.perf_counter() - started, 1e-6)
            left = (total - done) / rate if rate else 0
            eta = f"{left / 60:.0f} min left" if left >= 90 else f"{left:.0f} s left"
            sys.stderr.write(f"\r[{bar(done, total)}] {done}/{total} chunks embedded ({rate:.1f}/s, {eta})  ")
            sys.stderr.flush()

    batch = 4  # small at first, then sized to about two seconds of the model's measured pace
    try:
        while True:
            tick = time.perf_counter()
            embedded = index.embed_pending(batch=batch, limit=batch, progress=progress)
            if not embedded:
                break
            pace = embedded / max(time.perf_counter() - tick, 1e-6)
            batch = max(4, min(64, int(pace * 2)))
    except KeyboardInterrupt:
        if live:
            sys.stderr.write("\n")
        print(f"stopped: {index.pending_embeddings()} chunks still to embed; `sourcerer embed` finishes them", file=sys.stderr)
        return 130
    if not quiet:
        sys.stderr.write("\n" if live else f"[{bar(done, total)}] {done}/{total} chunks embedded\n")
        print(f"{done} chunks embedded in {time.perf_counter() - started:.1f} s")
    return 0


def _cmd_embed(args: argparse.Namespace) -> int:
    index = open_index_of(args)
    from sourcerer.store.base import EmbeddedIndex

    if not isinstance(index, EmbeddedIndex) or index.embedder is None:
        print("nothing to embed: this index has no embedding model or computes vectors at ingest", file=sys.stderr)
        return 0
    return _embed(index, quiet=args.json)


def _cmd_documents(args: argparse.Namespace) -> int:
    from sourcerer.store.base import EmbeddedIndex

    index = open_index_of(args)
    if args.action == "list":
        docs = index.list_documents(args.tenant, args.scope)
        if args.json:
            print(json.dumps(docs, ensure_ascii=False, indent=2, default=str))
        else:
            for d in docs:
                print(f"{d['document_id']}  {d['chunks']:>4} chunks  {d['scope']}  {d['source_uri']}")
            print(f"{len(docs)} documents")
            waiting = index.pending_embeddings(args.tenant) if isinstance(index, EmbeddedIndex) else 0
            if waiting:
                print(f"{waiting} chunks wait for their vectors (found by keyword until then; `sourcerer embed` fills them)")
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
    return 2  # a bad id is the caller's mistake, as the README's exit codes say


def _cmd_opensearch(args: argparse.Namespace) -> int:
    from sourcerer.store.opensearch import OpenSearchIndex, index_body

    if args.action == "mapping":
        print(json.dumps(index_body(args.dimension, engine=args.engine or "faiss"), indent=2))
        return 0
    index = open_index_of(args)
    if not isinstance(index, OpenSearchIndex):
        raise SourcererError("opensearch init needs an OpenSearch index URL (--index or SOURCERER_INDEX)")
    if args.engine:
        index.knn_engine = args.engine
    print(json.dumps(index.init(shards=args.shards, replicas=args.replicas)))
    return 0


def register(sub: Any) -> None:
    ingest_p = sub.add_parser(
        "ingest",
        help=f"ingest a file or folder into the index ({READABLE})",
        epilog="example: sourcerer ingest examples/handbook --tenant acme --scope acme/alpha/backend --acl engineering",
    )
    ingest_p.add_argument("path", help="a file or a folder (searched recursively)")
    ingest_p.add_argument(
        "--acl", metavar="GROUPS", help="comma-separated groups allowed to see these documents (default: everyone)"
    )
    ingest_p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    ingest_p.add_argument(
        "--move",
        action="store_true",
        help="move files already in another scope to --scope (without it they are refused, and without --scope they stay)",
    )
    ingest_p.add_argument(
        "--no-embed",
        action="store_true",
        help="index text only (keyword-searchable) and leave the vectors to `sourcerer embed` or a running `sourcerer serve`",
    )
    index_options(ingest_p, search=False)
    ingest_p.set_defaults(func=_cmd_ingest)

    embed_p = sub.add_parser(
        "embed",
        help="compute the vectors of chunks ingested without them (after `ingest --no-embed` or an interrupted ingest)",
        epilog="example: sourcerer ingest ./docs --no-embed && sourcerer embed",
    )
    embed_p.add_argument("--json", action="store_true", help="no progress output")
    embed_p.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    embed_p.set_defaults(func=_cmd_embed)

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
    index_options(docs_p, search=False)
    docs_p.set_defaults(func=_cmd_documents)

    os_p = sub.add_parser(
        "opensearch",
        help="create or update the OpenSearch index, or print its mapping",
        description="init creates the index named by --index or SOURCERER_INDEX with the configured embedder's "
        "dimension (or adds new fields to an existing one); mapping prints the settings and mapping.",
        epilog="example: SOURCERER_INDEX='opensearch+https://HOST/sourcerer?aws=aoss' sourcerer opensearch init",
    )
    os_p.add_argument("action", choices=["init", "mapping"])
    os_p.add_argument("--dimension", type=int, default=384, help="vector dimension for `mapping` (default 384)")
    os_p.add_argument("--shards", type=int, default=1, help="primary shards when `init` creates the index (domains; default 1)")
    os_p.add_argument("--replicas", type=int, default=1, help="replicas per shard when `init` creates it (domains; default 1)")
    os_p.add_argument(
        "--engine",
        choices=["faiss", "lucene"],
        help="k-NN engine of the vector field: faiss (default; AWS, Serverless) or lucene (pure Java: a node without "
        "the k-NN native libraries, such as `make opensearch`); default the URL's ?engine=, else faiss",
    )
    os_p.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX)")
    os_p.set_defaults(func=_cmd_opensearch)
