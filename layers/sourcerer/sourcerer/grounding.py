"""Client for an external grounding endpoint: POST the question, get `{text, citations, abstained}` back."""

from __future__ import annotations

import re

import httpx

from sourcerer.citations import MARKER, groundedness, split_grouped_markers, strip_markers
from sourcerer.errors import ProviderError
from sourcerer.models import Answer, CharSpan, Citation, Passage, receipt_of


async def ask_endpoint(
    endpoint: str, question: str, history: list[dict] | None = None, *, timeout: float = 30.0
) -> tuple[Answer, list[Passage]]:
    """Ask the endpoint and map its reply onto an `Answer` (refusal `unsupported` when it abstains).

    Raises `ProviderError` when the endpoint is unreachable, fails, or answers something malformed.
    """
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.post(endpoint, json={"question": question, "history": history or []})
    except httpx.HTTPError as exc:
        raise ProviderError(f"grounding endpoint {endpoint} unreachable: {exc}") from exc
    if response.status_code >= 400:
        raise ProviderError(f"grounding endpoint {endpoint} answered HTTP {response.status_code}")
    try:
        body = response.json()
    except ValueError as exc:
        raise ProviderError(f"grounding endpoint {endpoint} did not answer JSON") from exc
    if not isinstance(body, dict) or not isinstance(body.get("abstained", False), bool):
        raise ProviderError("grounding endpoint reply must be an object with text, citations and abstained")
    if body.get("abstained"):
        return Answer.refusal("unsupported", via="endpoint", provider="endpoint"), []
    text, raw_citations = body.get("text"), body.get("citations", [])
    if not isinstance(text, str) or not isinstance(raw_citations, list):
        raise ProviderError("grounding endpoint reply has no answer text or a malformed citation list")
    text = split_grouped_markers(text)
    citations, passages = [], []
    for position, item in enumerate(raw_citations, start=1):
        if not isinstance(item, dict):
            raise ProviderError("grounding endpoint citation is not an object")
        cited_text = str(item.get("text", ""))
        index = item.get("index", position)
        if not isinstance(index, int):
            raise ProviderError("grounding endpoint citation index is not an integer")
        label = str(item.get("label") or item.get("source") or item.get("title") or f"source {index}")
        spans = [(m.start(), m.end()) for m in MARKER.finditer(text) if int(m.group(1)) == index]
        citations.append(
            Citation(
                index=index,
                label=label,
                source=str(item.get("source") or label),
                text=cited_text,
                locator=CharSpan(start=0, end=len(cited_text)),
                receipt=receipt_of(cited_text),
                answer_spans=spans,
                source_uri=item.get("source_uri") or item.get("url"),
            )
        )
        passages.append(Passage(text=cited_text, source=label))
    # the same inline-marker rule as every other path: a marker must name a citation, a citation must be marked
    listed = {c.index for c in citations}
    text = MARKER.sub(lambda m: m.group() if int(m.group(1)) in listed else "", text)
    text = re.sub(r"[ \t]{2,}", " ", text).replace(" .", ".").strip()
    marked = {int(m.group(1)) for m in MARKER.finditer(text)}
    kept = [c for c in citations if c.index in marked]
    passages = [p for c, p in zip(citations, passages, strict=True) if c.index in marked]
    citations = [
        c.model_copy(update={"answer_spans": [(m.start(), m.end()) for m in MARKER.finditer(text) if int(m.group(1)) == c.index]})
        for c in kept
    ]
    if not citations or not re.search(r"\w", strip_markers(text)):
        return Answer.refusal("no_citation", via="endpoint", provider="endpoint"), passages
    answer = Answer(answer=text, refused=False, citations=citations, via="endpoint", provider="endpoint")
    answer.groundedness = groundedness(text)
    return answer, passages
