"""The public data shapes: passages, locators, citations, faithfulness, trace and the answer itself."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field

from sourcerer.sentences import has_lead_ins, lead_ins_of, opens_clause, sentence_spans

MAX_QUESTION_CHARS = 4000  # a question's length, in the API (`q`) and the library (`ask`): a bound on its cost
MAX_HISTORY_TURNS = 50  # the turns of a conversation read for a follow-up (the API refuses more, the library reads the last)
MAX_TURN_CHARS = 20_000  # one turn's text, in the API and the library


def receipt_of(text: str) -> str:
    """The receipt of a cited text: `sha256:` + hex digest of its UTF-8 bytes.

    An audit can later recompute it from the source to prove what an answer stood on.
    """
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- Locators: where a cited text sits in its source, discriminated by `kind` ---------------------------


class CharSpan(BaseModel):
    kind: Literal["char_span"] = "char_span"
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Lines(BaseModel):
    kind: Literal["lines"] = "lines"
    start: int = Field(ge=1)
    end: int = Field(ge=1)


class Page(BaseModel):
    kind: Literal["page"] = "page"
    page: int = Field(ge=1, description="1-based page number")
    box: list[float] | None = Field(default=None, description="[x0, y0, x1, y1] in PDF points")


class TimeRange(BaseModel):
    kind: Literal["time_range"] = "time_range"
    t_start_ms: int = Field(ge=0)
    t_end_ms: int = Field(ge=0)


Locator = Annotated[Union[CharSpan, Lines, Page, TimeRange], Field(discriminator="kind")]


def merge_locators(locators: list[dict[str, Any]]) -> dict[str, Any]:
    """The locator covering several pieces of one source: the span of lines, characters or time, or the union
    of the word boxes on the first piece's page."""
    first = locators[0]
    kind = first["kind"]
    if kind in ("lines", "char_span"):
        return {"kind": kind, "start": min(x["start"] for x in locators), "end": max(x["end"] for x in locators)}
    if kind == "time_range":
        return {
            "kind": kind,
            "t_start_ms": min(x["t_start_ms"] for x in locators),
            "t_end_ms": max(x["t_end_ms"] for x in locators),
        }
    boxes = [x["box"] for x in locators if x.get("box") and x.get("page") == first["page"]]
    box = (
        [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]
        if boxes
        else None
    )
    return {"kind": "page", "page": first["page"], "box": box}


class Segment(BaseModel):
    """A sentence (or transcript cue) of a passage: `[start, end)` in the passage text and, when the passage
    came from an indexed document, where those words sit in the source. Stored at ingest, so citing a
    sentence costs no parsing at answer time."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    locator: Locator | None = None


# --- Inputs -----------------------------------------------------------------------------------------


class Passage(BaseModel):
    """One retrievable piece of text. `source` is its human label (a title or file name)."""

    model_config = ConfigDict(extra="allow")

    text: str
    source: str = ""
    score: float | None = Field(default=None, description="relevance in [0, 1]; None when the retriever gives none")
    id: str | None = None
    source_uri: str | None = None
    locator: Locator | None = None
    sentences: list[Segment] | None = Field(default=None, description="sentence offsets and locators, from ingest")
    vectors: dict[str, Any] | None = Field(
        default=None, exclude=True, repr=False, description="text -> vector of this passage and its sentences, from ingest"
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    def sentence_offsets(self) -> list[tuple[int, int]]:
        """[start, end) of each sentence: as stored at ingest when the passage carries them, else split now."""
        if self.sentences:
            return [(seg.start, seg.end) for seg in self.sentences]
        return sentence_spans(self.text)

    @property
    def heading(self) -> str:
        """The heading an indexed chunk opens with, before its first sentence (`store.chunking`): what the passage
        is about, no sentence of it. "" for a passage without stored sentences."""
        return self.text[: self.sentences[0].start].strip() if self.sentences else ""

    def lead_ins(self) -> dict[tuple[int, int], tuple[int, int]]:
        """Each sentence that completes a lead-in, to that lead-in (`sentences.lead_in`: "are allergic to aspirin"
        to "Do not take ibuprofen if you:"); the heading an indexed chunk opens with counts as a line above its
        first sentence ("Do not take this medicine if")."""
        heading = self.heading
        if not has_lead_ins(self.text) and not (heading and opens_clause(heading)):
            return {}
        spans = self.sentence_offsets()
        if heading:
            at = self.text.find(heading)
            spans = [(at, at + len(heading)), *spans]
        return lead_ins_of(self.text, spans)

    @classmethod
    def coerce(cls, item: Any) -> Passage:
        """Accept a `Passage`, a mapping with at least `text`, or a plain string."""
        if isinstance(item, Passage):
            return item
        if isinstance(item, str):
            return cls(text=item)
        if isinstance(item, dict):
            data = dict(item)
            if "source" not in data:
                data["source"] = data.get("label") or data.get("title") or data.get("source_uri") or ""
            if "id" not in data and "unit_id" in data:
                data["id"] = data["unit_id"]
            return cls.model_validate(data)
        raise TypeError(f"a passage must be a dict, a str or a Passage, not {type(item).__name__}")


# --- Outputs ----------------------------------------------------------------------------------------


class Citation(BaseModel):
    index: int = Field(description="the inline marker number, [index] in the answer")
    label: str
    source: str
    text: str = Field(description="the cited passage text")
    locator: Locator
    receipt: str = Field(description="sha256: of `text`")
    quote: str | None = Field(
        default=None,
        description="the sentence(s) of `text` that support the claim, in order: ' … ' where text between two is left "
        "out, ' / ' at a line break after a line without a stop; `locator` points at them",
    )
    quote_spans: list[tuple[int, int]] = Field(default_factory=list, description="[start, end) of each quoted sentence in `text`")
    answer_spans: list[tuple[int, int]] = Field(
        default_factory=list, description="[start, end) of each marker of this citation in the answer"
    )
    unit_id: str | None = None
    source_uri: str | None = None
    original: str | None = Field(
        default=None,
        description="where the API serves the cited document's original bytes (GET with the key), with the same "
        "fragment as `source_uri`; None for passages that did not come from an index",
    )


class ClaimVerdict(BaseModel):
    claim: str
    supported: bool
    citations: list[int] = Field(default_factory=list)
    why: str = ""
    score: float | None = None


class Faithfulness(BaseModel):
    faithful: bool = Field(description="every claim is supported and the answer answers the question (when it was read)")
    unsupported: list[str] = Field(default_factory=list, description="the texts of unsupported claims")
    score: float = Field(ge=0.0, le=1.0, description="supported claims / all claims")
    judge: str = "local"
    claims: list[ClaimVerdict] = Field(default_factory=list)
    relevant: bool | None = Field(
        default=None,
        description="the answer answers the question, as the reading model reads it (the sentence model where the reader "
        "cannot run or is switched off) (None: not read)",
    )
    relevance: float | None = Field(default=None, ge=0.0, le=1.0, description="that model's probability that it does")
    rival: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="that model's probability for the best sentence of the sources the answer does not quote: far above "
        "`relevance`, the answer quotes the wrong sentence and is not relevant (None: not read; the reader reads none "
        "against an extractive answer, its own best reading)",
    )
    removed: list[ClaimVerdict] = Field(
        default_factory=list,
        description="verify='partial': the claims taken out of the answer, each replaced there by `[removed: why]`",
    )


class FieldAnswer(BaseModel):
    """One string of a structured answer: its text with markers, or a refusal with its reason."""

    path: str = Field(description="where it sits in the object: name, name[0], parent.name")
    text: str | None = Field(description="the value with inline [n] markers; null when refused")
    refused: bool
    reason: str | None = None
    citations: list[Citation] = Field(default_factory=list, description="answer_spans are offsets into `text`")
    faithfulness: Faithfulness | None = None


class Structured(BaseModel):
    data: dict[str, Any] = Field(description="the object in the requested shape; refused fields are null")
    fields: list[FieldAnswer]


class TraceEntry(BaseModel):
    model_config = ConfigDict(extra="allow")

    stage: str
    ms: float
    units: dict[str, float] = Field(default_factory=dict)
    detail: dict[str, Any] = Field(default_factory=dict)


class Trace(BaseModel):
    stages: list[TraceEntry] = Field(default_factory=list)
    total_ms: float = 0.0
    est_cost_usd: float = 0.0
    cache: Literal["hit", "miss", "off"] = Field(default="off", description="the answer cache: off in this release")
    notes: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list, description="optional stages a budget or configuration skipped")
    draft: str | None = Field(
        default=None, description="the answer a strict verification refused, or a partial one before claims were removed"
    )

    def stage(self, name: str) -> TraceEntry | None:
        return next((s for s in self.stages if s.stage == name), None)


RefusalReason = Literal[
    "no_question",
    "bad_k",
    "no_grounding",
    "not_in_sources",
    "below_threshold",
    "no_citation",
    "unsupported",
    "unfaithful",
    "off_topic",
]
REFUSAL_REASONS: tuple[str, ...] = get_args(RefusalReason)

REFUSAL_MESSAGES: dict[str, str] = {
    "no_question": "Please ask a question — the question was empty.",
    "bad_k": "I can't search with that setting — k must be a positive whole number.",
    "no_grounding": "I can't answer without sources — no passages, retriever or grounding endpoint was given.",
    "not_in_sources": "I can't answer that from the provided sources — nothing supports it.",
    "below_threshold": "I can't answer that from the provided sources — the closest passages are not relevant enough.",
    "no_citation": "I can't give that answer — it did not cite the sources it relied on.",
    "unsupported": "I can't answer that from the provided sources — they don't contain the answer.",
    "unfaithful": "I can't give that answer — checking it against the cited sources found unsupported claims.",
    "off_topic": "I can't answer that from the provided sources — the closest sentence they hold does not answer this question.",
}


class Answer(BaseModel):
    answer: str
    refused: bool
    reason: RefusalReason | None = None
    citations: list[Citation] = Field(default_factory=list)
    faithfulness: Faithfulness | None = None
    groundedness: float | None = Field(
        default=None, description="share of the answer's sentences that carry a valid citation marker (None on refusals)"
    )
    via: Literal["passages", "retriever", "endpoint"] | None = None
    provider: str = "none"
    extractive: bool = False
    trace: Trace = Field(default_factory=Trace)
    passages: list[Passage] = Field(default_factory=list, exclude=True, repr=False)
    structured: Structured | None = Field(
        default=None, description="ask(schema=...): the object (`data`) and each field's answer (`fields`)"
    )

    @classmethod
    def refusal(cls, reason: str, **kwargs: Any) -> Answer:
        return cls(answer=REFUSAL_MESSAGES[reason], refused=True, reason=reason, **kwargs)

    def __str__(self) -> str:
        return self.answer
