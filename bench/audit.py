"""Audits on XQuAD (en): does the audit flag exactly the answers whose cited text changed, and how fast is it?

The English XQuAD paragraphs are grouped by article into documents (one `##` section per paragraph) and ingested
into a fresh SQLite index. N questions are answered through the service (extractive), which logs each answer.
Then, seeded, the documents change as they do in real life:

* edit — in 20% of the documents one sentence of one paragraph is reworded;
* delete — 10% of the documents are deleted;
* prepend — 10% of the documents get a new first section (text above the cited text; the cited text is unchanged).

Ground truth per answer: `source_deleted` when a cited document was deleted; `source_changed` when a cited chunk
contained the reworded sentence; else unaffected (`ok`). Peer in the same run: document-level drift, which flags an
answer when its cited document's content hash changed, as a log that kept only document versions would.
Timings: the first audit, the re-run (which must record nothing new), and the audit after the changes.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.common import EVAL, table, use_bench_cache, write_result
from bench.datasets import read_jsonl, sample

EDIT, DELETE, PREPEND = 0.2, 0.1, 0.1


def _documents() -> dict[str, list[str]]:
    articles: dict[str, list[str]] = defaultdict(list)
    for row in read_jsonl(EVAL / "xquad" / "en" / "corpus.jsonl"):
        articles[row["title"]].append(row["text"])
    return dict(articles)


def _markdown(title: str, paragraphs: list[str], intro: str | None = None) -> str:
    # a section added on top comes with its own heading: the sections under it keep theirs (each chunk opens with
    # its heading, so renumbering them would change every chunk's text, not only add one)
    sections = ([f"## About this page\n\n{intro}"] if intro else []) + [f"## Part {i + 1}\n\n{p}" for i, p in enumerate(paragraphs)]
    return f"# {title.replace('_', ' ')}\n\n" + "\n\n".join(sections) + "\n"


def _reword(paragraph: str, rng: random.Random) -> tuple[str, str]:
    """(the paragraph with one sentence reworded, the original sentence)."""
    from sourcerer.sentences import sentences

    parts = sentences(paragraph)
    original = rng.choice(parts)
    return paragraph.replace(original, original.rstrip(".") + ", according to the revised record."), original


def _flag(status: str) -> bool:
    return status != "ok"


def _scores(truth: dict[str, str], predicted: dict[str, str]) -> tuple[float, float, float]:
    """(precision, recall, exact status accuracy) of flagging affected answers."""
    tp = sum(1 for a in truth if _flag(truth[a]) and _flag(predicted[a]))
    fp = sum(1 for a in truth if not _flag(truth[a]) and _flag(predicted[a]))
    fn = sum(1 for a in truth if _flag(truth[a]) and not _flag(predicted[a]))
    exact = sum(1 for a in truth if truth[a] == predicted[a]) / len(truth)
    return tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0, exact


def run(n: int) -> dict:
    use_bench_cache()
    from sourcerer.ledger.sqlite import SQLiteLedger
    from sourcerer.retrieval.embedders import local_embedder
    from sourcerer.service.audit import Auditor
    from sourcerer.service.core import Service
    from sourcerer.service.schemas import AnswerRequest, DocumentRequest
    from sourcerer.service.tenancy import new_key
    from sourcerer.store.sqlite import SQLiteIndex

    rng = random.Random(13)
    work = Path(tempfile.mkdtemp(prefix="sourcerer-audit-bench-"))
    service = Service(index=SQLiteIndex(work / "index.db", embedder=local_embedder()), ledger=SQLiteLedger(work / "ledger.db"))
    service.ledger.create_tenant("acme", "enterprise")
    key, record = new_key("acme", ["acme"], ["read", "write"])
    service.ledger.put_key(record)
    ctx = service.authenticate(f"Bearer {key}")

    documents = _documents()
    started = time.perf_counter()
    ids = {}
    for title, paragraphs in documents.items():
        ids[title] = service.ingest(
            ctx, None, DocumentRequest(source_uri=f"{title}.md", text=_markdown(title, paragraphs))
        ).model_dump(mode="json")["document_id"]
    ingest_s = time.perf_counter() - started

    started = time.perf_counter()
    answers: dict[str, dict] = {}  # answer_id -> {titles, texts of cited chunks}
    title_of = {v: k for k, v in ids.items()}
    for query in sample(read_jsonl(EVAL / "xquad" / "en" / "queries.jsonl"), n):
        body = service.answer(ctx, None, AnswerRequest(q=query["text"], top_k=5)).model_dump(mode="json")
        if body["answer"]["refused"]:
            continue
        stored = service.ledger.get_answer("acme", body["answer_id"])
        chunks = service.index.get_chunks("acme", [c.unit_id for c in stored.citations])
        answers[body["answer_id"]] = {
            "titles": {title_of[c.document_id] for c in stored.citations},
            "texts": [h.text for h in chunks],
        }
    answer_s = time.perf_counter() - started

    class CountingIndex:
        """The index, counting the requests an audit makes to it."""

        requests = 0

        def __getattr__(self, name):
            return getattr(service.index, name)

        def get_chunks(self, tenant, ids):
            CountingIndex.requests += 1
            return service.index.get_chunks(tenant, ids)

        def document_chunks(self, tenant, document_id):
            CountingIndex.requests += 1
            return service.index.document_chunks(tenant, document_id)

    def requests_during(run):
        before = CountingIndex.requests
        report = run()
        return report, CountingIndex.requests - before

    auditor = Auditor(CountingIndex(), service.ledger)
    started = time.perf_counter()
    first, first_requests = requests_during(lambda: auditor.run(since=0))
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    rerun, rerun_requests = requests_during(lambda: auditor.run(since=0))
    rerun_s = time.perf_counter() - started

    # --- the documents change ------------------------------------------------------------------------
    titles = sorted(documents)
    rng.shuffle(titles)
    n_edit, n_delete, n_prepend = round(len(titles) * EDIT), round(len(titles) * DELETE), round(len(titles) * PREPEND)
    edited = titles[:n_edit]
    deleted = titles[n_edit : n_edit + n_delete]
    prepended = titles[n_edit + n_delete : n_edit + n_delete + n_prepend]
    reworded: dict[str, str] = {}
    for title in edited:
        paragraphs = list(documents[title])
        j = rng.randrange(len(paragraphs))
        paragraphs[j], reworded[title] = _reword(paragraphs[j], rng)
        service.ingest(ctx, None, DocumentRequest(source_uri=f"{title}.md", text=_markdown(title, paragraphs))).model_dump(
            mode="json"
        )
    for title in deleted:
        service.delete_document(ctx, None, ids[title]).model_dump(mode="json")
    for title in prepended:
        intro = f"This page collects notes about {title.replace('_', ' ')} for readers new to the subject."
        service.ingest(
            ctx, None, DocumentRequest(source_uri=f"{title}.md", text=_markdown(title, documents[title], intro))
        ).model_dump(mode="json")

    truth = {}
    for answer_id, seen in answers.items():
        if seen["titles"] & set(deleted):
            truth[answer_id] = "source_deleted"
        elif any(reworded.get(t, "\0") in text for t in seen["titles"] for text in seen["texts"]):
            truth[answer_id] = "source_changed"
        else:
            truth[answer_id] = "ok"
    document_level = {
        a: "source_changed" if seen["titles"] & {*edited, *deleted, *prepended} else "ok" for a, seen in answers.items()
    }
    document_level.update({a: "source_deleted" for a, seen in answers.items() if seen["titles"] & set(deleted)})

    started = time.perf_counter()
    after, after_requests = requests_during(lambda: auditor.run(since=0))
    after_s = time.perf_counter() - started
    predicted = {f.answer_id: f.status for f in after.findings}

    audit_p, audit_r, audit_exact = _scores(truth, predicted)
    doc_p, doc_r, doc_exact = _scores(truth, document_level)
    counts = {s: sum(1 for v in truth.values() if v == s) for s in ("ok", "source_changed", "source_deleted")}
    detection = table(
        f"Drift detection, XQuAD en: {len(answers)} logged answers over {len(documents)} documents "
        f"({n_edit} edited, {n_delete} deleted, {n_prepend} with a section added on top); truth {counts}",
        ["method", "precision", "recall", "exact status"],
        [
            ["chunk receipts (sourcerer audit)", audit_p, audit_r, audit_exact],
            ["document content hash (peer)", doc_p, doc_r, doc_exact],
        ],
    )
    speed = table(
        "Audit speed (local judge, 2 cores)",
        ["run", "answers checked", "new findings", "index requests", "seconds", "answers/s"],
        [
            [name, r.answers_checked, len(r.recorded), requests, f"{seconds:.3f}", f"{r.answers_checked / seconds:.0f}"]
            for name, r, requests, seconds in (
                ("first audit", first, first_requests, first_s),
                ("re-run, nothing changed", rerun, rerun_requests, rerun_s),
                ("after the changes", after, after_requests, after_s),
            )
        ],
    )
    setup = f"\nSetup: ingest {ingest_s:.1f} s, {n} questions answered in {answer_s:.1f} s ({len(answers)} answered, the rest refused).\n"
    data = {
        "answers": len(answers),
        "documents": len(documents),
        "truth": counts,
        "audit": {"precision": audit_p, "recall": audit_r, "exact": audit_exact},
        "document_hash": {"precision": doc_p, "recall": doc_r, "exact": doc_exact},
        "by_status_after": after.by_status(),
        "seconds": {"first": first_s, "rerun": rerun_s, "after": after_s},
        "index_requests": {"first": first_requests, "rerun": rerun_requests, "after": after_requests},
        "new_findings": {"first": len(first.recorded), "rerun": len(rerun.recorded), "after": len(after.recorded)},
        "disagreements": [
            {"answer_id": f.answer_id, "truth": truth[f.answer_id], "audit": f.status, "detail": f.detail}
            for f in after.findings
            if truth[f.answer_id] != f.status
        ],
    }
    write_result("audit", detection + "\n" + speed + setup, data)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=300, help="questions to answer (default 300)")
    run(parser.parse_args().n)


if __name__ == "__main__":
    main()
