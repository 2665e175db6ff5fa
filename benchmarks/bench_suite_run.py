"""Whole runs of the suite as a user starts them, timed from spawning to exit. Prints; asserts nothing.

    python benchmarks/bench_suite_run.py [--repeat 3] [--only NAME …] [--cold]

Runs (each in a fresh empty folder, the byte-code cache warm in a private PYTHONPYCACHEPREFIX after
one untimed run, as on a usual machine; `--cold` keeps this environment's settings):

- reference            `pytest --target=reference`: every spec, version and binding, default effort
- reference-quick      the same with `--effort=quick` (the smoke run)
- ump-alone            `pytest --target=reference --spec=ump` (L0–L3, file + HTTP + MCP)
- serve-http           `memconform serve` started once, then `pytest --target=http://127.0.0.1:PORT`
                       (every spec the server offers over HTTP), default effort
- serve-start          how long `memconform serve` takes from spawn to its first answer
- plain-pytest         a folder with one trivial test, `pytest` without `--target`: with every
                       plugin, then without memconform's (`-p no:memconform`), then without
                       schemathesis's and hypothesis's too; what each plugin adds

Per run: wall seconds (median of the repeats, min–max beside it), the items pytest ran and items/s,
and from the report what the state machines and the OpenAPI fuzz spent (their own seconds summed,
sequences, examples) — the part of the run the effort buys. The load average is printed first:
other work on the machine shows in every figure.

Anchors (issue 15, this 2-core machine idle): reference ≤ 15 s and ≥ 100 items/s; UMP alone ≤ 8 s;
serve-http ≤ 12 s; serve answers within 1 s; plain pytest: memconform's plugin costs nothing
measurable. Bowtie runs about 100 cases/s in process, start-up included.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RUNS = ("reference", "reference-quick", "ump-alone", "serve-http", "serve-start", "plain-pytest")
GOALS = {"reference": "≤ 15 s, ≥ 100 items/s", "reference-quick": "(smoke run)", "ump-alone": "≤ 8 s",
         "serve-http": "≤ 12 s", "serve-start": "≤ 1 s", "plain-pytest": "memconform adds nothing measurable"}
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|error|errors|xfailed|xpassed|deselected)")


def _env(cold: bool, pycache: Path) -> dict[str, str]:
    env = dict(os.environ)
    if not cold:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _timed(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 1800) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return time.monotonic() - started, done.stdout + done.stderr


def _items(output: str) -> int:
    last = [line for line in output.splitlines() if " in " in line and _SUMMARY.search(line)]
    if not last:
        return 0
    counts = {kind: int(n) for n, kind in _SUMMARY.findall(last[-1])}
    return sum(n for kind, n in counts.items() if kind != "deselected")


def _spent(folder: Path) -> dict[str, float]:
    """What the generated-input checks spent, from the report's effort notes."""
    try:
        report = json.loads((folder / "memconform-report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    machines = [r["effort"] for r in report.get("results", []) if "/stateful/" in r.get("check", "")
                and isinstance(r.get("effort"), dict)]
    fuzz = [r for r in report.get("results", []) if r.get("check", "").endswith("openapi-fuzz")]
    return {"machines": len(machines), "machine_seconds": sum(m.get("seconds", 0) for m in machines),
            "sequences": sum(m.get("sequences", 0) for m in machines),
            "steps": sum(m.get("steps", 0) for m in machines), "fuzz_checks": len(fuzz)}


class _Serve:
    def __init__(self, env: dict[str, str], root: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(root / f"serve-{self.port}.log", "w")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--port", str(self.port),
                                      "--db", str(root / f"serve-{self.port}.db")],
                                     cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.ready = self._wait()

    def _wait(self) -> float:
        import httpx

        deadline = self.started + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"memconform serve exited (see {self.log.name})")
            try:
                httpx.get(self.url + "/ump/capabilities", timeout=1.0)
                return time.monotonic() - self.started
            except httpx.TransportError:
                time.sleep(0.01)
        raise RuntimeError("memconform serve did not answer within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def _suite_run(name: str, env: dict[str, str], root: Path) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(dir=root, prefix=name + "-"))
    server = None
    try:
        if name == "serve-http":
            server = _Serve(env, root)
            cmd = PYTEST + [f"--target={server.url}"]
        else:
            cmd = PYTEST + ["--target=reference"] + {"reference-quick": ["--effort=quick"],
                                                      "ump-alone": ["--spec=ump"]}.get(name, [])
        wall, output = _timed(cmd, folder, env)
    finally:
        if server is not None:
            server.stop()
    return {"wall": wall, "items": _items(output), **_spent(folder),
            "tail": output.strip().splitlines()[-1] if output.strip() else ""}


def _plain_pytest(env: dict[str, str], root: Path, repeat: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(dir=root, prefix="plain-"))
    (folder / "test_trivial.py").write_text("def test_one():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    variants = {"every plugin": [], "without memconform": ["-p", "no:memconform"],
                "without memconform, schemathesis, hypothesis": ["-p", "no:memconform", "-p", "no:schemathesis",
                                                                 "-p", "no:hypothesispytest"]}
    times: dict[str, list[float]] = {label: [] for label in variants}
    for extra in variants.values():
        _timed(PYTEST + extra, folder, env)  # warm
    for _ in range(max(repeat, 10)):  # interleaved, so that drift in the machine's speed hits all alike
        for label, extra in variants.items():
            times[label].append(_timed(PYTEST + extra, folder, env)[0])
    out = {label: statistics.median(ts) for label, ts in times.items()}
    out.update({f"{label} (best)": min(ts) for label, ts in times.items()})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (medians; default 3)")
    parser.add_argument("--only", action="append", choices=RUNS, help="only these runs (repeatable)")
    parser.add_argument("--cold", action="store_true", help="keep this environment's byte-code settings")
    args = parser.parse_args()
    chosen = args.only or list(RUNS)
    with tempfile.TemporaryDirectory(prefix="memconform-bench-run-") as tmp:
        root = Path(tmp)
        env = _env(args.cold, root / "pycache")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
              f"byte-code cache: {'as the environment has it' if args.cold else 'warm (PYTHONPYCACHEPREFIX)'}; "
              f"{args.repeat} timed run(s) each, medians")
        if not args.cold:
            _timed(PYTEST + ["--target=reference", "--effort=quick", "--spec=ump@1.0", "--binding=http"],
                   Path(tempfile.mkdtemp(dir=root)), env)  # fills the byte-code cache
        for name in chosen:
            if name == "plain-pytest":
                costs = _plain_pytest(env, root, args.repeat)
                print(f"\n{name:16} goal: {GOALS[name]} (medians of interleaved runs; best runs beside)")
                for label in ("every plugin", "without memconform", "without memconform, schemathesis, hypothesis"):
                    print(f"  pytest, one trivial test, {label:45} {costs[label]:6.2f} s   best {costs[label + ' (best)']:.2f} s")
                for how, suffix in (("median", ""), ("best", " (best)")):
                    base = costs["without memconform" + suffix]
                    bare = costs["without memconform, schemathesis, hypothesis" + suffix]
                    print(f"  {how:6}: memconform's plugin adds {1000 * (costs['every plugin' + suffix] - base):+.0f} ms; "
                          f"schemathesis's and hypothesis's plugins add {1000 * (base - bare):+.0f} ms")
                continue
            if name == "serve-start":
                starts = []
                for _ in range(args.repeat):
                    server = _Serve(env, root)
                    starts.append(server.ready)
                    server.stop()
                print(f"\n{name:16} first answer {statistics.median(starts):.2f} s after spawn "
                      f"(min {min(starts):.2f}, max {max(starts):.2f})   goal: {GOALS[name]}")
                continue
            runs = [_suite_run(name, env, root) for _ in range(args.repeat)]
            walls = [r["wall"] for r in runs]
            wall = statistics.median(walls)
            mid = runs[walls.index(sorted(walls)[len(walls) // 2])]
            print(f"\n{name:16} {wall:6.1f} s wall (min {min(walls):.1f}, max {max(walls):.1f}), {mid['items']} items, "
                  f"{mid['items'] / wall:5.1f} items/s   goal: {GOALS[name]}")
            if mid.get("machines"):
                print(f"  state machines: {mid['machines']} runs, {mid['sequences']} sequences, {mid['steps']} "
                      f"target calls, {mid['machine_seconds']:.1f} s of the run "
                      f"({100 * mid['machine_seconds'] / wall:.0f} %)")
            print(f"  pytest said: {mid['tail']}")


if __name__ == "__main__":
    main()
