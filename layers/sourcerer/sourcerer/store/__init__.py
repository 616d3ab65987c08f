"""Indexes: ingest documents, search them by tenant, scope and ACL, and hand `ask()` a retriever.

from sourcerer.store import open_index
index = open_index()   # SOURCERER_INDEX, default sqlite under SOURCERER_HOME
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from sourcerer.errors import ConfigurationError, UnsupportedDocument
from sourcerer.retrieval.embedders import CachedEmbedder, Embedder, make_embedder
from sourcerer.settings import get_settings
from sourcerer.store.base import Index
from sourcerer.store.models import Document, Hit, IngestReport
from sourcerer.store.originals import open_originals

__all__ = ["Document", "Hit", "Index", "IngestReport", "UnsupportedDocument", "default_index_url", "open_index"]


def default_index_url() -> str:
    settings = get_settings()
    return settings.index or f"sqlite:///{(settings.home / 'index.db').as_posix()}"


def open_index(url: str | None = None, embedder: Embedder | CachedEmbedder | str | None = None) -> Index:
    """Open an index by URL (connects lazily).

    * `sqlite:///relative/index.db`, `sqlite:////absolute/index.db` (default: `index.db` under SOURCERER_HOME)
    * `opensearch://host:9200/index-name`, `opensearch+https://user:pass@host/index-name`,
      `opensearch+https://domain-host/index?aws=es` (SigV4, OpenSearch Service) or `?aws=aoss` (Serverless),
      with `&region=eu-west-1` when not the boto3 default, and `?engine=lucene` for a node without the k-NN
      native libraries (default `faiss`; the engine matters only when `init` creates the index).

    `embedder`: an embedder object, or a name (`local`, `openai`, `bedrock`, `none`); default
    `SOURCERER_EMBEDDER`, else the bundled model when installed.
    """
    url = url or default_index_url()
    chosen = make_embedder(embedder) if isinstance(embedder, str) or embedder is None else embedder
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from sourcerer.store.sqlite import SQLiteIndex

        raw = url[len("sqlite://") :]
        if not raw.startswith("/") or raw == "/":
            raise ConfigurationError(f"bad sqlite URL {url!r}: use sqlite:///relative.db or sqlite:////absolute.db")
        path = Path(raw[1:]) if not raw.startswith("//") else Path(raw[1:])
        return SQLiteIndex(path, embedder=chosen, originals=open_originals(get_settings().originals, path))
    if parsed.scheme in ("opensearch", "opensearch+http", "opensearch+https"):
        from sourcerer.store.opensearch import OpenSearchIndex

        index_name = parsed.path.strip("/")
        if not parsed.hostname or not index_name or "/" in index_name:
            raise ConfigurationError(f"bad OpenSearch URL {url!r}: use opensearch://host:port/index-name")
        query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        https = parsed.scheme == "opensearch+https"
        auth = (unquote(parsed.username), unquote(parsed.password or "")) if parsed.username else None
        return OpenSearchIndex(
            host=parsed.hostname,
            port=parsed.port or (443 if https else 9200),
            index=index_name,
            use_ssl=https,
            http_auth=auth,
            aws_service=query.get("aws"),
            region=query.get("region"),
            knn_engine=query.get("engine", "faiss"),
            embedder=chosen,
            originals=open_originals(get_settings().originals),
            **_embed_queue(),
        )
    raise ConfigurationError(f"unknown index URL {url!r}: use sqlite:///... or opensearch://host:port/index")


def _embed_queue() -> dict[str, Any]:
    """With `SOURCERER_EMBED_QUEUE` (an SQS queue URL, set by template.yaml), ingest defers embedding to the
    embed function: one message per batch of chunks."""
    url = get_settings().embed_queue
    if not url:
        return {}
    from sourcerer.store.background import EmbedQueue

    return {"defer_embedding": True, "on_pending": EmbedQueue(url)}
