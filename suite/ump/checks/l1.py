"""UMP L1 over the live bindings (HTTP §4.2, MCP §4.1): capabilities, recall, remember, get, ids,
errors, the binding routes and tools, and the L0 record rules judged on what a server accepts and
serves (docs/live-ump.md).

How these checks stay fair and sharp:

* Every check makes its own records, each with a unique marker word in `body.text`, and recalls
  that word: the store is shared with every other check (and perhaps other clients).
* A precondition that fails (remember refused when the check is about get, …) skips the check
  with the reason (`need`, `NotApplicable`): only the check that owns an operation fails for it.
* Records sent to judge something else are *complete* (`ump`, `id`, `time`, provenance with a
  DID owner), so a server that cannot fill partial records (`remember-fills-*`), or that needs
  provenance at L2+, fails only the checks about that.
* Every record a check receives from a valid round trip is kept (per client) and validated by
  `ump/l1/served-records` together with that check's own round trips.
* A check that judged nothing raises NotApplicable with the reason; it never passes empty.

Requirements judged nowhere here, and why:

* `ump/admission-gate-policy` (§2.9): whether a target permits reuse only after confirmation,
  and on what it bases that gate, is internal policy; nothing on the wire distinguishes "gate
  enforced as policy" from "gate inferred from lifecycle.status" (the catalogue marks it
  untestable).
* `ump/client-negotiate-first` (§3.1): an obligation of the *calling* peer; a server cannot be
  observed obeying it. The suite obeys it itself (drivers read capabilities first).
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import urllib.parse
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from importlib import resources
from typing import Any

from memconform.suite.jsonvalue import json_equal
from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import LEVELS, Inconclusive, NotApplicable, TargetError, Waived
from memconform.suite.registry import Case, check
from memconform.suite.runner import CheckContext
from memconform.suite.ump import ids as ump_ids
from memconform.suite.ump import integrity
from memconform.suite.ump import record as ump_record
from memconform.suite.ump.checks._live import (
    KINDS, LIVE, OWNER_A, OWNER_B, did, marker, need, record_resource, refused_for_token, results_of, sample_record,
    ump_templates, which_refusal,
)
from memconform.suite.ump.canonical import without_integrity
from memconform.suite.ump.client import Auth, Reply
from memconform.suite.ump.did import is_did
from memconform.suite.ump.testkeys import TEST_KEY_NAMES, test_did, test_signing_key
from memconform.vectors import load as vectors

HTTP = ("http",)
MCP = ("mcp",)

#: §3.7, the whole error vocabulary.
ERROR_CODES = ("unauthorized", "forbidden_scope", "not_found", "invalid_record", "consent_violation",
               "signature_invalid", "unsupported", "rate_limited")
#: §3.2, the standardized signal names.
SIGNALS = ("similarity", "recency", "salience", "scope_match", "provenance_depth")
#: §6.2: 128 random bits or a BLAKE3-256 hash as base32, 26 or 52 characters (unpadded; 32 or 56
#: padded), in either RFC 4648 alphabet and either case (the public implementation mints lowercase
#: base32; issue 13, record-id-format).
MINTED_ID = re.compile(r"urn:ump:(?:[A-Za-z0-9]{26}(?:={6})?|[A-Za-z0-9]{52}(?:={4})?)")
#: HTTP status per §3.7 code (the notes, HTTP binding); every other code is a 4xx (400).
STATUS_FOR_CODE = {"not_found": 404, "unauthorized": 401, "forbidden_scope": 403, "rate_limited": 429}
#: The MCP tool name of each operation (§4.1).
TOOL_FOR = {op: f"ump.{op}" for op in ("capabilities", "recall", "remember", "get", "revise", "forget",
                                       "feedback")}
_OWNER_NAMES = {test_did(name): name for name in TEST_KEY_NAMES}


# =============================================================================================
# small helpers
# =============================================================================================

def _spec(requirement: str) -> str:
    """'§3.3: “…”' — the section and sentence a message cites."""
    req = catalogues.load("ump").get(requirement)
    quote = req.quote if len(req.quote) <= 160 else req.quote[:157] + "…"
    return f"§{req.section}: “{quote}”"


def _now(days: float = 0.0) -> str:
    t = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _full_record(ctx: CheckContext, kind: str = "semantic", *, owner: str = OWNER_A, text: str | None = None,
                 visibility: str = "private", **members: Any) -> dict[str, Any]:
    """A complete record of the session's version (ump, a fresh id, time, a DID owner,
    provenance): what every level accepts without filling anything in."""
    now = _now()
    rec = {"ump": ctx.version, "id": ump_ids.random_id()}
    rec.update(sample_record(kind, owner=owner, text=text, visibility=visibility))
    rec["time"] = {"created": now, "valid_from": now}
    rec.update(members)
    return rec


def _word(rec: dict[str, Any]) -> str:
    return str(rec["body"]["text"]).split()[0]


def _code(reply: Reply) -> str | None:
    """The §3.7 code of a refusal; "rejected" for a `{result: rejected}` answer; None on success."""
    if reply.error_code:
        return reply.error_code
    body = reply.body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            code = err.get("code")
            return code if isinstance(code, str) and code else "(no code)"
        if err is not None:
            return "(no code)"
        if body.get("result") == "rejected":
            return "rejected"
    if not isinstance(body, dict):
        return "(no JSON object)"
    if reply.status is not None and reply.status >= 400:
        return f"(HTTP {reply.status})"
    return None


def _internal(reply: Reply) -> None:
    """An `internal` (HTTP 500) answer is the target erroring, not a verdict (catalogue note of
    ump/error-codes)."""
    if reply.error_code == "internal" or (reply.status is not None and reply.status >= 500):
        raise TargetError(f"{reply.operation} failed inside the server: {reply.describe()}")


def _accepted(reply: Reply) -> bool:
    return reply.ok and isinstance(reply.body, dict) and reply.body.get("result") in ("created", "merged")


def _new_id(reply: Reply) -> str | None:
    rid = reply.body.get("id") if isinstance(reply.body, dict) else None
    return rid if isinstance(rid, str) and rid else None


def _auth_for(rec: Any) -> tuple[Auth, bool]:
    """The auth to send a record with (its owner's token when the owner is a test key) and
    whether the suite holds the owner's key."""
    from memconform.suite.ump import owners

    owner = rec.get("scope", {}).get("owner") if isinstance(rec, dict) and isinstance(rec.get("scope"), dict) else None
    # the target's owners (a vendor's own keys, docs/vendor-keys.md), not always the test keys
    name = owners.active().name_of(owner) if isinstance(owner, str) else None
    return (Auth.as_owner(name), True) if name else (Auth.as_owner(OWNER_A), False)


@lru_cache(maxsize=1)
def _operation_schemas() -> dict[str, Any]:
    text = resources.files("memconform.suite.ump").joinpath("schemas", "operations.schema.json").read_text("utf-8")
    return json.loads(text)


#: The member that makes an answer the §3 response of an operation, and its JSON type. The route
#: and tool checks judge that the binding carries the operation (this member at the top of a JSON
#: object, not wrapped, not an error); the values are the operation's own checks'.
_RESPONSE_MEMBER = {"capabilities": ("ump", str), "recall": ("results", list), "remember": ("result", str),
                    "get": ("record", dict), "revise": ("id", str), "forget": ("result", str),
                    "feedback": (None, None)}


def _response_problems(value: Any, operation: str) -> list[str]:
    """Why `value` is not recognisably the §3 response of `operation` (top level only)."""
    if not isinstance(value, dict):
        return [f"the answer is {json.dumps(value)[:80] if value is not None else 'not JSON'}, not a JSON object"]
    if "error" in value:
        return [f"the answer is an error: {json.dumps(value['error'], ensure_ascii=False)[:200]}"]
    member, kind = _RESPONSE_MEMBER[operation]
    if member is not None and not isinstance(value.get(member), kind):
        names = {str: "a string", list: "a list", dict: "an object"}
        return [f"the §3 {operation} response carries `{member}` ({names[kind]}); found "
                f"{json.dumps(value.get(member))[:80] if member in value else 'no such member'} "
                f"(members: {sorted(value)})"]
    return []


# -- what the server advertises --------------------------------------------------------------

def _tool_names(ctx: CheckContext) -> set[str] | None:
    if ctx.binding != "mcp":
        return None
    tools = ctx.client.tools() or []
    return {t.get("name") for t in tools if isinstance(t, dict)}


def _without_capabilities_tool(ctx: CheckContext) -> None:
    """Over MCP a server may leave the capabilities tool out (§4.1: "a minimal server can skip the
    explicit tool"): then what a check asks of the §3.1 response binds nothing there (Waived: no
    level waits on it)."""
    names = _tool_names(ctx)
    if names is not None and "ump.capabilities" not in names:
        raise Waived("the MCP server lists no ump.capabilities tool: §4.1 lets a minimal server skip it (\"capabilities "
                     "is derivable from the tool list\"; judged by ump/l1/mcp-capabilities-derivable)")


def _capabilities(ctx: CheckContext) -> Reply:
    """The capabilities reply (a server without the MCP tool: Waived)."""
    _without_capabilities_tool(ctx)
    reply = ctx.client.capabilities()
    if _code(reply) == "unsupported" or (reply.binding == "http" and reply.status in (404, 405)):
        raise NotApplicable(f"capabilities is not offered over {reply.binding} ({reply.describe()}): judged by "
                            "ump/l1/l1-one-binding and ump/l1/http-route-capabilities")
    return reply


def _caps_body(ctx: CheckContext) -> dict[str, Any]:
    """The capabilities response, or {} when there is none to read (derived MCP capabilities,
    a failing call: judged by the capabilities checks)."""
    names = _tool_names(ctx)
    if names is not None and "ump.capabilities" not in names:
        return {}
    reply = ctx.client.capabilities()
    return reply.body if reply.ok and isinstance(reply.body, dict) else {}


def _level(ctx: CheckContext) -> str | None:
    level = _caps_body(ctx).get("conformance")
    return level if level in LEVELS else None


def _at_least(level: str | None, wanted: str) -> bool:
    """Whether a server advertising `level` owes `wanted`'s duties; an unreadable level is given
    the benefit of the doubt (ump/l1/capabilities reports it)."""
    return level is None or LEVELS.index(level) >= LEVELS.index(wanted)


def _offers(ctx: CheckContext, operation: str) -> bool:
    try:
        return operation in ctx.client.offered()
    except NotImplementedError:
        return True


# -- records that came back: kept for ump/l1/served-records -----------------------------------

_SERVED: dict[tuple[str, str, int], list[tuple[str, Any]]] = {}


def _keep(ctx: CheckContext, rec: Any, how: str) -> None:
    """Remember a record a server served for a *valid* request, so served-records judges it."""
    pool = _SERVED.setdefault((ctx.binding, ctx.version, id(ctx.client)), [])
    if len(pool) < 2000:
        pool.append((f"{ctx.check.id}: {how}", rec))


def _offered(reply: Reply) -> Reply:
    """`reply`, unless it says its operation is not offered over this binding at all (code
    unsupported; over HTTP a 404/405 for remember or recall, whose routes never answer not_found
    otherwise): then the check skips, since an absent operation is judged once, by
    ump/l1/l1-one-binding and the binding's route or tool check. (A 404 from GET /ump/memory/{id}
    cannot be told from an unknown id, so get is judged as answered.)"""
    absent = _code(reply) == "unsupported" or (
        reply.binding == "http" and reply.operation in ("remember", "recall") and reply.status in (404, 405))
    if absent:
        raise NotApplicable(f"{reply.operation} is not offered over {reply.binding} ({reply.describe()}): judged by "
                            "ump/l1/l1-one-binding and the binding's route/tool check")
    return reply


#: Every record with an id this process sent to remember, by target client and id (in order): a
#: refused record's "was it stored" (`_stored_copy`) must judge that record itself, never one an
#: earlier request placed under the same id.
_SENT_IDS: dict[tuple[int, str], list[dict[str, Any]]] = {}


def _put(ctx: CheckContext, rec: Any, *, auth: Auth | None = None, wrap: bool = True, offered: bool = True) -> Reply:
    """remember, as the checks that judge what it does call it (see `_offered`; `offered=False`
    takes an `unsupported` answer as it comes)."""
    sent = copy.deepcopy(rec) if isinstance(rec, dict) else None
    reply = ctx.client.remember(rec, auth=auth or _auth_for(rec)[0], wrap=wrap)
    reply = _offered(reply) if offered else reply
    if sent is not None and isinstance(sent.get("id"), str):
        _SENT_IDS.setdefault((id(ctx.client), sent["id"]), []).append(sent)
    return reply


def _get(ctx: CheckContext, rid: str, *, auth: Auth | None = None, keep: bool = True) -> tuple[Reply, dict | None]:
    reply = _offered(ctx.client.get(rid, auth=auth or Auth.as_owner(OWNER_A)))
    rec = reply.body.get("record") if reply.ok and isinstance(reply.body, dict) else None
    if not isinstance(rec, dict):
        rec = None
    if keep and rec is not None:
        _keep(ctx, rec, f"get {rid}")
    return reply, rec


def _recall(ctx: CheckContext, request: dict[str, Any], *, auth: Auth | None = None, keep: bool = True) -> Reply:
    reply = _offered(ctx.client.recall(request, auth=auth or Auth.as_owner(OWNER_A)))
    if keep:
        for i, res in enumerate(results_of(reply)):
            if "record" in res:
                _keep(ctx, res["record"], f"recall {request.get('query')!r} results/{i}/record")
    return reply


def _successor(ctx: CheckContext, rid: str, text: str) -> tuple[str, dict[str, Any]] | None:
    """owner-a revises `rid` (body.text becomes `text`) and gets the successor: (how it was read, the
    record), or None when revise is not offered, fails, or the successor cannot be read (revise is
    judged by its own checks). The successor is a served record like any other (§2, §8)."""
    if not _offers(ctx, "revise"):
        return None
    reply = ctx.client.revise({"id": rid, "patch": {"body": {"text": text}}}, auth=Auth.as_owner(OWNER_A))
    new = reply.body.get("id") if reply.ok and isinstance(reply.body, dict) else None
    if not isinstance(new, str) or not new or new == rid:
        return None
    _, rec = _get(ctx, new, keep=False)
    return None if rec is None else (f"get {new} (the successor of revise {rid})", rec)


def _recall_ids(reply: Reply) -> list[Any]:
    return [r["record"].get("id") for r in results_of(reply) if isinstance(r.get("record"), dict)]


def _scope(owner: str = OWNER_A) -> dict[str, str]:
    return {"owner": did(owner)}


def _remember(ctx: CheckContext, rec: Any, *, auth: Auth | None = None, what: str = "remember") -> str:
    """Remember a record as a precondition; its id (NotApplicable when that fails)."""
    reply = _put(ctx, rec, auth=auth)
    _internal(reply)
    body = need(reply, what)
    if body.get("result") not in ("created", "merged") or not _new_id(reply):
        raise NotApplicable(f"precondition failed: {what} did not answer created/merged with an id "
                            f"({reply.describe()}); judged by ump/l1/remember-result")
    return _new_id(reply)


def _holds(rec: dict[str, Any], sent: dict[str, Any]) -> bool:
    """Whether `rec` holds every member `sent` carried as sent (id, integrity and ump aside: a
    server fills or re-signs those)."""
    return all(rec.get(k) == v for k, v in sent.items() if k not in ("id", "integrity", "ump"))


def _stored_copy(ctx: CheckContext, sent: dict[str, Any], auth: Auth) -> dict | None:
    """The stored record a refused `sent` left behind, if any: get of its id (when it has a
    well-formed one) answering a record with the same content. Only the refused record itself
    counts: when an earlier request of this client sent another record under the same id and the
    record found is as much that one (it holds that record's members too, and `sent` lacks or has
    the same values for those), it is the earlier record, not this one (a refusal "id already in
    use" stores nothing)."""
    rid = sent.get("id")
    if not (isinstance(rid, str) and ump_ids.ID_PATTERN.fullmatch(rid)):
        return None
    reply = ctx.client.get(rid, auth=auth)  # (not _get: an absent get leaves this unknown, not skipped)
    rec = reply.body.get("record") if reply.ok and isinstance(reply.body, dict) else None
    if not isinstance(rec, dict) or not _holds(rec, sent):
        return None
    earlier = [e for e in _SENT_IDS.get((id(ctx.client), rid), []) if e != sent]
    if any(_holds(rec, e) and _distinguishes(e, sent, rec) is False for e in earlier):
        return None
    return rec


def _distinguishes(earlier: dict[str, Any], sent: dict[str, Any], rec: dict[str, Any]) -> bool:
    """Whether `rec` (which holds both `earlier` and `sent`'s members) shows something only `sent`
    can explain: a member `sent` carries and `earlier` did not (or carried otherwise), or the
    integrity `sent` carried (kept as sent) where `earlier`'s was another."""
    for k, v in sent.items():
        if k in ("id", "ump"):
            continue
        if k == "integrity":
            if rec.get(k) == v and earlier.get(k) != v:
                return True
            continue
        if earlier.get(k) != v:
            return True
    return False


def _diff(sent: Any, got: Any, path: str = "") -> list[str]:
    """Where `got` lost or changed what `sent` carried (members `got` adds are fine)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [f"{path or '/'}: sent an object, got {json.dumps(got)[:60]}"]
        out = []
        for k, v in sent.items():
            if k not in got:
                out.append(f"{path}/{k} missing")
            else:
                out.extend(_diff(v, got[k], f"{path}/{k}"))
        return out
    if type(sent) is not type(got) or sent != got:
        return [f"{path or '/'}: sent {json.dumps(sent, ensure_ascii=False)[:60]}, "
                f"got {json.dumps(got, ensure_ascii=False)[:60]}"]
    return []


# =============================================================================================
# capabilities (§3.1, §4, §8, §9)
# =============================================================================================

@check("ump/l1/capabilities", spec="ump",
       requirements=("ump/capabilities-version", "ump/capabilities-conformance", "ump/capabilities-kinds",
                     "ump/capabilities-bindings"),
       bindings=LIVE, title="capabilities answers ump, conformance, the five kinds and its bindings (§3.1, §4)")
def capabilities(ctx: CheckContext) -> None:
    """The members of the §3.1 response the suite and any peer negotiate on."""
    reply = _capabilities(ctx)
    _internal(reply)
    sent = reply.sent
    if not reply.ok or not isinstance(reply.body, dict):
        for req in ("ump/capabilities-version", "ump/capabilities-conformance", "ump/capabilities-kinds",
                    "ump/capabilities-bindings"):
            ctx.violation(req, f"capabilities did not answer a §3.1 response: {reply.describe()}; "
                          f"{_spec(req)}", sent=sent, received=reply.body or reply.raw)
        return
    body = reply.body
    versions = body.get("versions") if isinstance(body.get("versions"), list) else None
    ump = body.get("ump")
    if not isinstance(ump, str):
        ctx.violation("ump/capabilities-version", f"the capabilities response has no string `ump` "
                      f"(found {json.dumps(ump)}); {_spec('ump/capabilities-version')}",
                      sent=sent, received=body)
    elif ump != ctx.version:
        if versions is not None and ctx.version in versions:
            ctx.violation("ump/capabilities-version", f"asked for UMP {ctx.version}, which the server lists in "
                          f"`versions` {versions}, it answered ump {ump!r}: the response must carry the "
                          f"version of this exchange; {_spec('ump/capabilities-version')}",
                          sent=sent, received=body)
        elif ump in ump_record.VERSIONS:
            raise NotApplicable(f"asked for UMP {ctx.version} the server answered ump {ump!r} and does not "
                                f"list {ctx.version} in `versions`: it does not speak {ctx.version}; judge it "
                                f"under {ump}")
        else:
            ctx.violation("ump/capabilities-version", f"`ump` is {ump!r}, not a UMP version (0.1 or 1.0); "
                          f"{_spec('ump/capabilities-version')}", sent=sent, received=body)
    conformance = body.get("conformance")
    if conformance not in LEVELS:
        ctx.violation("ump/capabilities-conformance", f"`conformance` is {json.dumps(conformance)}; required "
                      f"one of {', '.join(LEVELS)}; {_spec('ump/capabilities-conformance')}",
                      sent=sent, received=body)
    kinds = body.get("kinds")
    if not isinstance(kinds, list):
        ctx.violation("ump/capabilities-kinds", f"`kinds` is {json.dumps(kinds)}; required a list of the five "
                      f"kinds {list(KINDS)}; {_spec('ump/capabilities-kinds')}", sent=sent, received=body)
    else:
        missing = [k for k in KINDS if k not in kinds]
        if missing:
            ctx.violation("ump/capabilities-kinds", f"`kinds` {kinds} leaves out {missing}: §7 L1 asks for all "
                          f"5 kinds; {_spec('ump/capabilities-kinds')}", sent=sent, received=body)
    bindings = body.get("bindings")
    if not isinstance(bindings, list) or not all(isinstance(b, str) for b in bindings):
        ctx.violation("ump/capabilities-bindings", f"`bindings` is {json.dumps(bindings)}; required a list of "
                      f"binding names (mcp, http, file); {_spec('ump/capabilities-bindings')}",
                      sent=sent, received=body)
    elif ctx.binding not in bindings:
        ctx.violation("ump/capabilities-bindings", f"`bindings` {bindings} leaves out {ctx.binding!r}, the "
                      f"binding this very answer came over; {_spec('ump/capabilities-bindings')}",
                      sent=sent, received=body)


@check("ump/l1/capabilities-audit", spec="ump", requirements=("ump/capabilities-audit-flag",), bindings=LIVE,
       title="an audit facility is advertised as capabilities.audit: true (§9, MAY)")
def capabilities_audit(ctx: CheckContext) -> None:
    """§9 is non-normative: informational only. Judged when the server says `audit` or offers the
    reference implementation's audit facility (HTTP GET /ump/audit/verify, MCP ump.audit)."""
    body = _caps_body(ctx)
    flag = body.get("audit", None)
    if "audit" in body and not isinstance(flag, bool):
        ctx.violation("ump/capabilities-audit-flag", f"capabilities.audit is {json.dumps(flag)}; §9 "
                      f"advertises it as a boolean; {_spec('ump/capabilities-audit-flag')}", received=body)
        return
    offered = False
    if ctx.binding == "http":
        probe = ctx.client.call_raw("GET", "/ump/audit/verify", None, {"UMP-Version": ctx.version})
        offered = probe.status is not None and 200 <= probe.status < 300
    else:
        offered = bool({"ump.audit", "ump.audit.verify"} & (_tool_names(ctx) or set()))
    if flag is True:
        return
    if offered:
        ctx.violation("ump/capabilities-audit-flag", "the server offers an audit facility but its capabilities "
                      f"do not say audit: true; {_spec('ump/capabilities-audit-flag')}", received=body)
        return
    raise NotApplicable("the server neither advertises capabilities.audit nor offers the reference audit "
                        "facility: nothing to judge")


@check("ump/l1/capabilities-no-0.1-runtime", spec="ump", requirements=("ump/capabilities-no-0.1-runtime",),
       bindings=LIVE,
       title="a 1.0 server answers a 0.1 client with 1.0, or speaks 0.1 in that exchange (§8)")
def capabilities_no_01_runtime(ctx: CheckContext) -> None:
    """A client announcing 0.1 (HTTP: `UMP-Version: 0.1`; MCP: `client.ump`) must get `ump: "1.0"`,
    a refusal, or 0.1 from a server that speaks 0.1 at runtime. A server listing "0.1" in the
    extension member `versions` is judged as a UMP 0.1 subject of its own. One that does not list it
    (the member is no spec's) is asked in that exchange: a 0.1 record it stores must come back a 0.1
    record; a 1.0 server taking it as a §8 import serves it normalized to 1.0, and has then answered
    a version it does not speak."""
    _without_capabilities_tool(ctx)
    body = _caps_body(ctx)
    if not body:
        raise NotApplicable("no capabilities response to start from (judged by ump/l1/capabilities)")
    if ctx.binding == "http":  # the HTTP binding names the version of a request in UMP-Version
        reply = ctx.client.call_raw("GET", "/ump/capabilities", None, {"UMP-Version": "0.1"}, auth=Auth.anonymous())
    else:  # MCP: the client announcement (the driver moves its session back afterwards)
        reply = ctx.client.capabilities({"client": {"name": "memconform", "ump": "0.1"}})
    _internal(reply)
    if not reply.ok:
        return  # refusing a 0.1 client is conforming (catalogue note)
    got = reply.body.get("ump")
    declared = [v for src in (body, reply.body) if isinstance(src.get("versions"), list) for v in src["versions"]]
    # Which version the session speaks is judged by its major; the exact label ("1.0", not
    # "1.0.0") is ump/l1/capabilities'.
    major = got.split(".")[0] if isinstance(got, str) else None
    if major == "1" or (major == "0" and "0.1" in declared):
        return  # 1.0 kept, or 0.1 spoken deliberately and said so
    if got == "0.1":
        unspoken = _does_not_speak_01(ctx)
        if unspoken is None:
            ctx.note("the server speaks UMP 0.1 at runtime without listing it in capabilities.versions: run with "
                     "--spec ump@0.1 to judge it as UMP 0.1 too")
            return
        ctx.violation("ump/capabilities-no-0.1-runtime", f"a client announcing UMP 0.1 was answered ump '0.1', but "
                      f"the server does not speak 0.1: {unspoken}; a 1.0 server answers ump \"1.0\" or refuses; "
                      f"{_spec('ump/capabilities-no-0.1-runtime')}", sent=reply.sent, received=reply.body)
        return
    ctx.violation("ump/capabilities-no-0.1-runtime", f"a client announcing UMP 0.1 was answered ump {got!r}, and "
                  f"the server does not declare 0.1 a runtime version (its `versions`: "
                  f"{sorted(set(declared)) or 'none'}): a 1.0 server answers ump \"1.0\" or refuses; "
                  f"{_spec('ump/capabilities-no-0.1-runtime')}", sent=reply.sent, received=reply.body)


def _does_not_speak_01(ctx: CheckContext) -> str | None:
    """How a server that answered a 0.1 client with 0.1 showed it does not speak 0.1 (None: it
    stored a 0.1 record and served it back as one, in exchanges naming 0.1)."""
    other = ctx.client.as_version("0.1")
    rec = _full_record(ctx, "semantic", text=f"{marker('v01')} a record remembered in UMP 0.1", ump="0.1")
    put = other.remember(rec, auth=_auth_for(rec)[0])
    _internal(put)
    if not put.ok or not _new_id(put):
        return f"remember of a 0.1 record in UMP 0.1 answered {put.describe()}"
    got = other.get(_new_id(put), auth=Auth.as_owner(OWNER_A))
    _internal(got)
    back = got.body.get("record") if got.ok and isinstance(got.body, dict) else None
    if not isinstance(back, dict):
        return f"get of the 0.1 record it stored ({_new_id(put)}) in UMP 0.1 answered {got.describe()}"
    if back.get("ump") != "0.1":
        return (f"the 0.1 record it stored came back as ump {back.get('ump')!r} in UMP 0.1 (a 1.0 server's import "
                "of a 0.1 record, normalized as §8 says)")
    return None


@check("ump/l1/capabilities-no-side-effects", spec="ump", requirements=("ump/capabilities-no-side-effects",),
       bindings=LIVE, title="calling capabilities changes no memory (§3.1)")
def capabilities_no_side_effects(ctx: CheckContext) -> None:
    """Three capabilities calls (plain, with a client announcement, with an unknown member):

    * a fresh record read with get and recall before and after must not change, nor may a record
      appear or vanish for its marker;
    * where the server offers subscribe, a subscription to the check's own project is open while
      the calls run (the fresh record lives there), followed by
      a remember of a sentinel record: the first change the stream delivers must be the
      sentinel's. A change delivered before it happened during the capabilities calls (were
      another client writing to the same server at that moment, rerun the check)."""
    _without_capabilities_tool(ctx)
    # A project of the check's own, outside every other check's: a server whose subscriptions
    # outlive their call keeps this one open for the session, and the subscribe checks can then
    # tell its rightful events from their own (suite/ump/attribution.py)
    project = f"github.com/example/memconform-caps-{marker('p')}"
    rec = _full_record(ctx, "semantic")
    rec["scope"]["project"] = project
    rid = _remember(ctx, rec)
    query = {"query": _word(rec), "scope": _scope(), "limit": 20}
    _, before = _get(ctx, rid)
    recall_before = _recall(ctx, query)
    if before is None or not recall_before.ok:
        raise NotApplicable("precondition failed: the fresh record could not be read back with get and recall")
    # The client's name carries a fresh marker: a memory the calls write about the client (a
    # blind red team's server stored a public one under its own DID) holds it, outside the
    # owners' scope the recalls above look in.
    client_mark = marker("cl")
    client = {"name": f"memconform {client_mark}", "ump": ctx.version}
    requests = [None, {"client": client}, {"client": client, "x-memconform-probe": True}]
    calls: list[Reply] = []
    sentinel = _full_record(ctx, "semantic", text=f"{marker('cs')} sentinel written after three capabilities calls")
    sentinel["scope"]["project"] = project
    written: list[Reply] = []

    def trigger() -> None:
        calls.extend(ctx.client.capabilities(r) for r in requests)
        written.append(ctx.client.remember(sentinel, auth=Auth.as_owner(OWNER_A)))

    outcome = None
    if _offers(ctx, "subscribe"):
        outcome = ctx.client.subscribe(trigger, auth=Auth.as_owner(OWNER_A), expect=1,
                                       request={"scope": {"owner": did(OWNER_A), "project": project}})
    if not calls:
        trigger()
    sent = [c.sent for c in calls]
    if outcome is not None and outcome.error_code is None and outcome.events and written and _accepted(written[0]):
        first = outcome.events[0]
        sentinel_id = _new_id(written[0])
        # However the server shapes its events, the sentinel's is the one naming its id or
        # carrying its marker word somewhere (an event may nest or re-key the record).
        seen = json.dumps(first, ensure_ascii=False)
        is_sentinel = any(mark in seen for mark in (sentinel_id, sentinel["id"], _word(sentinel)) if mark)
        if not is_sentinel:
            ctx.violation("ump/capabilities-no-side-effects", f"while the check called capabilities three times, "
                          f"before its own sentinel remember, the subscription delivered a change: "
                          f"{json.dumps(first, ensure_ascii=False)[:300]}; {_spec('ump/capabilities-no-side-effects')}",
                          sent=sent, received=first)
    _, after = _get(ctx, rid)
    recall_after = _recall(ctx, query)
    if after != before:
        diffs = _diff(before, after) or _diff(after, before)
        ctx.violation("ump/capabilities-no-side-effects", f"record {rid} changed across three capabilities calls: "
                      f"{'; '.join(diffs[:6]) or 'it is gone'}; {_spec('ump/capabilities-no-side-effects')}",
                      sent=sent, received={"before": before, "after": after}, where=rid)
    # Only the records holding the fresh record's marker are this check's: a ranking engine may add
    # any other record to the answer (the sentinel written meanwhile among them).
    ids_before, ids_after = (sorted(str(r["record"].get("id")) for r in results_of(reply)
                                    if isinstance(r.get("record"), dict)
                                    and _word(rec) in json.dumps(r["record"].get("body"), ensure_ascii=False))
                             for reply in (recall_before, recall_after))
    if ids_before != ids_after:
        ctx.violation("ump/capabilities-no-side-effects", f"recall for {_word(rec)!r} answered {ids_before} before "
                      f"and {ids_after} after three capabilities calls; "
                      f"{_spec('ump/capabilities-no-side-effects')}", sent=sent,
                      received={"before": recall_before.body, "after": recall_after.body})
    # The marker was never sent before the calls, so any record holding it was written by them;
    # owner-b (another owner) and owner-a, neither naming a scope, see any public one.
    for owner in (OWNER_B, OWNER_A):
        request = {"query": client_mark, "limit": 20}
        reply = _recall(ctx, request, auth=Auth.as_owner(owner), keep=False)
        written_by_calls = [r["record"].get("id") for r in results_of(reply) if isinstance(r.get("record"), dict)
                            and client_mark in json.dumps(r["record"], ensure_ascii=False)]
        if written_by_calls:
            ctx.violation("ump/capabilities-no-side-effects", f"the capabilities calls announced the client "
                          f"{json.dumps(client, ensure_ascii=False)}; afterwards recall {json.dumps(request)} as "
                          f"{owner} found {written_by_calls}, record(s) holding the client's name, which no call but "
                          f"capabilities ever sent: capabilities stored a memory; "
                          f"{_spec('ump/capabilities-no-side-effects')}", sent=sent, received=reply.body)
            break


# =============================================================================================
# recall (§3.2)
# =============================================================================================

def _remember_many(ctx: CheckContext, word: str, texts: list[str], kinds: list[str] | None = None,
                   **members: Any) -> list[str]:
    out = []
    for i, text in enumerate(texts):
        kind = kinds[i] if kinds else "semantic"
        out.append(_remember(ctx, _full_record(ctx, kind, text=f"{word} {text}", **members)))
    return out


@check("ump/l1/recall-shape", spec="ump", requirements=("ump/recall-result-shape", "ump/recall-signal-names"),
       bindings=LIVE, title="recall answers {results: [{record, signals, score}]} with standard signal names (§3.2)")
def recall_shape(ctx: CheckContext) -> None:
    """Signal names are judged only where a result carries a `signals` object."""
    ctx.credit_only_observed()
    word = marker("rs")
    _remember_many(ctx, word, ["first shape probe about pnpm", "second shape probe about lockfiles"])
    request = {"query": word, "scope": _scope(), "limit": 10}
    reply = _recall(ctx, request)
    _internal(reply)
    if not reply.ok:
        raise NotApplicable(f"recall failed ({reply.describe()}): judged by ump/l1/recall-finds-remembered")
    body = reply.body
    results = body.get("results")
    if not isinstance(results, list):
        ctx.violation("ump/recall-result-shape", f"the recall answer has no `results` list: {reply.describe()}; "
                      f"{_spec('ump/recall-result-shape')}", sent=request, received=body)
        return
    if not results:
        raise NotApplicable("recall for the marker of two fresh records answered no results; "
                            "judged by ump/l1/recall-finds-remembered")
    ctx.observed("ump/recall-result-shape")
    advertised = _caps_body(ctx).get("retrieval_signals")
    listed = {k for k in advertised if isinstance(k, str)} if isinstance(advertised, list) else set()
    allowed = set(SIGNALS) | listed
    for i, res in enumerate(results):
        where = f"results/{i}"
        if not isinstance(res, dict):
            ctx.violation("ump/recall-result-shape", f"{where} is {json.dumps(res)[:80]}, not an object "
                          f"{{record, signals, score}}; {_spec('ump/recall-result-shape')}",
                          sent=request, received=body, where=where)
            continue
        problems = []
        if not isinstance(res.get("record"), dict):
            problems.append(f"`record` is {json.dumps(res.get('record'))[:60]}, not a §2 record object")
        signals = res.get("signals")
        if not isinstance(signals, dict):
            problems.append(f"`signals` is {json.dumps(signals)[:60]}, not an object of numbers")
        else:
            ctx.observed("ump/recall-signal-names")
            bad = {k: v for k, v in signals.items() if isinstance(v, bool) or not isinstance(v, (int, float))}
            if bad:
                problems.append(f"signals {bad} are not numbers")
            unknown = sorted(k for k in signals if k not in allowed)
            # §3.2 closes no set of signals: an unlisted name is a standard signal reported under another
            # name only where the result lacks a standard one the server lists, or carries none at all
            lacking = sorted(k for k in SIGNALS if k in listed and k not in signals)
            if unknown and (lacking or not set(signals) & set(SIGNALS)):
                instead = (f"without the standard {lacking} that capabilities.retrieval_signals lists" if lacking
                           else "and no standard signal name at all")
                ctx.violation("ump/recall-signal-names", f"{where}/signals uses {unknown}, {instead}: a standard "
                              f"signal ({list(SIGNALS)}) reported under another name, neither standard nor "
                              f"listed in capabilities.retrieval_signals ({advertised}); "
                              f"{_spec('ump/recall-signal-names')}", sent=request, received=res, where=where)
            elif unknown and i == 0:
                ctx.note(f"{where}/signals also carries {unknown}, not listed in capabilities.retrieval_signals, "
                         "beside the standard names: an engine's own signal, not charged")
        score = res.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            problems.append(f"`score` is {json.dumps(score)}, not a number")
        if problems:
            ctx.violation("ump/recall-result-shape", f"{where}: " + "; ".join(problems) + "; §3.2 shows each "
                          "result as {record, signals: {similarity, …}, score}; "
                          f"{_spec('ump/recall-result-shape')}", sent=request, received=res, where=where)


@check("ump/l1/recall-ranked", spec="ump", requirements=("ump/recall-ranked",), bindings=LIVE,
       title="recall results come best first: score never increases down the list (§3.2)")
def recall_ranked(ctx: CheckContext) -> None:
    word = marker("rk")
    texts = [f"{word} {word} {word} ranking probe, the marker three times",
             "ranking probe with the marker once and a few more words around it",
             "ranking probe with the marker once and many many more words to make it a longer and weaker match"]
    _remember_many(ctx, word, texts)
    judged = 0
    for request in ({"query": word, "scope": _scope(), "limit": 10},
                    {"query": f"{word} ranking probe", "scope": _scope(), "limit": 10}):
        reply = _recall(ctx, request)
        _internal(reply)
        scores = [r.get("score") for r in results_of(reply)]
        if len(scores) < 2 or not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores):
            continue  # nothing to order (found too little, or scores missing: judged elsewhere)
        judged += 1
        for i in range(1, len(scores)):
            if scores[i] > scores[i - 1]:
                ctx.violation("ump/recall-ranked", f"results/{i} has score {scores[i]} above results/{i - 1} "
                              f"({scores[i - 1]}): the list is not ranked best first (scores {scores}); "
                              f"{_spec('ump/recall-ranked')}", sent=request, received=reply.body)
                break
    if not judged:
        raise NotApplicable("recall returned fewer than two scored results for three fresh records; "
                            "judged by ump/l1/recall-finds-remembered and ump/l1/recall-shape")


@check("ump/l1/recall-finds-remembered", spec="ump", requirements=("ump/recall-finds-remembered",),
       bindings=LIVE, title="a record just remembered is found by a recall for its text in its owner's scope (§3.2)")
def recall_finds_remembered(ctx: CheckContext) -> None:
    """An ASCII text, and one of accents, a symbol and an astral emoji: recall is asked the exact text
    (a query encoded as ASCII for a cache key failed inside the server; a blind red team, round 22)."""
    for n, text in enumerate(("run the release checklist before tagging", "le café ouvre à 8 h ☕ 😀 naïve")):
        rec = _full_record(ctx, "procedural", text=f"{marker('rf')} {text}")
        rid = _remember(ctx, rec)
        request = {"query": rec["body"]["text"], "scope": _scope()}
        reply = _recall(ctx, request)
        if n and (reply.error_code == "internal" or (reply.status or 0) >= 500):
            # the ASCII recall just before was answered: this failure is the text's, not the target's state
            ctx.violation("ump/recall-finds-remembered", f"recall for the exact text {rec['body']['text']!r} of the "
                          f"record {rid} failed inside the server ({reply.describe()}), while a recall for ASCII text "
                          f"was answered; {_spec('ump/recall-finds-remembered')}", sent=request,
                          received=reply.body or reply.raw, where=rid)
            continue
        _internal(reply)
        if reply.ok and rid in _recall_ids(reply):
            continue
        word_reply = _recall(ctx, {"query": _word(rec), "scope": _scope()})
        also = (" (a recall for its marker word alone finds it)" if rid in _recall_ids(word_reply)
                else " (a recall for its marker word alone does not find it either)")
        ctx.violation("ump/recall-finds-remembered", f"record {rid} was remembered, then recall for its exact "
                      f"body text {rec['body']['text']!r} in its owner's scope answered {reply.describe()} without "
                      f"it{also}; {_spec('ump/recall-finds-remembered')}", sent=request,
                      received=reply.body or reply.raw, where=rid)


@check("ump/l1/recall-filter-kind", spec="ump", requirements=("ump/recall-filter-kind",), bindings=LIVE,
       title="filter.kind limits recall to the listed kinds (§3.2)")
def recall_filter_kind(ctx: CheckContext) -> None:
    word = marker("fk")
    kinds = ["semantic", "procedural", "episodic"]
    ids = _remember_many(ctx, word, ["kind filter probe one", "kind filter probe two", "kind filter probe three"],
                         kinds=kinds)
    kind_of = dict(zip(ids, kinds))
    base = _recall(ctx, {"query": word, "scope": _scope(), "limit": 20})
    found = set(_recall_ids(base))
    if not found & set(ids):
        raise NotApplicable("an unfiltered recall does not find the fresh records; judged by "
                            "ump/l1/recall-finds-remembered")
    for wanted in (["procedural"], ["semantic", "episodic"]):
        request = {"query": word, "scope": _scope(), "filter": {"kind": wanted}, "limit": 20}
        reply = _recall(ctx, request)
        _internal(reply)
        if not reply.ok:
            ctx.violation("ump/recall-filter-kind", f"recall with filter.kind {wanted} was refused: "
                          f"{reply.describe()}; {_spec('ump/recall-filter-kind')}", sent=request,
                          received=reply.body or reply.raw)
            continue
        for i, res in enumerate(results_of(reply)):
            rec = res.get("record") if isinstance(res.get("record"), dict) else {}
            if rec.get("kind") not in wanted:
                ctx.violation("ump/recall-filter-kind", f"recall with filter.kind {wanted} returned "
                              f"{rec.get('id')} of kind {rec.get('kind')!r} at results/{i}; "
                              f"{_spec('ump/recall-filter-kind')}", sent=request, received=res)
        expected = {i for i in ids if i in found and kind_of[i] in wanted}
        missing = expected - set(_recall_ids(reply))
        if missing:
            ctx.violation("ump/recall-filter-kind", f"recall with filter.kind {wanted} left out "
                          f"{sorted(missing)}, records of a listed kind that the unfiltered recall returns: the "
                          f"filter removes other kinds, not matching ones; {_spec('ump/recall-filter-kind')}",
                          sent=request, received=reply.body)
        _filter_before_limit(ctx, word, wanted, reply)


def _filter_before_limit(ctx: CheckContext, word: str, wanted: list[str], filtered: Reply) -> None:
    """The same filtered recall with limit 1 must still answer one record of a listed kind: a
    server that cuts the ranking to `limit` and filters afterwards answers nothing whenever the
    best match is of another kind (a blind red team's bug). The two filters of the check are
    disjoint and together cover the three records' kinds, so whichever kind ranks first, one of
    them shows it, whatever the ranking."""
    if not [r for r in results_of(filtered) if isinstance(r.get("record"), dict)
            and r["record"].get("kind") in wanted]:
        return  # nothing of the listed kinds to find: what limit 1 answers shows nothing
    request = {"query": word, "scope": _scope(), "filter": {"kind": wanted}, "limit": 1}
    reply = _recall(ctx, request)
    _internal(reply)
    if reply.ok and not results_of(reply):
        bare = {"query": word, "scope": _scope(), "limit": 1}
        unfiltered = _recall(ctx, bare)
        if unfiltered.ok and not results_of(unfiltered):
            # limit 1 answers nothing without a filter either: the limit is miscounted, not the filter
            # (round 17's server answered limit - 1 results; this blamed the filter)
            ctx.note(f"recall for {word!r} with limit 1 answered no results with or without filter.kind {wanted}, "
                     f"while limit 20 answered {sorted(_recall_ids(filtered))}: the limit, not the kind filter, "
                     "drops them; whether the filter comes before the limit was not seen")
            return
        ctx.violation("ump/recall-filter-kind", f"recall with filter.kind {wanted} and limit 1 answered no "
                      f"results, while the same recall with limit 20 answered {sorted(_recall_ids(filtered))} of "
                      f"the listed kinds: the limit counts the results after the filter, not the ranking before "
                      f"it; {_spec('ump/recall-filter-kind')}", sent=request, received=reply.body)


@check("ump/l1/recall-limit", spec="ump", requirements=("ump/recall-limit",), bindings=LIVE,
       title="recall returns at most `limit` results and at most capabilities.max_recall (§3.2)")
def recall_limit(ctx: CheckContext) -> None:
    """Four records, recalled with limits 10, 2 and 1; then, where capabilities advertises a
    max_recall (up to 100), max_recall + 1 records recalled with a limit ten past it."""
    word = marker("lm")
    _remember_many(ctx, word, [f"limit probe number {n}" for n in ("one", "two", "three", "four")])
    base = _recall(ctx, {"query": word, "scope": _scope(), "limit": 10})
    available = len(results_of(base))
    if available < 3:
        raise NotApplicable(f"a recall with limit 10 found {available} of four fresh records: too few to see "
                            "a limit at work (judged by ump/l1/recall-finds-remembered)")
    max_recall = _caps_body(ctx).get("max_recall")
    replies = [base]
    for limit in (2, 1):
        request = {"query": word, "scope": _scope(), "limit": limit}
        reply = _recall(ctx, request)
        _internal(reply)
        replies.append(reply)
        n = len(results_of(reply))
        if not reply.ok:
            ctx.violation("ump/recall-limit", f"recall with limit {limit} was refused: {reply.describe()}; "
                          f"{_spec('ump/recall-limit')}", sent=request, received=reply.body or reply.raw)
        elif n > limit:
            ctx.violation("ump/recall-limit", f"recall with limit {limit} returned {n} results (the store "
                          f"holds {available} matches); {_spec('ump/recall-limit')}", sent=request,
                          received=reply.body)
    if isinstance(max_recall, int) and not isinstance(max_recall, bool):
        replies += _past_max_recall(ctx, word, max_recall)
        for reply in replies:
            n = len(results_of(reply))
            if n > max_recall:
                asked = reply.sent.get("limit") if isinstance(reply.sent, dict) else None
                ctx.violation("ump/recall-limit", f"recall with limit {asked} returned {n} results, more than "
                              f"capabilities.max_recall {max_recall}; {_spec('ump/recall-limit')}", sent=reply.sent,
                              received=reply.body)


#: The largest max_recall whose bound is probed with max_recall + 1 matching records (one remember each).
PROBED_MAX_RECALL = 100


def _past_max_recall(ctx: CheckContext, word: str, max_recall: int) -> list[Reply]:
    """A recall with a limit past max_recall once max_recall + 1 records match it (the four the
    check placed and the rest): its answer, to be judged against max_recall. A refusal of such a
    limit is the server's to make (it cannot answer too many)."""
    if not 4 <= max_recall <= PROBED_MAX_RECALL:
        ctx.note(f"capabilities.max_recall {max_recall} was not probed with more matches than it (the check places "
                 f"at most {PROBED_MAX_RECALL + 1} records)")
        return []
    _remember_many(ctx, word, [f"limit probe number {n}" for n in range(5, max_recall + 2)])
    reply = _recall(ctx, {"query": word, "scope": _scope(), "limit": max_recall + 10})
    _internal(reply)
    return [reply]


@check("ump/l1/recall-ranking-hints", spec="ump", requirements=("ump/recall-ranking-hints",), bindings=LIVE,
       title="a recall carrying ranking_hints is served (§3.2, MAY use them)")
def recall_ranking_hints(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    rid = _remember(ctx, rec)
    request = {"query": _word(rec), "scope": _scope(), "limit": 5, "ranking_hints": {"prefer": ["recency"]}}
    reply = _recall(ctx, request)
    _internal(reply)
    if not reply.ok or not isinstance(reply.body.get("results"), list):
        ctx.violation("ump/recall-ranking-hints", f"recall with the optional client steer ranking_hints was not "
                      f"served: {reply.describe()}; {_spec('ump/recall-ranking-hints')}", sent=request,
                      received=reply.body or reply.raw)
    elif rid not in _recall_ids(reply):
        ctx.violation("ump/recall-ranking-hints", f"with ranking_hints the recall for {_word(rec)!r} no longer "
                      f"returns {rid}; hints steer ranking, they do not filter; "
                      f"{_spec('ump/recall-ranking-hints')}", sent=request, received=reply.body)


@check("ump/l1/recall-valid-at", spec="ump", requirements=("ump/recall-valid-at-recommended",), bindings=LIVE,
       title="recall honours filter.valid_at (point-in-time) (§3.2 SHOULD)")
def recall_valid_at(ctx: CheckContext) -> None:
    word = marker("va")
    created = _now()
    past = _full_record(ctx, "semantic", text=f"{word} was true in the year 2000 only",
                        time={"created": created, "valid_from": "2000-01-01T00:00:00Z",
                              "valid_to": "2001-01-01T00:00:00Z"})
    future = _full_record(ctx, "semantic", text=f"{word} becomes true in the year 2100",
                          time={"created": created, "valid_from": "2100-01-01T00:00:00Z", "valid_to": None})
    past_id, future_id = _remember(ctx, past), _remember(ctx, future)
    for at, inside, outside in (("2000-06-01T00:00:00Z", past_id, future_id),
                                ("2100-06-01T00:00:00Z", future_id, past_id)):
        request = {"query": word, "scope": _scope(), "filter": {"valid_at": at}, "limit": 10}
        reply = _recall(ctx, request)
        _internal(reply)
        got = _recall_ids(reply)
        if not reply.ok:
            ctx.violation("ump/recall-valid-at-recommended", f"recall with filter.valid_at {at} was refused: "
                          f"{reply.describe()}; {_spec('ump/recall-valid-at-recommended')}", sent=request,
                          received=reply.body or reply.raw)
            continue
        if inside not in got:
            ctx.violation("ump/recall-valid-at-recommended", f"recall at valid_at {at} leaves out {inside}, "
                          f"which is valid then; {_spec('ump/recall-valid-at-recommended')}", sent=request,
                          received=reply.body)
        if outside in got:
            ctx.violation("ump/recall-valid-at-recommended", f"recall at valid_at {at} returns {outside}, whose "
                          f"valid time does not include that instant; "
                          f"{_spec('ump/recall-valid-at-recommended')}", sent=request, received=reply.body)


@check("ump/l1/lifecycle-hints-ranking", spec="ump", requirements=("ump/lifecycle-hints-ranking",), bindings=LIVE,
       title="recall ranking may use lifecycle hints (§2.4, MAY)")
def lifecycle_hints_ranking(ctx: CheckContext) -> None:
    """Two records alike but for their hints (salience and confidence 0.95 against 0.05; the
    low one is newer, so recency cannot explain a win of the high one). Informational."""
    word = marker("lh")
    high = _full_record(ctx, "semantic", text=f"{word} hint probe alpha",
                        lifecycle={"confidence": 0.95, "salience": 0.95, "status": "active"})
    low = _full_record(ctx, "semantic", text=f"{word} hint probe omega",
                       lifecycle={"confidence": 0.05, "salience": 0.05, "status": "active"})
    high_id, low_id = _remember(ctx, high), _remember(ctx, low)
    request = {"query": word, "scope": _scope(), "limit": 10}
    reply = _recall(ctx, request)
    by_id = {r["record"].get("id"): r for r in results_of(reply) if isinstance(r.get("record"), dict)}
    if high_id not in by_id or low_id not in by_id:
        raise NotApplicable("recall did not return both fresh records (judged by ump/l1/recall-finds-remembered)")
    h, lo = by_id[high_id], by_id[low_id]
    hs, ls = h.get("score"), lo.get("score")
    sal = [(r.get("signals") or {}).get("salience") if isinstance(r.get("signals"), dict) else None for r in (h, lo)]
    uses = (isinstance(hs, (int, float)) and isinstance(ls, (int, float)) and hs > ls) or \
           (sal[0] is not None and sal[1] is not None and sal[0] != sal[1])
    if not uses:
        ctx.violation("ump/lifecycle-hints-ranking", f"records differing only in lifecycle hints (salience 0.95 vs "
                      f"0.05) got scores {hs} and {ls} and salience signals {sal[0]} and {sal[1]}: the ranking "
                      f"does not use the hints; {_spec('ump/lifecycle-hints-ranking')}", sent=request,
                      received=reply.body)


@check("ump/l1/recall-candidate", spec="ump", requirements=("ump/recall-candidate-may",), bindings=LIVE,
       title="recall may return records whose lifecycle.status is candidate (§2.9, MAY)")
def recall_candidate(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic", lifecycle={"status": "candidate", "confidence": 0.4})
    reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    if not _accepted(reply) or not _new_id(reply):
        raise NotApplicable(f"the server does not admit a candidate record ({reply.describe()}): an admission "
                            "policy (§2.9) it may have")
    rid = _new_id(reply)
    request = {"query": _word(rec), "scope": _scope(), "limit": 5}
    got = _recall(ctx, request)
    if rid not in _recall_ids(got):
        ctx.violation("ump/recall-candidate-may", f"recall for {_word(rec)!r} leaves out {rid}, the candidate "
                      f"record it matches; {_spec('ump/recall-candidate-may')}", sent=request, received=got.body)


# =============================================================================================
# remember (§3.3, §2.9)
# =============================================================================================

@check("ump/l1/remember-result", spec="ump", requirements=("ump/remember-reports-result", "ump/remember-returns-id"),
       bindings=LIVE, title="remember reports created|merged|rejected and the id of the stored record (§3.3)")
def remember_result(ctx: CheckContext) -> None:
    """remember-returns-id is judged only on a created or merged answer."""
    ctx.credit_only_observed()
    rec = _full_record(ctx, "procedural")
    reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    body = reply.body if isinstance(reply.body, dict) else None
    ctx.observed("ump/remember-reports-result")
    if not reply.ok or body is None:
        ctx.note("remember answered no {id, result}, so no id was read")
        ctx.violation("ump/remember-reports-result", f"remember of a fresh, complete, valid record answered "
                      f"{reply.describe()} instead of {{id, result}}; {_spec('ump/remember-reports-result')}",
                      sent=reply.sent, received=reply.body or reply.raw)
        return
    result = body.get("result")
    if result not in ("created", "merged", "rejected"):
        ctx.note(f"remember answered result {json.dumps(result)}, so whether its id is a stored record's was not judged")
        ctx.violation("ump/remember-reports-result", f"remember answered result {json.dumps(result)}; it must "
                      f"report created, merged or rejected; {_spec('ump/remember-reports-result')}",
                      sent=reply.sent, received=body)
        return
    if result == "rejected":
        raise NotApplicable("the server rejected a fresh valid record (an admission policy it may have, §2.9): "
                            "no id to judge")
    rid = body.get("id")
    ctx.observed("ump/remember-returns-id")
    if not (isinstance(rid, str) and rid.startswith("urn:ump:")):
        ctx.violation("ump/remember-returns-id", f"remember answered result {result!r} with id {json.dumps(rid)}; "
                      f"a created or merged record's id (urn:ump:…) is part of the answer; "
                      f"{_spec('ump/remember-returns-id')}", sent=reply.sent, received=body)
        return
    # a merge answers the id too: the same partial record twice
    twin = sample_record("semantic")
    twin["time"] = {"created": _now(), "valid_from": _now()}
    answers = [_put(ctx, copy.deepcopy(twin), auth=Auth.as_owner(OWNER_A)) for _ in range(2)]
    for answer in answers:
        _internal(answer)
        answered = answer.body.get("id") if isinstance(answer.body, dict) else None
        if _accepted(answer) and not (isinstance(answered, str) and answered.startswith("urn:ump:")):
            ctx.violation("ump/remember-returns-id", f"remember answered result {answer.body.get('result')!r} "
                          f"without an id ({answer.describe()}); created and merged both answer the stored "
                          f"record's id; {_spec('ump/remember-returns-id')}", sent=twin, received=answer.body)
    _, stored = _get(ctx, rid)
    if stored is None:
        got = _offered(ctx.client.get(rid, auth=Auth.as_owner(OWNER_A)))
        if got.error_code == "not_found":
            ctx.violation("ump/remember-returns-id", f"remember answered id {rid} ({result}) but get of that id "
                          f"answers not_found: it is not the id of a stored record; "
                          f"{_spec('ump/remember-returns-id')}", sent=reply.sent, received=got.body)


@check("ump/l1/remember-merge", spec="ump", requirements=("ump/remember-may-merge",
                                                        "ump/remember-merge-returns-existing-id",
                                                        "ump/remember-reports-result"),
       bindings=LIVE, title="a merging remember answers the existing record's id (§3.3)")
def remember_merge(ctx: CheckContext) -> None:
    """The same partial record (no id) twice. Not merging is fine (MAY: informational); merging
    must answer the id of the record merged into, and be reported as merged: a second "created"
    naming the first record's id is a merge reported as a creation. Judged once the second
    remember was taken: its result and id are both compared with the first record's (a
    non-merging server shows a creation under a new id, no merge answered otherwise)."""
    ctx.credit_only_observed()
    now = _now()
    rec = sample_record("semantic")
    rec["time"] = {"created": now, "valid_from": now}
    first = _put(ctx, copy.deepcopy(rec), auth=Auth.as_owner(OWNER_A))
    _internal(first)
    if not _accepted(first) or not _new_id(first):
        raise NotApplicable(f"precondition failed: the first remember answered {first.describe()}")
    first_id = _new_id(first)
    second = _put(ctx, copy.deepcopy(rec), auth=Auth.as_owner(OWNER_A))
    _internal(second)
    if not _accepted(second):
        raise NotApplicable(f"the identical second remember answered {second.describe()}; judged by "
                            "ump/l1/remember-result")
    result, second_id = second.body.get("result"), _new_id(second)
    ctx.observed("ump/remember-may-merge", "ump/remember-reports-result", "ump/remember-merge-returns-existing-id")
    if result == "created" and second_id == first_id:
        ctx.violation("ump/remember-reports-result", f"the identical second remember answered created with the "
                      f"id of the first record, {first_id}: it merged into it and must report merged; "
                      f"{_spec('ump/remember-reports-result')}", sent=rec,
                      received={"first": first.body, "second": second.body})
        return
    if result == "created":
        ctx.violation("ump/remember-may-merge", f"an identical record remembered twice was created twice "
                      f"({first_id}, {second_id}): this server does not merge duplicates; "
                      f"{_spec('ump/remember-may-merge')}", sent=rec, received=second.body)
        return
    if second_id != first_id:
        _, got = _get(ctx, second_id) if second_id else (None, None)
        ctx.violation("ump/remember-merge-returns-existing-id", f"the second identical remember answered merged "
                      f"with id {second_id!r}, but the record it duplicates is {first_id}"
                      + (f" (get {second_id} answers a record with text {got.get('body', {}).get('text')!r})"
                         if got else " (get of that id answers no record)")
                      + f"; {_spec('ump/remember-merge-returns-existing-id')}", sent=rec,
                      received={"first": first.body, "second": second.body})
        return
    read, got = _get(ctx, first_id)
    if got is None and _code(read) != "not_found":
        raise NotApplicable(f"get {first_id} answered {read.describe()} (judged by ump/l1/get)")
    if got is None or (got.get("body") or {}).get("text") != rec["body"]["text"]:
        ctx.violation("ump/remember-merge-returns-existing-id", f"merged into {first_id}, but get of that id "
                      f"answers {json.dumps(got)[:200] if got else 'no record'}; "
                      f"{_spec('ump/remember-merge-returns-existing-id')}", sent=rec, received=got)


@check("ump/l1/remember-merge-own-owner", spec="ump", requirements=("ump/remember-persists",), bindings=LIVE,
       title="a remember is never merged into another owner's record")
def remember_merge_own_owner(ctx: CheckContext) -> None:
    """owner-a remembers a public record; owner-b remembers one with the same kind and text, its own.
    A merge is the server's dedup policy (§3.3 MAY), but one into owner-a's record answers owner-b
    with a record whose owner is owner-a: owner-b's memory is not stored as owner-b's, and owner-b
    learns owner-a's id (a blind red team's server). Created, or merged into a record of owner-b's,
    is right."""
    text = f"{marker('mgo')} the same words, written by two owners"
    theirs = sample_record("semantic", text=text, visibility="public")
    first = _put(ctx, theirs, auth=Auth.as_owner(OWNER_A))
    _internal(first)
    if not _accepted(first) or not _new_id(first):
        raise NotApplicable(f"precondition failed: owner-a's remember answered {first.describe()}")
    mine = sample_record("semantic", owner=OWNER_B, text=text, visibility="public")
    second = _put(ctx, mine, auth=Auth.as_owner(OWNER_B))
    _internal(second)
    if not _accepted(second) or not _new_id(second):
        raise NotApplicable(f"owner-b's remember answered {second.describe()}; judged by ump/l1/remember-result")
    # judged on what owner-b reads back (a server that keeps nothing shows nothing either way)
    read, got = _get(ctx, _new_id(second), auth=Auth.as_owner(OWNER_B))
    if got is None:
        raise NotApplicable(f"owner-b's get of {_new_id(second)}, the id its remember answered, answered "
                            f"{read.describe()}; judged by ump/l1/remember-persists")
    owner = (got.get("scope") or {}).get("owner")
    if _new_id(second) == _new_id(first) or owner != did(OWNER_B):
        ctx.violation("ump/remember-persists", f"owner-b's remember of its own record was answered "
                      f"{second.body.get('result')!r} with id {_new_id(second)}"
                      + (", owner-a's record of the same text" if _new_id(second) == _new_id(first) else "")
                      + f" (get answers it with scope.owner {owner!r}): owner-b's memory is not stored as its own; "
                      f"{_spec('ump/remember-persists')}",
                      sent=mine, received={"owner-a's remember": first.body, "owner-b's remember": second.body,
                                           "owner-b's get": got})


@check("ump/l1/remember-fills-id", spec="ump", requirements=("ump/remember-fills-id",), bindings=LIVE,
       title="remember takes a record without id and gives it one (§3.3)")
def remember_fills_id(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    del rec["id"]
    reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    if not _accepted(reply):
        ctx.violation("ump/remember-fills-id", f"remember of a record without id was answered "
                      f"{reply.describe()}; the server fills the id; {_spec('ump/remember-fills-id')}",
                      sent=rec, received=reply.body or reply.raw)
        return
    rid = _new_id(reply)
    if rid is None:
        raise NotApplicable("remember answered no id (judged by ump/l1/remember-result)")
    _, stored = _get(ctx, rid)
    if stored is None:
        raise NotApplicable(f"get {rid} answers no record (judged by ump/l1/get)")
    if not isinstance(stored.get("id"), str) or not stored["id"]:
        ctx.violation("ump/remember-fills-id", f"the stored record has id {json.dumps(stored.get('id'))}: the "
                      f"server must give it one; {_spec('ump/remember-fills-id')}", sent=rec, received=stored)


@check("ump/l1/remember-fills-time", spec="ump", requirements=("ump/remember-fills-time",), bindings=LIVE,
       title="remember takes a record without time and sets time.created (§3.3)")
def remember_fills_time(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "episodic")
    del rec["time"]
    reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    if not _accepted(reply):
        ctx.violation("ump/remember-fills-time", f"remember of a record without time was answered "
                      f"{reply.describe()}; the server fills time; {_spec('ump/remember-fills-time')}",
                      sent=rec, received=reply.body or reply.raw)
        return
    rid = _new_id(reply)
    if rid is None:
        raise NotApplicable("remember answered no id (judged by ump/l1/remember-result)")
    _, stored = _get(ctx, rid)
    if stored is None:
        raise NotApplicable(f"get {rid} answers no record (judged by ump/l1/get)")
    created = stored.get("time", {}).get("created") if isinstance(stored.get("time"), dict) else None
    if not ump_record.is_date_time(created):
        ctx.violation("ump/remember-fills-time", f"the stored record's time.created is {json.dumps(created)}; "
                      f"the server must fill it with an RFC 3339 date-time; {_spec('ump/remember-fills-time')}",
                      sent=rec, received=stored)


@check("ump/l1/remember-persists", spec="ump", requirements=("ump/remember-persists",), bindings=LIVE,
       title="a created record is returned by get with its kind, body.text and owner (§3.3)")
def remember_persists(ctx: CheckContext) -> None:
    judged = 0
    for kind in ("identity", "procedural"):
        rec = _full_record(ctx, kind, text=f"{marker('rp')} persisted {kind} memory ✓ with unicode — ok")
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        if not _accepted(reply) or reply.body.get("result") != "created" or not _new_id(reply):
            continue
        rid = _new_id(reply)
        got, stored = _get(ctx, rid)
        if stored is None:
            if _code(got) == "not_found":  # (any other failure of get is ump/l1/get's to judge)
                judged += 1
                ctx.violation("ump/remember-persists", f"remember answered created {rid}, then get answered "
                              f"{got.describe()}; {_spec('ump/remember-persists')}", sent=rec, received=got.body)
            continue
        judged += 1
        for path, sent_v, got_v in (("kind", rec["kind"], stored.get("kind")),
                                    ("body.text", rec["body"]["text"], (stored.get("body") or {}).get("text")),
                                    ("scope.owner", rec["scope"]["owner"], (stored.get("scope") or {}).get("owner"))):
            if sent_v != got_v:
                ctx.violation("ump/remember-persists", f"{path} was {json.dumps(sent_v, ensure_ascii=False)} when "
                              f"remembered and is {json.dumps(got_v, ensure_ascii=False)} on get {rid}; "
                              f"{_spec('ump/remember-persists')}", sent=rec, received=stored, where=rid)
    if not judged:
        raise NotApplicable("no fresh record was answered created with an id (judged by ump/l1/remember-result)")


def _unknown_major(sent: Any) -> bool:
    """Whether a record declares a major version no UMP text defines."""
    declared = sent.get("ump") if isinstance(sent, dict) else None
    return isinstance(declared, str) and declared.split(".")[0] not in {v.split(".")[0] for v in ump_record.VERSIONS}


def _version_refused(ctx: CheckContext, what: str) -> None:
    """Where remember of a record of an unknown major answered `unsupported`: that refuses the version
    (§8 says reject, §3.7 lists the code; a blind red team's server, round 22) when a valid record is
    taken at once after; otherwise no remember is offered and nothing is judged."""
    control = _offered(_put(ctx, _full_record(ctx, "semantic", text=f"{marker('um')} a record of this version"),
                            auth=Auth.as_owner(OWNER_A)))
    if not control.ok:
        raise NotApplicable(f"remember of {what} answered unsupported, and a valid record was not taken either "
                            f"({control.describe()}): whether the version was refused cannot be told")


def _refused_and_not_stored(ctx: CheckContext, requirement: str, sent: Any, what: str, *,
                            wanted: str = "invalid_record", wrap: bool = True, version_refusal: bool = False) -> bool:
    """Send `sent` to remember; it must be refused with `wanted` and leave nothing behind.
    Returns whether it was judged. `version_refusal`: `unsupported` is a refusal too (§3.7 names it, and
    a version the server does not speak is unsupported), where a valid record is taken at once after."""
    auth, granted = _auth_for(sent)
    reply = _put(ctx, sent, auth=auth, wrap=wrap, offered=not version_refusal)
    _internal(reply)
    which_refusal(reply, f"remember of {what} (expected {wanted})")
    code = _code(reply)
    # §3.3 lists `rejected` among remember's results, so {result: "rejected"} is a refusal as good
    # as the error envelope. And a request whose record names no owner the token grants may be
    # refused by authorization before anything reads the body: the text orders neither.
    refusals = {wanted, "rejected"} | (set() if granted else {"forbidden_scope", "unauthorized"})
    if version_refusal and code == "unsupported":
        _version_refused(ctx, what)
        refusals.add("unsupported")
    if code is None:
        ctx.violation(requirement, f"remember of {what} was accepted ({reply.describe()}); the spec asks for a "
                      f"refusal with {wanted}; {_spec(requirement)}", sent=reply.sent, received=reply.body)
    elif code not in refusals:
        ctx.violation(requirement, f"remember of {what} was refused with {code}, but the §3.7 code for a record "
                      f"that is not valid is {wanted}: {reply.describe()}; {_spec(requirement)}",
                      sent=reply.sent, received=reply.body or reply.raw)
    if isinstance(sent, dict):
        left = _stored_copy(ctx, sent, auth)
        if left is None and isinstance(sent.get("body"), dict) and isinstance(sent["body"].get("text"), str):
            word = sent["body"]["text"].split()[0]
            found = ctx.client.recall({"query": word, "scope": _scope()}, auth=Auth.as_owner(OWNER_A))
            # A ranking engine may answer any record for a word it does not hold (similarity is
            # never zero): only a result carrying this record's own marker is the refused record.
            left = next((r["record"] for r in results_of(found) if isinstance(r.get("record"), dict)
                         and word in json.dumps(r["record"].get("body"), ensure_ascii=False)), None)
        if left is not None:
            ctx.violation(requirement, f"remember of {what} answered {code or 'success'}, and the store now holds "
                          f"it ({left.get('id')}): a refused record is not stored; {_spec(requirement)}",
                          sent=sent, received=left)
    return True


@check("ump/l1/remember-invalid", spec="ump", requirements=("ump/remember-invalid-record",), bindings=LIVE,
       title="remember refuses what is not a (partial) record with invalid_record and stores nothing (§3.3)")
def remember_invalid(ctx: CheckContext) -> None:
    no_body = _full_record(ctx, "semantic")
    del no_body["body"]
    _refused_and_not_stored(ctx, "ump/remember-invalid-record", no_body, "a record without body")
    body_not_object = _full_record(ctx, "semantic")
    word = _word(body_not_object)
    body_not_object["body"] = f"{word} a body that is a string, not an object"
    _refused_and_not_stored(ctx, "ump/remember-invalid-record", body_not_object, "a record whose body is a string")
    _refused_and_not_stored(ctx, "ump/remember-invalid-record", f"{marker('ri')} not a record at all",
                            "a JSON string where the record belongs")
    if ctx.binding == "http":  # (MCP tool arguments are an object by the MCP protocol itself)
        _refused_and_not_stored(ctx, "ump/remember-invalid-record", [_full_record(ctx, "semantic")],
                                "a JSON array where the request object belongs", wrap=False)
        text = b'{"record": {"kind": "semantic", "body": {"text": "unterminated'
        reply = ctx.client.call_raw("POST", "/ump/remember", text,
                                    {"Content-Type": "application/json", "UMP-Version": ctx.version})
        _internal(reply)
        if _code(reply) != "invalid_record":
            ctx.violation("ump/remember-invalid-record", f"POST /ump/remember with a body that is not JSON was "
                          f"answered {reply.describe()}; bad JSON is refused with invalid_record; "
                          f"{_spec('ump/remember-invalid-record')}", sent=text.decode(),
                          received=reply.body or reply.raw)


@check("ump/l1/reject-invalid-record", spec="ump", requirements=("ump/reject-invalid-record",), bindings=LIVE,
       title="remember refuses records breaking a §2 rule with invalid_record and stores nothing (§3.3)")
def reject_invalid_record(ctx: CheckContext) -> None:
    """Complete records, each breaking one §2 rule, each with its own id and marker: refused with
    invalid_record, and afterwards neither get of the id nor a recall of the marker finds it."""
    def kind(rec: dict) -> None:
        rec["kind"] = "opinion"

    def visibility(rec: dict) -> None:
        rec["scope"]["visibility"] = "secret"

    def created(rec: dict) -> None:
        rec["time"]["created"] = "yesterday"

    def confidence(rec: dict) -> None:
        rec["lifecycle"] = {"confidence": 3.5, "status": "active"}

    # the rules read as written, not loosely (a blind red team, round 20): an enum value is its literal, a
    # boolean is no number, and valid_to before valid_from is judged as instants (an offset, a fraction)
    def visibility_case(rec: dict) -> None:
        rec["scope"]["visibility"] = "Public"

    def confidence_bool(rec: dict) -> None:
        rec["lifecycle"] = {"confidence": True, "status": "active"}

    def valid_to_offset(rec: dict) -> None:
        rec["time"]["valid_from"] = "2026-06-04T10:00:00Z"
        rec["time"]["valid_to"] = "2026-06-04T11:00:00+02:00"

    def valid_to_fraction(rec: dict) -> None:
        rec["time"]["valid_from"] = "2026-06-04T10:00:00.5Z"
        rec["time"]["valid_to"] = "2026-06-04T10:00:00.1Z"

    # a member's type and a relation's target are §2 rules too (round 22: a server took any structured
    # value, and a relation naming no target)
    def structured_array(rec: dict) -> None:
        rec["body"]["structured"] = [1, 2]

    def relation_without_target(rec: dict) -> None:
        rec["relations"] = [{"type": "about"}]

    probes = {"kind is outside the five": kind, "scope.visibility is outside private|shared|public": visibility,
              "body.structured is an array (a machine-readable payload is an object)": structured_array,
              "relation names no target (a record urn:ump:… or an entity:<name> node)": relation_without_target,
              "time.created is not a date-time": created, "lifecycle.confidence is above 1": confidence,
              "scope.visibility is \"Public\" (the values are lower case)": visibility_case,
              "lifecycle.confidence is true (a boolean, no number)": confidence_bool,
              "time.valid_to (11:00+02:00, 09:00Z) lies before time.valid_from (10:00Z)": valid_to_offset,
              "time.valid_to lies 0.4 s before time.valid_from": valid_to_fraction}
    for what, spoil in probes.items():
        rec = _full_record(ctx, "semantic")
        spoil(rec)
        _refused_and_not_stored(ctx, "ump/reject-invalid-record", rec, f"a record whose {what}")


@check("ump/l1/admission-may-reject", spec="ump", requirements=("ump/admission-may-reject",), bindings=LIVE,
       title="a record held back by admission policy is reported rejected and not stored (§2.9, MAY)")
def admission_may_reject(ctx: CheckContext) -> None:
    """An unreviewed, model-extracted candidate record: a server with an admission workflow may
    hold it back. When it does, the rejection must be reported (result rejected or an error) and
    nothing stored. A server that admits it shows no admission gate: nothing to judge."""
    rec = _full_record(ctx, "semantic", lifecycle={"status": "candidate", "confidence": 0.2},
                       provenance={"actor": did(OWNER_A), "actor_kind": "model", "method": "unreviewed_extraction"})
    reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    if _accepted(reply):
        raise NotApplicable("the server admitted an unreviewed candidate record: no admission gate is visible "
                            "(§2.9 makes one optional)")
    code = _code(reply)
    if code not in ERROR_CODES and code != "rejected":
        ctx.violation("ump/admission-may-reject", f"the record was held back, but the answer {reply.describe()} "
                      f"is neither result rejected nor a §3.7 error; {_spec('ump/admission-may-reject')}",
                      sent=rec, received=reply.body or reply.raw)
    left = _stored_copy(ctx, rec, Auth.as_owner(OWNER_A))
    if left is not None:
        ctx.violation("ump/admission-may-reject", f"the record was rejected ({code}) yet get {rec['id']} returns "
                      f"it; {_spec('ump/admission-may-reject')}", sent=rec, received=left)


@check("ump/l1/server-accepts-all-kinds", spec="ump",
       requirements=("ump/server-accepts-all-kinds", "ump/kinds-accept-all"), bindings=LIVE,
       title="remember accepts a record of each of the five kinds and get returns its kind (§2.1, §7 L1)")
def server_accepts_all_kinds(ctx: CheckContext) -> None:
    # "get returns it with its kind" is judged only for a kind whose record was read back: an
    # acceptance alone says nothing of what the server stored (absence is never evidence)
    ctx.credit_only_observed()
    answered: list[str] = []
    unread: list[str] = []
    for kind in KINDS:
        rec = _full_record(ctx, kind)
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        if not _accepted(reply):
            for req in ("ump/server-accepts-all-kinds", "ump/kinds-accept-all"):
                ctx.violation(req, f"a valid {kind} record was refused: {reply.describe()}; {_spec(req)}",
                              sent=rec, received=reply.body or reply.raw)
            continue
        answered.append(kind)
        rid = _new_id(reply)
        if rid is None:
            unread.append(f"{kind} (no id in the answer: judged by remember-result)")
            continue
        got, stored = _get(ctx, rid)
        if stored is None:
            unread.append(f"{kind} (get {rid} showed no record: judged by get / remember-persists)")
            continue
        if stored.get("kind") != kind:
            ctx.violation("ump/server-accepts-all-kinds", f"a {kind} record was stored as {rid}, and get returns "
                          f"kind {stored.get('kind')!r}; {_spec('ump/server-accepts-all-kinds')}",
                          sent=rec, received=stored)
    if len(answered) == len(KINDS):
        ctx.observed("ump/kinds-accept-all")
    if not unread:
        ctx.observed("ump/server-accepts-all-kinds")
    else:
        ctx.note("not read back with its kind: " + "; ".join(unread))


# =============================================================================================
# get (§3.4)
# =============================================================================================

@check("ump/l1/get", spec="ump", requirements=("ump/get-returns-record",), bindings=LIVE,
       title="get of a stored id answers {record} with that record (§3.4)")
def get_returns_record(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    rid = _remember(ctx, rec)
    reply, stored = _get(ctx, rid)
    _internal(reply)
    if not reply.ok or not isinstance(reply.body, dict) or not isinstance(reply.body.get("record"), dict):
        ctx.violation("ump/get-returns-record", f"get {rid} (just remembered) answered {reply.describe()}; "
                      f"§3.4 answers {{\"record\": {{…}}}}; {_spec('ump/get-returns-record')}",
                      sent=reply.sent, received=reply.body or reply.raw, where=rid)
        return
    if stored.get("id") != rid:
        ctx.violation("ump/get-returns-record", f"get {rid} answered a record with id {stored.get('id')!r}; "
                      f"{_spec('ump/get-returns-record')}", sent=reply.sent, received=reply.body, where=rid)


@check("ump/l1/get-not-found", spec="ump", requirements=("ump/get-not-found",), bindings=LIVE,
       title="get of an id the server does not hold answers not_found (§3.4)")
def get_not_found(ctx: CheckContext) -> None:
    """Random ids, and the id of a record just stored cut short by one character: an id is matched
    whole (a "short id" lookup by prefix answered another record; a blind red team, round 20)."""
    unknown = [(rid, "an id never stored") for rid in (ump_ids.random_id(), "urn:ump:" + "a" * 52)]
    stored = ctx.client.remember(sample_record(text=f"{marker('gnf')} a record whose id is cut short"),
                                 auth=Auth.as_owner(OWNER_A))
    sid = stored.body.get("id") if stored.ok and isinstance(stored.body, dict) else None
    if isinstance(sid, str) and len(sid) > len("urn:ump:") + 8:
        unknown.append((sid[:-1], f"the id {sid} of a stored record without its last character"))
    for rid, what in unknown:
        reply = _offered(ctx.client.get(rid, auth=Auth.as_owner(OWNER_A)))
        _internal(reply)
        if _code(reply) != "not_found":
            ctx.violation("ump/get-not-found", f"get of {rid}, {what}, answered {reply.describe()}; "
                          f"{_spec('ump/get-not-found')}", sent=reply.sent, received=reply.body or reply.raw)


# =============================================================================================
# ids (§2, §6.2)
# =============================================================================================

@check("ump/l1/id-unique", spec="ump", requirements=("ump/id-unique",), bindings=LIVE,
       title="distinct records created by the server get distinct ids (§2)")
def id_unique(ctx: CheckContext) -> None:
    word = marker("iu")
    seen: dict[str, str] = {}
    created = 0
    for n in range(6):
        rec = sample_record(KINDS[n % len(KINDS)], text=f"{word} distinct record number {n} {secrets.token_hex(3)}")
        rec["time"] = {"created": _now(), "valid_from": _now()}
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        if not _accepted(reply) or reply.body.get("result") != "created" or not _new_id(reply):
            continue
        created += 1
        rid = _new_id(reply)
        if rid in seen:
            ctx.violation("ump/id-unique", f"two different records were both answered created with id {rid} "
                          f"(texts {seen[rid]!r} and {rec['body']['text']!r}); {_spec('ump/id-unique')}",
                          sent=rec, received=reply.body)
        seen[rid] = rec["body"]["text"]
    # a record sent under the id of another record the store holds: refused, or given an id of its own,
    # never the other's (an upsert by id lost the first record; a blind red team's server, round 22)
    taken = ump_ids.random_id()
    first = sample_record("semantic", text=f"{word} the first record under a chosen id")
    first["id"] = taken
    if _accepted(_put(ctx, first, auth=Auth.as_owner(OWNER_A))):
        second = sample_record("semantic", text=f"{word} another record under the same id")
        second["id"] = taken
        answer = _put(ctx, second, auth=Auth.as_owner(OWNER_A))
        _internal(answer)
        got, stored = _get(ctx, taken, keep=False)
        body = stored.get("body") if stored is not None else None
        shown = body.get("text") if isinstance(body, dict) else None
        if shown == second["body"]["text"]:
            ctx.violation("ump/id-unique", f"remember of another record under the id {taken}, which the store held "
                          f"for {first['body']['text']!r}, answered {answer.describe()}, and get {taken} now shows "
                          f"the second record: one id named two records, and the first is lost; "
                          f"{_spec('ump/id-unique')}", sent=second, received=stored)
        elif _accepted(answer) and _new_id(answer) == taken:
            ctx.violation("ump/id-unique", f"remember of another record under the id {taken}, which the store held "
                          f"for {first['body']['text']!r}, was answered {answer.describe()}: two records under one id; "
                          f"{_spec('ump/id-unique')}", sent=second, received=answer.body)
    # the same record twice: a second "created" must not reuse the first id (a merge is reported
    # as merged, catalogue note)
    twin = sample_record("semantic", text=f"{word} the same record sent twice")
    twin["time"] = {"created": _now(), "valid_from": _now()}
    answers = [_put(ctx, copy.deepcopy(twin), auth=Auth.as_owner(OWNER_A)) for _ in range(2)]
    if all(_accepted(a) and a.body.get("result") == "created" and _new_id(a) for a in answers):
        created += 2
        if _new_id(answers[0]) == _new_id(answers[1]):
            ctx.violation("ump/id-unique", f"the same record remembered twice was answered created both times "
                          f"with one id {_new_id(answers[0])}: two created records share an id (a merge is "
                          f"answered merged); {_spec('ump/id-unique')}", sent=twin,
                          received=[a.body for a in answers])
    if created < 2:
        raise NotApplicable("fewer than two distinct records were created (judged by ump/l1/remember-result)")


@check("ump/l1/id-stable", spec="ump", requirements=("ump/id-stable",), bindings=LIVE,
       title="a record keeps its id: remember, get, recall and later reads agree; revise mints a new one (§2)")
def id_stable(ctx: CheckContext) -> None:
    rec = sample_record("semantic")
    rec["time"] = {"created": _now(), "valid_from": _now()}
    rid = _remember(ctx, rec)
    reads: list[tuple[str, Any]] = []
    _, first = _get(ctx, rid)
    if first is None:
        raise NotApplicable(f"get {rid} answers no record (judged by ump/l1/get)")
    reads.append(("get", first.get("id")))
    found = _recall(ctx, {"query": _word(rec), "scope": _scope(), "limit": 5})
    texts = {r["record"].get("id"): r["record"] for r in results_of(found) if isinstance(r.get("record"), dict)}
    mine = [r for r in texts.values() if (r.get("body") or {}).get("text") == rec["body"]["text"]]
    for r in mine:
        reads.append(("recall", r.get("id")))
    _, again = _get(ctx, rid)
    if again is not None:
        reads.append(("get again", again.get("id")))
    for how, seen in reads:
        if seen != rid:
            ctx.violation("ump/id-stable", f"remember answered id {rid}, but {how} shows the record with id "
                          f"{seen!r}; {_spec('ump/id-stable')}", sent=rec, received={"read": how, "id": seen},
                          where=rid)
    if _offers(ctx, "revise"):
        request = {"id": rid, "patch": {"body": {"text": f"{_word(rec)} revised wording"}}}
        revised = ctx.client.revise(request, auth=Auth.as_owner(OWNER_A))
        if revised.ok and isinstance(revised.body, dict):
            new = revised.body.get("id")
            if new == rid:
                ctx.violation("ump/id-stable", f"revise of {rid} answered the same id for the successor: revise "
                              f"makes a new record, the prior keeps its id; {_spec('ump/id-stable')}",
                              sent=request, received=revised.body)
            if isinstance(new, str) and new and new != rid:
                _get(ctx, new)  # the successor: kept for ump/l1/served-records
            _, prior = _get(ctx, rid)
            if prior is not None and prior.get("id") != rid:
                ctx.violation("ump/id-stable", f"after revise, get {rid} answers a record with id "
                              f"{prior.get('id')!r}; {_spec('ump/id-stable')}", sent=request, received=prior)


@check("ump/l1/id-minted-form", spec="ump", requirements=("ump/id-minted-form",), bindings=LIVE,
       title="ids the server mints are urn:ump: + 26 (random) or 52 (content hash) base32 characters (§6.2)")
def id_minted_form(ctx: CheckContext) -> None:
    judged = 0
    for kind in ("semantic", "procedural"):
        rec = sample_record(kind)
        rec["time"] = {"created": _now(), "valid_from": _now()}
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        rid = _new_id(reply) if _accepted(reply) else None
        if rid is None:
            continue
        judged += 1
        if not MINTED_ID.fullmatch(rid):
            ctx.violation("ump/id-minted-form", f"the server minted id {rid!r}; §6.2 ids are urn:ump: + a random "
                          f"128-bit string or the content hash, in lowercase unpadded base32 (26 or 52 characters "
                          f"of a-z2-7); {_spec('ump/id-minted-form')}", sent=rec, received=reply.body)
    if not judged:
        raise NotApplicable("no record without id was accepted with an id (judged by ump/l1/remember-fills-id)")


# =============================================================================================
# messages and errors (§3, §3.7, §4.2)
# =============================================================================================

def _error_replies(ctx: CheckContext) -> list[tuple[str, Reply]]:
    """Requests every server must refuse (and, where the server asks for tokens, an anonymous one)."""
    out = [("get of an unknown id", ctx.client.get(ump_ids.random_id(), auth=Auth.as_owner(OWNER_A)))]
    bad = _full_record(ctx, "semantic")
    del bad["body"]
    out.append(("remember of a record without body", ctx.client.remember(bad, auth=Auth.as_owner(OWNER_A))))
    out.append(("recall whose query is a number", ctx.client.recall({"query": 42, "limit": "many"},
                                                                    auth=Auth.as_owner(OWNER_A))))
    auth = _caps_body(ctx).get("auth")
    if isinstance(auth, dict) and auth.get("required") is True:
        out.append(("recall without a capability token", ctx.client.recall({"query": "anything"},
                                                                          auth=Auth.anonymous())))
    return out


@check("ump/l1/messages-json-objects", spec="ump", requirements=("ump/messages-json-objects",), bindings=LIVE,
       title="every response body is a JSON object (§3)")
def messages_json_objects(ctx: CheckContext) -> None:
    """capabilities, remember, get, recall, and (over HTTP) an error answer. MCP error results
    are judged by ump/l1/mcp-errors, which accepts the code in the text (the public reading)."""
    rec = _full_record(ctx, "semantic")
    replies = []
    names = _tool_names(ctx)

    def offered(op: str) -> bool:  # an absent MCP tool is ump/l1/mcp-tool-*'s to judge
        return names is None or TOOL_FOR[op] in names

    if offered("capabilities"):
        replies.append(ctx.client.capabilities())
    rid = None
    if offered("remember"):
        remembered = ctx.client.remember(rec, auth=Auth.as_owner(OWNER_A))
        replies.append(remembered)
        rid = _new_id(remembered) if _accepted(remembered) else None
    if rid and offered("get"):
        replies.append(ctx.client.get(rid, auth=Auth.as_owner(OWNER_A)))
    if offered("recall"):
        replies.append(ctx.client.recall({"query": _word(rec), "scope": _scope()}, auth=Auth.as_owner(OWNER_A)))
    if not replies:
        raise NotApplicable("the server offers none of capabilities, remember, get, recall over this binding")
    if ctx.binding == "http":
        replies.append(ctx.client.get(ump_ids.random_id(), auth=Auth.as_owner(OWNER_A)))
    for reply in replies:
        _internal(reply)
        if not isinstance(reply.body, dict):
            shown = "non-JSON " + repr((reply.raw or "")[:120]) if reply.body is None else json.dumps(reply.body)[:120]
            ctx.violation("ump/messages-json-objects", f"{reply.operation} answered {shown} — not a JSON object; "
                          f"{_spec('ump/messages-json-objects')}",
                          sent=reply.sent, received=reply.raw if reply.body is None else reply.body)


_CODE_PREFIX = re.compile(r"^\s*([a-z_]+)\s*:")


def _read_only_token() -> str | None:
    """owner-a's capability token granting only `read` (None when the suite cannot make one for this
    target)."""
    from memconform.suite.ump import owners

    try:
        return owners.active().token(OWNER_A, verbs=["read"])
    except owners.CannotSign:
        return None


def _mcp_error_code(reply: Reply) -> tuple[str | None, str]:
    """(the §3.7 code an MCP error carries, where it was found): structuredContent error.code,
    else the "<code>: …" prefix of error.message or of the text (the public implementation)."""
    body = reply.body if isinstance(reply.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else {}
    if isinstance(err.get("code"), str):
        return err["code"], "error.code"
    for text in (err.get("message"), reply.raw):
        if isinstance(text, str):
            m = _CODE_PREFIX.match(text)
            if m and m.group(1) in ERROR_CODES + ("internal",):
                return m.group(1), "the message prefix"
    if reply.error_code:
        return reply.error_code, "the driver's reading"
    return None, ""


@check("ump/l1/error-envelope", spec="ump", requirements=("ump/error-envelope", "ump/error-codes"), bindings=LIVE,
       title="failures answer {error: {code, message}} with a §3.7 code (§3, §3.7)")
def error_envelope(ctx: CheckContext) -> None:
    """The codes are judged only on failures whose code could be read."""
    ctx.credit_only_observed()
    judged = 0
    for what, reply in _error_replies(ctx):
        _internal(reply)
        if reply.ok and (reply.status is None or reply.status < 400):
            continue  # accepted: nothing to judge here (the operation's own check judges that)
        judged += 1
        ctx.observed("ump/error-envelope")
        body = reply.body if isinstance(reply.body, dict) else None
        err = body.get("error") if body else None
        if ctx.binding == "http":
            if not (isinstance(err, dict) and isinstance(err.get("code"), str) and isinstance(err.get("message"), str)):
                ctx.violation("ump/error-envelope", f"{what} failed with {reply.describe()}, not the envelope "
                              f"{{\"error\": {{\"code\", \"message\"}}}}; {_spec('ump/error-envelope')}",
                              sent=reply.sent, received=reply.body or reply.raw)
                continue
            code = err["code"]
        else:
            code, where = _mcp_error_code(reply)
            if err is not None and not (isinstance(err, dict) and isinstance(err.get("message"), str)):
                ctx.violation("ump/error-envelope", f"{what} failed with {reply.describe()}: `error` is not an "
                              f"object with a message; {_spec('ump/error-envelope')}", sent=reply.sent,
                              received=reply.body)
                continue
            if code is None:
                ctx.violation("ump/error-envelope", f"{what} failed with {reply.describe()}: no §3.7 code can be "
                              f"read (neither error.code nor a \"<code>: …\" message); "
                              f"{_spec('ump/error-envelope')}", sent=reply.sent, received=reply.body or reply.raw)
                continue
        if code == "internal":
            raise TargetError(f"{what} failed inside the server: {reply.describe()}")
        ctx.observed("ump/error-codes")
        if code not in ERROR_CODES:
            ctx.violation("ump/error-codes", f"{what} failed with code {code!r}, which is not one of §3.7's "
                          f"{', '.join(ERROR_CODES)}; {_spec('ump/error-codes')}", sent=reply.sent,
                          received=reply.body or reply.raw)
    if not judged:
        raise NotApplicable("the server accepted every request the check sends to provoke an error")


@check("ump/l1/unsupported-operation", spec="ump", requirements=("ump/unsupported-operation",), bindings=LIVE,
       title="an operation or option the server does not offer is refused with unsupported (§3.7 SHOULD)")
def unsupported_operation(ctx: CheckContext) -> None:
    """Asks only for what the server itself says it lacks: operations above its advertised level
    or switched off in capabilities (subscribe, rehydrate), and over HTTP a UMP-Version it does
    not list in `versions` (docs/live-ump.md; judged only when the server lists versions, and only
    when it claims the version asked for: a server that ignores the header answers in its own)."""
    caps = _caps_body(ctx)
    level = caps.get("conformance")
    probes: list[tuple[str, Any]] = []
    if level in ("L0", "L1"):
        probes.append(("revise (the server claims L1)", lambda: ctx.client.revise(
            {"id": ump_ids.random_id(), "patch": {"body": {"text": "x"}}}, auth=Auth.as_owner(OWNER_A))))
        probes.append(("forget (the server claims L1)", lambda: ctx.client.forget(
            {"id": ump_ids.random_id(), "reason": "probe"}, auth=Auth.as_owner(OWNER_A))))
    if level in ("L0", "L1", "L2"):
        probes.append((f"feedback (the server claims {level})", lambda: ctx.client.feedback(
            {"id": ump_ids.random_id(), "outcome": "followed"}, auth=Auth.as_owner(OWNER_A))))
    if caps.get("rehydrate") is False:
        probes.append(("rehydrate (capabilities.rehydrate is false)", lambda: ctx.client.rehydrate(
            {"query": "probe"}, auth=Auth.as_owner(OWNER_A))))
    versions = caps.get("versions")
    if ctx.binding == "http" and isinstance(versions, list):
        probes.append(("GET /ump/capabilities with UMP-Version: 9.9 (not in `versions`)",
                       lambda: ctx.client.call_raw("GET", "/ump/capabilities", None, {"UMP-Version": "9.9"})))
    if not probes:
        raise NotApplicable("the server offers every operation and option this check can probe")
    refused = 0
    offered_after_all: list[str] = []
    for what, call in probes:
        reply = call()
        _internal(reply)
        code = _code(reply)
        if code == "unsupported":
            refused += 1
            continue
        if code is None and "UMP-Version" not in what:
            offered_after_all.append(what)
            continue  # offering more than the advertised level is fine
        if code is None and reply.ok and isinstance(reply.body, dict) and reply.body.get("ump") != "9.9":
            # the header is memconform's convention (docs/live-ump.md), in no spec text: a server that
            # never reads it and answers honestly in a version it speaks lacks nothing (a blind red
            # team's reading, round 28, was warned here)
            offered_after_all.append(f"{what}: answered ump {json.dumps(reply.body.get('ump'))}, the header not read")
            continue
        if code in ("not_found",) and "UMP-Version" not in what:
            offered_after_all.append(what)
            continue  # the probe's unknown id was looked up: the operation is offered after all
        ctx.violation("ump/unsupported-operation", f"{what} was answered {reply.describe()}; the §3.7 code for "
                      f"something the server does not offer is unsupported; {_spec('ump/unsupported-operation')}",
                      sent=reply.sent, received=reply.body or reply.raw)
    if not refused and not ctx.findings:
        raise NotApplicable("the server answered every probe as an operation it offers after all ("
                            + "; ".join(offered_after_all) + "): nothing it lacks was asked for")


@check("ump/l1/http-error-status", spec="ump", requirements=("ump/http-error-status",), bindings=HTTP,
       title="HTTP errors carry the status of their code: 404, 401, 403, otherwise 4xx (§4.2 SHOULD)")
def http_error_status(ctx: CheckContext) -> None:
    replies = _error_replies(ctx)
    other = _full_record(ctx, "semantic", owner=OWNER_B)
    caps = _caps_body(ctx)
    if isinstance(caps.get("auth"), dict) and caps["auth"].get("capability_tokens"):
        replies.append(("remember of owner-b's record with owner-a's token",
                        ctx.client.remember(other, auth=Auth.as_owner(OWNER_A))))
    judged = 0
    for what, reply in replies:
        code = _code(reply)
        if code is None or code == "rejected":
            continue  # (§3.3's {result: "rejected"} is a response, not an error: no error status owed)
        judged += 1
        if code == "internal" or (reply.status or 0) >= 500:
            raise TargetError(f"{what} failed inside the server: {reply.describe()}")
        wanted = STATUS_FOR_CODE.get(code)
        status = reply.status
        if status is None or status < 400:
            ctx.violation("ump/http-error-status", f"{what} failed with code {code} under HTTP status {status}; "
                          f"an error is never a 2xx; {_spec('ump/http-error-status')}", sent=reply.sent,
                          received=reply.body or reply.raw)
        elif wanted is not None and status != wanted:
            ctx.violation("ump/http-error-status", f"{what} failed with code {code} under HTTP {status}; "
                          f"{code} goes with {wanted}; {_spec('ump/http-error-status')}", sent=reply.sent,
                          received=reply.body or reply.raw)
    if not judged:
        raise NotApplicable("no request the check sent was refused")


@check("ump/l1/l1-one-binding", spec="ump", requirements=("ump/l1-one-binding",), bindings=LIVE,
       title="capabilities, recall, remember and get are offered over this binding (§7 L1)")
def l1_one_binding(ctx: CheckContext) -> None:
    """Each L1 operation answered something other than `unsupported` or a missing route/tool.
    Over MCP an absent ump.capabilities is fine when the tool list is there (§4.1)."""
    names = _tool_names(ctx)
    rec = _full_record(ctx, "semantic")
    calls = {
        "remember": lambda: ctx.client.remember(rec, auth=Auth.as_owner(OWNER_A)),
        "get": lambda: ctx.client.get(rec["id"], auth=Auth.as_owner(OWNER_A)),
        "recall": lambda: ctx.client.recall({"query": _word(rec), "scope": _scope()}, auth=Auth.as_owner(OWNER_A)),
        "capabilities": lambda: ctx.client.capabilities(),
    }
    for op in ("remember", "get", "recall", "capabilities"):
        if names is not None:
            if TOOL_FOR[op] not in names:
                if op == "capabilities" and names & {TOOL_FOR[o] for o in ("recall", "remember", "get")}:
                    continue  # derivable from the tool list (§4.1)
                ctx.violation("ump/l1-one-binding", f"the MCP tool list has no {TOOL_FOR[op]} (tools: "
                              f"{sorted(n for n in names if n)}); §7 L1 asks for {op} over one binding; "
                              f"{_spec('ump/l1-one-binding')}", received=sorted(n for n in names if n))
                continue
        reply = calls[op]()
        _internal(reply)
        code = _code(reply)
        missing = code == "unsupported" or (reply.status in (404, 405) and code != "not_found") or \
            (code == "not_found" and op != "get")
        if missing:
            ctx.violation("ump/l1-one-binding", f"{op} is not offered over {ctx.binding}: {reply.describe()}; "
                          f"{_spec('ump/l1-one-binding')}", sent=reply.sent, received=reply.body or reply.raw)


# =============================================================================================
# the records a server accepts and serves (§2, judged live)
# =============================================================================================

@check("ump/l1/emit-advertised-version", spec="ump", requirements=("ump/emit-advertised-version",), bindings=LIVE,
       title="records the server serves carry the version capabilities.ump advertises (§8)")
def emit_advertised_version(ctx: CheckContext) -> None:
    caps = _caps_body(ctx)
    # a capabilities `ump` that is no version at all is ump/l1/capabilities' finding, not this one's
    advertised = caps.get("ump") if caps.get("ump") in ump_record.VERSIONS else ctx.version
    word = marker("ev")
    native = _full_record(ctx, "semantic", text=f"{word} native record")
    del native["ump"]
    records = [native]
    if ctx.version == "1.0":
        imported = _full_record(ctx, "semantic", text=f"{word} imported 0.1 record")
        imported["ump"] = "0.1"
        records.append(imported)
    served: list[tuple[str, dict]] = []
    for rec in records:
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        rid = _new_id(reply) if _accepted(reply) else None
        if rid is None:
            continue
        _, stored = _get(ctx, rid)
        if stored is not None:
            served.append((f"get {rid}", stored))
            if rec is native:  # a revise successor is emitted too
                succ = _successor(ctx, rid, f"{word} native record, revised")
                if succ is not None:
                    served.append(succ)
    found = _recall(ctx, {"query": word, "scope": _scope(), "limit": 10})
    served.extend((f"recall {word!r} results/{i}/record", r["record"]) for i, r in enumerate(results_of(found))
                  if isinstance(r.get("record"), dict))
    # a record labelled with an unknown minor of the exchange's major ("1.7" in a 1.0 exchange, "0.2"
    # in 0.1): refusing it is a reading (ump/record-version; the default reference), so is taking it as
    # the known version (variant unknown-minor-accepted, minors being additive); a server that takes it
    # emits it with the version it advertises, not the label it was sent with (a blind red team's
    # server, round 28, stored and served "1.3" as sent). Read without keeping: what it serves is
    # this rule's (§8), not the §2 record rules' as well.
    minor = f"{ctx.version.split('.')[0]}.{7 if ctx.version.startswith('1.') else 2}"
    mword = marker("em")
    unknown = _full_record(ctx, "semantic", text=f"{mword} a record labelled with the unknown minor {minor}")
    unknown["ump"] = minor
    sent_minor: dict[str, Any] | None = None
    reply = _put(ctx, copy.deepcopy(unknown), auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    mid = _new_id(reply) if _accepted(reply) else None
    if mid is not None:
        sent_minor = unknown
        _, stored = _get(ctx, mid, keep=False)
        if stored is not None:
            served.append((f"get {mid} (remembered with ump {minor!r})", stored))
        found = _recall(ctx, {"query": mword, "scope": _scope(), "limit": 10}, keep=False)
        served.extend((f"recall {mword!r} results/{i}/record (remembered with ump {minor!r})", r["record"])
                      for i, r in enumerate(results_of(found)) if isinstance(r.get("record"), dict))
    if not served:
        raise NotApplicable("the server served none of the fresh records (judged by ump/l1/get)")
    for how, rec in served:
        if rec.get("ump") != advertised:
            taken = f"remember of a record sent with ump {minor!r} was answered {reply.body.get('result')!r} " \
                    f"{mid}, and " if "remembered with ump" in how else ""
            ctx.violation("ump/emit-advertised-version", f"{taken}{how} served a record labelled ump "
                          f"{rec.get('ump')!r}; capabilities.ump advertises {advertised!r}"
                          + (" (a record of an unknown minor is refused, or taken and emitted as the version "
                             "advertised)" if taken else "") + f"; {_spec('ump/emit-advertised-version')}",
                          sent=sent_minor if taken else None, received=rec, where=rec.get("id"))


@check("ump/l1/reject-unknown-major", spec="ump", requirements=("ump/reject-unknown-major",), bindings=LIVE,
       title="remember refuses a record of an unknown major version (ump 2.0) and stores nothing (§8)")
def reject_unknown_major(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic", text=f"{marker('um')} a record from the future major version")
    rec["ump"] = "2.0"
    _refused_and_not_stored(ctx, "ump/reject-unknown-major", rec, "a record declaring ump \"2.0\"",
                            version_refusal=True)
    # the major is the whole number before the dot: "10.0" is not 1.x (round 22: a prefix test took it)
    rec = _full_record(ctx, "semantic", text=f"{marker('um')} a record of major version ten")
    rec["ump"] = "10.0"
    _refused_and_not_stored(ctx, "ump/reject-unknown-major", rec, "a record declaring ump \"10.0\"",
                            version_refusal=True)


@check("ump/l1/normalize-imported-0.1", spec="ump", requirements=("ump/normalize-imported-0.1",), bindings=LIVE,
       title="a 0.1 record remembered by a 1.0 server comes back as 1.0, otherwise unchanged (§8)")
def normalize_imported(ctx: CheckContext) -> None:
    """A signed 0.1 record (owner-a's test key) and an unsigned one. Refusing 0.1 records is
    allowed (importing is a MAY): then nothing is judged. Accepted, get must show ump "1.0",
    every member sent unchanged (the server may add what it fills), and any integrity block
    recomputed for the 1.0 bytes, never the stale 0.1 one."""
    judged = 0
    for signed in (True, False):
        rec = _full_record(ctx, "semantic", text=f"{marker('n1')} an imported 0.1 record")
        rec["ump"] = "0.1"
        rec["consent"] = {"retention": "P365D", "exportable": True}
        if signed:
            rec = integrity.sign(rec, test_signing_key(OWNER_A))
        reply = _put(ctx, copy.deepcopy(rec), auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        if not _accepted(reply) or not _new_id(reply):
            continue
        rid = _new_id(reply)
        _, stored = _get(ctx, rid)
        if stored is None:
            continue
        judged += 1
        what = "signed 0.1 record" if signed else "0.1 record"
        if stored.get("ump") != "1.0":
            ctx.violation("ump/normalize-imported-0.1", f"a {what} remembered under 1.0 is served as ump "
                          f"{stored.get('ump')!r}; {_spec('ump/normalize-imported-0.1')}", sent=rec, received=stored,
                          where=rid)
        expected = {k: v for k, v in rec.items() if k not in ("ump", "id", "integrity")}
        diffs = _diff(expected, stored)
        if diffs:
            ctx.violation("ump/normalize-imported-0.1", f"normalizing the {what} changed more than the version: "
                          + "; ".join(diffs[:6]) + f"; {_spec('ump/normalize-imported-0.1')}", sent=rec,
                          received=stored, where=rid)
        integ = stored.get("integrity")
        if isinstance(integ, dict) and isinstance(integ.get("content_hash"), str):
            # Stale: the hash of the 0.1 bytes (the one sent, or that of the served record labelled
            # 0.1 again). Any other wrong hash is the integrity checks' (L3) to report.
            try:
                as_01 = integrity.content_hash(dict(stored, ump="0.1"))
            except Exception:  # noqa: BLE001 - an uncanonicalizable record is judged elsewhere
                as_01 = None
            sent_hash = rec["integrity"]["content_hash"] if signed else None
            if any(h is not None and integrity.same_hash(integ["content_hash"], h) for h in (sent_hash, as_01)):
                ctx.violation("ump/normalize-imported-0.1", f"the {what} is served as 1.0 with integrity."
                              f"content_hash {integ['content_hash']!r}, the hash of its 0.1 bytes: normalizing "
                              f"comes before signing, so the hash is recomputed for the 1.0 record; "
                              f"{_spec('ump/normalize-imported-0.1')}", sent=rec, received=stored, where=rid)
    if not judged:
        raise NotApplicable("the server does not import 0.1 records (a MAY, §8): nothing to normalize")


@check("ump/l1/relations-open", spec="ump", requirements=("ump/relations-open-vocabulary",), bindings=LIVE,
       title="remember accepts and keeps relation types outside the reserved set (§2.5)")
def relations_open(ctx: CheckContext) -> None:
    other = _remember(ctx, _full_record(ctx, "semantic"))
    relations = [{"type": "about", "target": "entity:pnpm"},
                 {"type": "x-acme-blocks", "target": "entity:release-train"},
                 {"type": "x-acme-supports", "target": other}]
    rec = _full_record(ctx, "semantic", relations=relations)
    reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    if not _accepted(reply):
        ctx.violation("ump/relations-open-vocabulary", f"a record with relation types x-acme-blocks and "
                      f"x-acme-supports was refused: {reply.describe()}; unknown types may be ignored, not refused; "
                      f"{_spec('ump/relations-open-vocabulary')}", sent=rec, received=reply.body or reply.raw)
        return
    rid = _new_id(reply)
    if rid is None:
        raise NotApplicable("remember answered no id (judged by ump/l1/remember-result)")
    _, stored = _get(ctx, rid)
    if stored is None:
        raise NotApplicable(f"get {rid} answers no record (judged by ump/l1/get)")
    if stored.get("relations") != relations:
        ctx.violation("ump/relations-open-vocabulary", f"the record was accepted but get {rid} shows relations "
                      f"{json.dumps(stored.get('relations'))}: the unknown types were not kept; "
                      f"{_spec('ump/relations-open-vocabulary')}", sent=relations, received=stored.get("relations"),
                      where=rid)


def _optional_record(ctx: CheckContext, text: str) -> dict[str, Any]:
    """A partial record (no id, no time) carrying every optional member of §2."""
    rec = sample_record("semantic", text=text)
    rec["body"]["structured"] = {"tool": "pnpm", "list": [1, 2.5, "x", True, None], "nested": {"empty": {}}}
    rec["scope"].update(user=did(OWNER_B), agent="memconform-agent", session="sess_memconform")
    rec["lifecycle"] = {"confidence": 0.8, "salience": 0.6, "decay": "half_life:P90D", "status": "active"}
    rec["relations"] = [{"type": "about", "target": "entity:pnpm"}]
    return rec


_OPTIONAL = {
    "ump/optional-body-structured": (("body", "structured"), {"tool": "pnpm", "list": [1, 2.5, "x", True, None],
                                                              "nested": {"empty": {}}}),
    "ump/optional-scope-user": (("scope", "user"), None),
    "ump/optional-scope-agent": (("scope", "agent"), "memconform-agent"),
    "ump/optional-scope-session": (("scope", "session"), "sess_memconform"),
    "ump/optional-lifecycle": (("lifecycle",), {"confidence": 0.8, "salience": 0.6, "status": "active"}),
    "ump/optional-lifecycle-decay": (("lifecycle", "decay"), "x-memconform-decay:opaque-hint"),
    "ump/optional-supersedes": (("supersedes",), None),
    "ump/optional-relations": (("relations",), [{"type": "about", "target": "entity:pnpm"},
                                                {"type": "depends_on", "target": "entity:node"}]),
}


@check("ump/l1/optional-members", spec="ump", requirements=tuple(_OPTIONAL), bindings=LIVE,
       title="optional members given to remember are kept (§2, MAY)")
def optional_members(ctx: CheckContext) -> None:
    """One record per optional member, so a refusal names the member. Informational. A member is
    judged only on a record read back (accepted is not kept): one whose record get did not return
    is not judged, even when another member's finding is."""
    ctx.credit_only_observed()
    older = _remember(ctx, _full_record(ctx, "semantic"))
    unread: list[str] = []
    for requirement, (path, value) in _OPTIONAL.items():
        rec = _full_record(ctx, "semantic")
        if requirement == "ump/optional-scope-user":
            value = did(OWNER_B)
        if requirement == "ump/optional-supersedes":
            value = [older]
        if requirement == "ump/optional-lifecycle-decay":
            rec["lifecycle"] = {"decay": value}
        elif len(path) == 2:
            rec[path[0]] = dict(rec[path[0]], **{path[1]: value})
        else:
            rec[path[0]] = value
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        name = ".".join(path)
        if not _accepted(reply):
            ctx.violation(requirement, f"a record carrying the optional member {name} was refused: "
                          f"{reply.describe()}; {_spec(requirement)}", sent=rec, received=reply.body or reply.raw)
            continue
        rid = _new_id(reply)
        _, stored = _get(ctx, rid) if rid else (None, None)
        if stored is None:
            unread.append(name)
            continue  # judged by get / remember-persists
        node: Any = stored
        for key in path:
            node = node.get(key, _MISSING) if isinstance(node, dict) else _MISSING
        ctx.observed(requirement)
        if node is _MISSING or not json_equal(node, value):  # true is not 1
            ctx.violation(requirement, f"the record was accepted, but get {rid} shows {name} as "
                          f"{'absent' if node is _MISSING else json.dumps(node)}, where "
                          f"{json.dumps(value)} was given; {_spec(requirement)}", sent=rec, received=stored,
                          where=rid)
    if unread and not ctx.findings:
        # Accepted is not kept: a member is judged only on a record read back.
        raise Inconclusive(f"records carrying {', '.join(unread)} were accepted, but get returned none of them, so "
                           "whether those optional members are kept was not seen (get is judged by ump/l1/get)")


_MISSING = object()

#: Hints of more than two decimals that JSON numbers read as IEEE double carry exactly back
#: (repr(float(text)) == text): a server that keeps them as doubles serves the same text.
_HINTS = {"confidence": 0.825, "salience": 0.3333333333333333}


@check("ump/l1/lifecycle-hints-kept", spec="ump", requirements=("ump/lifecycle-hints-set",), bindings=LIVE,
       title="lifecycle hints given to remember are served as given (§2.4, SHOULD)")
def lifecycle_hints_kept(ctx: CheckContext) -> None:
    """owner-a remembers a complete record with lifecycle {confidence 0.825, salience 1/3 as a
    double, status active}; get must show both hints with the same value (compared as JSON
    numbers: 0.825 and 8.25e-1 are one value). A blind red team's server rounded them to two
    decimals on write (0.82, 0.33). Status is not judged: §2.9 lets a server gate it."""
    rec = _full_record(ctx, "semantic", lifecycle={**_HINTS, "status": "active"})
    rid = _remember(ctx, rec)
    _, stored = _get(ctx, rid)
    if stored is None:
        raise NotApplicable(f"get of the fresh record {rid} returned no record; judged by ump/l1/get")
    life = stored.get("lifecycle") if isinstance(stored.get("lifecycle"), dict) else {}
    changed = {k: life.get(k, "(absent)") for k, v in _HINTS.items() if k not in life or not json_equal(life[k], v)}
    if changed:
        ctx.violation("ump/lifecycle-hints-set", f"remember of {rid} with lifecycle {json.dumps(_HINTS)} was "
                      f"accepted, but get serves {json.dumps(changed)} for them (lifecycle served: "
                      f"{json.dumps(stored.get('lifecycle'))}); hints a client gives are kept as given, at the "
                      f"precision JSON numbers carry; {_spec('ump/lifecycle-hints-set')}", sent=rec, received=stored,
                      where=rid)


# =============================================================================================
# MCP profile (§4.1)
# =============================================================================================

def _tools(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    listing = ctx.client.tools()
    if listing is None:
        raise NotApplicable("the driver offers no MCP tool listing")
    return {t["name"]: t for t in listing if isinstance(t, dict) and isinstance(t.get("name"), str)}


def _tool_check(op: str, requirement: str) -> None:
    @check(f"ump/l1/mcp-tool-{op}", spec="ump", requirements=(requirement,), bindings=MCP,
           title=f"{op} is the MCP tool {TOOL_FOR[op]} (§4.1)")
    def tool_named(ctx: CheckContext) -> None:
        tools = _tools(ctx)
        if TOOL_FOR[op] in tools:
            return
        near = sorted(n for n in tools if op in n.lower())
        ctx.violation(requirement, f"the MCP server lists no tool named {TOOL_FOR[op]}"
                      + (f" (it has {near}: the reserved name is {TOOL_FOR[op]})" if near else "")
                      + f"; tools: {sorted(tools)}; {_spec(requirement)}", received=sorted(tools))

    tool_named.__name__ = f"mcp_tool_{op}"


for _op in ("recall", "remember", "get", "revise", "forget", "feedback"):
    _tool_check(_op, f"ump/mcp-tool-{_op}")


@check("ump/l1/mcp-tool-capabilities", spec="ump", requirements=("ump/mcp-tool-capabilities",), bindings=MCP,
       title="ump.capabilities, when offered, returns the §3.1 response (§4.1)")
def mcp_tool_capabilities(ctx: CheckContext) -> None:
    tools = _tools(ctx)
    if "ump.capabilities" not in tools:
        near = sorted(n for n in tools if "capabilit" in n.lower())
        if near:
            ctx.violation("ump/mcp-tool-capabilities", f"the server offers capabilities as {near}, not under the "
                          f"reserved name ump.capabilities; {_spec('ump/mcp-tool-capabilities')}",
                          received=sorted(tools))
            return
        _without_capabilities_tool(ctx)
    reply = ctx.client.capabilities()
    _internal(reply)
    problems = _response_problems(reply.body, "capabilities") if reply.ok else [reply.describe()]
    if problems:
        ctx.violation("ump/mcp-tool-capabilities", "ump.capabilities did not return the §3.1 response: "
                      + "; ".join(problems) + f"; {_spec('ump/mcp-tool-capabilities')}", sent=reply.sent,
                      received=reply.body or reply.raw)


@check("ump/l1/mcp-capabilities-derivable", spec="ump", requirements=("ump/mcp-capabilities-derivable",),
       bindings=MCP, title="without ump.capabilities the tool list states what the server offers (§4.1, MAY)")
def mcp_capabilities_derivable(ctx: CheckContext) -> None:
    tools = _tools(ctx)
    if "ump.capabilities" in tools:
        raise NotApplicable("the server offers the explicit ump.capabilities tool")
    core = [TOOL_FOR[o] for o in ("recall", "remember", "get")]
    missing = [t for t in core if t not in tools]
    if missing:
        ctx.violation("ump/mcp-capabilities-derivable", f"the server skips ump.capabilities, but its tool list "
                      f"lacks {missing}: nothing states what it offers; {_spec('ump/mcp-capabilities-derivable')}",
                      received=sorted(tools))


#: operation -> (the request the check sends, response $def); revise/forget/feedback get a fresh id.
_TOOL_REQUEST = {"capabilities": "capabilities_request", "recall": "recall_request", "remember": "remember_request",
                 "get": "get_request", "revise": "revise_request", "forget": "forget_request",
                 "feedback": "feedback_request"}


def _schema_members(definition: str) -> tuple[set[str], set[str]]:
    d = _operation_schemas()["$defs"].get(definition, {})
    return set(d.get("properties", {})), set(d.get("required", []))


@check("ump/l1/mcp-tool-schemas", spec="ump", requirements=("ump/mcp-tool-schemas",), bindings=MCP,
       title="the ump.* tools take the §3 request as arguments and return the §3 response (§4.1)")
def mcp_tool_schemas(ctx: CheckContext) -> None:
    """Listing: each ump.* tool's inputSchema is an object schema naming the members the §3
    request requires and requiring none the §3 request lacks; an outputSchema, when given, is an
    object schema requiring nothing the §3 response lacks (operations.schema.json). Calls: each
    offered operation, called with a valid request, answers the §3 response object itself (its
    identifying member at the top level, not wrapped, not an error). The values inside are the
    operation checks' to judge, so one defect is reported once."""
    tools = _tools(ctx)
    judged = 0
    for op, tool in ((o, tools[TOOL_FOR[o]]) for o in _TOOL_REQUEST if TOOL_FOR[o] in tools):
        judged += 1
        props, required = _schema_members(_TOOL_REQUEST[op])
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            ctx.violation("ump/mcp-tool-schemas", f"{TOOL_FOR[op]} has inputSchema {json.dumps(schema)[:120]}; "
                          f"the arguments are the §3 {op} request object; {_spec('ump/mcp-tool-schemas')}",
                          received=tool)
            continue
        given = set(schema.get("properties", {}) or {})
        lacking = sorted(required - given) if given or required else []
        if schema.get("properties") is not None and lacking:
            ctx.violation("ump/mcp-tool-schemas", f"{TOOL_FOR[op]}'s inputSchema has no {lacking}, members of the "
                          f"§3 {op} request (it names {sorted(given)}); {_spec('ump/mcp-tool-schemas')}",
                          received=schema)
        extra_required = sorted(set(schema.get("required", []) or []) - props)
        if extra_required:
            ctx.violation("ump/mcp-tool-schemas", f"{TOOL_FOR[op]}'s inputSchema requires {extra_required}, which "
                          f"the §3 {op} request does not have; {_spec('ump/mcp-tool-schemas')}", received=schema)
        out = tool.get("outputSchema")
        if out is not None:
            resp_props, _ = _schema_members(f"{op}_response")
            if not isinstance(out, dict) or out.get("type", "object") != "object":
                ctx.violation("ump/mcp-tool-schemas", f"{TOOL_FOR[op]}'s outputSchema {json.dumps(out)[:120]} is "
                              f"not an object schema; the result is the §3 {op} response object; "
                              f"{_spec('ump/mcp-tool-schemas')}", received=tool)
            elif resp_props and sorted(set(out.get("required", []) or []) - resp_props):
                ctx.violation("ump/mcp-tool-schemas", f"{TOOL_FOR[op]}'s outputSchema requires "
                              f"{sorted(set(out.get('required', []) or []) - resp_props)}, which the §3 {op} "
                              f"response does not have; {_spec('ump/mcp-tool-schemas')}", received=out)
    # calls
    replies: list[tuple[str, Reply]] = []
    if "ump.capabilities" in tools:
        replies.append(("capabilities", ctx.client.capabilities()))
    rec = _full_record(ctx, "semantic")
    if "ump.remember" in tools:
        remembered = ctx.client.remember(rec, auth=Auth.as_owner(OWNER_A))
        replies.append(("remember", remembered))
        rid = _new_id(remembered) if _accepted(remembered) else None
        if rid:
            if "ump.get" in tools:
                replies.append(("get", ctx.client.get(rid, auth=Auth.as_owner(OWNER_A))))
            if "ump.recall" in tools:
                replies.append(("recall", ctx.client.recall({"query": _word(rec), "scope": _scope()},
                                                            auth=Auth.as_owner(OWNER_A))))
            if "ump.feedback" in tools:
                replies.append(("feedback", ctx.client.feedback({"id": rid, "outcome": "followed"},
                                                                auth=Auth.as_owner(OWNER_A))))
            if "ump.revise" in tools:
                revised = ctx.client.revise({"id": rid, "patch": {"body": {"text": f"{_word(rec)} revised"}}},
                                            auth=Auth.as_owner(OWNER_A))
                replies.append(("revise", revised))
                new = revised.body.get("id") if revised.ok and isinstance(revised.body, dict) else None
                if "ump.forget" in tools and isinstance(new, str):
                    replies.append(("forget", ctx.client.forget({"id": new, "reason": "memconform schema probe"},
                                                                auth=Auth.as_owner(OWNER_A))))
    for op, reply in replies:
        _internal(reply)
        if not reply.ok:
            continue  # a refusal is the operation's own check's to judge
        judged += 1
        problems = _response_problems(reply.body, op)
        if problems:
            ctx.violation("ump/mcp-tool-schemas", f"{TOOL_FOR[op]} returned something other than the §3 {op} "
                          "response: " + "; ".join(problems[:6]) + f"; {_spec('ump/mcp-tool-schemas')}",
                          sent=reply.sent, received=reply.body)
    if not judged:
        raise NotApplicable("the server lists no ump.* tool")


@check("ump/l1/mcp-errors", spec="ump", requirements=("ump/mcp-errors", "ump/mcp-errors-iserror"), bindings=MCP,
       title="a failing ump.* tool answers a readable §3.7 code: isError, or the §3 envelope as output (§4.1)")
def mcp_errors(ctx: CheckContext) -> None:
    """The code may sit in structuredContent.error.code or open the text/message as
    "<code>: …" (the public implementation's form): both are read. The §3 envelope returned as
    ordinary tool output is as good a reading of "Tool input/output schemas are §3" (variant
    mcp-errors-as-output); that it comes as isError: true is the public implementation's form,
    ump/mcp-errors-iserror (class ump-reference-interop). A JSON-RPC error is no tool output, but
    MCP 2025-06-18 makes invalid arguments a protocol error: one carrying the §3 code (data's
    envelope, or a "<code>: …" message) is read as that failure; one carrying none fails."""
    ctx.credit_only_observed()
    probes = [("get of an unknown id", ctx.client.get(ump_ids.random_id(), auth=Auth.as_owner(OWNER_A)), "not_found")]
    bad = _full_record(ctx, "semantic")
    del bad["body"]
    probes.append(("remember of a record without body", ctx.client.remember(bad, auth=Auth.as_owner(OWNER_A)),
                   "invalid_record"))
    # the refusals of tokens (L3) too: the checks that expect those codes leave a refusal whose code
    # cannot be read unjudged (_live.which_refusal), so it is charged here; a server without tokens
    # answers these and they are passed over like any probe that did not fail
    probes.append(("recall without a capability token",
                   ctx.client.recall({"query": marker("err"), "limit": 1}, auth=Auth.anonymous()), "unauthorized"))
    read_only = _read_only_token()
    if read_only is not None:
        probes.append(("remember with owner-a's token whose verbs are [read]",
                       ctx.client.remember(sample_record(text=f"{marker('err')} a write with a read-only token"),
                                           auth=Auth.bearer(read_only)), "forbidden_scope"))
    if all(reply.ok for _, reply, _ in probes):  # no failing tool seen: nothing of its form to judge
        raise NotApplicable("no probe failed (" + "; ".join(f"{what}: {reply.describe()}" for what, reply, _ in probes)
                            + "), so how a failing tool answers was not seen; the acceptances are judged by "
                            "ump/l1/get-not-found and ump/l1/remember-invalid")
    for what, reply, wanted in probes:
        if reply.ok:
            continue  # judged by get-not-found / remember-invalid
        code, where = _mcp_error_code(reply)
        if code == "internal":
            raise TargetError(f"{what} failed inside the server: {reply.describe()}")
        remarks = "; ".join(reply.wire)
        ctx.observed("ump/mcp-errors")
        if "JSON-RPC error" in remarks:
            ctx.note(f"{what} failed as a JSON-RPC error: no tool result whose isError could be read")
            ctx.violation("ump/mcp-errors", f"{what} failed as a JSON-RPC error, not as tool output carrying the §3 "
                          f"envelope ({remarks}): {reply.describe()}; {_spec('ump/mcp-errors')}", sent=reply.sent,
                          received=reply.body or reply.raw)
            continue
        ctx.observed("ump/mcp-errors-iserror")
        if "without isError" in remarks or "protocol error" in remarks:
            ctx.violation("ump/mcp-errors-iserror", f"{what} failed as {remarks}, not as a tool result with isError: "
                          f"true: {reply.describe()}; {_spec('ump/mcp-errors-iserror')}", sent=reply.sent,
                          received=reply.body or reply.raw)
        if code is None or code not in ERROR_CODES:
            ctx.violation("ump/mcp-errors", f"{what} failed with {reply.describe()}: no §3.7 code can be read from "
                          f"structuredContent.error.code or a \"<code>: …\" message (found {code!r}); "
                          f"{_spec('ump/mcp-errors')}", sent=reply.sent, received=reply.body or reply.raw)


@check("ump/l1/mcp-text-mirrors-structured", spec="ump", requirements=("ump/mcp-text-mirrors-structured",),
       bindings=MCP, title="a tool's text content is the same JSON as its structuredContent (MCP, SHOULD)")
def mcp_text_mirrors_structured(ctx: CheckContext) -> None:
    """owner-a remembers a record whose text holds accents, CJK, an emoji and an astral character;
    the answers of remember, get and recall that carry structuredContent must carry the same JSON
    in a text block (a client that reads only text must read the same memory)."""
    R = "ump/mcp-text-mirrors-structured"
    quote = catalogues.load("ump").get(R).quote  # MCP's sentence: _spec would cite it as UMP's §4.1
    ctx.credit_only_observed()
    m = marker("txt")
    rec = sample_record(text=f"{m} Café ☕ naïve: 日本語, ключ, 𝄞")
    remembered = ctx.client.remember(rec, auth=Auth.as_owner(OWNER_A))
    rid = need(remembered, "remember of a record with non-ASCII text").get("id")
    replies = [("remember", remembered), ("get", ctx.client.get(str(rid), auth=Auth.as_owner(OWNER_A))),
               ("recall", ctx.client.recall({"query": m, "limit": 5}, auth=Auth.as_owner(OWNER_A)))]
    for what, reply in replies:
        if not reply.ok or "no structuredContent: the answer was read from JSON text content" in reply.wire:
            continue  # a failure is another check's; without structuredContent the text is the answer
        ctx.observed(R)
        for remark in ("text content differs from structuredContent", "structuredContent without its JSON in a text block"):
            if remark in reply.wire:
                # The driver keeps the text only where it parsed as JSON and differs; a text that is
                # no JSON (a summary line, or no text block at all) is not kept, so it is not quoted.
                text = (f"the text block held {reply.raw!r:.400}" if reply.raw is not None else
                        "no text block held JSON (the result's text, if any, is not JSON)")
                ctx.violation(R, f"{what} of the record {rid} (text {rec['body']['text']!r}): {remark}; {text}; "
                              f"structuredContent was {json.dumps(reply.body, ensure_ascii=False)[:300]}; MCP "
                              f"(server/tools, Structured Content; derived for §4.1's tools): “{quote}”",
                              sent=reply.sent, received=reply.body)
    if not ctx.judged:
        ctx.note("no answer carried structuredContent: the text is the answer")


@check("ump/l1/mcp-resources", spec="ump", requirements=("ump/mcp-resources",), bindings=MCP,
       title="stored memories may be browsed as ump://{project}/{id} MCP resources (§4.1, MAY)")
def mcp_resources(ctx: CheckContext) -> None:
    lister = getattr(ctx.client, "resources", None)
    if lister is None:
        raise NotApplicable("the MCP driver cannot list resources")
    listing = lister()
    if listing is None:
        raise NotApplicable("the MCP driver cannot list resources")
    ump = [r for r in listing if isinstance(r, dict) and str(r.get("uri", "")).startswith("ump://")]
    templates = ump_templates(ctx.client)
    if not ump and templates:
        # offered as a template (resources/templates/list): read a record just stored through it
        rec = _full_record(ctx, "semantic", text=f"{marker('res')} a record read as a resource")
        rid = _remember(ctx, rec)
        uri = record_resource(ctx, rid, rec["scope"].get("project"))
        if uri is None:
            ctx.violation("ump/mcp-resources", f"the server offers the resource template(s) {templates}, but owner-a's "
                          f"resources/read of its record {rid} through them (project and id percent-encoded, the id "
                          f"also as it is; owner-a's token in _meta) returned no such record; "
                          f"{_spec('ump/mcp-resources')}", received=templates)
            return
        problems = _resource_problems(ctx.client.read_resource(uri, auth=Auth.as_owner(OWNER_A)), ctx.version)
        if problems:
            ctx.violation("ump/mcp-resources", f"resource {uri} does not read as a §2 record: " + "; ".join(problems[:4])
                          + f"; {_spec('ump/mcp-resources')}", received=uri)
        return
    if not ump:
        ctx.violation("ump/mcp-resources", "the server exposes no ump:// resources (stored memories as "
                      f"read-only MCP resources are optional); {_spec('ump/mcp-resources')}",
                      received=[r.get("uri") for r in listing if isinstance(r, dict)][:20])
        return
    reader = getattr(ctx.client, "read_resource", None)
    for res in ump[:5]:
        uri = str(res["uri"])
        parts = uri[len("ump://"):].rsplit("/", 1)
        if len(parts) != 2 or not urllib.parse.unquote(parts[1]).startswith("urn:ump:"):
            ctx.violation("ump/mcp-resources", f"resource {uri} is not of the form ump://{{project}}/{{id}}; "
                          f"{_spec('ump/mcp-resources')}", received=res)
            continue
        if reader is not None:
            content = reader(uri)
            problems = _resource_problems(content, ctx.version)
            if problems:
                ctx.violation("ump/mcp-resources", f"resource {uri} does not read as a §2 record: "
                              + "; ".join(problems[:4]) + f"; {_spec('ump/mcp-resources')}", received=content)


def _resource_problems(content: Any, version: str) -> list[str]:
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return ["not JSON"]
    return [f"{v.pointer or '/'}: {v.message}" for v in ump_record.validate(content, version)] \
        if isinstance(content, dict) else ["not a JSON object"]


# =============================================================================================
# HTTP routes (§4.2)
# =============================================================================================

def _post(ctx: CheckContext, path: str, payload: Any, auth: Auth | None = None) -> Reply:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return ctx.client.call_raw("POST", path, body, {"Content-Type": "application/json", "UMP-Version": ctx.version},
                               auth=auth or Auth.as_owner(OWNER_A))


def _route_problem(reply: Reply, operation: str) -> list[str]:
    if reply.status is None or not 200 <= reply.status < 300:
        return [f"HTTP {reply.status}, not a success"]
    return _response_problems(reply.body, operation)


@check("ump/l1/http-route-capabilities", spec="ump", requirements=("ump/http-route-capabilities", "ump/capabilities-open"),
       bindings=HTTP, title="GET /ump/capabilities answers the §3.1 response (§4.2)")
def http_route_capabilities(ctx: CheckContext) -> None:
    """Asked without a token first, as the public implementation serves it (the notes, HTTP
    binding: no auth). §4.2's "Auth via capability tokens" exempts no route, so a server that
    refuses that request for want of a token is charged ump/capabilities-open (interop class, no
    level) and its route is judged on the answer to owner-a's token."""
    ctx.credit_only_observed()
    headers = {"UMP-Version": ctx.version}
    reply = ctx.client.call_raw("GET", "/ump/capabilities", None, headers, auth=Auth.anonymous())
    _internal(reply)
    if refused_for_token(reply):
        ctx.observed("ump/capabilities-open")
        ctx.violation("ump/capabilities-open", f"GET /ump/capabilities without a token answered {reply.describe()}; "
                      "the public implementation answers it without auth (the notes, HTTP binding). No level "
                      "waits on this: the text exempts no route from §4.2's tokens, so the route is judged on "
                      "the answer to owner-a's token", sent="GET /ump/capabilities (no Authorization)",
                      received=reply.body or reply.raw)
        reply = ctx.client.call_raw("GET", "/ump/capabilities", None, headers, auth=Auth.as_owner("owner-a"))
        _internal(reply)
    elif reply.status is not None and 200 <= reply.status < 300:
        ctx.observed("ump/capabilities-open")
    ctx.observed("ump/http-route-capabilities")
    problems = _route_problem(reply, "capabilities")
    if problems:
        ctx.violation("ump/http-route-capabilities", "GET /ump/capabilities answered " + reply.describe()
                      + ": " + "; ".join(problems) + f"; {_spec('ump/http-route-capabilities')}",
                      sent=f"GET /ump/capabilities ({reply.auth})", received=reply.body or reply.raw)


@check("ump/l1/mcp-capabilities-open", spec="ump", requirements=("ump/capabilities-open",), bindings=MCP,
       title="ump.capabilities answers a call without a token (the public implementation's open discovery)")
def mcp_capabilities_open(ctx: CheckContext) -> None:
    """Interop class only: §4.2's tokens exempt no operation, so a server that asks for one here
    reaches every level (the suite then reads capabilities as owner-a)."""
    ctx.credit_only_observed()
    _without_capabilities_tool(ctx)
    reply = ctx.client.capabilities(auth=Auth.anonymous())
    _internal(reply)
    if refused_for_token(reply):
        ctx.observed("ump/capabilities-open")
        ctx.violation("ump/capabilities-open", f"ump.capabilities without a token answered {reply.describe()}; the "
                      "public implementation answers it without auth. No level waits on this: the text exempts "
                      "no operation from §4.2's tokens, so capabilities is read with owner-a's token",
                      sent=reply.sent, received=reply.body or reply.raw)
    elif reply.ok:
        ctx.observed("ump/capabilities-open")
    else:
        ctx.note(f"ump.capabilities without a token answered {reply.describe()}: neither an answer nor a refusal "
                 "for want of a token, so whether it is open was not seen (judged by ump/l1/capabilities)")


@check("ump/l1/http-route-recall", spec="ump", requirements=("ump/http-route-recall",), bindings=HTTP,
       title="POST /ump/recall answers the §3.2 response (§4.2)")
def http_route_recall(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    _remember(ctx, rec)
    payload = {"query": _word(rec), "scope": _scope(), "limit": 5}
    reply = _post(ctx, "/ump/recall", payload)
    _internal(reply)
    problems = _route_problem(reply, "recall")
    if problems:
        ctx.violation("ump/http-route-recall", "POST /ump/recall answered " + reply.describe() + ": "
                      + "; ".join(problems) + f"; {_spec('ump/http-route-recall')}", sent=payload,
                      received=reply.body or reply.raw)


@check("ump/l1/http-route-remember", spec="ump", requirements=("ump/http-route-remember",), bindings=HTTP,
       title="POST /ump/remember takes {record} (and answers a bare record cleanly) (§4.2)")
def http_route_remember(ctx: CheckContext) -> None:
    """{record} must be answered with the §3.3 response and stored. A bare record (the public
    implementation takes one, the notes) is judged leniently: accepted, it must be stored as
    sent; refused, the refusal must be the §3 error envelope with a 4xx status."""
    rec = _full_record(ctx, "semantic")
    reply = _post(ctx, "/ump/remember", {"record": rec})
    _internal(reply)
    problems = _route_problem(reply, "remember")
    if problems:
        ctx.violation("ump/http-route-remember", "POST /ump/remember {record} answered " + reply.describe() + ": "
                      + "; ".join(problems) + f"; {_spec('ump/http-route-remember')}", sent={"record": rec},
                      received=reply.body or reply.raw)
    bare = _full_record(ctx, "episodic")
    reply = _post(ctx, "/ump/remember", bare)
    _internal(reply)
    if _accepted(reply):
        _, stored = _get(ctx, reply.body.get("id") or "")
        if stored is not None and ((stored.get("body") or {}).get("text") != bare["body"]["text"]
                                   or stored.get("kind") != bare["kind"]):
            ctx.violation("ump/http-route-remember", f"POST /ump/remember with a bare record answered "
                          f"{reply.describe()}, but get of that id does not show the record sent "
                          f"({json.dumps(stored)[:200]}); "
                          f"{_spec('ump/http-route-remember')}", sent=bare, received=reply.body)
    else:
        err = reply.body.get("error") if isinstance(reply.body, dict) else None
        enveloped = isinstance(err, dict) and isinstance(err.get("code"), str)
        # refused in the §3 envelope whatever the status: the status is ump/http-error-status's (SHOULD)
        if not enveloped:
            ctx.violation("ump/http-route-remember", f"POST /ump/remember with a bare record (which the public "
                          f"implementation takes) answered {reply.describe()}: neither accepted (§3.3 response) nor "
                          f"refused with the §3 error envelope; {_spec('ump/http-route-remember')}", sent=bare,
                          received=reply.body or reply.raw)


@check("ump/l1/http-route-get", spec="ump", requirements=("ump/http-route-get",), bindings=HTTP,
       title="GET /ump/memory/{percent-encoded id} answers {record}, or 404 not_found (§4.2)")
def http_route_get(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    rid = _remember(ctx, rec)
    path = "/ump/memory/" + urllib.parse.quote(rid, safe="")
    reply = ctx.client.call_raw("GET", path, None, {"UMP-Version": ctx.version}, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    problems = _route_problem(reply, "get")
    if problems:
        ctx.violation("ump/http-route-get", f"GET {path} (the id percent-encoded) answered {reply.describe()}: "
                      + "; ".join(problems) + f"; {_spec('ump/http-route-get')}", sent=f"GET {path}",
                      received=reply.body or reply.raw)
    else:
        _keep(ctx, reply.body["record"], f"GET {path}")
    unknown = "/ump/memory/" + urllib.parse.quote(ump_ids.random_id(), safe="")
    reply = ctx.client.call_raw("GET", unknown, None, {"UMP-Version": ctx.version}, auth=Auth.as_owner(OWNER_A))
    _internal(reply)
    code = reply.body.get("error", {}).get("code") if isinstance(reply.body, dict) and \
        isinstance(reply.body.get("error"), dict) else None
    # the envelope is §3's; its status (404) is the SHOULD ump/http-error-status's (round 17: an
    # envelope in a 200 blocked L1 here)
    if code != "not_found":
        ctx.violation("ump/http-route-get", f"GET {unknown} (an id never stored) answered {reply.describe()}; "
                      f"expected the §3 error envelope with code not_found (with status 404, which "
                      f"ump/http-error-status asks); {_spec('ump/http-route-get')}", sent=f"GET {unknown}",
                      received=reply.body or reply.raw)


@check("ump/l1/http-route-revise", spec="ump", requirements=("ump/http-route-revise",), bindings=HTTP,
       title="POST /ump/revise answers {id, supersedes} (§4.2)")
def http_route_revise(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    rid = _remember(ctx, rec)
    payload = {"id": rid, "patch": {"body": {"text": f"{_word(rec)} revised over the HTTP route"}}}
    reply = _post(ctx, "/ump/revise", payload)
    _internal(reply)
    problems = _route_problem(reply, "revise")
    if problems:
        ctx.violation("ump/http-route-revise", "POST /ump/revise answered " + reply.describe() + ": "
                      + "; ".join(problems) + f"; {_spec('ump/http-route-revise')}", sent=payload,
                      received=reply.body or reply.raw)


@check("ump/l1/http-route-forget", spec="ump", requirements=("ump/http-route-forget",), bindings=HTTP,
       title="POST /ump/forget answers {result: tombstoned} (§4.2)")
def http_route_forget(ctx: CheckContext) -> None:
    rec = _full_record(ctx, "semantic")
    rid = _remember(ctx, rec)
    payload = {"id": rid, "reason": "memconform route probe"}
    reply = _post(ctx, "/ump/forget", payload)
    _internal(reply)
    problems = _route_problem(reply, "forget")
    if problems:
        ctx.violation("ump/http-route-forget", "POST /ump/forget answered " + reply.describe() + ": "
                      + "; ".join(problems) + f"; {_spec('ump/http-route-forget')}", sent=payload,
                      received=reply.body or reply.raw)


# =============================================================================================
# the golden vectors, through remember
# =============================================================================================

#: Requirements about what a reader must take in (charged when a valid vector is refused).
_ACCEPTANCE = ("ump/kinds-accept-all", "ump/relations-open-vocabulary", "ump/owner-opaque-l0-l1",
               "ump/import-0.1-may")
#: Members a remember request may leave out for the server to fill (§3.3: id/time/integrity; the
#: catalogue's note on ump/remember-fills-id: ump and the like): an "invalid" vector that only
#: lacks one of these is a legitimate partial record over remember.
_FILLABLE = {"/id", "/ump", "/time", "/time/created", "/scope/visibility"}


def _live(requirement: str) -> bool:
    r = catalogues.load("ump").get(requirement)
    return r.bindings is None or bool(set(r.bindings) & set(LIVE))


def _vector_cases(version: str) -> list[Case]:
    out = []
    for c in vectors.cases("ump", version):
        if c.kind != "record":
            continue
        reqs = [r for r in c.requirements if _live(r)]
        if c.expect.get("verdict") == "valid":
            reqs += ["ump/kinds-accept-all", "ump/remember-persists"]
            if _unknown_relation(c.input):
                reqs.append("ump/relations-open-vocabulary")
        out.append(Case(c.id, c, tuple(dict.fromkeys(reqs))))
    return out


_RESERVED_RELATIONS = ("about", "contradicts", "depends_on", "derived_from", "duplicate_of")


def _unknown_relation(rec: Any) -> str | None:
    """A relation type outside the reserved set (§2.5) that `rec` uses, if any."""
    rels = rec.get("relations") if isinstance(rec, dict) else None
    for rel in rels if isinstance(rels, list) else ():
        if isinstance(rel, dict) and isinstance(rel.get("type"), str) and rel["type"] not in _RESERVED_RELATIONS:
            return rel["type"]
    return None


def _vector_requirements() -> tuple[str, ...]:
    ids: dict[str, None] = {}
    for version in ump_record.VERSIONS:
        for case in _vector_cases(version):
            ids.update(dict.fromkeys(case.requirements or ()))
    return tuple(ids)


def _member(rec: Any, pointer: str) -> Any:
    node = rec
    for part in pointer.strip("/").split("/"):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


@check("ump/l1/vectors", spec="ump", requirements=_vector_requirements(), bindings=LIVE,
       title="golden record vectors sent through remember get the verdict they expect",
       cases=lambda subject: _vector_cases(subject.version))
def golden_vectors(ctx: CheckContext) -> None:
    """Each record vector of the session's version is sent through remember as it is (nothing
    stripped; the server may keep or re-mint a vector's id), as its owner when the owner is a test
    key. A valid vector must be accepted (created or merged; created ones are read back with get:
    kind, body.text and owner kept, ump/remember-persists); an invalid one refused with the
    vector's code (or an also-acceptable one) and not stored (get of its id finds no record with
    its content).

    What the level permits, so a server is judged only on what it owes:

    * L2+ requires provenance (§2.6) and a DID owner (§2.2): a valid vector without provenance
      refused with invalid_record is sent again with provenance added (unsigned vectors: requiring
      provenance is L2+'s rule or an admission policy), or skipped at L2+ (signed ones: adding a
      member breaks the signature). The opaque-owner vector is skipped at L2+ when refused. An
      unreadable advertised level counts as L3 for these allowances.
    * A vector whose owner is not a test key (the third-party example) cannot be sent with its
      owner's capability token: an access refusal (forbidden_scope, unauthorized) skips it.
    * Only L3 must verify integrity on remember (§3.3): a signature vector accepted by a server
      advertising less than L3 is skipped, as is a refusal with another code there.
    * remember takes partial records (§3.3): an "invalid" vector that only lacks a member the
      server fills (id, ump, time, time.created, scope.visibility) may be accepted, and then the
      stored record must carry that member (charged to the vector's requirements).
    * A refusal for policy (result rejected, consent_violation) of a valid vector is an admission
      decision (§2.9, MAY): skipped with the reason.

    Charging: a refused valid vector is charged to its acceptance requirement (kinds-accept-all,
    relations-open-vocabulary, owner-opaque-l0-l1) when it names one, else to the rules it
    exercises (the integrity ones for signature_invalid, the others otherwise). Controls first:
    when its kind is not semantic, or it uses a relation type outside the reserved set, a plain
    complete record of that kind / with such a relation is sent; refused too, the refusal is
    that feature's, charged to kinds-accept-all / relations-open-vocabulary alone. An accepted invalid vector, or
    one refused with another code, is charged to all the vector's requirements (as ump/l0/vectors
    does); a refused one found stored afterwards to reject-invalid-record (or
    integrity-verify-on-read).
    """
    case = ctx.payload
    sent = copy.deepcopy(case.input)
    reowned = _reowned(case)
    if reowned is not None:
        sent, how = reowned
        ctx.note(how)
    sent = _fresh_id(case, sent)
    expect = case.expect
    reqs = ctx.case.requirements
    auth, ours = _auth_for(sent)
    level = _level(ctx)
    major = _unknown_major(sent)
    reply = _put(ctx, copy.deepcopy(sent), auth=auth, offered=not major)
    if major and _code(reply) == "unsupported":
        _version_refused(ctx, "the vector")
    _internal(reply)
    try:
        if expect.get("verdict") == "valid":
            own = tuple(r for r in case.requirements if _live(r))  # the vector's own, not the ones added here
            _vector_valid(ctx, sent, reply, own, auth, ours, level)
        elif expect.get("verdict") == "invalid":
            _vector_invalid(ctx, case, sent, reply, reqs, auth, ours, level)
    except NotApplicable as exc:
        from memconform.suite.ump import owners

        if ours or reowned is not None or not owners.active().vendor or "not a key the suite holds" not in str(exc):
            raise
        raise NotApplicable(f"{exc} ({_why_not_reowned(case)})") from None
    if expect.get("verdict") in ("valid", "invalid"):
        return
    if expect.get("verdict") == "acceptable":
        # A reading the text leaves open (the vector's `why`): taken or refused are both right; a
        # refused record must not stay stored.
        if _code(reply) is None:
            # the answer's body (created or merged) depends on what ran before: not in the reason,
            # so a run split across workers reports the same
            how = f"HTTP {reply.status}" if reply.status is not None else reply.binding.upper()
            raise NotApplicable(f"taken ({how}, no error): a reading the text allows ({expect.get('why')}); "
                                "either verdict is right, so there is nothing to judge")
        left = _stored_copy(ctx, sent, auth)
        if left is not None:
            ctx.violation(case.requirements[0], f"the record was refused ({_code(reply)}) but get "
                          f"{sent.get('id')} now returns it: a refused record is not stored; "
                          f"{_spec(case.requirements[0])}", sent=sent, received=left)
    else:
        raise NotApplicable(f"verdict {expect.get('verdict')!r}: nothing a server must do")


def _fresh_id(case: Any, sent: Any) -> Any:
    """`sent` with an id no earlier request used, for a vector that is not valid (invalid or
    acceptable) and not about its id. The golden vectors share ids (every unsigned invalid 0.1
    vector carries the same one, the partial ones among them may be taken and stored under it),
    so a server refusing a reused id would refuse each for the id, never for its defect, and a
    record found under it afterwards would be an earlier one. Signed vectors keep theirs (the id is
    inside the hash and signature they test); a vector whose point is its id (its pointer is /id,
    or it is about ump/record-id-format) keeps it too."""
    expect = case.expect if isinstance(case.expect, dict) else {}
    if expect.get("verdict") not in ("invalid", "acceptable") or not isinstance(sent, dict):
        return sent
    rid = sent.get("id")
    if (not isinstance(rid, str) or not ump_ids.ID_PATTERN.fullmatch(rid) or "integrity" in sent
            or expect.get("pointer") == "/id" or "ump/record-id-format" in case.requirements):
        return sent
    return dict(sent, id=ump_ids.random_id())


#: Requirements that make a vector about who signed or who owns it: re-owning one would change
#: what it tests, so it is never re-owned.
_ABOUT_OWNERSHIP = ("ump/owner-did", "ump/owner-opaque-l0-l1", "ump/remember-reject-bad-signature")


def _reowned(case: Any) -> tuple[dict[str, Any], str] | None:
    """A vector owned by one of the suite's test keys, re-owned for a target whose owners are the
    vendor's own (--ump-owners, docs/vendor-keys.md), or None to send it as it is.

    The vendor's server holds its owners' keys and refuses records of owners it does not know
    (forbidden_scope), so a vector owned by the suite's owner-a would judge nothing of what it is
    about (a kind in the wrong case, a time without offset, …). Where the vector is not about
    signatures or ownership, each test key's DID in it becomes the vendor's DID of the same owner
    and, where it carries integrity, the integrity is recomputed with the vendor's key (the suite
    holds that owner's seed): what the vector tests is unchanged, and the vendor's owner sends it.
    An invalid vector about integrity or canonical form, and any about ownership, is sent as it
    is (and skipped, saying why); so is one the suite cannot sign for (a token command without a
    seed)."""
    from memconform.suite.ump import owners
    from memconform.suite.ump.canonical import CanonicalizationError
    from memconform.suite.ump.testkeys import test_did

    active = owners.active()
    rec = case.input
    scope = rec.get("scope") if isinstance(rec, dict) else None
    owner = scope.get("owner") if isinstance(scope, dict) else None
    if not active.vendor or not isinstance(owner, str) or active.name_of(owner) is not None:
        return None
    name = next((n for n in owners.OWNER_NAMES if test_did(n) == owner), None)
    if name is None or _about_signing(case):
        return None  # a third party's DID (nobody's key), or a vector the change would defeat
    text = json.dumps(rec, ensure_ascii=False)
    for other in owners.OWNER_NAMES:
        text = text.replace(test_did(other), active.did(other))
    out = json.loads(text)
    how = f"re-owned for the vendor's keys: {owner} ({name}, the suite's test key) became {active.did(name)}"
    if isinstance(out.get("integrity"), dict):
        try:
            out = integrity.sign(without_integrity(out), active.signing_key(name))
        except (owners.CannotSign, CanonicalizationError, ValueError, TypeError):
            return None
        how += ", integrity recomputed with that owner's key"
    return out, how + " (the vector is not about signatures or ownership)"


def _owner_key(owner: Any) -> Any:
    """The signing key of the target's owner with this DID, when the suite holds it (else None)."""
    from memconform.suite.ump import owners

    name = owners.active().name_of(owner) if isinstance(owner, str) else None
    if name is None:
        return None
    try:
        return owners.active().signing_key(name)
    except owners.CannotSign:
        return None


def _why_not_reowned(case: Any) -> str:
    from memconform.suite.ump import owners
    from memconform.suite.ump.testkeys import test_did

    owner = ((case.input or {}).get("scope") or {}).get("owner") if isinstance(case.input, dict) else None
    if owner not in {test_did(n) for n in owners.OWNER_NAMES}:
        return "the vector's owner is a third party's, whose key nobody holds"
    if _about_signing(case):
        return ("a vector about signatures or ownership is not re-owned for the vendor's keys: re-signing it "
                "would undo what it tests")
    return "the suite holds no seed for that owner (a token command only), so the vector cannot be re-signed"


def _about_signing(case: Any) -> bool:
    """Whether re-owning and re-signing would undo what the vector tests: an invalid one about
    integrity or canonical form (its defect is in the signature or hash), or any about ownership.
    A valid signed vector stays what it tests, a record its owner signed right, once re-signed."""
    expect = case.expect if isinstance(case.expect, dict) else {}
    if expect.get("verdict") == "valid":
        return any(r in _ABOUT_OWNERSHIP for r in case.requirements)
    return (expect.get("error") == "signature_invalid"
            or "signature_invalid" in (expect.get("also_acceptable_errors") or ())
            or any(r.startswith(("ump/integrity-", "ump/canonical-")) or r in _ABOUT_OWNERSHIP
                   for r in case.requirements))


#: Refusals for policy, not for the record's form: remember's result `rejected` (§3.3, §2.9
#: admission) and consent_violation (§3.3: a server "MUST reject (not silently store) records that
#: fail consent/policy"; §3.7's code for it). A valid vector refused so was parsed and judged by
#: the store's own rules: nothing of §2 (L0 parsing) to charge.
_POLICY_CODES = ("rejected", "consent_violation")


def _policy_refusal(reply: Reply, how: str = "") -> str:
    return (f"refused for policy{' ' + how if how else ''} ({reply.describe()}): a store may refuse records that "
            "fail its consent/policy (§3.3) or its admission (§2.9, MAY); the record was read, so this is no "
            "parsing failure, and whether the vector persists is not judged")


def _vector_valid(ctx: CheckContext, sent: dict[str, Any], reply: Reply, reqs: tuple[str, ...], auth: Auth,
                  ours: bool, level: str | None) -> None:
    code = _code(reply)
    owner = (sent.get("scope") or {}).get("owner") if isinstance(sent.get("scope"), dict) else None
    if code is not None:
        if not ours:  # refused for the owner's token it could not carry, or for the record: unreadable
            which_refusal(reply, f"remember of a valid vector owned by {owner}, a key the suite does not hold")
        if code in ("forbidden_scope", "unauthorized") and not ours:
            raise NotApplicable(f"refused with {code}: the owner {owner} is not a key the suite holds, so the "
                                "request could not carry the owner's capability token")
        if not (isinstance(owner, str) and is_did(owner)) and _at_least(level, "L2"):
            raise NotApplicable(f"refused with {code}: the owner {owner!r} is not a DID, which an L2+ server may "
                                "refuse (§2.2, ump/owner-did)")
        if code in _POLICY_CODES:
            raise NotApplicable(_policy_refusal(reply))
        if code in ("forbidden_scope", "unauthorized"):
            raise NotApplicable(f"refused with {code} although the request carried the owner's token: an "
                                "access-control defect the L3 checks judge")
        unsigned = "integrity" not in sent
        if code == "invalid_record" and "provenance" not in sent and (unsigned or _at_least(level, "L2")):
            # Requiring provenance is L2+'s rule (§2.6) or an admission policy (§2.9): judge the
            # vector's own point with provenance added (a signed one re-signed by its owner, where
            # the suite holds the owner's key: still a record its owner signed right).
            sent = dict(sent, provenance={"actor": owner, "actor_kind": "agent", "method": "memconform-vector"})
            if "integrity" in sent:
                key = _owner_key(owner)
                if key is None:
                    raise NotApplicable(f"refused with invalid_record; the vector has no provenance, which an L2+ "
                                        f"server requires (§2.6; the server advertises {level}), and is signed by "
                                        "an owner whose key the suite does not hold, so provenance cannot be added")
                sent = integrity.sign(without_integrity(sent), key)
            reply = _put(ctx, copy.deepcopy(sent), auth=auth)
            _internal(reply)
            if not ours:
                which_refusal(reply, f"remember of a valid vector owned by {owner}, a key the suite does not hold")
            code = _code(reply)
            if code in ("forbidden_scope", "unauthorized") and not ours:
                raise NotApplicable(f"refused with {code}: the owner {owner} is not a key the suite holds, so the "
                                    "request could not carry the owner's capability token")
            if code in _POLICY_CODES:
                # sent again with provenance, the record is read (it parsed) and refused for policy
                raise NotApplicable(_policy_refusal(reply, "with provenance added"))
    if code is not None and code != "signature_invalid" and _held_repeat(ctx, sent, reply, auth):
        return
    if code is not None and code != "signature_invalid":
        # Controls: when a plain, complete record sharing one orthogonal feature of the vector (its
        # kind, an unknown relation type) is refused too, the refusal is that feature's, not about
        # what the vector exercises.
        controls = []
        if sent.get("kind") in KINDS and sent["kind"] != "semantic":
            controls.append(("ump/kinds-accept-all", f"a plain complete {sent['kind']} record",
                             _full_record(ctx, sent["kind"])))
        unknown = _unknown_relation(sent)
        if unknown:
            controls.append(("ump/relations-open-vocabulary", f"a plain complete record with a relation of type "
                             f"{unknown!r}", _full_record(ctx, "semantic", relations=[
                                 {"type": unknown, "target": "entity:memconform-control"}])))
        for requirement, what, control in controls:
            checked = _put(ctx, control, auth=Auth.as_owner(OWNER_A))
            if _code(checked) is not None and _code(checked) not in ("rejected", "consent_violation"):
                ctx.violation(requirement, f"a valid record was refused with {code} ({reply.describe()}), and so "
                              f"is {what} ({checked.describe()}): the refusal is about that; {_spec(requirement)}",
                              sent=sent, received=reply.body or reply.raw)
                return
    if code is not None:
        acceptance = [r for r in reqs if r in _ACCEPTANCE]
        if acceptance:
            charged = acceptance
        else:
            about_integrity = [r for r in reqs if r.startswith("ump/integrity-")]
            others = [r for r in reqs if not r.startswith("ump/integrity-") and r != "ump/remember-persists"]
            charged = (about_integrity if code == "signature_invalid" else others) or others or about_integrity
        for r in charged:
            ctx.violation(r, f"a valid record was refused with {code}: {reply.describe()}; {_spec(r)}",
                          sent=sent, received=reply.body or reply.raw)
        return
    if reply.body.get("result") != "created":
        _vector_merged(ctx, sent, reply, auth)
        return
    rid = _new_id(reply)
    if rid is None:
        raise Inconclusive(f"the valid record was accepted ({reply.describe()}) without an id, so whether it "
                           "persisted (ump/remember-persists) cannot be read back; judged by ump/l1/remember-result")
    got, stored = _get(ctx, rid, auth=auth)
    if stored is None:
        raise Inconclusive(f"the valid record was accepted as {rid}, but get {rid} answered {got.describe()}, so "
                           "whether it persisted (ump/remember-persists) was not seen; judged by ump/l1/get")
    for path in _differing(stored, sent):
        ctx.violation("ump/remember-persists", f"{path.replace('/', '.')} was "
                      f"{json.dumps(_member(sent, '/' + path), ensure_ascii=False)} when remembered and is "
                      f"{json.dumps(_member(stored, '/' + path), ensure_ascii=False, default=str)} on get {rid}; "
                      f"{_spec('ump/remember-persists')}", sent=sent, received=stored, where=rid)


def _contains(held: Any, sent: Any) -> bool:
    """Whether `held` carries everything `sent` does, objects member by member (a server fills
    members a partial record left out: time.observed, lifecycle.status, …); `ump` aside."""
    if isinstance(sent, dict):
        return isinstance(held, dict) and all(k == "ump" or (k in held and _contains(held[k], v))
                                              for k, v in sent.items())
    return json_equal(held, sent)


def _held_repeat(ctx: CheckContext, sent: dict[str, Any], reply: Reply, auth: Auth) -> bool:
    """Whether a refused valid vector is a repeat of a record the store already holds under the
    vector's id (sent before: by another check, binding, version or worker), the record held being
    the vector itself (every member as sent; integrity aside, which a server that fills members
    signs again). A server may
    use an id once and refuse a repeat (variant refuses-reused-id) as another merges it: the
    verdict must not depend on what ran before, so the vector is judged on the record held, as on
    the merged path."""
    rid = sent.get("id")
    if not (isinstance(rid, str) and ump_ids.ID_PATTERN.fullmatch(rid)):
        return False
    got = ctx.client.get(rid, auth=auth)
    held = got.body.get("record") if got.ok and isinstance(got.body, dict) else None
    if not isinstance(held, dict) or held.get("id") != rid or not _contains(held, without_integrity(sent)):
        return False
    ctx.credit_only_observed()
    ctx.observed(*ctx.case.requirements)
    ctx.note(f"refused ({reply.describe()}) as a repeat: the store already holds this very record under its id "
             f"{rid} (sent before), read back with get; a server may use an id once (§2 \"globally unique\")")
    return True


def _differing(stored: Any, sent: Any) -> list[str]:
    """The members ump/remember-persists asks a stored record to keep (kind, body.text, scope.owner)
    that `stored` does not hold as `sent` had them."""
    return [p for p in ("kind", "body/text", "scope/owner") if _member(stored, "/" + p) != _member(sent, "/" + p)]


def _vector_merged(ctx: CheckContext, sent: dict[str, Any], reply: Reply, auth: Auth) -> None:
    """A valid vector merged (accepted). Whether it merges depends on what the store held before
    (the same vector sent by another check or version), so the verdict must not: the record the
    merge names is read back, and when it keeps the vector's kind, body.text and owner the content
    is seen persisted, as on the created path. A merge into a record that differs (the server's
    own dedup policy, §3.3 MAY) leaves remember-persists not judged, with the reason."""
    ctx.credit_only_observed()
    ctx.observed(*(r for r in ctx.case.requirements if r != "ump/remember-persists"))
    rid = _new_id(reply)
    got, stored = _get(ctx, rid, auth=auth) if rid else (None, None)
    if stored is None:
        ctx.note(f"merged ({reply.describe()}) and the record it names was not read back: whether the vector "
                 "persisted (ump/remember-persists) was not seen")
        return
    differs = [p.replace("/", ".") for p in _differing(stored, sent)]
    if differs:
        ctx.note(f"merged into {rid}, a record with another {', '.join(differs)} (the server's dedup policy): "
                 "whether the vector persisted (ump/remember-persists) was not seen")
        return
    ctx.observed("ump/remember-persists")


def _vector_invalid(ctx: CheckContext, case: Any, sent: dict[str, Any], reply: Reply, reqs: tuple[str, ...],
                    auth: Auth, ours: bool, level: str | None) -> None:
    expect = case.expect
    wanted = expect.get("error", "invalid_record")
    also = tuple(expect.get("also_acceptable_errors", ()))
    pointer = expect.get("pointer")
    fillable = pointer in _FILLABLE and _member(sent, pointer) is _MISSING
    keeper = next((r for r in ("ump/reject-invalid-record", "ump/integrity-verify-on-read") if r in reqs), reqs[-1])
    which_refusal(reply, f"remember of the invalid vector (expected {wanted})")
    code = _code(reply)
    where = f" (the problem is at {pointer})" if pointer else ""
    if code is None:
        if fillable:
            rid = _new_id(reply)
            got, stored = _get(ctx, rid, auth=auth) if rid else (None, None)
            if stored is None:
                # Taking a partial record is right only if the stored one is completed: unseen here.
                raise Inconclusive(f"remember took the record without {pointer} (a partial record, §3.3: "
                                   f"{reply.describe()}), but " + (f"get {rid} answered {got.describe()}" if rid else
                                   "answered no id") + f", so whether the server filled {pointer} was not seen")
            if _member(stored, pointer) is _MISSING:
                for r in reqs:
                    ctx.violation(r, f"remember took a record without {pointer} (a partial record, §3.3) but the "
                                  f"stored record {rid} still lacks it; the server fills what it accepts "
                                  f"missing; {_spec(r)}", sent=sent, received=stored)
            return
        if wanted == "signature_invalid" and not _at_least(level, "L3"):
            raise NotApplicable(f"accepted a record whose integrity does not verify; only L3 must verify on "
                                f"remember (§3.3) and the server advertises {level}")
        for r in reqs:
            ctx.violation(r, f"an invalid record was accepted ({reply.describe()}); the spec asks for a refusal with "
                          f"{wanted}{where}; {_spec(r)}", sent=sent, received=reply.body)
        return
    if _unknown_major(sent) and code == "unsupported":
        also = (*also, "unsupported")  # the version refused (_version_refused saw remember offered)
    if code != wanted and code not in also and code != "rejected":  # (§3.3's own refusal is one too)
        if code in ("forbidden_scope", "unauthorized") and not ours:
            raise NotApplicable(f"refused with {code}: the record's owner is not a key the suite holds, so access "
                                "was decided before the record was read; the refusal itself is right")
        if fillable and code == "invalid_record":
            pass  # a server may refuse a partial record as well
        elif wanted == "signature_invalid" and not _at_least(level, "L3"):
            raise NotApplicable(f"refused with {code}; below L3 (the server advertises {level}) the code for a "
                                "bad signature is not owed")
        else:
            for r in reqs:
                ctx.violation(r, f"refused with {code}, but the spec's code for this record is {wanted}{where}: "
                              f"{reply.describe()}; {_spec(r)}", sent=sent, received=reply.body or reply.raw)
    left = _stored_copy(ctx, sent, auth)
    if left is not None:
        ctx.violation(keeper, f"the record was refused ({code}) but get {sent.get('id')} now returns it: a refused "
                      f"record is not stored; {_spec(keeper)}", sent=sent, received=left)


# =============================================================================================
# every record served (last, so that the records the checks above received are judged too)
# =============================================================================================

_RECORD_REQS = ("ump/record-required-fields", "ump/record-version", "ump/record-id-format", "ump/record-kind",
                "ump/record-visibility", "ump/record-time", "ump/record-field-types")


@check("ump/l1/served-records", spec="ump", requirements=("ump/served-records-valid", *_RECORD_REQS),
       bindings=LIVE, title="every record the server serves (get, recall) is a valid §2 record of its version")
def served_records(ctx: CheckContext) -> None:
    """Round trips of its own (all five kinds from partial records the server completes, public
    and shared records, a record with every optional member; get and recall of each; the successor
    a revise of the first makes, read with get), plus every
    record the other L1 checks received for valid requests on this client. Each violation names
    the §2 rule (record-*) and ump/served-records-valid; a 0.1 label served under 1.0 only the
    latter (ump/record-version reads "0.1" under 1.0 as an import)."""
    word = marker("sv")
    sent = [sample_record(kind, text=f"{word} served {kind} record") for kind in KINDS]
    sent.append(sample_record("semantic", text=f"{word} served public record", visibility="public"))
    sent.append(sample_record("procedural", text=f"{word} served shared record", visibility="shared"))
    sent.append(_optional_record(ctx, f"{word} served record with optional members"))
    judged: list[tuple[str, Any]] = []
    for rec in sent:
        reply = _put(ctx, rec, auth=Auth.as_owner(OWNER_A))
        _internal(reply)
        rid = _new_id(reply) if _accepted(reply) else None
        if rid is None:
            continue
        got, stored = _get(ctx, rid, keep=False)
        if stored is not None:
            judged.append((f"get {rid}", stored))
            if rec is sent[0]:  # the successor a revise makes is served too
                succ = _successor(ctx, rid, f"{word} served {rec['kind']} record, revised")
                if succ is not None:
                    judged.append(succ)
    found = _recall(ctx, {"query": word, "scope": _scope(), "limit": 20}, keep=False)
    for i, res in enumerate(results_of(found)):
        if "record" in res:
            judged.append((f"recall {word!r} results/{i}/record", res["record"]))
    judged.extend(_SERVED.get((ctx.binding, ctx.version, id(ctx.client)), []))
    if not judged:
        raise NotApplicable("the server served no record to judge (remember, get and recall all failed)")
    reported: set[tuple[str, str, str]] = set()
    for how, rec in judged:
        violations = ump_record.validate(rec, ctx.version) if isinstance(rec, dict) else \
            (ump_record.Violation("", "ump/record-field-types", f"the record is {json.dumps(rec)[:60]}, not an "
                                  "object"),)
        for v in violations:
            # Under 1.0 a record labelled "0.1" still meets ump/record-version (a 0.1 record read as
            # an import, §8); served, it is not a 1.0 record: served-records-valid alone.
            label_only = (v.pointer == "/ump" and ctx.version == "1.0" and isinstance(rec, dict)
                          and rec.get("ump") in ump_record.VERSIONS)
            req = v.requirement if v.requirement in _RECORD_REQS else "ump/record-version"
            rid = rec.get("id") if isinstance(rec, dict) else None
            key = (str(rid), v.pointer, v.message)
            if key in reported:
                continue
            reported.add(key)
            message = (f"the record served by {how} is not a valid UMP {ctx.version} record: {v.pointer or '/'}: "
                       f"{v.message}")
            if not label_only:
                ctx.violation(req, f"{message}; {v.source or _spec(req)}", received=rec, where=f"{rid} {v.pointer}")
            ctx.violation("ump/served-records-valid", f"{message}; {_spec('ump/served-records-valid')}",
                          received=rec, where=f"{rid} {v.pointer}")
