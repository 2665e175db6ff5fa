"""`memconform convert [--from F] --to G INPUT`: the command (registered by suite/cli.py).

Exit 0 converted (warnings and, with --report-losses, every lost field on stderr); 2 the input could
not be read as a document of its format (the message names the file, the line or JSON pointer and
each problem), or usage (an option that does not apply to this direction, an unreadable key, no
--from and an extension that does not tell); 1 only for a conversion that went wrong inside
memconform. docs/mapping.md says what maps where.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memconform.suite.convert import formats, mapping
from memconform.suite.convert.dispatch import DIRECTIONS, OPTION_SIDES

#: option → (side, format) it speaks to
_APPLIES = {**OPTION_SIDES, "test_key": ("to", "ump")}
FORMATS = formats.names()
#: what a file's name says about its format when --from is not given: a more specific ending first
#: (a bare .json or .md could be any format). The endings of formats that read JSON Lines come
#: before the others, as they always have in the usage message.
EXTENSIONS = tuple(sorted(((ending, name) for name in FORMATS for ending in formats.get(name).extensions),
                          key=lambda given: (not formats.get(given[1]).jsonl, -given[0].count("."))))
#: a folder is read as UMP records unless a format claims it
FOLDERS = tuple((name, formats.get(name)) for name in FORMATS if formats.get(name).folder is not None)
UNREADABLE = 2


def _or(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def infer_format(input_path: str) -> str:
    """The format a file's extension names (a folder: UMP records), or a usage error saying how to tell."""
    if input_path != "-":
        if Path(input_path).is_dir():
            return next((name for name, fmt in FOLDERS if fmt.folder(Path(input_path))), "ump")
        low = input_path.lower()
        for ending, fmt in EXTENSIONS:
            if low.endswith(ending):
                return fmt
    said = "stdin" if input_path == "-" else f"{input_path}: its extension"
    raise click.UsageError(f"{said} does not tell the format: give --from {'|'.join(FORMATS)} (inferred "
                           "from " + ", ".join(f"{e} → {f}" for e, f in EXTENSIONS)
                           + "".join(f", {fmt.folder_help} → {name}" for name, fmt in FOLDERS)
                           + ", another folder → ump)")


def _key(sign_key: Path | None, test_key: str | None):
    from nacl.signing import SigningKey

    from memconform.suite.ump.testkeys import test_signing_key

    if sign_key and test_key:
        raise click.UsageError("give at most one of --sign-key and --test-key")
    if test_key:
        return test_signing_key(test_key)
    if sign_key:
        try:
            return SigningKey(bytes.fromhex(sign_key.read_text("utf-8").strip()))
        except (ValueError, OSError, TypeError) as exc:
            raise click.BadParameter(f"{sign_key}: not a 32-byte hex Ed25519 seed ({exc})",
                                     param_hint="--sign-key") from None
    return None


@click.command("convert", help=f"Convert a memory document between {', '.join(mapping.NAMES[f] for f in FORMATS[:-1])} "
                               f"and {mapping.NAMES[FORMATS[-1]]} (what maps where: docs/mapping.md).")
@click.option("--from", "source", type=click.Choice(FORMATS), default=None,
              help="the input's format (default: from its extension: "
                   + ", ".join(f"{formats.get(f).extensions_help} → {f}" for f in FORMATS) + ")")
@click.option("--to", "target", type=click.Choice(FORMATS), required=True, help="the output's format")
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="write here (default stdout); a "
                   + _or([mapping.NAMES[f] for f in FORMATS if formats.get(f).jsonl])
                   + " output ending .ndjson/.jsonl is one record a line")
@click.option("--entity-key", default=None, help="to UPP: the package's entity_key")
@click.option("--tenant", default=None,
              help="from OMF: whose memories these are ("
                   + " / ".join(formats.get(f).tenant_help for f in FORMATS if formats.get(f).tenant_help)
                   + " default)")
@click.option("--project", default=None, help="to OMF: project_id of items whose source names none")
@click.option("--owner", default=None, help="to UMP: scope.owner of new records")
@click.option("--sign-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="to UMP: sign the records this key owns (a file holding the 32-byte seed in hex)")
@click.option("--test-key", type=click.Choice(["owner-a", "owner-b", "mallory"]), default=None,
              help="to UMP: sign with one of the suite's public test keys")
@click.option("--report-losses", is_flag=True, help="list every lost field on stderr")
def convert(source: str | None, target: str, input_path: str, output: str | None, entity_key: str | None,
            tenant: str | None, project: str | None, owner: str | None, sign_key: Path | None,
            test_key: str | None, report_losses: bool) -> None:
    from memconform.suite.convert import reading
    from memconform.suite.convert.common import ConversionError, ConvertOptions, InvalidInput
    from memconform.suite.convert.dispatch import convert as run  # the command's own name is taken

    if source is None:
        source = infer_format(input_path)
    given = {"entity_key": entity_key, "project": project, "owner": owner, "sign_key": sign_key,
             "test_key": test_key, "tenant": tenant}
    for name, (side, fmt) in _APPLIES.items():
        if given[name] is not None and (target if side == "to" else source) != fmt:
            flag = "--" + name.replace("_", "-")
            raise click.UsageError(f"{flag} applies only when converting {side} {fmt}")
    if source != target and (source, target) not in DIRECTIONS:
        raise click.UsageError(f"no conversion from {source} to {target} yet (directions: "
                               + ", ".join(f"{a} → {b}" for a, b in DIRECTIONS) + ")")
    key = _key(sign_key, test_key)
    options = ConvertOptions(entity_key=entity_key, tenant=tenant, project=project, owner=owner, sign_key=key)
    where = "stdin" if input_path == "-" else input_path
    try:
        document = (reading.read_bytes(source, sys.stdin.buffer.read(), "stdin") if input_path == "-"
                    else reading.read_path(source, input_path))
        result = run(document, source=source, target=target, options=options)
    except InvalidInput as exc:
        click.echo(f"memconform convert: {where}: {exc}", err=True)
        sys.exit(UNREADABLE)
    except ConversionError as exc:
        click.echo(f"memconform convert: {where}: conversion failed (a memconform bug, please report it): {exc}",
                   err=True)
        sys.exit(1)
    text = reading.dumps(target, result.document, output)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if report_losses:
        for lost in result.lost:
            click.echo(f"lost: {lost.record or '(document)'} {lost.field or '(the whole record)'} "
                       f"[{lost.row}] {lost.reason}", err=True)
    click.echo(f"{source} → {target}: {result.records_in} in, {result.records_out} out, {len(result.lost)} "
               f"field(s) lost{'' if report_losses or not result.lost else ' (--report-losses lists them)'}",
               err=True)
