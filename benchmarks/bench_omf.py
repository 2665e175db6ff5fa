"""Figures for OMF export and import of 100k items through the reference CLI (child processes
of `python -m memconform.suite.cli omf …`): wall time and the child's peak memory (its own
resource.struct_rusage ru_maxrss, from os.wait4). Goal: each at most 10 s and 500 MB. Prints;
asserts nothing (speed is never a test).

    python benchmarks/bench_omf.py [--items N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_document(path: Path, n: int) -> None:
    """A trusted memd document: distinct contents over a few projects, some supersedes edges."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": "memd"}, "memories": [')
        for i in range(n):
            lifecycle = {"status": "final", "tier": "working", "supersedes": f"src-{i - 1}" if i % 10 == 1 else None,
                         "superseded_by": None, "expires_at_ms": None, "review_after_ms": None,
                         "lifecycle_updated_at_ms": 1_800_000_000_000}
            item = {"content": f"memory number {i}: the release train leaves on day {i % 31} from track {i % 7}",
                    "category": f"p{i % 5}", "tags": ["topic:release", f"owner:{i % 13}"],
                    "created_at": "2026-04-18", "extensions": {"memd": {
                        "v": 1, "chunk_id": f"src-{i}", "project_id": f"p{i % 5}", "chunk_type": "doc",
                        "ingestion_mode": "document", "lifecycle": lifecycle}}}
            out.write(("," if i else "") + "\n" + json.dumps(item))
        out.write("\n]}\n")


def run(label: str, args: list[str]) -> None:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "omf", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait4 gives this child's own rusage (RUSAGE_CHILDREN would be the maximum over all children).
    out = proc.stdout.read()  # type: ignore[union-attr]
    err = proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    peak_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / (1 << 20)
    verdict = "ok" if elapsed <= 10 and peak_mb <= 500 else "OVER GOAL"
    print(f"{label:<10} {elapsed:6.2f} s  {peak_mb:7.1f} MB peak  exit {proc.returncode}  {verdict}  "
          f"{out.decode()[:100].strip()}{err.decode()[-300:].strip()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    n = parser.parse_args().items
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        doc, db, out = folder / "in.json", folder / "store.sqlite", folder / "out.json"
        write_document(doc, n)
        print(f"OMF {n} items, document {doc.stat().st_size / 1e6:.1f} MB")
        run("preview", ["preview", "--tenant-id", "t", "--input", str(doc), "--db", str(db)])
        run("import", ["import", "--tenant-id", "t", "--input", str(doc), "--db", str(db)])
        run("export", ["export", "--tenant-id", "t", "--output", str(out), "--db", str(db)])
        print(f"exported document {out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
