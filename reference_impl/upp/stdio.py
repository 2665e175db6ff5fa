"""UPP over stdio (`memconform serve --upp-stdio`): one JSON-RPC message per line in, one line
per response out (docs/live-upp.md, "Bindings").

stdin is read as bytes, line by line; each non-blank line is one message (a request, a
notification or a batch) handed to `UppService.handle_text`, and its response, if any, is written
as one line: the JSON text (which never holds a raw newline) and `\n`, flushed at once. Blank
lines are no message and get no answer. A line longer than `MAX_LINE` bytes gets one -32600 and
is discarded. stdout carries nothing but responses; the log goes to stderr. At end of input the
service is closed (waiting for background tasks) and the process exits 0.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from memconform.reference_impl.upp.rpc import INVALID_REQUEST, dumps, error_response

log = logging.getLogger("memconform.reference_impl.upp.stdio")

MAX_LINE = 16 << 20  # 16 MiB


def _read_line(stream: BinaryIO) -> tuple[bytes | None, bool]:
    """(line without its newline, too long); (None, False) at end of input. An over-long line
    is consumed to its end so the next message starts cleanly."""
    line = stream.readline(MAX_LINE + 1)
    if not line:
        return None, False
    if len(line) > MAX_LINE and not line.endswith(b"\n"):
        while True:
            rest = stream.readline(MAX_LINE)
            if not rest or rest.endswith(b"\n"):
                break
        return b"", True
    return line.rstrip(b"\r\n"), False


def run(service: Any, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve `service` until end of input, then close it."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    try:
        while True:
            line, too_long = _read_line(stdin)
            if line is None:
                break
            if too_long:
                text: str | None = dumps(error_response(None, INVALID_REQUEST,
                                                        f"Invalid Request: a message longer than {MAX_LINE} bytes"))
            elif not line.strip():
                continue
            else:
                text = service.handle_text(line)
            if text is None:
                continue
            stdout.write(service.line(text))
            stdout.flush()
    except BrokenPipeError:  # the client went away: nothing left to answer
        log.info("stdout closed by the client")
    finally:
        service.close()


def make_upp_service(*, fault: str | None = None, export_dir: str | Path | None = None,
                     import_dirs: Sequence[str | Path] = (), variants: tuple[str, ...] = (),
                     max_batch: int | None = None, max_answer_bytes: int | None = None) -> Any:
    """The service `memconform serve` runs; an export folder it must not use stops the command
    with the reason (exports.UnsafeFolder), not a traceback."""
    from memconform.reference_impl.upp.exports import UnsafeFolder
    from memconform.reference_impl.upp.service import UppService

    limits = {name: value for name, value in (("max_batch", max_batch), ("max_answer_bytes", max_answer_bytes))
              if value is not None}
    try:
        return UppService(fault=fault, export_dir=Path(export_dir) if export_dir else None,
                          import_dirs=[Path(d) for d in import_dirs], variants=variants, **limits)
    except UnsafeFolder as exc:
        raise SystemExit(f"memconform serve: {exc}") from None


def serve_upp_stdio(*, fault: str | None = None, export_dir: str | Path | None = None,
                    import_dirs: Sequence[str | Path] = (), variants: tuple[str, ...] = (),
                    max_batch: int | None = None, max_answer_bytes: int | None = None) -> None:
    """`memconform serve --upp-stdio`: UPP over stdin/stdout until end of input, the log on
    stderr. `fault` must be a UPP fault (or None). Imports nothing of the HTTP stack, so the
    child process a stdio driver starts is ready quickly."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    upp = make_upp_service(fault=fault, export_dir=export_dir, import_dirs=import_dirs, variants=variants,
                           max_batch=max_batch, max_answer_bytes=max_answer_bytes)
    print(f"memconform: reference UPP server over stdio (UPP 1.0.0, ontology {upp.ontology.id}; exports in "
          f"{upp.export_dir}{'; fault ' + upp.fault if upp.fault else ''})", file=sys.stderr, flush=True)
    run(upp)
