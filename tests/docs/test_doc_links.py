"""Every link between the README and the documents in docs/ lands: the file exists, and a `#section` names a heading
there, as GitHub spells its anchors. The README links its summary of how Sourcerer decides to the full record in
docs/how-it-decides.md, section by section; a heading renamed on one side must not leave the other pointing at
nothing."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\((?!https?:|mailto:)([^)\s]*)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$")


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, marks, `-` and `_` kept),
    each space a hyphen."""
    text = heading.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            name, n = anchor(m[1]), 1
            while name in found:  # a repeated heading gets -1, -2, ... on GitHub
                name, n = f"{anchor(m[1])}-{n}", n + 1
            found.add(name)
    return found


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return LINK.findall(text)


def test_anchor_is_spelled_as_github_spells_it():
    assert anchor("The claim head as the judge's veto: measured, and switched off") == (
        "the-claim-head-as-the-judges-veto-measured-and-switched-off"
    )
    assert anchor("A thing no source mentions, asked yes or no") == "a-thing-no-source-mentions-asked-yes-or-no"
    assert anchor("Receipts that last: the answer log and audits") == "receipts-that-last-the-answer-log-and-audits"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_lands(page: Path):
    broken = []
    for target in links(page):
        path, _, section = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif section and file.suffix == ".md" and section not in anchors(file):
            broken.append(f"{target}: no such section in {file.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_the_readme_links_into_the_record():
    into_record = [t for t in links(ROOT / "README.md") if t.startswith("docs/how-it-decides.md#")]
    assert len(into_record) >= 10, "the README's summary of how it decides points at the record's sections"
