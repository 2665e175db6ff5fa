"""Read memconform's golden vectors (package data of ``memconform.vectors``).

``cases(spec, version)`` returns every case that applies to ``version``; ``files()`` lists every
vector data file (what ``vectors/MANIFEST.json`` signs). The case format is described in
``vectors/README.md`` and ``docs/contracts.md``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["VectorCase", "cases", "files", "version_key"]

PACKAGE = "memconform.vectors"
_PAYLOAD_KEYS = ("input", "input_json", "input_md")


@dataclass(frozen=True)
class VectorCase:
    """One golden vector.

    ``input`` is a record (dict) for ``kind == "record"``, the raw JSON text for ``"canonical"``
    and the file text for ``"markdown"``. ``file`` is the case file's path relative to
    ``vectors/`` (for example ``ump/1.0/records-valid.json``)."""

    id: str
    title: str
    requirements: tuple[str, ...]
    kind: str
    since: str
    until: str | None
    input: Any
    expect: dict
    source: str
    file: str

    def applies_to(self, version: str) -> bool:
        """True when ``since <= version <= until`` (no ``until``: open-ended)."""
        v = version_key(version)
        if v < version_key(self.since):
            return False
        return self.until is None or v <= version_key(self.until)


def version_key(version: str) -> tuple[int, ...]:
    """``"1.0"`` -> ``(1, 0)``, for ordering ``major.minor`` versions."""
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        raise ValueError(f"not a major.minor version: {version!r}") from None


def _root() -> Traversable:
    return resources.files(PACKAGE)


def _walk(node: Traversable, prefix: str) -> list[str]:
    out: list[str] = []
    for child in node.iterdir():
        name = child.name
        if name.startswith(".") or name == "__pycache__":
            continue
        path = f"{prefix}{name}"
        if child.is_dir():
            out.extend(_walk(child, path + "/"))
        elif child.is_file():
            out.append(path)
    return out


def files() -> list[str]:
    """Relative paths (``/``-separated, under ``vectors/``) of every vector data file, sorted:
    everything under ``<spec>/`` folders (case files and the third-party sources they quote)."""
    root = _root()
    out: list[str] = []
    for child in root.iterdir():
        if child.is_dir() and not child.name.startswith((".", "_")):
            out.extend(_walk(child, child.name + "/"))
    return sorted(out)


@lru_cache(maxsize=None)
def _read(path: str) -> dict:
    node = _root()
    for part in path.split("/"):
        node = node / part
    return json.loads(node.read_text(encoding="utf-8"))


def _case_files(spec: str) -> list[str]:
    """Case files of ``spec``: ``<spec>/<version or common>/*.json`` (not the sources below them)."""
    return [p for p in files() if p.startswith(spec + "/") and p.count("/") == 2 and p.endswith(".json")]


def cases(spec: str = "ump", version: str | None = None) -> tuple[VectorCase, ...]:
    """Every case of ``spec`` (in file order), or only those that apply to ``version``.

    A case in ``<spec>/<v>/`` applies only to ``v`` (and within its own range); a case in
    ``<spec>/common/`` applies wherever its ``versions`` range covers the version."""
    out: list[VectorCase] = []
    for path in _case_files(spec):
        folder = path.split("/")[1]
        if version is not None and folder != "common" and version_key(folder) != version_key(version):
            continue
        doc = _read(path)
        for raw in doc["cases"]:
            payload_keys = [k for k in _PAYLOAD_KEYS if k in raw]
            if len(payload_keys) != 1:
                raise ValueError(f"{path}: case {raw.get('id')!r} needs exactly one of {_PAYLOAD_KEYS}")
            versions = raw["versions"]
            case = VectorCase(
                id=raw["id"],
                title=raw["title"],
                requirements=tuple(raw["requirements"]),
                kind=raw["kind"],
                since=versions["since"],
                until=versions.get("until"),
                input=copy.deepcopy(raw[payload_keys[0]]),
                expect=copy.deepcopy(raw["expect"]),
                source=raw["source"],
                file=path,
            )
            if version is None or case.applies_to(version):
                out.append(case)
    return tuple(out)
