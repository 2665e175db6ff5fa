"""Requirement catalogues: the data files `suite/<spec>/catalogue.toml` (DESIGN.md, idea 1)."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources

from memconform.suite.outcomes import LEVELS, Keyword
from memconform.suite.specs import NAMES

#: Specs the suite ships a catalogue for (suite/specs.py declares them).
SPECS = NAMES


@functools.lru_cache(maxsize=256)
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
    #: Who the requirement binds when that is narrower than "an implementation": "reader" (how a
    #: record is read, accepted or refused: no file an implementation emitted can show it) or
    #: "export" (rules for an export: a plain record dump is not bound by them). A file claim
    #: (`Claim`) leaves out the roles it names.
    role: str | None = None
    #: A conformance class of its own (`[[conformance_class]]`): what only a public implementation's
    #: choices demand. Such a requirement never counts toward a level; it is reported beside it.
    conformance_class: str | None = None
    #: The profiles of the spec bound by it (`profiles`); None: every profile.
    profiles: tuple[str, ...] | None = None

    def in_profile(self, profile: str | None) -> bool:
        return profile is None or self.profiles is None or profile in self.profiles

    def counts_for_level(self, profile: str | None = None) -> bool:
        return self.conformance_class is None and self.in_profile(profile)

    def applies_to_binding(self, binding: str) -> bool:
        return self.bindings is None or binding in self.bindings

    def applies_to(self, version: str) -> bool:
        v = version_key(version)
        if v < version_key(self.since):
            return False
        return self.until is None or v <= version_key(self.until)

    def cite(self) -> str:
        """How a failure names the requirement: a derived one says so (the text gives no keyword
        there, or not this detail; its reading is the note), a class of its own says it counts
        toward no level."""
        marks = [f"§{self.section}", self.keyword.value + (", derived" if self.derived else ""), self.level]
        if self.conformance_class:
            marks.append(f"class {self.conformance_class}, no level")
        return f"{self.id} ({', '.join(marks)})"


ROLES = ("reader", "export")


@dataclass(frozen=True)
class Claim:
    """A conformance claim of a subject that is not an implementation: what a file it emitted can
    show (`[[claim]]` in the catalogue). Reached when every testable MUST of `level` that binds to
    `binding`, except those of the roles it leaves out, passed, or was not exercised because the
    file holds nothing it is about (said in the level line)."""

    id: str
    title: str  # e.g. "L0 (emitted file)", shown where a level would be
    binding: str
    level: str
    file_as: str  # which `file:PATH?as=…` reading the claim is for: "export" or "dump"
    excludes_roles: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class ConformanceClass:
    """A class reported beside the level (e.g. "interoperates with the UMP reference implementation"):
    its requirements are the choices of one implementation the text does not make, so they never
    block a level the text gives."""

    id: str
    title: str
    summary: str


@dataclass(frozen=True)
class Catalogue:
    spec: str
    title: str
    versions: tuple[str, ...]
    claimed_levels: tuple[str, ...]
    requirements: tuple[Requirement, ...]
    claims: tuple[Claim, ...] = ()
    conformance_classes: tuple[ConformanceClass, ...] = ()
    #: The roles the spec names (OMF: memd, a plain consumer); a target is judged under one.
    profiles: tuple[str, ...] = ()
    default_profile: str | None = None
    #: What a level is called where the spec's levels are conformance classes (`level_names`)
    level_names: tuple[tuple[str, str], ...] = ()
    #: The only bindings a level's name is given on (`level_names_on`): OAMS's L1 class is an export,
    #: which only a file shows, so a live server reaching L1 is not called "L1 (export)".
    level_names_on: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def level_name(self, level: str | None, binding: str | None = None) -> str | None:
        if not level:
            return None
        only = dict(self.level_names_on).get(level)
        if binding is not None and only is not None and binding not in only:
            return None
        return dict(self.level_names).get(level)

    def claim_for(self, binding: str, file_as: str = "export") -> Claim | None:
        return next((c for c in self.claims if c.binding == binding and c.file_as == file_as), None)

    @functools.cached_property
    def by_id(self) -> dict[str, Requirement]:
        return {r.id: r for r in self.requirements}

    def get(self, requirement_id: str) -> Requirement:
        try:
            return self.by_id[requirement_id]
        except KeyError:
            raise KeyError(f"{requirement_id!r} is not in the {self.spec} catalogue") from None

    @functools.cached_property
    def _for_version(self) -> dict[tuple[str, str | None], tuple[Requirement, ...]]:
        return {}

    def for_version(self, version: str, binding: str | None = None) -> tuple[Requirement, ...]:
        # asked per result while a report is built: a catalogue is immutable, so each answer is kept
        found = self._for_version.get((version, binding))
        if found is None:
            found = self._for_version[(version, binding)] = tuple(
                r for r in self.requirements if r.applies_to(version)
                and (binding is None or r.applies_to_binding(binding)))
        return found


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
            role=_role(raw.get("role"), where),
            conformance_class=raw.get("class"),
            profiles=tuple(raw["profiles"]) if "profiles" in raw else None,
        ))
    classes = tuple(ConformanceClass(c["id"], c["title"], c.get("summary", ""))
                    for c in data.get("conformance_class", []))
    profiles = tuple(data.get("profiles", ()))
    default_profile = data.get("default_profile")
    if profiles and default_profile not in profiles:
        raise CatalogueError(f"{spec} catalogue: default_profile {default_profile!r} is not one of {profiles}")
    for r in reqs:
        if r.conformance_class is not None and r.conformance_class not in {c.id for c in classes}:
            raise CatalogueError(f"{spec} catalogue, {r.id}: class {r.conformance_class!r} has no [[conformance_class]]")
        if r.profiles is not None and not set(r.profiles) <= set(profiles):
            raise CatalogueError(f"{spec} catalogue, {r.id}: profiles {list(r.profiles)} not among {list(profiles)}")
    return Catalogue(
        spec=spec, title=data.get("title", spec.upper()),
        versions=tuple(data["versions"]), claimed_levels=tuple(data.get("claimed_levels", ())),
        requirements=tuple(reqs), claims=tuple(_claims(data.get("claim", []), spec)),
        conformance_classes=classes, profiles=profiles, default_profile=default_profile,
        level_names=_level_names(data.get("level_names", {}), spec),
        level_names_on=_level_names_on(data.get("level_names_on", {}), spec),
    )


def _level_names_on(raw: object, spec: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(raw, dict) or any(k not in LEVELS or not isinstance(v, list) or
                                        not all(isinstance(b, str) for b in v) for k, v in raw.items()):
        raise CatalogueError(f"{spec} catalogue: level_names_on maps levels to lists of bindings")
    return tuple((k, tuple(v)) for k, v in sorted(raw.items(), key=lambda item: LEVELS.index(item[0])))


def _level_names(raw: object, spec: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict) or any(k not in LEVELS or not isinstance(v, str) for k, v in raw.items()):
        raise CatalogueError(f"{spec} catalogue: level_names maps levels ({', '.join(LEVELS)}) to names")
    return tuple(sorted(raw.items(), key=lambda item: LEVELS.index(item[0])))


def _role(value: object, where: str) -> str | None:
    if value is not None and value not in ROLES:
        raise CatalogueError(f"{where}: role {value!r} is not one of {ROLES}")
    return value  # type: ignore[return-value]


def _claims(raw: list[dict], spec: str) -> list[Claim]:
    out = []
    for i, c in enumerate(raw):
        where = f"{spec} catalogue, claim #{i} ({c.get('id', '?')})"
        missing = [k for k in ("id", "title", "binding", "level", "as", "summary") if k not in c]
        if missing:
            raise CatalogueError(f"{where}: missing {', '.join(missing)}")
        if c["level"] not in LEVELS or c["as"] not in ("export", "dump"):
            raise CatalogueError(f"{where}: level {c['level']!r} / as {c['as']!r}")
        excludes = tuple(c.get("excludes_roles", ()))
        for role in excludes:
            _role(role, where)
        out.append(Claim(c["id"], c["title"], c["binding"], c["level"], c["as"], excludes, c["summary"]))
    return out


@functools.cache
def load(spec: str) -> Catalogue:
    text = resources.files(f"memconform.suite.{spec}").joinpath("catalogue.toml").read_bytes()
    return parse_catalogue(tomllib.loads(text.decode("utf-8")), spec)
