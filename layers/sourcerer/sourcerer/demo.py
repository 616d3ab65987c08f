"""`sourcerer demo`: the answer pipeline on bundled sample passages, no key, no network."""

from __future__ import annotations

import json
from importlib import resources

from sourcerer.cli import render
from sourcerer.pipeline import ask
from sourcerer.synthesis.providers import ChatReply


def sample_passages() -> list[dict]:
    text = resources.files("sourcerer").joinpath("data/sample_passages.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class CarelessModel:
    """A stand-in chat model that cites correctly but gets a number wrong, to show strict verification
    catching it. Clearly labelled in the output; never used outside the demo."""

    name = "demo:careless-model"

    async def complete(self, messages: list[dict]) -> ChatReply:
        answer = {"answer": "Standard shipping takes 3 to 7 business days [1].", "citations": [1], "refused": False}
        return ChatReply(content=json.dumps(answer))


def run_demo() -> None:
    passages = sample_passages()
    print("Sourcerer demo — cited answers or honest refusals over", len(passages), "sample passages")
    print("(extractive synthesiser and local judge: no key, no network)\n")
    cases = [
        ("How long does standard shipping take?", {}),
        ("Do you offer a lifetime warranty?", {}),
        ("How long does standard shipping take?", {"verify": True}),
        ("When is chat support available?", {"verify": "strict"}),
        ("How long do refunds take?", {}),
        ("标准配送需要多长时间？", {}),
        ("What is the capital of France?", {}),
        ("   ", {}),
    ]
    for question, kwargs in cases:
        label = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        print(f"── ask({question!r}{', ' + label if label else ''})")
        print(render(ask(question, passages=passages, **kwargs), question=question))
        print()
    print("── a model that misquotes its source, with verify='strict'")
    answer = ask("How long does standard shipping take?", passages=passages, chat=CarelessModel(), verify="strict", judge="local")
    print(render(answer, question="How long does standard shipping take?"))
