"""Ingesting many documents, a folder's files or a list: read and prepared in worker processes when there are
many, written in order, a group to a commit, through the one idempotent algorithm (`store.base.ingest_many`)."""

from __future__ import annotations

import os
import sys
import threading
import time
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


def _prepared(doc: Document | Mapping[str, Any], settings: ChunkSettings | None, ahead: bool) -> Prepared | None:
    """A document's `Prepared` when parsed ahead of its write (in batches); None otherwise (`ingest_many`
    prepares it only if it changed) and where it fails (`ingest_many` prepares it again and reports why)."""
    if not ahead:
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
BATCH = 8  # files to a claim: fewer round trips, and still small enough to share out evenly
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
    """`work(item, *args, ahead)` for each item, in order. When there are many: in batches, `ahead` True, by worker
    processes (one per core but this one) and by this process too when it would otherwise wait, as long as that
    leaves it finishing first (it also writes every result). Here only, otherwise, where `ahead` is False
    and `work` may leave for later what is done only when needed (parsing a document that turns out unchanged).
    `work` must not need the index (a worker has no connection of its own)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = cores - 1  # this process writes: one core stays its own
    # fork, not spawn: spawn re-runs the caller's main module, which breaks any script without a __main__
    # guard. Forking is safe only without other threads (a server's background embedder): then, serial.
    if len(items) < PARALLEL_FROM_FILES or workers < 1 or sys.platform != "linux" or threading.active_count() > 1:
        for item in items:
            yield work(item, *args, False)
        return
    with _Batches(work, items, args, workers) as batches:
        yield from batches


class _Batches:
    """Batches of items shared out through one counter: every process claims the next batch when it is free,
    so no worker waits for work to be handed to it. The workers are forked with the items and the work in
    their memory, so nothing is pickled on the way in (a `Document` took as long to unpickle as to parse); each
    sends its results back through its own pipe, where a full pipe holds it until this process reads."""

    def __init__(self, work: Callable[..., Any], items: Sequence[Any], args: tuple[Any, ...], workers: int) -> None:
        import multiprocessing

        self.work, self.items, self.args, self.workers = work, items, args, workers
        self.count = -(-len(items) // BATCH)
        context = multiprocessing.get_context("fork")
        self.claimed = context.Value("q", 0)  # the next batch no process has claimed
        self.turn = context.Value("q", 0, lock=False)  # the batch whose results this process waits for
        self.done: dict[int, list[Any]] = {}  # batch number -> its results, until their turn
        self.spent = {"preparing": 0.0, "prepared": 0, "writing": 0.0, "written": 0}  # this process's, as it goes
        self.pipes = []
        self.processes = []
        for _ in range(workers):
            reader, writer = context.Pipe(duplex=False)
            _widen(writer.fileno())
            process = context.Process(target=self._serve, args=(os.getpid(), writer), daemon=True)
            process.start()
            writer.close()  # the worker's end only: its pipe reads as closed when it exits
            self.pipes.append(reader)
            self.processes.append(process)

    def __enter__(self) -> _Batches:
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:  # on an early exit (an error, a closed generator) they may still work
            process.terminate()
        for process in self.processes:
            process.join()
        for pipe in self.pipes:
            pipe.close()

    def _claim(self, wait: bool = True) -> int | None:
        """The next batch, once it is within `WINDOW` items of this process's turn (bounding what waits in memory
        while one worker is slow on a huge file); None when every batch is claimed (or, without `wait`, when the
        next is too far ahead)."""
        while True:
            with self.claimed.get_lock():
                batch = int(self.claimed.value)
                if batch >= self.count:
                    return None
                if (batch - self.turn.value) * BATCH < WINDOW:
                    self.claimed.value = batch + 1
                    return batch
            if not wait:
                return None
            time.sleep(0.002)  # far enough ahead: let the results be written first

    def _run(self, batch: int) -> list[Any]:
        return [self.work(self.items[i], *self.args, True) for i in range(batch * BATCH, min((batch + 1) * BATCH, len(self.items)))]

    def _serve(self, parent: int, pipe: Any) -> None:
        """A worker: claim and run batches until none is left, sending each batch's results (or its error)."""
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
        _die_with_parent(parent)
        while (batch := self._claim()) is not None:
            try:
                results: list[Any] | BaseException = self._run(batch)
            except Exception as exc:  # a bug in `work`: raised again in the parent
                results = RuntimeError(f"a parse worker failed: {exc!r}")
            pipe.send((batch, results))
            if isinstance(results, BaseException):
                return

    def _receive(self, block: bool) -> None:
        """Keep the results the workers have sent (waiting up to a second for one, with `block`)."""
        from multiprocessing.connection import wait

        ready = wait(self.pipes, timeout=1.0 if block else 0)
        if block and not ready and any(p.exitcode not in (None, 0) for p in self.processes):
            # killed (out of memory, a signal) holding a batch: the others would wait for its turn forever
            raise RuntimeError("a parse worker died before sending its results")
        for pipe in ready:
            try:
                batch, results = pipe.recv()  # type: ignore[union-attr]
            except EOFError:  # that worker is gone; its batches are all sent unless it died
                self.pipes.remove(pipe)  # type: ignore[arg-type]
                continue
            if isinstance(results, BaseException):
                raise results
            self.done[batch] = results

    def _worth_taking(self) -> bool:
        """Whether this process, about to wait, should run a batch itself: only while that still leaves it
        finishing (writing every result, and running what it took) before the workers finish the rest. Taking
        one every time it would wait made it the last to finish, the workers idle."""
        spent = self.spent
        if not spent["prepared"]:
            return True  # nothing measured yet: one batch tells what it costs here
        per_item = spent["preparing"] / spent["prepared"]
        per_write = spent["writing"] / spent["written"] if spent["written"] else 0.0
        unclaimed = max(0, len(self.items) - self.claimed.value * BATCH)
        ours = (len(self.items) - spent["written"]) * per_write + BATCH * per_item
        return ours < (unclaimed - BATCH) * per_item / self.workers

    def __iter__(self) -> Iterator[Any]:
        for turn in range(self.count):
            self.turn.value = turn
            while turn not in self.done:
                self._receive(block=False)
                if turn in self.done:
                    break
                batch = self._claim(wait=False) if self._worth_taking() else None
                if batch is not None:
                    started = time.perf_counter()
                    self.done[batch] = self._run(batch)
                    self.spent["preparing"] += time.perf_counter() - started
                    self.spent["prepared"] += len(self.done[batch])
                elif not self.pipes:
                    raise RuntimeError("a parse worker died before sending its results")
                else:
                    self._receive(block=True)
            for result in self.done.pop(turn):
                paused = time.perf_counter()
                yield result
                self.spent["writing"] += time.perf_counter() - paused
                self.spent["written"] += 1


def _widen(pipe: int) -> None:
    """Let a worker's pipe hold about 1 MB of results (Linux's default for any user; 64 KB otherwise, about one
    batch): a worker then runs on while this process writes a group, instead of waiting to be read."""
    import fcntl

    try:
        fcntl.fcntl(pipe, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:  # a lower limit set by the administrator: the worker waits more, nothing else changes
        pass


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
    file: Path, root: Path, fields: dict[str, Any], settings: ChunkSettings | None, ahead: bool
) -> tuple[Document | str, Prepared | str | None]:
    """A file's Document (or why it is skipped) and, parsed ahead, its `Prepared` (or why it failed)."""
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
    if not ahead:
        return document, None
    try:
        return document, prepare(document, settings)
    except (UnsupportedDocument, ValueError) as exc:
        return document, str(exc)
