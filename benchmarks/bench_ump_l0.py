"""Figures for the UMP record layer and the L0 run. Prints; asserts nothing (speed is never a test).

    python benchmarks/bench_ump_l0.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memconform.suite.ump import files, integrity, markdown, record
from memconform.suite.ump.corpus import export_corpus
from memconform.suite.ump.testkeys import test_signing_key


def rate(label: str, func, items, repeat: int) -> None:
    started = time.perf_counter()
    for _ in range(repeat):
        for item in items:
            func(item)
    elapsed = time.perf_counter() - started
    n = repeat * len(items)
    print(f"{label:<38} {n / elapsed:>10.0f} /s   ({n} in {elapsed:.2f} s)")


def wall(label: str, cmd: list[str], cwd: Path) -> None:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
    print(f"{label:<38} {elapsed:>10.2f} s    exit {proc.returncode}: {tail}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 20 if args.quick else 200
    records = [r for r in export_corpus("1.0") if r["ump"] == "1.0"]
    signed = [integrity.sign(r, test_signing_key("owner-a")) for r in records]
    key = test_signing_key("owner-a")
    print(f"corpus: {len(records)} records; python {sys.version.split()[0]}")
    rate("validate (schema + formats)", record.validate, records, repeat)
    rate("content_hash (JCS + BLAKE3)", integrity.content_hash, records, repeat)
    rate("sign (hash + Ed25519)", lambda r: integrity.sign(r, key), records, repeat)
    rate("verify (hash + Ed25519 + owner)", integrity.verify, signed, repeat)
    rate("JSON -> .ump.md -> JSON", lambda r: markdown.from_markdown(markdown.to_markdown(r)), records, repeat)

    with tempfile.TemporaryDirectory() as tmp:
        n = 2_000 if args.quick else 20_000
        path = Path(tmp) / "big.ump.ndjson"
        path.write_text(files.dump_ndjson(records * (n // len(records))), encoding="utf-8")
        started = time.perf_counter()
        loaded = files.load(path)
        print(f"{'files.load NDJSON':<38} {len(loaded.records) / (time.perf_counter() - started):>10.0f} /s   "
              f"({len(loaded.records)} records)")
        wall("pytest --target=reference", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                           "--target=reference"], Path(tmp))
        wall("pytest --target=reference -n 2", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                                "-n", "2", "--target=reference"], Path(tmp))
        report = json.loads((Path(tmp) / "memconform-report.json").read_text())
        print(f"report: {len(report['results'])} results, totals {report['totals']}")


if __name__ == "__main__":
    main()
