"""The `memconform` command.

Exit codes: 0 all good; 1 a verdict against the input (a signature that does not verify, a
manifest that does not match, failed checks); 2 input that could not be read (a malformed
file or record, a bad option) — always with the file, the JSON pointer and the requirement;
`run` adds pytest's 4 (usage) and 69 when the target could not be judged (suite/exit_codes.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from memconform.suite.cli_reports import baseline_write, report_sign, report_verify
from memconform.suite.cli_run import RunCommand

MALFORMED = 2
VERDICT = 1


def main() -> None:
    cli(prog_name="memconform")


class _Commands(click.Group):
    """Commands whose module loads heavy libraries are imported only when named (click's lazy
    subcommand pattern): `memconform omf …` runs as a vendor's CLI in every OMF check and must
    start fast, and the converters load jsonschema's format checks (over a second)."""

    LAZY = {"convert": ("memconform.suite.convert.cli", "convert"),
            "faults": ("memconform.suite.cli_faults", "faults"),
            "variants": ("memconform.suite.cli_variants", "variants"),
            "token": ("memconform.suite.cli_token", "token")}

    @classmethod
    def _lazy(cls) -> dict[str, tuple[str, str]]:
        """The commands above and those the specs plug in (suite/specs.py, `cli`)."""
        from memconform.suite.specs import SPECS

        plugged = {name: tuple(spec.cli.split(":", 1)) for name, spec in SPECS.items() if spec.cli}
        return {**cls.LAZY, **plugged}  # type: ignore[dict-item]

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        lazy = self._lazy()
        if name in lazy and name not in super().list_commands(ctx):
            import importlib

            module, attr = lazy[name]
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memconform")
def cli() -> None:
    """Conformance suite and interop harness for agent-memory protocols (UMP, UPP, OMF, OAMS, memoturn)."""


# -- run -------------------------------------------------------------------------------------

@cli.command(cls=RunCommand, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def run(pytest_args: tuple[str, ...]) -> None:
    """Run the suite: `memconform run --target=reference [pytest options]`.

    Takes the same options as `pytest --target=…` (--target, --spec, --level, --binding,
    --strict, --memconform-strict, --report, --timeout, -n with pytest-xdist, …), collects only the
    shipped checks, and defaults to `--target=reference` when no target is given.

    Shows live progress per spec, level and binding (on a terminal; plain lines in a log) and
    ends with the level table; --no-progress gives pytest's own output instead.

    Exit status: 0 conformant as asked; 1 a check failed; 4 a usage error (an unknown --spec,
    --binding or target); 69 the target could not be judged (every item that did not pass is a
    target error: unreachable, crashed, not the protocol).
    """
    import pytest

    args = list(pytest_args)
    progress = "--no-progress" not in args
    args = [a for a in args if a != "--no-progress"]
    if not any(a == "--target" or a.startswith("--target=") for a in args):
        click.echo("memconform: no --target given; judging the built-in reference implementation", err=True)
        args.append("--target=reference")
    plugins = ["-p", "memconform.suite.progress"] if progress else []
    # the checks use hypothesis and schemathesis as libraries; their pytest plugins only cost start-up
    quiet = ["-p", "no:cacheprovider", "-p", "no:schemathesis", "-p", "no:hypothesispytest"]
    sys.exit(int(pytest.main(["--memconform-only", *quiet, *plugins, *args])))


# -- vectors ---------------------------------------------------------------------------------

@cli.group()
def vectors() -> None:
    """The signed golden vectors shipped with the suite."""


@vectors.command("verify")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="a vectors folder to check instead of the installed one")
def vectors_verify(root: Path | None) -> None:
    """Check every vector file against the signed MANIFEST.json."""
    from memconform.vectors import manifest

    report = manifest.verify(root)
    if report.ok:
        count = len(manifest.vector_files(root))
        click.echo(f"vectors OK: {count} files match MANIFEST.json, signed by {manifest.release_did()}")
        return
    for file, problem in report.problems:
        click.echo(f"{file}: {problem}", err=True)
    sys.exit(VERDICT)


@vectors.command("sign")
@click.option("--key", "key_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the release seed (hex); default $MEMCONFORM_VECTORS_KEY or ../shared/keys")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=None)
def vectors_sign(key_path: Path | None, root: Path | None) -> None:
    """Rewrite MANIFEST.json's hashes and sign it with the release key."""
    from memconform.vectors import manifest

    try:
        seed = manifest.load_seed(key_path)
        manifest.sign(seed, root)
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo("MANIFEST.json signed")


# -- report ----------------------------------------------------------------------------------

def _read_report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        click.echo(f"{path}: cannot read the report: {exc}", err=True)
        sys.exit(MALFORMED)
    if not isinstance(data, dict) or data.get("format") != "memconform-report/1":
        click.echo(f"{path}: not a memconform report (format memconform-report/1)", err=True)
        sys.exit(MALFORMED)
    return data


def _report_with_results(path: Path) -> dict[str, Any]:
    """The report, or exit 2 when it judged nothing: a page or badge of nothing would look like a verdict."""
    data = _read_report(path)
    if not data.get("results") and not data.get("levels") and not data.get("interop"):
        click.echo(f"{path}: the report holds no results (nothing ran: --collect-only, or --spec/--binding/"
                   f"--check/--level that matched no check); nothing to render", err=True)
        sys.exit(MALFORMED)
    return data


@cli.group()
def report() -> None:
    """Render the JSON report a run writes (memconform-report.json, or --report PATH) for people:
    an HTML page, badges."""


# Signing and baselines live in their own module (one concern each) and join these groups.
report.add_command(report_sign, "sign")
report.add_command(report_verify, "verify")


@cli.group()
def baseline() -> None:
    """Expected-failure baselines for `pytest --baseline FILE`."""


baseline.add_command(baseline_write, "write")


@cli.command("replay")
@click.argument("report_path", metavar="REPORT", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("check_id", metavar="CHECK_ID")
@click.option("--target", "target", default=None, help="only the results of this target (its label in the report)")
@click.option("--binding", default=None, help="only this binding (http, mcp, stdio, file, cli)")
@click.option("--version", "version", default=None, help="only this spec version")
def replay(report_path: Path, check_id: str, target: str | None, binding: str | None, version: str | None) -> None:
    """Re-run one check of an earlier run exactly as it ran: same target, spec version, binding and
    case, the seed its property-based generator drew with, the run's timeout and fuzzing effort.

    CHECK_ID is a check id (`ump/l1/openapi-fuzz`), a case (`ump/l1/bad-input[huge-body]`) or a node id
    from the report. Each matching result is replayed; the exit status is 0 when every replay passed.
    The target must be reachable again (a live server restarted at the same address)."""
    from memconform.suite.replay import ReplayError, replays, run_replay

    try:
        chosen = replays(_read_report(report_path), check_id, target=target, binding=binding, version=version)
    except ReplayError as exc:
        click.echo(f"{report_path}: {exc}", err=True)
        sys.exit(MALFORMED)
    worst = 0
    for item in chosen:
        done = run_replay(item, echo=click.echo)
        now = done.outcome or "no result"
        click.echo(f"{item.title}: was {item.outcome}, now {now}"
                   + (f" ({done.reason.splitlines()[0]})" if done.reason and done.outcome != "passed" else ""))
        worst = max(worst, done.exit_code if done.outcome is not None else max(done.exit_code, 1))
    sys.exit(worst)


@report.command("html")
@click.argument("report_path", metavar="REPORT", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="write the page here (default: stdout)")
def report_html(report_path: Path, output: Path | None) -> None:
    """One self-contained HTML page: the level table (what each target reached and what blocks the
    next level), every failure, then the requirements, the coverage matrix and the run's options."""
    from memconform.reports.html import render_html

    _emit(render_html(_report_with_results(report_path)), output)


@cli.command("compare")
@click.argument("reports", metavar="REPORT...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="also write the side-by-side page (self-contained HTML) here")
@click.option("--all", "everything", is_flag=True, default=False,
              help="print every section in full and every requirement, not a screen's worth")
def compare(reports: tuple[Path, ...], html_out: Path | None, everything: bool) -> None:
    """What changed from the first report: level changes, then MUST regressions (passed, now failed),
    then fixes; requirements judged on one side only are counted apart."""
    from memconform.reports.compare import comparison, render_html, render_terminal

    cmp = comparison([(p.name, _read_report(p)) for p in reports])
    click.echo(render_terminal(cmp, everything=everything), nl=False)
    if html_out is not None:
        _emit(render_html(cmp), html_out)


@report.command("badge")
@click.argument("report_path", metavar="REPORT", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="folder to write the badges into (created if missing)")
def report_badge(report_path: Path, out_dir: Path) -> None:
    """Per spec/version: <spec>-<version>.svg and a shields.io endpoint <spec>-<version>.json
    (prefixed <target>- when the report judged more than one target)."""
    import re

    from memconform.reports.badge import badge_rows, badge_svg, shields_endpoint

    rows = badge_rows(_report_with_results(report_path))
    several = len({r["target"] for r in rows}) > 1
    out_dir.mkdir(parents=True, exist_ok=True)
    for row in rows:
        stem = f"{row['target']}-{row['spec']}-{row['version']}" if several else f"{row['spec']}-{row['version']}"
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", stem)  # labels are free text: keep them inside out_dir
        (out_dir / f"{stem}.svg").write_text(badge_svg(row), encoding="utf-8")
        (out_dir / f"{stem}.json").write_text(json.dumps(shields_endpoint(row)) + "\n", encoding="utf-8")
        click.echo(out_dir / f"{stem}.svg")
        click.echo(out_dir / f"{stem}.json")


# -- record ----------------------------------------------------------------------------------

def _load_or_exit(path: Path) -> list[tuple[str, dict[str, Any]]]:
    from memconform.suite.ump import files

    loaded = files.load(path)
    for p in loaded.problems:
        click.echo(f"{p.source}{' ' + p.pointer if p.pointer else ''}: {p.message} [{p.requirement}]", err=True)
    out = []
    for loc in loaded.records:
        where = f"{loc.source}{' ' + loc.pointer if loc.pointer else ''}"
        if not isinstance(loc.record, dict):
            click.echo(f"{where}: a record must be a JSON object [ump/record-field-types]", err=True)
            continue
        out.append((where, loc.record))
    if loaded.problems or len(out) != len(loaded.records):
        sys.exit(MALFORMED)
    if not out:
        click.echo(f"{path}: no UMP records found", err=True)
        sys.exit(MALFORMED)
    return out


def _schema_problems(where: str, rec: dict[str, Any]) -> list[str]:
    from memconform.suite.ump import record as ump_record

    return [f"{where} {v.pointer or '/'}: {v.message} [{v.requirement}]" for v in ump_record.validate(rec)]


@cli.group()
def record() -> None:
    """Debug your own UMP records: hash, sign, verify, convert."""


@record.command("hash")
@click.argument("file", type=click.Path(path_type=Path))
def record_hash(file: Path) -> None:
    """Print each record's content_hash and content-addressed id."""
    from memconform.suite.ump import ids, integrity

    for where, rec in _load_or_exit(file):
        click.echo(f"{where}\n  content_hash: {integrity.content_hash(rec)}\n"
                   f"  content-addressed id: {ids.content_addressed_id(rec)}")


@record.command("verify")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--require-integrity", is_flag=True, help="a record without integrity fails (L3)")
def record_verify(file: Path, require_integrity: bool) -> None:
    """Validate each record against its version's schema and verify its integrity block."""
    from memconform.suite.ump import integrity

    malformed, bad = False, False
    for where, rec in _load_or_exit(file):
        problems = _schema_problems(where, rec)
        for p in problems:
            click.echo(p, err=True)
        malformed |= bool(problems)
        report = integrity.verify(rec)
        if not report.present:
            if require_integrity:
                click.echo(f"{where}: no integrity block [ump/integrity-required]", err=True)
                bad = True
            elif not problems:
                click.echo(f"{where}: valid, unsigned")
            continue
        # a signature over another literal reading of "sign the hash" is the interop class's only, as
        # in a suite run (round 19: every raw-digest signature read as broken here)
        reading = integrity.signed_over(rec)
        other_input = reading not in (None, integrity.SIGNATURE_INPUTS[0])
        blocking = [p for p in report.problems if not (other_input and p.requirement == integrity.REQ_SIGNATURE)]
        for p in blocking:
            click.echo(f"{where} {p.pointer}: {p.message} [{p.requirement}]", err=True)
        if other_input:
            over = {"digest": "raw 32-byte BLAKE3 digest", "hash-string": "content_hash string itself"}.get(reading, reading)
            click.echo(f"{where}: the signature verifies over the {over} (a literal reading of \"sign the hash\" "
                       "the suite takes); the public implementation signs BLAKE3 of the content_hash string "
                       "[ump/integrity-signature, class ump-reference-interop: not required unless --require-class]")
        bad |= bool(blocking)
        if not blocking and not problems:
            click.echo(f"{where}: valid, signature verifies (signer {rec['integrity']['signer']}, owner)")
    sys.exit(MALFORMED if malformed else VERDICT if bad else 0)


@record.command("sign")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--key", "key_path", type=click.Path(dir_okay=False, path_type=Path),
              help="file holding the owner's 32-byte Ed25519 seed in hex")
@click.option("--test-key", type=click.Choice(["owner-a", "owner-b", "mallory"]),
              help="sign with one of the suite's public test keys")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
def record_sign(file: Path, key_path: Path | None, test_key: str | None, output: Path | None) -> None:
    """Sign each record (replacing any integrity block) and print them as a JSON array."""
    from nacl.signing import SigningKey

    from memconform.suite.ump import files, integrity
    from memconform.suite.ump.testkeys import test_signing_key

    if bool(key_path) == bool(test_key):
        raise click.UsageError("give exactly one of --key or --test-key")
    if test_key:
        key = test_signing_key(test_key)
    else:
        try:
            key = SigningKey(bytes.fromhex(key_path.read_text().strip()))
        except (OSError, ValueError) as exc:
            click.echo(f"{key_path}: not a 32-byte hex Ed25519 seed ({exc})", err=True)
            sys.exit(MALFORMED)
    signed = []
    for where, rec in _load_or_exit(file):
        problems = _schema_problems(where, rec)
        if problems:
            click.echo("\n".join(problems), err=True)
            sys.exit(MALFORMED)
        signed.append(integrity.sign(rec, key))
    _emit(files.dump_json(signed), output)


@record.command("to-md")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="a folder to write one .ump.md per record into (default: print)")
@click.option("--front-matter", type=click.Choice(["yaml", "json"]), default="yaml")
def record_to_md(file: Path, output: Path | None, front_matter: str) -> None:
    """Project records to the Markdown form (§6.3)."""
    from memconform.suite.ump import files, markdown

    records = [rec for _, rec in _load_or_exit(file)]
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        for path in files.write_md_folder(records, output):
            click.echo(str(path))
        return
    click.echo("\n".join(markdown.to_markdown(r, front_matter=front_matter) for r in records), nl=False)


@record.command("to-json")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--ndjson", is_flag=True, help="one record per line instead of an array")
def record_to_json(file: Path, output: Path | None, ndjson: bool) -> None:
    """Read records (.ump.md, .ump.json, NDJSON or a folder) and print them as .ump.json."""
    from memconform.suite.ump import files

    records = [rec for _, rec in _load_or_exit(file)]
    _emit(files.dump_ndjson(records) if ndjson else files.dump_json(records), output)


# -- omf -------------------------------------------------------------------------------------

OMF_DEFAULT_DB = "memconform-omf.sqlite"
# A store failure (locked, not a database) is exit 1 with {"error": {"code": "store"}}; bad input is 2.


class _TrueFalse(click.ParamType):
    """memd's explicit boolean shape (clap's ArgAction::Set): exactly `true` or `false`."""

    name = "true|false"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> bool:
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        self.fail(f"{value!r} is not true or false", param, ctx)


_TF = _TrueFalse()


def _check_omf_fault(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    value = _check_fault(ctx, param, value)
    if value is not None and not value.startswith("omf-"):
        raise click.BadParameter(f"{value!r} is not an OMF fault (omf-...)")
    return value


def _omf_fail(code: str, message: str, exit_code: int) -> None:
    click.echo(json.dumps({"error": {"code": code, "message": message}}))  # ASCII: safe in any locale
    sys.exit(exit_code)


def _omf_engine(db: str, fault: str | None, *, read_only: bool = False, variants: tuple[str, ...] = ()) -> Any:
    from memconform.reference_impl.omf import make_engine

    # A dry run against a store that does not exist yet sees the same (empty) state in memory,
    # and so creates no file (memd defers materialising the tenant to the real write).
    if read_only and db != ":memory:" and not Path(db).exists():
        db = ":memory:"
    try:
        return make_engine(db, fault=fault, variants=variants)
    except Exception as exc:  # sqlite: not a database, unwritable folder …
        _omf_fail("store", f"cannot open the store {db}: {exc}", VERDICT)


_omf_db = click.option("--db", default=OMF_DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False),
                       help="sqlite file of the OMF store, shared by successive invocations")
_omf_fault = click.option("--fault", default=None, callback=_check_omf_fault, metavar="NAME",
                          help="run with one deliberate OMF defect switched on (omf-...)")
_omf_variant = click.option("--variant", "variants", multiple=True, metavar="NAME",
                            callback=lambda ctx, param, value: _check_variants(ctx, param, value),
                            help="run with a legitimate OMF reading made the other way (repeatable; "
                                 "`memconform variants --spec omf`)")


@cli.group()
def omf() -> None:
    """OMF 1.0 (memd's Open Memory Format) reference: export, import, preview (docs/omf.md)."""


@omf.command("export")
@click.option("--tenant-id", required=True)
@click.option("--project-id", default=None)
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="write the document here and print {exported, output}; omit for stdout")
@click.option("--include-history", type=_TF, default=False, show_default=True)
@click.option("--include-superseded", type=_TF, default=True, show_default=True)
@click.option("--include-expired", type=_TF, default=True, show_default=True)
@_omf_db
@_omf_fault
@_omf_variant
def omf_export(tenant_id: str, project_id: str | None, output: str | None, include_history: bool,
               include_superseded: bool, include_expired: bool, db: str, fault: str | None,
               variants: tuple[str, ...]) -> None:
    """Export a tenant's memories as an OMF 1.0 document."""
    import io
    import sqlite3

    from memconform.reference_impl.omf import ValidationError

    engine = _omf_engine(db, fault, variants=variants)
    flags = {"project_id": project_id, "include_history": include_history,
             "include_superseded": include_superseded, "include_expired": include_expired}
    try:
        if output is None:
            # UTF-8 whatever the locale: memory text is arbitrary Unicode.
            out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=False)
            engine.export(out, tenant_id, **flags)
            out.flush()
            out.detach()
            return
        try:
            with open(output, "w", encoding="utf-8") as out:
                count = engine.export(out, tenant_id, **flags)
        except OSError as exc:
            _omf_fail("output", f"cannot write {output}: {exc.strerror or exc}", MALFORMED)
        click.echo(json.dumps({"exported": count, "output": output}))
    except ValidationError as exc:
        _omf_fail("validation", str(exc), MALFORMED)
    except sqlite3.Error as exc:
        _omf_fail("store", f"the store {db} failed: {exc}", VERDICT)
    finally:
        engine.close()


def _omf_read(input_path: str | None) -> Any:
    """The document from a path, or stdin for `-` / no --input; not JSON → a validation error."""
    try:
        if input_path in (None, "-"):
            raw = sys.stdin.buffer.read()
        else:
            with open(input_path, "rb") as f:
                raw = f.read()
    except OSError as exc:
        _omf_fail("input", f"cannot read {input_path}: {exc.strerror or exc}", MALFORMED)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        reason = exc if isinstance(exc, ValueError) else "nested too deeply"
        _omf_fail("validation", f"the document is not valid JSON: {reason}", MALFORMED)


def _omf_import(tenant_id: str, input_path: str | None, include_archived: bool, fuzzy_threshold: float | None,
                dry_run: bool, db: str, fault: str | None, variants: tuple[str, ...] = ()) -> None:
    import sqlite3

    from memconform.reference_impl.omf import ValidationError

    document = _omf_read(input_path)
    engine = _omf_engine(db, fault, read_only=dry_run, variants=variants)
    try:
        run = engine.preview if dry_run else engine.import_document
        result = run(tenant_id, document, include_archived=include_archived, fuzzy_threshold=fuzzy_threshold)
    except ValidationError as exc:
        _omf_fail("validation", str(exc), MALFORMED)
    except sqlite3.Error as exc:  # locked by another writer, disk full, not a database …
        _omf_fail("store", f"the store {db} failed: {exc}", VERDICT)
    finally:
        engine.close()
    click.echo(json.dumps(result))  # ASCII-escaped: safe in any locale


_omf_import_options = [
    click.option("--tenant-id", required=True),
    click.option("--input", "input_path", default=None, metavar="PATH|-",
                 help="the document to read; - or omitted: stdin"),
    click.option("--include-archived", type=_TF, default=True, show_default=True),
    click.option("--fuzzy-threshold", type=click.FloatRange(0.0, 1.0), default=None,
                 help="also dedupe on trigram Jaccard similarity at or above F"),
]


def _with(options: list[Any]) -> Any:
    def wrap(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn
    return wrap


@omf.command("import")
@_with(_omf_import_options)
@click.option("--dry-run", type=_TF, default=False, show_default=True, help="true: preview, write nothing")
@_omf_db
@_omf_fault
@_omf_variant
def omf_import(tenant_id: str, input_path: str | None, include_archived: bool, fuzzy_threshold: float | None,
               dry_run: bool, db: str, fault: str | None, variants: tuple[str, ...]) -> None:
    """Import an OMF 1.0 document; prints {imported, duplicates, skipped} (or, dry run, the preview)."""
    _omf_import(tenant_id, input_path, include_archived, fuzzy_threshold, dry_run, db, fault, variants)


@omf.command("preview")
@_with(_omf_import_options)
@_omf_db
@_omf_fault
@_omf_variant
def omf_preview(tenant_id: str, input_path: str | None, include_archived: bool, fuzzy_threshold: float | None,
                db: str, fault: str | None, variants: tuple[str, ...]) -> None:
    """What `import` would do, writing nothing (= import --dry-run true)."""
    _omf_import(tenant_id, input_path, include_archived, fuzzy_threshold, True, db, fault, variants)


# -- serve -----------------------------------------------------------------------------------

def _check_fault(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from memconform.reference_impl.faults import FAULTS

    if value not in FAULTS:
        raise click.BadParameter(f"unknown fault {value!r}; known faults: {', '.join(sorted(FAULTS))}")
    return value


def _check_variants(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from memconform.reference_impl.variants import VariantError, check_names

    try:
        return check_names(value)
    except VariantError as exc:
        raise click.BadParameter(str(exc)) from None


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", default=8700, show_default=True, type=click.IntRange(0, 65535),
              help="port to listen on (0: any free port; the URL is printed to stderr)")
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help="sqlite file to keep the UMP store in (default: in memory, gone on exit)")
@click.option("--require-capability/--no-require-capability", default=True, show_default=True,
              help="refuse every UMP operation but capabilities without a valid capability token "
                   "(Authorization: Bearer). On by default because L3 requires capability tokens; "
                   "--no-require-capability serves anonymous requests (below L3)")
@click.option("--fault", default=None, callback=_check_fault, metavar="NAME",
              help="serve with one deliberate defect switched on (`memconform faults` lists them); a UPP "
                   "fault (upp-...) goes to the UPP server, an OMF fault (omf-...) to /omf/..., any other to "
                   "the UMP server")
@click.option("--variant", "variants", multiple=True, callback=_check_variants, metavar="NAME",
              help="serve with a legitimate reading the spec leaves open made the other way (repeatable; "
                   "`memconform variants` lists them); each goes to the server of its spec")
@click.option("--stdio", is_flag=True,
              help="speak UMP over MCP on stdin/stdout instead of HTTP (stdout carries only the protocol)")
@click.option("--upp-stdio", is_flag=True,
              help="speak UPP (JSON-RPC 2.0) on stdin/stdout instead of HTTP: one message per line in, one "
                   "line per response out, the log on stderr; exits at end of input")
@click.option("--upp-export-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="folder UPP's export_events writes into (default: memconform-upp-exports-<uid> in the "
                   "system temporary folder, made mode 0700 and refused when another user owns or can read "
                   "it); import_events may read it")
@click.option("--upp-import-dir", "upp_import_dirs", type=click.Path(file_okay=False), multiple=True,
              metavar="DIR", help="a further folder UPP's import_events may read files from (repeatable); "
                                  "files anywhere else are refused")
@click.option("--upp-max-batch", type=click.IntRange(min=1), default=None, metavar="N",
              help="most requests one UPP JSON-RPC batch may hold (default 100); a longer batch is refused whole "
                   "with one -32600 before any of it runs")
@click.option("--upp-max-answer", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="size a UPP batch's answer may reach (default 4 MiB, 4194304); the requests after are not "
                   "carried out and each gets -32000")
@click.option("--omf-db", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="sqlite file of the OMF store served at POST /omf/... (default: in memory)")
@click.option("--omf-max-body", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="largest request body POST /omf/... reads (default 16 MiB, 16777216); a larger one is "
                   "answered 413 before it is read whole (docs/omf.md)")
@click.option("--owners", "owners_file", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="hold these owners' keys instead of the suite's test keys: a descriptor or owners file whose "
                   "[ump.owners.NAME] tables give seeds (docs/vendor-keys.md); the server signs their records "
                   "and honours their tokens")
def serve(host: str, port: int, db: str | None, require_capability: bool, fault: str | None,
          variants: tuple[str, ...], stdio: bool, upp_stdio: bool, upp_export_dir: str | None,
          upp_import_dirs: tuple[str, ...], omf_db: str | None, owners_file: str | None,
          omf_max_body: int | None, upp_max_batch: int | None, upp_max_answer: int | None) -> None:
    """Run the reference servers: UMP over HTTP (§4.2, SSE subscribe, /.well-known/ump.json,
    /openapi.json) with MCP streamable HTTP at /mcp, UPP 1.0.0 (JSON-RPC 2.0) at POST /upp, OMF at
    /omf, and the routes of every spec plugged in through suite/specs.py (the banner says where each
    answers); or UMP over MCP stdio with --stdio; or UPP over stdio with --upp-stdio.

    Listens on 127.0.0.1:8700 by default and prints the URL to stderr. Stop it with Ctrl-C.
    """
    if stdio and upp_stdio:
        raise click.UsageError("give at most one of --stdio (UMP over MCP) and --upp-stdio (UPP)")
    if upp_stdio:  # without the HTTP stack: a stdio child should start fast
        from memconform.reference_impl.faults import FAULTS
        from memconform.reference_impl.upp.stdio import serve_upp_stdio

        serve_upp_stdio(fault=fault if fault is not None and FAULTS[fault].spec == "upp" else None,
                        export_dir=upp_export_dir, import_dirs=upp_import_dirs, variants=variants,
                        max_batch=upp_max_batch, max_answer_bytes=upp_max_answer)
        return
    from memconform.reference_impl.serve import serve as run_server

    try:
        run_server(host=host, port=port, db=db, require_capability=require_capability, fault=fault, stdio=stdio,
                   upp_stdio=upp_stdio, upp_export_dir=upp_export_dir, upp_import_dirs=upp_import_dirs,
                   omf_db=omf_db, variants=variants, **({"owners_file": owners_file} if owners_file else {}),
                   **({"omf_max_body": omf_max_body} if omf_max_body is not None else {}),
                   upp_max_batch=upp_max_batch, upp_max_answer=upp_max_answer)
    except OSError as exc:
        raise click.ClickException(f"cannot serve on {host}:{port}: {exc}") from None
    except KeyboardInterrupt:
        pass


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text if text.endswith("\n") else text + "\n", nl=False)
    else:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    main()
