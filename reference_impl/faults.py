"""Fault switches of the reference implementation (DESIGN.md, idea 5).

Each fault is one deliberate violation. `breaks` lists exactly the requirements the suite must
report as failed against it, and nothing else; the project's own tests hold the suite to that.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def applies_to(self, spec: str, version: str) -> bool:
        from memconform.suite.catalogue import version_key

        return spec == self.spec and version_key(version) >= version_key(self.since)


def _collect() -> dict[str, Fault]:
    from memconform.reference_impl.ump.binding_faults import BINDING_FAULTS
    from memconform.reference_impl.ump.faults import UMP_FAULTS
    from memconform.reference_impl.upp.faults import UPP_FAULTS
    from memconform.reference_impl.omf.faults import OMF_FAULTS

    return {f.name: f for f in (*UMP_FAULTS, *BINDING_FAULTS, *UPP_FAULTS, *OMF_FAULTS)}


FAULTS: dict[str, Fault] = _collect()
