"""`memconform run` shows live progress per spec / level / binding and ends with the level table;
plain `pytest --target=…` output stays pytest's own (suite/progress.py)."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from rich.console import Console

from memconform.suite.progress import (
    GroupProgress, NodeIdKeys, ProgressState, _legend_lines, level_table, plain_line, render_live, verdict,
)
from memconform.suite.registry import all_checks
from memconform.suite.ump.corpus import export_corpus

MEMCONFORM = [sys.executable, "-c", "from memconform.suite.cli import main; main()"]
GROUP_LINE = re.compile(r"^\[memconform\] (?P<spec>\S+) (?P<version>\S+) / (?P<level>L\d) / (?P<binding>\S+): "
                        r"(?P<done>\d+)/(?P<total>\d+) done — (?P<passed>\d+) passed, (?P<failed>\d+) failed, "
                        r"(?P<warning>\d+) warnings?, (?P<error>\d+) errors?, (?P<skipped>\d+) skipped"
                        r"(?:, (?P<other>\d+) other)? \((?P<all_done>\d+)/(?P<all>\d+) checks, \d+:\d\d\)$")
DOT_LINE = re.compile(r"^[.sFEx]+\s*(\[\s*\d+%\])?$")


def _run(args: list[str], cwd: Path, *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="120")
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _groups(report: dict) -> dict[tuple[str, str, str, str], Counter[str]]:
    column = {"stale": "error", "info": "other", "xfailed": "other"}
    out: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    for r in report["results"]:
        out[(r["spec"].upper(), r["version"], r["level"], r["binding"])][column.get(r["outcome"], r["outcome"])] += 1
    return out


def _table_rows(lines: list[str]) -> list[list[str]]:
    start = lines.index("memconform levels")
    assert lines[start + 1].split() == ["MUST", "MUST", "SHOULD"]
    assert lines[start + 2].split() == ["spec", "version", "level", "binding", "passed", "failed", "warnings",
                                        "errors", "verdict"]
    assert set(lines[start + 3]) == {"─"}
    return [line.split(None, 8) for line in lines[start + 4:] if line.strip()]


def _check_table(lines: list[str], report: dict) -> None:
    rows = _table_rows(lines)
    assert len(rows) == len(report["levels"])
    for cells, row in zip(rows, report["levels"], strict=True):
        assert cells[:4] == [row["spec"].upper(), row["version"], row["level"] or "—", row["binding"]]
        assert [int(c) for c in cells[4:8]] == [row["must_passed"], row["must_failed"], row["should_warnings"],
                                               row["errors"]]
        assert cells[8] == verdict(row)


def _check_plain_run(out: str, report: dict) -> None:
    lines = out.splitlines()
    assert not [ln for ln in lines if DOT_LINE.match(ln)], "pytest's dot line is shown under memconform run"
    expected = _groups(report)
    total = len(report["results"])
    assert f"[memconform] {total} checks in {len(expected)} spec / level / binding groups" in lines
    seen = {}
    for line in lines:
        m = GROUP_LINE.match(line)
        if m:
            key = (m["spec"], m["version"], m["level"], m["binding"])
            assert key not in seen, f"group announced twice: {line}"
            seen[key] = m
    assert set(seen) == set(expected)
    for key, m in seen.items():
        counts = expected[key]
        assert int(m["done"]) == int(m["total"]) == sum(counts.values()), m.string
        for name in ("passed", "failed", "warning", "error", "skipped"):
            assert int(m[name]) == counts[name], (m.string, name)
        assert int(m["other"] or 0) == counts["other"]
        assert int(m["all"]) == total
    # the progress lines come first, then pytest's summary with the memconform section, then the table
    first_group = min(i for i, ln in enumerate(lines) if GROUP_LINE.match(ln))
    section = next(i for i, ln in enumerate(lines) if re.match(r"^=+ memconform =+$", ln))
    table = lines.index("memconform levels")
    assert first_group < section < table
    for row in report["levels"]:
        assert row["summary"] in lines  # the memconform summary is kept
    _check_table(lines, report)
    assert _table_rows(lines)[-1] == [c for c in lines[-1].split(None, 8)]  # the table ends the output


# -- the pure parts ---------------------------------------------------------------------------

def _result(outcome: str, level: str = "L1", binding: str = "http", version: str = "1.0", target: str = "reference"):
    return {"target": target, "spec": "ump", "version": version, "level": level, "binding": binding,
            "outcome": outcome}


def _state() -> ProgressState:
    state = ProgressState()
    keys = [("reference", "ump", "1.0", "L0", "file")] * 2 + [("reference", "ump", "1.0", "L1", "http")] * 5
    state.set_totals(keys)
    state.record("a", _result("passed", "L0", "file"))
    state.record("b", _result("passed", "L0", "file"))
    for i, outcome in enumerate(("passed", "failed", "warning", "skipped")):
        state.record(f"c{i}", _result(outcome))
    state.record("c0", _result("failed"))  # a second report of one item counts once
    return state


def _text(renderable, width: int = 120) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=True)
    console.print(renderable)
    return console.export_text()


def _norm(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_live_rendering_shows_counts_per_spec_level_and_binding():
    lines = _norm(_text(render_live(_state(), elapsed=75)))
    assert lines[0] == "memconform 6/7 checks · 1:15 · 3 passed · 1 failed · 1 warning · 1 skipped"
    assert lines[1] == "spec level binding done passed failed warn err skip other"
    assert lines[3] == "UMP 1.0 L0 file 2/2 2 · · · · ·"
    assert lines[4] == "UMP 1.0 L1 http 4/5 1 1 1 · 1 ·"
    # the legend under the table says what each counter counts
    assert " · ".join(lines[5:]) == ("passed: met · failed: a MUST violated · warn: a SHOULD violated · "
                                     "err: target error · skip: cannot run here · "
                                     "other: MAY not offered, inconclusive")


def test_live_rendering_before_totals_and_with_several_targets():
    state = ProgressState()
    state.record("x", _result("error", target="http://a"))
    state.record("y", _result("info", "L2", target="http://b"))
    lines = _norm(_text(render_live(state, elapsed=3)))
    assert lines[0] == "memconform 2/? checks · 0:03 · 1 error · 1 other"
    assert lines[1].startswith("target spec level binding done")
    assert lines[3] == "http://a UMP 1.0 L1 http 1/? · · · 1 · ·"
    assert lines[4] == "http://b UMP 1.0 L2 http 1/? · · · · · 1"


def test_live_rendering_folds_finished_groups_to_fit():
    state = ProgressState()
    levels = ("L0", "L1", "L2", "L3")
    state.set_totals([("reference", "ump", "1.0", lvl, "http") for lvl in levels])
    for lvl in levels[:3]:
        state.record(lvl, _result("passed", lvl))
    legend = len(_legend_lines(120))
    lines = _norm(_text(render_live(state, elapsed=0, height=4 + legend + 2)))  # room for two lines
    assert lines[-legend - 2] == "UMP 1.0 L3 http 0/1 · · · · · ·"
    assert lines[-legend - 1] == "+ 3 finished groups without failures or errors"


def test_plain_line():
    state = _state()
    group = state.groups[("reference", "ump", "1.0", "L1", "http")]
    assert plain_line(group, state, elapsed=9) == (
        "[memconform] UMP 1.0 / L1 / http: 4/5 done — 1 passed, 1 failed, 1 warning, 0 errors, 1 skipped "
        "(6/7 checks, 0:09)")
    assert GROUP_LINE.match(plain_line(group, state, elapsed=9))
    lone = GroupProgress(("t", "ump", "-", "L0", "-"), total=1, done=1, counts=Counter(error=1))
    assert "opening the target: 1/1 done" in plain_line(lone, state, elapsed=0)


def _row(binding: str, level, status: str, *, blocked=None, blocked_by=(), claim=None, accepted=None,
         spec: str = "ump", version: str = "1.0", passed: int = 10, failed: int = 0, errors: int = 0) -> dict:
    return {"target": "reference", "spec": spec, "version": version, "binding": binding, "level": level,
            "blocked_at": blocked, "blocked_by": list(blocked_by), "claim": claim, "accepted": accepted or {},
            "status": status, "must_passed": passed, "must_failed": failed, "errors": errors, "should_warnings": 0}


def test_level_table_text():
    """The verdict column says what the report's level row says: its status, every blocking id (or
    "+N more"), a file's claim; never "conformant" beside failed MUSTs."""
    blocked_l2 = {"level": "L2", "failed": ["ump/x", "ump/y"], "errors": ["ump/z"], "not_assessed": []}
    rows = [
        _row("http", "L3", "conformant", passed=96),
        _row("mcp", "L1", "partial", blocked=blocked_l2, blocked_by=["ump/x", "ump/y", "ump/z"], failed=2, errors=1),
        _row("stdio", None, "not-conformant", spec="upp", version="1.0.0", failed=2,
             blocked={"level": "L1", "failed": ["upp/x", "upp/w"], "errors": [], "not_assessed": []},
             blocked_by=["upp/x", "upp/w"]),
        _row("file", "L0", "not-assessed", blocked={"level": "L1", "failed": [], "errors": [], "not_assessed": ["ump/a"]}),
        _row("file", None, "claim", claim={"id": "emitted-file", "title": "L0 (emitted file)", "reached": True},
             blocked={"level": "L0", "failed": [], "errors": [], "not_assessed": ["ump/r"]}),
        _row("file", None, "incomplete", blocked={"level": "L0", "failed": [], "errors": [], "not_assessed": ["ump/r"]}),
        _row("http", "L1", "partial", blocked=blocked_l2, blocked_by=["ump/x"], failed=1,
             accepted={"must": 1, "requirements": ["ump/x"], "by": ["baseline.toml"]}),
    ]
    words = [verdict(r) for r in rows]
    assert words == ["conformant", "L2 blocked by ump/x (+2 more)", "not conformant: L1 blocked by upp/x (+1 more)",
                     "L1 not assessed", "L0 (emitted file)", "not assessed",
                     "L2 blocked by ump/x; 1 MUST accepted by baseline.toml"]
    lines = _norm(_text(level_table(rows), width=140))
    assert lines[0] == "memconform levels"
    assert lines[1] == "MUST MUST SHOULD"
    assert lines[2] == "spec version level binding passed failed warnings errors verdict"
    assert lines[4] == "UMP 1.0 L3 http 96 0 0 0 conformant"
    assert lines[5] == "UMP 1.0 L1 mcp 10 2 0 1 L2 blocked by ump/x (+2 more)"
    assert lines[6] == "UPP 1.0.0 — stdio 10 2 0 0 not conformant: L1 blocked by upp/x (+1 more)"
    assert lines[7] == "UMP 1.0 L0 file 10 0 0 0 L1 not assessed"
    assert lines[8] == "UMP 1.0 — file 10 0 0 0 L0 (emitted file)"
    assert not any(re.search(r"(?<!not )conformant", ln) for ln in lines if "blocked" in ln)


def test_level_tables_per_target_never_cut_the_verdict():
    blocked = {"level": "L1", "failed": ["upp/jsonrpc-version"], "errors": [], "not_assessed": []}
    rows = [_row("http", "L3", "conformant", spec="upp", version="1.0.0"),
            {**_row("http", None, "not-conformant", spec="upp", version="1.0.0", failed=1, blocked=blocked,
                    blocked_by=["upp/jsonrpc-version"]), "target": "reference?fault=upp-jsonrpc-version-missing"}]
    lines = _norm(_text(level_table(rows), width=80))
    assert "memconform levels · reference" in lines
    assert "memconform levels · reference?fault=upp-jsonrpc-version-missing" in lines
    assert not any(ln.startswith("target") for ln in lines)
    assert "upp/jsonrpc-version" in lines  # wrapped on 80 columns, never cut
    wide = _norm(_text(level_table(rows), width=120))
    assert "UPP 1.0.0 — http 10 1 0 0 not conformant: L1 blocked by upp/jsonrpc-version" in wide


def test_live_view_fits_an_80_by_24_terminal_with_every_group_represented():
    """Two targets, 56 groups: finished, troubled, running and waiting ones. On 80×24 the view fits,
    no row wraps, every group is a row or counted in a summary line, and a legend explains the counts."""
    state = ProgressState()
    groups = [(t, spec, version, level, binding) for t in ("http://127.0.0.1:8700", "reference?fault=cross-owner-leak")
              for spec, version, levels, bindings in (("ump", "0.1", ("L0", "L1", "L2", "L3"), ("http", "mcp")),
                                                      ("ump", "1.0", ("L0", "L1", "L2", "L3"), ("http", "mcp")),
                                                      ("upp", "1.0.0", ("L1", "L2", "L3"), ("http", "stdio")),
                                                      ("omf", "1.0", ("L1",), ("cli", "http")))
              for level in levels for binding in bindings]
    assert len(groups) == 48
    state.set_totals([g for g in groups for _ in range(4)])
    for i, g in enumerate(groups):
        done = 4 if i < 30 else (2 if i < 34 else 0)  # 30 finished, 4 running, 14 waiting
        for n in range(done):
            outcome = "failed" if (i % 7 == 0 and n == 0) else ("error" if i % 11 == 0 and n == 1 else "passed")
            state.record(f"{i}-{n}", {"target": g[0], "spec": g[1], "version": g[2], "level": g[3],
                                      "binding": g[4], "outcome": outcome})
    console = Console(record=True, width=80, height=24, file=io.StringIO(), force_terminal=True)
    console.print(render_live(state, elapsed=5))
    text = console.export_text()
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 23, text  # one line left for the cursor under rich's live display
    assert all(len(ln.rstrip()) <= 80 for ln in lines)
    row = re.compile(r"(UMP|UPP|OMF) \S+ +L\d +\S+ +\d+/\d+")
    rows = [ln for ln in lines if row.search(ln)]
    folded = [int(m.group(1)) for ln in lines if (m := re.match(r"^\+ (\d+) ", ln))]
    assert len(rows) + sum(folded) == len(groups), text
    running = [g for g in state.ordered() if 0 < g.done < (g.total or 0)]
    troubled = [g for g in state.ordered() if g.troubled]
    assert len(rows) >= len(running) + len(troubled)  # what needs a look stays on screen
    for word in ("passed", "failed", "warn", "err", "skip", "other"):
        assert f"{word}: " in text, text  # the legend


def test_node_ids_give_the_same_groups_as_the_items():
    """Under pytest-xdist the controller sees node ids only; cases can narrow a check's level."""
    keys = NodeIdKeys()
    seen_case = False
    for chk in all_checks():
        for binding in chk.bindings:
            for version in ("0.1", "1.0", "1.0.0"):
                if not chk.requirements_for(version):
                    continue
                from memconform.targets.base import Subject

                subject = Subject("http://[::1]:8700", chk.spec, version, binding)
                cases = list(chk.cases(subject)) if chk.cases else [None]
                for case in cases[:50]:
                    nodeid = f"memconform::{subject.target}::{chk.spec}-{version}::{binding}::{chk.id}"
                    if case is not None:
                        nodeid += f"[{case.id}]"
                        seen_case = True
                    assert keys(nodeid) == (subject.target, chk.spec, version, chk.level(version, case), binding)
    assert seen_case
    assert keys("memconform::http://127.0.0.1:9::connect") == ("http://127.0.0.1:9", "ump", "-", "L0", "-")
    assert keys("tests/test_x.py::test_y") is None


# -- memconform run ----------------------------------------------------------------------------

def _export(tmp_path: Path) -> str:
    path = tmp_path / "corpus.ump.json"
    path.write_text(json.dumps(export_corpus("1.0")))
    return f"--target=file:{path}"


def test_plain_progress_and_table_match_the_report(tmp_path):
    """stdout is a pipe (a CI log): one line per spec / level / binding as it completes, no dot line,
    pytest's summary and the memconform section kept, the level table at the end."""
    proc = _run([*MEMCONFORM, "run", "--target=reference", "--spec=upp", "--report=r.json"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    _check_plain_run(proc.stdout, report)
    assert re.search(r"^=+ \d+ passed in [\d.]+s =+$", proc.stdout, re.M)


def test_progress_with_xdist(tmp_path):
    pytest.importorskip("xdist")
    # a file target: quick, and its golden-vector cases carry their own levels, which the
    # controller must work out from the node ids the workers collected
    proc = _run([*MEMCONFORM, "run", _export(tmp_path), "-n", "2", "--report=r.json"], tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["results"]
    _check_plain_run(proc.stdout, report)


def test_failures_section_is_kept_and_no_progress_restores_pytest_output(tmp_path):
    target = _export(tmp_path)
    proc = _run([*MEMCONFORM, "run", target, "--report=r.json"], tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    failed = [r for r in report["results"] if r["outcome"] == "failed"]
    assert failed, "the corpus export is expected to fail an export MUST"
    assert proc.returncode == 1
    assert re.search(r"^=+ FAILURES =+$", proc.stdout, re.M)
    _check_plain_run(proc.stdout, report)

    quiet = _run([*MEMCONFORM, "run", "--no-progress", target, "--report=r2.json"], tmp_path)
    assert quiet.returncode == 1
    assert "[memconform]" not in quiet.stdout and "memconform levels" not in quiet.stdout
    assert any(DOT_LINE.match(ln) for ln in quiet.stdout.splitlines())


def test_plain_pytest_output_is_unchanged(tmp_path):
    proc = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", _export(tmp_path), "--report=-"],
                tmp_path)
    assert "[memconform]" not in proc.stdout and "memconform levels" not in proc.stdout
    assert any(DOT_LINE.match(ln) for ln in proc.stdout.splitlines())
    assert re.search(r"^=+ memconform =+$", proc.stdout, re.M)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_live_display_on_a_terminal(tmp_path):
    target = _export(tmp_path)
    master, slave = os.openpty()
    env = dict(os.environ, COLUMNS="120", LINES="40")
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.Popen([*MEMCONFORM, "run", target, "--report=r.json"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(30) == 1
    raw = b"".join(chunks).decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x1b\x07]*(\x1b\\|\x07)", "", raw)
    report = json.loads((tmp_path / "r.json").read_text())
    total = len(report["results"])
    assert f"memconform {total}/{total} checks" in text  # the live header, at its last refresh
    assert "[memconform]" not in text  # no plain lines on a terminal
    lines = [ln.split("\r")[-1].rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    assert not [ln for ln in lines if DOT_LINE.match(ln)]
    assert re.search(r"^=+ FAILURES =+$", text.replace("\r\n", "\n"), re.M)
    _check_table(lines, report)
