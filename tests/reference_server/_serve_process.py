"""`memconform serve` as a child process on a free 127.0.0.1 port, for tests that need a real server
process (several clients at once, kill -9). Its log goes to a file, not a pipe: a pipe nobody reads
fills up and stalls the server mid-request."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from memconform.suite.ump import captoken, testkeys


@dataclass
class ServeProcess:
    proc: subprocess.Popen
    url: str
    log: Path

    def stop(self) -> None:
        """Terminate (then kill) and reap; safe to call twice."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)

    def kill9(self) -> None:
        self.proc.kill()  # SIGKILL: no shutdown, no flush, no close
        self.proc.wait(15)


def start(folder: Path, *args: str, name: str = "serve") -> ServeProcess:
    log = folder / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--host", "127.0.0.1",
                                 "--port", "0", "--upp-export-dir", str(folder / "upp-exports"), *args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out,
                                env=os.environ | {"PYTHONUNBUFFERED": "1"})
    server = ServeProcess(proc, "", log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read_text("utf-8", "replace"))
        if match:
            server.url = match.group(1)
            return server
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    server.stop()
    raise AssertionError(f"memconform serve did not announce its URL:\n{log.read_text('utf-8', 'replace')[-2000:]}")


def auth(name: str = "owner-a") -> dict[str, str]:
    token = captoken.mint(testkeys.test_signing_key(name), scope={"owner": testkeys.test_did(name)}, ttl=3600)
    return {"UMP-Version": "1.0", "Authorization": f"Bearer {token}"}


def record(text: str, name: str = "owner-a") -> dict:
    did = testkeys.test_did(name)
    return {"kind": "semantic", "body": {"text": text}, "scope": {"owner": did, "visibility": "private"},
            "provenance": {"actor": did, "actor_kind": "agent", "method": "memconform-test"}}
