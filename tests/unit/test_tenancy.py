"""Keys, scopes and permissions, and the `sourcerer keys` / `tenants` commands."""

import json

import pytest
from sourcerer.cli import main
from sourcerer.errors import Forbidden, InvalidRequest
from sourcerer.ledger import open_ledger
from sourcerer.scopes import within
from sourcerer.service.tenancy import Context, hash_key, new_key, tiers


def test_keys_are_random_urlsafe_and_stored_as_hash():
    key, record = new_key("acme", ["acme/alpha"], ["read"])
    other, _ = new_key("acme", ["acme/alpha"], ["read"])
    assert key.startswith("sk_") and len(key) >= 3 + 43 and key != other
    assert record.key_hash == hash_key(key) and key not in record.model_dump_json()


def test_scopes_must_stay_inside_the_tenant_and_perms_must_be_known():
    with pytest.raises(InvalidRequest, match="outside tenant"):
        new_key("acme", ["globex/alpha"], ["read"])
    with pytest.raises(InvalidRequest, match="permissions"):
        new_key("acme", [], ["superuser"])
    with pytest.raises(ValueError):
        new_key("acme", ["acme/../globex"], ["read"])


def test_scope_narrowing_never_matches_a_prefix_look_alike():
    _, record = new_key("acme", ["acme/alpha"], ["read"])
    ctx = Context(tenant="acme", tier=tiers()["pro"], key_id=record.key_id, scopes=record.scopes, perms=list(record.perms))
    assert ctx.narrow(None) == ["acme/alpha"]
    assert ctx.narrow("acme/alpha/backend") == ["acme/alpha/backend"]
    with pytest.raises(Forbidden):
        ctx.narrow("acme/alphabet")
    with pytest.raises(Forbidden):
        ctx.narrow("acme")
    assert within("acme/alpha/x", "acme/alpha") and not within("acme/alphabet", "acme/alpha")
    with pytest.raises(Forbidden):
        ctx.require("write")


def test_keys_cli_create_list_revoke(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCERER_HOME", str(tmp_path))
    assert (
        main(["keys", "create", "--tenant", "acme", "--tier", "pro", "--scopes", "acme/alpha", "--perms", "read,write", "--json"])
        == 0
    )
    created = json.loads(capsys.readouterr().out)
    assert set(created) >= {"key", "tenant", "tier", "scopes", "perms"}
    assert (created["tenant"], created["tier"], created["scopes"], created["perms"]) == (
        "acme",
        "pro",
        ["acme/alpha"],
        ["read", "write"],
    )
    main(["keys", "list", "--tenant", "acme", "--json"])
    listed = json.loads(capsys.readouterr().out)
    assert [set(k) >= {"key_id", "tenant", "tier", "scopes", "perms", "created_at", "revoked"} for k in listed] == [True]
    assert "key" not in listed[0] and created["key"] not in json.dumps(listed)
    assert main(["keys", "revoke", listed[0]["key_id"]]) == 0
    assert open_ledger().find_key(hash_key(created["key"])).revoked is True
    capsys.readouterr()
    assert main(["keys", "create", "--tenant", "nobody"]) == 2
    assert "no tenant nobody" in capsys.readouterr().err
    assert main(["tenants", "create", "--tenant", "globex", "--tier", "enterprise", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tier"] == "enterprise"


def test_the_specs_scope_pattern_admits_exactly_what_the_server_accepts():
    import random
    import re

    from sourcerer.errors import InvalidRequest
    from sourcerer.scopes import SCOPE_PATTERN, normalize_scope

    rng = random.Random(24)
    spellings = ["acme/../beta", "acme/.", "./acme", "acme/.hidden", "acme//x", " /acme/alpha/ ", "..", "a/b.c/d-e@f_g"]
    spellings += ["".join(rng.choice("ab./-@ _é") for _ in range(rng.randint(0, 9))) for _ in range(5000)]
    for spelling in spellings:
        try:
            normalize_scope(spelling, "acme")
            accepted = True
        except InvalidRequest:
            accepted = False
        assert bool(re.match(SCOPE_PATTERN, spelling)) == accepted, spelling
