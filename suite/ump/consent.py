"""Consent on export (UMP §2.7, §7 L0): ``consent.exportable`` and ``consent.redact``.

Redact paths are JSON-paths, parsed with ``jsonpath-ng``. Supported (and tested) forms: dot paths
``body.structured.token`` (what the reference implementation writes and understands), ``$.body.structured.token``,
brackets ``$['body']['structured']['token']``, array indices ``relations[0].target`` (negative indices
count from the end) and wildcards ``relations[*].target`` / ``body.*``; other jsonpath-ng syntax (``..``,
slices, unions) works as that library defines it.

Stripping deletes the matched member (array elements are removed). Two exceptions keep the record
valid: a path naming the REQUIRED ``body.text`` sets it to ``""``, and a path naming ``body`` leaves
``{"text": ""}``. When anything was stripped the ``integrity`` block is dropped too: the old signature
cannot cover the redacted copy, and only a holder of the owner's key can re-sign it.

A path may name a member no record can lack (``id``, ``scope.owner``, ``$..*`` …; issue 14): stripped,
the copy would be no record at all, and a reader across the boundary would choke on it.
:func:`breaking_paths` names such paths (a store refuses them at remember, §3.3), and
:func:`keep_required` puts those members back into a redacted copy (a store that keeps them, and the
last guard for a record stored before its store refused them).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from jsonpath_ng import parse as _jsonpath_parse
from jsonpath_ng.jsonpath import Fields, Index, Root, This

__all__ = ["is_exportable", "apply_redact", "redacted_paths_present", "export_view", "RedactPathError", "redact_paths",
           "REQUIRED_MEMBERS", "breaking_paths", "keep_required"]

#: The members a served record cannot lack, parents first: §2's REQUIRED ones, and provenance with
#: the members its schema requires, REQUIRED at L2 and above (§2.6), where stores serve other owners.
REQUIRED_MEMBERS: tuple[tuple[str, ...], ...] = (
    ("ump",), ("id",), ("kind",), ("body",), ("scope",), ("time",), ("provenance",),
    ("body", "text"), ("scope", "owner"), ("scope", "visibility"), ("time", "created"),
    ("provenance", "actor"), ("provenance", "actor_kind"), ("provenance", "method"),
)


class RedactPathError(ValueError):
    """A ``consent.redact`` entry that is not a usable JSON-path."""

    def __init__(self, path: Any, reason: str) -> None:
        super().__init__(f"redact path {path!r}: {reason}")
        self.path = path
        self.reason = reason


@functools.lru_cache(maxsize=512)
def _compile(path: str):
    try:
        expr = _jsonpath_parse(path)
    except Exception as exc:  # jsonpath-ng raises several unrelated exception types
        raise RedactPathError(path, f"not a JSON-path ({exc})") from None
    if isinstance(expr, (Root, This)):
        raise RedactPathError(path, "names the whole record, not a member")
    return expr


def redact_paths(record: Mapping[str, Any]) -> list[str]:
    """The record's ``consent.redact`` list (empty when absent); RedactPathError when malformed."""
    consent = record.get("consent") if isinstance(record, Mapping) else None
    if not isinstance(consent, Mapping) or consent.get("redact") is None:
        return []
    paths = consent["redact"]
    if not isinstance(paths, list):
        raise RedactPathError(paths, "consent.redact must be an array of JSON-path strings")
    for p in paths:
        if not isinstance(p, str):
            raise RedactPathError(p, "consent.redact entries must be strings")
        _compile(p)
    return list(paths)


def is_exportable(record: Any) -> bool:
    """False only when ``consent.exportable`` is ``false``."""
    if not isinstance(record, Mapping):
        return True
    consent = record.get("consent")
    return not (isinstance(consent, Mapping) and consent.get("exportable") is False)


def _targets(expr, data: Any) -> list[tuple[Any, Any]]:
    """(container, key-or-index) for every value the expression matches, in document order."""
    out = []
    for match in expr.find(data):
        parent = match.context.value if match.context is not None else None
        path = match.path
        if isinstance(path, Fields) and isinstance(parent, dict) and len(path.fields) == 1:
            key = path.fields[0]
            if key in parent:
                out.append((parent, key))
        elif isinstance(path, Index) and isinstance(parent, list) and len(path.indices) == 1:
            idx = path.indices[0]
            if -len(parent) <= idx < len(parent):
                out.append((parent, idx % len(parent)))
    return out


def _is_body_text(record: dict, container: Any, key: Any) -> bool:
    return key == "text" and container is record.get("body")


def apply_redact(record: Mapping[str, Any]) -> dict:
    """A new record with every ``consent.redact`` path stripped (see the module docstring)."""
    paths = redact_paths(record)
    clone = copy.deepcopy(dict(record))
    # Every path is evaluated against the original record first, then all matches are stripped, so an
    # index path means the element at that index before any redaction.
    targets = [t for path in paths for t in _targets(_compile(path), clone)]
    stripped = False
    deletions: dict[int, tuple[list, set[int]]] = {}
    for container, key in targets:
        if isinstance(container, dict):
            if container is clone and key == "body":
                if clone.get("body") != {"text": ""}:
                    clone["body"] = {"text": ""}
                    stripped = True
            elif _is_body_text(clone, container, key):
                if container.get("text") != "":
                    container["text"] = ""
                    stripped = True
            elif key in container:
                del container[key]
                stripped = True
        else:
            deletions.setdefault(id(container), (container, set()))[1].add(key)
    for container, indices in deletions.values():
        for idx in sorted(indices, reverse=True):
            del container[idx]
            stripped = True
    if stripped:
        clone.pop("integrity", None)
    return clone


def redacted_paths_present(record: Mapping[str, Any], paths: Iterable[str] | None = None) -> list[str]:
    """The redact paths (the record's own, or ``paths``) that still match a value in ``record``.

    ``body.text == ""`` (and ``body == {"text": ""}``) count as stripped. Used to judge an export: a
    correct export leaves this empty. A path selecting array elements by index (``supersedes[0]``) still
    matches whatever element moved into that place, so judge such paths by comparing with
    :func:`export_view` instead.
    """
    if paths is None:
        paths = redact_paths(record)
    out = []
    for path in paths:
        if not isinstance(path, str):
            raise RedactPathError(path, "redact entries must be strings")
        for container, key in _targets(_compile(path), record):
            if isinstance(container, Mapping) and container is record and key == "body" and record["body"] == {"text": ""}:
                continue
            if isinstance(container, Mapping) and key == "text" and container is record.get("body") and container["text"] == "":
                continue
            out.append(path)
            break
    return out


def export_view(records: Iterable[Mapping[str, Any]]) -> list[dict]:
    """What an L0 export must contain: exportable records only, each with its redact paths stripped."""
    return [apply_redact(r) for r in records if is_exportable(r)]


def keep_required(redacted: Mapping[str, Any], original: Mapping[str, Any]) -> dict:
    """`redacted` with every member of :data:`REQUIRED_MEMBERS` that `original` has and the redaction
    stripped put back: a container as an empty object (only its required members return), a value
    as it was. A record that crosses a boundary stays a record, whatever its redact named."""
    out = copy.deepcopy(dict(redacted))
    for path in REQUIRED_MEMBERS:
        src: Any = original
        dst: Any = out
        for key in path[:-1]:
            src = src.get(key) if isinstance(src, Mapping) else None
            dst = dst.get(key) if isinstance(dst, dict) else None
        last = path[-1]
        if isinstance(src, Mapping) and last in src and isinstance(dst, dict) and last not in dst:
            dst[last] = {} if isinstance(src[last], Mapping) else copy.deepcopy(src[last])
    return out


def _missing(record: Mapping[str, Any]) -> set[tuple[str, ...]]:
    """The members of :data:`REQUIRED_MEMBERS` whose parent `record` has but which it lacks."""
    out = set()
    for path in REQUIRED_MEMBERS:
        node: Any = record
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping) and path[-1] not in node:
            out.add(path)
    return out


def breaking_paths(record: Mapping[str, Any]) -> list[str]:
    """The record's redact paths that would strip a member a record cannot lack (each path judged
    alone; ``body`` and ``body.text`` are emptied, not stripped, and so never break it)."""
    paths = redact_paths(record)
    before = _missing(record)
    out = []
    for path in paths:
        single = dict(record, consent=dict(record["consent"], redact=[path]))
        if _missing(apply_redact(single)) - before:
            out.append(path)
    return out
