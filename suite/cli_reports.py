"""Report commands (issue 6), plain click commands for `memconform` to add to its group.

Exit codes follow suite/cli.py: 0 good, 1 a verdict against the input (a signature that does
not verify), 2 input that could not be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

MALFORMED = 2
VERDICT = 1


def _read_report(path: str) -> dict[str, Any]:
    """The report as a dict, or exit 2 naming why it cannot be used."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        click.echo(f"{path}: cannot be read: {exc.strerror or exc}", err=True)
        sys.exit(MALFORMED)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        click.echo(f"{path}: not a JSON report: {exc}", err=True)
        sys.exit(MALFORMED)
    if not isinstance(data, dict):
        click.echo(f"{path}: not a JSON report: the top level is not an object", err=True)
        sys.exit(MALFORMED)
    return data


@click.command("baseline-write")
@click.argument("report", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="write the baseline here (default: standard output)")
def baseline_write(report: str, output: str | None) -> None:
    """Write a baseline (TOML) accepting every failure in REPORT; fill in each reason."""
    from memconform.reports.baseline import write_baseline

    text = write_baseline(_read_report(report))
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


def _signing_key(key_file: str | None, test_key: str | None):
    from nacl.signing import SigningKey

    from memconform.suite.ump.testkeys import TEST_KEY_NAMES, test_signing_key

    if (key_file is None) == (test_key is None):
        raise click.UsageError("give exactly one of --key SEED.hex or --test-key NAME")
    if test_key is not None:
        if test_key not in TEST_KEY_NAMES:
            raise click.BadParameter(f"unknown test key {test_key!r}; one of {', '.join(TEST_KEY_NAMES)}",
                                     param_hint="--test-key")
        return test_signing_key(test_key)
    try:
        seed = bytes.fromhex(Path(key_file).read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise click.BadParameter(f"{key_file}: not a readable hex seed: {exc}", param_hint="--key") from None
    if len(seed) != 32:
        raise click.BadParameter(f"{key_file}: an Ed25519 seed is 32 bytes (64 hex digits), got {len(seed)}",
                                 param_hint="--key")
    return SigningKey(seed)


@click.command("report-sign")
@click.argument("report", type=click.Path(dir_okay=False))
@click.option("--key", "key_file", type=click.Path(dir_okay=False), default=None, metavar="SEED.hex",
              help="file holding the 32-byte Ed25519 seed as 64 hex digits")
@click.option("--test-key", default=None, metavar="NAME",
              help="a public test key (owner-a, owner-b, mallory): for demos only, anyone can forge it")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="write the signed report here (default: replace REPORT)")
def report_sign(report: str, key_file: str | None, test_key: str | None, output: str | None) -> None:
    """Sign REPORT: add an Ed25519 signature over BLAKE3(JCS(report))."""
    from memconform.reports.sign import sign_report

    key = _signing_key(key_file, test_key)
    signed = sign_report(_read_report(report), key)
    Path(output or report).write_text(json.dumps(signed, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    click.echo(f"signed by {signed['signature']['key']}: {output or report}")


@click.command("report-verify")
@click.argument("report", type=click.Path(dir_okay=False))
@click.option("--expect-key", default=None, metavar="DID",
              help="also require that this did:key signed the report")
def report_verify(report: str, expect_key: str | None) -> None:
    """Verify REPORT's signature: exit 0 valid, 1 missing or bad, 2 unreadable."""
    from memconform.reports.sign import verify_report

    ok, reason = verify_report(_read_report(report), expect_key)
    click.echo(f"{report}: {reason}", err=not ok)
    sys.exit(0 if ok else VERDICT)
