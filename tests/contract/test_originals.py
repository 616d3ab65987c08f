"""One contract for the stores of documents' originals: a directory (the embedded default) and S3 (moto)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws
from sourcerer.errors import ConfigurationError
from sourcerer.store.originals import DirectoryOriginals, S3Originals, open_originals

PDF = b"%PDF-1.4\n" + bytes(range(256)) * 4
HASH_A, HASH_B = "a" * 64, "b" * 64


@pytest.fixture(params=["directory", "s3"])
def originals(request, tmp_path):
    if request.param == "directory":
        yield DirectoryOriginals(tmp_path / "originals")
        return
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="docs")
        client.put_bucket_versioning(Bucket="docs", VersioningConfiguration={"Status": "Enabled"})
        yield S3Originals("docs", "originals/", client=client)


def test_bytes_come_back_exactly_by_tenant_and_hash(originals):
    originals.put("acme", HASH_A, PDF, "application/pdf")
    originals.put("acme", HASH_A, PDF, "application/pdf")  # idempotent
    assert originals.get("acme", HASH_A) == PDF and originals.has("acme", HASH_A)
    assert originals.get("other", HASH_A) is None  # another tenant's hash is another original
    assert originals.get("acme", HASH_B) is None and not originals.has("acme", HASH_B)


def test_delete_leaves_nothing_behind(originals):
    originals.put("acme", HASH_A, PDF)
    originals.put("acme", HASH_B, b"kept")
    originals.delete("acme", HASH_A)
    originals.delete("acme", HASH_A)  # again: nothing to do, no error
    assert originals.get("acme", HASH_A) is None and originals.get("acme", HASH_B) == b"kept"
    if isinstance(originals, S3Originals):  # a versioned bucket keeps no old version or delete marker
        listed = originals.client.list_object_versions(Bucket="docs", Prefix="originals/t-acme/" + HASH_A)
        assert not listed.get("Versions") and not listed.get("DeleteMarkers")


@pytest.mark.parametrize("tenant", ["..", ".", "a/b"])
def test_a_tenant_name_never_escapes_the_store(originals, tenant, tmp_path):
    originals.put(tenant, HASH_A, b"x")
    assert originals.get(tenant, HASH_A) == b"x"
    if isinstance(originals, DirectoryOriginals):
        assert all(tmp_path / "originals" in p.parents for p in (tmp_path / "originals").rglob("*"))


def test_only_a_sha256_is_a_key(originals):
    with pytest.raises(ValueError):
        originals.get("acme", "../../etc/passwd")


def test_the_setting_picks_the_store(tmp_path):
    assert isinstance(open_originals("s3://bucket/some/prefix/"), S3Originals)
    assert open_originals("s3://bucket/p").prefix == "p/"
    assert open_originals(str(tmp_path)).root == tmp_path
    assert open_originals(None, tmp_path / "index.db").root == tmp_path / "originals"
    assert open_originals(None) is None
    for bad in ("s3://", "ftp://host/x"):
        with pytest.raises(ConfigurationError):
            open_originals(bad)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-9", (0, 9)),
        ("bytes=90-", (90, 99)),
        ("bytes=95-500", (95, 99)),  # a last byte past the end is the end
        ("bytes=-5", (95, 99)),
        ("bytes=-500", (0, 99)),
        ("bytes=9-3", None),  # malformed: the whole content, as RFC 9110 allows
        ("bytes=0-1,5-9", None),  # several ranges: the whole content
        ("items=0-9", None),
        ("bytes=-", None),
    ],
)
def test_byte_ranges(header, expected):
    from sourcerer.http.originals import parse_range

    assert parse_range(header, 100) == expected


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=100-200", "bytes=-0"])
def test_a_range_past_the_end_is_unsatisfiable(header):
    from sourcerer.errors import RangeNotSatisfiable
    from sourcerer.http.originals import parse_range

    with pytest.raises(RangeNotSatisfiable) as raised:
        parse_range(header, 100)
    assert raised.value.length == 100
