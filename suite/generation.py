"""How memconform runs Hypothesis (the OpenAPI fuzz and the state machines), the same for both.

- Caches go to the user's cache directory (`$XDG_CACHE_HOME/memconform/hypothesis`, else
  `~/.cache/…`; HYPOTHESIS_STORAGE_DIRECTORY when set), never to `.hypothesis/` in the vendor's
  working directory: Unicode tables are computed once per machine.
- Draws depend on the seed and the effort alone. Hypothesis mixes into what it draws constants it
  parses out of every "local" module loaded in the process (any module outside site-packages: the
  vendor's own code and conftest files, memconform itself when installed editable). So the same
  `--seed` would draw different sequences in a vendor's CI, in a `pip install .` and in this
  project's tests, and every literal edited anywhere in memconform would change what seed 0 tries:
  the faults proven caught at seed 0 would be proven on draws no user gets, and a replay could miss.
  While we generate, that source of constants is empty (Hypothesis's built-in constants remain).
  The parse also cost ~1.6 s per process in an editable install with a fresh working directory.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
import warnings
from typing import Any, Iterator

_STORAGE: list[str] = []
_STORAGE_LOCK = threading.Lock()


def storage_dir() -> str:
    """The cache directory (module doc); a private temporary directory, removed at exit, when
    that cannot be created."""
    with _STORAGE_LOCK:
        if not _STORAGE:
            root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            path = os.path.join(root, "memconform", "hypothesis")
            try:
                os.makedirs(path, exist_ok=True)
                probe = tempfile.NamedTemporaryFile(dir=path, prefix=".probe-")
                probe.close()
            except OSError:
                path = tempfile.mkdtemp(prefix="memconform-hypothesis-")
                atexit.register(shutil.rmtree, path, True)
            _STORAGE.append(path)
        return _STORAGE[0]


def _local_constants_hook() -> tuple[Any, Any] | None:
    """(Hypothesis's providers module, a stand-in for its `_get_local_constants` returning no
    constants); None when this Hypothesis has no such hook (then there is nothing to neutralise)."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:
        return None
    if not callable(getattr(providers, "_get_local_constants", None)):
        return None
    empty = Constants()
    return providers, lambda: empty


def _forget_drawn_constants(providers: Any) -> None:
    # constants already offered are cached per kind of draw: forget them on the way in and out
    getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", {}).clear()


@contextlib.contextmanager
def quiet_hypothesis() -> Iterator[None]:
    """Run Hypothesis as the module doc says, restoring everything afterwards."""
    from hypothesis import configuration

    previous = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or storage_dir())
    hook = _local_constants_hook()
    if hook is not None:
        providers, stand_in = hook
        original = providers._get_local_constants
        providers._get_local_constants = stand_in
        _forget_drawn_constants(providers)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        if hook is not None:
            providers._get_local_constants = original
            _forget_drawn_constants(providers)
        configuration.set_hypothesis_home_dir(previous)
