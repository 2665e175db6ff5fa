"""Issue 14: one owner's `consent.redact` must not break what every other owner is served.

Owner-a remembers a public record whose redact names a member no record can lack (`id`, `$..*`,
`[*]`, `scope.owner` …). §2.7 makes the store apply redact before a record crosses to another owner,
§2 makes those members REQUIRED, and §3.3 makes a store reject what fails consent/policy: so the
record is either refused at remember (consent_violation, nothing stored) or served to owner-b still
valid. Before the fix, get and recall served owner-b records without their id, and owner-b's
rehydrate answered 500 (KeyError 'id') for every record it matched: one owner broke rehydrate for
all the others.

Over both live bindings (HTTP and MCP mounted in the HTTP app), through the suite's own drivers, and
judged with the suite's record validator.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from memconform.suite.ump.checks._live import served_problems
from memconform.suite.ump.client import Auth, Reply
from memconform.suite.ump.testkeys import test_did
from memconform.targets.base import Subject

OWNER_A, OWNER_B = test_did("owner-a"), test_did("owner-b")
AS_A, AS_B = Auth.as_owner("owner-a"), Auth.as_owner("owner-b")

#: Paths naming REQUIRED members, the whole record, or provenance (REQUIRED at L2+, §2.6), and a
#: few that name optional members (the control: those are applied and the record stays valid).
PATHS = ("id", "$..*", "[*]", "$.*", "*", "$..id", "$['id']", "ump", "kind", "scope", "scope.owner",
         "scope.visibility", "time", "time.created", "body", "body.text", "provenance", "provenance.actor",
         "consent", "consent.redact", "lifecycle", "lifecycle.status", "scope.project")


@pytest.fixture(scope="module", params=["refuse", "redact-keeps-required-members"])
def clients(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The reference as it reads §2.7 (refuse such a consent at remember) and as its variant does
    (store it, keep those members when serving): both must hold."""
    from memconform.reference_impl.ump import serve
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.targets.http import HttpDriver
    from memconform.targets.mcp import McpDriver

    service = serve.make_service(variants=() if request.param == "refuse" else (request.param,))
    server = serve.start_in_thread(service, app=build_app(service))
    mcp = McpDriver(f"mcp+{server.base_url}/mcp", timeout=20)
    try:
        yield {"http": HttpDriver(server.base_url, timeout=20).client(Subject(server.base_url, "ump", "1.0", "http")),
               "mcp": mcp.client(Subject(mcp.label, "ump", "1.0", "mcp"))}
    finally:
        mcp.close()
        server.stop()
        service.close()


def _no_crash(reply: Reply, what: str) -> None:
    assert not (reply.status or 0) >= 500, f"{what}: {reply.describe()}"
    assert reply.error_code not in ("internal", None) or reply.ok, f"{what}: {reply.describe()}"


def _public(word: str, path: str) -> dict[str, Any]:
    return {"kind": "semantic", "body": {"text": f"{word} a public record", "structured": {"k": "v"}},
            "scope": {"owner": OWNER_A, "project": "github.com/example/redact", "visibility": "public"},
            "provenance": {"actor": OWNER_A, "actor_kind": "agent", "method": "memconform-test"},
            "consent": {"redact": [path]}}


def _valid(rec: Any, rid: str, what: str) -> None:
    problems = served_problems(rec, "1.0")
    if isinstance(rec, dict) and not isinstance(rec.get("provenance"), dict):
        problems.append("/provenance: missing (REQUIRED at L2+, §2.6)")
    assert not problems, f"{what} served an invalid record: {problems}: {rec}"
    assert rec["id"] == rid, f"{what} served {rec['id']!r} for {rid}"


@pytest.mark.parametrize("binding", ["http", "mcp"])
@pytest.mark.parametrize("path", PATHS)
def test_a_redact_path_never_breaks_what_another_owner_is_served(clients, binding, path):
    c = clients[binding]
    word = f"redact{secrets.token_hex(6)}"
    made = c.remember(_public(word, path), auth=AS_A)
    _no_crash(made, f"remember with redact [{path!r}]")
    rejected = made.ok and made.body.get("result") == "rejected"
    if not made.ok or rejected:
        code = made.error_code or str(made.body.get("reason", "")).split(":")[0]
        assert code == "consent_violation", made.describe()
        for auth in (AS_A, AS_B):
            found = c.recall({"query": word, "limit": 5}, auth=auth)
            assert found.ok and not found.body["results"], f"refused, yet stored: {found.describe()}"
        return
    rid = made.body["id"]
    got = c.get(rid, auth=AS_B)
    _no_crash(got, "owner-b's get")
    assert got.ok, got.describe()
    _valid(got.body["record"], rid, "owner-b's get")
    found = c.recall({"query": word, "limit": 5}, auth=AS_B)
    _no_crash(found, "owner-b's recall")
    assert [r["record"].get("id") for r in found.body["results"]] == [rid], found.describe()
    for result in found.body["results"]:
        _valid(result["record"], rid, "owner-b's recall")
    for request in ({"query": word, "limit": 5}, {"ids": [rid]}):
        reh = c.rehydrate(request, auth=AS_B)
        _no_crash(reh, f"owner-b's rehydrate {request}")
        assert reh.ok and reh.body["included"] == [rid], reh.describe()
    own = c.get(rid, auth=AS_A)  # the owner is on the same side of the boundary: nothing stripped
    assert own.ok and own.body["record"]["body"]["text"].startswith(word), own.describe()


@pytest.mark.parametrize("binding", ["http", "mcp"])
def test_other_owners_recall_and_rehydrate_survive_a_hostile_record(clients, binding):
    """The finding itself: owner-a's record with redact ["id"] beside owner-b's own public record;
    owner-b's recall and rehydrate of a word both hold still answer, and serve owner-b's record."""
    c = clients[binding]
    word = f"redact{secrets.token_hex(6)}"
    c.remember(_public(word, "id"), auth=AS_A)
    mine = _public(word, "body.structured")
    mine["scope"]["owner"] = mine["provenance"]["actor"] = OWNER_B
    made = c.remember(mine, auth=AS_B)
    assert made.ok, made.describe()
    for auth in (AS_A, AS_B):
        reh = c.rehydrate({"query": word, "limit": 10}, auth=auth)
        _no_crash(reh, "rehydrate")
        assert reh.ok and made.body["id"] in reh.body["included"], reh.describe()
        found = c.recall({"query": word, "limit": 10}, auth=auth)
        assert found.ok, found.describe()
        for result in found.body["results"]:
            _valid(result["record"], result["record"].get("id"), "recall")
