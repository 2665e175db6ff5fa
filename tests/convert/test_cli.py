"""`memconform convert`: files and stdin in, files and stdout out, losses on stderr, exit codes
0 (converted), 2 (unreadable input, named; usage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memconform.suite.convert import default_corpora, mapping, validate
from memconform.suite.convert.cli import convert
from memconform.suite.ump import files as ump_files, integrity
from memconform.suite.ump.testkeys import test_seed

FORMATS = mapping.FORMATS
DIRECTIONS = [*mapping.table(), *((f, f) for f in FORMATS)]


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, Path]:
    corpora = default_corpora()
    paths = {"ump": tmp_path / "in.ump.json", "omf": tmp_path / "in.omf.json", "upp": tmp_path / "in.upp.json",
             "oams": tmp_path / "in.oams.json", "memoturn": tmp_path / "in.memoturn.json"}
    for fmt, path in paths.items():
        path.write_text(json.dumps(corpora[fmt], ensure_ascii=False), "utf-8")
    return paths


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(convert, list(args), input=input)


@pytest.mark.parametrize("source,target", DIRECTIONS)
def test_every_direction_writes_a_valid_document(inputs, tmp_path, source, target):
    out = tmp_path / f"out.{target}.json"
    result = run("--from", source, "--to", target, str(inputs[source]), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert validate.problems(target, json.loads(out.read_text("utf-8"))) == []
    assert f"{source} → {target}:" in result.stderr
    assert result.stdout == ""


def test_stdout_and_report_losses(inputs):
    result = run("--from", "ump", "--to", "omf", str(inputs["ump"]), "--report-losses")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["omf"] == "1.0" and len(doc["memories"]) == 11
    lost = [line for line in result.stderr.splitlines() if line.startswith("lost: ")]
    assert len(lost) == 5
    assert any("[mapping/ump-omf/integrity]" in line and "/integrity" in line for line in lost)
    assert any("[mapping/ump-omf/record.unexportable]" in line and "(the whole record)" in line for line in lost)
    assert "5 field(s) lost" in result.stderr


def test_without_report_losses_only_the_count(inputs):
    result = run("--from", "ump", "--to", "upp", str(inputs["ump"]))
    assert result.exit_code == 0
    assert "lost: " not in result.stderr and "--report-losses lists them" in result.stderr
    assert "warning: the records have 2 subjects" in result.stderr


def test_stdin_ndjson_in_and_ndjson_out(inputs, tmp_path):
    records = default_corpora()["ump"]
    out = tmp_path / "back.ndjson"
    there = run("--from", "ump", "--to", "upp", "-", input=ump_files.dump_ndjson(records))
    assert there.exit_code == 0, there.output
    package = tmp_path / "p.json"
    package.write_text(there.stdout, "utf-8")
    back = run("--from", "upp", "--to", "ump", str(package), "-o", str(out))
    assert back.exit_code == 0, back.output
    lines = out.read_text("utf-8").splitlines()
    assert len(lines) == 11 and all(json.loads(line)["ump"] for line in lines)


def test_a_folder_of_ump_md_files(tmp_path):
    folder = tmp_path / "records"
    ump_files.write_md_folder(default_corpora()["ump"][:3], folder)
    result = run("--from", "ump", "--to", "omf", str(folder))
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["memories"]) == 3


def test_signing_with_a_seed_file_and_a_test_key(inputs, tmp_path):
    omf = tmp_path / "o.json"
    assert run("--from", "ump", "--to", "omf", str(inputs["ump"]), "-o", str(omf)).exit_code == 0
    seed = tmp_path / "seed.hex"
    seed.write_text(test_seed("owner-a").hex() + "\n")
    for option in (["--sign-key", str(seed)], ["--test-key", "owner-a"]):
        result = run("--from", "omf", "--to", "ump", str(omf), *option)
        assert result.exit_code == 0, result.output
        records = json.loads(result.stdout)
        assert records and all(integrity.verify(r).ok for r in records)


@pytest.mark.parametrize("content,needle", [
    ("{not json", "not JSON"),
    ('{"omf": "1.0", "exported_at": "2026-01-01T00:00:00Z", "memories": [{"content": NaN}]}', "NaN is not JSON"),
    ('{"omf": "1.0", "exported_at": "yesterday", "memories": []}', "/exported_at"),
    ('{"omf": "1.0", "exported_at": "2026-01-01T00:00:00Z"}', "required member 'memories' is missing"),
    ('{"omf": "1.0", "exported_at": "2026-01-01T00:00:00Z", "memories": [{"content": ""}]}', "/memories/0/content"),
])
def test_invalid_omf_exits_2_naming_the_problem(tmp_path, content, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(content, "utf-8")
    result = run("--from", "omf", "--to", "ump", str(bad))
    assert result.exit_code == 2
    assert "not a valid OMF document" in result.stderr and needle in result.stderr
    assert str(bad) in result.stderr and result.stdout == ""


def test_invalid_input_of_each_format_exits_2(tmp_path, inputs):
    assert run("--from", "upp", "--to", "omf", str(inputs["omf"])).exit_code == 2
    record = default_corpora()["ump"][0]
    record["kind"] = "gossip"
    bad = tmp_path / "bad.ump.json"
    bad.write_text(json.dumps([record]), "utf-8")
    result = run("--from", "ump", "--to", "upp", str(bad))
    assert result.exit_code == 2 and "/0/kind" in result.stderr and "ump/record-kind" in result.stderr
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"omf": "1.0", "content": "caf\xe9"}')
    result = run("--from", "omf", "--to", "upp", str(latin))
    assert result.exit_code == 2 and "not UTF-8" in result.stderr


def test_nothing_is_written_for_invalid_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]", "utf-8")
    out = tmp_path / "out.json"
    assert run("--from", "omf", "--to", "ump", str(bad), "-o", str(out)).exit_code == 2
    assert not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["--from", "omf"], "--to"),
    (["--from", "xml", "--to", "omf"], "xml"),
    (["--from", "ump", "--to", "omf", "--entity-key", "k"], "--entity-key applies only when converting to upp"),
    (["--from", "ump", "--to", "upp", "--tenant", "t"], "--tenant applies only when converting from omf"),
    (["--from", "omf", "--to", "upp", "--project", "p"], "--project applies only when converting to omf"),
    (["--from", "omf", "--to", "upp", "--test-key", "owner-a"], "--test-key applies only when converting to ump"),
    (["--from", "omf", "--to", "ump", "--test-key", "owner-a", "--sign-key", "SEED"], "at most one"),
])
def test_usage_errors_exit_2(inputs, tmp_path, args, needle):
    seed = tmp_path / "seed.hex"
    seed.write_text(test_seed("owner-b").hex())
    args = [str(seed) if a == "SEED" else a for a in args]
    result = run(*args, str(inputs["omf"]))
    assert result.exit_code == 2
    assert needle in result.output


def test_a_missing_input_or_a_bad_seed_is_usage(tmp_path, inputs):
    assert run("--from", "omf", "--to", "ump", str(tmp_path / "nope.json")).exit_code == 2
    seed = tmp_path / "seed.hex"
    seed.write_text("not hex")
    result = run("--from", "omf", "--to", "ump", str(inputs["omf"]), "--sign-key", str(seed))
    assert result.exit_code == 2 and "32-byte hex Ed25519 seed" in result.output


# -- OAMS ----------------------------------------------------------------------------------------------

def test_oams_jsonl_in_and_out_and_the_extension_tells(tmp_path):
    from memconform.suite.oams import model as oams_model

    memories = default_corpora()["oams"]
    store = tmp_path / "store.oams.jsonl"
    store.write_bytes(oams_model.render_jsonl(memories))
    ump = tmp_path / "records.ump.json"
    there = run("--to", "ump", str(store), "-o", str(ump))   # .oams.jsonl → oams, not UMP's .jsonl
    assert there.exit_code == 0, there.output
    assert "oams → ump: 6 in, 6 out, 0 field(s) lost" in there.stderr
    back = tmp_path / "back.oams.jsonl"
    result = run("--to", "oams", str(ump), "-o", str(back))
    assert result.exit_code == 0, result.output
    data = back.read_bytes()
    values, framing = oams_model.parse_jsonl(data)
    assert framing == [] and oams_model.store_problems(values) == []
    def by_name(m):
        return (m["namespace"], m["key"])

    assert sorted(values, key=by_name) == sorted(memories, key=by_name)
    # stdin: JSONL text too
    piped = run("--from", "oams", "--to", "ump", "-", input=data.decode("utf-8"))
    assert piped.exit_code == 0 and len(json.loads(piped.stdout)) == 6


def test_an_oams_export_bundle_folder(tmp_path):
    from memconform.suite.oams import model as oams_model

    memories = default_corpora()["oams"]
    folder = tmp_path / "oams-export-20260427T120000Z"
    folder.mkdir()
    jsonl = oams_model.render_jsonl(memories)
    (folder / "memories.jsonl").write_bytes(jsonl)
    manifest = {"oams_version": "0.1", "source_vendor": "test", "exported_at": "2026-04-27T12:00:00Z",
                "namespaces": sorted({m["namespace"] for m in memories}), "memory_count": len(memories),
                "embedding_model": "text-embedding-3-small", "checksum_sha256": oams_model.checksum(jsonl)}
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    result = run("--to", "ump", str(folder))
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 6
    manifest["memory_count"] = 1
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    result = run("--to", "ump", str(folder))
    assert result.exit_code == 2 and "oams/manifest-count" in result.stderr


def test_ump_to_oams_reports_losses(inputs):
    result = run("--from", "ump", "--to", "oams", str(inputs["ump"]), "--report-losses")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 11
    lost = [line for line in result.stderr.splitlines() if line.startswith("lost: ")]
    assert len(lost) == 5 and any("[mapping/ump-oams/integrity]" in line for line in lost)


def test_invalid_oams_exits_2_naming_the_problem(tmp_path):
    bad = tmp_path / "bad.oams.jsonl"
    bad.write_text('{"key": "k", "namespace": "a:b/c", "value": "v", "created_at": "2026-01-01T00:00:00Z", '
                   '"updated_at": "2026-01-01T00:00:00Z"}\n{"key": "k2"\n', "utf-8")
    result = run("--to", "ump", str(bad))
    assert result.exit_code == 2 and "not a valid OAMS document" in result.stderr and "line 2" in result.stderr
    bad.write_text('{"key": "k", "namespace": "a:b/c", "value": "v", "created_at": "2026-01-01T00:00:00Z", '
                   '"updated_at": "2026-01-01T00:00:00Z"}\n', "utf-8")
    result = run("--to", "ump", str(bad))
    assert result.exit_code == 2 and "oams/scope-no-slash-colon" in result.stderr and result.stdout == ""


def test_a_direction_not_built_is_a_usage_error(inputs):
    unbuilt = [(a, b) for a in FORMATS for b in FORMATS if a != b and (a, b) not in mapping.table()]
    for a, b in unbuilt:
        result = run("--from", a, "--to", b, str(inputs[a]))
        assert result.exit_code == 2 and f"no conversion from {a} to {b}" in result.output


def test_an_empty_oams_store_is_an_empty_document(tmp_path):
    empty = tmp_path / "empty.oams.jsonl"
    empty.write_text("", "utf-8")
    result = run("--to", "omf", str(empty))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["memories"] == [] and "oams → omf: 0 in, 0 out" in result.stderr
