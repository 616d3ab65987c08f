"""`sourcerer tenants`, `keys`, `audit`, `serve` and `demo`: the operator's commands. The rules they apply
(known tiers, valid settings, scopes inside the tenant) are the service's admin use cases."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sourcerer.cli.common import groups, open_index_of, tenant_name
from sourcerer.errors import SourcererError


def _cmd_tenants(args: argparse.Namespace) -> int:
    from sourcerer.ledger import open_ledger
    from sourcerer.service import admin

    ledger = open_ledger()
    if args.action == "list":
        from sourcerer.store import open_index

        # every tenant with keys or documents: one ingested by the CLI alone has no ledger entry, and still counts
        holding = set(open_index().tenants())
        names = sorted(set(ledger.list_tenants()) | holding)
        tenants = [
            admin.tenant_view(ledger.get_tenant(name) or {"tenant": name, "tier": "none (documents only)"}) for name in names
        ]
        if args.json:
            print(json.dumps(tenants))
        else:
            for t in tenants:
                print(f"{t['tenant']:24} {t['tier']:11} {', '.join(f'{k}={json.dumps(v)}' for k, v in t['settings'].items())}")
            print(f"{len(tenants)} tenants")
        return 0
    if not args.tenant:
        raise SourcererError(f"tenants {args.action} needs --tenant")
    if args.action == "create":
        tenant = admin.create_tenant(ledger, args.tenant, args.tier or "free")
    else:
        if args.store_text is None and args.tier is None:
            raise SourcererError("tenants set needs --tier or --store-text")
        settings = {"store_text": args.store_text == "true"} if args.store_text is not None else None
        tenant = admin.update_tenant(ledger, args.tenant, tier=args.tier, settings=settings)
    settings_text = ", ".join(f"{k}={json.dumps(v)}" for k, v in tenant["settings"].items())
    print(json.dumps(tenant) if args.json else f"tenant {tenant['tenant']} on tier {tenant['tier']} ({settings_text})")
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    import time

    from sourcerer.ledger import open_ledger
    from sourcerer.service.audit import parse_since
    from sourcerer.service.core import Service

    since = parse_since(args.since, time.time())
    service = Service(index=open_index_of(args), ledger=open_ledger(), reranker=None)
    report = service.run_audit(since, tenants=[args.tenant] if args.tenant else None, rejudge=args.rejudge)
    if args.json:
        print(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        for f in report.as_json():
            mark = "new " if f["new"] else "    "
            print(f"{mark}{f['status']:15} {f['tenant']:12} {f['answer_id']}  {f['detail']}")
        new = report.by_status(only_new=True)
        counts = ", ".join(f"{n} {s}" for s, n in report.by_status().items() if n)
        print(
            f"{report.answers_checked} answers checked ({counts or 'none'}); {len(report.recorded)} new findings"
            + (f" ({', '.join(f'{n} {s}' for s, n in new.items() if n)})" if report.recorded else "")
            + f"; {report.refusals_skipped} refusals skipped"
        )
    for error in report.errors:
        print(f"sourcerer: audit: {error}", file=sys.stderr)
    return 0 if report.complete and not report.errors and not report.by_status()["error"] else 1


def _cmd_handoffs(args: argparse.Namespace) -> int:
    import time

    from sourcerer.ledger import open_ledger
    from sourcerer.service.audit import parse_since

    ledger = open_ledger()
    since = parse_since(args.since, time.time())
    tenants = [args.tenant] if args.tenant else ledger.list_tenants()
    records = [h for tenant in tenants for h in ledger.handoffs(tenant, since=since)]
    if args.json:
        print(json.dumps([h.model_dump(mode="json", exclude={"groups"}) for h in records], indent=2, ensure_ascii=False))
        return 0
    for h in records:
        print(f"{h.answer_id}  {h.tenant:12} {h.bundle.reason:15} {h.bundle.question}")
        print(f"    needed: {h.bundle.needed}")
        for p in h.bundle.passages:
            print(f"    {p.rank}. {p.label} ({p.source_uri or 'no uri'}, {p.receipt[:19]}…): {p.closest_sentence or p.text[:120]}")
    print(f"{len(records)} hand-offs")
    return 0


def _cmd_keys(args: argparse.Namespace) -> int:
    from sourcerer.ledger import open_ledger
    from sourcerer.service import admin

    ledger = open_ledger()
    if args.action == "create":
        if not args.tenant:
            raise SourcererError("keys create needs --tenant")
        perms = ["read", "write", "admin"] if args.admin else groups(args.perms)
        issued = admin.issue_key(ledger, args.tenant, groups(args.scopes), perms, groups(args.groups), tier=args.tier)
        r = issued.record
        if args.key_only:  # for scripts: KEY=$(sourcerer keys create ... --key-only)
            print(issued.key)
        elif args.json:
            print(json.dumps(issued.shown()))
        else:
            print(
                f"{issued.key}\n(shown once; key id {r.key_id}, tenant {r.tenant}, tier {issued.tier}, "
                f"scopes {', '.join(r.scopes)}, perms {', '.join(r.perms)})"
            )
        return 0
    if args.action == "list":
        if not args.tenant:
            raise SourcererError("keys list needs --tenant")
        keys = admin.list_keys(ledger, args.tenant)
        if args.json:
            print(json.dumps(keys))
        else:
            for k in keys:
                state = "revoked" if k["revoked"] else "active"
                print(f"{k['key_id']}  {state:7}  {','.join(k['perms']):16}  {','.join(k['scopes'])}")
        return 0
    if not args.key_id:
        raise SourcererError("keys revoke needs a KEY_ID")
    if ledger.revoke_key(args.key_id):
        print(f"revoked {args.key_id}")
        return 0
    print(f"sourcerer: error: no key {args.key_id}", file=sys.stderr)
    return 2  # a bad id is the caller's mistake, as the README's exit codes say


def recover_charges() -> dict[str, int]:
    """Before the workers start (and fork): settle or give back what a crashed server charged and never settled.
    The index and ledger are opened and closed here, so no worker inherits their connections."""
    import time

    from sourcerer.ledger import open_ledger
    from sourcerer.service.billing import Meter, Prices
    from sourcerer.store import open_index

    ledger = open_ledger()
    if not ledger.pending_usage(before=time.time()):
        return {"settled": 0, "released": 0}
    index = open_index(embedder="none")  # reads stored documents only: no model is loaded before the fork
    try:
        return Meter(ledger, Prices(), time.time).reconcile(index)
    finally:
        getattr(index, "close", lambda: None)()


def _cmd_serve(args: argparse.Namespace) -> int:
    from sourcerer.http.serve import default_workers, run
    from sourcerer.ledger import open_ledger
    from sourcerer.service.admin import local_admin_key

    if args.port:  # a busy port fails here, in one line, before anything is written
        import socket

        with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
            # as the server itself binds: a port whose last server just died (its connections in TIME_WAIT for
            # about a minute) is free to listen on again; only a live listener makes it busy
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((args.host, args.port))
            except OSError as exc:
                raise SourcererError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}; choose another --port") from exc
    recovered = recover_charges()
    if recovered["settled"] or recovered["released"]:
        print(
            f"recovered the charges of requests a crash cut short: {recovered['settled']} settled (their documents "
            f"were stored), {recovered['released']} given back",
            flush=True,
        )
    if not args.no_admin_key:
        issued = local_admin_key(open_ledger(), args.tenant)
        if issued is not None:
            print(f"local admin key for tenant {args.tenant} (shown once): {issued.key}")
        else:
            print(
                f"tenant {args.tenant} has an admin key already; `sourcerer keys create --tenant {args.tenant} --perms admin` mints another"
            )

    def ready(url: str) -> None:
        print(f"Sourcerer API on {url}  ({args.workers or default_workers()} workers; Ctrl-C stops it)", flush=True)
        print(f"  playground: {url}/   API docs (Swagger UI): {url}/docs   spec: {url}/openapi.json", flush=True)

    run(args.host, args.port, workers=args.workers, on_ready=ready)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import os

    from sourcerer.cli.demo import run_demo, run_http_demo
    from sourcerer.settings import get_settings

    # the demo's own home (`<SOURCERER_HOME>/demo`), reset each run: it never touches your index, keys or tenants
    home = get_settings().home / "demo"
    home.mkdir(parents=True, exist_ok=True)
    for name in ("index.db", "ledger.db"):
        for suffix in ("", "-wal", "-shm"):
            (home / f"{name}{suffix}").unlink(missing_ok=True)
    os.environ["SOURCERER_HOME"] = str(home)
    print(f"(demo state in {home}; your own index and keys are untouched)\n")
    run_demo()
    if not args.library_only:
        print()
        run_http_demo()
    return 0


def register(sub: Any) -> None:
    tenants_p = sub.add_parser(
        "tenants",
        help="create a tenant, or change its tier or settings",
        epilog="example: sourcerer tenants set --tenant acme --store-text false",
    )
    tenants_p.add_argument("action", choices=["create", "set", "list"], help="create (tier defaults to free), set or list")
    tenants_p.add_argument("--tenant", type=tenant_name, help="the tenant to create or change")
    tenants_p.add_argument("--tier", choices=["free", "pro", "enterprise"])
    tenants_p.add_argument(
        "--store-text",
        choices=["true", "false"],
        help="keep question and answer text in the answer log (default true); false keeps only their SHA-256 hashes",
    )
    tenants_p.add_argument("--json", action="store_true")
    tenants_p.set_defaults(func=_cmd_tenants)

    audit_p = sub.add_parser(
        "audit",
        help="re-check logged answers against their sources now (ok, source_changed, source_deleted, unfaithful)",
        description="Re-check the answers logged since --since: every citation's receipt against the index as it is "
        "now, then every claim with the configured judge. One finding per answer is stored in the ledger; a finding "
        "the same as the answer's latest is not stored again, so re-running is safe. Exit status 1 when an answer "
        "or tenant could not be checked.",
        epilog="example: sourcerer audit --since 7d --tenant acme --json",
    )
    audit_p.add_argument(
        "--since",
        help="answers created since: ISO 8601 time, epoch seconds or an age like 7d, 12h "
        "(default SOURCERER_AUDIT_WINDOW_DAYS, 30 days)",
    )
    audit_p.add_argument("--tenant", type=tenant_name, help="audit one tenant (default: every tenant)")
    audit_p.add_argument(
        "--rejudge",
        action="store_true",
        help="ask the judge again about answers it already ruled on (by default its verdict on unchanged sources stands)",
    )
    audit_p.add_argument("--index", metavar="URL", help="index URL (default SOURCERER_INDEX, else sqlite under SOURCERER_HOME)")
    audit_p.add_argument(
        "--json", action="store_true", help="print the findings as a JSON list of {answer_id, tenant, status, claims, ...}"
    )
    audit_p.set_defaults(func=_cmd_audit)

    handoffs_p = sub.add_parser(
        "handoffs",
        help="list the hand-offs of refused or partial answers (asked with handoff: true)",
        description="The hand-offs stored since --since: the question, the conversation, why it was refused, the "
        "closest passages with their receipts, and what would answer it.",
        epilog="example: sourcerer handoffs list --tenant acme --since 7d",
    )
    handoffs_p.add_argument("action", choices=["list"])
    handoffs_p.add_argument("--tenant", type=tenant_name, help="one tenant (default: every tenant)")
    handoffs_p.add_argument("--since", help="created since: ISO 8601 time, epoch seconds or an age like 7d (default 30 days)")
    handoffs_p.add_argument("--json", action="store_true", help="print the hand-offs as a JSON list")
    handoffs_p.set_defaults(func=_cmd_handoffs)

    keys_p = sub.add_parser(
        "keys",
        help="create, list or revoke API keys (stored only as hashes)",
        epilog="example: sourcerer keys create --tenant acme --tier pro --scopes acme/alpha --perms read,write",
    )
    keys_p.add_argument("action", choices=["create", "list", "revoke"])
    keys_p.add_argument("key_id", nargs="?", help="the key to revoke")
    keys_p.add_argument("--tenant", type=tenant_name, help="the key's tenant")
    keys_p.add_argument("--tier", choices=["free", "pro", "enterprise"], help="create the tenant on this tier (or change it)")
    keys_p.add_argument("--scopes", help="comma-separated scope paths the key may reach (default: the whole tenant)")
    keys_p.add_argument("--perms", default="read", help="comma-separated permissions: read, write, admin (default read)")
    keys_p.add_argument("--groups", help="comma-separated ACL groups the key holds")
    keys_p.add_argument("--key-only", action="store_true", help="print only the new key (for KEY=$(...) in scripts)")
    keys_p.add_argument("--admin", action="store_true", help="an admin key (read, write, admin), e.g. another for serve")
    keys_p.add_argument("--json", action="store_true")
    keys_p.set_defaults(func=_cmd_keys)

    serve_p = sub.add_parser(
        "serve",
        help="run the HTTP API locally against the embedded index and ledger",
        description="Serve the same API the Lambda functions serve (gunicorn: a worker per core, threads in each) on "
        "the embedded index and ledger under SOURCERER_HOME. Prints an admin key for --tenant the first time; "
        "browsers on localhost may call it (CORS). The spec is at /openapi.json.",
        epilog="example: sourcerer serve --port 8080 --workers 2",
    )
    serve_p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    serve_p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    serve_p.add_argument(
        "--tenant", type=tenant_name, default="local", help="tenant of the admin key printed at start (default local)"
    )
    serve_p.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: one per core); each runs a few threads"
    )
    serve_p.add_argument("--no-admin-key", action="store_true", help="do not create and print a local admin key")
    serve_p.set_defaults(func=_cmd_serve)

    demo_p = sub.add_parser(
        "demo",
        help="answer sample questions over bundled passages, then over the local HTTP API",
        description="A tour: cited answers, refusals and a strict verification over bundled passages, then the HTTP "
        "API on loopback (ingest, answer, audit). It runs in <SOURCERER_HOME>/demo, reset each time.",
        epilog="example: sourcerer demo --library-only",
    )
    demo_p.add_argument("--library-only", action="store_true", help="skip the HTTP part")
    demo_p.set_defaults(func=_cmd_demo)
