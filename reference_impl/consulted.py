"""A reference policy that writes down every decision point it is asked for.

The project's variant tests (tests/harness/decisions.py) re-run under a variant only the checks that
read one of its decision points in a clean run. A reference served by a child process (UPP and OAMS
over stdio, a command line) reads its policy where the tests cannot see it, so the reads go to a file
that parent and children append to: the file named by MEMCONFORM_DECISIONS_LOG, one `spec.point` per
line.
Unset (every run but those tests), the policy is returned as it is and costs nothing.
"""

from __future__ import annotations

import os
from typing import Any

ENV = "MEMCONFORM_DECISIONS_LOG"
#: path -> descriptor, one per process: appends of one short line are atomic, so processes interleave
_OPEN: dict[str, int] = {}


class Consulted:
    """`policy`, whose every attribute read appends `spec.name` to the log (one server serves several
    specs, and their policies share point names: `batches`)."""

    __slots__ = ("_policy", "_spec", "_fd")

    def __init__(self, policy: Any, spec: str, fd: int) -> None:
        object.__setattr__(self, "_policy", policy)
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_fd", fd)

    def __getattr__(self, name: str) -> Any:
        spec = object.__getattribute__(self, "_spec")
        os.write(object.__getattribute__(self, "_fd"), f"{spec}.{name}\n".encode())
        return getattr(object.__getattribute__(self, "_policy"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a policy is frozen: cannot set {name!r}")


def consulted(policy: Any, spec: str) -> Any:
    path = os.environ.get(ENV)
    if not path:
        return policy
    if path not in _OPEN:
        _OPEN[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return Consulted(policy, spec, _OPEN[path])
