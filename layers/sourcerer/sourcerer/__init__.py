"""Sourcerer: ask your documents — cited answers or an honest refusal, verified claim by claim.

from sourcerer import ask
ask("How long does standard shipping take?", passages=[{"text": "...", "source": "Shipping Policy"}])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what `from sourcerer import ...` gives, loaded on first use (see `__getattr__`)
    from sourcerer.errors import ConfigurationError, ProviderError, SourcererError, VerificationUnavailable
    from sourcerer.models import (
        REFUSAL_REASONS,
        Answer,
        CharSpan,
        Citation,
        Faithfulness,
        Lines,
        Page,
        Passage,
        TimeRange,
        Trace,
        TraceEntry,
    )
    from sourcerer.passage_files import load_passages
    from sourcerer.pipeline import aask, ask, astream
    from sourcerer.retrieval import embed_retriever, hybrid_retriever, keyword_retriever

# Where each public name lives. They load when first used, not when any `sourcerer.*` module is imported: a
# Lambda function that ingests or searches never pays for the answer pipeline's import (issue 26's cold start).
_EXPORTS = {
    **dict.fromkeys(["ConfigurationError", "ProviderError", "SourcererError", "VerificationUnavailable"], "sourcerer.errors"),
    **dict.fromkeys(
        [
            "REFUSAL_REASONS",
            "Answer",
            "CharSpan",
            "Citation",
            "Faithfulness",
            "Lines",
            "Page",
            "Passage",
            "TimeRange",
            "Trace",
            "TraceEntry",
        ],
        "sourcerer.models",
    ),
    **dict.fromkeys(["aask", "ask", "astream"], "sourcerer.pipeline"),
    "load_passages": "sourcerer.passage_files",
    **dict.fromkeys(["embed_retriever", "hybrid_retriever", "keyword_retriever"], "sourcerer.retrieval"),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sourcerer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__version__ = "0.1.0"

__all__ = [
    "REFUSAL_REASONS",
    "Answer",
    "CharSpan",
    "Citation",
    "ConfigurationError",
    "Faithfulness",
    "Lines",
    "Page",
    "Passage",
    "ProviderError",
    "SourcererError",
    "TimeRange",
    "Trace",
    "TraceEntry",
    "VerificationUnavailable",
    "aask",
    "ask",
    "astream",
    "embed_retriever",
    "hybrid_retriever",
    "keyword_retriever",
    "load_passages",
]
