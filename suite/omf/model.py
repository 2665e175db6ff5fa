"""OMF 1.0 documents: validation (each problem names the requirement it breaks), the trust gate,
the lifecycle vocabularies, and builders for the documents checks send.

The JSON Schema (schemas/omf-1.0.schema.json) is the wire shape every OMF document has; `problems`
adds, with `produced_by_memd=True`, what only memd's own export must carry (extensions.memd with every
lifecycle field on each item, distinct chunk_ids, nothing memd-specific outside the namespace). Memory
text is data: it is only ever compared, never evaluated.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from typing import Any

import jsonschema

from memconform.suite.omf.vocabulary import (  # noqa: F401  re-exported: the judge's vocabulary
    VERSION,
    MEMD_EXT_VERSION,
    STATUSES,
    TIERS,
    CHUNK_TYPES,
    INGESTION_MODES,
    LIFECYCLE_FIELDS,
    MS_FIELDS,
    STANDARD_ITEM_FIELDS,
    DEFAULT_LIFECYCLE,
    DEFAULT_CHUNK_TYPE,
    DEFAULT_INGESTION_MODE,
    TRUSTED_APP,
    UNTRUSTED_APP,
)


@dataclass(frozen=True)
class Problem:
    requirement: str
    where: str  # JSON pointer into the document
    message: str

    def __str__(self) -> str:
        return f"{self.where or '/'}: {self.message} ({self.requirement})"


# -- validation --------------------------------------------------------------------------------------

def _is_integer(checker: Any, value: Any) -> bool:
    # The spec's "integer" is a JSON integer: 1.0 (a float once parsed) and booleans are not.
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def schema() -> dict[str, Any]:
    text = resources.files("memconform.suite.omf").joinpath("schemas/omf-1.0.schema.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    base = jsonschema.Draft202012Validator
    cls = jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine("integer", _is_integer))
    return cls(schema(), format_checker=base.FORMAT_CHECKER)


def _pointer(path: Any) -> str:
    return "".join(f"/{p}" for p in path)


def _requirement_for(path: tuple[Any, ...], validator: str) -> str:
    """The requirement a schema error at `path` breaks (the table row the member comes from)."""
    if not path:
        return "omf/memories-required" if validator in ("required", "type") else "omf/omf-version"
    head = path[0]
    if head in ("omf", "exported_at"):
        return {"omf": "omf/omf-version", "exported_at": "omf/exported-at-format"}[head]
    if head != "memories" or len(path) == 1:
        return "omf/memories-required"
    rest = path[2:]
    if not rest:
        return "omf/content-required" if validator == "required" else "omf/item-field-types"
    if rest[0] == "content":
        return "omf/content-not-blank" if validator in ("minLength", "pattern") else "omf/content-required"
    if rest[0] != "extensions" or len(rest) < 3 or rest[1] != "memd":
        return "omf/item-field-types"
    field = rest[2]
    if field == "lifecycle":
        sub = rest[3] if len(rest) > 3 else None
        return {None: "omf/memd-lifecycle", "status": "omf/lifecycle-status-vocabulary",
                "tier": "omf/lifecycle-tier-vocabulary"}.get(sub, "omf/lifecycle-field-types")
    return {"v": "omf/memd-v", "chunk_id": "omf/memd-chunk-id", "project_id": "omf/memd-project-id",
            "chunk_type": "omf/memd-chunk-type", "ingestion_mode": "omf/memd-ingestion-mode"}.get(
        field, "omf/memd-namespace")


def problems(document: Any, *, produced_by_memd: bool = True) -> list[Problem]:
    """Every way `document` (parsed JSON) breaks OMF 1.0, in document order. With
    `produced_by_memd` (an implementation's export), also what memd's export must emit."""
    found = []
    for err in _validator().iter_errors(document):
        path = tuple(err.absolute_path)
        if err.validator == "required" and isinstance(err.instance, dict):
            # `required` errors sit on the parent and list every missing member: one problem per
            # member, each charged to that member's own table row.
            for member in (m for m in err.validator_value if m not in err.instance):
                rid = ("omf/memories-required" if member == "memories"
                       else _requirement_for(path + (member,), "required"))
                found.append(Problem(rid, _pointer(path + (member,)), f"required member {member!r} is missing"))
            continue
        found.append(Problem(_requirement_for(path, str(err.validator)), _pointer(path), _say(err)))
    if isinstance(document, dict) and isinstance(document.get("memories"), list):
        found += _date_problems(document["memories"])
    if produced_by_memd and isinstance(document, dict) and isinstance(document.get("memories"), list):
        found += _memd_export_problems(document["memories"])
    return sorted(found, key=lambda p: p.where)


#: The standard fields whose value the table writes as "Date (YYYY-MM-DD) or RFC-3339".
DATE_FIELDS = ("created_at", "updated_at", "expires_at")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_date_or_rfc3339(value: str) -> bool:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return (bool(_DATE.fullmatch(value)) and checker.conforms(value, "date")) or (
        checker.conforms(value, "date-time") and not value.endswith("\n"))


def _date_problems(items: list[Any]) -> list[Problem]:
    """created_at / updated_at / expires_at strings that are neither a date nor an RFC 3339
    date-time (a string of another kind is item-field-types', a missing one allowed)."""
    out = []
    for i, item in enumerate(items):
        for name in DATE_FIELDS:
            value = item.get(name) if isinstance(item, dict) else None
            if isinstance(value, str) and not is_date_or_rfc3339(value):
                out.append(Problem("omf/item-date-format", f"/memories/{i}/{name}",
                                   f"{json.dumps(value, ensure_ascii=False)[:80]} is neither a date (YYYY-MM-DD) "
                                   "nor an RFC 3339 date-time"))
    return out


def _say(err: jsonschema.ValidationError) -> str:
    shown = json.dumps(err.instance, ensure_ascii=False)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    if err.validator == "pattern" and err.validator_value == "\\S":
        return f"{shown} is whitespace only"
    if err.validator == "format":
        return f"{shown} is not a valid RFC 3339 date-time"
    if err.validator == "const":
        return f"{shown} is not {json.dumps(err.validator_value)}"
    return f"{shown}: {err.message.split(' is ', 1)[-1] if ' is ' in err.message else err.message}"


#: Names of memd's own data (the extensions.memd and lifecycle tables): at an item's top level, they
#: are memd-specific data outside its namespace.
MEMD_SPECIFIC = frozenset(("v", "chunk_id", "project_id", "chunk_type", "ingestion_mode", "lifecycle",
                           *LIFECYCLE_FIELDS))


def _memd_export_problems(memories: list[Any]) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, it in enumerate(memories):
        if not isinstance(it, dict):
            continue
        where = f"/memories/{i}"
        # The item is not closed: only memd's own data is bound to the namespace, so a top-level member
        # is charged when it bears the name of an extensions.memd or lifecycle member.
        extra = sorted(k for k in it if k not in STANDARD_ITEM_FIELDS and k in MEMD_SPECIFIC)
        if extra:
            out.append(Problem("omf/memd-namespace", where, f"member(s) {', '.join(extra)} outside extensions.memd; "
                                                            f"memd-specific data belongs under extensions.memd"))
        memd = it.get("extensions", {}).get("memd") if isinstance(it.get("extensions"), dict) else None
        if not isinstance(memd, dict):
            out.append(Problem("omf/memd-v", where, "no extensions.memd object (memd emits v: 1 on every item)"))
            continue
        if "v" not in memd:
            out.append(Problem("omf/memd-v", where + "/extensions/memd", "no v (always 1)"))
        cid = memd.get("chunk_id")
        if "chunk_id" not in memd:
            out.append(Problem("omf/memd-chunk-id", where + "/extensions/memd", "no chunk_id"))
        elif isinstance(cid, str):
            if cid in seen:
                out.append(Problem("omf/memd-chunk-id", where + "/extensions/memd/chunk_id",
                                   f"chunk_id {cid!r} repeats item {seen[cid]}'s"))
            seen.setdefault(cid, i)
        if "project_id" not in memd:
            out.append(Problem("omf/memd-project-id", where + "/extensions/memd", "no project_id (string or null)"))
        lc = memd.get("lifecycle")
        if "lifecycle" not in memd:
            out.append(Problem("omf/memd-lifecycle", where + "/extensions/memd", "no lifecycle (always present)"))
        elif isinstance(lc, dict):
            missing = [f for f in LIFECYCLE_FIELDS if f not in lc]
            if missing:
                out.append(Problem("omf/memd-lifecycle", where + "/extensions/memd/lifecycle",
                                   f"missing {', '.join(missing)} (every lifecycle field is emitted)"))
    return out + _edge_problems(memories)


def _edge_problems(memories: list[Any]) -> list[Problem]:
    """Where both items of an edge are in the document, superseded_by and the sibling's supersedes
    agree: A.superseded_by is B exactly when B.supersedes is A (superseded_by is "derived from the
    sibling item's supersedes"). An edge whose other side is absent is a partial export's, not judged."""
    ids: dict[str, int] = {}
    lifecycles: dict[int, dict[str, Any]] = {}
    for i, it in enumerate(memories):
        memd = memd_extension(it) or {}
        cid, lc = memd.get("chunk_id"), memd.get("lifecycle")
        if isinstance(cid, str) and cid not in ids and isinstance(lc, dict):
            ids[cid], lifecycles[i] = i, lc
    out = []
    own = {n: c for c, n in ids.items()}
    for i, lc in lifecycles.items():
        me = own[i]
        for field, sibling_field in (("superseded_by", "supersedes"), ("supersedes", "superseded_by")):
            other = lc.get(field)
            if isinstance(other, str) and other in ids:
                back = lifecycles[ids[other]].get(sibling_field)
                if back != me:
                    out.append(Problem("omf/export-edges-agree", f"/memories/{i}/extensions/memd/lifecycle/{field}",
                                       f"{field} {other!r} (item {ids[other]}), whose {sibling_field} is "
                                       f"{json.dumps(back)}, not this item's chunk_id {me!r}"))
    return out


def is_valid_exported_at(value: Any) -> bool:
    return not [p for p in problems({"omf": VERSION, "exported_at": value, "memories": []})]


# -- trust gate --------------------------------------------------------------------------------------

def memd_extension(item: Any) -> dict[str, Any] | None:
    ext = item.get("extensions") if isinstance(item, dict) else None
    memd = ext.get("memd") if isinstance(ext, dict) else None
    return memd if isinstance(memd, dict) else None


def is_trusted(document: Any, item: Any) -> bool:
    """Trust gate: source.app == "memd" AND extensions.memd.v == 1 (the integer; "1", 1.0, true are not)."""
    source = document.get("source") if isinstance(document, dict) else None
    memd = memd_extension(item)
    v = memd.get("v") if memd else None
    return (isinstance(source, dict) and source.get("app") == TRUSTED_APP
            and isinstance(v, int) and not isinstance(v, bool) and v == MEMD_EXT_VERSION)


def lifecycle_of(item: Any) -> dict[str, Any]:
    """An exported item's lifecycle object ({} when it has none)."""
    memd = memd_extension(item)
    lc = memd.get("lifecycle") if memd else None
    return lc if isinstance(lc, dict) else {}


# -- builders for the documents checks send ----------------------------------------------------------

OMIT: Any = object()


def now_ms() -> int:
    return int(time.time() * 1000)


def uuid7() -> str:
    """A UUIDv7 string (48-bit Unix ms, version 7, RFC 4122 variant, random rest)."""
    value = (now_ms() & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def exported_at(when: datetime | None = None) -> str:
    return (when or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


def lifecycle(**fields: Any) -> dict[str, Any]:
    """A full lifecycle block: the defaults, overridden by `fields`."""
    lc = {"status": "final", "tier": "long_term", "supersedes": None, "superseded_by": None,
          "expires_at_ms": None, "review_after_ms": None, "lifecycle_updated_at_ms": now_ms()}
    lc.update(fields)
    return lc


def item(content: Any, *, lifecycle: Any = None, project: Any = OMIT, category: Any = OMIT, status: Any = OMIT,
         chunk_id: Any = None, tags: Any = OMIT, chunk_type: Any = OMIT, ingestion_mode: Any = OMIT,
         v: Any = MEMD_EXT_VERSION, memd: bool = True, **standard: Any) -> dict[str, Any]:
    """One OmfItem. `lifecycle`: None → a full default block; a dict → merged over the defaults; OMIT →
    no block; anything else → sent verbatim (a malformed block). `memd=False` → standard fields only."""
    it: dict[str, Any] = {"content": content}
    for key, value in (("category", category), ("tags", tags), ("status", status)):
        if value is not OMIT:
            it[key] = value
    it.update(standard)
    if not memd:
        return it
    ext: dict[str, Any] = {"v": v, "chunk_id": chunk_id or uuid7()}
    if v is OMIT:
        del ext["v"]
    for key, value in (("project_id", project), ("chunk_type", chunk_type), ("ingestion_mode", ingestion_mode)):
        if value is not OMIT:
            ext[key] = value
    if lifecycle is None:
        ext["lifecycle"] = globals()["lifecycle"]()
    elif isinstance(lifecycle, dict):
        ext["lifecycle"] = globals()["lifecycle"](**lifecycle)
    elif lifecycle is not OMIT:
        ext["lifecycle"] = lifecycle
    it["extensions"] = {"memd": ext}
    return it


def document(items: list[Any], trusted: bool = True, *, source: Any = OMIT, **envelope: Any) -> dict[str, Any]:
    """An OMF 1.0 envelope around `items` (deep-copied). trusted → source.app "memd"; otherwise a
    third-party source. `source=None` leaves source out; `envelope` overrides omf / exported_at."""
    doc: dict[str, Any] = {"omf": VERSION, "exported_at": exported_at()}
    if source is OMIT:
        doc["source"] = {"app": TRUSTED_APP if trusted else UNTRUSTED_APP}
    elif source is not None:
        doc["source"] = source
    doc["memories"] = copy.deepcopy(items)
    doc.update(envelope)
    return doc


def dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def fresh_tenant(tag: str) -> str:
    """A tenant no other check (or earlier run) uses: `mcf-<tag>-<hex>`."""
    return f"mcf-{tag}-{secrets.token_hex(6)}"
