"""The `memconform` command as a vendor debugging their own records uses it."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from memconform.suite.cli import cli
from memconform.suite.ump.corpus import export_corpus

REPO = Path(__file__).resolve().parents[2]
SHARED_EXAMPLE = REPO.parent / "shared" / "specs" / "ump" / "responsibility-confirmed.ump.json"
VENDORED_EXAMPLE = Path(str(resources.files("memconform.vectors").joinpath(
    "ump/1.0/sources/responsibility-confirmed.ump.json")))
EXAMPLE_HASH = "blake3:jy4qfsgftbzitvwv3k7zcj5guxhyarti57cwp3rc7jqmqt2uo2aa"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def example() -> Path:
    return SHARED_EXAMPLE if SHARED_EXAMPLE.exists() else VENDORED_EXAMPLE


def test_verify_the_real_signed_example(example):
    result = invoke("record", "verify", str(example))
    assert result.exit_code == 0, result.output
    assert "signature verifies" in result.output


def test_hash_matches_the_reference_implementation(example):
    result = invoke("record", "hash", str(example))
    assert result.exit_code == 0
    assert EXAMPLE_HASH in result.output


def test_tampered_record_is_a_verdict_not_a_crash(example, tmp_path):
    rec = json.loads(example.read_text())
    rec["body"]["text"] += "!"
    bad = tmp_path / "tampered.ump.json"
    bad.write_text(json.dumps(rec))
    result = invoke("record", "verify", str(bad))
    assert result.exit_code == 1
    assert "ump/integrity-content-hash" in result.output and "/integrity/content_hash" in result.output


def test_malformed_input_exits_2_naming_file_pointer_and_requirement(tmp_path):
    broken = tmp_path / "broken.ump.json"
    broken.write_text('[{"ump": "1.0",')
    result = invoke("record", "verify", str(broken))
    assert result.exit_code == 2
    assert "broken.ump.json" in result.output and "ump/file-json" in result.output
    rec = dict(export_corpus("1.0")[0], kind="dream")
    wrong = tmp_path / "wrong.ump.json"
    wrong.write_text(json.dumps([rec]))
    result = invoke("record", "verify", str(wrong))
    assert result.exit_code == 2
    assert "wrong.ump.json /0 /kind" in result.output and "ump/record-kind" in result.output
    assert "Traceback" not in result.output


def test_missing_file_exits_2(tmp_path):
    result = invoke("record", "hash", str(tmp_path / "nope.ump.json"))
    assert result.exit_code == 2


def test_sign_then_verify_and_wrong_owner(tmp_path):
    rec = {k: v for k, v in export_corpus("1.0")[0].items() if k != "integrity"}
    src = tmp_path / "r.ump.json"
    src.write_text(json.dumps(rec))
    out = tmp_path / "signed.ump.json"
    assert invoke("record", "sign", str(src), "--test-key", "owner-a", "-o", str(out)).exit_code == 0
    assert invoke("record", "verify", str(out)).exit_code == 0
    invoke("record", "sign", str(src), "--test-key", "mallory", "-o", str(out))
    result = invoke("record", "verify", str(out))
    assert result.exit_code == 1 and "ump/integrity-signer-owner" in result.output
    assert invoke("record", "sign", str(src)).exit_code == 2  # neither --key nor --test-key


def test_to_md_and_back_is_lossless(tmp_path):
    records = [r for r in export_corpus("1.0") if r["ump"] == "1.0"]
    src = tmp_path / "all.ump.json"
    src.write_text(json.dumps(records, ensure_ascii=False))
    md_dir = tmp_path / "md"
    assert invoke("record", "to-md", str(src), "-o", str(md_dir)).exit_code == 0
    assert len(list(md_dir.glob("*.ump.md"))) == len(records)
    back = tmp_path / "back.ump.json"
    assert invoke("record", "to-json", str(md_dir), "-o", str(back)).exit_code == 0
    by_id = {r["id"]: r for r in json.loads(back.read_text())}
    assert by_id == {r["id"]: r for r in records}


def test_vectors_verify_and_a_changed_byte(tmp_path):
    assert invoke("vectors", "verify").exit_code == 0
    root = tmp_path / "vectors"
    shutil.copytree(Path(str(resources.files("memconform.vectors"))), root,
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    target = root / "ump" / "1.0" / "records-valid.json"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    result = invoke("vectors", "verify", "--root", str(root))
    assert result.exit_code == 1
    assert "ump/1.0/records-valid.json" in result.output


def test_run_help_mentions_pytest_options():
    result = invoke("run", "--help")
    assert result.exit_code == 0 and "--target" in result.output


def test_a_signature_over_another_reading_of_sign_the_hash_is_the_interop_class_s_only(tmp_path):
    """As in a suite run (round 19): a record signed over the raw digest verifies by the text; only the
    public implementation's signing input, the class ump-reference-interop, is not met."""
    from memconform.vectors import load

    case = next(c for c in load.cases(version="1.0") if c.id.endswith("/signature-over-raw-digest"))
    path = tmp_path / "raw.ump.json"
    path.write_text(json.dumps(case.input))
    result = invoke("record", "verify", str(path))
    assert result.exit_code == 0, result.output
    assert "raw 32-byte BLAKE3 digest" in result.output and "ump-reference-interop" in result.output
    assert "signature verifies" in result.output
