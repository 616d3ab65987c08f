"""Ingesting many documents, a folder's files or a list: read and prepared in worker processes when there are
many, written in order, a group to a commit, through the one idempotent algorithm (`store.base.ingest_many`)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sourcerer.errors import UnsupportedDocument
from sourcerer.scopes import Access
from sourcerer.store.base import (
    Admit,
    DocumentProblem,
    Index,
    IngestResult,
    IngestStorage,
    Prepared,
    as_document,
    ingest_many,
    prepare,
)
from sourcerer.store.chunking import ChunkSettings
from sourcerer.store.models import Document, FileOutcome, IngestReport
from sourcerer.store.parsers import EXTENSIONS

MAX_FILE_BYTES = 64 * 1024 * 1024  # a folder ingest skips bigger files without reading them


def files_under(path: str | Path) -> list[Path]:
    """The file itself, or every file below a folder (hidden files and folders left out), sorted."""
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"no such file or folder: {root}")
    if root.is_file():
        return [root]
    return sorted(
        p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def why_skip(file: Path, root: Path) -> str | None:
    """Why a file found under `root` is not ingested, or None. A link that leads out of the folder is never
    followed: ingesting a folder must not make the rest of the disk searchable."""
    if root.is_dir() and not file.resolve().is_relative_to(root.resolve()):
        return "a link to a file outside the folder being ingested"
    if file.suffix.lower() not in EXTENSIONS:
        return f"unsupported file type {file.suffix or '(none)'!r}"
    if file.stat().st_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB"
    return None


def ingest_folder(
    index: Index,
    path: str | Path,
    *,
    tenant: str,
    scope: str | None,
    acl: Iterable[str],
    metadata: Mapping[str, Any] | None,
    progress: Callable[[str, int], None] | None = None,
    placed: Mapping[str, str] | None = None,
    refused: Mapping[str, str] | None = None,
) -> IngestReport:
    """Ingest a file or every file under a folder. Files that fail are reported with the reason; the rest go in.
    `placed` gives some files their own scope (by source_uri); `refused` skips some, with the reason given.

    Large folders are parsed, chunked and tokenised (two thirds of a keyword-only ingest) in worker processes,
    one per core but this one, a window of files ahead of the writes made here (the index serialises them)."""
    report = IngestReport()
    root = Path(path)
    files = files_under(path)
    fields = {
        "tenant": tenant,
        "scope": scope,
        "acl": list(acl),
        "metadata": dict(metadata or {}),
        "placed": dict(placed or {}),
        "refused": dict(refused or {}),
    }
    window: list[tuple[Path, Document | str, Prepared | str | None]] = []
    for entry in _documents(files, root, fields, index.chunk_settings):
        window.append(entry)
        if len(window) == WRITE_GROUP or len(report.files) + len(window) == len(files):
            _write_files(index, window, report, progress)
            window = []
    return report


def _write_files(
    index: Index,
    window: list[tuple[Path, Document | str, Prepared | str | None]],
    report: IngestReport,
    progress: Callable[[str, int], None] | None,
) -> None:
    """Write a group of files in one `ingest_documents` call and report each (a file that fails is skipped with
    the reason; the rest go in)."""
    readable = [(file, item, prepared) for file, item, prepared in window if isinstance(item, Document)]
    outcomes = iter(
        index.ingest_documents(
            [item for _, item, _ in readable], prepared=[p if isinstance(p, Prepared) else None for _, _, p in readable]
        )
    )
    for file, item, _ in window:
        outcome: IngestResult | DocumentProblem | str = next(outcomes) if isinstance(item, Document) else item
        if isinstance(outcome, dict):
            report.files.append(
                FileOutcome(path=str(file), status=outcome["status"], document_id=outcome["document_id"], chunks=outcome["chunks"])
            )
        else:
            report.files.append(FileOutcome(path=str(file), status="skipped", reason=str(outcome)))
        if progress:
            progress(str(file), report.files[-1].chunks)


def ingest_in_groups(
    storage: IngestStorage,
    docs: Sequence[Document | Mapping[str, Any]],
    *,
    admit: Admit | None = None,
    access: Access | None = None,
    prepared: Sequence[Prepared | None] | None = None,
) -> list[IngestResult | DocumentProblem]:
    """`Index.ingest_documents`: `ingest_many` over `WRITE_GROUP` documents at a time (a commit each, so
    readers wait one group's writes at most), parsed in worker processes first when there are many."""
    ready = iter(prepared) if prepared is not None else _in_workers(_prepared, docs, storage.chunk_settings)
    outcomes: list[IngestResult | DocumentProblem] = []
    for start in range(0, len(docs), WRITE_GROUP):  # the workers go on parsing while a group is written
        group = docs[start : start + WRITE_GROUP]
        outcomes += ingest_many(storage, group, admit=admit, access=access, prepared=[next(ready) for _ in group])
    return outcomes


def _prepared(doc: Document | Mapping[str, Any], settings: ChunkSettings | None, in_worker: bool) -> Prepared | None:
    """A document's `Prepared` when parsed in a worker; None here (`ingest_many` prepares it only if it changed)
    and where it fails (`ingest_many` prepares it again and reports why)."""
    if not in_worker:
        return None
    try:
        return prepare(as_document(doc), settings)
    except (UnsupportedDocument, ValueError):
        return None


def identity_of(file: Path, root: Path) -> str:
    """A file's `source_uri`: its path relative to the ingest root (its name when the root is the file itself),
    so a folder ingested from any working directory, by a relative or an absolute path, is the same documents."""
    if root.is_dir():  # absolute paths, links left as they are: a link inside the folder is its own document
        return Path(os.path.abspath(file)).relative_to(os.path.abspath(root)).as_posix()
    return file.name


PARALLEL_FROM_FILES = 64  # below this, starting worker processes costs more than it saves
WINDOW = 256  # files in flight: bounds memory on a huge folder
WRITE_GROUP = 64  # documents to a commit: a commit per document costs as much as its rows; readers wait ~20 ms at most
Item = TypeVar("Item")
Result = TypeVar("Result")


def _documents(
    files: list[Path], root: Path, fields: dict[str, Any], settings: ChunkSettings | None
) -> Iterator[tuple[Path, Document | str, Prepared | str | None]]:
    """Per file, in order: (file, its Document or why it is skipped, its `Prepared` or why it failed or None)."""
    for file, (item, prepared) in zip(files, _in_workers(_read, files, root, fields, settings), strict=True):
        yield file, item, prepared


def _in_workers(work: Callable[..., Result], items: Sequence[Item], *args: Any) -> Iterator[Result]:
    """`work(item, *args, in_worker)` for each item, in order: in worker processes, one per core but this one, a
    window of items ahead of what this process does with the results (it writes: a third of the work), when
    there are many; here otherwise, where `in_worker` is False and `work` may leave for later what is done only
    when needed (parsing a document that turns out unchanged). `work` must not need the index (a worker has no
    connection of its own)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = cores - 1  # this process writes: one core stays its own
    # fork, not spawn: spawn re-runs the caller's main module, which breaks any script without a __main__
    # guard. Forking is safe only without other threads (a server's background embedder): then, serial.
    if len(items) < PARALLEL_FROM_FILES or workers < 1 or sys.platform != "linux" or threading.active_count() > 1:
        for item in items:
            yield work(item, *args, False)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent, initargs=(os.getpid(),)
    ) as pool:

        def submitted(start: int) -> Iterator[Result]:
            window = items[start : start + WINDOW]
            return pool.map(work, window, *[[arg] * len(window) for arg in (*args, True)], chunksize=8)

        pending = submitted(0)
        for start in range(WINDOW, len(items) + WINDOW, WINDOW):
            following = submitted(start) if start < len(items) else iter(())  # queued before this window is used
            yield from pending
            pending = following


def _die_with_parent(parent: int) -> None:
    """In a parse worker: ask the kernel to kill it when its parent dies (PR_SET_PDEATHSIG). A forked worker
    holds both ends of the pool's pipes, so it never sees them close: after a `kill -9` of `sourcerer ingest` it
    would wait forever, holding the index's files open."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG (Linux; the pool is Linux-only)
    except (OSError, AttributeError):  # pragma: no cover - no prctl: the pool's own shutdown still applies
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(0)


def _read(
    file: Path, root: Path, fields: dict[str, Any], settings: ChunkSettings | None, in_worker: bool
) -> tuple[Document | str, Prepared | str | None]:
    """A file's Document (or why it is skipped) and, in a worker, its `Prepared` (or why it failed)."""
    try:
        reason = why_skip(file, root)
        if reason is not None:
            return reason, None
        identity = identity_of(file, root)
        if identity in fields["refused"]:
            return fields["refused"][identity], None
        given = {k: v for k, v in fields.items() if k not in ("placed", "refused")}
        document = Document(
            source_uri=identity, content=file.read_bytes(), **{**given, "scope": fields["placed"].get(identity, given["scope"])}
        )
    except (OSError, ValueError) as exc:
        return str(exc), None
    if not in_worker:
        return document, None
    try:
        return document, prepare(document, settings)
    except (UnsupportedDocument, ValueError) as exc:
        return document, str(exc)
