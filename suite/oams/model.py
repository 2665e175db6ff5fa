"""OAMS 0.1 (Open Agent Memory Standard, ../shared/specs/oams-0.1.md): the memory object (§2), the
namespace convention (§4), the JSONL store and the export bundle (§7) with its manifest and checksum,
the optional Markdown serialization, and the consolidation fields (§5, §6).

Every judging function returns `Problem`s (requirement id + message + where), never raises on bad
input: what a vendor's file or answer holds is data, only ever compared. How each loose rule is
read: docs/catalogue-oams.md.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import struct
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from memconform.suite.jsonvalue import json_equal

VERSION = "0.1"
#: The fields §2 names, in its order; the first five make a memory valid.
REQUIRED_FIELDS = ("key", "namespace", "value", "created_at", "updated_at")
FIELDS = ("key", "namespace", "value", "tags", "metadata", "created_at", "updated_at", "embedding_model",
          "embedding", "parent_id", "source_id")
#: §6's dream_strategy enum.
DREAM_STRATEGIES = ("synthesize", "pattern_extract", "insight_generate", "compress", "associate", "validate",
                    "evolve", "forecast", "reflect")
#: §3's reserved error codes.
NAMESPACE_NOT_FOUND, MEMORY_NOT_FOUND, VALIDATION_FAILED, QUOTA_EXCEEDED, CROSS_NAMESPACE_DENIED = (
    -32001, -32002, -32003, -32004, -32005)
RESERVED_CODES = {NAMESPACE_NOT_FOUND: "namespace not found", MEMORY_NOT_FOUND: "memory not found",
                  VALIDATION_FAILED: "validation failed", QUOTA_EXCEEDED: "quota exceeded",
                  CROSS_NAMESPACE_DENIED: "cross-namespace access denied"}
RECALL_DEFAULT_K = 8
MANIFEST_FIELDS = ("oams_version", "source_vendor", "exported_at", "namespaces", "memory_count",
                   "embedding_model", "checksum_sha256")
#: Manifest members a bundle must carry (embedding_model only when a line carries an embedding).
MANIFEST_REQUIRED = ("oams_version", "source_vendor", "exported_at", "namespaces", "memory_count",
                     "checksum_sha256")
BUNDLE_NAME = re.compile(r"oams-export-(.+)")
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
UTC_SUFFIX = re.compile(r"(?:[Zz]|\+00:00)$")

#: Which requirement a schema violation at a member breaks.
_FIELD_RULE = {
    "key": "oams/key-required", "namespace": "oams/namespace-required", "value": "oams/value-string",
    "created_at": "oams/timestamps-utc", "updated_at": "oams/timestamps-utc", "tags": "oams/tags-strings",
    "metadata": "oams/metadata-object", "embedding_model": "oams/embedding-model-required",
    "embedding": "oams/embedding-floats", "parent_id": "oams/provenance-fields", "source_id": "oams/provenance-fields",
}


@dataclass(frozen=True)
class Problem:
    requirement: str
    message: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.where + ': ' if self.where else ''}{self.message}"


@functools.cache
def schema() -> dict[str, Any]:
    text = resources.files("memconform.suite.oams").joinpath("schemas/memory.schema.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(schema(), format_checker=FormatChecker())


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 UTC timestamp as an aware datetime, or None (not a string, not RFC 3339, not UTC)."""
    return _parse_time(value) if isinstance(value, str) else None


@functools.lru_cache(maxsize=8192)
def _parse_time(value: str) -> datetime | None:
    # cached: a listing sorts and pages by these times, so each is read many times (~60 µs each)
    if not UTC_SUFFIX.search(value) or not _validator().is_valid(
            {"key": "k", "namespace": "n", "value": "", "created_at": value, "updated_at": value}):
        return None
    try:
        return datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00")).astimezone(timezone.utc)
    except ValueError:
        return None


def now() -> str:
    """Now as RFC 3339 UTC with microseconds (what the reference writes)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def describe(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# -- the memory object (§2) -----------------------------------------------------------------------

def memory_problems(memory: Any, where: str = "") -> list[Problem]:
    """Every way `memory` is not a valid OAMS 0.1 memory, one problem per rule broken."""
    if not isinstance(memory, dict):
        return [Problem("oams/key-required", f"not a JSON object but {describe(memory)}", where)]
    found: list[Problem] = []
    for err in sorted(_validator().iter_errors(memory), key=lambda e: list(e.absolute_path)):
        path = list(err.absolute_path)
        if err.validator == "required":
            field = next((f for f in REQUIRED_FIELDS if f not in memory and repr(f) in err.message), None)
            rule = _FIELD_RULE.get(field or "", "oams/key-required")
            found.append(Problem(rule, f"required member {field!r} is missing (members present: "
                                       f"{', '.join(sorted(map(str, memory))) or 'none'})", where))
        elif err.validator == "dependentRequired":
            found.append(Problem("oams/embedding-model-required",
                                 "`embedding` is present but `embedding_model` is not", where))
        elif path:
            field = str(path[0])
            rule = _FIELD_RULE.get(field, "oams/metadata-object")
            shown = "/".join(map(str, path))
            found.append(Problem(rule, f"/{shown} = {describe(err.instance, 80)}: {err.message}", where))
        else:
            found.append(Problem("oams/key-required", err.message, where))
    created, updated = parse_time(memory.get("created_at")), parse_time(memory.get("updated_at"))
    if created and updated and updated < created:
        found.append(Problem("oams/updated-not-before-created",
                             f"updated_at {memory['updated_at']} is before created_at {memory['created_at']}", where))
    ns = memory.get("namespace")
    if isinstance(ns, str):
        found.extend(Problem(p.requirement, p.message, where) for p in namespace_problems(ns))
    return _unique(found)


def _unique(problems: list[Problem]) -> list[Problem]:
    seen, out = set(), []
    for p in problems:
        if (p.requirement, p.message, p.where) not in seen:
            seen.add((p.requirement, p.message, p.where))
            out.append(p)
    return out


def split_namespace(namespace: str) -> tuple[str, str | None]:
    """(owner-hash, scope) of `<owner-hash>:<scope>`; (namespace, None) without a colon."""
    owner, sep, scope = namespace.partition(":")
    return (owner, scope) if sep else (namespace, None)


def owner_of(namespace: str) -> str:
    return split_namespace(namespace)[0]


def namespace_problems(namespace: str) -> list[Problem]:
    """The §4 rule a namespace can break outright: slashes and colons are not permitted in its scope."""
    _owner, scope = split_namespace(namespace)
    if scope is not None and ("/" in scope or ":" in scope):
        return [Problem("oams/scope-no-slash-colon",
                        f"namespace {namespace!r}: its scope {scope!r} holds a {'slash' if '/' in scope else 'colon'}")]
    return []


def convention_problems(namespace: str) -> list[Problem]:
    """The §4 convention `<owner-hash>:<scope>` (read as SHOULD): both halves non-empty."""
    owner, scope = split_namespace(namespace)
    if not owner or not scope:
        return [Problem("oams/ns-convention", f"namespace {namespace!r} is not of the form <owner-hash>:<scope>")]
    return []


def as_float32(value: Any) -> Any:
    """A number as float32 holds it (read back as a Python float); anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except (OverflowError, struct.error):
        return value


def same_embedding(want: Any, have: Any) -> bool:
    """Equal as float32 vectors: §2 types `embedding` "array of float32", so a server storing float32
    answers 0.0123 as 0.012299999594688416 (variant oams-embedding-float32)."""
    if not (isinstance(want, list) and isinstance(have, list) and len(want) == len(have)):
        return False
    return all(isinstance(w, (int, float)) and isinstance(h, (int, float)) and not isinstance(w, bool)
               and not isinstance(h, bool) and as_float32(w) == as_float32(h) for w, h in zip(want, have))


def same_tags(want: Any, have: Any) -> bool:
    """Equal as sets of labels, case-folded: §2 makes tags "free-form labels for filtering" with no
    order (variant oams-tags-sorted) and lets a server lowercase them."""
    if not (isinstance(want, list) and isinstance(have, list)):
        return False
    return sorted(str(t).lower() for t in want) == sorted(str(t).lower() for t in have)


def same_memory_fields(sent: dict[str, Any], got: Any, fields: tuple[str, ...] | None = None, *,
                       read: bool = False) -> list[str]:
    """The members of `sent` that came back different in `got`, each as a sentence. Tags compare as
    case-folded sets, embeddings at float32 precision, and a null parent_id matches one left out (§2:
    "optional, string | null"; variant oams-null-parent-omitted). `read`: `got` is what RECALL or
    LIST answered, which may leave the vector out with its model (§2 "Producers MAY omit"; variant
    oams-read-omits-embeddings); one it carries must be the one stored."""
    if not isinstance(got, dict):
        return [f"the answer is not a memory object but {describe(got)}"]
    out = []
    vector_left_out = read and "embedding" not in got
    for name in fields or tuple(sent):
        if name in ("created_at", "updated_at") and name not in (fields or ()):
            continue
        want, have = sent.get(name), got.get(name, _MISSING)
        if vector_left_out and name in ("embedding", "embedding_model") and have is _MISSING:
            continue
        if name == "tags" and same_tags(want, have):
            continue
        if name == "embedding" and same_embedding(want, have):
            continue
        if name == "parent_id" and want is None and have is _MISSING:
            continue
        if name == "metadata" and isinstance(want, dict) and isinstance(have, dict):
            have = {k: v for k, v in have.items() if k != "score" or "score" in want}
        if have is _MISSING:
            out.append(f"`{name}` sent {describe(want, 80)}, missing in the answer")
        elif not json_equal(have, want):  # true is not 1
            if isinstance(want, dict) and isinstance(have, dict):  # the members that differ, by name
                out.extend(f"`{name}.{k}` sent {describe(want[k], 80) if k in want else '<nothing>'}, came back "
                           f"{describe(have[k], 80) if k in have else '<nothing>'}"
                           for k in [*want, *(k for k in have if k not in want)]
                           if k not in want or k not in have or not json_equal(want[k], have[k]))
                continue
            sent_as, back_as = describe(want, 80), describe(have, 80)
            if isinstance(want, str) and isinstance(have, str) and \
                    unicodedata.normalize("NFC", want) == unicodedata.normalize("NFC", have):
                # alike on screen, other code points: escaped, so the message shows the difference
                sent_as, back_as = ascii(want)[:160], ascii(have)[:160] + (" (the same text in another Unicode "
                                                                            "normalization form)")
            out.append(f"`{name}` sent {sent_as}, came back {back_as}")
    return out


_MISSING: Any = object()


def shape_report(found: Any) -> str:
    """Field by field, what §2 expects against what an answer holds (for a server of another draft:
    `id` for `key`, integer-millisecond times, …)."""
    if not isinstance(found, dict):
        return f"expected a memory object, found {describe(found)}"
    parts = []
    for name in REQUIRED_FIELDS:
        if name not in found:
            parts.append(f"`{name}` expected ({'RFC 3339 UTC string' if name.endswith('_at') else 'string'}): missing")
        elif name.endswith("_at") and parse_time(found[name]) is None:
            parts.append(f"`{name}` expected an RFC 3339 UTC string: found {describe(found[name], 40)}")
        elif not name.endswith("_at") and not isinstance(found[name], str):
            parts.append(f"`{name}` expected a string: found {describe(found[name], 40)}")
    extra = [k for k in found if k not in FIELDS]
    if extra:
        parts.append(f"members §2 does not name: {', '.join(map(repr, extra[:12]))}")
    return "; ".join(parts) or "every §2 field as expected"


# -- JSONL store (§1, §7) ------------------------------------------------------------------------

def parse_jsonl(data: bytes, where: str = "memories.jsonl") -> tuple[list[Any], list[Problem]]:
    """The lines of a JSONL store: (the JSON values, one per line; problems of the framing)."""
    problems: list[Problem] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], [Problem("oams/jsonl-lines", f"not UTF-8 ({exc})", where)]
    if text.startswith("\ufeff"):
        problems.append(Problem("oams/jsonl-lines", "starts with a byte order mark", where))
        text = text[1:]
    if "\r\n" in text:
        problems.append(Problem("oams/jsonl-lines", "lines end with CRLF, not LF", where))
    if text and not text.endswith("\n"):
        problems.append(Problem("oams/jsonl-lines", "the last line is not LF-terminated", where))
    values: list[Any] = []
    for n, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            if text:
                problems.append(Problem("oams/jsonl-lines", f"line {n} is blank", where))
            continue
        try:
            values.append(json.loads(line))
        except ValueError as exc:
            problems.append(Problem("oams/jsonl-store", f"line {n} is not JSON ({exc}): {line[:80]!r}", where))
            values.append(_NOT_JSON)
    return values, problems


_NOT_JSON: Any = type("NotJson", (), {"__repr__": lambda self: "<not JSON>"})()


def store_problems(values: list[Any], where: str = "memories.jsonl", *, sorted_by_created: bool = False
                   ) -> list[Problem]:
    """Every memory of a JSONL store valid; `(namespace, key)` unique; with `sorted_by_created` (a
    bundle's memories.jsonl) sorted by created_at ascending."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    previous: datetime | None = None
    for n, value in enumerate(values, start=1):
        if value is _NOT_JSON:
            continue
        at = f"{where} line {n}"
        if not isinstance(value, dict):
            problems.append(Problem("oams/jsonl-store", f"not a JSON object but {describe(value)}", at))
            continue
        problems.extend(memory_problems(value, at))
        pair = (value.get("namespace"), value.get("key"))
        if all(isinstance(x, str) for x in pair):
            if pair in seen:
                problems.append(Problem("oams/ns-key-unique", f"(namespace, key) {pair} again (first on line "
                                                              f"{seen[pair]})", at))
            seen.setdefault(pair, n)  # type: ignore[arg-type]
        created = parse_time(value.get("created_at"))
        if sorted_by_created and created is not None:
            if previous is not None and created < previous:
                problems.append(Problem("oams/jsonl-sorted", f"created_at {value['created_at']} comes after a "
                                                             f"later one ({previous.isoformat()})", at))
            previous = max(previous, created) if previous else created
    return problems


def memories_of(values: list[Any]) -> list[dict[str, Any]]:
    return [v for v in values if isinstance(v, dict)]


def render_jsonl(memories: list[dict[str, Any]]) -> bytes:
    """Memories as §7's memories.jsonl: sorted by created_at ascending (then namespace, key), one
    compact JSON object per LF-terminated line, UTF-8."""
    def order(m: dict[str, Any]) -> tuple[Any, ...]:
        t = parse_time(m.get("created_at"))
        return (t or datetime.min.replace(tzinfo=timezone.utc), str(m.get("namespace")), str(m.get("key")))
    return b"".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
                    for m in sorted(memories, key=order))


def checksum(data: bytes) -> str:
    """`checksum_sha256` as read here: SHA-256, lowercase hex, of memories.jsonl's exact bytes."""
    return hashlib.sha256(data).hexdigest()


# -- the export bundle (§7) and its manifest -------------------------------------------------------

def manifest_problems(manifest: Any, values: list[Any], jsonl: bytes, version: str = VERSION,
                      where: str = "manifest.json") -> list[Problem]:
    if not isinstance(manifest, dict):
        return [Problem("oams/manifest-shape", f"not a JSON object but {describe(manifest)}", where)]
    problems: list[Problem] = []
    memories = memories_of(values)
    for name in MANIFEST_REQUIRED:
        if name not in manifest:
            problems.append(Problem("oams/manifest-shape", f"member {name!r} is missing", where))
    types = {"oams_version": str, "source_vendor": str, "exported_at": str, "namespaces": list,
             "memory_count": int, "embedding_model": str, "checksum_sha256": str}
    for name, kind in types.items():
        if name in manifest and (not isinstance(manifest[name], kind) or isinstance(manifest[name], bool)):
            problems.append(Problem("oams/manifest-shape", f"{name} = {describe(manifest[name], 60)} is not a "
                                                           f"{kind.__name__}", where))
    if "exported_at" in manifest and isinstance(manifest["exported_at"], str) and parse_time(manifest["exported_at"]) is None:
        problems.append(Problem("oams/manifest-shape", f"exported_at {manifest['exported_at']!r} is not RFC 3339 UTC",
                                where))
    models = {json.dumps(m.get("embedding_model")) for m in memories if "embedding" in m}
    # one embedding_model names the vectors only when they share one: a store mixing models may leave
    # it out, as naming one would be wrong for the rest (a blind red team, round 18)
    if len(models) == 1 and "embedding_model" not in manifest:
        problems.append(Problem("oams/manifest-shape", "lines carry embeddings but embedding_model is missing", where))
    v = manifest.get("oams_version")
    if isinstance(v, str):
        problems.extend(Problem(p.requirement, p.message, where) for p in version_problems(v, version))
    count = manifest.get("memory_count")
    if isinstance(count, int) and not isinstance(count, bool) and count != len(values):
        problems.append(Problem("oams/manifest-count", f"memory_count {count} but memories.jsonl holds "
                                                       f"{len(values)} line(s)", where))
    spaces = manifest.get("namespaces")
    if isinstance(spaces, list):
        held = {m.get("namespace") for m in memories if isinstance(m.get("namespace"), str)}
        if set(spaces) != held or len(spaces) != len(set(map(str, spaces))):
            problems.append(Problem("oams/manifest-namespaces",
                                    f"namespaces {sorted(map(str, spaces))} but the lines hold {sorted(held)}", where))
    digest = manifest.get("checksum_sha256")
    if isinstance(digest, str):
        want = checksum(jsonl)
        if digest.lower().removeprefix("sha256:") != want:
            problems.append(Problem("oams/manifest-checksum", f"checksum_sha256 {digest!r} but SHA-256 of "
                                                              f"memories.jsonl is {want}", where))
    return problems


_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?")


def version_problems(declared: str, judged: str = VERSION) -> list[Problem]:
    """§8: oams_version must be the version the producer was built against. What a judge can tell:
    it is a version (MAJOR.MINOR or MAJOR.MINOR.PATCH) of the spec judged, or a MINOR of the same
    MAJOR (backward compatible: judged under `judged`'s rules); another MAJOR is not this spec."""
    m = _VERSION.fullmatch(declared)
    if m is None:
        return [Problem("oams/manifest-version", f"oams_version {declared!r} is not a MAJOR.MINOR[.PATCH] version")]
    if m.group(1) != judged.split(".")[0]:
        return [Problem("oams/manifest-version", f"oams_version {declared!r} is another major version than "
                                                 f"{judged!r}, the spec version judged against")]
    return []


@dataclass(frozen=True)
class Bundle:
    path: Path
    manifest: Any
    values: tuple[Any, ...]
    jsonl: bytes
    problems: tuple[Problem, ...]

    @property
    def memories(self) -> list[dict[str, Any]]:
        return memories_of(list(self.values))


def read_bundle(folder: Path, version: str = VERSION) -> Bundle:
    """A bundle folder read and judged (layout, manifest, lines, optional embeddings.bin)."""
    problems: list[Problem] = []
    if not BUNDLE_NAME.fullmatch(folder.name):
        problems.append(Problem("oams/bundle-folder-name", f"the folder is named {folder.name!r}, not "
                                                           "oams-export-<timestamp>", str(folder)))
    manifest: Any = None
    mpath, lpath = folder / "manifest.json", folder / "memories.jsonl"
    if not mpath.is_file():
        problems.append(Problem("oams/bundle-layout", "manifest.json is missing", str(folder)))
    else:
        try:
            manifest = json.loads(mpath.read_bytes().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            problems.append(Problem("oams/manifest-shape", f"manifest.json is not JSON ({exc})", str(mpath)))
    jsonl = b""
    if not lpath.is_file():
        problems.append(Problem("oams/bundle-layout", "memories.jsonl is missing", str(folder)))
    else:
        jsonl = lpath.read_bytes()
    values, framing = parse_jsonl(jsonl)
    problems.extend(framing)
    problems.extend(store_problems(values, sorted_by_created=True))
    if manifest is not None:
        problems.extend(manifest_problems(manifest, values, jsonl, version))
    problems.extend(embeddings_problems(folder / "embeddings.bin", memories_of(values)))
    return Bundle(folder, manifest, tuple(values), jsonl, tuple(problems))


def embeddings_problems(path: Path, memories: list[dict[str, Any]]) -> list[Problem]:
    """embeddings.bin, when present: every line's vector is in it as packed float32 (little- or
    big-endian, the same for the whole file). §7 fixes no layout ("packed float32 vectors keyed
    by line offset"), so whether keys, dimensions or a header sit between the vectors, and in what
    order, is the producer's; a vector found nowhere (written as float64, or not at all) is not."""
    if not path.is_file():
        return []
    vectors = [m["embedding"] for m in memories if _is_vector(m.get("embedding"))]
    if not vectors:
        return []
    data = path.read_bytes()
    missing = min(([i for i, v in enumerate(vectors) if struct.pack(f"{order}{len(v)}f", *v) not in data]
                   for order in "<>"), key=len)
    if not missing:
        return []
    return [Problem("oams/embeddings-bin-layout", f"{len(data)} bytes holding {len(missing)} of the {len(vectors)} "
                                                  "vectors the lines carry nowhere as packed float32 (little- or "
                                                  f"big-endian): the first missing is {_short(vectors[missing[0]])}",
                    str(path))]


def _is_vector(value: Any) -> bool:
    """An embedding float32 can hold: a non-empty list of finite numbers within float32's range."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and abs(x) <= 3.4028234663852886e38
        for x in value)


def _short(vector: list[Any]) -> str:
    return "[" + ", ".join(map(repr, vector[:4])) + (", …]" if len(vector) > 4 else "]")


# -- consolidation (§5, §6) ----------------------------------------------------------------------

def is_consolidated(memory: Any) -> bool:
    return isinstance(memory, dict) and isinstance(memory.get("metadata"), dict) \
        and "dream_strategy" in memory["metadata"]


def made_by_a_run(memory: Any) -> bool:
    """A consolidated memory that shows the consolidation run which made it (metadata.dream_inputs
    or dream_run_id): one §5 and §6 speak of. A memory carrying only a dream_strategy may be another
    product's summary brought in as §7 maps it (Zep summaries: dream_strategy "compress", no parent),
    which an import keeps as it is."""
    return is_consolidated(memory) and bool({"dream_inputs", "dream_run_id"} & set(memory["metadata"]))


def strategy_known(strategy: Any) -> bool:
    return strategy in DREAM_STRATEGIES or (isinstance(strategy, str) and strategy.startswith("vendor:")
                                            and len(strategy) > len("vendor:"))


#: A member left out, told apart from an explicit null.
_LEFT_OUT = object()


def consolidation_problems(memory: dict[str, Any], inputs: dict[tuple[str, str], dict[str, Any]] | None = None,
                           where: str = "") -> list[Problem]:
    """What §5/§6 ask of a consolidated memory. `inputs`, when known, are the memories it may come
    from, by (namespace, key)."""
    meta = memory.get("metadata") if isinstance(memory.get("metadata"), dict) else {}
    problems = []
    parent = memory.get("parent_id")
    if not isinstance(parent, str) or not parent:
        problems.append(Problem("oams/consolidated-parent-id", f"parent_id is {describe(parent)}", where))
    strategy = meta.get("dream_strategy")
    if not strategy_known(strategy):
        problems.append(Problem("oams/dream-strategy", f"metadata.dream_strategy {describe(strategy)} is not one of "
                                                       f"{', '.join(DREAM_STRATEGIES)} or vendor:<name>", where))
    pairs = meta.get("dream_inputs")
    if not isinstance(pairs, list) or not pairs or not all(_is_pair(p) for p in pairs):
        problems.append(Problem("oams/dream-inputs", f"metadata.dream_inputs {describe(pairs)} is not an array of "
                                                     "(namespace, key) pairs", where))
    run = meta.get("dream_run_id")
    if not _is_uuid(run):
        problems.append(Problem("oams/dream-run-id", f"metadata.dream_run_id {describe(run)} is not a UUID", where))
    elif inputs is not None and isinstance(pairs, list):
        # a source_id left out is no source_id (only an explicit null is one: §5's "Synthesized: null")
        sources = {m["source_id"] for k, m in inputs.items()
                   if any(_pair(p) == k for p in pairs) and "source_id" in m and not isinstance(m["source_id"], (dict, list))}
        sid = memory.get("source_id", _LEFT_OUT)
        synthetic = isinstance(sid, str) and sid == f"dream:{strategy}:{run}"
        # an input's null is an input's source_id too ("Synthesized (no single source): null", §5):
        # preserving it from that input is preserving (round 18)
        if not synthetic and sid not in sources:
            shown = ", ".join(sorted(json.dumps(x, ensure_ascii=False) for x in sources))
            said = "source_id is left out, so it" if sid is _LEFT_OUT else f"source_id {describe(sid)}"
            problems.append(Problem("oams/consolidated-source-id", f"{said} is neither an input's "
                                                                   f"source_id ({shown}) nor "
                                                                   f"dream:{strategy}:{run}", where))
    return problems


def _pair(p: Any) -> tuple[str, str] | None:
    if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p):
        return (p[0], p[1])
    if isinstance(p, dict) and isinstance(p.get("namespace"), str) and isinstance(p.get("key"), str):
        return (p["namespace"], p["key"])
    return None


def _is_pair(p: Any) -> bool:
    return _pair(p) is not None


def _is_uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


# -- the optional Markdown serialization (§7) -------------------------------------------------------

def render_markdown(memories: list[dict[str, Any]]) -> str:
    out = []
    for m in memories:
        lines = [f"## key: {m['key']}", "", f"**namespace:** `{m['namespace']}`", f"**created:** {m['created_at']}",
                 f"**updated:** {m['updated_at']}"]
        if m.get("source_id") is not None:
            lines.append(f"**source:** {m['source_id']}")
        if m.get("tags"):
            lines.append("**tags:** " + ", ".join(f"`{t}`" for t in m["tags"]))
        lines += ["", m["value"], "", "---", ""]
        out.append("\n".join(lines))
    return "\n".join(out)


_MD_FIELD = re.compile(r"\*\*(namespace|created|updated|source|tags):\*\* ?(.*)")


def _section_starts(lines: list[str]) -> list[int]:
    """The lines that open a section: `## key: …` followed (past blank lines) by a field line. §7
    gives the value, "the actual value text … as Markdown body", no escaping, so a value may hold a
    `## key:` line or a `---` rule of its own (a blind red team, round 18): a header that opens no
    field list is the value's text."""
    out = []
    for i, line in enumerate(lines):
        if not line.startswith("## key:"):
            continue
        following = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
        if _MD_FIELD.fullmatch(following) or not out:
            out.append(i)
    return out


def parse_markdown(text: str, where: str = "markdown") -> tuple[list[dict[str, Any]], list[Problem]]:
    """Sections `## key: …` back into memories (namespace, created, updated required)."""
    memories, problems = [], []
    lines = text.split("\n")
    starts = _section_starts(lines)
    before = "\n".join(lines[:starts[0]] if starts else lines).strip()
    if before:
        problems.append(Problem("oams/markdown-shape", f"text before the first `## key:` section: {before[:60]!r}",
                                where))
    for n, (start, end) in enumerate(zip(starts, [*starts[1:], len(lines)]), start=1):
        head = lines[start][len("## key:"):]
        fields: dict[str, str] = {}
        rest = lines[start + 1:end]
        at = 0
        while at < len(rest) and (not rest[at].strip() or _MD_FIELD.fullmatch(rest[at].strip())):
            m = _MD_FIELD.fullmatch(rest[at].strip())
            if m:
                fields[m.group(1)] = m.group(2).strip()
            at += 1
        body = rest[at:]
        while body and not body[-1].strip():
            body.pop()
        if body and body[-1].strip() == "---":  # the section's own closing rule; one inside the value stays
            body.pop()
        missing = [f for f in ("namespace", "created", "updated") if f not in fields]
        if missing:
            problems.append(Problem("oams/markdown-shape", f"section {n} ({head.strip()!r}) lacks "
                                                           f"{', '.join('**' + f + ':**' for f in missing)}", where))
            continue
        memory: dict[str, Any] = {"key": head.strip(), "namespace": fields["namespace"].strip("`"),
                                  "value": "\n".join(body).strip("\n"), "created_at": fields["created"],
                                  "updated_at": fields["updated"]}
        if "source" in fields:
            memory["source_id"] = fields["source"]
        if "tags" in fields:
            memory["tags"] = [t.strip().strip("`") for t in fields["tags"].split(",") if t.strip()]
        problems.extend(Problem("oams/markdown-shape", p.message, f"{where} section {n}")
                        for p in memory_problems(memory) if p.requirement in ("oams/timestamps-utc",))
        memories.append(memory)
    return memories, problems


def new_memory(namespace: str, key: str, value: str, **extra: Any) -> dict[str, Any]:
    """A memory as a check sends it (timestamps left to the server unless given)."""
    return {"key": key, "namespace": namespace, "value": value, **extra}
