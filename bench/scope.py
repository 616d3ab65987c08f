"""Named-scope benchmark: how often the check refuses (`sourcerer.synthesis.scope`), on sets that hold the answer and
on sets that do not.

XQuAD en (the only XQuAD language written with capitals), split by article as everywhere
(`bench.datasets.held_out_articles()`): the check was designed on the other half and is reported on the held-out
one, both shown. For each question two passage sets, as `bench/train/answerability.py` builds them:

* **answerable**: the gold paragraph and four random paragraphs (refusing it is a false refusal);
* **same topic, no answer**: up to five other paragraphs of the gold paragraph's article (the same names and
  terms, not the fact: refusing it is right).

The sentence checked is the one the default path would answer with (the sentence model's best), whatever the
answerability model decides, so the rates are the check's own. Peer in the same run: a missing name alone,
without the condition that the answer names something else. The last column is the asked-kind check
(`missing_kind`: "international shipping" over sources on standard and express shipping), on the same sets and
on XQuAD zh's and ar's (its Chinese reading: 产假 over sources on 年假 and 婚假; its Arabic one: الباقة العائلية over
sources on الباقة الأساسية and الباقة المميزة; names are read in neither). The asked
number (`missing_number`: "What does a 404 mean?" over a page on 401, 403 and 503) is read in every language, and
reported on XQuAD en, zh and ar.
"""

from __future__ import annotations

import argparse
import random

from bench.common import EVAL, table, use_bench_cache, write_result
from bench.datasets import held_out_articles, read_jsonl, xquad_qrels, xquad_titles
from bench.metrics import mean

LANGUAGES = ("en", "zh", "ar")


def _sets(part: str, n: int, seed: int = 3, lang: str = "en") -> list[tuple[str, str, list[dict]]]:
    titles, held = xquad_titles(), held_out_articles()
    corpus = {r["_id"]: r for r in read_jsonl(EVAL / "xquad" / lang / "corpus.jsonl") if (titles[r["_id"]] in held) == (part == "held-out")}
    qrels = xquad_qrels(lang)
    queries = [q for q in read_jsonl(EVAL / "xquad" / lang / "queries.jsonl") if qrels[q["_id"]] in corpus]
    rng = random.Random(seed)
    rng.shuffle(queries)
    by_article: dict[str, list[str]] = {}
    for pid in sorted(corpus):
        by_article.setdefault(titles[pid], []).append(pid)
    out = []
    for query in queries[:n]:
        gold = qrels[query["_id"]]
        siblings = [p for p in by_article[titles[gold]] if p != gold][:5]
        for kind, ids in (("answerable", [gold, *rng.sample(sorted(p for p in corpus if p != gold), 4)]), ("same topic, no answer", siblings)):
            if ids:
                out.append((kind, query["text"], [{"text": corpus[i]["text"], "source": titles[i].replace("_", " ")} for i in ids]))
    return out


def run(n: int) -> dict:
    use_bench_cache()
    from sourcerer.models import Passage
    from sourcerer.settings import get_settings
    from sourcerer.synthesis.chain import extractive_synthesizer
    from sourcerer.synthesis.scope import missing_kind, missing_names, missing_number, scope_mismatch

    synthesizer = extractive_synthesizer(get_settings())
    rows, data = [], {}
    for part in ("design", "held-out"):
        for lang in LANGUAGES:
            fired: dict[str, list[bool]] = {}  # names (`scope_mismatch`), read in English only
            alone: dict[str, list[bool]] = {}
            by_kind: dict[str, list[bool]] = {}  # the asked kind (`missing_kind`), read in English, Chinese and Arabic
            by_number: dict[str, list[bool]] = {}  # the asked number (`missing_number`), in every language
            for kind, question, raw in _sets(part, n, lang=lang):
                passages = [Passage(text=p["text"], source=p["source"], score=1.0) for p in raw]
                analysis = synthesizer.analyse(question, passages)
                if not analysis.sentences:
                    continue
                sources = [t for p in passages for t in (p.text, p.source)]
                best = [analysis.sentences[0].text]
                fired.setdefault(kind, []).append(scope_mismatch(question, sources, best) is not None)
                alone.setdefault(kind, []).append(bool(missing_names(question, sources)))
                by_kind.setdefault(kind, []).append(missing_kind(question, sources, best) is not None)
                by_number.setdefault(kind, []).append(missing_number(question, sources, best) is not None)
            data[f"{part} {lang}"] = {
                kind: {
                    "sets": len(v),
                    "asked_kind": mean(by_kind[kind]),
                    "asked_number": mean(by_number[kind]),
                    **({"refused": mean(v), "missing_name_alone": mean(alone[kind])} if lang == "en" else {}),
                }
                for kind, v in fired.items()
            }
            for kind, v in fired.items():
                names = [mean(v), mean(alone[kind])] if lang == "en" else ["—", "—"]
                rows.append([f"{part} ({lang})", kind, len(v), *names, mean(by_kind[kind]), mean(by_number[kind])])
    text = table(
        "Named scope on XQuAD en (the asked kind and the asked number on zh and ar too) — share of passage sets "
        "the check refuses (answerable: false refusals; same topic: right refusals)",
        [
            "articles",
            "passage set",
            "sets",
            "refused by the check",
            "peer: a missing name alone",
            "asked kind (missing_kind)",
            "asked number (missing_number)",
        ],
        rows,
    )
    write_result("scope", text, data)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=400, help="questions per half (default 400)")
    run(parser.parse_args().n)


if __name__ == "__main__":
    main()
