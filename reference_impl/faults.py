"""Fault switches of the reference implementation (DESIGN.md, idea 5).

Each fault is one deliberate violation. `breaks` lists exactly the requirements the suite must
report as failed against it, and nothing else; the project's own tests hold the suite to that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from memconform.suite.specs import SPECS as _SPECS


@dataclass(frozen=True)
class Fault:
    name: str
    spec: str
    description: str
    breaks: tuple[str, ...]
    since: str = "0.1"  # first spec version the fault applies to
    #: The bindings on which the breaks show: ("file",) for faults of the UMP file binding (L0).
    #: None means every live binding the reference server offers for the fault's spec (UMP: http
    #: and mcp; UPP: http and stdio): a fault of the engine itself, seen through either binding.
    bindings: tuple[str, ...] | None = None
    #: True for a fault only a round trip between two implementations shows (suite/interop): the
    #: single-target suite has nothing to compare it against and passes it, so the fault tests
    #: (tests/harness/test_faults.py) leave it out; the interop tests (tests/interop/) prove that the
    #: round trip reports exactly its `breaks`.
    interop_only: bool = False
    #: True for a fault only a sequence of operations shows (issue 16: a longer chain, more records
    #: than a scenario places, a generated payload): the state machines (`<spec>/stateful/*`) must
    #: catch it within the default effort; tests/harness/test_stateful_faults.py proves that (and
    #: records whether the scripted checks alone see it), so test_faults.py leaves it out.
    stateful: bool = False
    #: How the fault is made, apart from the right implementation (Bowtie's miniatures): decision
    #: points of the spec's policy set to a value the text forbids (`reference_impl/<spec>/policy.py`)…
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: …and/or operations wrapped: operation name -> wrap(implementation, original) -> the wrong
    #: operation. The service itself then holds no branch on the fault's name.
    wraps: Mapping[str, Callable[[Any, Callable[..., Any]], Callable[..., Any]]] = field(default_factory=dict)

    def applies_to(self, spec: str, version: str) -> bool:
        from memconform.suite.catalogue import version_key

        return spec == self.spec and version_key(version) >= version_key(self.since)


#: Each spec's fault tables (suite/specs.py), imported only when a fault of that spec is asked for:
#: the UMP tables import the whole UMP server, which a `memconform omf …` command never needs.
_TABLES = {name: tuple(spec.faults) for name, spec in _SPECS.items()}
_LOADED: dict[str, dict[str, Fault]] = {}


def of_spec(spec: str) -> dict[str, Fault]:
    """The faults of one spec, by name."""
    if spec not in _LOADED:
        import importlib

        _LOADED[spec] = {f.name: f for table in _TABLES.get(spec, ())
                         for f in getattr(importlib.import_module(table.partition(":")[0]), table.partition(":")[2])}
    return _LOADED[spec]


class _AllFaults(Mapping[str, Fault]):
    """Every fault by name, over the spec tables (each loaded on first use)."""

    def __getitem__(self, name: str) -> Fault:
        for spec in _TABLES:
            found = of_spec(spec).get(name)
            if found is not None:
                return found
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (name for spec in _TABLES for name in of_spec(spec))

    def __len__(self) -> int:
        return sum(len(of_spec(spec)) for spec in _TABLES)


FAULTS: Mapping[str, Fault] = _AllFaults()


def deviate(policy: Any, spec: str, fault: str | None, variants: tuple[str, ...] = ()) -> Any:
    """The spec's policy as a reference implementation runs it: its defaults, the named variants'
    readings, then the fault's overrides (a fault and a variant may not set one point two ways)."""
    import dataclasses

    from memconform.reference_impl import variants as switches

    from memconform.reference_impl.consulted import consulted

    policy = switches.apply(policy, spec, variants)
    f = of_spec(spec).get(fault) if fault else None
    if f is None or f.spec != spec or not f.overrides:
        return consulted(policy, spec)
    for point in f.overrides:
        if not hasattr(policy, point):
            raise ValueError(f"fault {f.name!r} sets {point!r}, which the {spec} policy does not have")
    return consulted(dataclasses.replace(policy, **f.overrides), spec)


def install_wraps(implementation: Any, spec: str, fault: str | None, part: str | None = None) -> None:
    """Replace the operations the fault wraps on this one object (never on its class). Without
    `part`, the fault's plain keys (`_recall`); with it, the keys of that binding (`mcp.error`)."""
    for name, wrap in _wraps(spec, fault, part).items():
        setattr(implementation, name, wrap(implementation, getattr(implementation, name)))


def wrapped(implementation: Any, spec: str, key: str, value: Any) -> Any:
    """One piece of a binding (its routes, tools, app, frame writer) as the implementation's fault
    makes it: the fault's wrap of `key` ("http.routes", …) applied to `value`, else `value`."""
    fault = getattr(implementation, "fault", None)
    part, _, name = key.partition(".")
    wrap = _wraps(spec, fault if isinstance(fault, str) else None, part).get(name)
    return value if wrap is None else wrap(implementation, value)


def _wraps(spec: str, fault: str | None, part: str | None) -> dict[str, Any]:
    f = of_spec(spec).get(fault) if fault else None
    if f is None or f.spec != spec:
        return {}
    if part is None:
        return {key: wrap for key, wrap in f.wraps.items() if "." not in key}
    return {key.partition(".")[2]: wrap for key, wrap in f.wraps.items() if key.startswith(part + ".")}
