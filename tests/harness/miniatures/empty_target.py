"""A target that answers everything well and holds nothing, for the guard "absence is never a pass"
(tests/harness/test_nothing_passes_on_nothing.py).

    python empty_target.py http          # UMP (HTTP, and MCP at /mcp), UPP (POST /upp) and OMF
                                         # (POST /omf/…) on one port
    python empty_target.py upp-stdio     # UPP over stdio
    python empty_target.py omf-plain     # as `http`, but OMF keeps what it imports and exports it
                                         # without extensions (no chunk ids, no lifecycle, no edges)
    python empty_target.py omf-cli export --tenant-id T --output FILE [--project-id P] …
    python empty_target.py omf-cli import --tenant-id T --input FILE [--include-archived B]
                                          [--fuzzy-threshold F] --dry-run B
                                         # OMF as a command line (a descriptor's [omf.cli]), empty

It is the reference implementation with its memory taken away, so every answer keeps the
protocol's shape, validation and error codes, and only what a store would give is missing:

* UMP: capabilities as the reference says them; remember validates and answers "created", but
  nothing is written and no event is published, so get/revise/forget/feedback answer not_found,
  recall answers no hits and a subscription stays silent;
* UPP: every method answers a valid empty result: ingest and retrieve `[]`, contextualize no
  events (its task completes with none), get_events `[]` for any user, get_labels `[]`,
  delete_events 0, export_events a package without events, import_events nothing imported;
* OMF: an import validates the document as the reference does and imports nothing (zero
  counts; a preview counts the items it was given and nothing else); an export is a valid
  document with an empty memories array.

`omf-plain` is the other kind of nothing: a producer of plain OMF (as nanomem is) whose export
shows the items' content, tags and category but none of memd's extension, so a check comparing
chunk ids, edges or lifecycle fields has nothing to compare.

Over HTTP its URL is the first line on stdout. The process ends when stdin closes (HTTP) or at
the end of input (stdio), so a test that dies cannot leave it behind.
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any


def _hooks(cls: type, *names: str) -> None:
    """The reference's internals this miniature replaces: should one be renamed, the miniature
    would silently hold things again, so it stops with the reason instead."""
    missing = [n for n in names if not hasattr(cls, n)]
    if missing:
        raise SystemExit(f"empty_target: {cls.__qualname__} has no {', '.join(missing)} any more; "
                         "update tests/harness/miniatures/empty_target.py")


def empty_ump() -> Any:
    from memconform.reference_impl.ump.serve import make_service

    service = make_service()
    _hooks(type(service), "_publish")
    if not hasattr(service, "_store") or not hasattr(service._store, "insert"):
        raise SystemExit("empty_target: UmpService._store.insert is gone; update this miniature")
    # Nothing written means nothing found later: the answers stay the reference's own.
    service._store.insert = lambda *args, **kwargs: 0
    service._publish = lambda *args, **kwargs: None
    return service


def empty_upp(export_dir: str) -> Any:
    from memconform.reference_impl.upp.service import UppService

    _hooks(UppService, "_extract_and_store", "_known_user", "_get_labels", "_no_params", "_store_imported")

    class EmptyUpp(UppService):
        def _extract_and_store(self, entity_key: str, text: str) -> list[Any]:
            return []

        def _known_user(self, entity_key: str) -> None:
            return None  # every user is there, with no events

        def _get_labels(self, raw: Any) -> Any:
            self._no_params(raw, "upp/get_labels")
            return []

        def _store_imported(self, key: str, events: list[Any]) -> dict[str, Any]:
            return {"imported_count": 0, "skipped_count": 0}

    from pathlib import Path

    return EmptyUpp(export_dir=Path(export_dir), import_dirs=[Path(export_dir)])


def empty_omf() -> Any:
    from memconform.reference_impl.omf import OmfEngine, OmfStore

    _hooks(OmfEngine, "_land", "resolve_item")

    class EmptyOmf(OmfEngine):
        def _land(self, run: Any, index: int, item: Any) -> None:
            # validated like the reference (a bad item still refuses the document), never counted
            self.resolve_item(index, item, run.source_trusted, run.now_ms)

    return EmptyOmf(OmfStore(":memory:"))


def plain_omf() -> Any:
    from memconform.reference_impl.omf import OmfEngine, OmfStore

    _hooks(OmfEngine, "_export_item")

    class PlainOmf(OmfEngine):
        def _export_item(self, row: Any, now_ms: int) -> dict[str, Any]:
            item = super()._export_item(row, now_ms)
            item.pop("extensions", None)
            return item

    return PlainOmf(OmfStore(":memory:"))


def omf_cli(argv: list[str]) -> int:
    """One OMF command as docs/descriptors.md asks it to print; a process holds no store, so every
    export is empty and every import imports nothing."""
    import argparse
    import json

    from memconform.reference_impl.omf import ValidationError

    parser = argparse.ArgumentParser(prog="empty_target.py omf-cli")
    parser.add_argument("operation", choices=("export", "import"))
    parser.add_argument("--tenant-id", required=True)
    parser.add_argument("--project-id")
    parser.add_argument("--output")
    parser.add_argument("--input")
    parser.add_argument("--include-history", "--include-superseded", "--include-expired", "--include-archived",
                        dest="ignored", action="append")
    parser.add_argument("--fuzzy-threshold", type=float)
    parser.add_argument("--dry-run", default="false")
    args = parser.parse_args(argv)
    engine = empty_omf()
    try:
        if args.operation == "export":
            with open(args.output, "w", encoding="utf-8") as out:
                count = engine.export(out, args.tenant_id, project_id=args.project_id)
            print(json.dumps({"exported": count, "output": args.output}))
            return 0
        with open(args.input, "rb") as f:
            document = json.loads(f.read())
        run = engine.preview if args.dry_run == "true" else engine.import_document
        print(json.dumps(run(args.tenant_id, document, fuzzy_threshold=args.fuzzy_threshold)))
        return 0
    except (ValueError, RecursionError, ValidationError) as exc:  # not JSON, or not a valid document
        print(json.dumps({"error": {"code": "validation", "message": str(exc)[:500]}}))
        return 2
    finally:
        engine.close()


def wait_for_stdin_to_close() -> None:
    sys.stdin.buffer.read()


def serve_http(export_dir: str, *, plain: bool = False) -> None:
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.reference_impl.ump.serve import start_in_thread

    ump, upp, omf = empty_ump(), empty_upp(export_dir), plain_omf() if plain else empty_omf()
    server = start_in_thread(ump, app=build_app(ump, upp=upp, omf=omf, mcp=True))  # MCP at /mcp
    print(server.base_url, flush=True)
    wait_for_stdin_to_close()  # the server runs in a daemon thread: it ends with the process


def serve_stdio(export_dir: str) -> None:
    upp = empty_upp(export_dir)
    try:
        for line in sys.stdin.buffer:
            if not line.strip():
                continue
            text = upp.handle_text(line.rstrip(b"\r\n"))
            if text is not None:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
    except BrokenPipeError:
        pass
    finally:
        upp.close()


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "http"
    if mode == "omf-cli":
        raise SystemExit(omf_cli(sys.argv[2:]))
    with tempfile.TemporaryDirectory(prefix="empty-upp-exports-") as export_dir:
        if mode in ("http", "omf-plain"):
            serve_http(export_dir, plain=mode == "omf-plain")
        elif mode == "upp-stdio":
            serve_stdio(export_dir)
        else:
            raise SystemExit(f"unknown mode {mode!r}: http, omf-plain or upp-stdio")


if __name__ == "__main__":
    main()
