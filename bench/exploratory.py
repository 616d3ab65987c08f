"""Exploratory benchmark (`bench/data/exploratory/`): a small business's own pages, asked as its customers ask.

Each set is one business's pages in one language (`docs/`, read and chunked as `sourcerer ask --passages FOLDER`
reads them) and the questions a customer would ask (`questions.jsonl`): `{"q": ..., "a": [...]}` where `a` lists
text the answer's first cited sentence must hold, or is null where the pages do not answer the question (a
near-miss: same business, something it does not say — a sauna at a pool, a price for a group the pages never
price, a day they never name). Written for this benchmark after the code it first measured, never used in
training or in choosing a threshold; sets added later are first measured on the code as it stood.

Outcomes per question: **right** (answered, first citation holds the expected text), **wrong sentence**
(answered with another sentence), **refused** an answerable question, **refused right** a near-miss, and
**answered a near-miss** (the one failure the product exists to prevent). Peers in the same run: the reading
model on, and no model at all (lexical only).
"""

from __future__ import annotations

import argparse
import json

from bench.common import MODES, ROOT, answer_mode, table, use_bench_cache, write_result
from bench.metrics import mean

DATA = ROOT / "bench" / "data" / "exploratory"


def load() -> list[dict]:
    sets = []
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        lines = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        sets.append(
            {
                "name": folder.name,
                "lang": folder.name.rsplit("_", 1)[-1],
                "docs": folder / "docs",
                "questions": [json.loads(line) for line in lines if line.strip()],
            }
        )
    return sets


def outcome(answer, expected: list[str] | None) -> str:
    if expected is None:
        return "refused right" if answer.refused else "answered a near-miss"
    if answer.refused:
        return "refused"
    first = next((c.quote for c in answer.citations if c.quote), "")
    squash = lambda s: " ".join(s.split())  # noqa: E731
    return "right" if any(squash(e) in squash(first) for e in expected) else "wrong sentence"


def run(modes: tuple[str, ...] = MODES) -> dict:
    use_bench_cache()
    from sourcerer import ask
    from sourcerer.cli.ask import load_passages

    sets = load()
    data: dict = {"sets": [s["name"] for s in sets], "modes": {}}
    rows, lang_rows = [], []
    for mode in modes:
        with answer_mode(mode):
            results = []
            for s in sets:
                passages = load_passages(s["docs"])
                for item in s["questions"]:
                    answer = ask(item["q"], passages=passages, chat="extractive")
                    results.append(
                        {
                            "set": s["name"],
                            "lang": s["lang"],
                            "q": item["q"],
                            "outcome": outcome(answer, item["a"]),
                            "reason": answer.reason,
                            "answer": answer.answer,
                        }
                    )
        answerable = [r for r in results if r["outcome"] in ("right", "wrong sentence", "refused")]
        near_misses = [r for r in results if r["outcome"] in ("refused right", "answered a near-miss")]
        counts = {
            o: sum(r["outcome"] == o for r in results)
            for o in ("right", "wrong sentence", "refused", "refused right", "answered a near-miss")
        }
        data["modes"][mode] = {
            "answerable_right": mean([r["outcome"] == "right" for r in answerable]),
            "near_misses_refused": mean([r["outcome"] == "refused right" for r in near_misses]),
            "counts": counts,
            "by_language": {},
            "misses": [r for r in results if r["outcome"] not in ("right", "refused right")],
        }
        rows.append(
            [
                mode,
                len(answerable),
                data["modes"][mode]["answerable_right"],
                counts["wrong sentence"],
                counts["refused"],
                len(near_misses),
                data["modes"][mode]["near_misses_refused"],
                counts["answered a near-miss"],
            ]
        )
        for lang in sorted({r["lang"] for r in results}):
            mine = [r for r in results if r["lang"] == lang]
            yes = [r for r in mine if r in answerable]
            no = [r for r in mine if r in near_misses]
            right, refused = mean([r["outcome"] == "right" for r in yes]), mean([r["outcome"] == "refused right" for r in no])
            data["modes"][mode]["by_language"][lang] = {"answerable_right": right, "near_misses_refused": refused}
            lang_rows.append([mode, lang, len(yes), right, len(no), refused])
    n_questions = sum(len(s["questions"]) for s in sets)
    text = table(
        f"Exploratory — {len(sets)} businesses' pages, {n_questions} customer questions "
        "(answerable: answered with the right sentence; near-misses: refused)",
        ["system", "answerable", "right", "wrong sentence", "refused", "near-misses", "refused", "answered"],
        rows,
    )
    text += "\n" + table("By language", ["system", "language", "answerable", "right", "near-misses", "refused"], lang_rows)
    default = data["modes"].get(MODES[1])
    if default:
        text += (
            "\nWhere the default path misses:\n"
            + "\n".join(
                f'- {m["set"]}: "{m["q"]}" — {m["outcome"]}' + (f" ({m['reason']})" if m["reason"] else f": {m['answer'][:90]!r}")
                for m in default["misses"]
            )
            + "\n"
        )
    write_result("exploratory", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=MODES, action="append", help="only this path (repeatable; default: all three)")
    args = parser.parse_args()
    run(tuple(args.mode) if args.mode else MODES)
