"""Issue 5, bad input and scale: a 100k-item document through the reference CLI. An import that fails
validation on its very last item writes nothing at all; the same document fixed imports every item.
(Wall time and peak memory are figures for benchmarks/bench_omf.py, never asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

N = 100_000


def _document(path: Path, *, last_blank: bool) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write('{"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": "memd"}, "memories": [')
        for i in range(N):
            content = "   " if last_blank and i == N - 1 else f"scale fact {i}"
            out.write(("," if i else "") + json.dumps({"content": content, "tags": [f"n:{i % 7}"],
                                                       "extensions": {"memd": {"v": 1, "project_id": "p"}}}))
        out.write("]}")


def _omf(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memconform.suite.cli", "omf", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_a_100k_document_failing_on_its_last_item_writes_nothing_and_the_fixed_one_imports_all(tmp_path):
    db = str(tmp_path / "store.sqlite")
    bad, good = tmp_path / "bad.omf.json", tmp_path / "good.omf.json"
    _document(bad, last_blank=True)
    _document(good, last_blank=False)

    refused = _omf("import", "--db", db, "--tenant-id", "t", "--input", str(bad), cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "validation" and str(N - 1) in error["message"], error

    empty = _omf("export", "--db", db, "--tenant-id", "t", cwd=tmp_path)
    assert empty.returncode == 0, empty.stderr
    assert json.loads(empty.stdout)["memories"] == []

    done = _omf("import", "--db", db, "--tenant-id", "t", "--input", str(good), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"imported": N, "duplicates": 0, "skipped": 0}
    out = tmp_path / "out.omf.json"
    exported = _omf("export", "--db", db, "--tenant-id", "t", "--output", str(out), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert len(json.loads(out.read_text(encoding="utf-8"))["memories"]) == N
