"""Streamed answers: the events a client sees while an answer is made, under the rules of a whole answer.

Events are dicts with an `event` key: `retrieve` (`hits`: the passages found), `citation` (`citation`: a
`Citation`, announced just before the first text that carries its marker), `delta` (`text`: the next piece of
the answer, whole sentences), `verdict` (`verdict`: a `ClaimVerdict`, when verifying), `reset` (forget what was
shown: the deltas after it are the answer — a refusal after all, or a model's reply that changed when it was
asked again) and
`done` (`answer`: the final `Answer`, equal to what `ask()` returns for the same request). The deltas of an
answer concatenate to its final text.

What may be shown before the end: an LLM's answer, one finished sentence at a time, only where every rule can
be checked on a prefix (`DraftGate`) — no strict or partial verification (those withhold every claim until it
is judged), no `min_groundedness`, no passage with instruction-like sentences (a citation leaning on one is
dropped after the fact), the reply says `refused: false` and lists its citations before the answer starts, each
shown marker is listed and in range, and at least one valid citation is in what is shown. Everything else is
shown when the answer is final.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import from_json

from sourcerer.citations import MARKER, enforce, inline_markers
from sourcerer.injection import as_plain_text, is_instruction
from sourcerer.models import Answer, Citation, Passage, Trace, TraceEntry
from sourcerer.sentences import sentence_spans
from sourcerer.verify import pick_quotes

OnEvent = Callable[[dict[str, Any]], None]


def pieces(text: str) -> list[str]:
    """`text` cut after each sentence (markers that follow a full stop stay with it); the pieces concatenate to
    `text` exactly."""
    out: list[str] = []
    at = 0
    for _, end in sentence_spans(text):
        piece = text[at:end]
        if out and not re.search(r"\w", MARKER.sub("", piece)):
            out[-1] += piece
        else:
            out.append(piece)
        at = end
    if at < len(text):
        if out:
            out[-1] += text[at:]
        else:
            out.append(text[at:])
    return out


def event_json(event: dict[str, Any]) -> dict[str, Any]:
    """An event as JSON data (models dumped as JSON), for a wire or a terminal."""

    def plain(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json")
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    return {key: plain(value) for key, value in event.items()}


class Stream:
    """What a streamed answer has shown so far; every event goes out through `on_event`."""

    def __init__(self, on_event: OnEvent) -> None:
        self.on_event = on_event
        self.shown = ""
        self.announced: set[int] = set()
        self.started = time.perf_counter()
        self.first_byte_ms: float | None = None
        self.first_citation_ms: float | None = None

    def _ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)

    def emit(self, kind: str, **data: Any) -> None:
        if self.first_byte_ms is None:
            self.first_byte_ms = self._ms()
        self.on_event({"event": kind, **data})

    def retrieve(self, hits: Sequence[Passage]) -> None:
        self.emit("retrieve", hits=list(hits))

    def show(self, text: str, citations: Sequence[Citation]) -> None:
        """Show `text` next, announcing each citation its markers name for the first time just before it."""
        by_index = {c.index: c for c in citations}
        for number in inline_markers(text):
            if number not in self.announced and number in by_index:
                self.announced.add(number)
                self.emit("citation", citation=by_index[number])
                if self.first_citation_ms is None:
                    self.first_citation_ms = self._ms()
        if text:
            self.shown += text
            self.emit("delta", text=text)

    def finish(self, answer: Answer) -> None:
        """Verdicts first (a judged claim is shown only after its verdict), then the text not shown yet, sentence by
        sentence — after a `reset` when what was shown is not how the final text begins — then `done`."""
        for verdict in answer.faithfulness.claims if answer.faithfulness else []:
            self.emit("verdict", verdict=verdict)
        final = answer.answer
        if self.shown and not final.startswith(self.shown):
            self.announced.clear()
            self.shown = ""
            self.emit("reset")
        for piece in pieces(final[len(self.shown) :]):
            self.show(piece, answer.citations)
        answer.trace.stages.append(
            TraceEntry(
                stage="stream",
                ms=self._ms(),
                detail={"first_byte_ms": self.first_byte_ms, "first_citation_ms": self.first_citation_ms},
            )
        )
        self.emit("done", answer=answer)


_FENCE_START = re.compile(r"^\s*```(?:json|JSON)?\s*")


def partial_reply(raw: str) -> dict[str, Any] | None:
    """What a model's JSON reply says so far (the trailing string cut where it stands), or None."""
    try:
        data = from_json(_FENCE_START.sub("", raw), allow_partial="trailing-strings")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def may_stream_early(passages: Sequence[Passage]) -> bool:
    """Whether an LLM's draft may be shown before it is complete over these passages: not when one of them holds an
    instruction-like sentence, since a citation leaning on one is dropped once the whole answer is read."""
    return not any(is_instruction(p.text[a:b]) for p in passages for a, b in p.sentence_offsets())


class DraftGate:
    """Shows an LLM's answer while the model writes it, one finished sentence at a time, checked as the whole
    answer will be (see the module docstring); it shows nothing when it cannot check."""

    def __init__(self, stream: Stream, passages: Sequence[Passage]) -> None:
        self.stream = stream
        self.passages = list(passages)
        self.cut = 0

    def feed(self, raw: str) -> None:
        reply = partial_reply(raw)
        if not reply or "answer" not in reply or not isinstance(reply["answer"], str):
            return
        keys = list(reply)
        at = keys.index("answer")
        if reply.get("refused") is not False or "refused" not in keys[:at] or "citations" not in keys[:at]:
            return  # a refusal, or a reply whose citations are not known before its answer: shown at the end
        listed = [n for n in reply["citations"] if isinstance(n, int) and not isinstance(n, bool)]
        text = reply["answer"]
        spans = sentence_spans(text)
        finished = at < len(keys) - 1  # a later key has begun: the answer string is complete
        cut = len(text) if finished else (spans[-2][1] if len(spans) >= 2 else 0)
        if cut <= self.cut:
            return
        self.cut = cut
        # the same steps the pipeline takes on the whole answer: plain text, then only valid markers kept
        plain = as_plain_text(text[:cut].strip())
        enforced = enforce(plain, listed, self.passages, pick_quotes(plain, self.passages))
        prefix = enforced.answer
        if not MARKER.search(prefix) or not prefix.startswith(self.stream.shown):
            return  # nothing cited yet (it could still end uncited and be refused), or it no longer agrees
        self.stream.show(prefix[len(self.stream.shown) :], enforced.citations)


class Clock:
    """A request's trace as it runs: each stage's time, the total, and the end of a streamed answer."""

    def __init__(self, trace: Trace, stream: Stream | None = None) -> None:
        self.trace = trace
        self.stream = stream
        self.t0 = time.perf_counter()

    def stage(self, name: str, started: float, **fields: Any) -> TraceEntry:
        entry = TraceEntry(stage=name, ms=round((time.perf_counter() - started) * 1000, 3), **fields)
        self.trace.stages.append(entry)
        return entry

    def finish(self, answer: Answer) -> Answer:
        self.trace.total_ms = round((time.perf_counter() - self.t0) * 1000, 3)
        answer.trace = self.trace
        if self.stream is not None:  # the rest of a streamed answer, then its `done` event
            self.stream.finish(answer)
        return answer


__all__ = ["Clock", "DraftGate", "OnEvent", "Stream", "event_json", "may_stream_early", "partial_reply", "pieces"]
