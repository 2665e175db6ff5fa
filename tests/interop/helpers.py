"""What the round-trip tests of every spec share: the in-process reference as one side, and a
failure message listing a round trip's losses and notes."""

from __future__ import annotations

from typing import Any

from memconform.suite.interop.model import RoundTrip
from memconform.targets import open_driver


def in_process(spec: str, fault: str | None = None, *, version: str | None = None,
               binding: str = "http") -> tuple[Any, Any]:
    """(driver, client) of the in-process reference for `spec` over `binding`, optionally with one
    fault; the caller closes the driver."""
    driver = open_driver("reference" + (f"?fault={fault}" if fault else ""), timeout=30.0)
    subject = next(s for s in driver.subjects() if s.spec == spec and s.binding == binding
                   and (version is None or s.version == version))
    return driver, driver.client(subject)


def described(rt: RoundTrip) -> str:
    return "\n".join([*(loss.describe() for loss in rt.losses), *(f"note: {n}" for n in rt.notes)])
