"""The registry of checks. A check is written once, against a spec's client protocol, and runs
over every binding the target offers (DESIGN.md, idea 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import LEVELS, Keyword


@dataclass(frozen=True)
class Case:
    """One parametrization of a check, e.g. one golden vector."""

    id: str
    payload: Any = None
    requirements: tuple[str, ...] | None = None  # narrows or replaces the check's own list


@dataclass(frozen=True)
class Check:
    id: str  # stable, e.g. "ump/l0/md-roundtrip"
    spec: str
    title: str
    requirements: tuple[str, ...]
    bindings: tuple[str, ...]
    func: Callable[..., None] = field(compare=False, repr=False)
    cases: Callable[[Any], Iterable[Case]] | None = field(default=None, compare=False, repr=False)
    doc: str = ""

    def requirements_for(self, version: str, case: Case | None = None) -> tuple[catalogues.Requirement, ...]:
        cat = catalogues.load(self.spec)
        ids = case.requirements if case is not None and case.requirements else self.requirements
        return tuple(r for r in (cat.get(i) for i in ids) if r.applies_to(version))

    def level(self, version: str, case: Case | None = None) -> str:
        reqs = self.requirements_for(version, case)
        return max((r.level for r in reqs), key=LEVELS.index, default="L0")

    def keyword(self, version: str, case: Case | None = None) -> Keyword:
        reqs = self.requirements_for(version, case)
        return max((r.keyword for r in reqs), key=lambda k: k.strength, default=Keyword.MAY)


_REGISTRY: dict[str, Check] = {}


def check(id: str, *, spec: str, requirements: Iterable[str], bindings: Iterable[str],
          title: str, cases: Callable[[Any], Iterable[Case]] | None = None):
    """Register a check. The function receives a `CheckContext`."""

    def register(func: Callable[..., None]) -> Callable[..., None]:
        known = _REGISTRY.get(id)
        # The same function registering again is its module being imported afresh (pytester
        # drops modules between in-process runs); two functions with one id is a bug.
        if known is not None and (known.func.__module__, known.func.__qualname__) != (
                func.__module__, func.__qualname__):
            raise ValueError(f"check {id!r} registered twice")
        _REGISTRY[id] = Check(id=id, spec=spec, title=title, requirements=tuple(requirements),
                              bindings=tuple(bindings), func=func, cases=cases,
                              doc=(func.__doc__ or "").strip())
        return func

    return register


def all_checks(spec: str | None = None) -> tuple[Check, ...]:
    _import_shipped_checks()
    return tuple(c for c in _REGISTRY.values() if spec is None or c.spec == spec)


def checks_naming(spec: str, requirements: Iterable[str]) -> tuple[Check, ...]:
    """The checks of `spec` naming one of `requirements`: the only ones that can report them
    (runner.CheckContext.violation)."""
    wanted = set(requirements)
    return tuple(c for c in all_checks(spec) if wanted & set(c.requirements))


def _import_shipped_checks() -> None:
    # Importing the check modules registers them, in the specs' declared order (the collection
    # order, which pytest-xdist needs to be identical on every worker).
    import importlib

    from memconform.suite.specs import SPECS

    for spec in SPECS.values():
        importlib.import_module(spec.checks)
