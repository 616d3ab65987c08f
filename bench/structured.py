"""Structured documents benchmark (`bench/data/structured/`): answers that stand under a heading, in a list or in a
table row, as a help centre, a price list or a policy writes them.

Twenty-two documents (Markdown FAQs with question headings, a Markdown price table, an HTML page with a definition
list, an HTML policy with a list, a Markdown list, a semicolon CSV, two medicine leaflets and a payments FAQ whose
lists complete a lead-in: "Do not take ibuprofen if you:", two order pages with numbered steps and FAQ replies, a
plain-text Q:/A: FAQ, two plain sectioned documents: a third leaflet and terms of service, whose answer can stand
in a lower-ranked section than a sentence sharing more of the question's words, two help pages whose steps
stand under a heading that names the procedure: "How to update your payment card", "Comment changer mon adresse
e-mail ?"; and five added with this stop's rules: an IT policy, a German leaflet whose list completes "..., wenn
Sie" in commas, a Spanish one whose list runs "a; b; c.", an HTML account help page with <details> FAQ items, and
a plain-text code of conduct with numbered sections and clauses) in English, French, German and Spanish, ingested
into the SQLite index as `sourcerer ingest` does and asked through its retriever as the service does. 93
questions (`bench/data/structured.jsonl`): 60 whose answer is in the documents (it counts when every expected
sentence is quoted, the answer says the lead-in a quoted line completes, and no other row of the table, nor any
text it names, is in the answer) and 33 near-misses whose answer is not (they count when refused).

Written with the rules it measures (headings open their chunks, a table row joins an answer only by its cells, a
list asked for whole is quoted whole), so it shows what they do and guards them; it is not a held-out set and no
model was fitted on it. Peers in the same run: the reader on, the lexical-only path, and strict verification
(`verify="strict"`), whose relevance check reads a quoted sentence without its heading.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.common import MODES, ROOT, answer_mode, table, use_bench_cache, write_result
from bench.metrics import mean

DOCUMENTS = ROOT / "bench" / "data" / "structured"
QUESTIONS = ROOT / "bench" / "data" / "structured.jsonl"


def load() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def right(answer, item: dict) -> bool:
    """Answered, every expected sentence quoted, the lead-in an expected line completes in the answer (`with`),
    and nothing of another table row (or list) in the answer (`not`); or, for a near-miss (`cite` null), refused."""
    if item["cite"] is None:
        return answer.refused
    quoted = " ".join(c.quote or "" for c in answer.citations)
    return (
        not answer.refused
        and all(expected in quoted for expected in item["cite"])
        and all(lead in answer.answer for lead in item.get("with", []))
        and not any(other in answer.answer for other in item.get("not", []))
    )


def run() -> dict:
    use_bench_cache()
    from sourcerer import ask
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    items = load()
    data: dict = {"n_items": len(items), "languages": sorted({i["lang"] for i in items}), "systems": {}}
    rows = []
    systems = [(mode, None) for mode in MODES] + [("bundled model, no reader", "strict")]
    for mode, verify in systems:
        name = f"sourcerer, {mode}" + (", strict verification" if verify else "")
        with answer_mode(mode), tempfile.TemporaryDirectory() as home:
            index = SQLiteIndex(Path(home) / "index.db", embedder=None if mode == "lexical only" else local_embedder())
            index.ingest_path(DOCUMENTS)
            retriever = index.retriever(tenant="local")
            answerable, absent, ms, failures = [], [], [], []
            by_lang: dict[str, list[bool]] = {}
            for item in items:
                started = time.perf_counter()
                answer = ask(item["q"], retriever=retriever, chat="extractive", verify=verify or False)
                ms.append((time.perf_counter() - started) * 1000)
                ok = right(answer, item)
                (absent if item["cite"] is None else answerable).append(ok)
                by_lang.setdefault(item["lang"], []).append(ok)
                if not ok:
                    failures.append({"id": item["id"], "reason": answer.reason, "answer": answer.answer})
            index.close()
        data["systems"][name] = {
            "answerable_answered_right": mean(answerable),
            "near_misses_refused": mean(absent),
            "by_language_accuracy": {k: mean(v) for k, v in sorted(by_lang.items())},
            "ms_per_question": mean(ms),
            "failures": failures,
        }
        rows.append([name, mean(answerable), mean(absent), mean(ms)])
    n_answerable = sum(1 for i in items if i["cite"] is not None)
    text = table(
        f"Structured documents — {n_answerable} answerable + {len(items) - n_answerable} near-miss questions over "
        f"headings, lists and tables, {len(data['languages'])} languages (designed with the rules; not held out)",
        ["system", "answerable: answered, right sentences only", "near-misses: refused", "ms/question"],
        rows,
    )
    for name, result in data["systems"].items():
        text += f"\nMissed, {name}: " + (", ".join(f["id"] for f in result["failures"]) or "none")
    text += "\n"
    write_result("structured", text, data)
    return data


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()
    run()
