"""The all-spec reference server: UMP's HTTP app (reference_impl/ump/http_app.py) with UPP at POST /upp,
OMF at /omf and the routes of every spec plugged in through suite/specs.py, run in the foreground
(`memconform serve`; over MCP stdio with --stdio, UPP over stdio with --upp-stdio) or in a background
thread (`start_in_thread`, for tests and the suite's `reference` target). UMP's own pieces (its
service, its owners' keys) stay in reference_impl/ump/serve.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from memconform.reference_impl.ump.http_app import build_app

log = logging.getLogger("memconform.reference_impl.serve")


class _Server(uvicorn.Server):
    """uvicorn's server with a hook once it listens (and no signal handlers off the main thread,
    which uvicorn already skips)."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None] | None = None):
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._on_started is not None:
            self._on_started()

    # uvicorn polls `should_exit` every 0.1 s and then pauses 0.1 s for open connections: 0.2 s of
    # every stop, and the project's tests start and stop a server for each of hundreds of runs. Here
    # a stop wakes the loop at once (`wake`), and a server without connections or tasks has
    # nothing to wait for. The ticks (the Date header, once a second) are uvicorn's own.
    async def main_loop(self) -> None:
        self._woken = asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), 0.1)

    def wake(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Called from another thread after `should_exit` was set: end the main loop now."""
        woken = getattr(self, "_woken", None)
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(woken.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks or self.force_exit:
            await super().shutdown(sockets=sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when the listening
    # socket says TCP; with proto 0, Nagle plus delayed ACKs cost ~40 ms per keep-alive request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _config(app: Any, log_level: str, *, own_process: bool = True) -> uvicorn.Config:
    # A server in a thread of someone else's process (the suite, a vendor's pytest) leaves the
    # process's logging as it is: uvicorn's default dictConfig closes every handler the process has
    # (pytest's among them) and races a handler being built in another thread ("'RichHandler'
    # object has no attribute 'lock'", seen once in the project's tests). Its loggers' levels are
    # still set, and what they say reaches the root logger.
    return uvicorn.Config(app, lifespan="on", log_level=log_level, access_log=False,
                          timeout_graceful_shutdown=3, ws="none", **({} if own_process else {"log_config": None}))


@dataclass
class RunningServer:
    """A server running in a background thread. `stop()` ends open SSE streams, shuts uvicorn
    down and joins the thread (idempotent)."""

    base_url: str
    app: Any
    _server: _Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _sock: socket.socket = field(repr=False)
    #: the event loop serving the app (targets/in_process.py hands requests to it)
    loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def stop(self, timeout: float = 10.0) -> None:
        closing = getattr(getattr(self.app, "state", None), "closing", None)  # any ASGI app
        if closing is not None:
            closing.set()
        self._server.should_exit = True
        self._server.wake(self.loop)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)
        try:
            self._sock.close()
        except OSError:
            pass

    @property
    def upp_url(self) -> str | None:
        """The URL of UPP's JSON-RPC endpoint (POST), or None when no UPP service is served."""
        return f"{self.base_url}/upp" if getattr(self.app.state, "upp", None) is not None else None

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and self._server.started

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(service: Any, host: str = "127.0.0.1", port: int = 0, *, upp: Any = None, omf: Any = None,
                    app: Any = None, routes: Sequence[Any] = (),
                    startup_timeout: float = 15.0, log_level: str = "warning") -> RunningServer:
    """Serve `service` (or a prebuilt ASGI `app`) with uvicorn in a daemon thread; returns once
    it accepts connections. Port 0 picks a free port: read it from `base_url`. With `upp` (a
    `UppService`), UPP is served at POST /upp too (`upp_url`); with `omf` (an `OmfEngine`), OMF at
    POST /omf/export|import|preview. The caller closes the services."""
    app = app if app is not None else build_app(service, upp=upp, omf=omf, routes=routes)
    sock = _bind(host, port)
    actual = sock.getsockname()[1]
    started = threading.Event()
    serving: list[asyncio.AbstractEventLoop] = []

    def on_started() -> None:
        serving.append(asyncio.get_running_loop())
        started.set()

    server = _Server(_config(app, log_level, own_process=False), on_started=on_started)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as exc:  # noqa: BLE001 — reported to the caller below
            failure.append(exc)
        finally:
            started.set()

    thread = threading.Thread(target=run, name=f"reference-server-{actual}", daemon=True)
    thread.start()
    if not started.wait(startup_timeout) or not server.started:
        server.should_exit = True
        thread.join(5)
        sock.close()
        why = f": {failure[0]!r}" if failure else ""
        raise RuntimeError(f"the reference UMP server did not start on {_url(host, actual)}{why}")
    return RunningServer(_url(host, actual), app, server, thread, sock, serving[0] if serving else None)


def _fault_for(spec: str, fault: str | None) -> str | None:
    """`--fault NAME` goes to the server of its spec only (a UPP fault never reaches UMP)."""
    if fault is None:
        return None
    from memconform.reference_impl.faults import FAULTS

    return fault if FAULTS[fault].spec == spec else None


def serve(*, host: str = "127.0.0.1", port: int = 8700, db: str | None = None,
          require_capability: bool = True, fault: str | None = None, stdio: bool = False,
          upp_stdio: bool = False, upp_export_dir: str | Path | None = None,
          upp_import_dirs: Sequence[str | Path] = (), omf_db: str | None = None,
          variants: tuple[str, ...] = (), owners_file: str | None = None,
          omf_max_body: int | None = None, upp_max_batch: int | None = None,
          upp_max_answer: int | None = None) -> None:
    """Run in the foreground until interrupted (or, over stdio, until end of input). Over stdio
    nothing but the protocol goes to stdout."""
    from memconform.reference_impl.ump.serve import make_service
    from memconform.reference_impl.upp.stdio import make_upp_service, serve_upp_stdio

    if upp_stdio:
        serve_upp_stdio(fault=_fault_for("upp", fault), export_dir=upp_export_dir, import_dirs=upp_import_dirs,
                        variants=variants, max_batch=upp_max_batch, max_answer_bytes=upp_max_answer)
        return
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    service = make_service(db=db, require_capability=require_capability, fault=_fault_for("ump", fault),
                           variants=variants, owners_file=owners_file)
    try:
        if stdio:
            try:
                from memconform.reference_impl.ump import mcp_app
            except ModuleNotFoundError as exc:
                raise SystemExit(f"memconform serve --stdio: the MCP binding is not available ({exc})") from None
            print(f"memconform: reference UMP server over MCP stdio (UMP {', '.join(service.versions)}; "
                  f"capabilities {'required' if require_capability else 'optional'}"
                  f"{'; fault ' + fault if service.fault else ''})", file=sys.stderr, flush=True)
            mcp_app.run_stdio(service)
            return
        upp = make_upp_service(fault=_fault_for("upp", fault), export_dir=upp_export_dir,
                               import_dirs=upp_import_dirs, variants=variants, max_batch=upp_max_batch,
                               max_answer_bytes=upp_max_answer)
        from memconform.reference_impl.omf import make_engine

        omf = make_engine(omf_db, fault=_fault_for("omf", fault), variants=variants)
        if omf_max_body is not None:
            from memconform.reference_impl.omf.http import set_max_body

            set_max_body(omf_max_body)
        from memconform.suite.specs import plugged

        parts = [make(label="memconform serve", fault=_fault_for(spec.name, fault), variants=variants, timeout=10.0)
                 for spec, make in plugged("reference")]
        try:
            app = build_app(service, upp=upp, omf=omf, routes=[r for p in parts for r in p.routes()])
            sock = _bind(host, port)
            url = _url(host, sock.getsockname()[1])
            for part in parts:
                part.attach(url)
            more = "".join(f"; {line}" for line in (p.announce(url) for p in parts) if line)

            def announce() -> None:
                mcp_note = f"MCP at {url}/mcp" if app.state.mcp is not None else "no MCP"
                print(f"memconform: reference UMP server listening on {url} "
                      f"(UMP {', '.join(service.versions)}; capabilities "
                      f"{'required' if require_capability else 'optional'}"
                      f"{'; fault ' + fault if fault else ''}"
                      f"{'; variants ' + ', '.join(variants) if variants else ''}; {mcp_note}; "
                      f"UPP 1.0.0 JSON-RPC at POST {url}/upp, exports in {upp.export_dir}; "
                      f"OMF 1.0 at POST {url}/omf/export|import|preview{more})", file=sys.stderr, flush=True)

            server = _Server(_config(app, "info"), on_started=announce)
            try:
                server.run(sockets=[sock])
            finally:
                sock.close()
        finally:
            for part in parts:
                part.close()
            omf.close()
            upp.close()
    finally:
        service.close()




if __name__ == "__main__":  # python -m memconform.reference_impl.serve [--stdio] …: `memconform serve`
    from memconform.suite.cli import serve as _serve_command

    _serve_command(prog_name="python -m memconform.reference_impl.serve")
