"""The `Index` port on Amazon OpenSearch Service, OpenSearch Serverless or a self-managed cluster.

* One shared index (the pool model): every chunk carries `tenant`, `scope_ancestors` and `acl`, and every
  search carries the caller's filter — inside the BM25 `bool.filter` and inside the k-NN `filter`
  (efficient filtering), never as a post-filter.
* BM25 runs over `terms`, a whitespace-analysed field fed by the library's own tokenizer, so lexical
  matching is the same as in the SQLite index. The raw `text` is stored, not analysed.
* Hybrid search is one `_msearch`: the BM25 query, the k-NN query and the term statistics used to normalise
  BM25 scores into [0, 1]; results are fused in the library by the same RRF code as the SQLite index.
* Serverless (`?aws=aoss`): no custom document ids on vector collections and no refresh API, so chunk ids
  live in a `unit_id` field and writes become visible after the collection's refresh interval.

Why it is long: it is one adapter, and most of it is the exact request bodies it
sends (mapping, bulk lines, `_msearch` bodies, filters), kept beside the code that reads their answers so the
unit tests can check each body against the documented API.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import functools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcerer.errors import ConfigurationError, DocumentNotFound, ProviderError
from sourcerer.models import Segment
from sourcerer.retrieval.embedders import CachedEmbedder, Embedder, unpack_vectors
from sourcerer.retrieval.hybrid import SEMANTIC_FLOOR, fuse
from sourcerer.retrieval.keyword import K1, B
from sourcerer.retrieval.keyword import idf as bm25_idf
from sourcerer.scopes import Access, Groups, group_list, normalize_scope, scope_ancestors, validate_tenant
from sourcerer.store.base import (
    MAX_QUERY_CHARS,
    DocumentListing,
    Mode,
    MoveResult,
    Prepared,
    SearchTrace,
    Stored,
    WriteStatus,
    check_move,
    deferred_vectors,
    ingest_with,
    plan_search,
    search_result,
    synthesis_texts,
    tie_order,
)
from sourcerer.store.chunking import MAX_DOCUMENT_CHUNKS, ChunkSettings
from sourcerer.store.folders import ingest_folder, ingest_in_groups
from sourcerer.store.models import Document, Hit, IngestReport, SearchFilter, document_id_for, plane_of, unit_id_for
from sourcerer.store.originals import Originals, release_original
from sourcerer.store.retriever import index_retriever
from sourcerer.text import terms

if TYPE_CHECKING:
    import numpy as np

MAX_QUERY_TERMS = 64
DOCUMENT_FIELDS = [
    "document_id",
    "source_uri",
    "label",
    "scope",
    "acl",
    "metadata",
    "content_type",
    "content_hash",
    "created_at",
    "updated_at",
]
SOURCE_FIELDS = [
    "unit_id",
    "document_id",
    "source_uri",
    "label",
    "text",
    "locator",
    "receipt",
    "scope",
    "metadata",
    "content_hash",
    "ingested_at",
    "position",
    "sentences",
    "synthesis_vectors",
]


# set inside `OpenSearchIndex.one_refresh()`, per thread or task: the index object is shared by a server's requests
_ONE_REFRESH: contextvars.ContextVar[bool] = contextvars.ContextVar("sourcerer_one_refresh", default=False)


def _missing_index(error: Any) -> str | None:
    """The index named by an `index_not_found_exception` (a raised error or an `_msearch` item's error), else None."""
    info = getattr(error, "info", error)
    detail = info.get("error", info) if isinstance(info, Mapping) else None
    if isinstance(detail, Mapping) and detail.get("type") == "index_not_found_exception":
        return str(detail.get("index", "?"))
    return None


def _no_index(name: str) -> ConfigurationError:
    return ConfigurationError(f"OpenSearch index {name!r} does not exist: create it with `sourcerer opensearch init`")


def _translated(method: Callable[..., Any]) -> Callable[..., Any]:
    """Turn opensearch-py's transport and connection errors into `ProviderError` (a 503 at the API), and a
    missing index into a `ConfigurationError` that says how to create it."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            from opensearchpy.exceptions import OpenSearchException
        except ImportError:  # pragma: no cover
            return method(*args, **kwargs)
        try:
            return method(*args, **kwargs)
        except OpenSearchException as exc:
            missing = _missing_index(exc)
            if missing is not None:
                raise _no_index(missing) from exc
            raise ProviderError(f"OpenSearch request failed: {type(exc).__name__}: {str(exc)[:300]}") from exc

    return wrapper


KNN_ENGINES = ("faiss", "lucene")


def _engine(name: str) -> str:
    if name not in KNN_ENGINES:
        raise ConfigurationError(f"k-NN engine must be one of {', '.join(KNN_ENGINES)}, not {name!r}")
    return name


def index_body(dimension: int | None, *, shards: int = 1, replicas: int = 1, engine: str = "faiss") -> dict[str, Any]:
    """Settings and mapping of a Sourcerer index (also committed as infra/opensearch/index.json).

    `engine` is the k-NN engine of the vector field: `faiss` (the default, and the only one on Serverless) or
    `lucene`, pure Java, for a node without the k-NN native libraries (the embedded test node): faiss there
    fails on the first segment it builds. Both run a `knn` query's `filter` inside the graph search."""
    _engine(engine)
    properties: dict[str, Any] = {
        "unit_id": {"type": "keyword"},
        "document_id": {"type": "keyword"},
        "tenant": {"type": "keyword"},
        "scope": {"type": "keyword"},
        "scope_ancestors": {"type": "keyword"},
        "acl": {"type": "keyword"},
        "public": {"type": "boolean"},
        "source_uri": {"type": "keyword"},
        "label": {"type": "keyword"},
        "title": {"type": "keyword", "index": False},  # embedded with the chunk: a deferred embedding needs it
        "position": {"type": "integer"},
        "text": {"type": "text", "index": False},
        "terms": {"type": "text", "analyzer": "sourcerer_terms", "norms": True, "similarity": "sourcerer_bm25"},
        "locator": {"type": "object", "enabled": False},
        "sentences": {"type": "object", "enabled": False},
        # the chunk's and its sentences' vectors for synthesis (float16, base64): stored, never indexed
        "synthesis_vectors": {"type": "binary"},
        "metadata": {"type": "object", "enabled": False},
        "receipt": {"type": "keyword"},
        "content_hash": {"type": "keyword"},
        "ingested_at": {"type": "date"},
        # what a search's filters test: the document's type, the chunk's plane (from its locator), metadata as
        # `key=json value` keywords, and the document's first and latest ingest (epoch seconds)
        "content_type": {"type": "keyword"},
        "plane": {"type": "keyword"},
        "meta": {"type": "keyword"},
        "created_at": {"type": "double"},
        "updated_at": {"type": "double"},
        # embedded, but to the zero vector, which cosine k-NN rejects: searchable by keyword, never pending
        "vectorless": {"type": "boolean"},
    }
    settings: dict[str, Any] = {
        "index": {"number_of_shards": shards, "number_of_replicas": replicas},
        "analysis": {"analyzer": {"sourcerer_terms": {"type": "custom", "tokenizer": "whitespace"}}},
        # the library's BM25 parameters (measured best on SciFact), so keyword scores mean the same here as in
        # the SQLite index; OpenSearch's default is k1 = 1.2, b = 0.75
        "similarity": {"sourcerer_bm25": {"type": "BM25", "k1": K1, "b": B}},
    }
    if dimension:
        settings["index"]["knn"] = True
        properties["embedding"] = {
            "type": "knn_vector",
            "dimension": dimension,
            "space_type": "cosinesimil",
            "method": {"name": "hnsw", "engine": engine, "parameters": {"m": 16, "ef_construction": 128}},
        }
    return {"settings": settings, "mappings": {"dynamic": "strict", "properties": properties}}


def _document(tenant: str, document_id: str) -> list[dict[str, Any]]:
    """The filter that selects one document's chunks."""
    return [{"term": {"tenant": tenant}}, {"term": {"document_id": document_id}}]


def access_filter(tenant: str, scope: str | None, groups: Groups) -> list[dict[str, Any]]:
    """The filter every search carries: tenant, scope subtree (client-computed ancestors), ACL groups."""
    clauses: list[dict[str, Any]] = [{"term": {"tenant": validate_tenant(tenant)}}]
    if scope is not None:
        clauses.append({"term": {"scope_ancestors": normalize_scope(scope, tenant)}})
    groups = group_list(groups)
    if groups is None:  # every group: an administrator
        return clauses
    visible: list[dict[str, Any]] = [{"term": {"public": True}}]
    if groups:
        visible.append({"terms": {"acl": groups}})
    clauses.append({"bool": {"should": visible, "minimum_should_match": 1}})
    return clauses


def meta_terms(metadata: Mapping[str, Any]) -> list[str]:
    """Scalar metadata as `key=json value` keywords: what a `metadata` filter matches exactly."""
    return [f"{k}={json.dumps(v)}" for k, v in sorted(metadata.items()) if isinstance(v, (str, int, float, bool))]


def asked_filter(only: SearchFilter | None) -> list[dict[str, Any]]:
    """The clauses of a `SearchFilter` (see the fields in `index_body`)."""
    if only is None or only.empty:
        return []
    clauses: list[dict[str, Any]] = []
    if only.kinds() is not None:
        clauses.append({"terms": {"plane": sorted(set(only.planes or ()))}})
    if only.content_types is not None:
        clauses.append({"terms": {"content_type": list(only.content_types)}})
    if only.source_uri_prefix is not None:
        clauses.append({"prefix": {"source_uri": only.source_uri_prefix}})
    if only.document_ids is not None:
        clauses.append({"terms": {"document_id": list(only.document_ids)}})
    clauses += [{"term": {"meta": term}} for term in meta_terms(only.metadata or {})]
    bounds = {k: v for k, v in (("gte", only.created_after), ("lt", only.created_before)) if v is not None}
    if bounds:
        clauses.append({"range": {"created_at": bounds}})
    return clauses


class OpenSearchIndex:
    """The `Index` port on OpenSearch (see the module docstring). Constructing it connects nowhere."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        index: str,
        use_ssl: bool = False,
        http_auth: tuple[str, str] | None = None,
        aws_service: str | None = None,
        region: str | None = None,
        embedder: Embedder | CachedEmbedder | None = None,
        chunk_settings: ChunkSettings | None = None,
        client: Any = None,
        bulk_retries: int = 3,
        backoff_s: float = 1.0,
        defer_embedding: bool = False,
        on_pending: Callable[[str, list[str]], None] | None = None,
        knn_engine: str = "faiss",
        originals: Originals | None = None,
    ) -> None:
        if aws_service not in (None, "es", "aoss"):
            raise ConfigurationError("aws must be 'es' (OpenSearch Service domain) or 'aoss' (Serverless)")
        self.knn_engine = _engine(knn_engine)
        self.host, self.port, self.index, self.use_ssl = host, port, index, use_ssl
        self.http_auth, self.aws_service, self.region = http_auth, aws_service, region
        self.serverless = aws_service == "aoss"
        self.embedder = embedder
        self.chunk_settings = chunk_settings
        self.originals = originals  # the bytes each document came from (store/originals.py), or None
        self.bulk_retries, self.backoff_s = bulk_retries, backoff_s
        self._client = client
        # deferred embedding (the cloud split): ingest writes chunks without vectors and hands their unit ids to
        # `on_pending` (an SQS message per batch, see `sourcerer.store.background.EmbedQueue`); `embed_units`,
        # run by the embed function, fills them in
        self.defer_embedding = defer_embedding
        self.on_pending = on_pending
        self.list_page = 1000  # documents per page of `list_documents`

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
            except ImportError as exc:  # pragma: no cover
                raise ConfigurationError("OpenSearch needs opensearch-py: pip install 'sourcerer-answers[opensearch]'") from exc
            auth: Any = self.http_auth
            if self.aws_service:
                import boto3

                session = boto3.Session()
                credentials = session.get_credentials()
                if credentials is None:
                    raise ConfigurationError("no AWS credentials found for SigV4 (default boto3 chain)")
                auth = Urllib3AWSV4SignerAuth(credentials, self.region or session.region_name or "us-east-1", self.aws_service)
            self._client = OpenSearch(
                hosts=[{"host": self.host, "port": self.port}],
                http_auth=auth,
                use_ssl=self.use_ssl,
                verify_certs=self.use_ssl,
                connection_class=Urllib3HttpConnection,
                http_compress=False,  # gzip before signing breaks SigV4 on Serverless
                timeout=30,
                max_retries=3,
                retry_on_timeout=True,
            )
        return self._client

    def _dimension(self) -> int | None:
        """The embedder's vector size, found by embedding one probe text."""
        if self.embedder is None:
            return None
        return len(self.embedder.embed(["dimension probe"], "passage")[0])

    # --- index management -----------------------------------------------------------------------------

    @_translated
    def init(self, shards: int = 1, replicas: int = 1) -> dict[str, Any]:
        """Create the index, or add new fields to an existing one (`sourcerer opensearch init`). `shards` and
        `replicas` apply when the index is created on a managed domain; Serverless manages both itself."""
        dimension = self._dimension()
        body = index_body(dimension, shards=shards, replicas=replicas, engine=self.knn_engine)
        if self.client.indices.exists(index=self.index):
            current = self.client.indices.get_mapping(index=self.index)
            props = next(iter(current.values()))["mappings"].get("properties", {})
            if "embedding" in body["mappings"]["properties"] and "embedding" not in props:
                raise ConfigurationError(
                    f"index {self.index} was created without vectors (keyword only), and OpenSearch cannot add a "
                    "k-NN field to it (index.knn is fixed at creation): use a new index for an embedder"
                )
            if "embedding" in props and body["mappings"]["properties"].get("embedding", {}).get("dimension") != props[
                "embedding"
            ].get("dimension"):
                raise ConfigurationError(
                    f"index {self.index} holds {props['embedding'].get('dimension')}-d vectors; the configured embedder makes "
                    f"{dimension}-d ones: use another index or the same embedding model"
                )
            # only new fields: OpenSearch cannot change an existing field's parameters
            added = {name: field for name, field in body["mappings"]["properties"].items() if name not in props}
            if added:
                self.client.indices.put_mapping(index=self.index, body={"properties": added})
            result: dict[str, Any] = {"index": self.index, "action": "updated", "added": sorted(added)}
            if props.get("terms", {}).get("similarity") != "sourcerer_bm25":
                result["warning"] = (
                    "this index scores keywords with OpenSearch's default BM25 (k1 1.2, b 0.75), not the library's: "
                    "keyword scores differ from the SQLite index's until it is re-created and re-ingested"
                )
            return result
        self.client.indices.create(index=self.index, body=body)
        return {"index": self.index, "action": "created"}

    # --- writing -----------------------------------------------------------------------------------

    def _refresh(self, *, now: bool = False) -> dict[str, Any]:
        """How a write becomes visible: it waits for the next refresh (a delete forces one), so a search right
        after it sees it. Serverless has no refresh API; inside `one_refresh()` nothing waits until the end."""
        if self.serverless or _ONE_REFRESH.get():
            return {}
        return {"refresh": True} if now else {"refresh": "wait_for"}

    @contextlib.contextmanager
    def one_refresh(self) -> Iterator[None]:
        """Many writes, one refresh at the end: each write waiting for the next refresh (1 s by default) makes a
        folder ingest about one document per second. What is written inside becomes visible when it ends."""
        token = _ONE_REFRESH.set(True)
        try:
            yield
        finally:
            _ONE_REFRESH.reset(token)
            if not self.serverless:
                self.client.indices.refresh(index=self.index)

    def _existing(self, tenant: str, document_id: str) -> dict[str, Any] | None:
        """content_hash, scope, acl and source_uri of a stored document (its newest version), or None."""
        response = self.client.search(
            index=self.index,
            body={
                "size": 1,
                "_source": ["content_hash", "scope", "acl", "source_uri", "created_at", "content_type", "ingested_at"],
                "query": {"bool": {"filter": _document(tenant, document_id)}},
                "sort": [{"ingested_at": "desc"}],
            },
        )
        hits = response["hits"]["hits"]
        return hits[0]["_source"] if hits else None

    def bulk_lines(
        self,
        document: Document,
        prepared: Any,
        vectors: Any,
        synthesis: list[bytes | None] | None = None,
        created_at: float | None = None,
    ) -> list[dict[str, Any]]:
        moment = datetime.now(timezone.utc)
        now, epoch = moment.isoformat(), moment.timestamp()
        lines: list[dict[str, Any]] = []
        synthesis = synthesis or [None] * len(prepared.chunks)
        for i, chunk in enumerate(prepared.chunks):
            action: dict[str, Any] = {"_index": self.index}
            if not self.serverless:
                # Versions replacing one document at once share the ids of their identical chunks: the write stamped
                # later must win every one of them, whichever request lands last (see `_bulk`).
                action.update(_id=chunk.unit_id, version=int(epoch * 1_000_000), version_type="external")
            source = {
                "unit_id": chunk.unit_id,
                "document_id": document.document_id,
                "tenant": document.tenant,
                "scope": document.scope,
                "scope_ancestors": scope_ancestors(document.scope or document.tenant),
                "acl": document.acl,
                "public": not document.acl,
                "source_uri": document.source_uri,
                "label": chunk.label,
                "title": prepared.title,
                "position": chunk.position,
                "text": chunk.text,
                "terms": " ".join(prepared.terms[i]),
                "locator": chunk.locator,
                "sentences": chunk.sentences,
                "metadata": document.metadata,
                "receipt": chunk.receipt,
                "content_hash": prepared.content_hash,
                "ingested_at": now,
                "content_type": prepared.content_type,
                "plane": plane_of(chunk.locator["kind"]),
                "meta": meta_terms(document.metadata),
                "created_at": created_at if created_at is not None else epoch,
                "updated_at": epoch,
            }
            if vectors is not None:
                source.update(_vector_fields(vectors[i]))
            if synthesis[i] is not None:
                source["synthesis_vectors"] = base64.b64encode(synthesis[i]).decode("ascii")
            lines += [{"index": action}, source]
        return lines

    def _bulk(self, lines: list[dict[str, Any]]) -> None:
        """Send a bulk request; retry the items rejected with 429, fail loudly on any other item error."""
        pending = lines
        for attempt in range(self.bulk_retries + 1):
            response = self.client.bulk(body=pending, **self._refresh())
            if not response.get("errors"):
                return
            retry: list[dict[str, Any]] = []
            for position, item in enumerate(response["items"]):
                result = next(iter(item.values()))
                status = result.get("status", 500)
                if status == 429:
                    retry += pending[2 * position : 2 * position + 2]
                elif status == 409:
                    continue  # a version written later already holds this chunk: it stays (see `bulk_lines`)
                elif status >= 300:
                    raise ProviderError(f"OpenSearch rejected a chunk: {result.get('error')}")
            if not retry:
                return
            pending = retry
            if attempt < self.bulk_retries:
                time.sleep(self.backoff_s * 2**attempt)
        raise ProviderError(f"OpenSearch kept rejecting {len(pending) // 2} chunks with 429 (too many requests)")

    ingest_document = _translated(ingest_with)  # the one algorithm (store/base.py) over the primitives below
    ingest_documents = _translated(ingest_in_groups)

    def write_batch(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()  # no transactions: each document's bulk request is its write

    # --- the storage primitives `ingest_with` runs on (OpenSearch has no transactions: the write rule is checked
    # on the stored version just before the write) -------------------------------------------------------------

    def stored_document(self, tenant: str, document_id: str) -> Stored | None:
        existing = self._existing(tenant, document_id)
        if existing is None:
            return None
        return Stored(
            content_hash=existing["content_hash"],
            scope=existing["scope"],
            acl=existing["acl"],
            created_at=existing.get("created_at"),
            source_uri=existing.get("source_uri"),
            content_type=existing.get("content_type"),
        )

    def holds_content(self, tenant: str, content_hash: str) -> bool:
        query = {"query": {"bool": {"filter": [{"term": {"tenant": tenant}}, {"term": {"content_hash": content_hash}}]}}}
        return int(self.client.count(index=self.index, body=query)["count"]) > 0

    def keep_unchanged(self, document: Document) -> int:
        assert document.document_id is not None
        self._queue_pending(document.tenant, document.document_id)  # a retried ingest re-queues what still waits
        query = {"query": {"bool": {"filter": _document(document.tenant, document.document_id)}}}
        return int(self.client.count(index=self.index, body=query)["count"])

    def write_document(
        self,
        document: Document,
        prepared: Prepared,
        vectors: np.ndarray | None,
        synthesis: list[bytes | None],
        access: Access | None,
        stored: Stored | None,
    ) -> tuple[WriteStatus, int]:
        assert document.document_id is not None
        created = stored.created_at if stored is not None else None
        lines = self.bulk_lines(document, prepared, vectors, synthesis, created_at=created)
        written_at = lines[1]["ingested_at"] if lines else datetime.now(timezone.utc).isoformat()
        self._bulk(lines)
        if self.deferred and self.on_pending is not None:
            self.on_pending(document.tenant, [c.unit_id for c in prepared.chunks])
        if stored is not None:
            # new chunks first, then the old ones go: nothing is lost if this fails, and search hides the
            # older version of a document while both are visible (see `_latest_only`). Only versions written
            # before this one go: two writers replacing the same document at once would otherwise each delete
            # the other's chunks. A chunk rewritten meanwhile (a version conflict) belongs to a newer write: kept.
            # Whichever writer finishes last removes everything older than the newest version it sees, its own
            # chunks too when a later version overtook it (a writer that went first cannot know of later ones).
            newest = self._existing(document.tenant, document.document_id) or {}
            cutoff, keep = written_at, prepared.content_hash
            if str(newest.get("ingested_at") or "") > written_at:
                cutoff, keep = str(newest["ingested_at"]), str(newest.get("content_hash"))
            older = [{"range": {"ingested_at": {"lt": cutoff}}}]
            self.client.delete_by_query(
                index=self.index,
                body={
                    "query": {
                        "bool": {
                            "filter": _document(document.tenant, document.document_id) + older,
                            "must_not": [{"term": {"content_hash": keep}}],
                        }
                    }
                },
                conflicts="proceed",
                **self._refresh(now=True),
            )
        return ("replaced" if stored is not None else "ingested"), len(prepared.chunks)

    @property
    def deferred(self) -> bool:
        return self.defer_embedding and self.embedder is not None

    def _pending_query(self, tenant: str, filters: list[dict[str, Any]]) -> dict[str, Any]:
        waiting = [{"exists": {"field": "embedding"}}, {"term": {"vectorless": True}}]
        return {"bool": {"filter": [{"term": {"tenant": tenant}}, *filters], "must_not": waiting}}

    def _queue_pending(self, tenant: str, document_id: str) -> None:
        if not self.deferred or self.on_pending is None:
            return
        waiting = self.client.search(
            index=self.index,
            body={
                "size": MAX_DOCUMENT_CHUNKS,
                "_source": ["unit_id"],
                "query": self._pending_query(tenant, [{"term": {"document_id": document_id}}]),
            },
        )["hits"]["hits"]
        if waiting:
            self.on_pending(tenant, sorted({h["_source"]["unit_id"] for h in waiting}))

    @_translated
    def embed_units(self, tenant: str, unit_ids: list[str]) -> int:
        """Compute the vectors of these chunks if they still have none (the embed function's work): rewrite them
        with their vectors, then delete the copies without (Serverless cannot update a document in place).
        Idempotent: a redelivered message finds nothing left to do. Returns how many chunks it embedded."""
        if self.embedder is None or not unit_ids:
            return 0
        hits = self.client.search(
            index=self.index,
            body={"size": len(unit_ids), "query": self._pending_query(tenant, [{"terms": {"unit_id": unit_ids}}])},
        )["hits"]["hits"]
        if not hits:
            return 0
        sources = [h["_source"] for h in hits]
        vectors, synthesis = deferred_vectors(
            self.embedder, [(src["text"], src.get("sentences") or [], src.get("title", "")) for src in sources]
        )
        lines: list[dict[str, Any]] = []
        for src, vector, packed in zip(sources, vectors, synthesis, strict=True):
            action: dict[str, Any] = {"_index": self.index}
            if not self.serverless:
                action["_id"] = src["unit_id"]
            filled = {**src, **_vector_fields(vector)}
            if packed is not None:
                filled["synthesis_vectors"] = base64.b64encode(packed).decode("ascii")
            lines += [{"index": action}, filled]
        self._bulk(lines)
        if self.serverless:  # the vectorless copies go; on a domain the same _id was overwritten
            self.client.delete_by_query(
                index=self.index,
                body={"query": self._pending_query(tenant, [{"terms": {"unit_id": [s["unit_id"] for s in sources]}}])},
            )
        return len(sources)

    @_translated
    def delete_document(self, tenant: str, document_id: str, *, access: Access | None = None) -> bool:
        existing = self._existing(tenant, document_id)
        if existing is None or (access is not None and not access.may_touch(existing["scope"], existing["acl"])):
            return False
        response = self.client.delete_by_query(
            index=self.index,
            body={"query": {"bool": {"filter": _document(tenant, document_id)}}},
            conflicts="proceed",  # a chunk re-ingested meanwhile is a newer write: it stays
            **self._refresh(now=True),
        )
        release_original(self, tenant, existing["content_hash"])
        return response.get("deleted", 0) > 0

    @_translated
    def move_document(self, tenant: str, document_id: str, scope: str, *, access: Access | None = None) -> MoveResult:
        target = normalize_scope(scope, tenant)
        existing = self._existing(tenant, document_id)
        if existing is None or (access is not None and not access.may_touch(existing["scope"], existing["acl"])):
            raise DocumentNotFound(f"no document {document_id} in this caller's scopes")
        moved_id = document_id_for(tenant, target, existing["source_uri"])
        if moved_id != document_id:
            occupant = self._existing(tenant, moved_id)
            check_move(access, target, occupant and (occupant["scope"], occupant["acl"]))
            # Serverless runs no scripts (no update_by_query): the chunks are re-written with their stored
            # vectors under the new identity, then the old identity's chunks are deleted
            chunks = self.client.search(
                index=self.index,
                body={"size": MAX_DOCUMENT_CHUNKS, "query": {"bool": {"filter": _document(tenant, document_id)}}},
            )["hits"]["hits"]
            lines: list[dict[str, Any]] = []
            for chunk in chunks:
                old = chunk["_source"]
                unit_id = unit_id_for(tenant, moved_id, old["position"], old["text"])  # as if ingested there
                action: dict[str, Any] = {"_index": self.index}
                if not self.serverless:
                    action["_id"] = unit_id
                source = {
                    **old,
                    "unit_id": unit_id,
                    "document_id": moved_id,
                    "scope": target,
                    "scope_ancestors": scope_ancestors(target),
                    "updated_at": time.time(),  # a move is a write: the tenant's version (an answer cache key) moves
                }
                lines += [{"index": action}, source]
            if lines:
                self._bulk(lines)
            self.client.delete_by_query(
                index=self.index,
                body={"query": {"bool": {"filter": _document(tenant, document_id)}}},
                conflicts="proceed",
                **self._refresh(now=True),
            )
        return {"document_id": moved_id, "previous_document_id": document_id, "scope": target, "status": "moved"}

    def ingest_path(
        self,
        path: str | Path,
        *,
        tenant: str = "local",
        scope: str | None = None,
        acl: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        progress: Callable[[str, int], None] | None = None,
        placed: Mapping[str, str] | None = None,
        refused: Mapping[str, str] | None = None,
    ) -> IngestReport:
        with self.one_refresh():
            return ingest_folder(
                self,
                path,
                tenant=tenant,
                scope=scope,
                acl=acl,
                metadata=metadata,
                progress=progress,
                placed=placed,
                refused=refused,
            )

    # --- reading -----------------------------------------------------------------------------------

    def search_bodies(
        self, query: str, vector: list[float] | None, filters: list[dict[str, Any]], depth: int
    ) -> list[dict[str, Any]]:
        """The `_msearch` lines: BM25, k-NN (when a vector is given) and the term statistics for normalising."""
        query_terms = list(dict.fromkeys(terms(query[:MAX_QUERY_CHARS])))[:MAX_QUERY_TERMS]
        lines: list[dict[str, Any]] = []
        if query_terms:
            lines += [
                {"index": self.index},
                {
                    "size": depth,
                    "_source": SOURCE_FIELDS,
                    "query": {"bool": {"must": {"match": {"terms": {"query": " ".join(query_terms)}}}, "filter": filters}},
                    "sort": [{"_score": "desc"}, {"unit_id": "asc"}],  # ties at the cut by unit id, as SQLite does
                },
                {"index": self.index},
                {
                    "size": 0,
                    "track_total_hits": True,
                    "query": {"match_all": {}},
                    "aggs": {f"t{i}": {"filter": {"term": {"terms": t}}} for i, t in enumerate(query_terms)},
                },
            ]
        if vector is not None:
            lines += [
                {"index": self.index},
                {
                    "size": depth,
                    "_source": SOURCE_FIELDS,
                    "query": {"knn": {"embedding": {"vector": vector, "k": depth, "filter": {"bool": {"filter": filters}}}}},
                },
            ]
        return lines

    @_translated
    @search_result
    def search(
        self,
        query: str,
        *,
        tenant: str,
        scope: str | None = None,
        groups: Groups = None,
        k: int = 10,
        mode: Mode = "hybrid",
        only: SearchFilter | None = None,
        semantic_floor: float = SEMANTIC_FLOOR,
    ) -> tuple[list[Hit], SearchTrace]:
        filters = access_filter(tenant, scope, groups) + asked_filter(only)
        planned, trace = plan_search(query, k, mode, self.embedder is not None, only)
        if planned is None:
            return [], trace
        mode = planned  # type: ignore[assignment]
        vector = None
        if mode != "keyword":
            started = time.perf_counter()
            with trace.stage("embed"):
                vector = [float(x) for x in self.embedder.embed([query[:MAX_QUERY_CHARS]], "query")[0]]  # type: ignore[union-attr]
            trace["query_embedding_ms"] = round((time.perf_counter() - started) * 1000, 3)
        depth = k if mode != "hybrid" else max(50, 4 * k)
        lines = self.search_bodies(query, vector if mode != "keyword" else None, filters, depth)
        if mode == "semantic":
            lines = lines[-2:]
        if not lines:
            return [], trace
        with trace.stage("keyword" if mode == "keyword" else "vector" if mode == "semantic" else "keyword+vector"):
            responses = self.client.msearch(body=lines)["responses"]  # one round trip: BM25 and k-NN together
        for response in responses:
            if "error" in response:  # _msearch reports failures per item with HTTP 200
                missing = _missing_index(response)
                if missing is not None:
                    raise _no_index(missing)
                raise ProviderError(f"OpenSearch search failed: {str(response['error'])[:300]}")
        sources: dict[str, dict[str, Any]] = {}
        keyword: dict[str, float] = {}
        semantic: dict[str, float] = {}
        if mode != "semantic" and len(responses) >= 2:
            stats = responses[1]
            total = stats["hits"]["total"]["value"]
            counts = [stats["aggregations"][f"t{i}"]["doc_count"] for i in range(len(stats["aggregations"]))]
            # OpenSearch scores BM25 with Lucene's LegacyBM25Similarity, idf * tf * (k1 + 1) / (tf + k1 * norm)
            # (measured on 2.19: plain Lucene 9 drops the k1 + 1), so a term present once at average length
            # scores its idf. Normalise by that over every query term, as the SQLite index does.
            ceiling = sum(bm25_idf(total, n) for n in counts)
            for hit in responses[0]["hits"]["hits"]:
                sources[hit["_source"]["unit_id"]] = hit["_source"]
                keyword[hit["_source"]["unit_id"]] = min(1.0, hit["_score"] / ceiling) if ceiling > 0 else 0.0
        if mode != "keyword":
            for hit in responses[-1]["hits"]["hits"]:
                sources.setdefault(hit["_source"]["unit_id"], hit["_source"])
                cosine = 2 * float(hit["_score"]) - 1  # cosinesimil scores are (1 + cos) / 2
                semantic[hit["_source"]["unit_id"]] = self.embedder.calibrate(cosine)  # type: ignore[union-attr]
        if mode == "keyword":
            ranked = sorted(keyword.items(), key=lambda kv: tie_order(*kv))  # ties by unit id, as in the SQLite index
        elif mode == "semantic":
            ranked = sorted(((u, s) for u, s in semantic.items() if s > 0), key=lambda kv: (-kv[1], kv[0]))
        else:
            with trace.stage("fuse"):
                ranked = fuse(keyword, semantic, len(sources), semantic_floor=semantic_floor)
        ranked = _latest_only(ranked, sources)[:k]
        return [_hit(sources[u], s) for u, s in ranked], trace

    @_translated
    def version(self, tenant: str) -> str:
        response = self.client.search(
            index=self.index,
            body={
                "size": 0,
                "track_total_hits": True,
                "query": {"bool": {"filter": [{"term": {"tenant": validate_tenant(tenant)}}]}},
                "aggs": {
                    "documents": {"cardinality": {"field": "document_id"}},
                    "latest": {"max": {"field": "updated_at"}},
                },
            },
        )
        aggs = response.get("aggregations", {})
        return ":".join(
            str(x)
            for x in (
                response["hits"]["total"]["value"],
                aggs.get("documents", {}).get("value"),
                aggs.get("latest", {}).get("value"),
                self.pending_count(tenant),
            )
        )

    def pending_count(self, tenant: str) -> int:
        """Chunks of the tenant still without vectors (deferred embedding)."""
        if self.embedder is None:
            return 0
        return int(self.client.count(index=self.index, body={"query": self._pending_query(tenant, [])})["count"])

    @_translated
    def tenants(self) -> list[str]:
        """Every tenant holding a chunk, paged through a composite aggregation on the tenant field."""
        out: list[str] = []
        after: dict[str, Any] | None = None
        while True:
            page: dict[str, Any] = {"size": self.list_page, "sources": [{"tenant": {"terms": {"field": "tenant"}}}]}
            if after is not None:
                page["after"] = after
            response = self.client.search(index=self.index, body={"size": 0, "aggs": {"tenants": {"composite": page}}})
            buckets = response.get("aggregations", {}).get("tenants", {})
            out.extend(b["key"]["tenant"] for b in buckets.get("buckets", []))
            after = buckets.get("after_key")
            if not buckets.get("buckets") or after is None:
                return sorted(out)

    @_translated
    def list_documents(self, tenant: str, scope: str | None = None) -> list[DocumentListing]:
        """Every document of the tenant (under `scope`), paged through a composite aggregation: one bucket per
        document with its chunk count and its newest chunk's fields, however many documents there are."""
        filters = [{"term": {"tenant": validate_tenant(tenant)}}]
        if scope is not None:
            filters.append({"term": {"scope_ancestors": normalize_scope(scope, tenant)}})
        newest = {"top_hits": {"size": 1, "_source": [*DOCUMENT_FIELDS, "ingested_at"], "sort": [{"ingested_at": "desc"}]}}
        out: list[dict[str, Any]] = []
        after: dict[str, Any] | None = None
        while True:
            page: dict[str, Any] = {"size": self.list_page, "sources": [{"document_id": {"terms": {"field": "document_id"}}}]}
            if after is not None:
                page["after"] = after
            response = self.client.search(
                index=self.index,
                body={
                    "size": 0,
                    "query": {"bool": {"filter": filters}},
                    "aggs": {"documents": {"composite": page, "aggs": {"newest": newest}}},
                },
            )
            documents = response.get("aggregations", {}).get("documents", {})
            for bucket in documents.get("buckets", []):
                src = dict(bucket["newest"]["hits"]["hits"][0]["_source"])
                # the same fields as the SQLite index; chunks written before these fields existed fall back on ingested_at
                written = datetime.fromisoformat(str(src.pop("ingested_at"))).timestamp() if src.get("ingested_at") else 0.0
                src.setdefault("created_at", written)
                src.setdefault("updated_at", written)
                src.setdefault("content_type", None)
                src["chunks"] = bucket["doc_count"]
                out.append(src)
            after = documents.get("after_key")
            if not documents.get("buckets") or after is None:
                break
        return sorted(out, key=lambda d: d["source_uri"])

    @_translated
    def get_chunks(self, tenant: str, ids: Iterable[str]) -> list[Hit]:
        ids = list(ids)
        if not ids:
            return []
        response = self.client.search(
            index=self.index,
            body={
                "size": len(ids),
                "_source": SOURCE_FIELDS,
                "query": {"bool": {"filter": [{"term": {"tenant": validate_tenant(tenant)}}, {"terms": {"unit_id": ids}}]}},
            },
        )
        by_id = {h["_source"]["unit_id"]: _hit(h["_source"], 0.0) for h in response["hits"]["hits"]}
        return [by_id[u] for u in ids if u in by_id]

    @_translated
    def document_chunks(self, tenant: str, document_id: str) -> list[Hit]:
        response = self.client.search(
            index=self.index,
            body={
                "size": MAX_DOCUMENT_CHUNKS,
                "_source": SOURCE_FIELDS,
                "query": {
                    "bool": {"filter": [{"term": {"tenant": validate_tenant(tenant)}}, {"term": {"document_id": document_id}}]}
                },
                "sort": [{"position": "asc"}],
            },
        )
        sources = {h["_source"]["unit_id"]: h["_source"] for h in response["hits"]["hits"]}
        # while a replacement is being written, old and new chunks can both be visible: keep the newest
        current = _latest_only([(u, 0.0) for u in sources], sources)
        return sorted((_hit(sources[u], 0.0) for u, _ in current), key=lambda h: h.position)

    retriever = index_retriever  # a retriever for `ask()` bound to a tenant, scope, groups and filter

    @_translated
    def stats(self) -> dict[str, Any]:
        count = self.client.count(index=self.index)["count"]
        return {
            "backend": "opensearch",
            "index": self.index,
            "host": self.host,
            "serverless": self.serverless,
            "chunks": count,
            "embed_model": self.embedder.model_id if self.embedder else "none",
        }


def _vector_fields(vector: Any) -> dict[str, Any]:
    """The vector's fields of a chunk. Cosine k-NN rejects the zero vector (it has no direction), so such a
    chunk is stored without one and marked, and a search finds it by its words only, as SQLite scores it 0."""
    values = [float(x) for x in vector]
    return {"embedding": values} if any(values) else {"vectorless": True}


def _latest_only(ranked: list[tuple[str, float]], sources: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, float]]:
    """While a replaced document's old chunks are still visible (between refreshes), keep only its newest version."""
    newest: dict[str, tuple[str, str]] = {}
    for unit, _ in ranked:
        src = sources[unit]
        stamp = (str(src.get("ingested_at", "")), str(src.get("content_hash", "")))
        if src["document_id"] not in newest or stamp > newest[src["document_id"]]:
            newest[src["document_id"]] = stamp
    return [
        (u, s)
        for u, s in ranked
        if (str(sources[u].get("ingested_at", "")), str(sources[u].get("content_hash", ""))) == newest[sources[u]["document_id"]]
    ]


def _hit(source: Mapping[str, Any], score: float) -> Hit:
    segments = [Segment.model_validate(seg) for seg in source.get("sentences") or []]
    packed = source.get("synthesis_vectors")
    return Hit(
        unit_id=source["unit_id"],
        document_id=source["document_id"],
        source_uri=source["source_uri"],
        label=source["label"],
        text=source["text"],
        score=round(min(1.0, max(0.0, score)), 6),
        locator=source["locator"],
        receipt=source["receipt"],
        scope=source["scope"],
        metadata=source.get("metadata") or {},
        position=source.get("position") or 0,
        sentences=segments,
        vectors=unpack_vectors(base64.b64decode(packed), synthesis_texts(source["text"], [(seg.start, seg.end) for seg in segments])) if packed else None,
    )
