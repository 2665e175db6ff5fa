"""The file binding (UMP §4.3): reading and writing ``*.ump.json``, NDJSON and ``*.ump.md``.

:func:`load` never raises because of what a file contains (or that it is missing): every problem
becomes a :class:`FileProblem` and loading goes on with the next record or file.

* ``.ump.json`` / ``.json``: a JSON array of records, or one record object (the reference implementation
  accepts a single object on read). A ``.json`` file that is not one JSON document but several lines that
  each hold one is read as NDJSON (§4.3: "or NDJSON for streaming").
* ``.ndjson`` / ``.jsonl`` / ``.ump.ndjson``: one record per line; blank lines are skipped. Lines are split
  on ``\\n`` only (U+2028, NEL etc. may occur raw inside JSON strings).
* ``.ump.md``: see :mod:`.markdown`.
* A folder: every such file below it, recursively, in sorted order; names starting with ``.`` (e.g. a
  ``.well-known/ump.json`` discovery manifest, which is not a record file) are skipped.

JSON is read strictly: ``NaN``/``Infinity`` are refused; a duplicate key is reported as a problem (the last
value wins, as in JavaScript) and the record is still returned.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .markdown import ProjectionError, from_markdown, to_markdown

__all__ = ["load", "Located", "FileProblem", "Loaded", "dump_json", "dump_ndjson", "write_md_folder"]

REQ_JSON = "ump/file-json"
REQ_MD = "ump/file-md"

_NDJSON_SUFFIXES = (".ump.ndjson", ".ndjson", ".jsonl")
_JSON_SUFFIXES = (".ump.json", ".json")
_MD_SUFFIXES = (".ump.md",)


@dataclass(frozen=True)
class Located:
    source: str
    pointer: str
    format: Literal["json", "ndjson", "md"]
    record: Any


@dataclass(frozen=True)
class FileProblem:
    source: str
    pointer: str
    message: str
    requirement: str


@dataclass(frozen=True)
class Loaded:
    records: tuple[Located, ...] = ()
    problems: tuple[FileProblem, ...] = ()
    #: every file read (an export of zero records is still an export: `[]` is a JSON array of records)
    sources: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------------
# reading


def _kind(name: str) -> str | None:
    low = name.lower()
    if low.endswith(_MD_SUFFIXES):
        return "md"
    if low.endswith(_NDJSON_SUFFIXES):
        return "ndjson"
    if low.endswith(_JSON_SUFFIXES):
        return "json"
    return None


class _Duplicates:
    def __init__(self) -> None:
        self.keys: list[str] = []

    def hook(self, pairs: list[tuple[str, Any]]) -> dict:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                self.keys.append(k)
            out[k] = v
        return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def _loads(text: str) -> tuple[Any, list[str]]:
    dup = _Duplicates()
    value = json.loads(text, object_pairs_hook=dup.hook, parse_constant=_no_constants)
    return value, dup.keys


def _json_error(exc: Exception, line_offset: int = 0) -> tuple[str, str]:
    """(pointer, message) for a JSON parse error."""
    if isinstance(exc, json.JSONDecodeError):
        line = exc.lineno + line_offset
        return f"line {line}", f"invalid JSON at line {line}, column {exc.colno}: {exc.msg}"
    return "", f"invalid JSON: {exc}"


def _show_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def _read_text(path: Path, source: str, req: str) -> tuple[str | None, list[FileProblem]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [FileProblem(source, "", f"cannot read the file: {exc.strerror or exc}", req)]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [FileProblem(source, f"line {line}", f"not UTF-8: {exc.reason} at byte {exc.start}", req)]


def _load_ndjson(text: str, source: str, records: list, problems: list) -> None:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            value, dups = _loads(line)
        except (json.JSONDecodeError, ValueError) as exc:
            col = f", column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            problems.append(FileProblem(source, where, f"invalid JSON on line {number}{col}: {msg}", REQ_JSON))
            continue
        except RecursionError:
            problems.append(FileProblem(source, where, "JSON nested too deeply", REQ_JSON))
            continue
        for k in dups:
            problems.append(FileProblem(source, where, f"duplicate key {k!r} (the last value wins)", REQ_JSON))
        if isinstance(value, dict):
            records.append(Located(source, where, "ndjson", value))
        else:
            problems.append(FileProblem(source, where, f"line {number} holds {_show_type(value)}; a record is a JSON object", REQ_JSON))


def _looks_like_ndjson(text: str) -> bool:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2:
        return False
    try:
        first, _ = _loads(lines[0])
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict)


def _load_json(text: str, source: str, records: list, problems: list) -> None:
    try:
        value, dups = _loads(text)
    except (json.JSONDecodeError, ValueError) as exc:
        if _looks_like_ndjson(text):
            _load_ndjson(text, source, records, problems)
            return
        pointer, message = _json_error(exc)
        problems.append(FileProblem(source, pointer, message, REQ_JSON))
        return
    except RecursionError:
        problems.append(FileProblem(source, "", "JSON nested too deeply", REQ_JSON))
        return
    for k in dups:
        problems.append(FileProblem(source, "", f"duplicate key {k!r} (the last value wins)", REQ_JSON))
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                records.append(Located(source, f"/{i}", "json", item))
            else:
                problems.append(FileProblem(source, f"/{i}", f"element {i} is {_show_type(item)}; a record is a JSON object", REQ_JSON))
    elif isinstance(value, dict):
        records.append(Located(source, "", "json", value))
    else:
        problems.append(FileProblem(source, "", f"the file holds {_show_type(value)}; expected an array of records or one record object", REQ_JSON))


def _load_md(text: str, source: str, records: list, problems: list) -> None:
    try:
        record = from_markdown(text, source=source)
    except ProjectionError as exc:
        pointer = exc.pointer or (f"line {exc.line}" if exc.line is not None else "")
        problems.append(FileProblem(source, pointer, exc.message, REQ_MD))
        return
    except RecursionError:
        problems.append(FileProblem(source, "", "front matter nested too deeply", REQ_MD))
        return
    records.append(Located(source, "", "md", record))


def _load_file(path: Path, source: str, records: list, problems: list) -> None:
    kind = _kind(path.name)
    req = REQ_MD if kind == "md" else REQ_JSON
    text, errs = _read_text(path, source, req)
    problems.extend(errs)
    if text is None:
        return
    if kind is None:  # a file named explicitly, of no known kind: sniff
        kind = "md" if text.startswith("---") else "json"
    {"md": _load_md, "ndjson": _load_ndjson, "json": _load_json}[kind](text, source, records, problems)


def load(path: str | os.PathLike) -> Loaded:
    """Read records from a file or folder (see the module docstring); never raises on content."""
    given = os.fspath(path)
    p = Path(given)
    records: list[Located] = []
    problems: list[FileProblem] = []
    sources: list[str] = []
    if p.is_dir():
        found: list[tuple[str, Path]] = []
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in files:
                if name.startswith(".") or _kind(name) is None:
                    continue
                full = Path(root) / name
                found.append((os.path.join(given, os.path.relpath(full, p)), full))
        for source, full in sorted(found, key=lambda t: t[0]):
            _load_file(full, source, records, problems)
            sources.append(source)
    elif p.exists():
        _load_file(p, given, records, problems)
        sources.append(given)
    else:
        req = REQ_MD if _kind(p.name) == "md" else REQ_JSON
        problems.append(FileProblem(given, "", "no such file or folder", req))
    return Loaded(tuple(records), tuple(problems), tuple(sources))


# ---------------------------------------------------------------------------------------------------
# writing


def dump_json(records: Iterable[Mapping[str, Any]]) -> str:
    """A ``*.ump.json`` document: a JSON array, indent 2, non-ASCII kept."""
    return json.dumps(list(records), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


_LINE_BREAKS_IN_STRINGS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dump_ndjson(records: Iterable[Mapping[str, Any]]) -> str:
    """NDJSON: one compact record per line. U+2028/U+2029/NEL are escaped so line splitters that treat
    them as line breaks (Python's ``str.splitlines``) still see one record per line."""
    out = []
    for r in records:
        line = json.dumps(r, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        for raw, esc in _LINE_BREAKS_IN_STRINGS.items():
            line = line.replace(raw, esc)
        out.append(line + "\n")
    return "".join(out)


def _file_stem(record: Any, index: int) -> str:
    rid = record.get("id") if isinstance(record, Mapping) else None
    if isinstance(rid, str) and rid:
        stem = rid[len("urn:ump:"):] if rid.startswith("urn:ump:") else rid
        # Like the reference implementation's Markdown store: only [a-z2-7] survive, the rest become '-'.
        stem = "".join(c if c in "abcdefghijklmnopqrstuvwxyz234567" else "-" for c in stem)
    else:
        stem = ""
    if not stem.strip("-"):
        stem = f"record-{index}"
    if len(stem) > 150:
        stem = stem[:120] + "-" + hashlib.sha256(stem.encode()).hexdigest()[:16]
    return stem


def write_md_folder(records: Iterable[Mapping[str, Any]], folder: str | os.PathLike,
                    front_matter: str = "json") -> list[Path]:
    """Write one ``<id-suffix>.ump.md`` per record into ``folder`` (created if needed).

    File names keep only ``[a-z2-7]`` of the id after ``urn:ump:`` (anything else becomes ``-``), so no id
    can escape the folder; clashes get ``-2``, ``-3``…. Front matter is JSON by default because the
    reference implementation's reader parses only JSON; pass ``front_matter="yaml"`` for YAML.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    used: set[str] = set()
    for index, record in enumerate(records):
        text = to_markdown(record, front_matter=front_matter)
        stem = _file_stem(record, index)
        name, n = stem, 1
        while name in used:
            n += 1
            name = f"{stem}-{n}"
        used.add(name)
        path = target / f"{name}.ump.md"
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written
