"""Multi-turn benchmark (`bench/data/multiturn.jsonl`): 67 conversations of 2–3 turns over small knowledge bases
(six of them entity swaps: "And express shipping?", "and for ibuprofen?"; fifteen, `intent-*`, written to test
that a rewrite keeps the question's intent before the rule was changed to: "What is the maximum daily dose of
paracetamol?" + "And ibuprofen?"; six, `sentence-*`, over an IT policy of several sentences a passage, written
with the rules that read a follow-up's topic in the sentence: "and if it is stolen?", "And personal laptops?";
`bench/data/multiturn_kb.json`: shop, SaaS, engineering, HR, travel, medicine, French HR and shop, German, IT).

Each turn is asked with the conversation so far as `history` (the previous answers included), no LLM. A
follow-up counts when it is answered and cites the passage it is about, and, where the turn names what it
`says`, when the answer's first sentence holds it. Peer in the same run: the previous
release's follow-up rule (the previous question's words appended to the follow-up).
"""

from __future__ import annotations

import argparse
import json
import re

from bench.common import MODES, ROOT, answer_mode, table, use_bench_cache, write_result
from bench.metrics import mean

DATA = ROOT / "bench" / "data" / "multiturn.jsonl"
KB = ROOT / "bench" / "data" / "multiturn_kb.json"


def append_previous_words(question: str, history: list[dict]) -> str:
    """The previous release's rule: append the previous user question's words the follow-up lacks."""
    from sourcerer.text import terms

    previous = next((t["text"] for t in reversed(history) if t["role"] == "user"), "")
    have = set(terms(question))
    extra = [w for w in re.findall(r"\w+", previous) if terms(w) and not any(t in have for t in terms(w))]
    return f"{question} {' '.join(dict.fromkeys(extra))}".strip()


def converse(conversation: dict, kb: dict, rewrite=None) -> list[bool]:
    """Ask every turn; True for each follow-up (turn 2 on) answered from its expected passage."""
    from sourcerer import ask
    from sourcerer.citations import strip_markers
    from sourcerer.sentences import sentences

    passages = [{"text": text, "source": key} for key, text in kb[conversation["kb"]].items()]
    history: list[dict] = []
    outcomes = []
    for n, turn in enumerate(conversation["turns"]):
        question = turn["q"] if rewrite is None or not history else rewrite(turn["q"], history)
        answer = ask(question, passages=passages, chat="extractive", history=None if rewrite else history or None)
        if n > 0:
            right_passage = turn["source"] in {c.label for c in answer.citations}
            # where a passage holds several sentences, the one the follow-up asks about is said first
            says = turn.get("says")
            right_sentence = says is None or says in (sentences(strip_markers(answer.answer)) or [""])[0]
            outcomes.append(not answer.refused and right_passage and right_sentence)
        history += [{"role": "user", "text": turn["q"]}, {"role": "assistant", "text": answer.answer}]
    return outcomes


def run() -> dict:
    use_bench_cache()
    conversations = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    kb = json.loads(KB.read_text(encoding="utf-8"))
    data: dict = {"n_conversations": len(conversations), "modes": {}}
    rows = []
    for mode in MODES:
        with answer_mode(mode):
            ours = [ok for c in conversations for ok in converse(c, kb)]
            legacy = [ok for c in conversations for ok in converse(c, kb, rewrite=append_previous_words)]
        data["modes"][mode] = {"follow_ups": len(ours), "answered_from_right_passage": mean(ours), "previous_rule": mean(legacy)}
        rows.append([f"sourcerer, {mode}", len(ours), mean(ours)])
        rows.append([f"previous release (previous words appended), {mode}", len(legacy), mean(legacy)])
    text = table(
        f"Multi-turn — {len(conversations)} conversations, follow-ups without an LLM (target ≥ 0.95)",
        ["system", "follow-ups", "answered from the right passage"],
        rows,
    )
    write_result("multiturn", text, data)
    return data


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()
    run()
