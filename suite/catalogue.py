"""Requirement catalogues: the data files `suite/<spec>/catalogue.toml` (DESIGN.md, idea 1)."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources

from memconform.suite.outcomes import LEVELS, Keyword

#: Specs the suite ships a catalogue for, with the human title used in summaries.
SPECS = ("ump", "upp", "omf")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class Requirement:
    id: str
    spec: str
    section: str
    level: str
    keyword: Keyword
    since: str
    until: str | None
    summary: str
    quote: str
    note: str | None = None
    derived: bool = False
    testable: bool = True
    #: The bindings a requirement can be judged on; None means every binding. A level on a
    #: binding is computed from the MUSTs that bind there ("UMP 1.0 / L3 / http").
    bindings: tuple[str, ...] | None = None

    def applies_to_binding(self, binding: str) -> bool:
        return self.bindings is None or binding in self.bindings

    def applies_to(self, version: str) -> bool:
        v = version_key(version)
        if v < version_key(self.since):
            return False
        return self.until is None or v <= version_key(self.until)

    def cite(self) -> str:
        return f"{self.id} (§{self.section}, {self.keyword.value}, {self.level})"


@dataclass(frozen=True)
class Catalogue:
    spec: str
    title: str
    versions: tuple[str, ...]
    claimed_levels: tuple[str, ...]
    requirements: tuple[Requirement, ...]

    @functools.cached_property
    def by_id(self) -> dict[str, Requirement]:
        return {r.id: r for r in self.requirements}

    def get(self, requirement_id: str) -> Requirement:
        try:
            return self.by_id[requirement_id]
        except KeyError:
            raise KeyError(f"{requirement_id!r} is not in the {self.spec} catalogue") from None

    def for_version(self, version: str, binding: str | None = None) -> tuple[Requirement, ...]:
        return tuple(r for r in self.requirements if r.applies_to(version)
                     and (binding is None or r.applies_to_binding(binding)))


class CatalogueError(ValueError):
    pass


def parse_catalogue(data: dict, spec: str) -> Catalogue:
    reqs = []
    seen: set[str] = set()
    for i, raw in enumerate(data.get("requirement", [])):
        where = f"{spec} catalogue, requirement #{i} ({raw.get('id', '?')})"
        missing = [k for k in ("id", "section", "level", "keyword", "since", "summary", "quote")
                   if k not in raw]
        if missing:
            raise CatalogueError(f"{where}: missing {', '.join(missing)}")
        if raw["id"] in seen:
            raise CatalogueError(f"{where}: duplicate id")
        seen.add(raw["id"])
        if raw["level"] not in LEVELS:
            raise CatalogueError(f"{where}: level {raw['level']!r} is not one of {LEVELS}")
        try:
            keyword = Keyword(raw["keyword"])
        except ValueError:
            raise CatalogueError(f"{where}: keyword {raw['keyword']!r}") from None
        reqs.append(Requirement(
            id=raw["id"], spec=spec, section=str(raw["section"]), level=raw["level"],
            keyword=keyword, since=str(raw["since"]), until=raw.get("until"),
            summary=raw["summary"], quote=raw["quote"], note=raw.get("note"),
            derived=bool(raw.get("derived", False)), testable=bool(raw.get("testable", True)),
            bindings=tuple(raw["bindings"]) if "bindings" in raw else None,
        ))
    return Catalogue(
        spec=spec, title=data.get("title", spec.upper()),
        versions=tuple(data["versions"]), claimed_levels=tuple(data.get("claimed_levels", ())),
        requirements=tuple(reqs),
    )


@functools.cache
def load(spec: str) -> Catalogue:
    text = resources.files(f"memconform.suite.{spec}").joinpath("catalogue.toml").read_bytes()
    return parse_catalogue(tomllib.loads(text.decode("utf-8")), spec)
