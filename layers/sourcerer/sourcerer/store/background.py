"""Deferred embedding: a daemon thread that fills the vectors of chunks ingested without them.

Why: ingest is 99% model time, and the model's ceiling on 2 cores is a few chunks per second. With deferral a
document is keyword-searchable the moment its chunks are written, and its vectors follow. Search fuses vector
results for the chunks that have them and reports `pending_embeddings` in its trace.

One embedder per index file at a time: `sourcerer serve` runs one worker process per core, and each starts
this thread, but only the one holding an exclusive `flock` on `<index>.embed.lock` embeds (two would compute
the same vectors twice and compete for the cores). The lock dies with its process, so another worker takes
over within `idle_s`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from typing import Any

log = logging.getLogger(__name__)


class BackgroundEmbedder:
    def __init__(self, index: Any, batch: int = 32, idle_s: float = 0.5) -> None:
        self.index, self.batch, self.idle_s = index, batch, idle_s
        self.wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> BackgroundEmbedder:
        self._thread = threading.Thread(target=self._run, name="sourcerer-embedder", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.wake.set()

    def _run(self) -> None:
        _yield_to_requests()
        lock_path = self.index.path.with_name(self.index.path.name + ".embed.lock")
        with open(lock_path, "a") as lock:
            while not self._stop.is_set():
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:  # another process embeds; take over if it goes away
                    self._stop.wait(self.idle_s * 4)
            while not self._stop.is_set():
                try:
                    done = self.index.embed_pending(self.batch, limit=self.batch)
                except Exception:  # noqa: BLE001 - a failed batch stays pending and is retried; serving goes on
                    log.exception("background embedding failed; retrying")
                    done = 0
                    self._stop.wait(5)
                if not done:
                    self.wake.wait(self.idle_s)
                    self.wake.clear()


def _yield_to_requests() -> None:
    """Lower this thread's scheduling priority (nice 10; on Linux a thread has its own): the background work
    then runs on what the requests leave of the cores, never beside them at equal share. The model runs on
    the calling thread (one OpenMP thread per server worker), so its inference is lowered too."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (OSError, AttributeError):  # not Linux, or not permitted: the same work at the same priority
        pass


class EmbedQueue:
    """The cloud half of deferred embedding: ingest (API or S3) sends the unit ids of chunks written without
    vectors to SQS, `UNITS_PER_MESSAGE` per message, and the embed function (`functions/ingest/embed.py`) calls
    `OpenSearchIndex.embed_units` for each message. The upload's ingest returns without waiting on Bedrock."""

    UNITS_PER_MESSAGE = 32

    def __init__(self, url: str, client: Any = None) -> None:
        self.url = url
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("sqs")
        return self._client

    def __call__(self, tenant: str, unit_ids: list[str]) -> None:
        import json

        bodies = [
            json.dumps({"tenant": tenant, "unit_ids": unit_ids[i : i + self.UNITS_PER_MESSAGE]})
            for i in range(0, len(unit_ids), self.UNITS_PER_MESSAGE)
        ]
        for start in range(0, len(bodies), 10):  # SendMessageBatch takes ten entries
            entries = [{"Id": str(n), "MessageBody": body} for n, body in enumerate(bodies[start : start + 10])]
            response = self.client.send_message_batch(QueueUrl=self.url, Entries=entries)
            if response.get("Failed"):
                from sourcerer.errors import ProviderError

                raise ProviderError(f"{len(response['Failed'])} embedding messages were not queued: {response['Failed'][0]}")
