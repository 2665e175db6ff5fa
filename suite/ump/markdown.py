"""The ``*.ump.md`` Markdown projection (UMP §6.3).

Layout written here (with ``front_matter="json"`` byte-compatible with the public reference
implementation's ``toMarkdown``, up to how Python and JavaScript spell some floats, e.g. 1e-07/1e-7)::

    ---
    <front matter: the record without body.text>
    ---
    <one blank line>
    <body.text>
    <one newline>

What the public reference implementation (TypeScript, ``edihasaj/universal-memory-protocol``,
``src/bindings/file.ts``; read through the code search index) does:

* ``toMarkdown`` writes ``---\\n`` + ``JSON.stringify(meta, null, 2)`` + ``\\n---\\n\\n`` + ``body.text`` +
  ``\\n``: the front matter is **JSON** ("a compact JSON block, valid YAML subset, so we avoid a YAML
  dependency"), not the YAML of the spec's example. One record per file; its Markdown-folder store names
  files ``<id without urn:ump:, other chars → '-'>.ump.md``.
* ``fromMarkdown`` requires the text to start with ``---``, takes the front matter up to the first
  ``\\n---``, ``JSON.parse``s it (YAML front matter like the spec's example makes it throw), drops leading
  blank lines of the body and *trims all trailing whitespace* (so it is lossy for texts with leading blank
  lines or trailing whitespace), and puts the result in ``body.text``. An older revision dropped the whole
  ``body`` (losing ``body.structured``); the current one writes the record without ``body.text``.

Our reader accepts both JSON front matter (what the reference writes; parsed with :mod:`json` so numbers
like ``1e+21`` stay numbers) and YAML front matter (what the spec shows), LF or CRLF files and a BOM. It
is exact where the reference trims: exactly one blank line after the closing ``---`` is skipped and
exactly one trailing newline is removed, so any text round-trips. The opening ``---`` line decides the
file's line ending: in a CRLF file the delimiters, the blank line and the final newline are CRLF and the
body keeps its inner CRLFs (the vector ``ump/common/markdown/crlf-line-endings``); in an LF file a
``\\r`` in the body is body text. YAML is read with a SafeLoader that keeps timestamps and ``=`` as strings and reads YAML 1.2 exponent floats (``1e-3``) as numbers; the writer
quotes every string a reader could take for something else (both directions use the same resolvers).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import yaml

from .canonical import json_pointer

__all__ = ["to_markdown", "from_markdown", "body_readings", "ProjectionError"]


class ProjectionError(ValueError):
    """A ``.ump.md`` text (or a record to project) that cannot be read (written) losslessly."""

    def __init__(self, message: str, *, source: str = "<string>", line: int | None = None, pointer: str = "") -> None:
        self.source = source
        self.line = line
        self.pointer = pointer
        self.message = message
        where = source + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" + (f" (at {pointer})" if pointer else ""))


# ---------------------------------------------------------------------------------------------------
# YAML dialect

_FLOAT_1_2 = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_FLOAT_FIRST = list("-+.0123456789")
_DROP_ON_READ = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value"}


def _resolvers_without(resolvers: dict, drop: set[str]) -> dict:
    return {ch: [(tag, rx) for tag, rx in entries if tag not in drop] for ch, entries in resolvers.items()}


class _Loader(yaml.SafeLoader):
    """SafeLoader: timestamps and ``=`` stay strings; YAML 1.2 exponent floats are floats; no duplicate keys."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping", node.start_mark,
                            f"found duplicate key {key_node.value!r}", key_node.start_mark,
                        )
                    seen[key] = True
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = _resolvers_without(yaml.SafeLoader.yaml_implicit_resolvers, _DROP_ON_READ)
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_1_2, _FLOAT_FIRST)


class _Dumper(yaml.SafeDumper):
    """SafeDumper that also quotes YAML 1.2 exponent floats written as strings (``"1e3"``)."""


_Dumper.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeDumper.yaml_implicit_resolvers.items()}
_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_1_2, _FLOAT_FIRST)

# YAML treats NEL, LS and PS as line breaks; PyYAML writes them raw into plain/single-quoted scalars with
# allow_unicode, where a reader folds them away. Double quotes make the emitter escape them (\N \L \P).
_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, value: str):
    style = '"' if any(ch in value for ch in _YAML_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)

_DELIMITER = re.compile(r"^---[ \t]*\r?$", re.M)
_OPENING = re.compile(r"---[ \t]*(?:\r?\n|\Z)")


# ---------------------------------------------------------------------------------------------------
# JSON-compatibility


def _plain_json(value: Any, path: list, source: str, line: int | None, _open: frozenset = frozenset()) -> Any:
    """A fresh copy of ``value`` if it is plain JSON data, else ProjectionError. YAML can also build sets,
    bytes, non-string keys, values shared between two places (aliases) and cycles; the copy unshares."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ProjectionError(f"{value!r} is not a JSON number", source=source, line=line, pointer=json_pointer(path))
        return value
    if isinstance(value, (Mapping, list)):
        if id(value) in _open:
            raise ProjectionError("a YAML alias makes this value contain itself; JSON has no cycles",
                                  source=source, line=line, pointer=json_pointer(path))
        _open = _open | {id(value)}
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ProjectionError(f"key {k!r} is not a string (JSON object keys are strings)",
                                      source=source, line=line, pointer=json_pointer(path))
            out[k] = _plain_json(v, [*path, k], source, line, _open)
        return out
    if isinstance(value, list):
        return [_plain_json(v, [*path, i], source, line, _open) for i, v in enumerate(value)]
    raise ProjectionError(f"{type(value).__name__} value has no JSON equivalent", source=source, line=line,
                          pointer=json_pointer(path))


# ---------------------------------------------------------------------------------------------------
# writing


def to_markdown(record: Mapping[str, Any], front_matter: str = "yaml") -> str:
    """Project a record to ``.ump.md`` text; ``front_matter`` is ``"yaml"`` (block style) or ``"json"``."""
    if front_matter not in ("yaml", "json"):
        raise ValueError(f"front_matter must be 'yaml' or 'json', not {front_matter!r}")
    src = "<record>"
    if not isinstance(record, Mapping):
        raise ProjectionError("a record is a JSON object", source=src)
    body = record.get("body")
    if not isinstance(body, Mapping) or not isinstance(body.get("text"), str):
        raise ProjectionError("the Markdown body is body.text, which must be a string", source=src, pointer="/body/text")
    _plain_json(record, [], src, None)
    meta: dict[str, Any] = {}
    for key, value in record.items():
        if key == "body":
            rest = {k: v for k, v in body.items() if k != "text"}
            if rest:
                meta["body"] = rest
        else:
            meta[key] = value
    if front_matter == "json":
        fm = json.dumps(meta, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    else:
        fm = yaml.dump(meta, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                       default_flow_style=False, width=2**30) if meta else "{}\n"
    if _DELIMITER.search(fm):  # pragma: no cover - both dumpers indent or quote such lines
        raise ProjectionError("front matter would contain a '---' line", source=src)
    return f"---\n{fm}---\n\n{body['text']}\n"


# ---------------------------------------------------------------------------------------------------
# reading


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(fm: str, source: str) -> Any:
    try:
        return json.loads(fm, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ProjectionError(f"front matter is not valid JSON: {exc.msg} (column {exc.colno})",
                              source=source, line=exc.lineno + 1) from exc
    except ValueError as exc:
        raise ProjectionError(f"front matter is not valid JSON: {exc}", source=source) from exc


def _parse_yaml(fm: str, source: str) -> Any:
    try:
        return yaml.load(fm, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else None
        what = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ProjectionError(f"front matter is not valid YAML: {what}", source=source, line=line) from exc
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise ProjectionError(f"front matter is not valid YAML: {exc}", source=source) from exc


def _parse_front_matter(fm: str, source: str) -> dict:
    if fm.strip().startswith("{"):
        try:
            meta = _parse_json(fm, source)
        except ProjectionError as json_error:
            try:
                meta = _parse_yaml(fm, source)  # a YAML flow mapping is fine too
            except ProjectionError:
                raise json_error from None
    else:
        meta = _parse_yaml(fm, source)
    if not isinstance(meta, dict):
        found = "empty" if meta is None else f"a {type(meta).__name__}"
        raise ProjectionError(f"front matter must be a mapping (the record's members), found {found}",
                              source=source, line=2)
    return _plain_json(meta, [], source, None)


def from_markdown(text: str, source: str = "<string>", *, keep_final_newline: bool = False) -> dict:
    """Read one record from ``.ump.md`` text (JSON or YAML front matter, LF or CRLF).

    §6.3 says only "The body is Markdown": it fixes no framing of the body's end. The default
    reading takes one final newline off (the newline a writer adds after the body, as the one
    written here and the public implementation's do); ``keep_final_newline`` reads the body bytes
    as they are (a writer that adds nothing). A checker comparing a projection accepts either
    (`body_readings`)."""
    if not isinstance(text, str):
        raise ProjectionError("expected text", source=source)
    if text.startswith("\ufeff"):
        text = text[1:]
    opening = _OPENING.match(text)
    if opening is None:
        raise ProjectionError("missing front matter: a .ump.md file starts with a line '---'", source=source, line=1)
    # The opening line decides the file's line ending; a CRLF file keeps the CRLFs inside its body.
    newline = "\r\n" if opening.group(0).endswith("\r\n") else "\n"
    closing = _DELIMITER.search(text, opening.end()) if opening.group(0).endswith("\n") else None
    if closing is None:
        raise ProjectionError("unterminated front matter: the '---' on line 1 has no closing '---' line",
                              source=source, line=1)
    fm = text[opening.end():closing.start()]
    rest = text[closing.end():]
    for ending in ("\r\n", "\n"):  # the line ending of the closing '---' line
        if rest.startswith(ending):
            rest = rest[len(ending):]
            break
    if rest.startswith(newline):
        rest = rest[len(newline):]  # the one blank line between front matter and body
    body_text = rest[: -len(newline)] if rest.endswith(newline) and not keep_final_newline else rest

    try:
        meta = _parse_front_matter(fm, source)
    except RecursionError:
        raise ProjectionError("front matter is nested too deeply", source=source, line=2) from None

    body = meta.get("body", {})
    if not isinstance(body, dict):
        raise ProjectionError("body in the front matter must be a mapping (body.text is the Markdown body)",
                              source=source, pointer="/body")
    if "text" in body and body["text"] != body_text:
        raise ProjectionError("front matter carries a body.text that differs from the Markdown body",
                              source=source, pointer="/body/text")
    new_body = {"text": body_text, **{k: v for k, v in body.items() if k != "text"}}

    record: dict[str, Any] = {}
    if "body" in meta:
        for key, value in meta.items():
            record[key] = new_body if key == "body" else value
    else:
        placed = False
        for key, value in meta.items():
            record[key] = value
            if key == "kind":
                record["body"] = new_body
                placed = True
        if not placed:
            record["body"] = new_body
    return record


def body_readings(text: str, source: str = "<string>") -> list[dict]:
    """Every record ``text`` may mean under §6.3's unstated body framing: the default reading (one
    final newline taken off as the writer's) and, when the file's body ends with a newline, the
    exact one (that newline is the body's own). One record when both readings agree.

    A CRLF file may also be an LF file written with the platform's line endings (git's autocrlf
    checks a "git-friendly" file out so on Windows; CommonMark and YAML read CR LF as one line
    ending): each reading is then also offered with the body's CR LF taken as LF."""
    first = from_markdown(text, source)
    try:
        exact = from_markdown(text, source, keep_final_newline=True)
    except ProjectionError:  # a front-matter body.text that names the default reading
        exact = first
    out = [first] if exact == first else [first, exact]
    for rec in list(out):
        body = rec.get("body")
        if isinstance(body, dict) and isinstance(body.get("text"), str) and "\r\n" in body["text"]:
            folded = dict(rec, body=dict(body, text=body["text"].replace("\r\n", "\n")))
            if folded not in out:
                out.append(folded)
    return out
