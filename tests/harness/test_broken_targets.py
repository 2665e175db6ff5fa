"""The harness survives bad targets (docs/live-ump.md, "Broken targets").

Each miniature (tests/harness/miniatures.py) breaks one thing: it hangs, closes the connection,
answers what is not JSON, answers 50 MB, or dies mid-run; over HTTP, JSON-RPC stdio and MCP stdio.
Run through the plugin as a vendor runs it, the run completes, what the target broke is an `error`
whose reason names the problem, and no check `failed` for it. A stdio server that dies is started
again once (reported in the report's target entry); a second death ends it, quickly.

Timeouts are small (1 s) where a miniature is meant to make the harness wait; no verdict here
depends on how long anything took.
"""

from __future__ import annotations

import json
import logging
import shlex
import time
from importlib import resources
from typing import Any

import jsonschema
import pytest

from memconform.suite.outcomes import TargetError
from memconform.targets.http import HttpUmpClient
from memconform.targets.jsonrpc import JsonRpcDriver
from memconform.targets.mcp import McpDriver
from memconform.targets.omf_http import OmfHttpTarget

from .helpers import run_suite
from .miniatures import http_miniature, reaper, shared_http_miniature, started, stdio_command  # noqa: F401

#: What each misbehaviour must be called in the reason of the errors it causes.
SAID = {
    "hang": "no answer within 1 s",
    "close": "closed the connection without a complete answer",
    "not-json": "not JSON",
    "huge": "answered more than 16 MiB",
    "huge-declared": "answered more than 16 MiB",
    "trickle": "still arriving 1 s after its headers",
}

#: Few checks, so that a miniature that makes every one wait a timeout keeps the run short. Each
#: selection holds checks that talk to the target beyond discovery, and one that judges exactly
#: what a garbage answer would otherwise fail (ump/l1/messages-json-objects, upp/wire/utf8-json).
UMP_CHECKS = "l1/capabilities or l1/remember-result or l1/messages-json-objects"
UPP_CHECKS = "l1/info or wire/id-echo or wire/utf8-json"
MCP_CHECKS = "l1/capabilities or l1/remember-result or l1/get"


def results_of(report: dict[str, Any], target: str) -> dict[str, dict[str, Any]]:
    return {f"{r['check']}[{r['case']}]" if r["case"] else r["check"]: r
            for r in report["results"] if r["target"] == target}


def entry_of(report: dict[str, Any], target: str) -> dict[str, Any]:
    (entry,) = [t for t in report["targets"] if t["label"] == target]
    return entry


def run_order(result) -> list[str]:
    """The check ids in the order they ran (the report lists them sorted)."""
    return [r.nodeid.rsplit("::", 1)[-1] for r in result.reprec.getreports("pytest_runtest_logreport")
            if r.when == "setup"]


def assert_valid(report: dict[str, Any]) -> None:
    """The report, target entries with their deaths included, still meets its own schema."""
    schema = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert not [e.message for e in validator.iter_errors(report)]


def assert_no_failure(report: dict[str, Any]) -> None:
    failed = [(r["check"], r["findings"]) for r in report["results"] if r["outcome"] == "failed"]
    assert not failed, failed
    assert report["totals"].get("failed", 0) == 0


# == UMP over HTTP =====================================================================================

def test_http_targets_that_hang_close_or_answer_garbage_or_too_much_are_errors(pytester, shared_http_miniature):
    minis = [shared_http_miniature(mode) for mode in ("hang", "close", "not-json", "huge")]
    result, report = run_suite(pytester, *(f"--target={m.url}" for m in minis), "--spec=ump@1.0", "--timeout=1",
                               "-k", UMP_CHECKS)
    assert report, result.stdout.str()[-3000:]  # the run completed and wrote its report
    assert_no_failure(report)
    for m in minis:
        results = results_of(report, m.url)
        assert "memconform/connect" not in results  # discovery went through: the checks ran
        assert results["ump/l1/capabilities"]["outcome"] == "passed", m.mode
        errors = {check: r["reason"] for check, r in results.items() if r["outcome"] == "error"}
        # the checks that had to talk to the broken part, the JSON judge among them
        assert {"ump/l1/remember-result", "ump/l1/messages-json-objects"} <= errors.keys(), (m.mode, results)
        for check, reason in errors.items():
            assert reason.startswith("target error: ") and SAID[m.mode] in reason, (m.mode, check, reason)
    not_json = results_of(report, minis[2].url)["ump/l1/remember-result"]["reason"]
    assert "It works!" in not_json  # the reason quotes what came back
    huge = results_of(report, minis[3].url)["ump/l1/remember-result"]["reason"]
    assert "it kept coming" in huge and "memconform reads at most 16 MiB" in huge  # streamed, no length


def test_an_http_target_that_dies_mid_run_leaves_errors_and_the_run_completes(pytester, http_miniature):
    # three operations pass (the owners' token probe: two recalls; then one check's), the next one kills
    mini = http_miniature("die", after=3)
    result, report = run_suite(pytester, f"--target={mini.url}", "--spec=ump@1.0", "--timeout=1", "-k", UMP_CHECKS)
    assert report, result.stdout.str()[-3000:]
    assert mini.proc.wait(10) == 3  # it really died
    assert_no_failure(report)
    order = run_order(result)
    results = results_of(report, mini.url)
    outcomes = [results[check]["outcome"] for check in order]
    first_error = outcomes.index("error")
    assert "passed" in outcomes[:first_error]  # it answered right before it died
    assert set(outcomes[first_error:]) == {"error"}  # and everything after is an error, none a verdict
    for check in order[first_error:]:
        reason = results[check]["reason"]
        assert "cannot connect" in reason or SAID["close"] in reason, reason


# -- the same misbehaviours met by each HTTP client directly ------------------------------------------

@pytest.mark.parametrize("mode", ["hang", "close", "not-json", "huge", "huge-declared", "trickle"])
def test_the_ump_http_client_raises_target_errors_that_say_what_happened(shared_http_miniature, mode):
    client = HttpUmpClient(shared_http_miniature(mode).url, "1.0", timeout=1)
    try:
        with pytest.raises(TargetError) as caught:
            client.recall({"query": "anything"})
    finally:
        client.close()
    assert SAID[mode] in str(caught.value) and "POST" in str(caught.value) and "/ump/recall" in str(caught.value)


def test_an_event_stream_that_never_ends_its_line_is_cut_at_16_mib(shared_http_miniature):
    client = HttpUmpClient(shared_http_miniature("huge-events").url, "1.0", timeout=5, event_timeout=5)
    try:
        with pytest.raises(TargetError, match="the event stream carried more than 16 MiB"):
            client.subscribe(lambda: None)
    finally:
        client.close()


@pytest.mark.parametrize("mode", ["hang", "close", "not-json", "huge", "trickle"])
def test_the_upp_http_driver_raises_target_errors_that_say_what_happened(shared_http_miniature, mode):
    # /rpc: /upp is one of the discovery paths the miniature answers right
    driver = JsonRpcDriver("http", shared_http_miniature(mode).url + "/rpc", timeout=1)
    try:
        with pytest.raises(TargetError) as caught:
            driver.live_client().info()
    finally:
        driver.close()
    assert SAID[mode] in str(caught.value) and "upp/info" in str(caught.value)


@pytest.mark.parametrize("mode", ["hang", "close", "huge", "trickle"])
def test_the_omf_http_target_raises_target_errors_that_say_what_happened(shared_http_miniature, mode):
    target = OmfHttpTarget(shared_http_miniature(mode).url, timeout=1)
    try:
        with pytest.raises(TargetError) as caught:
            target.export("tenant-a")
    finally:
        target.close()
    assert SAID[mode] in str(caught.value) and "OMF export" in str(caught.value)


# == UPP over JSON-RPC stdio ===========================================================================

def upp_target(mode: str, *args: str) -> str:
    return "jsonrpc+stdio:" + stdio_command("upp_stdio", mode, *args)


def test_jsonrpc_stdio_targets_that_hang_print_garbage_or_too_much_are_errors(pytester, reaper):
    # --after 1: the driver's probe (upp/info) is answered, so the checks run
    targets = {mode: upp_target(mode, "--after", "1") for mode in ("hang", "not-json", "huge")}
    # the hanging one with a short timeout; the others with a long one, so a loaded machine writing 50 MiB
    # slowly is still judged by what it wrote (the verdict must not hang on the clock)
    reports = {}
    for modes, timeout in ((("hang",), "--timeout=1"), (("not-json", "huge"), "--timeout=60")):
        result, report = run_suite(pytester, *(f"--target={targets[m]}" for m in modes), timeout, "-k", UPP_CHECKS)
        assert report, result.stdout.str()[-3000:]
        assert_no_failure(report)
        reports.update({m: report for m in modes})
    said = {"hang": SAID["hang"], "not-json": "the answer is not JSON at all", "huge": SAID["huge"]}
    for mode, target in targets.items():
        report = reports[mode]
        results = results_of(report, target)
        assert results and "memconform/connect" not in results
        assert {"upp/l1/info", "upp/wire/utf8-json"} <= results.keys()
        for check, r in results.items():  # every check spoke to the broken part (after the driver's upp/info)
            assert r["outcome"] == "error" and said[mode] in r["reason"], (mode, check, r)
        assert "deaths" not in entry_of(report, target)  # a live process that misbehaves is not restarted
        assert started(reaper, mode, "--after", "1") == 1
    assert "OK, done that" in results_of(reports["not-json"], targets["not-json"])["upp/l1/info"]["reason"]
    assert "a line of 52428" in results_of(reports["huge"], targets["huge"])["upp/l1/info"]["reason"]


def test_a_jsonrpc_stdio_server_that_dies_once_is_restarted_and_the_run_goes_on(pytester, reaper, tmp_path):
    args = ("exit", "--after", "2", "--once-file", str(tmp_path / "died"))
    target = upp_target(*args)
    result, report = run_suite(pytester, f"--target={target}", "--timeout=20", "-k", UPP_CHECKS)
    assert report, result.stdout.str()[-3000:]
    assert_no_failure(report)
    entry = entry_of(report, target)
    assert entry["restarts"] == 1 and [d["exit_code"] for d in entry["deaths"]] == [3]
    assert entry["deaths"][0]["restarted"] is True and "exited with code 3" in entry["deaths"][0]["reason"]
    assert started(reaper, *args) == 2
    assert "the target process died" in result.stdout.str() and "restarted once" in result.stdout.str()
    results = results_of(report, target)
    order = run_order(result)
    outcomes = [results[check]["outcome"] for check in order]
    assert outcomes.count("error") == 1, results  # the one check that saw it die
    died_in = outcomes.index("error")
    assert "exited with code 3" in results[order[died_in]]["reason"]
    assert "upp miniature: exiting after 2 messages" in results[order[died_in]]["reason"]  # its stderr
    assert "passed" in outcomes[died_in + 1:]  # checks after the restart ran, against the new process


def test_a_jsonrpc_stdio_server_that_dies_twice_is_not_started_a_third_time(pytester, reaper):
    args = ("exit", "--after", "2")
    target = upp_target(*args)
    result, report = run_suite(pytester, f"--target={target}", "--timeout=20", "-k", UPP_CHECKS)
    assert report, result.stdout.str()[-3000:]
    assert_no_failure(report)
    entry = entry_of(report, target)
    assert entry["restarts"] == 1 and [d["restarted"] for d in entry["deaths"]] == [True, False]
    assert started(reaper, *args) == 2
    results = results_of(report, target)
    outcomes = [results[check] for check in run_order(result)]
    gave_up = [r for r in outcomes if "died twice; not restarted again" in (r["reason"] or "")]
    assert gave_up and all(r["outcome"] == "error" for r in gave_up)
    after = outcomes[outcomes.index(gave_up[0]):]  # every check after the second death: or the breaker's
    assert all(r["outcome"] == "error" and ("died twice" in r["reason"] or DEAD in r["reason"]) for r in after)


def test_a_late_answer_to_a_request_that_timed_out_is_not_held_against_the_server(reaper):
    driver = JsonRpcDriver("stdio", shlex.split(stdio_command("upp_stdio", "late")), timeout=0.5)
    try:
        client = driver.live_client()
        with pytest.raises(TargetError, match=r"no answer within 0\.5 s"):
            client.info()  # answered 2 s late
        client.transport.timeout = 20.0  # room for the late answer to come in before the next one
        reply = client.info()
    finally:
        driver.close()
    assert reply.ok and reply.exchange.wire_problems == ()  # the late answer was passed over, not a stray


# == UMP over MCP stdio ================================================================================

def mcp_target(*args: str) -> str:
    return "mcp+stdio:" + stdio_command("mcp_stdio", *args)


def test_an_mcp_stdio_server_that_dies_is_restarted_once_and_reported(pytester, reaper, tmp_path):
    # the first remember kills it: after the capabilities checks, in ump/l1/remember-result
    args = ("--die-on", "remember", "--once-file", str(tmp_path / "died"))
    target = mcp_target(*args)
    # the timeout must cover a restart: the reference MCP server takes seconds to start
    result, report = run_suite(pytester, f"--target={target}", "--spec=ump@1.0", "--timeout=30", "-k", MCP_CHECKS)
    assert report, result.stdout.str()[-3000:]
    assert_no_failure(report)
    entry = entry_of(report, target)
    assert_valid(report)
    assert entry["restarts"] == 1, entry
    (death,) = entry["deaths"]
    assert death["exit_code"] == 3 and death["restarted"] is True and death["at"]
    assert "mcp miniature: dying on remember" in death["reason"]  # the stderr tail
    assert started(reaper, *args) == 2
    results = results_of(report, target)
    order = run_order(result)
    outcomes = [results[check]["outcome"] for check in order]
    assert outcomes.count("error") == 1, results
    died_in = outcomes.index("error")
    assert "the server process exited with code 3 during tools/call ump.remember" in results[order[died_in]]["reason"]
    after = outcomes[died_in + 1:]
    assert after and "passed" in after and "error" not in after  # checks after the restart ran


def test_an_mcp_server_refusing_the_suites_tokens_is_a_target_error_not_a_verdict(reaper):
    driver = McpDriver(mcp_target("--refuse-tokens"), timeout=30)
    try:
        subject = next(s for s in driver.subjects() if s.version == "1.0")
        for _ in range(2):  # every check asking for the client meets the same error
            with pytest.raises(TargetError, match="refused the capability token memconform minted for owner-a") as e:
                driver.client(subject)
            assert "tools/call ump.recall" in str(e.value) and "token_command" in str(e.value)
    finally:
        driver.close()


def test_an_mcp_stdio_server_that_dies_twice_gets_quick_errors_and_a_warning(reaper, caplog):
    args = ("--die-on", "capabilities", "--die-after", "2")
    driver = McpDriver(mcp_target(*args), timeout=30)
    caplog.set_level(logging.WARNING, logger="memconform.targets.mcp")
    try:
        subject = next(s for s in driver.subjects() if s.version == "1.0")
        client = driver.client(subject)
        reasons = []
        for _ in range(8):
            try:
                client.capabilities()
            except TargetError as exc:
                reasons.append(str(exc))
        described = driver.describe()
    finally:
        driver.close()
    # each process answers 2 operations: discovery's (or the new session's) capabilities and one call
    assert len(reasons) == 8 - 2, reasons
    assert "exited with code 3 during tools/call ump.capabilities" in reasons[0]
    assert "exited with code 3 during tools/call ump.capabilities" in reasons[1]
    assert all("the target died twice; not restarted again" in r for r in reasons[2:])
    assert [d["restarted"] for d in described["deaths"]] == [True, False] and described["restarts"] == 1
    assert started(reaper, *args) == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("starting it again (once)" in w for w in warnings), warnings
    assert any("not restarted again" in w for w in warnings), warnings


# == alive but broken: the circuit breaker (suite/breaker.py) ==========================================
# A binding that answers discovery and then hangs: three items wait their timeout, every later item
# of that target and binding is an error at once naming the first cause. Judged on counts and on the
# reasons, never on how long the run took.

DEAD = "binding declared dead after 3 consecutive transport failures; first: "


def assert_declared_dead(result, report: dict[str, Any], target: str, said: str) -> None:
    assert report, result.stdout.str()[-3000:]
    assert_no_failure(report)
    results = results_of(report, target)
    outcomes = [results[check] for check in run_order(result) if check in results]
    assert len(outcomes) == len(results) > 20
    waited = [r for r in outcomes if r["outcome"] == "error" and DEAD not in r["reason"]]
    dead = [r for r in outcomes if DEAD in (r["reason"] or "")]
    passed = [r for r in outcomes if r["outcome"] == "passed"]
    # without the breaker every item waits its timeout; with it three in a row, and a verdict between resets
    assert len(waited) <= 3 + 2 * len(passed), [(r["check"], r["reason"]) for r in waited]
    assert dead and outcomes[outcomes.index(dead[0]):] == dead  # once dead, every later item
    assert len(dead) > len(outcomes) / 2
    assert all(r["duration"] == 0 for r in dead)  # answered without running, at once
    first_cause = waited[-3]["reason"].removeprefix("target error: ")  # the first of the last three in a row
    assert said in first_cause and {r["reason"].split(DEAD, 1)[1] for r in dead} == {first_cause}


def test_an_http_target_that_answers_discovery_then_hangs_is_declared_dead(pytester, shared_http_miniature):
    mini = shared_http_miniature("hang")
    result, report = run_suite(pytester, f"--target={mini.url}", "--spec=ump@1.0", "--timeout=1")
    assert_declared_dead(result, report, mini.url, SAID["hang"])


def test_a_jsonrpc_http_target_that_answers_its_probe_then_hangs_is_declared_dead(pytester, http_miniature):
    mini = http_miniature("hang", 1, "--count-discovery", "--upp-omf")  # upp/info answered, then nothing
    target = f"jsonrpc+{mini.url}/upp"
    result, report = run_suite(pytester, f"--target={target}", "--timeout=1")
    assert_declared_dead(result, report, target, SAID["hang"])


def test_a_jsonrpc_stdio_target_that_answers_its_probe_then_hangs_is_declared_dead(pytester, reaper):
    target = upp_target("hang", "--after", "1")
    result, report = run_suite(pytester, f"--target={target}", "--timeout=1")
    assert_declared_dead(result, report, target, SAID["hang"])
    assert started(reaper, "hang", "--after", "1") == 1


def test_an_mcp_stdio_target_that_answers_capabilities_then_hangs_is_declared_dead(pytester, reaper):
    target = mcp_target("--hang-after", "1")
    # the process start and MCP handshake of the reference server have their own allowance (30 s)
    result, report = run_suite(pytester, f"--target={target}", "--spec=ump@1.0", "--timeout=2")
    assert_declared_dead(result, report, target, "no answer to tools/call")


def test_each_xdist_worker_has_its_own_breaker_and_each_is_bounded(pytester, shared_http_miniature):
    mini = shared_http_miniature("hang")
    path = pytester.path / "memconform-report.json"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-n", "2", "--report", str(path),
                                           f"--target={mini.url}", "--spec=ump@1.0", "--timeout=1")
    report = json.loads(path.read_text(encoding="utf-8"))
    assert_no_failure(report)
    results = list(results_of(report, mini.url).values())
    waited = [r for r in results if r["outcome"] == "error" and DEAD not in r["reason"]]
    dead = [r for r in results if DEAD in (r["reason"] or "")]
    passed = [r for r in results if r["outcome"] == "passed"]
    assert len(waited) <= 2 * 3 + 2 * len(passed), (len(waited), result.stdout.str()[-2000:])
    assert len(dead) > len(results) / 2 and all(SAID["hang"] in r["reason"] for r in dead)


def test_a_dead_binding_stops_interop_round_trips_at_once(pytester, shared_http_miniature):
    dead, alive = shared_http_miniature("hang"), shared_http_miniature("good")
    result, report = run_suite(pytester, f"--target={dead.url}", f"--target={alive.url}", "--spec=ump@1.0",
                               "--timeout=1", "-k", "not formats")
    assert report, result.stdout.str()[-3000:]
    trips = [t for t in report["interop"] if dead.url in (t["source"], t["destination"])]
    assert trips and all(t["outcome"] == "error" and DEAD in t["reason"] and t["duration"] == 0 for t in trips)


def test_a_stdio_line_that_is_not_json_fails_the_pending_request_at_once(reaper):
    driver = JsonRpcDriver("stdio", shlex.split(stdio_command("upp_stdio", "not-json", "--after", "1")), timeout=60)
    try:
        client = driver.live_client()
        assert client.info().ok
        started_at = time.monotonic()
        with pytest.raises(TargetError, match="OK, done that") as caught:
            client.info()
        waited = time.monotonic() - started_at
    finally:
        driver.close()
    assert "not JSON at all" in str(caught.value)
    assert waited < 30  # not held until the 60 s deadline (it comes in milliseconds)


def test_an_mcp_stdio_line_that_is_not_json_fails_the_pending_call_at_once(reaper):
    driver = McpDriver(mcp_target("--hang-after", "1", "--garbage"), ("1.0",), timeout=60)
    try:
        (subject,) = driver.subjects()  # discovery's capabilities is answered
        with pytest.raises(TargetError, match="OK, done that") as caught:
            driver.client(subject).capabilities()  # garbage on stdout, then nothing
    finally:
        driver.close()
    assert "no answer" not in str(caught.value)  # failed by the garbage, not by the timeout


# == an absent target, or one that is not the protocol: one target error, no verdict ===================

def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ABSENT = {
    "jsonrpc+http closed port": lambda m, tmp: (f"jsonrpc+http://127.0.0.1:{_closed_port()}/rpc", "cannot connect"),
    "jsonrpc+http hangs": lambda m, tmp: (f"jsonrpc+{m('hang').url}/rpc", SAID["hang"]),
    "jsonrpc+http not UPP": lambda m, tmp: (f"jsonrpc+{m('good').url}/rpc", "is not a UPP server"),
    "jsonrpc+stdio no such command": lambda m, tmp: ("jsonrpc+stdio:/nonexistent/upp-server", "cannot start"),
    "jsonrpc+stdio exits": lambda m, tmp: (upp_target("exit"), "exited with code 3"),
    "jsonrpc+stdio not UPP": lambda m, tmp: (upp_target("not-upp"), "is not a UPP server"),
    "mcp+http absent": lambda m, tmp: (f"mcp+http://127.0.0.1:{_closed_port()}/mcp", "cannot open an MCP session"),
    "mcp+stdio not MCP": lambda m, tmp: ("mcp+stdio:" + stdio_command("upp_stdio", "not-upp"),
                                         "cannot open an MCP session"),
    "descriptor not UPP": lambda m, tmp: (str(_echo_descriptor(tmp)), "UPP over http"),
    "file missing": lambda m, tmp: (f"file:{tmp / 'missing.ump.json'}", "does not exist"),
}


def _echo_descriptor(tmp_path):
    from .test_descriptor import echo_descriptor

    # the echo server answers GET with JSON about itself and POST with HTTP 501: not UPP
    return echo_descriptor(tmp_path, start='ready_line = "echo server ready"')


@pytest.mark.parametrize("kind", list(ABSENT))
def test_an_absent_target_or_one_not_speaking_the_protocol_is_one_target_error(pytester, shared_http_miniature,
                                                                                 reaper, tmp_path, kind):
    target, said = ABSENT[kind](shared_http_miniature, tmp_path)
    result, report = run_suite(pytester, f"--target={target}", "--timeout=1")
    assert report, result.stdout.str()[-3000:]
    (only,) = report["results"]
    assert only["check"] == "memconform/connect" and only["outcome"] == "error", only
    assert said in only["reason"], only["reason"]
    assert not [row for row in report["levels"] if row.get("must_passed") or row.get("must_failed")]
    assert len(result.stdout.lines) < 40  # one error said once, not a page per check


# == what is judged and what is a target error (targets/answers.py) ====================================

def test_an_omf_http_target_answering_html_to_import_and_preview_gets_errors_not_failures(pytester, http_miniature):
    mini = http_miniature("not-json", 0, "--upp-omf", "--only", "/omf/import", "--only", "/omf/preview")
    result, report = run_suite(pytester, f"--target={mini.url}", "--spec=omf", "--timeout=5")
    assert report, result.stdout.str()[-3000:]
    assert_no_failure(report)
    results = results_of(report, mini.url)
    errors = [r for r in results.values() if r["outcome"] == "error"]
    # every OMF check places its records by import: each is an error that says what came back
    assert len(errors) > 20 and all("not JSON" in r["reason"] and "It works!" in r["reason"] for r in errors)


def _clients(url: str) -> dict[str, Any]:
    return {"ump": HttpUmpClient(url, "1.0", timeout=5), "upp": JsonRpcDriver("http", url + "/rpc", timeout=5),
            "omf": OmfHttpTarget(url, timeout=5)}


def _ask(kind: str, client: Any) -> Any:
    if kind == "ump":
        return client.recall({"query": "anything"})
    if kind == "upp":
        return client.live_client().info()
    return client.import_document("tenant-a", '{"omf": "1.0", "memories": []}')


@pytest.mark.parametrize("kind", ["ump", "upp", "omf"])
def test_a_5xx_without_the_error_envelope_is_a_target_error_for_every_driver(shared_http_miniature, kind):
    client = _clients(shared_http_miniature("error-page").url)[kind]
    try:
        with pytest.raises(TargetError, match="answered HTTP 500 .* without the spec's error envelope") as caught:
            _ask(kind, client)
    finally:
        client.close()
    assert "Oops" in str(caught.value)


@pytest.mark.parametrize("kind", ["ump", "upp", "omf"])
def test_a_5xx_with_the_error_envelope_is_judged(shared_http_miniature, kind):
    client = _clients(shared_http_miniature("error-envelope").url)[kind]
    try:
        answer = _ask(kind, client)
    finally:
        client.close()
    if kind == "ump":
        assert answer.status == 500 and answer.error_code == "internal"
    elif kind == "upp":
        assert answer.exchange.http_status == 500 and answer.error is not None
    else:
        assert answer.http_status == 500 and not answer.ok and "the store is down" in answer.error


def test_a_json_answer_where_the_event_stream_is_due_is_a_target_error(shared_http_miniature):
    client = HttpUmpClient(shared_http_miniature("json-not-stream", 0, "--only", "/ump/subscribe").url, "1.0",
                           timeout=5)
    try:
        with pytest.raises(TargetError, match="not an event stream") as caught:
            client.subscribe(lambda: None)
    finally:
        client.close()
    assert "HTTP 200" in str(caught.value) and "subscribed" in str(caught.value)


def test_a_4xx_without_the_envelope_is_still_judged(shared_http_miniature):
    client = HttpUmpClient(shared_http_miniature("text-404").url, "1.0", timeout=5)
    try:
        reply = client.recall({"query": "anything"})
    finally:
        client.close()
    assert reply.status == 404 and reply.error_code == "http_404" and reply.raw == "Not Found"


def test_an_omf_only_server_at_a_plain_url_is_found_and_judged(pytester):
    """A server of OMF's HTTP routes alone (no UMP, no UPP) is OMF found, not "not a UMP server"."""
    from starlette.applications import Starlette

    from memconform.reference_impl.omf import OmfEngine, OmfStore
    from memconform.reference_impl.omf.http import omf_routes
    from memconform.reference_impl.ump.serve import start_in_thread

    server = start_in_thread(None, app=Starlette(routes=omf_routes(OmfEngine(OmfStore(":memory:")))))
    try:
        result, report = run_suite(pytester, f"--target={server.base_url}", "--spec=omf", "--effort=quick")
    finally:
        server.stop()
    assert not [r for r in report["results"] if r["check"] == "memconform/connect"]
    assert [(lv["spec"], lv["binding"], lv["level"]) for lv in report["levels"]] == [("omf", "http", "L1")]
    assert result.ret == 0


def test_a_spec_asked_for_by_name_and_absent_is_an_error_naming_what_its_probe_saw(pytester):
    """--spec=memoturn at a UMP-only server: not a silent "no tests ran" but an error saying so."""
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.reference_impl.ump.serve import start_in_thread
    from memconform.reference_impl.ump.service import UmpService

    service = UmpService()
    server = start_in_thread(None, app=build_app(service, mcp=False))
    try:
        result, report = run_suite(pytester, f"--target={server.base_url}", "--spec=memoturn")
    finally:
        server.stop()
        service.close()
    [connect] = [r for r in report["results"] if r["check"] == "memconform/connect"]
    assert connect["outcome"] == "error" and connect["spec"] == "memoturn"
    assert "offers no MEMOTURN (found: ump)" in connect["reason"]
    assert "did not answer as memoturn" in connect["reason"]  # what the probe saw
    assert result.ret != 0


def test_specs_asked_for_and_offered_by_different_targets_are_no_error(pytester):
    """--spec ump --spec omf over a UMP-only and an OMF-only server: each spec is somewhere, so
    neither target is an error for lacking the other's."""
    from starlette.applications import Starlette

    from memconform.reference_impl.omf import OmfEngine, OmfStore
    from memconform.reference_impl.omf.http import omf_routes
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.reference_impl.ump.serve import start_in_thread
    from memconform.reference_impl.ump.service import UmpService

    service = UmpService()
    ump = start_in_thread(None, app=build_app(service, mcp=False))
    omf = start_in_thread(None, app=Starlette(routes=omf_routes(OmfEngine(OmfStore(":memory:")))))
    try:
        result, report = run_suite(pytester, f"--target={ump.base_url}", f"--target={omf.base_url}", "--spec=ump",
                                   "--spec=omf", "--check=ump/l1/capabilities", "--check=omf/export/order")
    finally:
        ump.stop()
        omf.stop()
        service.close()
    assert not [r for r in report["results"] if r["check"] == "memconform/connect"]
    assert {(r["check"], r["outcome"]) for r in report["results"]} == {("ump/l1/capabilities", "passed"),
                                                                       ("omf/export/order", "passed")}
