"""The vendor workflow in docs/examples/memconform.yml stays true: its steps use options that exist,
it installs memconform from a source that exists (not the package index, where it is not published),
its steps run as written start the reference server on loopback, judge it and render what it found,
its wait fails when nothing comes up, and its report step signs, renders and badges a real report."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "examples" / "memconform.yml"


#: how GitHub Actions runs a `run:` step (shell: bash)
GITHUB_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


def _steps() -> dict[str, str]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return {s["name"]: s["run"] for job in doc["jobs"].values() for s in job.get("steps", [])
            if "run" in s and "name" in s}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """The workflow's own env, a runner's RUNNER_TEMP, this interpreter's scripts first on PATH."""
    declared = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8")).get("env") or {}
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, **{k: str(v) for k, v in declared.items()}, "RUNNER_TEMP": str(runner_temp),
            "PATH": path, **overrides}


def _shim(folder: Path, name: str, body: str) -> Path:
    """A stand-in command first on PATH, for what the test must not really do."""
    folder.mkdir(exist_ok=True)
    script = folder / name
    script.write_text("#!/usr/bin/env bash\n" + body + "\n", encoding="utf-8")
    script.chmod(0o755)
    return folder


def _start_step(tmp_path: Path, env: dict[str, str]) -> subprocess.Popen:
    """Run "Start the server" in its own process group: the server it leaves running in the
    background is stopped with the group. Its output goes to a file, which the server may keep open."""
    log = (tmp_path / "start.log").open("w")
    return subprocess.Popen([*GITHUB_BASH, _steps()["Start the server"]], cwd=tmp_path, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def test_the_workflow_judges_with_options_pytest_knows():
    judge = _steps()["Judge it"]
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-n)\b", judge))
    assert {"--target", "-n", "--report", "--baseline"} <= options
    helptext = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True,
                              timeout=120, cwd=ROOT).stdout
    for option in options - {"-n"}:
        assert option in helptext, f"{WORKFLOW.name} uses {option}, which pytest --help does not list"
    assert "-n numprocesses" in helptext  # pytest-xdist, a dependency of memconform


def test_the_report_step_signs_renders_and_badges_a_real_report(tmp_path: Path):
    if shutil.which("bash") is None:
        pytest.skip("the workflow's steps are bash")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--memconform-only", "-q",
                           "--target=reference", "--spec=omf", "--binding=cli"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:]
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env = {**os.environ, "RUNNER_TEMP": str(runner_temp), "MEMCONFORM_REPORT_KEY": "11" * 32,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    step = subprocess.run(["bash", "-euo", "pipefail", "-c", _steps()["Sign the report, render the page and the badges"]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert step.returncode == 0, step.stdout + step.stderr
    site = tmp_path / "site"
    signed = json.loads((site / "memconform-report.json").read_text())
    assert signed["signature"]["key"].startswith("did:key:z")
    verify = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "report", "verify",
                             str(site / "memconform-report.json"), "--expect-key", signed["signature"]["key"]],
                            capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "<html" in (site / "index.html").read_text().lower()
    assert json.loads((site / "badges" / "omf-1.0.json").read_text())["message"] == "L1 · CLI"
    assert (site / "badges" / "omf-1.0.svg").read_text().startswith("<svg")
    assert not list(runner_temp.iterdir()), "the key file must not be left behind"


def test_the_install_step_names_a_source_that_exists(tmp_path: Path):
    if shutil.which("bash") is None:
        pytest.skip("the workflow's steps are bash")
    step = _steps()["Install memconform"]
    shims = _shim(tmp_path / "bin", "python", f'printf "%s\\n" "$@" > "{tmp_path}/pip-args"')
    env = _env(tmp_path, PATH=f"{shims}{os.pathsep}{os.environ.get('PATH', '')}")
    unset = subprocess.run([*GITHUB_BASH, step], cwd=tmp_path, env={**env, "MEMCONFORM_SOURCE": ""},
                           capture_output=True, text=True, timeout=60)
    assert unset.returncode != 0 and "MEMCONFORM_SOURCE" in unset.stderr
    assert not (tmp_path / "pip-args").exists(), "nothing may be installed from the package index"
    done = subprocess.run([*GITHUB_BASH, step], cwd=tmp_path, env={**env, "MEMCONFORM_SOURCE": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pip-args").read_text().split("\n")[:4] == ["-m", "pip", "install", str(ROOT)]


def test_the_steps_judge_the_reference_server_on_loopback(tmp_path: Path):
    if shutil.which("bash") is None or shutil.which("curl") is None:
        pytest.skip("the workflow's steps are bash and wait with curl")
    port = _free_port()
    # OMF over HTTP: the smallest spec the server speaks, judged with the workflow's own -n auto
    env = _env(tmp_path, PORT=str(port), WAIT_SECONDS="60", MEMCONFORM_OPTIONS="--spec=omf")
    env.pop("MEMCONFORM_REPORT_KEY", None)
    start = _start_step(tmp_path, env)
    try:
        assert start.wait(timeout=90) == 0, (tmp_path / "start.log").read_text()
        judge = subprocess.run([*GITHUB_BASH, _steps()["Judge it"]], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=600)
        assert judge.returncode == 0, judge.stdout[-3000:] + judge.stderr[-2000:]
        assert "OMF 1.0 (memd) / L1 / http" in judge.stdout, judge.stdout[-3000:]
        report = json.loads((tmp_path / "memconform-report.json").read_text())
        assert {(r["spec"], r["version"], r["binding"], r["level"]) for r in report["levels"]} == {
            ("omf", "1.0", "http", "L1")}
        render = subprocess.run([*GITHUB_BASH, _steps()["Sign the report, render the page and the badges"]],
                                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert render.returncode == 0, render.stdout + render.stderr
        assert (tmp_path / "site" / "badges" / "omf-1.0.svg").exists()
        assert "<html" in (tmp_path / "site" / "index.html").read_text().lower()
    finally:
        _stop(start)


@pytest.mark.parametrize(("server", "said"), [
    ("exec sleep 60", "nothing answered"),       # alive, never answering
    ("exit 3", "exited before it answered"),     # dies at once (a bad flag, a port taken)
])
def test_the_wait_fails_when_the_server_never_comes_up(tmp_path: Path, server: str, said: str):
    if shutil.which("bash") is None or shutil.which("curl") is None:
        pytest.skip("the workflow's steps are bash and wait with curl")
    shims = _shim(tmp_path / "bin", "memconform", server)
    env = _env(tmp_path, PORT=str(_free_port()), WAIT_SECONDS="3")
    env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
    began = time.monotonic()
    start = _start_step(tmp_path, env)
    try:
        assert start.wait(timeout=60) != 0, "the wait must fail when no server comes up"
    finally:
        _stop(start)
    assert time.monotonic() - began < 30
    assert said in (tmp_path / "start.log").read_text()
