"""`memconform convert` with memoturn files: the extension tells the format, JSONL in and out, a
recall answer converts as it is (its txid reported lost), an unreadable memory exits 2 naming it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memconform.suite.convert import default_corpora, validate
from memconform.suite.convert.cli import convert


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(convert, list(args), input=input)


def _corpus_file(tmp_path: Path, name: str = "in.memoturn.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(default_corpora()["memoturn"], ensure_ascii=False), "utf-8")
    return path


def test_the_extension_tells_memoturn_and_losses_are_listed(tmp_path):
    result = run("--to", "ump", str(_corpus_file(tmp_path)), "--report-losses")
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert len(records) == 7 and validate.ump_problems(records) == []
    lost = [line for line in result.stderr.splitlines() if line.startswith("lost: ")]
    assert lost == ["lost: (document) document:/txid [mapping/memoturn-ump/document.*] the envelope's members "
                    "beside memories (a recall answer's txid) say where that store's log stood, not what a memory "
                    "is: not carried"]
    assert "memoturn → ump: 7 in, 7 out, 1 field(s) lost" in result.stderr


def test_jsonl_in_and_out(tmp_path):
    memories = default_corpora()["memoturn"]["memories"]
    lines = tmp_path / "store.memoturn.jsonl"
    lines.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in memories), "utf-8")
    omf = tmp_path / "out.omf.json"
    assert run("--to", "omf", str(lines), "-o", str(omf)).exit_code == 0
    out = tmp_path / "back.memoturn.jsonl"
    back = run("--from", "omf", "--to", "memoturn", str(omf), "-o", str(out))
    assert back.exit_code == 0, back.output
    assert [json.loads(line) for line in out.read_text("utf-8").splitlines()] == memories


def test_json_output_is_the_envelope_and_reads_back(tmp_path):
    result = run("--from", "oams", "--to", "memoturn", "-",
                 input=json.dumps(default_corpora()["oams"], ensure_ascii=False))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["memories"] and validate.problems("memoturn", doc) == []
    again = tmp_path / "again.memoturn.json"
    again.write_text(result.stdout, "utf-8")
    assert run("--to", "oams", str(again)).exit_code == 0


def test_an_empty_store_and_one_memory(tmp_path):
    empty = tmp_path / "empty.memoturn.jsonl"
    empty.write_text("", "utf-8")
    result = run("--to", "ump", str(empty))
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    one = tmp_path / "one.memoturn.json"
    one.write_text(json.dumps(default_corpora()["memoturn"]["memories"][3]), "utf-8")
    result = run("--to", "upp", str(one))
    assert result.exit_code == 0 and len(json.loads(result.stdout)["events"]) == 1


def test_an_invalid_memory_exits_2_naming_line_and_rule(tmp_path):
    bad = tmp_path / "bad.memoturn.jsonl"
    memory = default_corpora()["memoturn"]["memories"][2]
    bad.write_text(json.dumps(memory) + "\n" + json.dumps({**memory, "type": "note"}) + "\n", "utf-8")
    result = run("--to", "ump", str(bad))
    assert result.exit_code == 2 and result.stdout == ""
    assert "not a valid MEMOTURN document" in result.stderr and "/memories/1/type" in result.stderr
    assert "memoturn/type-enum" in result.stderr
    bad.write_text(json.dumps(memory) + "\n{broken\n", "utf-8")
    result = run("--to", "ump", str(bad))
    assert result.exit_code == 2 and "line 2" in result.stderr
