"""A document's source_uri becomes a citation's link: only relative paths and http(s) URIs (and the S3 ingest's
own s3:// identities) are accepted, on every path in (library, CLI folder ingest, HTTP: see the playground test)."""

import pytest
from sourcerer.errors import UnsupportedDocument
from sourcerer.store.sqlite import SQLiteIndex

TEXT = "The vault code rotates every 90 days."


@pytest.mark.parametrize(
    "uri",
    [
        "javascript:alert(document.domain)//a.md",
        "JaVaScRiPt:alert(1)",
        "\x01javascript:alert(1)",  # browsers drop control characters and whitespace before the scheme
        "java\tscript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "file:///etc/passwd",
    ],
)
def test_a_source_uri_with_another_scheme_is_refused_before_anything_is_written(tmp_path, uri):
    index = SQLiteIndex(tmp_path / "i.db", embedder=None)
    with pytest.raises(UnsupportedDocument, match="relative path or an http"):
        index.ingest_document({"source_uri": uri, "text": TEXT})
    assert index.list_documents("local") == []


@pytest.mark.parametrize("uri", ["vault.md", "handbook/security/vault.md", "https://wiki.example.com/vault.html", "s3://docs/tenants/acme/vault.md"])
def test_relative_paths_and_web_and_s3_uris_are_accepted(tmp_path, uri):
    index = SQLiteIndex(tmp_path / "i.db", embedder=None)
    assert index.ingest_document({"source_uri": uri, "text": TEXT})["status"] == "ingested"


def test_a_folder_ingest_skips_a_file_whose_name_is_a_script_link(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "javascript:alert(1).md").write_text(TEXT)
    (folder / "vault.md").write_text(TEXT)
    report = SQLiteIndex(tmp_path / "i.db", embedder=None).ingest_path(folder)
    outcomes = {f.path.rsplit("/", 1)[-1]: (f.status, f.reason) for f in report.files}
    assert outcomes["vault.md"][0] == "ingested"
    assert outcomes["javascript:alert(1).md"][0] == "skipped" and "relative path" in outcomes["javascript:alert(1).md"][1]
