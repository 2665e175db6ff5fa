"""A deliberately broken UPP server over stdio (one misbehaviour per run), for the harness's own tests.

    python upp_stdio.py MODE [--after N] [--once-file PATH]

The reference UPP service answers the first N messages (`--after`, default 0); from then on every
message gets MODE (the misbehaving modes answer requests only, without asking the service, which
is not even loaded while none is answered right: a miniature must start fast on a loaded machine):

  hang      read, never answered (the process stays and keeps reading)
  not-json  answered at once with a line that is not JSON
  huge      answered at once with one 50 MB line (a JSON-RPC response with a long string)
  exit      the process exits with code 3, a last word on stderr
  late      the first message answered right but 2 s late, the rest at once
  not-upp   answered at once with JSON-RPC error -32601 Method not found (another JSON-RPC server)
  good      answered right (a control)

With `--once-file PATH`, `exit` happens only while PATH does not exist (it is created on the way
out): the process a driver restarts then behaves. At the end of input the process ends.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024


def huge_line(message_id: object) -> None:
    out = sys.stdout.buffer
    out.write(b'{"jsonrpc": "2.0", "result": "')
    filler = b"x" * CHUNK
    for _ in range(HUGE // CHUNK):
        out.write(filler)
    out.write(b'", "id": ' + json.dumps(message_id).encode() + b"}\n")
    out.flush()


def request_id(line: bytes) -> object:
    """The id of a request line (None for a notification or what cannot be read)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) else None


def dies(once_file: str | None) -> bool:
    if once_file is None:
        return True
    marker = Path(once_file)
    if marker.exists():
        return False
    marker.write_text("died once\n", encoding="utf-8")
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("hang", "not-json", "huge", "exit", "late", "not-upp", "good"))
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--once-file", default=None)
    args = parser.parse_args()
    service = None
    print(f"upp miniature ({args.mode} after {args.after}) ready", file=sys.stderr, flush=True)
    seen = 0
    try:
        for line in sys.stdin.buffer:
            if not line.strip():
                continue
            seen += 1
            mode = args.mode if seen > args.after else "good"
            if mode == "exit" and not dies(args.once_file):
                mode = "good"
            if mode == "hang":
                continue
            if mode == "exit":
                print(f"upp miniature: exiting after {args.after} messages", file=sys.stderr, flush=True)
                os._exit(3)
            if mode == "late":
                if seen == args.after + 1:
                    time.sleep(2.0)
                mode = "good"
            if mode == "good":
                if service is None:
                    from memconform.reference_impl.upp.stdio import make_upp_service

                    service = make_upp_service()
                text = service.handle_text(line.rstrip(b"\r\n"))
                if text is not None:
                    sys.stdout.write(text + "\n")
            elif (message_id := request_id(line)) is not None:  # notifications get nothing anyway
                if mode == "not-json":
                    sys.stdout.write("OK, done that\n")
                elif mode == "not-upp":
                    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {
                        "code": -32601, "message": "Method not found"}}) + "\n")
                else:
                    huge_line(message_id)
            sys.stdout.flush()
    except BrokenPipeError:
        pass
    finally:
        if service is not None:
            service.close()


if __name__ == "__main__":
    main()
