"""The `sourcerer` command line: ask questions over passages, and a demo of the whole answer pipeline."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sourcerer.errors import SourcererError
from sourcerer.models import Answer


def load_passages(path: str | Path) -> list[dict[str, Any]]:
    """Passages from a `.jsonl` file of `{text, source}` objects, or a folder of text files (one passage per
    paragraph, labelled with the file name)."""
    path = Path(path)
    if path.is_dir():
        passages = []
        for file in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in {".txt", ".md", ""}):
            text = file.read_text(encoding="utf-8", errors="replace")
            for paragraph in text.split("\n\n"):
                if paragraph.strip():
                    passages.append({"text": " ".join(paragraph.split()), "source": file.name})
        return passages
    if not path.exists():
        raise SourcererError(f"no such file or folder: {path}")
    passages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourcererError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise SourcererError(f'{path}:{number}: each line must be an object with a "text" string')
        passages.append(item)
    return passages


def render(answer: Answer, *, question: str | None = None) -> str:
    """A readable rendering: the answer, its citations with their text, or the refusal and its reason."""
    lines = []
    if question:
        lines.append(f"Q: {question}")
    if answer.refused:
        lines.append(f"REFUSED ({answer.reason}): {answer.answer}")
    else:
        lines.append(f"A: {answer.answer}")
        for citation in answer.citations:
            loc = citation.locator
            where = f"chars {loc.start}-{loc.end}" if loc.kind == "char_span" else loc.kind
            lines.append(f"   [{citation.index}] {citation.label} ({where}, {citation.receipt[:19]}…)")
            lines.append(f"       “{citation.text}”")
    if answer.faithfulness is not None:
        f = answer.faithfulness
        lines.append(f"   verified by {f.judge} judge: faithful={f.faithful} score={f.score:.2f}")
        for claim in f.claims:
            mark = "✓" if claim.supported else "✗"
            lines.append(f"     {mark} {claim.claim} — {claim.why}")
    if answer.trace.draft:
        lines.append(f"   refused draft: {answer.trace.draft}")
    lines.append(f"   ({answer.provider}, via {answer.via}, {answer.trace.total_ms:.0f} ms)")
    return "\n".join(lines)


def _cmd_ask(args: argparse.Namespace) -> int:
    from sourcerer.pipeline import ask

    kwargs: dict[str, Any] = {"k": args.k, "min_score": args.min_score, "verify": args.verify}
    if args.passages:
        kwargs["passages"] = load_passages(args.passages)
    elif args.endpoint:
        kwargs["endpoint"] = args.endpoint
    if args.chat:
        kwargs["chat"] = args.chat
    if args.judge:
        kwargs["judge"] = args.judge
    answer = ask(args.question, **kwargs)
    if args.json:
        print(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(render(answer, question=args.question))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from sourcerer.demo import run_demo

    run_demo()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sourcerer",
        description="Ask your documents: a cited answer, or a refusal with its reason.",
        epilog="Environment: SOURCERER_API_KEY / OPENROUTER_API_KEY, SOURCERER_MODEL, SOURCERER_ENDPOINT, "
        "SOURCERER_BEDROCK_MODEL, SOURCERER_PROVIDERS, SOURCERER_EMBEDDER, SOURCERER_GROUNDING_URL, "
        "SOURCERER_HOME. See README.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ask_p = sub.add_parser(
        "ask",
        help="answer a question from passages or a grounding endpoint",
        description="Answer QUESTION with enforced citations, or refuse with a reason.",
        epilog='example: sourcerer ask "How long does shipping take?" --passages policies.jsonl --verify strict',
    )
    ask_p.add_argument("question", help="the question to answer")
    source = ask_p.add_mutually_exclusive_group()
    source.add_argument(
        "--passages", metavar="PATH", help=".jsonl of {text, source}, or a folder of text files (one passage per paragraph)"
    )
    source.add_argument("--endpoint", metavar="URL", help="a grounding endpoint (default: SOURCERER_GROUNDING_URL)")
    ask_p.add_argument("--k", type=int, default=5, help="passages to retrieve (default 5)")
    ask_p.add_argument(
        "--min-score", type=float, default=0.2, help="refuse when the best passage scores under this (0-1, default 0.2)"
    )
    ask_p.add_argument(
        "--verify",
        nargs="?",
        const=True,
        default=False,
        choices=[True, "strict"],
        type=lambda v: "strict" if v == "strict" else v,
        metavar="strict",
        help="check every claim against its cited passages; 'strict' refuses an unfaithful answer",
    )
    ask_p.add_argument(
        "--chat", choices=["extractive", "openai", "bedrock"], help="synthesiser (default: from the environment, extractive last)"
    )
    ask_p.add_argument(
        "--judge", choices=["local", "llm"], help="verifier (default: llm when a chat model is configured, else local)"
    )
    ask_p.add_argument("--json", action="store_true", help="print the full answer as JSON")
    ask_p.set_defaults(func=_cmd_ask)

    demo_p = sub.add_parser("demo", help="answer sample questions over bundled passages and show the pipeline")
    demo_p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SourcererError as exc:
        print(f"sourcerer: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
