"""Reading a document of a format from a file (or stdin text) and writing one out.

JSON is read strictly (NaN and Infinity are not JSON); anything unreadable is InvalidInput naming
where. UMP documents from a path go through the file binding (`suite/ump/files.py`: `.ump.json`,
NDJSON, `.ump.md`, folders); from stdin, a JSON array or object, or NDJSON. OAMS: a JSON array of
memories (or one memory object), a JSONL store (one memory a line, OAMS §7), or an export bundle
folder (its memories.jsonl, the bundle judged by suite/oams/model.py first). memoturn: `{"memories": [...]}`
(an ingest body's or a recall answer's shape), a JSON array of memories, one memory, or JSONL (one
memory a line); whatever was read becomes the `{"memories": [...]}` document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memconform.suite.convert.common import InvalidInput
from memconform.suite.ump import files as ump_files

_NDJSON = (".ndjson", ".jsonl")


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(fmt: str, text: str, where: str = "") -> Any:
    try:
        return json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise InvalidInput(fmt, [f"{where or '/'}: nested too deeply to read"]) from None
    except json.JSONDecodeError as exc:
        # `where` is a line of NDJSON: the decoder's line is then always 1, its column is what tells
        at = f"{where}, column {exc.colno}" if where else f"line {exc.lineno}, column {exc.colno}"
        raise InvalidInput(fmt, [f"{at}: not JSON ({exc.msg})"]) from None
    except ValueError as exc:  # NaN, Infinity
        raise InvalidInput(fmt, [f"{where or '/'}: not JSON ({exc})"]) from None


def _lines_text(fmt: str, text: str) -> Any:
    stripped = text.lstrip()
    try:
        return loads(fmt, text)
    except InvalidInput:
        if not stripped.startswith("{"):
            raise
    # Several lines each holding one record: NDJSON / JSONL.
    records = []
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip():
            records.append(loads(fmt, line, f"line {n}"))
    return records


def read_text(fmt: str, text: str) -> Any:
    if fmt in ("oams", "memoturn"):
        text = text.removeprefix("\ufeff")
        if not text.strip():
            # an empty JSONL store holds no memory: a valid, empty document
            return [] if fmt == "oams" else {"memories": []}
    if fmt == "memoturn":
        from memconform.suite.convert.memoturnside import normalized

        return normalized(_lines_text(fmt, text))
    return _lines_text(fmt, text) if fmt in ("ump", "oams") else loads(fmt, text)


def read_bytes(fmt: str, data: bytes, where: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(fmt, [f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})"]) from None
    return read_text(fmt, text)


def read_path(fmt: str, path: str) -> Any:
    if fmt == "ump":
        loaded = ump_files.load(path)
        if loaded.problems:
            raise InvalidInput(fmt, [f"{p.source}{' ' + p.pointer if p.pointer else ''}: {p.message} ({p.requirement})"
                                     for p in loaded.problems])
        return [located.record for located in loaded.records]
    if fmt == "oams" and Path(path).is_dir():
        from memconform.suite.oams import model as oams_model

        bundle = oams_model.read_bundle(Path(path))
        if bundle.problems:
            raise InvalidInput(fmt, [f"{p.where + ': ' if p.where else ''}{p.message} ({p.requirement})"
                                     for p in bundle.problems])
        return bundle.memories
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput(fmt, [f"{path}: {exc.strerror or exc}"]) from None
    return read_bytes(fmt, data, path)


def dumps(fmt: str, document: Any, output: str | None = None) -> str:
    if fmt == "ump":
        if output and output.lower().endswith(_NDJSON):
            return ump_files.dump_ndjson(document)
        return ump_files.dump_json(document)
    if fmt in ("oams", "memoturn") and output and output.lower().endswith(_NDJSON):
        # OAMS §7's JSONL: one compact memory a line, LF-terminated, UTF-8 (in document order); a
        # memoturn JSONL is the same, and leaves the envelope (nothing but memories) behind
        records = document["memories"] if fmt == "memoturn" else document
        return "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
                       for m in records)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
