"""Fixtures the harness tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from .helpers import made_once


@dataclass(frozen=True)
class Run:
    """A whole run of the suite as a user starts it: its exit status, terminal output and report."""

    ret: int
    out: str
    report: dict[str, Any]


@pytest.fixture(scope="session")
def shared_folder(tmp_path_factory) -> Any:
    """A folder every xdist worker of this session sees (the one their basetemps are in); without
    xdist, the session's basetemp. What is made there once, under a lock, the others read."""
    shared = tmp_path_factory.getbasetemp()
    return shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared


@pytest.fixture(scope="session")
def reference_quick_run(shared_folder) -> Run:
    """`pytest --target=reference --effort=quick` over every spec and binding, run once and judged by
    several tests (every MUST passes, one line per subject, the same report under xdist): each used
    to make the same 40-second run of its own. Under xdist the workers share it through their
    common temporary folder: the first makes it under a lock, the others read what it wrote. The
    fuzz's time cap is lifted so that its counts govern however loaded the machine is (the xdist
    comparison draws the same cases twice)."""
    folder = shared_folder / "reference-quick"
    folder.mkdir(exist_ok=True)

    def make() -> dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
        env["MEMCONFORM_FUZZ_SECONDS"] = "300"
        # the machines' cap lifted too: on a loaded machine a 1 s cap cut a machine short in one run
        # and not in another, and what a machine judged (not_judged) then differed between them
        env["MEMCONFORM_STATEFUL_SECONDS"] = "300"
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                               "--target=reference", "--effort=quick", "--report", "memconform-report.json"],
                              cwd=folder, env=env, capture_output=True, text=True, timeout=1200)
        return {"ret": done.returncode, "out": done.stdout + done.stderr}

    run = made_once(folder / "run.json", make)
    report_path = folder / "memconform-report.json"
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.exists() else {}
    return Run(run["ret"], run["out"], report)
