"""The signed manifest of the golden vectors: it verifies, and it notices every kind of change."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from memconform.vectors import load, manifest

REPO = Path(__file__).resolve().parents[2]
SHARED_DID = REPO.parent / "shared" / "keys" / "vectors-release.did.txt"


def _test_seed(name: str) -> bytes:
    return hashlib.sha256(b"memconform-test-key:" + name.encode()).digest()


@pytest.fixture
def vectors_copy(tmp_path: Path) -> Path:
    root = tmp_path / "vectors"
    shutil.copytree(manifest.PACKAGE_DIR, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert manifest.verify(root).ok
    return root


def test_manifest_verifies():
    report = manifest.verify()
    assert report.ok, str(report)
    assert report.problems == ()


def test_manifest_lists_exactly_the_vector_files():
    listed = json.loads((manifest.PACKAGE_DIR / "MANIFEST.json").read_text())["files"]
    assert sorted(listed) == manifest.vector_files() == load.files()
    assert list(listed) == sorted(listed), "files must be sorted"


def test_release_did_is_shipped_and_matches_the_key_folder():
    did = manifest.release_did()
    assert re.fullmatch(r"did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+", did)
    if not SHARED_DID.is_file():
        pytest.skip("../shared/keys not present beside the repository")
    assert SHARED_DID.read_text().strip() == did


@pytest.mark.parametrize("path", load.files())
def test_one_flipped_byte_names_the_file(vectors_copy: Path, path: str):
    target = vectors_copy / path
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    report = manifest.verify(vectors_copy)
    assert not report.ok
    assert [f for f, _ in report.problems] == [path]
    problem = report.problems[0][1]
    assert "changed" in problem and problem.count("blake3:") == 2


def test_unlisted_file_is_reported(vectors_copy: Path):
    (vectors_copy / "ump" / "1.0" / "smuggled.json").write_text('{"cases": []}\n')
    report = manifest.verify(vectors_copy)
    assert not report.ok
    assert report.problems == (("ump/1.0/smuggled.json", "vector file present but not listed in the manifest"),)


def test_missing_file_is_reported(vectors_copy: Path):
    (vectors_copy / "ump" / "common" / "canonical.json").unlink()
    report = manifest.verify(vectors_copy)
    assert report.problems == (("ump/common/canonical.json", "listed in the manifest but missing"),)


def test_rehashed_manifest_without_a_new_signature_fails(vectors_copy: Path):
    target = vectors_copy / "ump" / "1.0" / "records-valid.json"
    target.write_bytes(target.read_bytes().replace(b"Prefers pnpm", b"Prefers npm!", 1))
    doc = json.loads((vectors_copy / "MANIFEST.json").read_text())
    doc["files"]["ump/1.0/records-valid.json"] = manifest.file_hash(target.read_bytes())
    (vectors_copy / "MANIFEST.json").write_text(json.dumps(doc, indent=2) + "\n")
    report = manifest.verify(vectors_copy)
    assert report.problems == (("MANIFEST.json", "signature does not verify with the release key"),)


def test_manifest_signed_by_a_test_key_is_refused(vectors_copy: Path):
    manifest._write(_test_seed("mallory"), vectors_copy)  # a well-formed manifest, wrong key
    report = manifest.verify(vectors_copy)
    assert not report.ok
    assert [f for f, _ in report.problems] == ["MANIFEST.json", "MANIFEST.json"]
    signer, signature = (p for _, p in report.problems)
    assert "is not the release key" in signer
    assert signature == "signature does not verify with the release key"


def test_sign_refuses_a_seed_that_is_not_the_release_key(vectors_copy: Path):
    before = (vectors_copy / "MANIFEST.json").read_bytes()
    with pytest.raises(manifest.SeedError, match="not the release key"):
        manifest.sign(_test_seed("owner-a"), vectors_copy)
    assert (vectors_copy / "MANIFEST.json").read_bytes() == before


def test_load_seed_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    seed = _test_seed("owner-b")
    key_file = tmp_path / "seed.hex"
    key_file.write_text(seed.hex() + "\n")
    monkeypatch.setenv("MEMCONFORM_VECTORS_KEY", str(key_file))
    assert manifest.load_seed() == seed
    assert manifest.load_seed(key_file) == seed


def test_load_seed_absent_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMCONFORM_VECTORS_KEY", str(tmp_path / "nope.hex"))
    with pytest.raises(manifest.SeedError, match="MEMCONFORM_VECTORS_KEY"):
        manifest.load_seed()
    bad = tmp_path / "bad.hex"
    bad.write_text("not hex")
    with pytest.raises(manifest.SeedError, match="hex"):
        manifest.load_seed(bad)


def _is_release_seed(token: str, release: str) -> bool:
    public = bytes(SigningKey(bytes.fromhex(token)).verify_key)
    return manifest._did(public) == release


def test_release_seed_is_in_no_project_file():
    """No 32-byte hex token anywhere in the repository is the release seed (checked through its
    public key, so this test never needs, reads or prints the seed)."""
    release = manifest.release_did()
    skip = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis", ".tox"}
    offenders = []
    for path in REPO.rglob("*"):
        if not path.is_file() or skip & set(path.relative_to(REPO).parts) or path.stat().st_size > 5_000_000:
            continue
        text = path.read_bytes().decode("latin-1")
        for token in set(re.findall(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])", text)):
            if _is_release_seed(token, release):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []
