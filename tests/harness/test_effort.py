"""Issue 15: `--effort quick|default|thorough` bounds the generated-input checks, the report records
what applied (the environment still overrides each figure), and a replay tries as hard."""

from __future__ import annotations

import pytest

from memconform.suite import effort, replay

from .helpers import run_suite

FUZZ = ("--target=reference", "--spec=ump@1.0", "--binding=http", "--check=ump/l1/openapi-fuzz")


@pytest.fixture(autouse=True)
def _default_effort(monkeypatch):
    monkeypatch.delenv(effort.ENV_EXAMPLES, raising=False)
    monkeypatch.delenv(effort.ENV_SECONDS, raising=False)
    yield
    effort.use("default")


@pytest.mark.parametrize("name, examples, seconds", [("quick", 6, 5.0), ("default", 12, 8.0)])
def test_the_report_says_what_effort_the_run_had(pytester, name, examples, seconds):
    result, report = run_suite(pytester, *FUZZ, f"--effort={name}")
    chosen = effort.EFFORTS[name]
    assert report["run"]["options"]["effort"] == {
        "name": name, "fuzz_examples": examples, "fuzz_seconds": seconds,
        "stateful_examples": chosen.stateful_examples, "stateful_steps": chosen.stateful_steps,
        "stateful_seconds": chosen.stateful_seconds}
    (fuzz,) = [r for r in report["results"] if r["check"] == "ump/l1/openapi-fuzz"]
    assert fuzz["outcome"] == "passed"
    result.stdout.fnmatch_lines([f"effort: {name} — OpenAPI fuzz {examples} examples per operation, at most "
                                 f"{seconds:g} s*"])


def test_the_environment_overrides_a_figure_and_the_report_shows_it(pytester, monkeypatch):
    monkeypatch.setenv(effort.ENV_EXAMPLES, "4")
    _, report = run_suite(pytester, *FUZZ, "--effort=thorough")
    assert report["run"]["options"]["effort"] == {"name": "thorough", "fuzz_examples": 4, "fuzz_seconds": 120.0,
                                                  "stateful_examples": 300, "stateful_steps": 50,
                                                  "stateful_seconds": 120.0}


def test_an_unknown_effort_is_a_usage_error(pytester):
    result = pytester.runpytest_inprocess("--target=reference", "--effort=heroic", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--effort*invalid choice*heroic*"])


def test_a_replay_passes_the_runs_effort_on():
    report = {"run": {"options": {"targets": ["reference"], "seed": 0, "effort": {"name": "quick"}}},
              "targets": [{"label": "reference"}],
              "results": [{"check": "ump/l1/openapi-fuzz", "target": "reference", "spec": "ump", "version": "1.0",
                           "binding": "http", "seed": 7, "outcome": "passed"}]}
    (r,) = replay.replays(report, "ump/l1/openapi-fuzz")
    assert "--effort=quick" in r.pytest_args("out.json")
