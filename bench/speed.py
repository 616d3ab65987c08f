"""Speed: `ask()` overhead with the extractive synthesiser and the local judge on 20 passages (p50, p95)."""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from bench.common import EVAL, percentile, read_jsonl, sample, table, write_result


def run(n: int) -> dict:
    # A fresh, empty embedding cache: "cold" calls really compute the passages' embeddings.
    os.environ["SOURCERER_HOME"] = tempfile.mkdtemp(prefix="sourcerer-speed-")
    from sourcerer import ask

    rows = sample(read_jsonl(EVAL / "nomiracl" / "en.test.relevant.jsonl"), n + 2, seed=3)
    measurements: dict[str, dict[str, list[float]]] = {"cold": {}, "warm": {}}
    configs = {"ask()": {}, "ask(verify=True)": {"verify": True}, "ask(verify='strict')": {"verify": "strict"}}
    for i in range(n):
        # 20 passages: this question's ten and the next question's ten (distractors)
        passages = [{"text": p["text"], "source": p["docid"]} for p in rows[i]["passages"] + rows[i + 1]["passages"]]
        # cold: the first call over these passages computes their embeddings (e5 on the CPU)
        started = time.perf_counter()
        ask(rows[i]["query"], passages=passages, chat="extractive", judge="local", verify=True)
        measurements["cold"].setdefault("ask(verify=True)", []).append((time.perf_counter() - started) * 1000)
        # warm: the same passages again (embeddings cached): the pipeline's own overhead
        for label, kwargs in configs.items():
            started = time.perf_counter()
            ask(rows[i]["query"], passages=passages, chat="extractive", judge="local", **kwargs)
            measurements["warm"].setdefault(label, []).append((time.perf_counter() - started) * 1000)
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
    text += "\ncold: the passages' embeddings are computed in the call (first question over new text); warm: cached.\n"
    write_result("speed", text, data)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=30, help="questions (default 30)")
    run(parser.parse_args().n)
