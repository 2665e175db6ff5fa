"""What `--spec` and `--binding` accept, checked before collection: a filter that matches nothing
the suite knows is a usage error naming the accepted values, not a quiet "no tests ran"."""

from __future__ import annotations

import functools

import pytest


def accepted_specs() -> dict[str, tuple[str, ...]]:
    """Each spec the suite ships a catalogue for, with the versions that catalogue covers."""
    from memconform.suite import catalogue

    return {spec: catalogue.load(spec).versions for spec in catalogue.SPECS}


@functools.cache
def accepted_bindings() -> tuple[str, ...]:
    """Every binding some shipped check runs on (the drivers' subjects use the same names)."""
    from memconform.suite.catalogue import SPECS
    from memconform.suite.registry import all_checks

    order = ("file", "http", "mcp", "stdio", "cli")
    found = {b for spec in SPECS for chk in all_checks(spec) for b in chk.bindings}
    return tuple(b for b in order if b in found) + tuple(sorted(found - set(order)))


def check_filters(specs: dict[str, set[str] | None], bindings: set[str]) -> None:
    """Raise pytest.UsageError for a spec, spec version or binding the suite does not know."""
    known = accepted_specs()
    for spec, versions in specs.items():
        if spec not in known:
            raise pytest.UsageError(f"--spec {spec!r}: unknown spec; accepted: {', '.join(known)} "
                                    f"(optionally @VERSION: {_versions(known)})")
        unknown = sorted((versions or set()) - set(known[spec]))
        if unknown:
            raise pytest.UsageError(f"--spec {spec}@{unknown[0]}: the suite has no {spec.upper()} "
                                    f"{unknown[0]}; accepted: "
                                    + ", ".join(f"{spec}@{v}" for v in known[spec]))
    unknown_bindings = sorted(bindings - set(accepted_bindings()))
    if unknown_bindings:
        raise pytest.UsageError(f"--binding {unknown_bindings[0]!r}: unknown binding; accepted: "
                                + ", ".join(accepted_bindings()))


def _versions(known: dict[str, tuple[str, ...]]) -> str:
    return ", ".join(f"{spec}@{v}" for spec, versions in known.items() for v in versions)
