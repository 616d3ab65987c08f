"""Multi-turn: rewrite a follow-up into a standalone query for retrieval."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from sourcerer.synthesis.prompt import REWRITE_PROMPT
from sourcerer.synthesis.providers import ChatProvider, with_retries
from sourcerer.text import terms

_WORD = re.compile(r"\w+", re.UNICODE)


def validate_history(history: Sequence[dict] | None) -> list[dict]:
    turns = []
    for turn in history or []:
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            raise ValueError('each history turn must be {"role": "user"|"assistant", "text": ...}')
        turns.append({"role": turn["role"], "text": str(turn.get("text", turn.get("content", "")))})
    return turns


def carry_terms(question: str, history: Sequence[dict]) -> str:
    """Append the previous user question's key words that the follow-up lacks ("and for returns?")."""
    previous = next((t["text"] for t in reversed(history) if t["role"] == "user"), "")
    if not previous:
        return question
    have = set(terms(question))
    extra = []
    for word in _WORD.findall(previous):
        word_terms = terms(word)
        if word_terms and not any(t in have for t in word_terms) and word not in extra:
            extra.append(word)
    return f"{question} {' '.join(extra)}".strip() if extra else question


async def rewrite_with_llm(question: str, history: Sequence[dict], provider: ChatProvider) -> tuple[str, dict]:
    """Ask the model for a standalone query; falls back to `carry_terms` when its reply is unusable."""
    conversation = "\n".join(f"{t['role']}: {t['text']}" for t in history[-6:])
    messages = [
        {"role": "system", "content": REWRITE_PROMPT},
        {"role": "user", "content": f"Conversation:\n{conversation}\n\nLast message: {question}"},
    ]
    reply = await with_retries(provider, messages)
    text = reply.content.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        query = json.loads(text)["query"]
        if isinstance(query, str) and query.strip():
            return query.strip(), reply.usage
    except (ValueError, KeyError, TypeError):
        pass
    return carry_terms(question, history), reply.usage
