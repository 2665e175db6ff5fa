"""Figures for the live reference server over loopback HTTP. Prints; asserts nothing (speed is
measured here, never in a test).

    python benchmarks/bench_ump_live.py [--quick] [--no-suite]

- remember and recall latency (p50/p99) over HTTP with 10k records stored;
- recall p50 with 100k records stored (bulk-loaded through the engine, then queried over HTTP);
- the wall time of a full `pytest --target=http://…` L1–L3 run against `memconform serve`.

Goals on a 2-core machine: remember p50 ≤ 2 ms, recall p50 ≤ 10 ms at 100k, full run < 60 s.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from memconform.reference_impl.ump.serve import start_in_thread
from memconform.reference_impl.ump.service import UmpService
from memconform.suite.ump import captoken
from memconform.suite.ump.testkeys import test_did, test_signing_key

WORDS = ("pnpm bun deploy staging gate vault token release train cache build lint test review docs "
         "schema record memory owner agent project session branch merge rebase commit tag").split()


def _record(i: int, rng: random.Random) -> dict:
    owner = test_did("owner-a")
    text = " ".join(rng.choice(WORDS) for _ in range(12)) + f" item{i}"
    return {"kind": rng.choice(("semantic", "episodic", "procedural", "working", "identity")),
            "body": {"text": text},
            "scope": {"owner": owner, "project": "bench", "visibility": "private"},
            "provenance": {"actor": owner, "actor_kind": "agent", "method": "benchmark"}}


def _pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def _line(label: str, samples: list[float]) -> None:
    ms = [s * 1000 for s in samples]
    print(f"{label:<44} p50 {_pct(ms, 50):7.2f} ms   p99 {_pct(ms, 99):7.2f} ms   "
          f"mean {statistics.fmean(ms):7.2f} ms   (n={len(ms)})")


def _fill(service: UmpService, n: int, token: str, rng: random.Random) -> float:
    started = time.perf_counter()
    for i in range(n):
        service.handle("remember", {"record": _record(i, rng)}, version="1.0", token=token)
    return time.perf_counter() - started


def _measure(base: str, token: str, rng: random.Random, n_remember: int, n_recall: int, label: str) -> None:
    headers = {"Authorization": f"Bearer {token}", "UMP-Version": "1.0"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        lat = []
        for i in range(n_remember):
            rec = _record(10_000_000 + i, rng)
            t = time.perf_counter()
            r = http.post("/ump/remember", json={"record": rec})
            lat.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text
        _line(f"remember over HTTP ({label})", lat)
        lat = []
        for _ in range(n_recall):
            q = " ".join(rng.sample(WORDS, 2))
            t = time.perf_counter()
            r = http.post("/ump/recall", json={"query": q, "limit": 8})
            lat.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text
        _line(f"recall over HTTP ({label})", lat)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _suite_run() -> None:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/ump/capabilities", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                                   f"--target=http://127.0.0.1:{port}"], cwd=tmp, capture_output=True, text=True)
            elapsed = time.perf_counter() - started
        tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or [proc.stderr[-200:]]
        print(f"{'full pytest --target=http://… run':<44} {elapsed:7.2f} s   exit {proc.returncode}: {tail[0]}")
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1k/10k records instead of 10k/100k")
    parser.add_argument("--no-suite", action="store_true", help="skip the full pytest run")
    args = parser.parse_args()
    small, big = (1_000, 10_000) if args.quick else (10_000, 100_000)
    rng = random.Random(7)
    token = captoken.mint(test_signing_key("owner-a"), scope={"owner": test_did("owner-a")}, ttl=86_400)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")

    with tempfile.TemporaryDirectory() as tmp:
        service = UmpService(db=str(Path(tmp) / "bench.db"))
        took = _fill(service, small, token, rng)
        print(f"{'bulk remember through the engine':<44} {small / took:7.0f} /s   ({small} in {took:.1f} s)")
        server = start_in_thread(service)
        try:
            _measure(server.base_url, token, rng, 500, 500, f"{small // 1000}k stored")
            took = _fill(service, big - small, token, rng)
            print(f"{'bulk remember through the engine':<44} {(big - small) / took:7.0f} /s   "
                  f"({big - small} in {took:.1f} s)")
            _measure(server.base_url, token, rng, 200, 500, f"{big // 1000}k stored")
        finally:
            server.stop()
            service.close()
    if not args.no_suite:
        _suite_run()


if __name__ == "__main__":
    main()
