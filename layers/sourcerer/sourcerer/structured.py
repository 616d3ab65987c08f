"""Citations inside structured output: `ask(question, schema=...)` answers with an object of the caller's shape
whose every string carries its own inline `[n]` markers, each enforced, verified and refused like a prose answer.

The shape is a pydantic model or a JSON Schema: an object whose properties are strings, lists of strings or
objects of the same kind (numbers and booleans cannot carry a citation, so they are refused as a schema error).
Each string is a *field* with a path (`plan`, `steps[1]`, `contact.email`). The passages are retrieved once for
the question; then:

* an LLM fills the whole object in one JSON reply (the provider's JSON mode where it has one), and each field's
  text becomes one draft;
* without an LLM, the extractive synthesiser answers each field as its own question (the field's description,
  or its name), so it fills what the passages state and refuses the rest; a list gets at most one item.

Every field's draft then goes through the one answer pipeline over the same passages (`aask` with a fixed
retriever): markers enforced (no valid marker: the field is refused, `no_citation`), verification per field
(`verify="strict"` refuses the field, `"partial"` keeps its supported claims). The result is in
`Answer.structured`: `data` (the object, refused fields null) and `fields` (each with its text, citations,
refusal reason and faithfulness).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel

from sourcerer.citations import MARKER, enforce, groundedness
from sourcerer.errors import InvalidRequest, MalformedReply, ProviderError
from sourcerer.injection import only_instructions
from sourcerer.models import Answer, CharSpan, FieldAnswer, Passage, Structured
from sourcerer.retrieval.base import call_retriever
from sourcerer.synthesis.prompt import SYSTEM_PROMPT, render_sources
from sourcerer.synthesis.providers import ChatProvider, ChatReply, ask_for_json
from sourcerer.verify import choose_judge

MAX_FIELDS = 100  # the API's shape allows 10 fields of 10
MAX_ITEMS = 10  # items of a list an LLM may fill


class Leaf(BaseModel):
    """A string the schema asks for: its path in the object, and what it is about."""

    path: list[str | int]
    question: str
    is_list: bool = False


def json_schema(schema: Any) -> dict[str, Any]:
    """The JSON Schema of a pydantic model class, or a JSON Schema as given."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, dict):
        return schema
    raise InvalidRequest("schema must be a pydantic model class or a JSON Schema object")


def leaves(schema: dict[str, Any]) -> list[Leaf]:
    """Every string field of an object schema (`$ref`s to `$defs` followed), or `InvalidRequest` saying why not."""
    defs = schema.get("$defs") or schema.get("definitions") or {}

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            return resolve(defs.get(ref.rsplit("/", 1)[-1], {}))
        options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]  # Optional[X] is X
        return resolve(options[0]) if len(options) == 1 and "type" not in node else node

    found: list[Leaf] = []

    def walk(node: dict[str, Any], path: list[str | int], about: str) -> None:
        node = resolve(node)
        kind = node.get("type")
        described = node.get("description") or node.get("title") or about
        if kind == "object" or "properties" in node:
            properties = node.get("properties") or {}
            if not properties:
                raise InvalidRequest(f"{dotted(path) or 'the schema'}: an object needs properties")
            for name, child in properties.items():
                walk(child, [*path, name], _words(name))
        elif kind == "string":
            found.append(Leaf(path=path, question=_question(described)))
        elif kind == "array" and resolve(node.get("items") or {}).get("type") == "string":
            found.append(Leaf(path=path, question=_question(described), is_list=True))
        else:
            raise InvalidRequest(
                f"{dotted(path) or 'the schema'}: only strings, lists of strings and objects of them can carry "
                f"citations (got {kind or 'no type'})"
            )
        if len(found) > MAX_FIELDS:
            raise InvalidRequest(f"a schema may ask for at most {MAX_FIELDS} fields")

    if resolve(schema).get("type") not in (None, "object"):
        raise InvalidRequest("the schema must describe an object")
    walk(schema, [], "")
    return found


def _words(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ").strip().lower()


def _question(about: str) -> str:
    about = about.strip()
    return about if about.endswith("?") else f"What is the {about}?" if len(about.split()) <= 6 else about


def dotted(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


STRUCTURED_REPLY = """Reply with one JSON object and nothing else, its keys in this order:
{"refused": <true|false>, "citations": [<numbers of the sources you used>], "data": <an object of the shape below>}
Every string in "data" must end with inline markers such as [1] naming the sources that support it; put null
where the sources do not say, never a guess."""


def structured_messages(question: str, passages: Sequence[Passage], schema: dict[str, Any]) -> list[dict[str, str]]:
    system = SYSTEM_PROMPT.split("\n\nReply with one JSON object")[0] + "\n\n" + STRUCTURED_REPLY
    shape = json.dumps(schema, ensure_ascii=False)
    user = f"Sources:\n\n{render_sources(passages)}\n\nQuestion: {question}\n\nThe shape of \"data\" (JSON Schema): {shape}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def ask_structured_llm(
    provider: ChatProvider, question: str, passages: Sequence[Passage], schema: dict[str, Any]
) -> tuple[dict[str, Any], list[int], dict[str, float]]:
    """(the model's object, the citations it listed, usage) from one JSON reply."""

    def read(reply: dict[str, Any]) -> tuple[dict[str, Any], list[int]]:
        data = reply.get("data")
        if reply.get("refused") is True:
            return {}, []
        if not isinstance(data, dict):
            raise MalformedReply('the reply has no "data" object')
        listed = [n for n in reply.get("citations") or [] if isinstance(n, int) and not isinstance(n, bool)]
        return data, listed

    (data, listed), usage, _ = await ask_for_json(provider, structured_messages(question, passages, schema), read)
    return data, listed, usage


class CannedDraft:
    """A chat provider that replies with one field's text: how an LLM's field goes through the answer pipeline."""

    def __init__(self, name: str, text: str, listed: list[int]) -> None:
        self.name = name
        self.reply = json.dumps({"refused": False, "citations": listed, "answer": text})

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        return ChatReply(content=self.reply)


def value_at(data: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        if isinstance(part, int):
            data = data[part] if isinstance(data, list) and part < len(data) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data


def place(data: dict[str, Any], path: Sequence[str | int], value: Any) -> None:
    """Set `value` at `path` in `data`, making the objects and lists on the way."""
    node: Any = data
    for i, part in enumerate(path):
        last = i == len(path) - 1
        empty: Any = None if last else [] if isinstance(path[i + 1], int) else {}
        if isinstance(part, int):
            node.extend([None] * (part + 1 - len(node)))
            if last:
                node[part] = value
            elif node[part] is None:
                node[part] = empty
        elif last:
            node[part] = value
        else:
            node.setdefault(part, empty)
        if not last:
            node = node[part]


class FieldAsker:
    """A structured answer: every field's draft goes through the answer pipeline (`ask`), so its
    markers, verification and refusal follow the rules of a prose answer. Without an LLM, each field is a
    question of its own (its own search, the extractive synthesiser); an LLM fills the whole object in one reply
    over the passages found for the question and for each field, and each field's text is then one draft over
    exactly those passages (its markers number them)."""

    def __init__(
        self,
        ask: Callable[..., Awaitable[Answer]],
        retriever: Any,
        k: int,
        min_score: float | None,
        floor: float,
        verify: bool | str,
        judge: Any,
        providers: Sequence[ChatProvider],
        extractive_last: bool,
    ) -> None:
        self.ask = ask  # the pipeline's aask: every field's draft goes through it
        self.notes: list[str] = []  # what the trace should say (a provider that failed)
        self.retriever, self.k, self.min_score, self.floor, self.verify = retriever, k, min_score, floor, verify
        self.providers, self.extractive_last = providers, extractive_last
        self.chosen_judge = judge  # the caller's; else the LLM judge with an LLM, the local one without
        self.judge = judge if judge is not None else choose_judge(None, providers) if verify and providers else judge

    async def all(
        self, question: str, shape: dict[str, Any], wanted: list[Leaf], hits: list[Passage]
    ) -> tuple[Answer, dict[str, float]]:
        units: dict[str, float] = {"fields": float(len(wanted))}
        drafts: list[tuple[list[str | int], str, Any, list[Passage] | None]] = []
        if self.providers:
            pool = await self._pool(hits, wanted)
            try:
                data, listed, usage = await ask_structured_llm(self.providers[0], question, pool, shape) if pool else ({}, [], {})
            except (ProviderError, MalformedReply) as exc:
                if not self.extractive_last:
                    raise
                self.notes.append(f"{self.providers[0].name} failed, the extractive synthesiser fills the fields: {exc}")
                self.providers = []
            else:
                units.update(usage)
                for leaf in wanted:
                    value = value_at(data, leaf.path)
                    items = list(enumerate(value[:MAX_ITEMS])) if leaf.is_list and isinstance(value, list) else [(None, value)]
                    for i, text in items:
                        chat = CannedDraft(self.providers[0].name, text, listed) if isinstance(text, str) and text.strip() else None
                        drafts.append(([*leaf.path, i] if i is not None else leaf.path, leaf.question, chat, pool))
        if not self.providers:
            if not self.extractive_last:
                raise ProviderError("no chat provider and the extractive fallback is disabled: nothing can fill the schema")
            self.judge = self.chosen_judge or "local"
            drafts = [([*leaf.path, 0] if leaf.is_list else leaf.path, leaf.question, "extractive", None) for leaf in wanted]
        fields = list(await asyncio.gather(*(self._field(*d) for d in drafts)))
        data_out: dict[str, Any] = {}
        for (path, *_), f in zip(drafts, fields, strict=True):
            place(data_out, path, f.text)
        units["refused"] = float(sum(f.refused for f in fields))
        return self._answer(fields, data_out), units

    async def _pool(self, hits: list[Passage], wanted: list[Leaf]) -> list[Passage]:
        """What the LLM reads: the question's passages, then up to two more found for each field (over the floor)."""
        pool = list(hits)
        seen = {p.id or p.text for p in pool}
        for leaf in wanted:
            found = [h for h in (await call_retriever(self.retriever, leaf.question, self.k))[:2] if (h.score or 0.0) >= self.floor]
            for h in found:
                if (h.id or h.text) not in seen and not only_instructions(h) and len(pool) < 3 * self.k:
                    pool.append(h)
                    seen.add(h.id or h.text)
        return pool

    async def _field(self, path: list[str | int], field_question: str, chat: Any, pool: list[Passage] | None) -> FieldAnswer:
        if chat is None:  # the model left it empty: the sources do not say
            return FieldAnswer(path=dotted(path), text=None, refused=True, reason="unsupported")
        if pool is None:  # a question of its own
            done = await self.ask(field_question, retriever=self.retriever, k=self.k, min_score=self.min_score, verify=self.verify, chat=chat, judge=self.judge)
        else:  # the model's text over exactly the passages it numbered
            done = await self.ask(field_question, retriever=lambda q, k: list(pool), k=len(pool), min_score=0.0, verify=self.verify, chat=chat, judge=self.judge)
        return FieldAnswer(
            path=dotted(path),
            text=None if done.refused else done.answer,
            refused=done.refused,
            reason=done.reason,
            citations=done.citations,
            faithfulness=done.faithfulness,
        )

    def _answer(self, fields: list[FieldAnswer], data: dict[str, Any]) -> Answer:
        """The whole: refused when every field was (with their most common reason); else the answered fields as
        paragraphs, cited as each field is, so the answer log and audits read them as claims."""
        common = {"provider": self.providers[0].name if self.providers else "extractive", "extractive": not self.providers}
        answered = [f for f in fields if not f.refused and f.text]
        if not answered:
            reasons = [f.reason for f in fields if f.reason]
            answer = Answer.refusal(max(set(reasons), key=reasons.count) if reasons else "unsupported", **common)
        else:
            # one numbering for the prose form: a field's markers refer to its own citations, which may number
            # another search's passages than the next field's
            passages: list[Passage] = []
            quotes: dict[int, list[CharSpan]] = {}
            numbers: dict[str, int] = {}
            texts = []
            for f in answered:
                mapping = {}
                for c in f.citations:
                    key = c.unit_id or c.receipt
                    if key not in numbers:
                        passages.append(Passage(text=c.text, source=c.source, id=c.unit_id, source_uri=c.source_uri, locator=c.locator))
                        numbers[key] = len(passages)
                    mapping[c.index] = numbers[key]
                    quotes.setdefault(numbers[key], []).extend(CharSpan(start=a, end=b) for a, b in c.quote_spans)
                texts.append(MARKER.sub(lambda m, mapping=mapping: f"[{mapping.get(int(m.group(1)), 0)}]", f.text or ""))
            text = "\n\n".join(texts)
            enforced = enforce(text, list(range(1, len(passages) + 1)), passages, quotes)
            answer = Answer(
                answer=enforced.answer,
                refused=False,
                citations=enforced.citations,
                groundedness=groundedness(enforced.answer),
                passages=passages,
                **common,
            )
        answer.structured = Structured(data=data, fields=fields)
        return answer


__all__ = [
    "CannedDraft",
    "FieldAnswer",
    "FieldAsker",
    "Leaf",
    "Structured",
    "ask_structured_llm",
    "json_schema",
    "leaves",
    "dotted",
    "place",
    "structured_messages",
    "value_at",
]
