import importlib
import pkgutil

import memconform

pytest_plugins = ["pytester"]

# The project's tests draw the same cases every run (issue 16: "the project's tests use a fixed seed"), and
# no example database carries a draw from one run into the next: a red CI is then a real defect that
# reproduces, never a draw that happened to be unlucky. The suite's own generation is seeded (--seed) and
# names its settings, so this profile changes nothing it does.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("memconform-tests", derandomize=True, database=None)
_hypothesis_settings.load_profile("memconform-tests")

# pytester's in-process runs restore sys.modules afterwards, dropping every module first imported
# inside the run. Code that keeps class objects across imports (cryptography's hash classes inside
# the MCP SDK, httpx mapping httpcore's exceptions, the check registry, a server's error class
# caught by another module) then sees two copies of one class. Importing every memconform module
# and the libraries it imports lazily here, before any pytester run, keeps one copy for the session.
import cryptography.hazmat.primitives.hashes  # noqa: E402,F401
import h11  # noqa: E402,F401
import httpcore  # noqa: E402,F401
import httpx  # noqa: E402,F401
import mcp  # noqa: E402,F401
import schemathesis  # noqa: E402,F401
import starlette.applications  # noqa: E402,F401
import uvicorn  # noqa: E402,F401

# `memconform` is a namespace package whose editable install maps each part to its folder: walk the
# parts (whose __path__ are real folders), not the namespace (whose path hook pkgutil cannot list).
for _part in ("suite", "targets", "reports", "reference_impl", "vectors"):
    _package = importlib.import_module(f"memconform.{_part}")
    for _module in pkgutil.walk_packages(_package.__path__, f"memconform.{_part}."):
        importlib.import_module(_module.name)


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: half as many workers again as there are cores (3 on the 2-core CI machine). The
    tests spend about a third of their time waiting on child processes, sockets and the deliberate
    timeouts of broken targets; a worker per core left the cores idle for that third (measured:
    9.9 min at 2 workers, 73 % of two cores busy)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + max(1, cores // 2)
