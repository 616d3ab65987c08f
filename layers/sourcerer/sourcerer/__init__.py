"""Sourcerer: ask your documents — cited answers or an honest refusal, verified claim by claim.

from sourcerer import ask
ask("How long does standard shipping take?", passages=[{"text": "...", "source": "Shipping Policy"}])
"""

from sourcerer.errors import (
    ConfigurationError,
    ProviderError,
    SourcererError,
    VerificationUnavailable,
)
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
from sourcerer.pipeline import aask, ask, astream
from sourcerer.retrieval import embed_retriever, hybrid_retriever, keyword_retriever

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
]
