"""The exit status of a run with `--target` (pytest and `memconform run` alike).

0 every check the run asked for passed (or was skipped with a reason); 1 a verdict against the
target: at least one check failed (or a baseline entry went stale, or a SHOULD under --strict);
2–5 pytest's own (interrupted, internal error, usage error, nothing collected); and NOT_JUDGED when
the target could not be judged at all: something went wrong and every item that did not pass is a
target error (unreachable, crashed, not speaking the protocol), none a failure.

NOT_JUDGED is 69, EX_UNAVAILABLE of sysexits.h ("a service is unavailable"): a CI step can tell
"the server never answered" from "the server is wrong" without colliding with pytest's 0–5, the
shell's 126–165, or the 1/2 the `memconform` subcommands use for a verdict and unreadable input.
"""

from __future__ import annotations

from typing import Any, Iterable

import pytest

OK = 0
VERDICT = 1
MALFORMED = 2
NOT_JUDGED = 69


def session_status(session: pytest.Session, results: Iterable[dict[str, Any]]) -> int:
    """`session.exitstatus`, or NOT_JUDGED when each failed pytest report was a memconform target
    error; `results` are the memconform and interop result entries the run gathered."""
    status = session.exitstatus
    if status != pytest.ExitCode.TESTS_FAILED:
        return status
    # A baseline may accept an error as it accepts a failure: pytest then counts it as xfailed.
    errors = sum(1 for r in results if r.get("outcome") == "error"
                 and (r.get("baseline") or {}).get("status") != "accepted")
    # pytest counts every failing report and each memconform error is one: anything beyond them
    # (a failed check, a stale baseline entry, a SHOULD under --strict, a vendor's own test) is a verdict.
    return NOT_JUDGED if errors and session.testsfailed == errors else status
