"""The Recall, Lifecycle and MCP-tool checks run directly against the reference: its REST routes
served in a thread, its MCP server in process. The clean reference passes every one of them on
every binding it names; a check that cannot observe its rule there would be a hole in the proof,
so a skip fails too."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from memconform.reference_impl.faults import Fault
from memconform.reference_impl.memoturn.engine import MemoturnService, not_found, refusal
from memconform.reference_impl.memoturn.http import app
from memconform.reference_impl.memoturn.mcp import build_mcp_server
from memconform.reference_impl.memoturn.variants import MEMOTURN_VARIANTS
from memconform.suite.memoturn import checks as _checks  # noqa: F401 (registers them)
from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import Keyword, Outcome
from memconform.suite.runner import run_check
from memconform.targets.base import Subject
from memconform.targets.memoturn import McpPart, MemoturnRestClient

VERSION = "2026.06"
MODULES = ("recall", "lifecycle", "mcp_tools")


def these_checks() -> list[Any]:
    from memconform.suite.registry import _REGISTRY

    return [c for c in _REGISTRY.values()
            if c.spec == "memoturn" and c.func.__module__.rsplit(".", 1)[-1] in MODULES]


@contextlib.contextmanager
def reference(binding: str, service: MemoturnService | None = None, without: tuple[str, ...] = ()) -> Iterator[Any]:
    """A client factory for a fresh reference service over `binding` (closed after); over MCP,
    `without` names tools taken off the server."""
    service = service or MemoturnService()
    try:
        if binding == "http":
            from memconform.reference_impl.ump.serve import start_in_thread

            server = start_in_thread(None, app=app(service))
            try:
                base = server.base_url.rstrip("/")
                yield lambda: MemoturnRestClient(base, 20.0)
            finally:
                server.stop()
        else:
            server = build_mcp_server(service)
            for name in without:
                server.remove_tool(name)
            part = McpPart("reference", server=server, timeout=20.0)
            subject = Subject("reference", "memoturn", VERSION, "mcp")
            try:
                yield lambda: part.client(subject)
            finally:
                part.close()
    finally:
        service.close()


def results(binding: str, service: MemoturnService | None = None,
            only: tuple[str, ...] | None = None) -> dict[str, Any]:
    with reference(binding, service) as factory:
        return {c.id: run_check(c, VERSION, binding, factory, None) for c in these_checks()
                if binding in c.bindings and (only is None or c.id in only)}


def problems(found: dict[str, Any]) -> list[str]:
    return [f"{k}: {r.outcome.value} {r.reason or ''} {[f.message[:400] for f in r.findings]}"
            for k, r in found.items() if r.outcome is not Outcome.PASSED]


def test_every_l2_l3_and_mcp_rule_has_a_check_here():
    cat = catalogues.load("memoturn")
    wanted = {r.id for r in cat.requirements if r.testable and r.level in ("L2", "L3")}
    wanted |= {"memoturn/mcp-tools", "memoturn/mcp-get-not-found", "memoturn/mcp-txid"}
    named = {r for c in these_checks() for r in c.requirements}
    assert named == wanted, (sorted(wanted - named), sorted(named - wanted))
    for c in these_checks():
        for rid in c.requirements:
            req = cat.get(rid)
            assert req.bindings is None or set(c.bindings) <= set(req.bindings), (c.id, rid)


@pytest.mark.parametrize("binding", ("http", "mcp"))
def test_clean_reference_passes_every_check(binding):
    found = results(binding)
    want = {c.id for c in these_checks() if binding in c.bindings}
    assert set(found) == want
    assert not problems(found), problems(found)


@pytest.mark.parametrize("variant", MEMOTURN_VARIANTS, ids=lambda v: v.name)
def test_each_variant_passes(variant):
    for binding in variant.bindings or ("http", "mcp"):
        found = results(binding, MemoturnService(variants=(variant.name,)))
        assert not problems(found), (binding, problems(found))


# -- the checks can fail ----------------------------------------------------------------------------
# The reference with one behaviour broken, as a Fault made here (wraps of the engine's methods, or of
# the MCP binding's under "mcp."): each check must fail it, reporting only its own rule. A stand-in
# until reference_impl/memoturn/faults.py names faults for these rules.

def fault(name: str, **wraps: Any) -> Fault:
    return Fault(f"test-{name}", "memoturn", name, (), since=VERSION,
                 wraps={k.replace("__", "."): v for k, v in wraps.items()})


def _drop_channel(channel: str):
    return lambda svc, fuse: lambda ranked: fuse({k: v for k, v in ranked.items() if k != channel})


def _params(**changes: Any):
    """Recall parameters as read, with `changes` applied: a value, or a function of (body, params)."""
    def wrap(svc, read):
        def inner(body):
            p = read(body)
            return {**p, **{k: (v(body, p) if callable(v) else v) for k, v in changes.items()}}
        return inner
    return wrap


def _tasks_in_vector_channel(svc, channel):
    def inner(where, params, p, depth):
        rids = channel(where, params, p, depth)
        extra = [r[0] for r in svc._db.execute(
            f"SELECT m.rid FROM memories m JOIN vectors v ON v.rid = m.rid WHERE {where} AND m.type = 'task'",
            params).fetchall()]
        return extra + rids
    return inner


def _every_row_by_topic(svc, channel):
    def inner(where, params, p, depth):
        return [r[0] for r in svc._db.execute(f"SELECT m.rid FROM memories m WHERE {where}", params).fetchall()]
    return inner


def _answer(change):
    return lambda svc, recall: lambda ns, profile, body: change(svc, ns, profile, recall(ns, profile, body))


def _creating_recall(svc, recall):
    def inner(ns, profile, body):
        svc._transaction(lambda: svc._next_txid(ns, profile))
        return recall(ns, profile, body)
    return inner


def _empty_refused(svc, ns, profile, out):
    if not out["memories"]:
        raise not_found("nothing matched")
    return out


def _channelless_allowed(svc, read):
    def inner(body):
        if isinstance(body, dict) and not any(body.get(k) for k in ("query", "embedding", "topic_key")):
            body = {**body, "query": "anything"}
        return read(body)
    return inner


def _expiry(change):
    return lambda svc, expiry: lambda memory, now: change(memory, now, expiry)


CASES: dict[str, tuple[Fault, tuple[str, ...], tuple[str, ...]]] = {
    # name: (fault, the rules its checks must fail, the bindings)
    "keyword channel dropped": (fault("kw", _fuse=_drop_channel("keyword")),
                                ("memoturn/recall-keyword-channel", "memoturn/keywords-indexed"), ("http", "mcp")),
    "topic channel dropped": (fault("topic", _fuse=_drop_channel("topic")), ("memoturn/recall-topic-channel",),
                              ("http",)),
    "vector channel dropped": (fault("vec", _fuse=_drop_channel("vector")), ("memoturn/recall-vector-channel",),
                               ("http",)),
    "tasks in the vector channel": (fault("tv", _vector_channel=_tasks_in_vector_channel),
                                    ("memoturn/task-no-vector",), ("http",)),
    "every channel claimed": (fault("claim", _hit=lambda svc, hit: lambda row, score, ch: hit(
        row, score, ["topic", "keyword", "vector"])), ("memoturn/recall-channels-attribution",), ("http",)),
    "hits in reverse": (fault("rev", recall=_answer(lambda svc, ns, profile, out: {
        **out, "memories": out["memories"][::-1]})), ("memoturn/recall-channels-attribution",), ("http",)),
    "no score": (fault("noscore", _hit=lambda svc, hit: lambda row, score, ch: {
        k: v for k, v in hit(row, score, ch).items() if k != "score"}), ("memoturn/recall-answer-shape",),
                 ("http", "mcp")),
    "no channel needed": (fault("nochan", _recall_params=_channelless_allowed), ("memoturn/recall-needs-a-channel",),
                          ("http", "mcp")),
    "superseded recalled": (fault("sup", _recall_params=_params(include_superseded=True)),
                            ("memoturn/recall-hides-superseded",), ("http",)),
    "include_superseded ignored": (fault("incl", _recall_params=_params(include_superseded=False)),
                                   ("memoturn/include-superseded",), ("http", "mcp")),
    "filters ignored": (fault("filters", _recall_params=_params(types=None, session_id=None, source=None)),
                        ("memoturn/recall-types-filter", "memoturn/recall-session-filter",
                         "memoturn/recall-source-filter"), ("http", "mcp")),
    "default k of 5": (fault("k5", _recall_params=_params(k=lambda body, p: 5 if body.get("k") is None else p["k"])),
                       ("memoturn/recall-k",), ("http",)),
    "padding by topic": (fault("pad", _topic_channel=_every_row_by_topic), ("memoturn/recall-k",), ("http",)),
    "empty refused": (fault("empty", recall=_answer(_empty_refused)), ("memoturn/recall-empty-valid",),
                      ("http", "mcp")),
    "recall creates the profile": (fault("create", recall=_creating_recall), ("memoturn/recall-unknown-profile",),
                                   ("http", "mcp")),
    "every memory expires": (fault("expall", _expiry=_expiry(lambda m, now, e: e(m, now) or now + 10 ** 9)),
                             ("memoturn/expires-at-tasks-only",), ("http",)),
    "default ttl one hour": (fault("ttl1h", _expiry=_expiry(lambda m, now, e: e(
        {**m, "ttl": m["ttl"] or 3600}, now))), ("memoturn/task-ttl-default",), ("http",)),
    "ttl read as ms": (fault("ttlms", _expiry=_expiry(lambda m, now, e: now + m["ttl"] if m["ttl"] else e(m, now))),
                       ("memoturn/task-ttl-explicit",), ("http",)),
    "expired tasks recalled": (fault("expired", _candidates=lambda svc, c: lambda ns, profile, p, now: c(
        ns, profile, p, 0)), ("memoturn/recall-drops-expired",), ("http",)),
    "expired task a duplicate": (fault("dup", _active=lambda svc, a: lambda row, now: row["superseded_by"] is None),
                                 ("memoturn/expired-task-reingest",), ("http",)),
    "seconds": (fault("secs", now_ms=lambda svc, now: lambda: now() // 1000), ("memoturn/created-at-ms",),
                ("http",)),
    "session end keeps tasks": (fault("end", end_session=lambda svc, end: lambda ns, profile, sid: {
        "session_id": sid, "deleted": 0, "txid": svc.txid(ns, profile)}), ("memoturn/session-end-tasks",),
                                ("http",)),
    "sessions unlisted": (fault("list", sessions=lambda svc, s: lambda ns, profile, limit=None: {
        "sessions": [], "txid": svc.txid(ns, profile)}), ("memoturn/sessions-listed",), ("http",)),
    "forget fails": (fault("forget", forget=lambda svc, f: lambda ns, profile, mid: (_ for _ in ()).throw(
        refusal("internal", "broken"))), ("memoturn/mcp-tools",), ("mcp",)),
    "get misses as errors": (fault("miss", mcp__get=lambda b, g: lambda ns, profile, mid: b.service.get(
        ns, profile, mid)), ("memoturn/mcp-get-not-found",), ("mcp",)),
    "no txid on results": (fault("txid", mcp__result=lambda b, r: lambda value: r(
        {k: v for k, v in value.items() if k != "txid"})), ("memoturn/mcp-txid",), ("mcp",)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_reference_fails_the_check(case):
    broken, rules, bindings = CASES[case]
    for binding in bindings:
        found = results(binding, MemoturnService(fault=broken), only=rules)
        assert set(found) == set(rules), binding
        for rid, r in found.items():
            want = Outcome.WARNING if catalogues.load("memoturn").get(rid).keyword is Keyword.SHOULD else Outcome.FAILED
            assert r.outcome is want, (binding, rid, r.outcome, r.reason, [f.message for f in r.findings])
            assert {f.requirement for f in r.findings} == {rid}, binding


@pytest.mark.parametrize("missing", ("memory_get", "memory_forget"))
def test_a_missing_tool_is_named(missing):
    with reference("mcp", without=(missing,)) as factory:
        check = next(c for c in these_checks() if c.id == "memoturn/mcp-tools")
        r = run_check(check, VERSION, "mcp", factory, None)
    assert r.outcome is Outcome.FAILED, (r.outcome, r.reason)
    assert any(f"the tool {missing} is not served" in f.message for f in r.findings), [f.message for f in r.findings]
