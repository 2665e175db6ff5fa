"""Figures for the OMF HTTP body limit (issue 14 item 4): the peak memory a `memconform serve` child
gains from one POST /omf/preview of a document just under the limit (VmHWM from /proc, Linux only),
for tiny items (the worst case: a dict per 20 bytes) and for items of a few hundred bytes, and for
several such documents posted at once (they are parsed one at a time). Prints; asserts nothing.

    python benchmarks/bench_omf_http_body.py [--size BYTES] [--concurrent N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time

import httpx

HEAD = b'{"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": "memd"}, "memories": ['


def document(size: int, text: int, salt: int = 0) -> tuple[bytes, int]:
    """A document of at most `size` bytes of distinct items whose content is about `text` bytes."""
    items: list[bytes] = []
    total, i = len(HEAD) + 2, 0
    while True:
        if text:
            item = (b'{"content": "%d-%x %s", "tags": ["t:%d"], "extensions": {"memd": {"v": 1, "project_id": "p"}}}'
                    % (salt, i, b"x" * text, i % 7))
        else:
            item = b'{"content": "%d-%x"}' % (salt, i)
        if total + len(item) + 1 > size:
            return HEAD + b",".join(items) + b"]}", i
        items.append(item)
        total += len(item) + 1
        i += 1


def peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def measure(bodies: list[bytes], extra: list[str]) -> tuple[float, list[int]]:
    proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--port", "0",
                             "--no-require-capability", *extra], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                url = match.group(1)
                break
        if url is None:
            raise SystemExit("memconform serve did not start")
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the log pipe from filling
        small, _ = document(200, 0)
        httpx.post(f"{url}/omf/preview", params={"tenant_id": "warm"}, content=small, timeout=60)
        before = peak_mib(proc.pid)
        statuses: list[int] = []

        def post(body: bytes) -> None:
            statuses.append(httpx.post(f"{url}/omf/preview", params={"tenant_id": "t"}, content=body,
                                       timeout=1800).status_code)

        threads = [threading.Thread(target=post, args=(b,)) for b in bodies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return peak_mib(proc.pid) - before, statuses
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=(16 << 20) - 1, help="bytes per document (default: the "
                                                                          "16 MiB limit less one)")
    parser.add_argument("--concurrent", type=int, default=3, help="documents posted at once in the last run")
    args = parser.parse_args()
    extra = ["--omf-max-body", str(args.size)] if args.size > (16 << 20) else []
    for label, text in (("tiny items", 0), ("items of ~280 bytes", 200)):
        body, n = document(args.size, text)
        started = time.perf_counter()
        growth, statuses = measure([body], extra)
        print(f"{label}: {len(body) / 2**20:.2f} MiB, {n} items -> {statuses[0]}; peak +{growth:.0f} MiB "
              f"({growth * 2**20 / len(body):.1f}x the body), {time.perf_counter() - started:.1f} s")
    quarter = args.size // 4
    bodies = [document(quarter, 0, salt)[0] for salt in range(args.concurrent)]
    one, _ = measure(bodies[:1], extra)
    several, statuses = measure(bodies, extra)
    print(f"{args.concurrent} tiny-item documents of {quarter / 2**20:.1f} MiB at once -> {statuses}; peak "
          f"+{several:.0f} MiB (one alone: +{one:.0f} MiB)")


if __name__ == "__main__":
    main()
