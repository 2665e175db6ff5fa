"""A tiny server for the descriptor tests: answers every GET with JSON saying who it is.

    echo_server.py --port PORT [--say-ready TEXT] [--exit-before-ready CODE] [--never-ready]
                   [--ignore-term] [--child]

GET /        → {"pid", "cwd", "echo": $ECHO_VALUE, "argv", "child": pid of --child or null}
GET /shutdown → answers, then exits 0 (what a [stop] command can ask for)

It prints its ready line with a plain print(): to a pipe that is block-buffered unless
PYTHONUNBUFFERED is set, which is what the harness sets for a ready_line to be seen in time.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--say-ready", default="echo server ready")
    parser.add_argument("--exit-before-ready", type=int, default=None)
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--child", action="store_true", help="start a sleeping child in the same process group")
    args = parser.parse_args()

    if args.exit_before_ready is not None:
        print("echo server: fatal: no configuration found", file=sys.stderr)
        sys.exit(args.exit_before_ready)
    if args.never_ready:
        print("echo server: booting, forever")
        while True:
            time.sleep(1)
    if args.ignore_term:
        signal.signal(signal.SIGTERM, lambda *_: print("echo server: ignoring SIGTERM"))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) if args.child else None

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = json.dumps({"pid": os.getpid(), "cwd": os.getcwd(), "echo": os.environ.get("ECHO_VALUE"),
                               "argv": sys.argv, "child": child.pid if child else None}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            if self.path == "/shutdown":
                threading.Thread(target=server.shutdown, daemon=True).start()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"{args.say_ready} on port {args.port}")  # no flush: see the module docstring
    server.serve_forever()
    print("echo server: shut down by /shutdown")


if __name__ == "__main__":
    main()
