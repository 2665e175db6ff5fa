"""Fixtures that run the reference UMP server for real (uvicorn on 127.0.0.1, a free port, a
background thread), stopped when the test (or module) ends."""

from __future__ import annotations

import contextlib

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from memconform.reference_impl.ump import serve as _serve
from memconform.reference_impl.ump.serve import RunningServer
from memconform.suite.ump import captoken, testkeys


def token_for(name: str = "owner-a", **kw: Any) -> str:
    """A fresh capability token of a test key, all verbs, scope {owner: its DID}."""
    return captoken.mint(testkeys.test_signing_key(name), scope={"owner": testkeys.test_did(name)}, **kw)


def bearer(name: str = "owner-a") -> dict[str, str]:
    return {"Authorization": f"Bearer {token_for(name)}"}


@dataclass
class LiveServers:
    """`live_server(fault=None, require_capability=True) -> base_url`; every server started
    through it stops at teardown. `service(base_url)` is the UmpService behind a URL."""

    running: list[tuple[RunningServer, Any]] = field(default_factory=list)

    def __call__(self, fault: str | None = None, require_capability: bool = True, *, db: str | None = None) -> str:
        service = _serve.make_service(fault=fault, require_capability=require_capability, db=db)
        try:
            server = _serve.start_in_thread(service)
        except BaseException:
            service.close()
            raise
        self.running.append((server, service))
        return server.base_url

    def service(self, base_url: str) -> Any:
        return next(svc for srv, svc in self.running if srv.base_url == base_url)

    def server(self, base_url: str) -> RunningServer:
        return next(srv for srv, _ in self.running if srv.base_url == base_url)

    def stop_all(self) -> None:
        while self.running:
            server, service = self.running.pop()
            try:
                server.stop()
            finally:
                service.close()


@pytest.fixture
def live_server() -> Iterator[LiveServers]:
    servers = LiveServers()
    try:
        yield servers
    finally:
        servers.stop_all()


@pytest.fixture(scope="module")
def module_server() -> Iterator[LiveServers]:
    """One server (capabilities required, no fault) shared by a module: `module_server.url`."""
    servers = LiveServers()
    servers.url = servers()  # type: ignore[attr-defined]
    try:
        yield servers
    finally:
        servers.stop_all()


@contextlib.contextmanager
def serving(ump: Any, **engines: Any) -> Iterator[RunningServer]:
    """The reference server in a thread over `ump` and the given engines (upp=, omf=); stopped, and
    every service closed, afterwards."""
    running = _serve.start_in_thread(ump, **engines)
    try:
        yield running
    finally:
        running.stop()
        for service in (*engines.values(), ump):
            service.close()


@pytest.fixture(scope="module")
def omf_server() -> Iterator[Any]:
    """The reference server with an in-memory OMF engine at /omf/* (anonymous UMP beside it)."""
    from memconform.reference_impl.omf import make_engine
    from memconform.reference_impl.ump.service import UmpService

    with serving(UmpService(require_capability=False), omf=make_engine()) as running:
        yield running
