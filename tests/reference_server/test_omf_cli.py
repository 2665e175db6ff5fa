"""`python -m memconform.suite.cli omf …` as real child processes sharing one --db: the JSON results,
the exit codes, stdin input, memd's explicit true|false flags, and no traceback on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

DOC = {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": "memd"}, "memories": [
    {"content": "old fact", "category": "p", "tags": ["b", "a"],
     "extensions": {"memd": {"v": 1, "chunk_id": "S1", "lifecycle": {"status": "superseded"}}}},
    {"content": "new fact", "category": "p",
     "extensions": {"memd": {"v": 1, "chunk_id": "S2", "lifecycle": {"supersedes": "S1"}}}},
    {"content": "archived one", "status": "archived"},
]}


def omf(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memconform.suite.cli", "omf", *args, "--db", str(tmp_path / "s.db")],
                          input=stdin, capture_output=True, text=True, timeout=60, cwd=tmp_path)


def result(run: subprocess.CompletedProcess[str]) -> Any:
    assert "Traceback" not in run.stderr + run.stdout
    return json.loads(run.stdout)


def test_preview_import_export_through_one_store(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC))
    preview = omf(tmp_path, "preview", "--tenant-id", "t", "--input", str(path), "--include-archived", "false")
    assert preview.returncode == 0
    assert result(preview) == {"total": 3, "to_import": 2, "duplicates": 0, "filtered": 1, "unscoped": 0,
                               "by_project": {"p": 2}}
    assert not (tmp_path / "s.db").exists()  # a dry run against no store creates none
    imported = omf(tmp_path, "import", "--tenant-id", "t", "--input", str(path), "--include-archived", "false")
    assert result(imported) == {"imported": 2, "duplicates": 0, "skipped": 1}
    again = omf(tmp_path, "import", "--tenant-id", "t", "--input", "-", "--dry-run", "true", stdin=json.dumps(DOC))
    assert (result(again)["duplicates"], result(again)["to_import"]) == (2, 1)  # the archived one was skipped
    out = tmp_path / "out.json"
    exported = omf(tmp_path, "export", "--tenant-id", "t", "--output", str(out), "--include-superseded", "false")
    assert result(exported) == {"exported": 1, "output": str(out)}
    assert [i["content"] for i in json.loads(out.read_text())["memories"]] == ["new fact"]
    stdout = omf(tmp_path, "export", "--tenant-id", "t")
    old, new = result(stdout)["memories"]
    assert old["tags"] == ["b", "a"]
    assert new["extensions"]["memd"]["lifecycle"]["supersedes"] == old["extensions"]["memd"]["chunk_id"] != "S1"


def test_stdin_when_input_omitted(tmp_path: Path) -> None:
    run = omf(tmp_path, "import", "--tenant-id", "t", stdin=json.dumps(DOC))
    assert result(run) == {"imported": 3, "duplicates": 0, "skipped": 0}


@pytest.mark.parametrize("text", ["{not json", json.dumps({**DOC, "omf": "2.0"}),
                                  json.dumps({**DOC, "memories": [{"content": "  "}]}),
                                  json.dumps({**DOC, "memories": [{"content": "x", "extensions": {"memd": {
                                      "v": 1, "lifecycle": {"tier": "attic"}}}}]})])
def test_invalid_document_exit_2_and_nothing_written(tmp_path: Path, text: str) -> None:
    omf(tmp_path, "import", "--tenant-id", "t", stdin=json.dumps({**DOC, "memories": DOC["memories"][:1]}))
    run = omf(tmp_path, "import", "--tenant-id", "t", stdin=text)
    assert run.returncode == 2
    error = result(run)["error"]
    assert error["code"] == "validation" and error["message"]
    assert len(result(omf(tmp_path, "export", "--tenant-id", "t", "--include-history", "true"))["memories"]) == 1


def test_boolean_flags_are_explicit_and_bad_options_exit_2(tmp_path: Path) -> None:
    run = omf(tmp_path, "export", "--tenant-id", "t", "--include-history")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    run = omf(tmp_path, "export", "--tenant-id", "t", "--include-history", "yes")
    assert run.returncode == 2 and "is not true or false" in run.stderr
    run = omf(tmp_path, "import", "--tenant-id", "t", "--fault", "upp-params-required", stdin="{}")
    assert run.returncode == 2 and "not an OMF fault" in run.stderr


def test_missing_input_file_is_a_clear_error(tmp_path: Path) -> None:
    run = omf(tmp_path, "import", "--tenant-id", "t", "--input", str(tmp_path / "nope.json"))
    assert run.returncode == 2 and result(run)["error"]["code"] == "input"


def test_fault_reaches_the_engine(tmp_path: Path) -> None:
    run = omf(tmp_path, "export", "--tenant-id", "t", "--fault", "omf-exported-at-millis")
    assert "." in result(run)["exported_at"]


def test_a_store_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "s.db").write_text("not sqlite at all " * 100)
    run = omf(tmp_path, "import", "--tenant-id", "t", stdin=json.dumps(DOC))
    assert run.returncode == 1 and result(run)["error"]["code"] == "store"


def test_export_to_stdout_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    text = {**DOC, "memories": [{"content": "ünïcode 📦"}]}
    omf(tmp_path, "import", "--tenant-id", "t", stdin=json.dumps(text))
    run = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "omf", "export", "--tenant-id", "t",
                          "--db", str(tmp_path / "s.db")], capture_output=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"})
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.decode("utf-8"))["memories"][0]["content"] == "ünïcode 📦"
