"""OAMS on either side of a conversion: a document is a list of memories (a JSON array, or a JSONL
store read line by line), `(namespace, key)` unique; the namespace a converted memory gets
(`<owner-hash>:<scope>`, OAMS §4), and the order its members are written in."""

from __future__ import annotations

import base64
import json
import re
from datetime import timezone
from pathlib import Path
from typing import Any

import blake3

from memconform.suite.convert.common import InvalidInput, parse_instant
from memconform.suite.convert.formats import Format
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


def _name(memory: Any) -> str | None:
    # a key is unique only within its namespace (§2), so messages name both
    if isinstance(memory, dict) and isinstance(memory.get("key"), str):
        return f"{memory.get('namespace')}/{memory['key']}"
    return None


def _one_record(document: Any) -> Any:
    # an OAMS STORE body is one memory: a document too
    return [document] if isinstance(document, dict) else document


def read_path(path: str) -> Any:
    """An export bundle folder (its memories.jsonl, the bundle judged first); a file is read as text."""
    if not Path(path).is_dir():
        return None
    bundle = oams_model.read_bundle(Path(path))
    if bundle.problems:
        raise InvalidInput("oams", [f"{p.where + ': ' if p.where else ''}{p.message} ({p.requirement})"
                                    for p in bundle.problems])
    return bundle.memories


def is_bundle(folder: Path) -> bool:
    return folder.name.startswith("oams-export-") or (folder / "manifest.json").is_file() and (
        folder / "memories.jsonl").is_file()


def corpus() -> list[dict[str, Any]]:
    """Memories in two namespaces of one owner and one of another, a key repeated across namespaces,
    a UMP-id key, tags, reserved and vendor metadata, an embedding, a consolidated memory (parent_id,
    dream metadata), null and string source_id, +00:00 and fractional timestamps, an unknown member,
    hostile text."""
    from memconform.suite.ump.corpus import INJECTION_TEXT

    def mem(key: str, ns: str, value: str, created: str, **members: Any) -> dict[str, Any]:
        return {"key": key, "namespace": ns, "value": value, **members, "created_at": created,
                "updated_at": members.pop("updated_at", created) if "updated_at" in members else created}

    personal, project = "user-x123ab:personal", "user-x123ab:project-mithril"
    return [
        mem("01HXPREFS", personal, "Prefers **dark mode** and short answers.", "2026-04-01T09:00:00Z",
            tags=["preferences", "ui"], metadata={"value_type": "markdown", "confidence": 0.9, "language": "en",
                                                   "pii": False, "last_used_at": "2026-04-20T10:00:00Z"},
            source_id="slack:CH123:1700000000.123456", updated_at="2026-04-20T10:00:00.250Z"),
        mem("01HXPREFS", project, "In project Mithril the answers may be long.", "2026-04-02T09:00:00+00:00",
            tags=[], source_id=None),
        mem("fedramp-notes", project, "FedRAMP moderate needs 325 controls.", "2026-04-03T09:00:00.123456Z",
            embedding_model="text-embedding-3-small", embedding=[0.0123, -0.0456, 1, 0.5e-3],
            source_id="https://example.com/fedramp", metadata={"decay_score": 0.2, "vendor": {"rank": [1, 2]}}),
        mem("dream-0001", project, "Mithril's compliance work centres on FedRAMP moderate.", "2026-04-04T09:00:00Z",
            parent_id="user-x123ab:project-mithril/fedramp-notes", source_id="https://example.com/fedramp",
            metadata={"dream_strategy": "synthesize", "dream_run_id": "6f1c1a52-8d7e-4f3b-9a43-2b0c1d9e7f10",
                      "dream_inputs": [[project, "fedramp-notes"], [project, "01HXPREFS"]], "confidence": 1}),
        mem("urn:ump:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "org-acme:legal-archive",
            "Contract renewals go through legal.", "2026-04-05T09:00:00Z", tags=["legal"], x_vendor={"k": True}),
        mem("no-scope", "agent-research-bot", INJECTION_TEXT + " 日本語 ✓ 😀", "2026-04-06T09:00:00Z",
            metadata={}, parent_id=None),
    ]


def _rows() -> list[Any]:
    from memconform.suite.oams.convert.rows import pairs

    return pairs()


#: A document is the memories (a JSON array, one memory, or a JSONL store, §7): no envelope.
FORMAT = Format(
    "oams", label="OAMS", version="0.1", record="memory",
    # `metadata` is "an arbitrary JSON-serializable map" (§2) whose reserved keys (value_type,
    # confidence, last_used_at, decay_score, language, pii) x-extensions is not
    carrier="/metadata/x-extensions",
    # §2's fields (members it does not name are allowed: a later minor version adds fields, §8); no
    # envelope: a bundle's manifest is derived from its lines (§7), so reading a bundle takes its memories
    record_fields=("/key", "/namespace", "/value", "/tags", "/metadata/confidence", "/metadata/*", "/created_at",
                   "/updated_at", "/embedding_model", "/embedding", "/parent_id", "/source_id", "/*"),
    rows=_rows,
    problems=document_problems, record_problems=memory_problems, corpus=corpus,
    id_pointer="/key", record_name=_name, normalize=_one_record, tidy=tidy, jsonl=True,
    # an empty JSONL store holds no memory: a valid, empty document
    empty=list, read_path=read_path, extensions=(".oams.jsonl", ".oams.json"),
    extensions_help=".oams.json, .oams.jsonl or an OAMS export bundle folder",
    folder=is_bundle, folder_help="an oams-export-* folder", tenant_help="OAMS owner-hash",
)
