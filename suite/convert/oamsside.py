"""OAMS on either side of a conversion: a document is a list of memories (a JSON array, or a JSONL
store read line by line), `(namespace, key)` unique; the namespace a converted memory gets
(`<owner-hash>:<scope>`, OAMS §4), and the order its members are written in."""

from __future__ import annotations

import base64
import json
import re
from datetime import timezone
from typing import Any

import blake3

from memconform.suite.convert.common import parse_instant
from memconform.suite.oams import model as oams_model

_TOKEN = re.compile(r"[^\s:/]+")
_NOT_SCOPE = re.compile(r"[/:\s]+")


def owner_hash(owner: Any, prefix: str) -> str:
    """The owner-hash half of a namespace: the owner itself when it is already a token (no colon,
    slash or space), else `<prefix>-` + a hash of it (§4 asks for a hash: a DID must not leak)."""
    if isinstance(owner, str) and _TOKEN.fullmatch(owner):
        return owner
    digest = blake3.blake3(str(owner).encode("utf-8", "surrogatepass")).digest()
    return f"{prefix}-" + base64.b32encode(digest).decode("ascii").rstrip("=").lower()[:16]


def scope_label(value: Any, default: str = "default") -> str:
    """A §4 scope from free text: slashes, colons and spaces become "-"."""
    if not isinstance(value, str):
        return default
    label = _NOT_SCOPE.sub("-", value).strip("-")
    return label or default


def namespace(owner: Any, scope: Any, prefix: str) -> str:
    return f"{owner_hash(owner, prefix)}:{scope_label(scope)}"


def utc(value: str) -> str | None:
    """An RFC 3339 date-time as OAMS wants it (UTC, Z), or None."""
    if oams_model.parse_time(value) is not None:
        return value
    moment = parse_instant(value) if isinstance(value, str) else None
    if moment is None:
        return None
    text = moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return text if oams_model.parse_time(text) is not None else None


def unique_key(ns: str, key: str, taken: set[tuple[str, str]]) -> str:
    if (ns, key) not in taken:
        return key
    n = 2
    while (ns, f"{key}~{n}") in taken:
        n += 1
    return f"{key}~{n}"


def derived_id_source(memory: dict[str, Any]) -> str:
    """What a memory's derived UMP id is a hash of: its (namespace, key), the pair that names it."""
    return json.dumps([memory["namespace"], memory["key"]], ensure_ascii=False, separators=(",", ":"))


def tidy(memory: dict[str, Any]) -> dict[str, Any]:
    out = {k: memory[k] for k in oams_model.FIELDS if k in memory}
    out.update({k: v for k, v in memory.items() if k not in out})
    return out


def memory_problems(memory: Any) -> list[str]:
    return [f"{p} ({p.requirement})" for p in oams_model.memory_problems(memory)]


def document_problems(document: Any) -> list[str]:
    if not isinstance(document, list):
        return ["/: an OAMS document is an array of memories (or a JSONL store, one memory a line)"]
    problems: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for i, memory in enumerate(document):
        problems += [f"/{i}: {p.message} ({p.requirement})" for p in oams_model.memory_problems(memory)]
        if isinstance(memory, dict) and isinstance(memory.get("namespace"), str) and isinstance(memory.get("key"), str):
            pair = (memory["namespace"], memory["key"])
            if pair in seen:
                problems.append(f"/{i}: (namespace, key) {list(pair)} again (first at /{seen[pair]}) "
                                "(oams/ns-key-unique)")
            seen.setdefault(pair, i)
    return problems
