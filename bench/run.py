"""Run every benchmark and print their tables (results also in bench/results/)."""

from __future__ import annotations

import argparse

from bench import (
    audit,
    cache,
    capacity,
    containment,
    faq,
    groundedness,
    ingest,
    load,
    mixed,
    multiturn,
    opensearch_cluster,
    opensearch_parity,
    partial,
    reader_eval,
    refusal,
    relevance,
    retrieval,
    scale,
    service,
    speed,
    streaming,
    verification,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small samples, for a smoke run")
    quick = parser.parse_args().quick
    reader_eval.run(20 if quick else 120, 50 if quick else 300, write_operating_points=False)
    relevance.run(8 if quick else 30)
    verification.run(300 if quick else 2000, 50 if quick else 300)
    partial.run(50 if quick else 300, 300 if quick else 2000)
    groundedness.run(30 if quick else 200)
    refusal.run(50 if quick else 250)
    containment.run(100 if quick else 1190)
    faq.run()
    multiturn.run()
    speed.run(5 if quick else 30)
    retrieval.run(30 if quick else None)
    service.run(100 if quick else service.DEFAULT_CORPUS)
    ingest.run(10 if quick else 30)
    scale.run((10_000,) if quick else scale.SIZES, 30 if quick else 100)
    audit.run(50 if quick else 600)
    load.run(5 if quick else 60, 50 if quick else 300, 1 if quick else 5)
    mixed.run(10 if quick else 60, 30 if quick else 100)
    cache.run()
    streaming.run(2 if quick else 6)
    capacity.main([])  # reads service.json, so it runs after the service benchmark
    # OPENSEARCH_URL, else embedded nodes (tools/opensearch; skipped without Java)
    opensearch_parity.main(["--docs", "200", "--queries", "30"] if quick else [])
    opensearch_cluster.main(["--docs", "15", "--settle", "3"] if quick else [])


if __name__ == "__main__":
    main()
