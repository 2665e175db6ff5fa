"""`--target=docker:IMAGE[?port=PORT&ready=PATH&timeout=SECONDS&env=NAME=VALUE…]`: an implementation
shipped as a container image (docs/descriptors.md, "Containers").

The convention: the container serves its HTTP bindings on container port PORT (default 8700, as
`memconform serve` does) from its image's own entrypoint; the suite starts it with testcontainers,
waits until `http://HOST:MAPPED{ready}` gives any HTTP answer, then judges it exactly as
`--target=http://HOST:MAPPED` (HttpDriver: UMP found at /ump/capabilities, UPP at POST /upp or /).
The container is removed on close (and by an atexit hook, and by testcontainers' reaper should
the run be killed).

testcontainers is an optional extra (`pip install 'memconform[docker]'`). Where it is missing or no
Docker daemon answers, opening the target raises NotApplicable("docker:IMAGE: no container engine:
WHY"), which the plugin reports as skipped with that reason, not as an error.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from typing import Any

from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.targets.base import Subject
from memconform.targets.descriptor import http_answers
from memconform.targets.target_string import DockerTarget

INSTALL_HINT = "pip install 'memconform[docker]'"
#: How long asking the daemon may take before it counts as not answering.
PING_TIMEOUT = 5


def _docker_host() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def container_engine_problem() -> str | None:
    """Why no container can be started here, or None when testcontainers is installed and a
    Docker daemon answers a ping."""
    try:
        import docker  # testcontainers' own client library, installed with it
        import testcontainers.core.container  # noqa: F401
    except ImportError as exc:
        return f"testcontainers is not installed ({INSTALL_HINT}; {exc})"
    try:
        client = docker.from_env(timeout=PING_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - docker-py wraps every way of not answering differently
        return f"no Docker daemon answers at {_docker_host()} ({exc})"
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001
        return f"the Docker daemon at {_docker_host()} does not answer a ping ({exc})"
    finally:
        client.close()
    return None


class DockerDriver:
    """A container of `target.image`, started on first use (subjects need it: the server says
    which specs and versions it speaks), judged through HttpDriver at its mapped port."""

    def __init__(self, target: DockerTarget, forced_versions: tuple[str, ...] = (), timeout: float = 10.0):
        self.target = target
        self.label = target.text
        self.forced_versions = tuple(forced_versions)
        self.timeout = timeout
        self._lock = threading.RLock()
        self._container: Any = None
        self._http: Any = None  # the HttpDriver at the mapped port, once the server is up
        self._start_error: str | None = None
        self._closed = False

    @classmethod
    def open(cls, target: DockerTarget, forced_versions: tuple[str, ...] = (), timeout: float = 10.0) -> DockerDriver:
        problem = container_engine_problem()
        if problem is not None:
            raise NotApplicable(f"{target.text}: no container engine: {problem}")
        return cls(target, forced_versions, timeout)

    # -- the container --

    def start(self) -> Any:
        """The HttpDriver of the running container, starting it the first time; later calls
        repeat why it could not start, without trying again."""
        with self._lock:
            if self._closed:
                raise TargetError(f"{self.label}: the driver is closed")
            if self._start_error is not None:
                raise TargetError(self._start_error)
            if self._http is None:
                try:
                    self._http = self._start_container()
                except TargetError as exc:
                    self._start_error = str(exc)
                    self._remove_container()
                    raise
            return self._http

    def _start_container(self) -> Any:
        from testcontainers.core.container import DockerContainer

        from memconform.targets.http import HttpDriver

        container = DockerContainer(self.target.image).with_exposed_ports(self.target.port)
        for name, value in self.target.env:
            container = container.with_env(name, value)
        self._container = container
        atexit.register(self._remove_container)
        try:
            container.start()
            base_url = f"http://{container.get_container_host_ip()}:{container.get_exposed_port(self.target.port)}"
        except Exception as exc:  # noqa: BLE001 - pulling, creating, starting: any failure is the target's
            raise TargetError(f"{self.label}: cannot start a container of {self.target.image}: "
                              f"{type(exc).__name__}: {exc}") from None
        self._wait_ready(base_url + self.target.ready_path)
        return HttpDriver(base_url, self.forced_versions, timeout=self.timeout)

    def _wait_ready(self, url: str) -> None:
        deadline = time.monotonic() + self.target.ready_timeout
        while True:
            ended = self._exit_code()
            if ended is not None:
                raise TargetError(f"{self.label}: the container exited with code {ended} before {url} answered; "
                                  f"its output ends: {self._logs_tail() or '(nothing)'}")
            if http_answers(url):
                return
            if time.monotonic() > deadline:
                raise TargetError(f"{self.label}: {url} did not answer within {self.target.ready_timeout:g} s of "
                                  f"starting the container; its output ends: {self._logs_tail() or '(nothing)'}")
            time.sleep(0.3)

    def _exit_code(self) -> int | None:
        try:
            wrapped = self._container.get_wrapped_container()
            wrapped.reload()
            if wrapped.status in ("exited", "dead"):
                return int(wrapped.attrs.get("State", {}).get("ExitCode", -1))
        except Exception:  # noqa: BLE001 - a container we cannot inspect is judged by its URL alone
            return None
        return None

    def _logs_tail(self, limit: int = 2000) -> str:
        try:
            out, err = self._container.get_logs()
        except Exception:  # noqa: BLE001
            return ""
        return ((out or b"") + (err or b"")).decode("utf-8", "replace").strip()[-limit:]

    def _remove_container(self) -> None:
        container, self._container = self._container, None
        atexit.unregister(self._remove_container)
        if container is not None:
            try:
                container.stop()  # testcontainers removes it (and its volumes) too
            except Exception:  # noqa: BLE001 - never started, or already gone
                pass

    # -- Driver --

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, s.spec, s.version, s.binding) for s in self.start().subjects()]

    def advertised_level(self, subject: Subject) -> str | None:
        return self.start().advertised_level(subject)

    def client(self, subject: Subject) -> Any:
        return self.start().client(subject)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "kind": "docker", "image": self.target.image,
                               "port": self.target.port, "advertised": {}}
        if self._http is not None:
            inner = self._http.describe()
            out["url"] = inner.get("url")
            out["advertised"] = {k: v for k, v in inner.get("advertised", {}).items() if isinstance(v, str)}
            if "server" in inner:
                out["server"] = inner["server"]
        if self._start_error is not None:
            out["error"] = self._start_error
        return out

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            http, self._http = self._http, None
        if http is not None:
            http.close()
        self._remove_container()


__all__ = ["DockerDriver", "container_engine_problem"]
