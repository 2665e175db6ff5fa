"""What the live (L1-L3) checks share: fresh sample records, preconditions, served-record checks.

Every check runs against one shared store, so each makes its own records with a unique marker in
`body.text` and never relies on what another check wrote.
"""

from __future__ import annotations

import json
import secrets
import urllib.parse
from typing import Any

from memconform.suite.outcomes import NotApplicable
from memconform.suite.ump import record as ump_record
from memconform.suite.ump.client import Auth, Reply
from memconform.suite.ump.testkeys import test_did

LIVE = ("http", "mcp")
KINDS = ("semantic", "episodic", "procedural", "working", "identity")
OWNER_A, OWNER_B, MALLORY = "owner-a", "owner-b", "mallory"
PROJECT = "github.com/example/memconform-live"


def marker(label: str = "m") -> str:
    """A word no other record contains, so a recall for it finds exactly the records made here."""
    return f"mcf{label}{secrets.token_hex(6)}"


def did(name: str) -> str:
    """The DID of owner-a / owner-b as the target being judged knows them (the suite's test keys
    unless the vendor named its own: suite/ump/owners.py); mallory is always the suite's."""
    from memconform.suite.ump import owners

    return owners.did(name)


#: The UMP version of the session the running check speaks (its client sets it before each check).
_session_version: str | None = None


def activate_version(version: str | None) -> None:
    global _session_version
    _session_version = version


def sample_record(kind: str = "semantic", *, owner: str = OWNER_A, text: str | None = None,
                  visibility: str = "private", **members: Any) -> dict[str, Any]:
    """A partial record (no id, no time, no integrity: the server fills them) that every level
    accepts: `ump` (the session's version), a DID owner, provenance, a unique marker in the text.
    `members` replace top-level members (e.g. consent=..., lifecycle=...). `ump` is sent because §2
    marks it REQUIRED and §3.3's "server fills id/time/integrity if omitted" leaves it out, though
    §3.3's own example has none: a server refusing a record without it is as right as one filling it
    (variant records-need-ump; a blind red team, round 20, had 60 checks skip on a refusal)."""
    owner_did = did(owner)
    rec: dict[str, Any] = {
        **({"ump": _session_version} if _session_version else {}),
        "kind": kind,
        "body": {"text": text if text is not None else f"{marker(kind[:3])} a {kind} memory for the suite"},
        "scope": {"owner": owner_did, "project": PROJECT, "visibility": visibility},
        "provenance": {"actor": owner_did, "actor_kind": "agent", "method": "memconform-check"},
    }
    rec.update(members)
    return rec


def first_word(rec: dict[str, Any]) -> str:
    return str(rec["body"]["text"]).split()[0]


def refused_for_token(reply: Reply) -> bool:
    """Whether an answer refuses the request for the token it lacked: HTTP 401/403, or the §3.7
    codes for it (unauthorized, forbidden_scope)."""
    return reply.status in (401, 403) or reply.error_code in ("unauthorized", "forbidden_scope")


def shown_records(reply: Reply) -> tuple[list[Any], list[Any]]:
    """The ids of the public and of the non-public records a recall answer shows."""
    shown = [r.get("record") for r in results_of(reply) if isinstance(r.get("record"), dict)]
    public = [rec.get("id") for rec in shown if (rec.get("scope") or {}).get("visibility") == "public"]
    return public, [rec.get("id") for rec in shown if (rec.get("scope") or {}).get("visibility") != "public"]


def which_refusal(reply: Reply, what: str) -> None:
    """Where a check expects a refusal with a particular code: when `reply` refused with no code
    that can be read, stop without a verdict. The server did refuse, but which refusal it was
    cannot be told, so the requirement the check judges is not charged for what is the error
    form's fault (ump/l1/mcp-errors judges that a failing tool carries a readable code)."""
    if reply.code_unreadable:
        raise NotApplicable(f"{what}: the server refused, but with no §3.7 code that can be read "
                            f"({reply.describe()}), so whether it refused for this reason cannot be told; "
                            "a failing tool's readable code is judged by ump/l1/mcp-errors")


def need(reply: Reply, what: str) -> dict[str, Any]:
    """The body of a reply a check needs as a precondition. When it failed, the check cannot
    judge its own requirement (the failing operation is judged by its own check): skip it."""
    if not reply.ok:
        raise NotApplicable(f"precondition failed: {what} did not succeed ({reply.describe()}); "
                            f"the operation itself is judged by its own check")
    return reply.body


def remember_new(client: Any, record: dict[str, Any], *, auth: Auth | None = None, what: str = "remember") -> str:
    """Remember a record as a precondition and return its id."""
    reply = client.remember(record, **({"auth": auth} if auth else {}))
    body = need(reply, what)
    rid = body.get("id")
    if not isinstance(rid, str):
        raise NotApplicable(f"precondition failed: {what} answered no id ({reply.describe()})")
    return rid


def served_problems(rec: Any, version: str) -> list[str]:
    """Why a record a server returned is not a valid §2 record of `version` ([] when it is)."""
    if not isinstance(rec, dict):
        return [f"not a JSON object: {type(rec).__name__}"]
    return [f"{v.pointer or '/'}: {v.message} ({v.requirement})" for v in ump_record.validate(rec, version)]


def results_of(reply: Reply) -> list[dict[str, Any]]:
    """recall's results as a list of dicts (empty when the shape is wrong: judged elsewhere)."""
    body = reply.body if isinstance(reply.body, dict) else {}
    results = body.get("results")
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def recalled_ids(reply: Reply) -> list[str]:
    return [r["record"].get("id") for r in results_of(reply) if isinstance(r.get("record"), dict)]


# -- records as MCP resources (§4.1: `ump://{project}/{id}`, MAY) ----------------------------------

def ump_templates(client: Any) -> list[str]:
    """The server's `ump://` resource templates (resources/templates/list); none where the driver lists none."""
    templates = getattr(client, "resource_templates", None)
    return [t for t in (templates() if templates is not None else []) if t.startswith("ump://")]


def read_record(client: Any, uri: str, auth: Auth, rid: str) -> dict[str, Any] | None:
    """The record `rid` a resources/read of `uri` answers `auth`'s holder (as it is, or as `{record}`),
    or None: refused, not JSON, or anything else (an error envelope sent as content is no record)."""
    text = client.read_resource(uri, auth=auth)
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("record"), dict):
        value = value["record"]
    return value if isinstance(value, dict) and value.get("id") == rid else None


def record_resource(ctx: Any, rid: str, project: str | None) -> str | None:
    """The ump:// URI by which owner-a reads its record `rid` as an MCP resource: listed, or expanded
    from the server's `ump://{project}/{id}` template (RFC 6570: each value percent-encoded; the id
    also as it is). None where the binding offers no such resource, or owner-a's own read of every
    candidate fails: then no read across the boundary can be judged (absence is no evidence)."""
    client = ctx.client
    if ctx.binding != "mcp" or project is None or getattr(client, "read_resource", None) is None:
        return None
    quoted = urllib.parse.quote(rid, safe="")
    listed = [r.get("uri") for r in (client.resources() or []) if isinstance(r, dict)]
    candidates = [u for u in listed if isinstance(u, str) and u.startswith("ump://") and u.endswith((rid, quoted))]
    for template in ump_templates(client):
        if "{id}" in template:
            for value in (quoted, rid):
                candidates.append(template.replace("{project}", urllib.parse.quote(project, safe=""))
                                  .replace("{id}", value))
    for uri in dict.fromkeys(candidates):
        if read_record(client, uri, Auth.as_owner(OWNER_A), rid) is not None:
            return uri
    return None
