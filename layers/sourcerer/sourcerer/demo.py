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


SEED_PASSAGES = [
    {"text": "Standard shipping takes 3 to 5 business days within the continental United States.", "source": "Shipping Policy"},
    {"text": "Returns are accepted within 30 days of delivery for a full refund on unused items.", "source": "Returns Policy"},
]


def _show(question: str, passages: list[dict], **kwargs) -> None:
    label = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    print(f"── ask({question!r}{', ' + label if label else ''})")
    print(render(ask(question, passages=passages, **kwargs), question=question))
    print()


def run_demo() -> None:
    print("Sourcerer demo — cited answers or honest refusals (extractive synthesiser and local judge:")
    print("no key, no network)\n")
    print("━━ The quickstart: two passages ━━\n")
    _show("How long does standard shipping take?", SEED_PASSAGES)
    _show("Do you offer a lifetime warranty?", SEED_PASSAGES)
    _show("How long does standard shipping take?", SEED_PASSAGES, verify=True)

    passages = sample_passages()
    print(f"━━ More questions over {len(passages)} bundled sample passages ━━\n")
    for question, kwargs in [
        ("When is chat support available?", {"verify": "strict"}),
        ("How long do refunds take?", {}),
        ("标准配送需要多长时间？", {}),
        ("Is there a lifetime warranty on appliances?", {}),
        ("What is the capital of France?", {}),
        ("   ", {}),
    ]:
        _show(question, passages, **kwargs)

    print("━━ A model that misquotes its source, caught by verify='strict' ━━\n")
    question = "How long does standard shipping take?"
    answer = ask(question, passages=passages, chat=CarelessModel(), verify="strict", judge="local")
    print(render(answer, question=question))
