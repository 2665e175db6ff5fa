"""The harness's own overhead: time a suite run spends outside the target (driver, validation,
bookkeeping, pytest) against a raw httpx loop making the same calls. Prints; asserts nothing.

    python benchmarks/bench_harness_overhead.py [--repeat 3] [--spec ump] [--spec upp] [--profile] [--cold]

Per spec and repeat:

1. `memconform serve` on a free port with a fresh `--db` (and its own UPP export folder);
2. `python -m pytest --target=http://127.0.0.1:PORT --spec=SPEC --memconform-only -p no:cacheprovider -q`
   in a subprocess, fuzzing off (`MEMCONFORM_FUZZ_EXAMPLES=0`, so the request mix is fixed), with this
   file loaded as a plugin (`-p bench_harness_overhead`): it records every exchange the suite's httpx
   transports make (method, URL, headers, body, when it started, when its answer was read to the end,
   the status) and every `time.sleep` the checks take on the main thread (a retention that must
   elapse, a background task polled), plus when pytest configured, collected and finished. The
   recording is a few dict writes per request; once per spec the suite also runs without it, to show
   what the recording costs;
3. a second fresh server (fresh db, same export folder, so the answers match) and a raw loop: one
   `httpx.Client`, the recorded requests sent byte for byte in their order (but for the record ids
   and content hashes the fresh server minted: the loop maps the recorded ones to the new ones, so a
   later `get` asks for what exists, as the suite's did), the same sleeps at the same places; a
   request that overlapped others in the suite (an SSE subscribe stream read on its own thread while
   the trigger is sent) is replayed on a thread the same way, read up to the events the suite read.
   How many answers come back with the recorded status is printed, to show the replay does the same
   work.

By default the suite and servers run with a warmed byte-code cache in the temporary folder
(`PYTHONPYCACHEPREFIX`, after one untimed run per spec), as on a usual machine; `--cold` keeps this
environment's settings (with `PYTHONDONTWRITEBYTECODE=1` every run compiles every module and pytest
assertion-rewrites every plugin distribution's modules afresh). Other load on the machine shows in
the figures: the header prints the load average, and the table also compares the best runs.

Overhead = (suite wall time − raw loop time) / raw loop time, the suite timed from spawning the
process to its exit (what a user waits for) and also without interpreter start and imports (from
`pytest_configure`). The breakdown splits the suite's wall time into HTTP round trips (the union of
the intervals with a request in flight), deliberate waits, and the rest (outside the target), per
phase: start-up (interpreter, imports, plugins), collection (opening the target: discovery requests),
the checks, the report and exit. Medians over the repeats.

`--profile` runs the suite once more under cProfile and prints where the time outside the target
goes: own time per area (memconform's checks, drivers, catalogue, pytest/pluggy, httpx/httpcore,
jsonschema, …) and the top functions.

Goal: overhead ≤ 15 %.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

RECORD_ENV = "MEMCONFORM_BENCH_RECORD"
HERE = Path(__file__).resolve().parent
PLUGIN = Path(__file__).stem

_clock = time.monotonic  # CLOCK_MONOTONIC on Linux: comparable across processes


# =============================================================================================
# The recorder: runs inside the suite's process, loaded with `-p bench_harness_overhead`.
# =============================================================================================

_LOG: dict[str, Any] = {"events": [], "marks": {}}
_KEEP = 4 * 1024 * 1024  # bytes of each answer kept (to map the ids a server minted; SSE events)


def _mark(name: str) -> None:
    _LOG["marks"].setdefault(name, _clock())


def _install_recorder() -> None:
    import httpx

    main = threading.main_thread().ident
    events: list[dict[str, Any]] = _LOG["events"]

    class TimedStream(httpx.SyncByteStream):
        __slots__ = ("inner", "event")

        def __init__(self, inner: Any, event: dict[str, Any]):
            self.inner, self.event = inner, event

        def __iter__(self):
            ev = self.event
            kept = ev["answer"]
            for chunk in self.inner:
                ev["bytes"] += len(chunk)
                ev["last"] = _clock()
                if ev["bytes"] <= _KEEP:
                    kept.append(chunk)
                yield chunk

        def close(self) -> None:
            try:
                self.inner.close()
            finally:
                self.event.setdefault("end", _clock())

    original = httpx.HTTPTransport.handle_request

    def handle_request(self: Any, request: Any) -> Any:
        event = {"kind": "http", "main": threading.get_ident() == main, "method": request.method,
                 "url": str(request.url), "headers": request.headers.raw, "body": request.read(), "bytes": 0,
                 "answer": [], "start": _clock()}
        events.append(event)
        try:
            response = original(self, request)
        except BaseException as exc:
            event["end"] = _clock()
            event["error"] = type(exc).__name__
            raise
        event["last"] = event["headers_at"] = _clock()
        event["status"] = response.status_code
        response.stream = TimedStream(response.stream, event)
        return response

    httpx.HTTPTransport.handle_request = handle_request

    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if threading.get_ident() != main:
            return real_sleep(seconds)
        event = {"kind": "sleep", "seconds": seconds, "start": _clock()}
        events.append(event)
        try:
            return real_sleep(seconds)
        finally:
            event["end"] = _clock()

    time.sleep = sleep


def pytest_configure(config: Any) -> None:
    if os.environ.get(RECORD_ENV):
        _mark("configure")
        _install_recorder()


def pytest_sessionstart(session: Any) -> None:
    _mark("sessionstart")


def pytest_collection_finish(session: Any) -> None:
    _mark("collected")


def pytest_sessionfinish(session: Any) -> None:
    _mark("sessionfinish")


def pytest_unconfigure(config: Any) -> None:
    path = os.environ.get(RECORD_ENV)
    if not path:
        return
    _mark("unconfigure")
    started = _clock()
    for ev in _LOG["events"]:
        ev.setdefault("end", ev.get("last", ev["start"]))
        if "answer" in ev:
            ev["answer"] = b"".join(ev["answer"])
    with open(path, "wb") as fh:
        pickle.dump(_LOG, fh, protocol=pickle.HIGHEST_PROTOCOL)
    Path(path + ".write").write_text(repr(_clock() - started))


# =============================================================================================
# The benchmark.
# =============================================================================================

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`memconform serve` on a free port with a fresh db; `export_dir` shared by record and replay."""

    def __init__(self, folder: Path, export_dir: Path, name: str):
        import httpx

        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(folder / f"{name}.log", "wb")  # noqa: SIM115 — closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memconform.suite.cli", "serve", "--port", str(self.port),
             "--db", str(folder / f"{name}.db"), "--upp-export-dir", str(export_dir)],
            stdout=self.log, stderr=subprocess.STDOUT, env=_env())
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{self.base}/ump/capabilities", timeout=1)
                return
            except httpx.HTTPError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"memconform serve did not start (see {self.log.name})") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


#: Byte-code cache for the suite and the servers (set by main): None keeps the environment as it is.
PYCACHE: Path | None = None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    if PYCACHE is not None:  # as on a usual machine: compiled modules (and pytest's rewritten ones) are reused
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def _suite_env(record: Path | None) -> dict[str, str]:
    env = dict(_env(), MEMCONFORM_FUZZ_EXAMPLES="0")
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    if record is not None:
        env[RECORD_ENV] = str(record)
    else:
        env.pop(RECORD_ENV, None)
    return env


def _suite_args(base: str, spec: str) -> list[str]:
    return ["-m", "pytest", f"--target={base}", f"--spec={spec}", "--memconform-only", "-p", "no:cacheprovider",
            "-q", "-p", PLUGIN]


def run_suite(server: Server, spec: str, folder: Path, *, record: bool = True,
              profile: Path | None = None) -> dict[str, Any]:
    log = folder / f"suite-{spec}.pickle" if record else None
    argv = [sys.executable]
    if profile is not None:
        argv += ["-m", "cProfile", "-o", str(profile)]
    argv += _suite_args(server.base, spec)
    spawned = _clock()
    proc = subprocess.run(argv, cwd=folder, env=_suite_env(log), capture_output=True, text=True)
    ended = _clock()
    tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or [proc.stderr[-300:]]
    out: dict[str, Any] = {"spawned": spawned, "ended": ended, "exit": proc.returncode, "tail": tail[0],
                           "stdout": proc.stdout}
    if log is not None:
        with open(log, "rb") as fh:
            out.update(pickle.load(fh))
        out["write"] = float(Path(str(log) + ".write").read_text())
        out["ended"] -= out["write"]  # the recorder's own dump is not the suite's time
    return out


def _union(intervals: list[tuple[float, float]], lo: float = float("-inf"), hi: float = float("inf")) -> float:
    """Total length of the union of intervals, clipped to [lo, hi]."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in intervals):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _overlapping(http: list[dict[str, Any]]) -> set[int]:
    """Indexes of exchanges replayed on a thread: made off the main thread, or still open when a
    later exchange started."""
    out = set()
    for i, ev in enumerate(http):
        if not ev["main"] or (i + 1 < len(http) and http[i + 1]["start"] < ev["end"] - 1e-6
                              and http[i + 1]["start"] > ev["start"]):
            out.add(i)
    return out


class _Streamer(threading.Thread):
    """Replays one overlapping exchange (an SSE subscribe): send, read as many events as the suite
    read (or as many bytes), close."""

    def __init__(self, client: Any, request: Any, want_bytes: int, want_events: int):
        super().__init__(daemon=True)
        self.client, self.request = client, request
        self.want_bytes, self.want_events = want_bytes, want_events
        self.headers = threading.Event()
        self.first = threading.Event()
        self.response: Any = None
        self.status: int | None = None
        self.start_t = self.end_t = 0.0

    def run(self) -> None:
        self.start_t = _clock()
        try:
            response = self.response = self.client.send(self.request, stream=True)
            self.status = response.status_code
            self.headers.set()
            try:
                got = bytearray()
                if self.want_bytes:
                    for chunk in response.iter_raw():
                        got += chunk
                        self.first.set()
                        if len(got) >= self.want_bytes or (
                                self.want_events and _events(got) >= self.want_events):
                            break
            finally:
                response.close()
        except Exception:  # noqa: BLE001 — a stream cut off from the main thread
            pass
        finally:
            self.end_t = _clock()
            self.headers.set()
            self.first.set()

    def cut(self) -> None:
        stream = self.response.extensions.get("network_stream") if self.response is not None else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _events(data: bytes | bytearray) -> int:
    """Server-sent events in a stream so far (each ends with a blank line)."""
    return bytes(data).replace(b"\r\n", b"\n").count(b"\n\n")


# Values a server mints (record ids, content hashes): the raw loop maps the recorded ones to the
# ones the fresh server minted, so its later requests ask for what exists (as the suite's did).
_MINTED = re.compile(rb"(urn(?::|%3A)ump(?::|%3A)|blake3(?::|%3A))([a-z2-7]{16,})")


def _minted(data: bytes) -> list[bytes]:
    out: list[bytes] = []
    for m in _MINTED.finditer(data):
        if m.group(2) not in out:
            out.append(m.group(2))
    return out


def replay(log: dict[str, Any], old_base: str, new_base: str) -> dict[str, Any]:
    """The raw loop: the recorded requests, in order, byte for byte (but for ids the fresh server
    minted otherwise), the same sleeps, against a fresh server."""
    import httpx

    old_host, new_host = old_base.split("//", 1)[1].encode(), new_base.split("//", 1)[1].encode()
    http = [ev for ev in log["events"] if ev["kind"] == "http"]
    threaded = _overlapping(http)
    steps: list[tuple[float, str, Any]] = []
    for i, ev in enumerate(http):
        steps.append((ev["start"], "start" if i in threaded else "call", i))
        if i in threaded:
            steps.append((ev["end"], "end", i))
    for ev in log["events"]:
        if ev["kind"] == "sleep":
            steps.append((ev["start"], "sleep", ev["seconds"]))
    steps.sort(key=lambda s: s[0])

    # untimed: the requests as sent, which of them name a minted value, which answers mint one
    prepared, rewrite, learn = [], [], []
    seen: set[bytes] = set()
    for i, ev in enumerate(http):
        headers = [(k, new_host if k.lower() == b"host" and v == old_host else v) for k, v in ev["headers"]]
        url = ev["url"].replace(old_base, new_base, 1)
        prepared.append((ev["method"], url, headers, ev["body"] or None))
        named = set(_minted(url.encode() + b" " + (ev["body"] or b"")))
        rewrite.append(bool(named & seen))
        # a stream's events repeat values the calls made meanwhile minted: learn from calls only
        answer = b"" if i in threaded else ev.get("answer", b"")
        fresh = [v for v in _minted(answer) if v not in seen and v not in named]
        learn.append(fresh)
        seen.update(fresh)
    mapping: dict[bytes, bytes] = {}

    def sub(data: bytes) -> bytes:
        return _MINTED.sub(lambda m: m.group(1) + mapping.get(m.group(2), m.group(2)), data)

    def request(i: int) -> Any:
        method, url, headers, body = prepared[i]
        if rewrite[i]:
            url = sub(url.encode()).decode()
            if body:
                body = sub(body)
                headers = [(k, str(len(body)).encode() if k.lower() == b"content-length" else v)
                           for k, v in headers]
        return httpx.Request(method, url, headers=headers, content=body)

    def learned(i: int, answer: bytes) -> None:
        if learn[i]:
            known = set(mapping.values())
            for old, new in zip(learn[i], [v for v in _minted(answer) if v not in known], strict=False):
                mapping[old] = new

    intervals: list[tuple[float, float]] = []
    waits: list[tuple[float, float]] = []
    same = 0
    streamers: dict[int, _Streamer] = {}
    took: dict[int, float] = {}  # exchange index -> seconds in the raw loop
    with httpx.Client(timeout=30) as client, httpx.Client(timeout=30) as side:
        started = _clock()
        for _, kind, arg in steps:
            if kind == "sleep":
                t = _clock()
                time.sleep(arg)
                waits.append((t, _clock()))
            elif kind == "call":
                t = _clock()
                response = client.send(request(arg))
                intervals.append((t, _clock()))
                took[arg] = intervals[-1][1] - t
                same += response.status_code == http[arg].get("status")
                learned(arg, response.content)
            elif kind == "start":
                ev = http[arg]
                streamer = streamers[arg] = _Streamer(side, request(arg), ev["bytes"], _events(ev.get("answer", b"")))
                streamer.start()
                streamer.headers.wait(10)
                if ev["bytes"]:
                    streamer.first.wait(10)
            else:  # the suite closed the stream here
                streamer = streamers.pop(arg)
                streamer.join(5)
                if streamer.is_alive():
                    streamer.cut()
                    streamer.join(5)
                intervals.append((streamer.start_t, streamer.end_t))
                took[arg] = streamer.end_t - streamer.start_t
                same += streamer.status == http[arg].get("status")
        elapsed = _clock() - started
    return {"elapsed": elapsed, "http": _union(intervals), "wait": _union(waits), "requests": len(http),
            "same_status": same, "threaded": len(threaded), "took": took}


def figures(suite: dict[str, Any], raw: dict[str, Any]) -> dict[str, float]:
    marks = suite["marks"]
    spans = [(ev["start"], ev["end"]) for ev in suite["events"] if ev["kind"] == "http"]
    sleeps = [(ev["start"], ev["end"]) for ev in suite["events"] if ev["kind"] == "sleep"]
    wall = suite["ended"] - suite["spawned"]
    phases = {
        "startup": (suite["spawned"], marks["configure"]),
        "collection": (marks["configure"], marks.get("collected", marks["configure"])),
        "checks": (marks.get("collected", marks["configure"]), marks.get("sessionfinish", suite["ended"])),
        "report+exit": (marks.get("sessionfinish", suite["ended"]), suite["ended"]),
    }
    out: dict[str, float] = {"suite wall": wall, "suite from configure": suite["ended"] - marks["configure"]}
    out["suite HTTP"] = _union(spans)
    out["suite waits"] = _union(spans + sleeps) - out["suite HTTP"]
    out["suite outside"] = wall - out["suite HTTP"] - out["suite waits"]
    for name, (lo, hi) in phases.items():
        inside = _union(spans + sleeps, lo, hi)
        out[f"{name} total"] = hi - lo
        out[f"{name} outside"] = (hi - lo) - inside
    out["raw loop"] = raw["elapsed"]
    out["raw HTTP"] = raw["http"]
    out["raw waits"] = raw["wait"]
    out["overhead %"] = 100 * (wall - raw["elapsed"]) / raw["elapsed"]
    out["overhead from configure %"] = 100 * (out["suite from configure"] - raw["elapsed"]) / raw["elapsed"]
    lo, hi = phases["checks"]
    in_checks = _union(spans + sleeps, lo, hi)
    out["checks overhead %"] = 100 * ((hi - lo) - in_checks) / max(in_checks, 1e-9)
    out["requests"] = raw["requests"]
    out["same status %"] = 100 * raw["same_status"] / max(1, raw["requests"])
    out["outside per request ms"] = 1000 * out["suite outside"] / max(1, raw["requests"])
    out["recorder dump"] = suite.get("write", 0.0)
    return out


def _print_table(spec: str, rows: list[dict[str, float]], unrecorded: float | None) -> None:
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    n = len(rows)
    print(f"\n{spec.upper()} over HTTP: {int(med['requests'])} requests, median of {n} "
          f"(runs: {', '.join(format(r['overhead %'], '.0f') + ' %' for r in rows)})")
    best_suite = min(r["suite wall"] for r in rows)
    best_raw = min(r["raw loop"] for r in rows)

    def line(label: str, value: float, unit: str = "s", note: str = "") -> None:
        shown = f"{value:8.2f} {unit}" if unit == "s" else f"{value:8.1f} {unit}"
        print(f"  {label:<46}{shown}{('   ' + note) if note else ''}")

    line("suite wall time (spawn → exit)", med["suite wall"])
    line("  in HTTP round trips (requests in flight)", med["suite HTTP"])
    line("  in deliberate waits (time.sleep)", med["suite waits"])
    line("  outside the target", med["suite outside"], note=f"{med['outside per request ms']:.2f} ms per request")
    for phase in ("startup", "collection", "checks", "report+exit"):
        line(f"    {phase}: outside / total", med[f"{phase} outside"],
             note=f"of {med[f'{phase} total']:.2f} s")
    line("raw httpx loop (same requests, same waits)", med["raw loop"])
    line("  in HTTP round trips", med["raw HTTP"])
    line("  in waits", med["raw waits"])
    line("answers with the recorded status", med["same status %"], "%")
    line("overhead (suite wall − raw) / raw", med["overhead %"], "%", "goal ≤ 15 %")
    line("overhead without interpreter start + imports", med["overhead from configure %"], "%")
    line("overhead, best suite run against best raw loop", 100 * (best_suite - best_raw) / best_raw, "%",
         f"{best_suite:.2f} s against {best_raw:.2f} s (least disturbed by other load)")
    line("checks phase alone: outside / in HTTP", med["checks overhead %"], "%",
         "the per-request part, without the fixed costs")
    if unrecorded is not None:
        line("suite wall without the recorder (once)", unrecorded,
             note=f"recorded runs: {med['suite wall']:.2f} s; recorder dump {med['recorder dump'] * 1000:.0f} ms "
                  "(not counted)")


_AREAS = (
    ("memconform checks", ("/suite/ump/checks/", "/suite/upp/checks/", "/suite/omf/checks/")),
    ("memconform drivers (targets/)", ("/targets/",)),
    ("memconform plugin/model/catalogue (suite/)", ("/suite/",)),
    ("memconform reports", ("/reports/",)),
    ("byte-code compile/load", ("<built-in method builtins.compile>", "<built-in method marshal")),
    ("pytest assertion rewriting", ("/_pytest/assertion/",)),
    ("socket I/O (the target's time)", ("<method 'recv", "<method 'send", "<method 'connect", "<built-in method select",
                                        "<method 'poll", "<built-in method time.sleep", "<method 'acquire",
                                        "<built-in method _socket")),
    ("lark (rfc3987_syntax's grammar, built on importing jsonschema)", ("/lark/", "/rfc3987_syntax/")),
    ("TLS context per httpx.Client (load_verify_locations)", ("load_verify_locations", "set_default_verify_paths")),
    ("gc.collect (pytest's unraisable-exception check)", ("<built-in method gc.collect>",)),
    ("import machinery", ("<frozen importlib", "/importlib/", "<built-in method _imp.", "<built-in method posix.")),
)


def _area(file: str, func: str) -> str:
    where = func if file == "~" else f"{file}:{func}"
    for name, needles in _AREAS:
        if any(n in where for n in needles):
            return name
    if "/site-packages/" in file:
        return file.split("/site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if file == "~":
        return "other built-ins"
    return "stdlib" if "/lib/python" in file else "other"


def print_profile(path: Path, top: int = 25) -> None:
    import pstats

    stats = pstats.Stats(str(path))
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, _), (_, _, tt, _, _) in raw.items())
    by_area: dict[str, float] = {}
    for (file, _line, func), (_cc, _nc, tt, _ct, _callers) in raw.items():
        area = _area(file, func)
        by_area[area] = by_area.get(area, 0.0) + tt
    print(f"\nprofile (cProfile, own time by area, {total:.2f} s in all; cProfile slows Python code "
          f"down, so read shares, not seconds; saved in {path})")
    for area, tt in sorted(by_area.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {area:<64}{tt:8.2f} s  {100 * tt / total:5.1f} %")
    print(f"\nmemconform functions by cumulative time (top {top})")
    stats.sort_stats("cumulative").print_stats(r"/(suite|targets|reports)/", top)
    print(f"top {top} functions by own time")
    stats.sort_stats("tottime").print_stats(top)


_WARM: set[str] = set()


def warm_up(spec: str, folder: Path) -> None:
    """One untimed run, to fill the byte-code cache (and the OS's file cache)."""
    if PYCACHE is None or spec in _WARM:
        return
    _WARM.add(spec)
    run_dir = folder / f"{spec}-warmup"
    run_dir.mkdir()
    server = Server(run_dir, run_dir, "warmup")
    try:
        run_suite(server, spec, run_dir, record=False)
    finally:
        server.stop()


def bench_spec(spec: str, repeat: int, folder: Path, *, check_recorder: bool) -> None:
    rows = []
    unrecorded = None
    warm_up(spec, folder)
    for i in range(repeat):
        run_dir = folder / f"{spec}-{i}"
        run_dir.mkdir()
        exports = run_dir / "exports"
        exports.mkdir()
        server = Server(run_dir, exports, "record")
        try:
            suite = run_suite(server, spec, run_dir)
        finally:
            server.stop()
        if suite["exit"] not in (0, 1):
            print(f"{spec}: the suite run ended with exit {suite['exit']}: {suite['tail']}\n{suite['stdout'][-2000:]}")
            return
        server = Server(run_dir, exports, "replay")
        try:
            raw = replay(suite, f"http://127.0.0.1:{server_port(suite)}", server.base)
        finally:
            server.stop()
        row = figures(suite, raw)
        rows.append(row)
        print(f"  {spec} run {i + 1}: suite {row['suite wall']:.2f} s ({suite['tail']}), raw loop "
              f"{row['raw loop']:.2f} s, overhead {row['overhead %']:.0f} %", flush=True)
    if check_recorder:
        run_dir = folder / f"{spec}-plain"
        run_dir.mkdir()
        exports = run_dir / "exports"
        exports.mkdir()
        server = Server(run_dir, exports, "plain")
        try:
            plain = run_suite(server, spec, run_dir, record=False)
        finally:
            server.stop()
        unrecorded = plain["ended"] - plain["spawned"]
    if rows:
        _print_table(spec, rows, unrecorded)


def server_port(suite: dict[str, Any]) -> int:
    for ev in suite["events"]:
        if ev["kind"] == "http":
            return int(ev["url"].split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    raise RuntimeError("the suite made no HTTP request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per spec (default 3; 0 with --profile: the profile only); medians are printed")
    parser.add_argument("--spec", action="append", choices=("ump", "upp"), default=None,
                        help="ump and/or upp (default both)")
    parser.add_argument("--profile", action="store_true", help="also run the suite once under cProfile")
    parser.add_argument("--no-recorder-check", action="store_true",
                        help="skip the extra run without the recorder")
    parser.add_argument("--cold", action="store_true",
                        help="keep this environment's byte-code settings (e.g. PYTHONDONTWRITEBYTECODE=1: every "
                             "run compiles and assertion-rewrites every module afresh); default: a warmed "
                             "byte-code cache in the temporary folder, as on a usual machine")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, dbs, profiles)")
    args = parser.parse_args()
    specs = args.spec or ["ump", "upp"]
    global PYCACHE
    folder = Path(tempfile.mkdtemp(prefix="memconform-overhead-"))
    if not args.cold:
        PYCACHE = folder / "pycache"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.1f}; MEMCONFORM_FUZZ_EXAMPLES=0; "
          f"byte-code cache: {'as the environment has it' if args.cold else 'warm (PYTHONPYCACHEPREFIX)'}"
          f"{' — PYTHONDONTWRITEBYTECODE=1' if args.cold and os.environ.get('PYTHONDONTWRITEBYTECODE') else ''}")
    try:
        for spec in specs:
            if args.repeat > 0:
                bench_spec(spec, args.repeat, folder, check_recorder=not args.no_recorder_check)
        if args.profile:
            for spec in specs:
                warm_up(spec, folder)
                run_dir = folder / f"{spec}-profile"
                run_dir.mkdir()
                exports = run_dir / "exports"
                exports.mkdir()
                server = Server(run_dir, exports, "profile")
                try:
                    prof = run_dir / "suite.prof"
                    run_suite(server, spec, run_dir, record=False, profile=prof)
                finally:
                    server.stop()
                print(f"\n===== {spec.upper()}")
                print_profile(prof)
    finally:
        if args.keep:
            print(f"\nkept: {folder}")
        else:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
