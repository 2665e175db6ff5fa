"""Generic fixtures of the interop tests: the reference implementation served by `memconform serve`
in a child process on a free 127.0.0.1 port, with stores and folders of its own (a second,
separate implementation for an in-process reference to make round trips with).

* `serve_reference(fault=None, require_capability=True, args=())` → `ServedReference`: a server
  per call, each in its own folder, all stopped when the test ends.
* `served_reference`: one clean server (capabilities required) shared by a test module.

`ServedReference.url` is the base URL (`open_driver(url)` reaches UMP, UPP at `/upp` and OMF at
`/omf/...` there); `.workdir` holds `ump.sqlite`, `omf.sqlite`, `upp-exports/` and `serve.log`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

#: how long a child `memconform serve` may take to listen (imports on a busy machine)
START_TIMEOUT = 90.0


@dataclass
class ServedReference:
    url: str
    workdir: Path
    process: subprocess.Popen
    fault: str | None = None

    @property
    def log(self) -> Path:
        return self.workdir / "serve.log"

    def log_text(self) -> str:
        return self.log.read_text("utf-8", "replace") if self.log.exists() else ""

    def stop(self) -> None:
        """Stop this server's own process (terminate, then kill after 10 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_served_reference(workdir: Path, *, fault: str | None = None, require_capability: bool = True,
                           args: Sequence[str] = ()) -> ServedReference:
    """`memconform serve --port 0` (the OS picks a free port; the URL is read from its log) with
    its UMP and OMF stores and its UPP export folder in `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "memconform.suite.cli", "serve", "--host", "127.0.0.1", "--port", "0",
               "--db", str(workdir / "ump.sqlite"), "--omf-db", str(workdir / "omf.sqlite"),
               "--upp-export-dir", str(workdir / "upp-exports"),
               *([] if require_capability else ["--no-require-capability"]),
               *(["--fault", fault] if fault else []), *args]
    log = workdir / "serve.log"
    with log.open("wb") as out:  # a file, not a pipe: the access log must never block the server
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out)
    served = ServedReference("", workdir, process, fault)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", served.log_text())
        if found:
            served.url = found.group(1)
            return served
        if process.poll() is not None:
            break
        time.sleep(0.1)
    served.stop()
    raise RuntimeError(f"memconform serve did not start ({' '.join(command)}):\n{served.log_text()[-3000:]}")


class ServedReferences:
    """Starts served references on demand; `stop_all()` stops every one it started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started: list[ServedReference] = []

    def __call__(self, *, fault: str | None = None, require_capability: bool = True,
                 args: Sequence[str] = ()) -> ServedReference:
        workdir = self.root / f"served-{len(self.started)}"
        served = start_served_reference(workdir, fault=fault, require_capability=require_capability, args=args)
        self.started.append(served)
        return served

    def stop_all(self) -> None:
        while self.started:
            self.started.pop().stop()


@pytest.fixture
def serve_reference(tmp_path: Path) -> Iterator[ServedReferences]:
    servers = ServedReferences(tmp_path)
    try:
        yield servers
    finally:
        servers.stop_all()


@pytest.fixture(scope="module")
def served_reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedReference]:
    served = start_served_reference(tmp_path_factory.mktemp("served-reference"))
    try:
        yield served
    finally:
        served.stop()
