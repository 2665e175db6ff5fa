"""`memconform token`: capability tokens (UMP §5.2) for vendors plugging in their own keys.

`mint` signs a umpcap token for an owner whose Ed25519 seed you hold (a seed file, one of the
suite's public test keys, or an owner named in an owners file / descriptor `[ump]` section), so a
server under test can be tried by hand, or used as the `token_command` of another owner
(docs/vendor-keys.md). `inspect` decodes a token and says whether its signature and times hold.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

MALFORMED = 2
VERDICT = 1


@click.group()
def token() -> None:
    """Mint and inspect UMP capability tokens (umpcap, §5.2)."""


def _scope(pairs: tuple[str, ...], scope_json: str | None, owner_did: str) -> dict[str, str]:
    from memconform.suite.ump.captoken import SCOPE_MEMBERS

    if scope_json is not None:
        try:
            scope = json.loads(scope_json)
        except ValueError as exc:
            raise click.UsageError(f"--scope-json is not JSON: {exc}") from None
        if not isinstance(scope, dict) or not all(isinstance(v, str) for v in scope.values()):
            raise click.UsageError("--scope-json must be a JSON object of strings")
    else:
        scope = {"owner": owner_did}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in SCOPE_MEMBERS:
            raise click.UsageError(f"--scope {pair!r}: give MEMBER=VALUE with MEMBER one of {', '.join(SCOPE_MEMBERS)}")
        scope[key] = value
    return {k: v for k, v in scope.items() if v != ""}


@token.command("mint")
@click.option("--seed-file", type=click.Path(dir_okay=False, path_type=Path),
              help="the owner's 32-byte Ed25519 seed (hex or base64)")
@click.option("--test-key", type=click.Choice(["owner-a", "owner-b", "mallory"]),
              help="one of the suite's public test keys")
@click.option("--owners", "owners_file", type=click.Path(dir_okay=False, path_type=Path),
              help="a descriptor or owners file whose [ump.owners.NAME] gives the seed (with --owner)")
@click.option("--owner", "owner_name", type=click.Choice(["owner-a", "owner-b"]), default="owner-a",
              show_default=True, help="which owner of --owners")
@click.option("--verbs", default="read,write,derive,export", show_default=True,
              help="comma-separated subset of read, write, derive, export")
@click.option("--scope", "scope_pairs", multiple=True, metavar="MEMBER=VALUE",
              help="a scope member (owner, project, agent, visibility); repeatable; owner defaults to the "
                   "signer's DID, `owner=` leaves it out (any)")
@click.option("--scope-json", default=None, help="the whole scope as a JSON object (then --scope adds to it)")
@click.option("--ttl", type=float, default=900.0, show_default=True, help="seconds from now until exp")
@click.option("--nbf", "nbf_in", type=float, default=None, help="nbf, in seconds from now (negative: in the past)")
@click.option("--times", type=click.Choice(["iso", "numeric"]), default=None,
              help="how exp/nbf are written: ISO-8601 strings (the public implementation's; default) or "
                   "NumericDate seconds; default: the owners file's token_times, else iso")
@click.option("--aud", default=None, help="the audience claim")
@click.option("--from-env", is_flag=True,
              help="take verbs, scope, exp, nbf and times from the MEMCONFORM_TOKEN_* variables the suite sets "
                   "when it runs a descriptor's token_command (docs/vendor-keys.md)")
@click.option("--version", "token_version", type=click.Choice(["ump-cap/1.0", "ump-cap/0.1"]), default="ump-cap/1.0",
              show_default=True)
def token_mint(seed_file: Path | None, test_key: str | None, owners_file: Path | None, owner_name: str, verbs: str,
               scope_pairs: tuple[str, ...], scope_json: str | None, ttl: float, nbf_in: float | None,
               times: str | None, aud: str | None, from_env: bool, token_version: str) -> None:
    """Print a capability token signed by an owner's key.

    The same values arrive as {owner} {verbs} {scope} {ttl} {exp} {nbf} in a descriptor's
    token_command, so `memconform token mint --seed-file KEY --verbs {verbs} --scope-json {scope}
    --ttl {ttl}` is a valid token command (docs/vendor-keys.md)."""
    from nacl.signing import SigningKey

    from memconform.suite.ump import captoken
    from memconform.suite.ump.did import did_key_from_public_key
    from memconform.suite.ump.owners import OwnerError, _seed_bytes, owners_from_table
    from memconform.suite.ump.testkeys import test_signing_key

    if sum(x is not None for x in (seed_file, test_key, owners_file)) != 1:
        raise click.UsageError("give exactly one of --seed-file, --test-key or --owners")
    file_times = None
    try:
        if test_key:
            key = test_signing_key(test_key)
        elif seed_file is not None:
            key = SigningKey(_seed_bytes(seed_file.read_text(encoding="utf-8"), str(seed_file)))
        else:
            import tomllib

            doc = tomllib.loads(owners_file.read_text(encoding="utf-8"))
            owners = owners_from_table(doc.get("ump", doc), base_dir=str(owners_file.parent), where=str(owners_file))
            file_times = owners.times
            owner = owners.owner(owner_name)
            if owner.seed is None:
                raise OwnerError(f"{owners_file}: {owner_name} has no seed (a token command only): nothing to sign with")
            key = SigningKey(owner.seed)
    except (OSError, OwnerError, ValueError) as exc:
        click.echo(f"memconform token mint: {exc}", err=True)
        sys.exit(MALFORMED)
    verb_list = [v.strip() for v in verbs.split(",") if v.strip()]
    bad = [v for v in verb_list if v not in captoken.VERBS]
    if not verb_list or bad:
        raise click.UsageError(f"--verbs: a non-empty subset of {', '.join(captoken.VERBS)} (not {', '.join(bad)})")
    did = did_key_from_public_key(bytes(key.verify_key))
    now = time.time()
    exp = now + ttl
    nbf = now + nbf_in if nbf_in is not None else None
    if from_env:
        import os

        env = os.environ
        try:
            times = env.get("MEMCONFORM_TOKEN_TIMES") or times
            verb_list = [v for v in env["MEMCONFORM_TOKEN_VERBS"].split(",") if v] or verb_list
            scope_json = env["MEMCONFORM_TOKEN_SCOPE"]
            exp = captoken.read_time(_num_or_text(env["MEMCONFORM_TOKEN_EXP"]), "exp")
            nbf = captoken.read_time(_num_or_text(env["MEMCONFORM_TOKEN_NBF"]), "nbf") \
                if env.get("MEMCONFORM_TOKEN_NBF") else None
        except (KeyError, captoken.TokenError) as exc:
            raise click.UsageError(f"--from-env: {exc} (run by the suite, MEMCONFORM_TOKEN_VERBS, _SCOPE and "
                                   "_EXP are set)") from None
    click.echo(captoken.mint(key, verbs=verb_list, scope=_scope(scope_pairs, scope_json, did), now=now, exp=exp,
                             nbf=nbf, aud=aud, version=token_version,
                             times=times or file_times or captoken.DEFAULT_TIMES))


def _num_or_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


@token.command("inspect")
@click.argument("text")
def token_inspect(text: str) -> None:
    """Print a token's claims and whether its signature and time window hold now (exit 1 when not)."""
    from memconform.suite.ump import captoken

    try:
        claims = captoken.claims_of(text)
    except captoken.TokenError as exc:
        click.echo(f"not a umpcap token: {exc}", err=True)
        sys.exit(MALFORMED)
    click.echo(json.dumps(claims, indent=2, sort_keys=True, ensure_ascii=False))
    try:
        captoken.verify(text)
    except captoken.TokenError as exc:
        click.echo(f"refused: {exc}")
        sys.exit(VERDICT)
    click.echo("valid: the signature verifies under iss and the time window holds")
