"""Cross-check the golden vectors with independent JavaScript libraries (tests/vectors/node).

The Python generator and the Python record model could share a bug (both use rfc8785, blake3 and
pynacl); node re-derives every canonical form, hash, did:key and signature verdict with
canonicalize, @noble/hashes, @scure/base and node:crypto (OpenSSL) and must agree with every
case's expect. memoturn's ids (hashlib + json in the generator and in the project's model) are
re-derived with node's own canonical JSON writer and @noble/hashes SHA-256. Skipped, with the reason,
when node or the npm packages are not installed."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pytest
from nacl.signing import SigningKey
import base58

from memconform.vectors import load, manifest
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
SCRIPT = NODE_DIR / "crosscheck.mjs"
PINNED = ("canonicalize", "@noble/hashes", "@scure/base")


def _record_with_integrity(case: load.VectorCase) -> bool:
    return case.kind == "record" and isinstance(case.input, dict) and "integrity" in case.input


def _crosschecked(case: load.VectorCase) -> bool:
    if case.kind == "canonical" or _record_with_integrity(case):
        return True
    return case.kind == "markdown" and "integrity" in case.expect.get("record", {})


CASES = [c for c in load.cases() if _crosschecked(c)]
MEMOTURN_CASES = [c for c in load.cases("memoturn") if c.kind == "memoturn-id"]
#: The spec folders whose case files the node script walks.
NODE_SPECS = ("ump/", "memoturn/")


@pytest.fixture(scope="module")
def node_report() -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found")
    if not (NODE_DIR / "node_modules" / "canonicalize").is_dir():
        pytest.skip("run npm ci in tests/vectors/node")
    proc = subprocess.run(
        [node, str(SCRIPT), str(manifest.PACKAGE_DIR)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        cwd=NODE_DIR,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_node_libraries_are_the_pinned_ones(node_report: dict):
    lock = json.loads((NODE_DIR / "package-lock.json").read_text())
    pkg = json.loads((NODE_DIR / "package.json").read_text())
    for name in PINNED:
        pinned = pkg["dependencies"][name]
        assert pinned[0].isdigit(), f"{name} must be pinned exactly, not {pinned!r}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == pinned == node_report["libraries"][name]


def test_node_saw_every_case_file(node_report: dict):
    # The node script re-derives UMP's canonical forms, hashes and signatures and memoturn's ids; OAMS's
    # vectors (schema verdicts) carry nothing for it to re-derive.
    assert sorted(node_report["files"]) == [p for p in load.files() if p.startswith(NODE_SPECS) and p.count("/") == 2]


def test_node_checked_every_case_it_should(node_report: dict):
    assert set(node_report["cases"]) == {c.id for c in CASES} | {c.id for c in MEMOTURN_CASES}


def test_node_string_escaping_is_the_engines(node_report: dict):
    # node's memoturn writer leans on JSON.stringify for strings; a runtime escaping differently
    # (U+2028, uppercase hex, DEL) would make its ids agree by accident or disagree for no reason
    assert node_report["memoturn_escaping"] == {"mismatches": []}


def test_test_keys_agree(node_report: dict):
    for name, did in node_report["test_keys"].items():
        seed = hashlib.sha256(b"memconform-test-key:" + name.encode()).digest()
        public = bytes(SigningKey(seed).verify_key)
        assert did == "did:key:z" + base58.b58encode(b"\xed\x01" + public).decode()
    assert set(node_report["test_keys"]) == {"owner-a", "owner-b", "mallory"}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_node_agrees(node_report: dict, case: load.VectorCase):
    got = node_report["cases"][case.id]
    expect = case.expect
    if case.kind == "canonical":
        assert got["verdict"] == expect["verdict"], got.get("reason")
        if expect["verdict"] == "valid":
            assert got["canonical"] == expect["canonical"]
            assert got["content_hash"] == expect["content_hash"]
        elif "pointer" in expect:
            assert got.get("pointer") == expect["pointer"], got.get("reason")
        return
    if case.kind == "markdown":  # the signed record the file must read as
        assert got["verdict"] == "valid", got.get("reason")
        assert got["content_hash"] == expect["content_hash"]
        assert got["signer"] == expect["signer"]
        return
    if expect["verdict"] == "valid":
        assert got["verdict"] == "valid", got.get("reason")
        assert got["content_hash"] == expect["content_hash"]
        assert got["signer"] == expect["signer"] == got["signer_reencoded"]
        assert got["content_addressed_id"] is expect.get("content_addressed_id", False)
    else:
        assert got["verdict"] == expect["error"] == "signature_invalid", got
        assert got["pointer"] == expect["pointer"], got.get("reason")


@pytest.mark.parametrize("case", MEMOTURN_CASES, ids=[c.id for c in MEMOTURN_CASES])
def test_node_memoturn_id_agrees(node_report: dict, case: load.VectorCase):
    got = node_report["cases"][case.id]
    assert got["verdict"] == "computed", got.get("reason")
    assert got["canonical"] == case.expect["canonical"]
    assert got["hashed"] == case.expect["hashed"]
    assert got["sha256"] == case.expect["sha256"]
    assert got["id"] == case.expect["id"]
