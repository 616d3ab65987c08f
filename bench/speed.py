"""Speed: `ask()` overhead with the extractive synthesiser and the local judge on 20 passages (p50, p95)."""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from bench.common import EVAL, table, write_result
from bench.datasets import read_jsonl, sample
from bench.metrics import percentile


def run(n: int) -> dict:
    # A fresh, empty embedding cache: "cold" calls really compute the passages' embeddings.
    os.environ["SOURCERER_HOME"] = tempfile.mkdtemp(prefix="sourcerer-speed-")
    from sourcerer import ask

    rows = sample(read_jsonl(EVAL / "nomiracl" / "en.test.relevant.jsonl"), n + 2, seed=3)
    measurements: dict[str, dict[str, list[float]]] = {"cold": {}, "warm": {}, "from the index": {}}
    cold_answers: list[str] = []
    configs = {"ask()": {}, "ask(verify=True)": {"verify": True}, "ask(verify='strict')": {"verify": "strict"}}
    for i in range(n):
        # 20 passages: this question's ten and the next question's ten (distractors)
        passages = [{"text": p["text"], "source": p["docid"]} for p in rows[i]["passages"] + rows[i + 1]["passages"]]
        # cold: the first call over these passages computes their embeddings (e5 on the CPU)
        started = time.perf_counter()
        cold_answers.append(ask(rows[i]["query"], passages=passages, chat="extractive", judge="local", verify=True).answer)
        measurements["cold"].setdefault("ask(verify=True)", []).append((time.perf_counter() - started) * 1000)
        # warm: the same passages again (embeddings cached): the pipeline's own overhead
        for label, kwargs in configs.items():
            started = time.perf_counter()
            ask(rows[i]["query"], passages=passages, chat="extractive", judge="local", **kwargs)
            measurements["warm"].setdefault(label, []).append((time.perf_counter() - started) * 1000)
    same = _from_the_index(rows, n, cold_answers, measurements["from the index"])
    rows_out, data = [], {}
    for phase, by_label in measurements.items():
        for label, values in by_label.items():
            p50, p95 = percentile(values, 50), percentile(values, 95)
            rows_out.append([label, phase, p50, p95, len(values)])
            data[f"{label} {phase}"] = {"p50_ms": p50, "p95_ms": p95}
    text = table(
        "Speed — ask() on 20 passages, extractive synthesiser + local judge (ms)",
        ["call", "embeddings", "p50 ms", "p95 ms", "n"],
        rows_out,
    )
    text += (
        "\ncold: the passages' embeddings are computed in the call (first question over new text); warm: cached;"
        "\nfrom the index: the same passages ingested first, answered with an empty embedding cache — the sentence"
        f"\nvectors stored at ingest are read, only the question and claims are embedded. Same answer as cold: {same}/{n}.\n"
    )
    data["same_answer_as_cold"] = same
    write_result("speed", text, data)
    return data


def _from_the_index(rows: list[dict], n: int, cold_answers: list[str], timings: dict[str, list[float]]) -> int:
    """Ingest the passages, then answer each question over its 20 hits with an empty embedding cache."""
    from sourcerer import ask
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.store.sqlite import SQLiteIndex

    os.environ["SOURCERER_HOME"] = tempfile.mkdtemp(prefix="sourcerer-speed-index-")
    index = SQLiteIndex(os.path.join(os.environ["SOURCERER_HOME"], "index.db"), embedder=local_embedder())
    ids: dict[str, str] = {}
    for row in rows[: n + 1]:
        for p in row["passages"]:
            if p["docid"] not in ids:
                ids[p["docid"]] = index.ingest_document(
                    {"source_uri": f"{p['docid']}.txt", "text": p["text"], "tenant": "bench"}
                )["document_id"]
    os.environ["SOURCERER_HOME"] = tempfile.mkdtemp(prefix="sourcerer-speed-empty-")  # a fresh, empty cache
    same = 0
    for i in range(n):
        passages = []
        for p in rows[i]["passages"] + rows[i + 1]["passages"]:
            for hit in index.document_chunks("bench", ids[p["docid"]]):
                passages.append({**hit.as_passage(), "source": p["docid"]})
        started = time.perf_counter()
        answer = ask(rows[i]["query"], passages=passages, chat="extractive", judge="local", verify=True)
        timings.setdefault("ask(verify=True)", []).append((time.perf_counter() - started) * 1000)
        same += answer.answer == cold_answers[i]
    return same


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=30, help="questions (default 30)")
    run(parser.parse_args().n)
