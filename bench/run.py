"""Run every benchmark and print their tables (results also in bench/results/)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bench import (
    audit,
    cache,
    capacity,
    claim_batching,
    claim_veto,
    coldstart,
    consistency,
    containment,
    crosslingual,
    engines,
    exploratory,
    faq,
    floor,
    groundedness,
    ingest,
    keyword_speed,
    load,
    mixed,
    multiturn,
    opensearch_cluster,
    opensearch_parity,
    partial,
    reader_budget,
    reader_eval,
    reader_pick,
    reader_veto,
    refusal,
    relevance,
    retrieval,
    scale,
    scope,
    service,
    speed,
    streaming,
    structured,
    verification,
)
from bench.common import RESULTS, ROOT, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small samples, for a smoke run")
    parser.add_argument(
        "--check", action="store_true", help="run nothing: compare the figures in bench/results/ with bench/targets.json"
    )
    args = parser.parse_args()
    if args.check:
        raise SystemExit(check())
    quick = args.quick
    reader_eval.run(20 if quick else 120, 50 if quick else 300, write_operating_points=False)
    reader_budget.run(30 if quick else 125, 5 if quick else 30)
    reader_budget.default_path(5 if quick else 30)
    relevance.run(8 if quick else 30)
    verification.run(300 if quick else 2000, 50 if quick else 300)
    consistency.run(20 if quick else 100, with_model=not quick)
    claim_veto.run(100 if quick else 2000, 20 if quick else 300, 10 if quick else 100)  # after reader_eval: its points
    claim_batching.run(10 if quick else 40)
    partial.run(50 if quick else 300, 300 if quick else 2000)
    groundedness.run(30 if quick else 200)
    refusal.run(50 if quick else 250)
    floor.run(50 if quick else 250)
    reader_pick.run(100 if quick else None, 5 if quick else 30)
    reader_veto.run(100 if quick else None, 5 if quick else 30)
    containment.run(100 if quick else 1190)
    crosslingual.run(30 if quick else 150)
    faq.run()
    exploratory.run()
    structured.run()
    scope.run(100 if quick else 400)
    multiturn.run()
    speed.run(5 if quick else 30)
    retrieval.run(30 if quick else None)
    service.run(100 if quick else service.DEFAULT_CORPUS)
    ingest.run(10 if quick else 30)
    keyword_speed.run(1 if quick else 3)
    engines.run(150 if quick else engines.SIZE)
    scale.run((10_000,) if quick else scale.SIZES, 30 if quick else 100)
    audit.run(50 if quick else 600)
    load.run(5 if quick else 60, 50 if quick else 300, 1 if quick else 5)
    mixed.run(10 if quick else 60, 30 if quick else 100)
    cache.run()
    streaming.run(2 if quick else 6)
    coldstart.run(3 if quick else 5)
    capacity.main([])  # reads service.json, so it runs after the service benchmark
    # OPENSEARCH_URL, else embedded nodes (tools/opensearch; skipped without Java)
    opensearch_parity.main(["--docs", "200", "--queries", "30"] if quick else [])
    opensearch_cluster.main(["--docs", "15", "--settle", "3"] if quick else [])


OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}


def _figures(data: Any, path: list[str], prefix: tuple[str, ...] = ()) -> list[tuple[str, float | None]]:
    """The figures at `path` in a result's JSON, named by the keys a `*` stood for."""
    if not path:
        if data is None and prefix:  # a language, set... the benchmark lists without a figure
            return [(" / ".join(prefix), None)]
        return [(" / ".join(prefix), float(data))] if isinstance(data, (int, float)) else []
    head, rest = path[0], path[1:]
    if head == "*":
        return [f for key, value in (data or {}).items() for f in _figures(value, rest, (*prefix, key))]
    return _figures(data.get(head), rest, prefix) if isinstance(data, dict) and head in data else []


def check() -> int:
    """Each target of bench/targets.json against the latest figure in bench/results/: prints one line per
    figure (met, not met, or no figure yet) and exits 1 when any is not met."""
    rows, unmet = [], 0
    for t in json.loads((ROOT / "bench" / "targets.json").read_text(encoding="utf-8"))["targets"]:
        path = RESULTS / f"{t['file']}.json"
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        found = _figures(data, t["path"])
        if t.get("over"):
            base = dict(_figures(data, t["over"]))
            found = [(name, None if value is None else value / base[""]) for name, value in found if base.get("")]
        run = data.get("run") or {}
        stamp = f"{run['commit']}, {run['date'][:10]}" if run else "unstamped (an older run)"
        if not found:
            rows.append([t["issue"], t["what"], f"{t['op']} {t['target']}", "no figure", "—", stamp])
            unmet += 1
        for name, value in found:
            if value is None:
                rows.append([t["issue"], f"{t['what']} ({name})", f"{t['op']} {t['target']}", "no figure", "—", stamp])
                unmet += 1
                continue
            met = OPS[t["op"]](value, t["target"])
            unmet += not met
            label = f"{t['what']} ({name})" if name else t["what"]
            rows.append([t["issue"], label, f"{t['op']} {t['target']}", round(value, 4), "met" if met else "NOT MET", stamp])
    print(table("Benchmark figures against their targets (bench/targets.json)", ["issue", "figure", "target", "now", "", "run"], rows))
    return 1 if unmet else 0


if __name__ == "__main__":
    main()
