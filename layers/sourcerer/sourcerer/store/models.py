"""Shapes of the indexing side: documents in, hits out, ingest reports."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sourcerer.errors import UnsupportedDocument
from sourcerer.models import Locator, Segment
from sourcerer.scopes import normalize_scope, validate_tenant
from sourcerer.store.parsers import as_utf8

# A URI scheme as a browser reads one: it drops ASCII whitespace and control characters anywhere before the
# colon ("java\tscript:" is javascript:), and letters in any case
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
_IGNORED_BY_BROWSERS = re.compile(r"[\x00-\x20\x7f]")
LINKABLE_SCHEMES = ("http", "https")
SOURCE_SCHEMES = (*LINKABLE_SCHEMES, "s3")  # s3://bucket/key: the S3 ingest's own identity for an object


def check_source_uri(source_uri: str) -> str:
    """A `source_uri` is a relative path (`handbook/leave.md`) or an http(s) or s3 URI. Anything with another
    scheme (`javascript:`, `data:`, `vbscript:`, `file:`) is refused: a source_uri becomes a citation's link,
    and a link with such a scheme runs or opens what the document's author chose on the reader's origin."""
    seen = _IGNORED_BY_BROWSERS.sub("", source_uri)
    scheme = _SCHEME.match(seen)
    if scheme and scheme.group(1).lower() not in SOURCE_SCHEMES:
        raise UnsupportedDocument(
            f"source_uri must be a relative path or an http(s) or s3 URI, not a {scheme.group(1).lower()}: URI"
        )
    return source_uri


class Document(BaseModel):
    """A document to ingest: `text` or `content` (bytes), plus where it came from and who may see it."""

    model_config = ConfigDict(extra="forbid")

    source_uri: str = Field(min_length=1)
    text: str | None = None
    content: bytes | None = None
    content_type: str | None = None
    tenant: str = "local"
    scope: str | None = None
    acl: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    document_id: str | None = None

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str) -> str:
        return validate_tenant(value)

    @field_validator("acl")
    @classmethod
    def _acl(cls, value: list[str]) -> list[str]:
        cleaned = sorted({g.strip() for g in value if isinstance(g, str) and g.strip()})
        return cleaned

    @model_validator(mode="after")
    def _content(self) -> Document:
        if (self.text is None) == (self.content is None):
            raise ValueError("give exactly one of text or content")
        self.scope = normalize_scope(self.scope, self.tenant)
        if self.document_id is None:
            self.document_id = document_id_for(self.tenant, self.scope, self.source_uri)
        return self

    def raw_bytes(self) -> bytes:
        return as_utf8(self.content) if self.content is not None else (self.text or "").encode("utf-8")

    def content_hash(self) -> str:
        """Changes when the content or anything that decides visibility or labels changes."""
        h = hashlib.sha256(self.raw_bytes())
        h.update(repr((self.scope, self.acl, sorted(self.metadata.items(), key=lambda kv: kv[0]))).encode())
        return h.hexdigest()


Plane = Literal["text", "audio", "doc_visual"]
PLANES: tuple[Plane, ...] = ("text", "audio", "doc_visual")
# which locators each plane holds: text (character spans, lines), audio (transcript time ranges), PDF pages
PLANE_KINDS: dict[str, tuple[str, ...]] = {"text": ("char_span", "lines"), "audio": ("time_range",), "doc_visual": ("page",)}
MetadataValue = str | int | float | bool


def plane_of(locator_kind: str) -> str:
    return next(plane for plane, kinds in PLANE_KINDS.items() if locator_kind in kinds)


class SearchFilter(BaseModel):
    """What a search may return beyond the caller's access: every given condition must hold (None: no condition).

    Chunk conditions: `planes` (by their locator). Document conditions: `content_types`, `source_uri_prefix`,
    `document_ids`, `metadata` (equality on each key), `created_after` / `created_before` (epoch seconds of the
    document's first ingest)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    planes: tuple[Plane, ...] | None = None
    content_types: tuple[str, ...] | None = None
    source_uri_prefix: str | None = None
    document_ids: tuple[str, ...] | None = None
    metadata: dict[str, MetadataValue] | None = None
    created_after: float | None = None
    created_before: float | None = None

    @property
    def empty(self) -> bool:
        document_level = (self.content_types, self.source_uri_prefix, self.document_ids, self.metadata)
        return self.kinds() is None and all(v is None for v in (*document_level, self.created_after, self.created_before))

    def kinds(self) -> list[str] | None:
        """The locator kinds the planes allow (None: all)."""
        if self.planes is None or set(self.planes) == set(PLANES):
            return None
        return sorted(k for plane in self.planes for k in PLANE_KINDS[plane])


def document_id_for(tenant: str, scope: str, source_uri: str) -> str:
    """Stable id of a document: the same source in the same scope is the same document.

    The scope is part of the identity, so a writer in one scope can never address (replace or move) a
    document that lives in another by naming the same `source_uri`; moving is an explicit operation.
    """
    return "doc_" + hashlib.sha256(f"{tenant}\x00{scope}\x00{source_uri}".encode()).hexdigest()[:20]


def unit_id_for(tenant: str, document_id: str, position: int, text: str) -> str:
    """Stable chunk id: a hash of (tenant, document id, position, text)."""
    return "u_" + hashlib.sha256(f"{tenant}\x00{document_id}\x00{position}\x00{text}".encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk as ingest writes it. Plain data, not a pydantic model: every field comes from our own parsers, and
    a bulk ingest builds, ships between processes and stores thousands a second (validating each sentence's
    locator again cost a fifth of parsing). `locator` and each of `sentences` (`{"start", "end", "locator"}`,
    offsets in `text`) are in their stored JSON shape, which a `Hit` validates when it is read back."""

    unit_id: str
    document_id: str
    position: int
    text: str
    label: str
    locator: dict[str, Any]
    receipt: str
    sentences: list[dict[str, Any]] = field(default_factory=list)

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Each sentence's `[start, end)` in `text`."""
        return [(seg["start"], seg["end"]) for seg in self.sentences]


class Hit(BaseModel):
    unit_id: str
    document_id: str
    source_uri: str
    label: str
    text: str
    score: float = Field(ge=0.0, le=1.0)
    locator: Locator
    receipt: str
    scope: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    position: int = Field(default=0, ge=0, description="the chunk's place in its document, from 0")
    sentences: list[Segment] = Field(default_factory=list, exclude=True, description="stored at ingest; cites sentences")
    vectors: dict[str, Any] | None = Field(
        default=None, exclude=True, repr=False, description="text -> vector of the chunk and its sentences, from ingest"
    )
    pending: bool = Field(
        default=False, exclude=True, description="its vectors are not computed yet (deferred): an answer must not compute them"
    )

    def as_passage(self) -> dict[str, Any]:
        """The shape `ask()` takes: a passage carrying its id, locator and source."""
        return {
            "text": self.text,
            "source": self.label,
            "score": self.score,
            "id": self.unit_id,
            "source_uri": self.source_uri,
            "locator": self.locator.model_dump(),
            "sentences": [seg.model_dump() for seg in self.sentences] or None,
            "vectors": self.vectors,
            "pending": self.pending,
            "metadata": {**self.metadata, "document_id": self.document_id, "scope": self.scope},
        }


IngestStatus = Literal["ingested", "unchanged", "replaced"]


class FileOutcome(BaseModel):
    path: str
    status: Literal["ingested", "unchanged", "replaced", "skipped"]
    document_id: str | None = None
    chunks: int = 0
    reason: str | None = None


class IngestReport(BaseModel):
    files: list[FileOutcome] = Field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def chunks(self) -> int:
        return sum(f.chunks for f in self.files if f.status in ("ingested", "replaced"))

    def summary(self) -> str:
        parts = [f"{self.count(s)} {s}" for s in ("ingested", "unchanged", "replaced", "skipped")]
        return ", ".join(parts) + f"; {self.chunks} chunks written"
