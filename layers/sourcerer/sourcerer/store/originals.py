"""Originals: the bytes each document was ingested from, kept so a citation can show the real page.

A content-addressed store keyed by (tenant, the document's content hash): the same content ingested twice is
stored once, a re-ingest of unchanged content keeps (or restores) it, and it is removed when no document of
the tenant holds that content any more (`store/base.py` decides when; the adapters here only keep bytes).

* `DirectoryOriginals` — files under `SOURCERER_HOME/originals/` (the embedded default), written atomically.
* `S3Originals` — objects under a prefix of a bucket (the stack's documents bucket, `originals/`, which no
  upload trigger watches); removing one removes every version, so a versioned bucket keeps no copy.

`open_originals()` picks one from `SOURCERER_ORIGINALS` (`s3://bucket/prefix` or a directory), else the
directory beside a SQLite index; an index without either keeps no originals, and the route that serves them
says so.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlparse

from sourcerer.errors import ConfigurationError


class Originals(Protocol):
    """Bytes by (tenant, content hash). `put` is idempotent; `get` of what is not kept is None."""

    def put(self, tenant: str, content_hash: str, content: bytes, content_type: str | None = None) -> None: ...

    def has(self, tenant: str, content_hash: str) -> bool: ...

    def get(self, tenant: str, content_hash: str) -> bytes | None: ...

    def delete(self, tenant: str, content_hash: str) -> None: ...


def _checked(content_hash: str) -> str:
    if len(content_hash) != 64 or any(c not in "0123456789abcdef" for c in content_hash):
        raise ValueError(f"not a sha256 content hash: {content_hash!r}")
    return content_hash


def _tenant_part(tenant: str) -> str:
    # a tenant name may hold '.', so ".." is a valid tenant: the prefix keeps it one ordinary path segment
    return "t-" + quote(tenant, safe="")


class DirectoryOriginals:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, tenant: str, content_hash: str) -> Path:
        digest = _checked(content_hash)
        return self.root / _tenant_part(tenant) / digest[:2] / digest

    def put(self, tenant: str, content_hash: str, content: bytes, content_type: str | None = None) -> None:
        path = self._path(tenant, content_hash)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
        try:  # written whole or not at all: a reader never sees half a file
            with os.fdopen(fd, "wb") as f:
                f.write(content)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def has(self, tenant: str, content_hash: str) -> bool:
        return self._path(tenant, content_hash).exists()

    def get(self, tenant: str, content_hash: str) -> bytes | None:
        try:
            return self._path(tenant, content_hash).read_bytes()
        except FileNotFoundError:
            return None

    def delete(self, tenant: str, content_hash: str) -> None:
        self._path(tenant, content_hash).unlink(missing_ok=True)


class S3Originals:
    def __init__(self, bucket: str, prefix: str = "originals/", client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("s3")
        return self._client

    def _key(self, tenant: str, content_hash: str) -> str:
        return f"{self.prefix}{_tenant_part(tenant)}/{_checked(content_hash)}"

    def put(self, tenant: str, content_hash: str, content: bytes, content_type: str | None = None) -> None:
        if self.has(tenant, content_hash):
            return
        extra = {"ContentType": content_type} if content_type else {}
        self.client.put_object(Bucket=self.bucket, Key=self._key(tenant, content_hash), Body=content, **extra)

    def has(self, tenant: str, content_hash: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(tenant, content_hash))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    def get(self, tenant: str, content_hash: str) -> bytes | None:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(tenant, content_hash))
        except self.client.exceptions.NoSuchKey:
            return None
        return bytes(response["Body"].read())

    def delete(self, tenant: str, content_hash: str) -> None:
        key = self._key(tenant, content_hash)
        listed = self.client.list_object_versions(Bucket=self.bucket, Prefix=key)
        versions = [
            {"Key": v["Key"], "VersionId": v["VersionId"]}
            for v in listed.get("Versions", []) + listed.get("DeleteMarkers", [])
            if v["Key"] == key
        ]
        if versions:  # every version and delete marker: removed means no copy is left in the bucket
            self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": versions, "Quiet": True})
        else:
            self.client.delete_object(Bucket=self.bucket, Key=key)


def open_originals(setting: str | None, index_path: Path | None = None) -> Originals | None:
    """`SOURCERER_ORIGINALS` (`s3://bucket/prefix` or a directory), else `originals/` beside a SQLite index."""
    if setting:
        parsed = urlparse(setting)
        if parsed.scheme == "s3":
            if not parsed.netloc:
                raise ConfigurationError(f"bad SOURCERER_ORIGINALS {setting!r}: use s3://bucket/prefix")
            return S3Originals(parsed.netloc, parsed.path.lstrip("/") or "originals/")
        if parsed.scheme not in ("", "file"):
            raise ConfigurationError(f"bad SOURCERER_ORIGINALS {setting!r}: use s3://bucket/prefix or a directory")
        return DirectoryOriginals(parsed.path if parsed.scheme == "file" else setting)
    if index_path is not None:
        return DirectoryOriginals(index_path.parent / "originals")
    return None


class KeepsOriginals(Protocol):
    """What an index adapter offers for its documents' originals (both adapters; see `store/base.py`)."""

    originals: Originals | None

    def holds_content(self, tenant: str, content_hash: str) -> bool:
        """Whether any document of `tenant` is stored with this content hash."""
        ...


def keep_original(storage: KeepsOriginals, tenant: str, content_hash: str, content: bytes, content_type: str | None) -> None:
    """Before a write: a stored document never lacks its original (a failed write leaves bytes no document
    points at, which the same write retried then uses). An unchanged re-ingest restores one lost or never kept."""
    if storage.originals is not None:
        storage.originals.put(tenant, content_hash, content, content_type)


def release_original(storage: KeepsOriginals, tenant: str, content_hash: str) -> None:
    """After a delete or a replacement: remove the bytes once no document of the tenant holds that content."""
    if storage.originals is not None and not storage.holds_content(tenant, content_hash):
        storage.originals.delete(tenant, content_hash)
