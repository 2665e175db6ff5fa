"""Reproducibility: property-based checks draw from `--seed`, the report records it, and
`memconform replay REPORT CHECK_ID` re-runs that exact case with the recorded settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from memconform.suite.generation import quiet_hypothesis
from memconform.suite.replay import ReplayError, replays
from memconform.suite.ump.checks import robustness

CLI = [sys.executable, "-m", "memconform.suite.cli"]


class _Recording(robustness._Fuzz):
    """Records what the generator drew and sends nothing (None: "could not be sent")."""

    def __init__(self) -> None:
        super().__init__(ctx=None, base_url="http://127.0.0.1:9", headers={}, timeout=1.0, judge_ops={},
                         deadline=time.monotonic() + 600)
        self.drawn: list[str] = []

    def call(self, case, phase):
        self.drawn.append(f"{case.operation.label} {phase} {case.body!r} {case.query!r} {case.path_parameters!r}")
        return None


def _draw(seed: int) -> list[str]:
    import schemathesis

    doc = json.loads(resources.files("memconform.reference_impl.ump").joinpath("openapi.json").read_text())
    labels, _ = robustness._operations(doc)
    schema = schemathesis.openapi.from_dict(robustness._tailored(doc))
    schema.config.update(base_url="http://127.0.0.1:9")
    fuzz = _Recording()
    robustness._DRAWN.clear()
    with quiet_hypothesis():
        robustness._stateless(fuzz, schema, f"test-{seed}", labels[:3], 6, time.monotonic() + 600, seed)
    robustness._DRAWN.clear()
    return fuzz.drawn


def test_the_fuzz_draws_the_same_cases_for_the_same_seed_and_others_for_another():
    first, again, other = _draw(11), _draw(11), _draw(12)
    assert first, "the generator drew nothing"
    assert first == again
    assert first != other


def _run(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMCONFORM_FUZZ_EXAMPLES": "4", **(env_extra or {})}
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_a_run_records_the_seed_and_replay_reruns_the_check_with_it(tmp_path: Path):
    done = _run(["run", "--target=reference", "--spec=ump@1.0", "--binding=http", "--check=ump/l1/openapi-fuzz",
                 "--seed=random", "-q"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "memconform-report.json").read_text())
    seed = report["run"]["options"]["seed"]
    assert report["run"]["options"]["environment"] == {"MEMCONFORM_FUZZ_EXAMPLES": "4"}
    [fuzz] = [r for r in report["results"] if r["check"] == "ump/l1/openapi-fuzz"]
    assert fuzz["seed"] == seed

    # the replay runs without the variable set: it must come from the report
    env = {k: v for k, v in os.environ.items() if k != "MEMCONFORM_FUZZ_EXAMPLES"}
    again = subprocess.run([*CLI, "replay", "memconform-report.json", "ump/l1/openapi-fuzz"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"seed {seed}" in again.stdout
    assert "ump/l1/openapi-fuzz on reference (UMP 1.0 / http): was passed, now passed" in again.stdout


def test_replay_of_a_failed_case_fails_again_and_says_so(tmp_path: Path):
    target = "reference?fault=recall-nonstandard-code"
    done = _run(["run", f"--target={target}", "--spec=ump@1.0", "--binding=http",
                 "--check=ump/l1/bad-input[query-object]", "-q"], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    again = _run(["replay", "memconform-report.json", "ump/l1/bad-input[query-object]"], tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "no seed: the check draws nothing at random" in again.stdout
    assert f"ump/l1/bad-input[query-object] on {target} (UMP 1.0 / http): was failed, now failed" in again.stdout


def _report(results: list[dict], targets: list[str], labels: list[str]) -> dict:
    return {"run": {"options": {"targets": targets, "seed": 5, "timeout": 3.0, "environment": {}}},
            "targets": [{"label": x} for x in labels], "results": results}


def _result(check: str, target: str, **more) -> dict:
    return {"check": check, "case": None, "target": target, "spec": "ump", "version": "1.0", "binding": "http",
            "node_id": f"memconform::{target}::{check}", "outcome": "failed", "seed": None, **more}


def test_replays_map_a_descriptor_label_back_to_its_target_string_and_keep_the_settings():
    report = _report([_result("ump/l1/x", "memd (CLI)", seed=9)], ["memd.toml"], ["memd (CLI)"])
    [item] = replays(report, "ump/l1/x")
    assert item.target == "memd.toml"
    args = item.pytest_args("r.json")
    assert "--seed=9" in args and "--timeout=3" in args and "--check=ump/l1/x" in args
    assert "--spec=ump@1.0" in args and "--binding=http" in args


def test_replays_without_a_match_name_the_checks_the_report_has():
    report = _report([_result("ump/l1/x", "reference")], ["reference"], ["reference"])
    with pytest.raises(ReplayError, match="ump/l1/x"):
        replays(report, "ump/l1/y")
    with pytest.raises(ReplayError, match="with those filters"):
        replays(report, "ump/l1/x", binding="mcp")
