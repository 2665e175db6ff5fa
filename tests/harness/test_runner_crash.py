"""A crash inside a check's call is an error, never a verdict, and its reason says whose code raised:
a target served in process (the reference implementation) runs inside the check's own call, so its
bug is not reported as the check's."""

from __future__ import annotations

import os

import pytest

from memconform.suite import runner
from memconform.suite.outcomes import Outcome
from memconform.suite.registry import all_checks

CHECK = next(c for c in all_checks("ump") if c.id == "ump/l1/get")


def _raising_in(filename: str):
    namespace: dict = {}
    exec(compile("def boom(*args, **kwargs):\n    raise KeyError('oops')\n", filename, "exec"), namespace)
    return namespace["boom"]


class _Client:
    binding = "http"

    def __init__(self, boom):
        self._boom = boom

    def __getattr__(self, name):
        if name == "activate":
            raise AttributeError(name)
        return self._boom


@pytest.mark.parametrize("where, heading", [
    (os.path.join(runner._REFERENCE_DIR, "ump", "service.py"), "the reference implementation, served in process, crashed"),
    (os.path.join(os.path.dirname(runner.__file__), "ump", "checks", "l1.py"), "the check itself crashed:"),
])
def test_the_crash_names_whose_code_raised(where, heading):
    client = _Client(_raising_in(where))
    result = runner.run_check(CHECK, "1.0", "http", lambda: client, None)
    assert result.outcome is Outcome.ERROR
    assert result.reason.startswith(heading), result.reason
    assert "KeyError: 'oops'" in result.reason
