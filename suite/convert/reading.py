"""Reading a document of a format from a file (or stdin text) and writing one out.

JSON is read strictly (NaN and Infinity are not JSON); anything unreadable is InvalidInput naming
where. What else a format reads (JSON Lines, an empty text, a path read its own way: UMP's file
binding, a bundle folder) and how it writes is what its `Format` declares
(suite/convert/formats.py); whatever was read becomes the format's document form (`Format.normalize`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memconform.suite.convert import formats
from memconform.suite.convert.common import InvalidInput

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
    form = formats.get(fmt)
    if form.empty is not None:
        text = text.removeprefix("\ufeff")
        if not text.strip():
            return form.empty()
    return form.normalize(_lines_text(fmt, text) if form.jsonl else loads(fmt, text))


def read_bytes(fmt: str, data: bytes, where: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(fmt, [f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})"]) from None
    return read_text(fmt, text)


def read_path(fmt: str, path: str) -> Any:
    own = formats.get(fmt).read_path
    document = own(path) if own is not None else None
    if document is not None:
        return document
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput(fmt, [f"{path}: {exc.strerror or exc}"]) from None
    return read_bytes(fmt, data, path)


def dumps(fmt: str, document: Any, output: str | None = None) -> str:
    form = formats.get(fmt)
    if form.dumps is not None:
        return form.dumps(document, output)
    if form.jsonl and output and output.lower().endswith(_NDJSON):
        # JSON Lines as a store keeps them: one compact record a line, LF-terminated, UTF-8, in
        # document order; an envelope (nothing but the records) stays behind
        return "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
                       for m in form.records(document))
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
