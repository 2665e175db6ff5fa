"""Running the OAMS checks directly against the reference (served in a thread), until OAMS is wired
into `pytest --target=…`: `outcomes(binding, fault=…, variants=…)` → {check id: CheckResult}."""

from __future__ import annotations

import contextlib
import sys
import tempfile
import os
from collections.abc import Iterator
from typing import Any
from unittest import mock

from memconform.reference_impl.oams.bundle import export_bundle
from memconform.reference_impl.oams.engine import OamsService
from memconform.reference_impl.oams.http import app
from memconform.suite.oams import checks as _checks  # noqa: F401 (registers them)
from memconform.suite.runner import run_check
from memconform.targets.oams import OamsFileClient, OamsRestClient, rpc_over_http, rpc_over_stdio, seed_export

VERSION = "0.1"
LIVE = ("http", "jsonrpc", "stdio")


def oams_checks() -> list[Any]:
    from memconform.suite.registry import _REGISTRY

    return [c for c in _REGISTRY.values() if c.spec == "oams"]


@contextlib.contextmanager
def reference(binding: str, fault: str | None = None, variants: tuple[str, ...] = ()) -> Iterator[Any]:
    """A client factory for the reference over `binding` (the service closed after)."""
    if binding == "stdio":
        argv = [sys.executable, "-m", "memconform.reference_impl.oams.rpc"]
        if fault:
            argv += ["--fault", fault]
        for v in variants:
            argv += ["--variant", v]
        client = rpc_over_stdio(argv, timeout=20.0)
        try:
            yield lambda: _NoClose(client)
        finally:
            client.close()
        return
    service = OamsService(fault=fault, variants=variants)
    try:
        if binding == "file":
            with tempfile.TemporaryDirectory() as tmp:
                seed_export(service)
                folder = export_bundle(service, tmp)
                yield lambda: OamsFileClient(folder)
            return
        from memconform.reference_impl.ump.serve import start_in_thread

        server = start_in_thread(None, app=app(service))
        try:
            base = server.base_url.rstrip("/")
            if binding == "http":
                yield lambda: OamsRestClient(base, 20.0)
            else:
                yield lambda: rpc_over_http(base + "/v1/oams/rpc", 20.0)
        finally:
            server.stop()
    finally:
        service.close()


# a client sharing a transport it does not close, as the reference part hands them out
from memconform.targets.oams import _Shared as _NoClose  # noqa: E402


#: the state machine's budget in these runs: small for the clean reference and the variants; off for
#: the fault table (a fault is proven by the scripted checks, as tests/harness does for the other specs).
#: Sequences and steps bound it; the wall-clock cap is lifted, so that a loaded machine (a CI run beside
#: other work) cannot turn the machine's verdict into "stopped at its cap"
MACHINE = {"MEMCONFORM_STATEFUL_EXAMPLES": "8", "MEMCONFORM_STATEFUL_STEPS": "12", "MEMCONFORM_STATEFUL_SECONDS": "60",
           "MEMCONFORM_STATEFUL_SHRINK_SECONDS": "0.5"}
MACHINE_OFF = {"MEMCONFORM_STATEFUL_EXAMPLES": "0"}


def environment(values: dict[str, str]) -> Any:
    """The environment with `values` set for the block, restored after."""
    return mock.patch.dict(os.environ, values)


def outcomes(binding: str, fault: str | None = None, variants: tuple[str, ...] = (), *,
             machine: bool | None = None, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Every OAMS check of `binding` against the reference (or those in `only`). The state machine
    runs (small budget) unless a fault is set, or `machine` says otherwise."""
    on = fault is None if machine is None else machine
    with environment(MACHINE if on else MACHINE_OFF), reference(binding, fault, variants) as factory:
        return {c.id: run_check(c, VERSION, binding, factory, None)
                for c in oams_checks() if binding in c.bindings and (only is None or c.id in only)}


def failed_requirements(results: dict[str, Any]) -> set[str]:
    """The requirement ids with a finding in a failed (MUST) or warned (SHOULD) result."""
    return {f.requirement for r in results.values() for f in r.findings}
