"""`memconform oams …` (suite/specs.py `cli = "memconform.suite.oams.cli:oams"`): the reference OAMS
store's export bundles, its stdio server, and judging a file alone.

    memconform oams export --db FILE --out DIR      # writes DIR/oams-export-<timestamp>/, prints its path
    memconform oams import --db FILE PATH            # a bundle folder, its memories.jsonl or a JSONL store
    memconform oams serve --stdio [--db FILE] [--fault NAME] [--variant NAME]…
    memconform oams validate PATH                    # a bundle, JSONL store or Markdown file: its problems

Exit codes as `memconform`'s: 0 fine, 1 a verdict (problems found, an import refused), 2 unreadable input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def oams() -> None:
    """OAMS 0.1: the reference store's export bundles, its stdio server, and a file judged alone."""


@oams.command("export")
@click.option("--db", required=True, type=click.Path(dir_okay=False, path_type=Path), help="the reference's sqlite store")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="where the bundle goes")
def export_command(db: Path, out: Path) -> None:
    """Write the store's live memories as an export bundle (§7) and print its path."""
    from memconform.reference_impl.oams.bundle import export_bundle
    from memconform.reference_impl.oams.engine import OamsService

    service = OamsService(str(db))
    try:
        click.echo(str(export_bundle(service, out)))
    finally:
        service.close()


@oams.command("import")
@click.option("--db", required=True, type=click.Path(dir_okay=False, path_type=Path), help="the reference's sqlite store")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def import_command(db: Path, path: Path) -> None:
    """Import a bundle folder, its memories.jsonl or a JSONL store, in one atomic batch."""
    from memconform.reference_impl.oams.bundle import import_bundle
    from memconform.reference_impl.oams.engine import OamsError, OamsService

    service = OamsService(str(db))
    try:
        click.echo(json.dumps(import_bundle(service, path)))
    except OamsError as exc:
        click.echo(json.dumps(exc.body()), err=True)
        sys.exit(1)
    finally:
        service.close()


@oams.command("serve")
@click.option("--stdio", is_flag=True, required=True, help="JSON-RPC 2.0, one message per line (the only mode here; "
                                                          "HTTP is `memconform serve`)")
@click.option("--db", default=":memory:", help="the sqlite store (default: in memory)")
@click.option("--fault", default=None, help="one OAMS fault (memconform faults)")
@click.option("--variant", "variants", multiple=True, help="an OAMS variant (repeatable)")
def serve_command(stdio: bool, db: str, fault: str | None, variants: tuple[str, ...]) -> None:
    """Serve the reference OAMS over stdio until EOF."""
    from memconform.reference_impl.oams.engine import OamsService
    from memconform.reference_impl.oams.rpc import run_stdio

    service = OamsService(db, fault=fault, variants=variants)
    try:
        run_stdio(service)
    finally:
        service.close()


@oams.command("validate")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--version", "version", default="0.1", show_default=True)
def validate_command(path: Path, version: str) -> None:
    """Judge an export bundle, a JSONL store or a Markdown serialization alone: each problem with
    its requirement id (the suite's `file:` target runs the same rules as checks)."""
    from memconform.targets.oams import OamsFileClient

    try:
        view = OamsFileClient(path, version).read()
    except Exception as exc:  # noqa: BLE001 — unreadable input
        click.echo(f"{path}: cannot read it ({exc})", err=True)
        sys.exit(2)
    for p in view.problems:
        click.echo(f"{p.requirement}: {p}")
    click.echo(f"{path}: {view.kind}, {len(view.memories)} memories, {len(view.problems)} problem(s)")
    sys.exit(1 if view.problems else 0)
