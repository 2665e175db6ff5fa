"""The reference UMP server over MCP stdio that dies mid-run, for the harness's own tests.

    python mcp_stdio.py --die-on OPERATION [--die-after N] [--once-file PATH]
    python mcp_stdio.py --hang-after N [--garbage]
    python mcp_stdio.py --refuse-tokens

It is `memconform serve --stdio` (the reference MCPServer over a UmpService) except that the
service is wrapped: the (N+1)-th call of OPERATION (`remember`, `capabilities`, …; N defaults to 0)
ends the process at once (exit code 3, a last word on stderr), without an answer. With `--once-file PATH` it dies only while PATH does
not exist (creating it on the way out), so the process a driver restarts keeps going; without,
every process it is started as dies the same way.

With `--hang-after N` it never dies: the first N operations of each process are answered (the
driver's discovery asks for capabilities), and every later one is never answered (the process
stays, alive and broken). With `--garbage` as well, each such operation first writes a line
that is not JSON on stdout (`OK, done that`), then hangs.

With `--refuse-tokens` every operation but capabilities is refused `unauthorized`.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any


class DyingService:
    """A UmpService that ends the process on the (N+1)-th call of one operation."""

    def __init__(self, service: Any, die_on: str, die_after: int, once_file: str | None):
        self._service = service
        self._die_on = die_on
        self._left = die_after
        self._once_file = Path(once_file) if once_file else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._service, name)

    def _dies(self) -> bool:
        if self._once_file is None:
            return True
        if self._once_file.exists():
            return False
        self._once_file.write_text("died once\n", encoding="utf-8")
        return True

    def handle(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        if operation == self._die_on:
            self._left -= 1
        if self._left < 0 and self._dies():
            print(f"mcp miniature: dying on {operation}", file=sys.stderr, flush=True)
            os._exit(3)
        return self._service.handle(operation, *args, **kwargs)


class HangingService:
    """A UmpService whose operations after the first N never return."""

    def __init__(self, service: Any, after: int, garbage_fd: int | None = None):
        self._service = service
        self._left = after
        self._lock = threading.Lock()
        self._garbage_fd = garbage_fd

    def __getattr__(self, name: str) -> Any:
        return getattr(self._service, name)

    def handle(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self._left -= 1
            hangs = self._left < 0
        if hangs:
            print(f"mcp miniature: hanging on {operation}", file=sys.stderr, flush=True)
            if self._garbage_fd is not None:
                os.write(self._garbage_fd, b"OK, done that\n")
            threading.Event().wait()
        return self._service.handle(operation, *args, **kwargs)


class TokenRefusingService:
    """A UmpService that refuses every operation but capabilities as unauthorized: a server reading
    another capability-token encoding than the suite mints (round 20's, over HTTP)."""

    def __init__(self, service: Any):
        self._service = service

    def __getattr__(self, name: str) -> Any:
        return getattr(self._service, name)

    def handle(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        if operation != "capabilities":
            from memconform.reference_impl.ump.engine import UmpError

            raise UmpError("unauthorized", "token signature does not verify")
        return self._service.handle(operation, *args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--die-on", default=None)
    parser.add_argument("--hang-after", type=int, default=None)
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--die-after", type=int, default=0)
    parser.add_argument("--once-file", default=None)
    parser.add_argument("--refuse-tokens", action="store_true")
    args = parser.parse_args()
    from memconform.reference_impl.ump import mcp_app
    from memconform.reference_impl.ump.serve import make_service

    service = make_service()
    if args.hang_after is not None:
        print(f"mcp miniature: hangs after {args.hang_after} calls", file=sys.stderr, flush=True)
        # the SDK points fd 1 at stderr while it serves: garbage goes to a copy of the real stdout
        mcp_app.run_stdio(HangingService(service, args.hang_after, os.dup(1) if args.garbage else None))
        return
    if args.refuse_tokens:
        print("mcp miniature: refuses every token", file=sys.stderr, flush=True)
        mcp_app.run_stdio(TokenRefusingService(service))
        return
    if args.die_on is None:
        parser.error("--die-on, --hang-after or --refuse-tokens")
    print(f"mcp miniature: dies on {args.die_on} after {args.die_after} calls", file=sys.stderr, flush=True)
    mcp_app.run_stdio(DyingService(service, args.die_on, args.die_after, args.once_file))


if __name__ == "__main__":
    main()
