"""Retrievers: callables `(question, k) -> list[Passage]` with scores normalised into [0, 1]."""

from sourcerer.retrieval.base import Retriever, as_passages, call_retriever
from sourcerer.retrieval.hybrid import hybrid_retriever
from sourcerer.retrieval.keyword import BM25, keyword_retriever
from sourcerer.retrieval.semantic import embed_retriever

__all__ = [
    "BM25",
    "Retriever",
    "as_passages",
    "call_retriever",
    "embed_retriever",
    "hybrid_retriever",
    "keyword_retriever",
]
