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

Two more sets, written after the 67: `multiturn_nearmiss.jsonl`, 24 follow-ups that swap in a thing the knowledge
base does not cover ("And aspirin?" after the paracetamol dose, "And the Starter plan?"), to be refused; and
`multiturn_heldout.jsonl`, 19 conversations over three knowledge bases none of the rules was written on (a gym, a
library, a Spanish clinic: 11 follow-ups to answer, 8 to refuse), written before the change they first measured
(a follow-up that swaps the topic decided by the sentence models with the reader on, and a hyphenated topic looked
for whole); and `multiturn_heldout2.jsonl`, 19 more over a Chinese shop, a Japanese hotel, an Arabic bank and an
English vet clinic (10 to answer, 9 to refuse), written after that change and before the two rules found on it (a
fee written onto a Chinese or Japanese topic, "next day" as a length of time); and `multiturn_heldout3.jsonl`, 24
over a French nursery, a German gym, a Spanish hotel, a Chinese school, a Japanese clinic and an Arabic gym (15 to
answer, 9 to refuse), written after those and before the rule found on it (a Chinese or Japanese follow-up that
names a thing of its own is a question of its own); and `multiturn_heldout4.jsonl`, 25 over an English car
insurer, a French bakery, a German library, a Chinese phone carrier, a Japanese salon and an Arabic clinic (16 to
answer, 9 to refuse), written after that and before the three changes found on it (every follow-up the rule
rewrote decided by the sentence models, a word that says when no focus, an Arabic thing of one word priced); and
`multiturn_heldout5.jsonl`, 21 over an English coworking space, a French museum, a German vet, a Spanish bike
hire, a Chinese gym and a Japanese ryokan (14 to answer, 7 to refuse), written after every change of that stop
and measured once, on its final code.
"""

from __future__ import annotations

import argparse
import json
import re

from bench.common import MODES, ROOT, answer_mode, table, use_bench_cache, write_result
from bench.metrics import mean

DATA = ROOT / "bench" / "data" / "multiturn.jsonl"
NEAR_MISSES = ROOT / "bench" / "data" / "multiturn_nearmiss.jsonl"
HELD_OUT = tuple(ROOT / "bench" / "data" / f"multiturn_heldout{n}.jsonl" for n in ("", "2", "3", "4", "5"))
KB = ROOT / "bench" / "data" / "multiturn_kb.json"


def append_previous_words(question: str, history: list[dict]) -> str:
    """The previous release's rule: append the previous user question's words the follow-up lacks."""
    from sourcerer.text import terms

    previous = next((t["text"] for t in reversed(history) if t["role"] == "user"), "")
    have = set(terms(question))
    extra = [w for w in re.findall(r"\w+", previous) if terms(w) and not any(t in have for t in terms(w))]
    return f"{question} {' '.join(dict.fromkeys(extra))}".strip()


def converse(conversation: dict, kb: dict, rewrite=None) -> list[tuple[bool, bool]]:
    """Ask every turn; for each follow-up (turn 2 on), whether it is a near-miss (`refuse`) and whether it went
    right: refused, or answered from its expected passage."""
    from sourcerer import ask
    from sourcerer.citations import strip_markers
    from sourcerer.sentences import sentences

    passages = [{"text": text, "source": key} for key, text in kb[conversation["kb"]].items()]
    history: list[dict] = []
    outcomes = []
    for n, turn in enumerate(conversation["turns"]):
        question = turn["q"] if rewrite is None or not history else rewrite(turn["q"], history)
        answer = ask(question, passages=passages, chat="extractive", history=None if rewrite else history or None)
        if n > 0 and turn.get("refuse"):
            outcomes.append((True, answer.refused))
        elif n > 0:
            right_passage = turn["source"] in {c.label for c in answer.citations}
            # where a passage holds several sentences, the one the follow-up asks about is said first
            says = turn.get("says")
            right_sentence = says is None or says in (sentences(strip_markers(answer.answer)) or [""])[0]
            outcomes.append((False, not answer.refused and right_passage and right_sentence))
        history += [{"role": "user", "text": turn["q"]}, {"role": "assistant", "text": answer.answer}]
    return outcomes


def _read(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _figures(conversations: list[dict], kb: dict, rewrite=None) -> tuple[list[bool], list[bool]]:
    """The follow-ups to answer and the near-misses to refuse, each True where it went right."""
    outcomes = [o for c in conversations for o in converse(c, kb, rewrite)]
    return [ok for near, ok in outcomes if not near], [ok for near, ok in outcomes if near]


def run() -> dict:
    use_bench_cache()
    conversations, near_misses = _read(DATA), _read(NEAR_MISSES)
    held_out = [_read(path) for path in HELD_OUT]
    kb = json.loads(KB.read_text(encoding="utf-8"))
    data: dict = {
        "n_conversations": len(conversations),
        "n_near_misses": len(near_misses),
        "n_held_out": [len(batch) for batch in held_out],
        "modes": {},
    }
    rows = []
    for mode in MODES:
        with answer_mode(mode):
            ours, _ = _figures(conversations, kb)
            _, refused = _figures(near_misses, kb)
            held = [_figures(batch, kb) for batch in held_out]
            legacy, _ = _figures(conversations, kb, rewrite=append_previous_words)
            _, legacy_refused = _figures(near_misses, kb, rewrite=append_previous_words)
        data["modes"][mode] = {
            "follow_ups": len(ours),
            "answered_from_right_passage": mean(ours),
            "previous_rule": mean(legacy),
            "near_misses": len(refused),
            "near_misses_refused": mean(refused),
            "previous_rule_near_misses_refused": mean(legacy_refused),
            "held_out": [
                {"follow_ups": len(answered), "answered_from_right_passage": mean(answered), "near_misses": len(held_refused),
                 "near_misses_refused": mean(held_refused)}
                for answered, held_refused in held
            ],
        }
        rows.append([f"sourcerer, {mode}", mean(ours), mean(refused), *(mean(x) for pair in held for x in pair)])
        rows.append([f"previous release (previous words appended), {mode}", mean(legacy), mean(legacy_refused), *[""] * 2 * len(held)])
    text = table(
        f"Multi-turn — {len(conversations)} conversations, follow-ups without an LLM (target ≥ 0.95); "
        f"{len(near_misses)} near-miss follow-ups; held-out batches of {' and '.join(str(len(b)) for b in held_out)} conversations",
        [
            "system",
            f"follow-ups answered from the right passage ({len(ours)})",
            f"near-misses refused ({len(refused)})",
            *(
                header
                for n, (answered, held_refused) in enumerate(held, 1)
                for header in (f"held out {n}: answered right ({len(answered)})", f"held out {n}: refused ({len(held_refused)})")
            ),
        ],
        rows,
    )
    write_result("multiturn", text, data)
    return data

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()
    run()
