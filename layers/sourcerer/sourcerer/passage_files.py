"""Passages from files, for a question asked without an index (`ask(passages=Path(...))`, `sourcerer ask
--passages`): a `.jsonl` of `{text, source}` objects, or a document or a folder of documents, read and chunked as
`sourcerer ingest` reads them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sourcerer.errors import SourcererError, UnsupportedDocument
from sourcerer.store.chunking import chunk_pieces
from sourcerer.store.folders import files_under, why_skip
from sourcerer.store.parsers import parse


def load_passages(path: str | Path) -> list[dict[str, Any]]:
    """Passages from a `.jsonl` file of `{text, source}` objects, or from a document or a folder of documents,
    read and chunked as `sourcerer ingest` reads them (see `folder_passages`)."""
    path = Path(path)
    if path.is_dir():
        return folder_passages(path)
    if not path.exists():
        raise SourcererError(f"no such file or folder: {path}")
    if path.suffix.lower() != ".jsonl":  # notes.txt, a handbook's .md, a PDF: one document
        if why := why_skip(path, path):  # the file named is its own root: no folder to stay inside
            raise UnsupportedDocument(f"{path}: {why}")
        return document_passages(path)
    passages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourcererError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise SourcererError(f'{path}:{number}: each line must be an object with a "text" string')
        passages.append(item)
    return passages


def folder_passages(folder: Path) -> list[dict[str, Any]]:
    """Every document under `folder` that `sourcerer ingest` would take, parsed and chunked the same way, so a
    question over the folder meets the passages an index of it would hold: a Markdown heading labels the text
    under it (`handbook.md › Refunds`) and is never a passage of its own. A file that cannot be read is named on
    stderr and left out."""
    passages = []
    for file in files_under(folder):
        try:
            if why := why_skip(file, folder):
                raise UnsupportedDocument(why)
            passages += document_passages(file)
        except UnsupportedDocument as exc:
            print(f"sourcerer: {file} left out: {exc}", file=sys.stderr)
    return passages


def document_passages(file: Path) -> list[dict[str, Any]]:
    """One document's chunks as passages, labelled as an index labels them."""
    parsed = parse(file.read_bytes(), file.name)
    return [
        {"text": chunk.text, "source": chunk.label, "sentences": chunk.sentences}
        for chunk in chunk_pieces(parsed.pieces, tenant="local", document_id=str(file))
    ]
