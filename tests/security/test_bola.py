"""Broken object-level authorization, hunted: generated attempts across tenants, scope look-alikes, ACL groups,
key permissions, revoked keys, tiers, and every route and method, against the same resolver the Lambda
functions and `sourcerer serve` run.

Every document carries a unique canary string. After each attempt the suite checks two things against the
index itself (not against what the API says): no response contains a canary its caller may not read, and no
document changed unless its caller may change it (the write rule: it could read the document, and the
document's new place lies within its grants). The seed is fixed, so a failure replays exactly.

Leaks are half of the rule. The other half is completeness: every key, asking in its own scopes, lists,
finds, opens and may delete every document the rule lets it read (an admin key every group of its tenant),
and nothing else.
"""

from __future__ import annotations

import json
import random
import re
import uuid

import pytest
from sourcerer.http import api
from sourcerer.http.serve import LocalContext, to_event
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.scopes import within
from sourcerer.service.core import Service
from sourcerer.service.tenancy import new_key
from sourcerer.store.originals import DirectoryOriginals
from sourcerer.store.sqlite import SQLiteIndex

SEED = 20261201
ATTEMPTS = 2000
CANARY = re.compile(r"canary[0-9a-f]{12}")

TENANTS = {"acme": "pro", "acmex": "pro", "globex": "free"}
PLACES = [  # (tenant, scope, acl) of the seeded documents
    ("acme", "acme", []),
    ("acme", "acme/alpha", []),
    ("acme", "acme/alpha", ["secret"]),
    ("acme", "acme/alpha/backend", []),
    ("acme", "acme/alpha/backend", ["secret", "ops"]),
    ("acme", "acme/alphabet", []),
    ("acme", "acme/beta", ["staff"]),
    ("acmex", "acmex/alpha", []),
    ("globex", "globex/alpha", []),
]
KEYS = [  # (tenant, scopes, perms, groups, revoked)
    ("acme", ["acme"], ["admin"], [], False),
    ("acme", ["acme/alpha"], ["read", "write"], [], False),
    ("acme", ["acme/alpha"], ["read", "write"], ["secret"], False),
    ("acme", ["acme/alpha"], ["write"], [], False),
    ("acme", ["acme/alpha/backend"], ["read", "write"], ["ops"], False),
    ("acme", ["acme/alphabet"], ["read", "write"], ["secret"], False),
    ("acme", ["acme/beta"], ["read", "write"], [], False),
    ("acme", ["acme/alpha", "acme/beta"], ["read", "write"], ["staff"], False),
    ("acme", ["acme/alpha"], ["read"], ["secret"], False),
    ("acme", ["acme"], ["read", "write", "admin"], ["secret"], True),
    ("acmex", ["acmex"], ["read", "write", "admin"], [], False),
    ("globex", ["globex"], ["read", "write"], [], False),
]
SCOPE_SPELLINGS = [
    None,
    "acme/alpha",
    "acme/alpha/",
    "/acme/alpha",
    "acme//alpha",
    "acme/alpha/../beta",
    "acme/./alpha",
    "acme/alpha%2Fbackend",
    "ACME/alpha",
    "acme/Alpha",
    "acme/\u0430lpha",  # Cyrillic a
    "acme/alpha\u200b",
    "acme/alphabet",
    "acme/alpha/backend",
    "acme/beta",
    "acme",
    "acmex/alpha",
    "globex/alpha",
    "",
    " ",
    "acme/alpha/backend/deeper",
    "acme/*",
    "acme/alpha;acme/beta",
]
QUESTIONS = ["failover drill", "canary", "what is the secret code", "runbook", "password rotation"]


class Attacker:
    def __init__(self, tenant, scopes, perms, groups, revoked, secret, key_id):
        self.tenant, self.scopes, self.perms, self.groups, self.revoked = tenant, scopes, perms, groups, revoked
        self.header = f"Bearer {secret}"
        self.key_id = key_id

    def may_read(self, tenant: str, scope: str, acl: list[str]) -> bool:
        if self.revoked or tenant != self.tenant or not ({"read", "admin"} & set(self.perms)):
            return False
        admin = "admin" in self.perms
        return any(within(scope, g) for g in self.scopes) and (not acl or admin or bool(set(acl) & set(self.groups)))

    def may_change(self, tenant: str, scope: str, acl: list[str]) -> bool:
        """The write rule, from the key's grants alone (whatever scope a request names)."""
        if self.revoked or tenant != self.tenant or not ({"write", "admin"} & set(self.perms)):
            return False
        admin = "admin" in self.perms
        return any(within(scope, g) for g in self.scopes) and (not acl or admin or bool(set(acl) & set(self.groups)))


def _seeded(home):
    """A service holding one canary-carrying document at each of PLACES, and an attacker for each of KEYS."""
    index = SQLiteIndex(home / "index.db", embedder=None, originals=DirectoryOriginals(home / "originals"))
    service = Service(index=index, ledger=SQLiteLedger(home / "ledger.db"))
    for tenant, tier in TENANTS.items():
        service.ledger.create_tenant(tenant, tier)
    rng = random.Random(SEED)
    for n, (tenant, scope, acl) in enumerate(PLACES):
        canary = f"canary{rng.getrandbits(48):012x}"
        text = (
            f"# Runbook {n}\n\nThe failover drill code is {canary}. The secret code for this team is {canary}.\n"
            f"Password rotation happens every {n + 2} weeks.\n"
        )
        service.index.ingest_document(
            {"source_uri": f"runbook-{n % 3}.md", "text": text, "tenant": tenant, "scope": scope, "acl": acl}
        )
    attackers = []
    for tenant, scopes, perms, groups, revoked in KEYS:
        secret, record = new_key(tenant, scopes, perms, groups)
        service.ledger.put_key(record)
        if revoked:
            service.ledger.revoke_key(record.key_id)
        attackers.append(Attacker(tenant, scopes, perms, groups, revoked, secret, record.key_id))
    return service, attackers, rng


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return _seeded(tmp_path_factory.mktemp("bola"))


def _snapshot(index: SQLiteIndex) -> dict[tuple[str, str], tuple[str, list[str], str]]:
    rows = index._db().execute("SELECT tenant, document_id, scope, acl, content_hash FROM documents").fetchall()
    return {(t, d): (s, json.loads(a), h) for t, d, s, a, h in rows}


def _sources(index: SQLiteIndex) -> dict[str, tuple[str, str]]:
    return {d: (s, u) for d, s, u in index._db().execute("SELECT document_id, scope, source_uri FROM documents").fetchall()}


def _canary_places(index: SQLiteIndex) -> dict[str, list[tuple[str, str, list[str]]]]:
    places: dict[str, list[tuple[str, str, list[str]]]] = {}
    for tenant, scope, acl, text in index._db().execute("SELECT tenant, scope, acl, text FROM chunks").fetchall():
        for canary in set(CANARY.findall(text)):
            places.setdefault(canary, []).append((tenant, scope, json.loads(acl)))
    return places


def _attempt(
    rng: random.Random, attacker: Attacker, stored: dict[str, tuple[str, str]], answers: list[str]
) -> tuple[str, str, dict | None]:
    """One request. Half the writes aim at a stored document by its own scope and source (the real attack)."""
    documents = list(stored)
    scope = rng.choice(SCOPE_SPELLINGS)
    query = f"?scope={scope}" if scope is not None else ""
    kind = rng.choice(
        ["search", "answer", "list", "delete", "post", "move", "get_answer", "audits", "usage", "handoffs", "get_handoff"]
    )
    target = rng.choice(documents * 3 + ["doc_0000", "doc_" + uuid.UUID(int=rng.getrandbits(128)).hex[:20], "../" + documents[0]])
    if kind == "search":
        body = {"q": rng.choice(QUESTIONS), "top_k": rng.choice([1, 5, 10]), "mode": rng.choice(["keyword", "hybrid"])}
        return "POST", "/v1/search" + query, body
    if kind == "answer":
        # half ask for a hand-off: a refusal then stores the closest passages the asker saw, for people to read
        return "POST", "/v1/answer" + query, {"q": rng.choice(QUESTIONS), "top_k": 5, "handoff": rng.random() < 0.5}
    if kind == "list":
        return "GET", "/v1/documents" + query, None
    if kind == "delete":
        return "DELETE", f"/v1/documents/{target}" + query, None
    if kind == "move":
        return "POST", f"/v1/documents/{target}/move" + query, {"to_scope": rng.choice([s for s in SCOPE_SPELLINGS if s])}
    if kind == "get_answer":
        return "GET", f"/v1/answers/{rng.choice(answers or ['ans_none'])}" + query, None
    if kind == "audits":
        return "GET", "/v1/audits" + query, None
    if kind == "handoffs":
        return "GET", "/v1/handoffs" + query, None
    if kind == "get_handoff":
        return "GET", f"/v1/handoffs/{rng.choice(answers or ['ans_none'])}" + query, None
    if kind == "usage":
        return "GET", "/v1/usage", None
    source_uri = f"runbook-{rng.randrange(3)}.md"
    if documents and rng.random() < 0.5:
        scope, source_uri = stored[rng.choice(documents)]
        query = f"?scope={scope}"
    body = {"source_uri": source_uri, "text": "Overwritten: nothing to see.", "acl": rng.choice([[], [], ["secret"]])}
    return "POST", "/v1/documents" + query, body


def test_generated_attempts_never_leak_a_canary_nor_change_what_the_caller_may_not_change(world, monkeypatch):
    service, attackers, rng = world
    monkeypatch.setattr(api, "get_service", lambda: service)
    app = api.build_app()
    answers: list[str] = []
    places: dict[str, list[tuple[str, str, list[str]]]] = {}  # every place each canary has lived
    statuses: dict[int, int] = {}
    failures: list[str] = []
    for number in range(ATTEMPTS):
        attacker = rng.choice(attackers)
        before = _snapshot(service.index)
        for canary, now in _canary_places(service.index).items():  # the answer log keeps text a document had
            known = places.setdefault(canary, [])
            known.extend(p for p in now if p not in known)
        method, path, body = _attempt(rng, attacker, _sources(service.index), answers)
        event = to_event(method, path, {"Authorization": attacker.header}, json.dumps(body) if body is not None else None)
        response = app.resolve(event, LocalContext())
        status = response["statusCode"]
        statuses[status] = statuses.get(status, 0) + 1
        text = response.get("body") or ""
        where = f"attempt {number}: {method} {path} by {attacker.tenant}{attacker.scopes}{attacker.groups}{attacker.perms}"
        if status >= 500:
            failures.append(f"{where}: {status} {text[:200]}")
        if status == 200 and path.split("?")[0] == "/v1/answer":
            answers.append(json.loads(text)["answer_id"])
        for canary in set(CANARY.findall(text)):
            if not any(attacker.may_read(*place) for place in places.get(canary, [])):
                failures.append(f"{where}: leaked {canary} stored at {places.get(canary)}")
        after = _snapshot(service.index)
        for key, was in before.items():
            if after.get(key) != was and not attacker.may_change(key[0], was[0], was[1]):
                failures.append(f"{where}: changed {key} from {was} to {after.get(key)}")
        for key, now in after.items():
            if key not in before and not attacker.may_change(key[0], now[0], []):
                failures.append(f"{where}: created {key} at {now}")
    handoffs = sum(1 for t in TENANTS for _ in service.ledger.handoffs(t))
    print(f"BOLA: {ATTEMPTS} attempts, statuses {dict(sorted(statuses.items()))}, {handoffs} hand-offs, {len(failures)} failures")
    assert handoffs > 5  # hand-offs holding canaries were there to leak
    # completeness: the key that asked reads its hand-off, and the tenant's admin key lists it
    by_key = {a.key_id: a for a in attackers}
    admin = next(a for a in attackers if a.tenant == "acme" and a.perms == ["admin"])
    listed = json.loads(app.resolve(to_event("GET", "/v1/handoffs", {"Authorization": admin.header}, None), LocalContext())["body"])
    for record in service.ledger.handoffs("acme"):
        asker = by_key[record.key_id]
        got = app.resolve(to_event("GET", f"/v1/handoffs/{record.answer_id}", {"Authorization": asker.header}, None), LocalContext())
        assert got["statusCode"] == 200 and json.loads(got["body"])["handoff"]["answer_id"] == record.answer_id
        assert record.answer_id in {h["answer_id"] for h in listed["handoffs"]}
    assert not failures, "\n".join(failures[:20])
    # the run exercised both sides of the rule, not only refusals
    assert statuses.get(200, 0) > ATTEMPTS // 10 and statuses.get(404, 0) > 20 and statuses.get(403, 0) > 20, statuses


def _call(app, attacker: Attacker, method: str, path: str, body: dict | None = None) -> tuple[int, str]:
    event = to_event(method, path, {"Authorization": attacker.header}, json.dumps(body) if body is not None else None)
    response = app.resolve(event, LocalContext())
    return response["statusCode"], response.get("body") or ""


def test_every_key_lists_finds_opens_and_may_delete_exactly_what_the_rule_lets_it_read(tmp_path, monkeypatch):
    service, attackers, _ = _seeded(tmp_path)
    monkeypatch.setattr(api, "get_service", lambda: service)
    app = api.build_app()
    stored = service.index._db().execute("SELECT tenant, document_id, scope, acl FROM documents").fetchall()
    canary_of = {
        d: CANARY.search(t).group(0)
        for d, t in service.index._db().execute("SELECT document_id, text FROM chunks WHERE text LIKE '%canary%'").fetchall()
    }
    checked = 0
    for attacker in attackers:
        if attacker.revoked:
            continue
        for asked in [None, *attacker.scopes]:  # the key's whole grant, and each of its scopes by name
            query = f"?scope={asked}" if asked else ""
            readable = {
                d
                for tenant, d, scope, acl in stored
                if attacker.may_read(tenant, scope, json.loads(acl)) and (asked is None or within(scope, asked))
            }
            where = f"{attacker.tenant}{attacker.scopes}{attacker.groups}{attacker.perms} asking in {asked}"
            if not ({"read", "admin"} & set(attacker.perms)):
                assert not readable
                status, _ = _call(app, attacker, "GET", "/v1/documents" + query)
                assert status == 403, where
                continue
            status, listing = _call(app, attacker, "GET", "/v1/documents" + query)
            assert status == 200, where
            assert {d["document_id"] for d in json.loads(listing)["documents"]} == readable, where
            status, found = _call(
                app, attacker, "POST", "/v1/search" + query, {"q": "failover drill code", "top_k": 50, "mode": "keyword"}
            )
            assert status == 200, where
            assert set(CANARY.findall(found)) == {canary_of[d] for d in readable}, where
            for _, document_id, *_ in stored:  # every original it may read opens; every other one is not there
                status, original = _call(app, attacker, "GET", f"/v1/documents/{document_id}/original" + query)
                assert status == (200 if document_id in readable else 404), f"{where}: original of {document_id}"
                assert status != 200 or canary_of[document_id] in original
            checked += 1
    assert checked >= 12  # every reading key asked in its whole grant and in each of its scopes
    # deleting: each writer deletes what it may change, and is told 404 for the rest (a fresh world per writer)
    for number, attacker in enumerate(a for a in attackers if not a.revoked and {"write", "admin"} & set(a.perms)):
        service, writers, _ = _seeded(tmp_path / f"writer-{number}")
        monkeypatch.setattr(api, "get_service", lambda service=service: service)
        app = api.build_app()
        writer = writers[attackers.index(attacker)]  # the same key, issued in the fresh world
        for tenant, document_id, scope, acl in (
            service.index._db().execute("SELECT tenant, document_id, scope, acl FROM documents").fetchall()
        ):
            status, _ = _call(app, writer, "DELETE", f"/v1/documents/{document_id}")
            allowed = writer.may_change(tenant, scope, json.loads(acl))
            assert status == (200 if allowed else 404), (
                f"{writer.tenant}{writer.scopes}{writer.groups}{writer.perms}: delete {document_id}"
            )
