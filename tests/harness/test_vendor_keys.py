"""A vendor's own owner keys and token format (docs/vendor-keys.md): the suite acts as the owners the
target names, mints tokens in the time encoding the target reads, and says so when it cannot."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest

from memconform.suite.ump import captoken, owners
from memconform.suite.ump.testkeys import test_did, test_signing_key
from memconform.targets.descriptor import DescriptorError, load_descriptor
from memconform.targets.target_string import shipped_descriptors

from .helpers import failed_requirements, run_suite

EXAMPLE = shipped_descriptors() / "vendor-keys.example.toml"
SEED_A = "a5a7c0445fba90fe203c6244654e69b63a30d68a50e1c4996a99e7163d4fe6c8"


def test_tokens_carry_iso_times_by_default_and_an_iso_reading_server_refuses_others():
    """Issue 13: the suite minted NumericDate times while the public implementation reads ISO-8601
    strings, and judged its expiry on a token it could not read."""
    from memconform.reference_impl.ump.service import UmpService
    from memconform.reference_impl.ump.engine import UmpError

    claims = captoken.claims_of(owners.TEST_OWNERS.token("owner-a"))
    assert isinstance(claims["exp"], str) and claims["exp"].endswith("Z")
    service = UmpService()  # the reference reads ISO-8601, as the public implementation does
    try:
        ok = service.handle("recall", {"query": "x"}, version="1.0", token=owners.TEST_OWNERS.token("owner-a"))
        assert "results" in ok
        expired = owners.TEST_OWNERS.token("owner-a", now=time.time() - 7200, ttl=3600)
        numeric = owners.Owners(times="numeric").token("owner-a")
        for token, reason in ((expired, "expired"), (numeric, "bad_payload")):
            with pytest.raises(UmpError) as refused:
                service.handle("recall", {"query": "x"}, version="1.0", token=token)
            assert refused.value.code == "unauthorized" and reason in str(refused.value)
    finally:
        service.close()


def test_a_time_that_cannot_be_read_is_refused_not_ignored():
    key = test_signing_key("owner-a")
    for times, other in (("iso", "numeric"), ("numeric", "iso")):
        token = captoken.mint(key, times=other)
        with pytest.raises(captoken.TokenError, match="bad_payload"):
            captoken.verify(token, times=times)
    with pytest.raises(captoken.TokenError, match="bad_payload"):
        captoken.verify(captoken.mint(key, extra={"exp": "whenever"}))


def test_the_example_descriptor_reaches_l3_with_its_own_keys(pytester):
    result, report = run_suite(pytester, f"--target={EXAMPLE}", "--spec=ump@1.0", "--binding=http")
    assert failed_requirements(report) == set(), [
        f["message"] for r in report["results"] if r["outcome"] == "failed" for f in r["findings"]]
    assert report["totals"].get("error", 0) == 0
    assert [lv["level"] for lv in report["levels"]] == ["L3"], [lv["summary"] for lv in report["levels"]]
    example = load_descriptor(EXAMPLE).ump_owners
    assert example.vendor and example.did("owner-a") != test_did("owner-a")
    # owner-b's tokens came from its command, and records of both owners were judged signer = owner
    signer = [r for r in report["results"] if r["check"] == "ump/l2/integrity-signer-owner"]
    assert signer and all(r["outcome"] == "passed" for r in signer)


def _descriptor(tmp_path, owners_toml: str):
    path = tmp_path / "server.toml"
    path.write_text(textwrap.dedent('''\
        name = "x"
        specs = ["ump@1.0"]
        [ump.http]
        base_url = "http://127.0.0.1:9"
        ''') + textwrap.dedent(owners_toml), encoding="utf-8")
    return path


def test_owners_are_checked_when_the_descriptor_is_loaded(tmp_path):
    other = "did:key:z6MkotDQzuQJJdfhxR1NizA3ZNKob5gg5pnngyfyRBS6Fcko"
    for text, message in (
            (f'[ump.owners.owner-a]\ndid = "{other}"\nseed = "{SEED_A}"\n', "is not the did:key of the seed"),
            ('[ump.owners.owner-a]\nseed = "00ff"\n', "32 bytes"),
            ('[ump.owners.owner-c]\nseed = "00"\n', "owner-a, owner-b"),
            ('[ump]\ntoken_times = "unix"\n', "token_times"),
            (f'[ump.owners.owner-a]\ndid = "{other}"\n', "seed or a token_command")):
        with pytest.raises(DescriptorError, match=message) as err:
            load_descriptor(_descriptor(tmp_path, text))
        assert "server.toml" in str(err.value)


def test_a_token_command_is_asked_with_what_the_check_needs(tmp_path):
    script = tmp_path / "mint.py"
    script.write_text(textwrap.dedent('''\
        import json, os, sys
        from memconform.suite.ump import captoken
        from memconform.suite.ump.testkeys import test_signing_key
        scope = json.loads(os.environ["MEMCONFORM_TOKEN_SCOPE"])
        assert sys.argv[1] == os.environ["MEMCONFORM_TOKEN_OWNER"]
        print(captoken.mint(test_signing_key("owner-b"), verbs=os.environ["MEMCONFORM_TOKEN_VERBS"].split(","),
                            scope=scope, exp=float(os.environ["MEMCONFORM_TOKEN_EXP"]), times="numeric"))
        '''), encoding="utf-8")
    path = _descriptor(tmp_path, f'''\
        [ump]
        token_times = "numeric"
        [ump.owners.owner-b]
        did = "{test_did('owner-b')}"
        token_command = "{sys.executable} {script} {{owner}}"
        ''')
    chosen = load_descriptor(path).ump_owners
    token = chosen.token("owner-b", verbs=["read"], scope={"owner": test_did("owner-b"), "project": "p"}, ttl=60)
    grant = captoken.verify(token, times="numeric")
    assert grant.verbs == {"read"} and grant.scope == {"owner": test_did("owner-b"), "project": "p"}
    with pytest.raises(owners.CannotSign, match="no key"):
        chosen.signing_key("owner-b")
    with pytest.raises(owners.CannotSign, match="token command cannot"):
        chosen.token("owner-b", extra={"exp": "whenever"})
    assert chosen.did("owner-a") == test_did("owner-a")  # not named: the test key


def test_memconform_token_mint_and_inspect(tmp_path):
    from click.testing import CliRunner

    from memconform.suite.cli import cli

    seed = tmp_path / "owner.seed"
    seed.write_text(SEED_A + "\n", encoding="utf-8")
    runner = CliRunner()
    minted = runner.invoke(cli, ["token", "mint", "--seed-file", str(seed), "--verbs", "read,derive",
                                 "--scope", "project=p1", "--ttl", "120", "--times", "numeric"])
    assert minted.exit_code == 0, minted.output
    token = minted.output.strip()
    grant = captoken.verify(token, times="numeric")
    assert grant.verbs == {"read", "derive"} and grant.scope["project"] == "p1"
    assert grant.issuer == grant.scope["owner"] == load_descriptor(EXAMPLE).ump_owners.did("owner-a")
    shown = runner.invoke(cli, ["token", "inspect", token])
    assert shown.exit_code == 0 and "valid" in shown.output
    expired = captoken.mint(test_signing_key("owner-a"), now=time.time() - 7200, ttl=60)
    assert runner.invoke(cli, ["token", "inspect", expired]).exit_code == 1


def test_pytest_options_name_the_owners_and_token_times(pytester, monkeypatch, tmp_path):
    # the options stand for the environment variables: record them as unset first (monkeypatch keeps
    # nothing for a delenv of an unset name), so every later test sees them unset again
    for name in (owners.ENV_OWNERS, owners.ENV_TIMES):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    result, _ = run_suite(pytester, "--target=reference", "--spec=ump@1.0", "--binding=http",
                          "--ump-owners", str(tmp_path / "missing.toml"), "--check=ump/l1/capabilities-shape")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--ump-owners/--ump-token-times:*missing.toml*"])
    monkeypatch.delenv(owners.ENV_OWNERS, raising=False)
    result, report = run_suite(pytester, "--target=reference?variant=token-times-numeric", "--spec=ump@1.0",
                               "--binding=http", "--ump-token-times", "numeric", "--level", "L3")
    assert failed_requirements(report) == set() and result.ret == 0
    # the run put the environment back as it found it
    import os

    assert os.environ.get(owners.ENV_TIMES) is None and os.environ.get(owners.ENV_OWNERS) is None


def test_vectors_not_about_signatures_are_re_owned_for_the_vendors_keys():
    """Red team 14 (N1): with the vendor's own keys, every vector owned by the suite's test keys was
    refused forbidden_scope and skipped, so a server taking `kind: "Semantic"` or a time without
    offset passed. A vector not about signatures or ownership is re-owned to the vendor's owner and
    re-signed with its seed; one about integrity is left as it is, and its skip says why."""
    from memconform.suite.ump import integrity
    from memconform.suite.ump.checks.l1 import _reowned, _why_not_reowned
    from memconform.vectors import load as vectors

    cases = {c.id: c for c in vectors.cases("ump", "1.0")}
    vendor = load_descriptor(EXAMPLE).ump_owners
    owners.activate(vendor)
    try:
        kind = _reowned(cases["ump/1.0/records-invalid/kind-wrong-case"])
        assert kind is not None and kind[0]["scope"]["owner"] == vendor.did("owner-a")
        assert kind[0]["kind"] == "Semantic" and "became" in kind[1]
        signed = [c for c in cases.values() if c.kind == "record" and "integrity" in c.input
                  and c.expect.get("verdict") == "valid" and _reowned(c) is not None]
        assert signed, "no signed vector re-owned"
        for case in signed:
            rec, how = _reowned(case)
            report = integrity.verify(rec)
            assert report.ok and rec["integrity"]["signer"] == rec["scope"]["owner"], (case.id, report.problems)
            assert rec["scope"]["owner"] in (vendor.did("owner-a"), vendor.did("owner-b"))
            assert "integrity recomputed" in how
        bad_hash = cases["ump/1.0/records-invalid/content-hash-hex"]
        assert _reowned(bad_hash) is None and "re-signing it would undo" in _why_not_reowned(bad_hash)
    finally:
        owners.activate(None)
    assert _reowned(cases["ump/1.0/records-invalid/kind-wrong-case"]) is None  # the suite's own keys: as it is
