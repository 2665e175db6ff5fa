"""Miniatures: small, deliberately broken targets, one misbehaviour each (after Bowtie's
`tests/miniatures.py`). The harness must survive every one of them: the run completes, what the
target broke is an *error* with a reason, never a failure.

The targets themselves are scripts in `miniatures/` (run as child processes, so that one can
really die): `http_target.py` (UMP over HTTP in front of the reference server), `upp_stdio.py`
(UPP over stdio around the reference service), `mcp_stdio.py` (the reference MCP server that dies
on an operation), `run.py` (notes a stdio miniature's pid). This module starts them and makes sure
they stop:

* `http_miniature(mode, after=0, *extra)` (fixture): starts `http_target.py` on a free port of 127.0.0.1
  (`.url`; `extra`: more of its options); stopped when the test ends. `shared_http_miniature`: the same, kept for the module.
* `stdio_command(script, *args)`: the command line of a stdio miniature, for a
  `jsonrpc+stdio:` or `mcp+stdio:` target string (the driver under test starts it). Each such
  process writes its pid into the `reaper` folder; the `reaper` fixture kills whatever of them is
  still alive when the test ends, whatever the driver did; `started(reaper, *args)` counts them.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "miniatures"
#: How long a miniature may take to start (it imports the reference implementation).
STARTUP = 60.0


def script(name: str) -> str:
    return str(HERE / f"{name}.py")


def stdio_command(name: str, *args: str) -> str:
    """`python miniatures/run.py miniatures/NAME.py ARGS` as one shell-quoted string (`run.py` notes
    the pid for the `reaper`)."""
    return shlex.join([sys.executable, script("run"), script(name), *args])


def _stop_group(pid: int, proc: subprocess.Popen | None = None) -> None:
    """End a miniature and everything it started: SIGTERM to its process group, then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(wait)
                return
        else:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.05)
            if not _alive(pid):
                return


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie of the driver's (already dead, not yet reaped) counts as gone
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    return True


class HttpMiniature:
    """`http_target.py MODE --after N` as a child in a session of its own; `url` once it listens."""

    def __init__(self, mode: str, after: int = 0, *extra: str):
        self.mode = mode
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, script("http_target"), mode, "--after", str(after), *extra],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     start_new_session=True)
        self._url: str | None = None

    @property
    def url(self) -> str:
        """Its URL, once it listens (asked late, several miniatures start side by side)."""
        if self._url is None:
            self._url = self._first_line()
        return self._url

    def _first_line(self) -> str:
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(STARTUP):
                raise RuntimeError(f"the HTTP miniature did not start within {STARTUP:g} s: {self.stderr()}")
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http://"):
            raise RuntimeError(f"the HTTP miniature did not start: {line!r} {self.stderr()}")
        return line

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-2000:]

    @property
    def exit_code(self) -> int | None:
        return self.proc.poll()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # it ends itself at the end of its input
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            _stop_group(self.proc.pid, self.proc)
        self.proc.stdout.close()
        self.log.close()


@contextlib.contextmanager
def _miniatures(shared: bool) -> Iterator[Callable[..., HttpMiniature]]:
    started: dict[object, HttpMiniature] = {}

    def start(mode: str, after: int = 0, *extra: str) -> HttpMiniature:
        key = (mode, after, *extra) if shared else len(started)
        if key not in started:
            started[key] = HttpMiniature(mode, after, *extra)
        return started[key]

    try:
        yield start
    finally:
        for miniature in started.values():
            miniature.stop()


@pytest.fixture
def http_miniature() -> Iterator[Callable[..., HttpMiniature]]:
    """`http_miniature(mode, after=0)` → a fresh running HttpMiniature (for one that changes as it
    goes: `die`); every one stopped at teardown."""
    with _miniatures(shared=False) as start:
        yield start


@pytest.fixture(scope="module")
def shared_http_miniature() -> Iterator[Callable[..., HttpMiniature]]:
    """The same, one process per (mode, after) for the whole module: for the modes that misbehave
    the same way every time (they start in seconds, not milliseconds)."""
    with _miniatures(shared=True) as start:
        yield start


@pytest.fixture
def reaper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder where every stdio miniature started during the test notes its pid; at teardown
    each one still alive is stopped with its process group (they run in sessions of their own)."""
    folder = tmp_path / "miniature-pids"
    folder.mkdir()
    monkeypatch.setenv("MEMCONFORM_MINIATURE_PIDS", str(folder))
    yield folder
    for entry in folder.iterdir():
        pid = int(entry.name)
        if _alive(pid):
            _stop_group(pid)


def started(reaper: Path, *args: str) -> int:
    """How many stdio miniatures were started whose arguments (after the script) are `args`."""
    return sum(1 for p in reaper.iterdir() if json.loads(p.read_text() or "[]")[1:] == list(args))


__all__ = ["HttpMiniature", "http_miniature", "reaper", "script", "shared_http_miniature", "started",
           "stdio_command"]
