"""`docker:IMAGE`: the target string, and what happens where no container engine runs (this
machine, CI) or where one does (skipped here, with the reason)."""

from __future__ import annotations

import importlib.util

import pytest

from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.targets import open_driver
from memconform.targets.docker import container_engine_problem
from memconform.targets.target_string import DockerTarget, TargetStringError, parse_target

from .helpers import run_suite

#: Why no container can run here; None where a Docker daemon answers.
PROBLEM = container_engine_problem()
needs_no_engine = pytest.mark.skipif(PROBLEM is None, reason="a container engine runs here: the no-engine path "
                                                             "cannot be seen")
needs_engine = pytest.mark.skipif(PROBLEM is not None, reason=f"no container engine here: {PROBLEM}")


@pytest.mark.parametrize("text, expected", [
    ("docker:acme/ump", DockerTarget("docker:acme/ump", "acme/ump")),
    ("docker:ghcr.io/acme/ump-server:1.2?port=9000",
     DockerTarget("docker:ghcr.io/acme/ump-server:1.2?port=9000", "ghcr.io/acme/ump-server:1.2", port=9000)),
    ("docker:acme/ump@sha256:abc?ready=/ump/capabilities&timeout=120&env=A=1&env=B=x%3Dy&env=C=",
     DockerTarget("docker:acme/ump@sha256:abc?ready=/ump/capabilities&timeout=120&env=A=1&env=B=x%3Dy&env=C=",
                  "acme/ump@sha256:abc", ready_path="/ump/capabilities", ready_timeout=120.0,
                  env=(("A", "1"), ("B", "x=y"), ("C", "")))),
])
def test_docker_strings(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize("text, match", [
    ("docker:", "needs an image"),
    ("docker:?port=1", "needs an image"),
    ("docker:acme/ump server", "needs an image"),
    ("docker:acme/ump?colour=red", r"unknown docker option\(s\) \['colour'\].*known: port, ready, timeout, env"),
    ("docker:acme/ump?port=http", "port= is the container's port"),
    ("docker:acme/ump?port=70000", "port= is the container's port"),
    ("docker:acme/ump?port=1&port=2", "port= given 2 times"),
    ("docker:acme/ump?ready=health", "ready= is a path"),
    ("docker:acme/ump?timeout=-1", "timeout= is a positive number"),
    ("docker:acme/ump?timeout=soon", "timeout= is a positive number"),
    ("docker:acme/ump?env=NOVALUE", "env= takes NAME=VALUE"),
    ("docker:acme/ump?env==x", "env= takes NAME=VALUE"),
])
def test_bad_docker_strings(text, match):
    with pytest.raises(TargetStringError, match=match):
        parse_target(text)


def test_the_reason_says_what_is_missing():
    if PROBLEM is None:
        pytest.skip("a container engine runs here")
    if importlib.util.find_spec("testcontainers") is None:
        assert PROBLEM.startswith("testcontainers is not installed (pip install 'memconform[docker]'")
    else:
        assert PROBLEM.startswith(("no Docker daemon answers at ", "the Docker daemon at "))


@needs_no_engine
def test_without_a_container_engine_opening_the_target_is_not_applicable():
    with pytest.raises(NotApplicable) as caught:
        open_driver("docker:acme/ump-server:1.2?port=9000")
    assert str(caught.value) == f"docker:acme/ump-server:1.2?port=9000: no container engine: {PROBLEM}"


@needs_no_engine
def test_without_a_container_engine_the_run_skips_the_target_with_the_reason(pytester):
    result, report = run_suite(pytester, "--target=docker:acme/ump")
    result.assert_outcomes(skipped=1)
    assert result.ret == 0
    (level,) = report["levels"]
    assert level["summary"] == f"docker:acme/ump: skipped — docker:acme/ump: no container engine: {PROBLEM}"
    assert "no container engine" in result.stdout.str()


@needs_engine
def test_an_image_that_cannot_start_is_a_target_error_naming_it():  # pragma: no cover - needs Docker
    driver = open_driver("docker:memconform-test/does-not-exist:never?timeout=5")
    try:
        with pytest.raises(TargetError, match="cannot start a container of memconform-test/does-not-exist:never"):
            driver.subjects()
        assert "does-not-exist" in driver.describe()["error"]
    finally:
        driver.close()
    driver.close()  # idempotent
