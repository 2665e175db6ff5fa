"""Issue 13: the reference implementation reads like the spec — a fault is an entry in its spec's
table (overrides of a decision point, or a wrap written apart: reference_impl/*/faulty.py), not a
branch on its name in the logic. A ratchet: the counts below may only go down."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "reference_impl"
#: a test of a fault's name: `fault == "…"`, `fault in (…)`, `fault.startswith(…)`
NAME_TEST = re.compile(r"fault\s*(==|!=|\bin\b|\bnot in\b)\s*[\"'(\[{A-Z_]|fault\.startswith")
#: What is left, file by file (everything else: none): the unknown-name check in each service and in
#: the UMP file engine.
ALLOWED = {"ump/engine.py": 1, "ump/service.py": 1,
           "upp/service.py": 1, "upp/rpc.py": 1}


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                                        if "faults" not in p.name and p.name != "faulty.py"))
def test_no_new_branch_on_a_fault_name(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    found = [line.strip() for line in text.splitlines() if NAME_TEST.search(line)]
    assert len(found) <= ALLOWED.get(path, 0), (
        f"{path}: {len(found)} tests of a fault's name (at most {ALLOWED.get(path, 0)}): make the fault an "
        f"entry of its table instead (overrides or wraps, reference_impl/faults.py):\n" + "\n".join(found))
