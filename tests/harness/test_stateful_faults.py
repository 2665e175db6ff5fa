"""Issue 16, UMP: the state machines (suite/ump/checks/stateful.py) catch every UMP fault marked
`stateful` within the default effort's sequences and steps (its wall-clock cap lifted, so that the
verdict does not depend on the machine's speed) at a fixed seed, on exactly the requirements the
fault names;
the scripted checks alone do not catch most of them (SCRIPTED_CATCHES records which they do, and
the test proves that record); and the clean reference and every UMP variant pass the machines.

The UPP and OMF machines are proven by their own test files."""

from __future__ import annotations

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.reference_impl.variants import VARIANTS
from memconform.suite import effort
from memconform.suite.registry import all_checks, checks_naming

from .helpers import failed_requirements, run_suite

MACHINES = ("ump/stateful/records", "ump/stateful/recall")
#: The machine that reaches each fault's condition: the records machine (payloads, chains, forget)
#: or the recall machine (many records of two owners, limits). The other machine cannot see it
#: (it names other requirements or never sets the condition up), so each fault runs only its own.
MACHINE_OF = {
    "revise-chain-keeps-old-supersedes": "ump/stateful/records",
    "revise-resets-visibility": "ump/stateful/records",
    "recall-page-off-by-one": "ump/stateful/recall",
    "recall-filters-first-page-only": "ump/stateful/recall",
    "astral-chars-replaced": "ump/stateful/records",
    "text-normalized-nfc": "ump/stateful/records",
    "line-separators-to-newlines": "ump/stateful/records",
    "long-text-truncated": "ump/stateful/records",
    "structured-floats-single-precision": "ump/stateful/records",
    "structured-big-integers-as-strings": "ump/stateful/records",
    "time-offset-dropped": "ump/stateful/records",
    "time-fraction-dropped": "ump/stateful/records",
    "get-cache-stale-after-forget": "ump/stateful/records",
    "revise-reactivates-forgotten-links": "ump/stateful/records",
    "rehydrate-renders-first-revision": "ump/stateful/records",
    "rehydrate-many-ids-unfiltered": "ump/stateful/recall",
    "feedback-lands-on-chain-root": "ump/stateful/records",
    "valid-at-offset-ignored": "ump/stateful/recall",
    "valid-at-whole-seconds": "ump/stateful/recall",
}
#: What the scripted UMP checks alone report against each fault (the whole scripted suite over HTTP,
#: state machines off): empty for a fault only a sequence shows.
SCRIPTED_CATCHES: dict[str, set[str]] = {name: set() for name in MACHINE_OF} | {
    # ump/l1/recall-limit places max_recall + 1 records and asks ten past it: limit + 1 results
    # past the default page is then one more than max_recall
    "recall-page-off-by-one": {"ump/recall-limit"},
    # ump/l1/vectors' unicode-text-signed (decomposed é, an astral character, U+2028/U+2029): an L3
    # server that asks for provenance gets it added, re-signed by its owner (red team 14), and the
    # stored body.text is compared with the vector's
    "astral-chars-replaced": {"ump/remember-persists"},
    "line-separators-to-newlines": {"ump/remember-persists"},
    "text-normalized-nfc": {"ump/remember-persists"},
}

UMP_STATEFUL = sorted(name for name, fault in FAULTS.items() if fault.spec == "ump" and fault.stateful)


@pytest.fixture(autouse=True)
def _default_effort(monkeypatch):
    for name in (effort.ENV_STATEFUL_EXAMPLES, effort.ENV_STATEFUL_STEPS):
        monkeypatch.delenv(name, raising=False)
    # the default's sequences and steps without its wall-clock cap: what is caught (and what
    # passes) must not depend on how fast or how loaded the machine running the tests is
    monkeypatch.setenv(effort.ENV_STATEFUL_SECONDS, "60")
    # shortening a failure changes what it prints, never whether it is found: half a second of it
    # (the default's 2.5 s made up two thirds of these tests)
    monkeypatch.setenv(effort.ENV_STATEFUL_SHRINK_SECONDS, "0.5")
    monkeypatch.setenv(effort.ENV_EXAMPLES, "0")  # no OpenAPI fuzz: only the machines run
    effort.use("default")


def test_every_ump_stateful_fault_is_tabled():
    assert sorted(MACHINE_OF) == UMP_STATEFUL
    assert len(UMP_STATEFUL) >= 10
    names = {c.id: c for c in all_checks("ump")}
    for name, machine in MACHINE_OF.items():
        assert set(FAULTS[name].breaks) <= set(names[machine].requirements), name


@pytest.mark.parametrize("name", UMP_STATEFUL)
def test_the_machine_catches_the_fault_within_the_default_effort(pytester, name):
    fault = FAULTS[name]
    result, report = run_suite(pytester, f"--target=reference?fault={name}", "--spec=ump@1.0", "--binding=http",
                               f"--check={MACHINE_OF[name]}", "--seed=0", "--effort=default")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) == set(fault.breaks)
    (finding,) = [f for r in report["results"] for f in r["findings"]]
    # the finding says what was sent and what came back, quotes the spec and prints the steps
    assert "The spec: “" in finding["message"] and "the server answered" in finding["message"]
    assert "  1. remember as owner-" in finding["message"] and "seed 0" in finding["message"]
    assert result.ret == 1


@pytest.mark.parametrize("name", UMP_STATEFUL)
def test_the_other_machine_stays_a_verdict(pytester, name):
    """The machine that does not reach a fault's condition still runs against it in a user's run: it
    ends in a verdict, never an error, and what it reports is among the fault's breaks (found by a
    blind red team: the recall machine crashed on a revise finding it did not name)."""
    other = next(m for m in MACHINES if m != MACHINE_OF[name])
    result, report = run_suite(pytester, f"--target=reference?fault={name}", "--spec=ump@1.0", "--binding=http",
                               f"--check={other}", "--seed=0", "--effort=default")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) <= set(FAULTS[name].breaks) | OTHER_MACHINE_SEES.get(name, set())


def test_each_machine_names_what_its_shared_steps_report():
    """remember, revise and forget are steps of both UMP machines: each machine names every requirement
    those steps can report (a finding on an unnamed one is an error, not a verdict)."""
    import inspect
    import re

    from memconform.suite.ump.checks import stateful

    steps = (stateful._UmpMachine._remember, stateful._UmpMachine._revise, stateful._UmpMachine._forget)
    reported = {rid for step in steps for rid in re.findall(r'self\.fail\("(ump/[a-z0-9-]+)"', inspect.getsource(step))}
    assert reported
    names = {c.id: c for c in all_checks("ump")}
    for machine in MACHINES:
        assert reported <= set(names[machine].requirements), (machine, sorted(reported - set(names[machine].requirements)))


#: What the other machine sees of a fault, through a rule of its own: a valid_from stored at another
#: instant is recalled at the wrong valid_at (the recall machine dates its records with offsets and
#: fractions too).
OTHER_MACHINE_SEES = {"time-offset-dropped": {"ump/recall-honors-valid-at"},
                      "time-fraction-dropped": {"ump/recall-honors-valid-at"}}


@pytest.mark.parametrize("name", UMP_STATEFUL)
def test_what_the_scripted_checks_alone_catch(pytester, monkeypatch, name):
    """The scripted checks that name a requirement the fault breaks (the only ones that can report
    it), state machines off: they report what SCRIPTED_CATCHES says, mostly nothing."""
    monkeypatch.setenv(effort.ENV_STATEFUL_EXAMPLES, "0")
    fault = FAULTS[name]
    scripted = [c.id for c in checks_naming("ump", fault.breaks) if not c.id.startswith("ump/stateful/")]
    result, report = run_suite(pytester, f"--target=reference?fault={name}", "--spec=ump@1.0", "--binding=http",
                               *[f"--check={c}" for c in scripted])
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) == SCRIPTED_CATCHES[name]


def _variant_groups() -> list[tuple[str, list[str]]]:
    """The UMP variants of the live bindings, in as few combinable groups as possible per binding
    (two variants that set one decision point two ways go to different groups): those shown over
    HTTP are run over HTTP, those of MCP alone over MCP. The machines do not run on the file binding,
    so its variants (import-keeps-valid-records) have nothing to show them."""
    groups: list[tuple[str, list[str], dict[str, object]]] = []
    alone: list[tuple[str, list[str]]] = []
    for name in sorted(VARIANTS):
        variant = VARIANTS[name]
        if variant.spec != "ump":
            continue
        shows_on = ("http", "mcp", "file") if variant.bindings is None else variant.bindings
        binding = "http" if "http" in shows_on else "mcp" if "mcp" in shows_on else None
        if binding is None:
            continue
        if name in WITHOUT_AN_OPERATION:  # in a group with others it would leave their use of it unseen
            alone.append((binding, [name]))
            continue
        for group_binding, names, points in groups:
            if group_binding == binding and all(points.get(k, v) == v for k, v in variant.overrides.items()):
                names.append(name)
                points.update(variant.overrides)
                break
        else:
            groups.append((binding, [name], dict(variant.overrides)))
    return [(binding, names) for binding, names, _ in groups] + alone


#: variants that leave out an operation a machine drives: what only that operation shows is then
#: not judged (not_judged, never passed), and nothing else may be missing
WITHOUT_AN_OPERATION = {"no-rehydrate-helper": ["ump/rehydrate-filter-before-ranking", "ump/rehydrate-never-execute"]}


def test_the_clean_reference_passes_the_machines(pytester):
    result, report = run_suite(pytester, "--target=reference", "--spec=ump", "--binding=http",
                               *[f"--check={m}" for m in MACHINES], "--seed=0")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) == set()
    assert report["totals"].get("passed", 0) == 4  # two machines, two versions
    # a server offering every operation is judged on every requirement each machine names
    assert {r["check"]: r.get("not_judged") for r in report["results"]} == dict.fromkeys(MACHINES)
    assert result.ret == 0


def test_an_operation_the_target_does_not_offer_is_not_credited(pytester, monkeypatch):
    """A target without feedback and rehydration (answered `unsupported`, as below L3) passes the
    machines on what they observed, and only on that: the requirements of those operations are not
    judged, neither passed nor failed, and the report says why."""
    from memconform.suite.ump.client import Reply
    from memconform.targets.http import HttpUmpClient

    def unsupported(operation):
        def answer(self, request, *, auth=None):
            body = {"error": {"code": "unsupported", "message": f"{operation} is not offered"}}
            return Reply(operation, "http", request, status=400, body=body, error_code="unsupported")
        return answer

    monkeypatch.setattr(HttpUmpClient, "feedback", unsupported("feedback"))
    monkeypatch.setattr(HttpUmpClient, "rehydrate", unsupported("rehydrate"))
    result, report = run_suite(pytester, "--target=reference", "--spec=ump@1.0", "--binding=http",
                               *[f"--check={m}" for m in MACHINES], "--seed=0")
    by_check = {r["check"]: r for r in report["results"]}
    records, recall = by_check["ump/stateful/records"], by_check["ump/stateful/recall"]
    assert records["outcome"] == recall["outcome"] == "passed"
    assert records["not_judged"] == ["ump/feedback-accepts-outcome", "ump/rehydrate-filter-before-ranking",
                                     "ump/rehydrate-never-execute"]
    assert recall["not_judged"] == ["ump/rehydrate-filter-before-ranking", "ump/rehydrate-never-execute"]
    assert "rehydrate answered HTTP 400" in records["reason"] and "feedback answered HTTP 400" in records["reason"]
    credited = {r["id"] for r in report["requirements"]}
    assert not credited & {"ump/feedback-accepts-outcome", "ump/rehydrate-filter-before-ranking",
                           "ump/rehydrate-never-execute"}
    assert {"ump/visibility-private", "ump/recall-limit", "ump/revise-creates-successor"} <= credited
    assert result.ret == 0


@pytest.mark.parametrize(("binding", "group"), _variant_groups(),
                         ids=lambda value: value if isinstance(value, str) else f"{len(value)}-variants-{value[0]}")
def test_every_ump_variant_passes_the_machines(pytester, binding, group):
    """Each variant is a reading the machines' model must accept; variants that set different
    decision points are judged together (a run per combinable group keeps this affordable)."""
    target = "reference?" + "&".join(f"variant={name}" for name in group)
    result, report = run_suite(pytester, f"--target={target}", "--spec=ump@1.0", f"--binding={binding}",
                               *[f"--check={m}" for m in MACHINES], "--seed=0")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) == set(), group
    assert report["totals"].get("passed", 0) == 2, report["totals"]
    unseen = WITHOUT_AN_OPERATION.get(group[0]) if len(group) == 1 else None
    assert {n for r in report["results"] for n in r.get("not_judged") or ()} == set(unseen or ()), group
    assert result.ret == 0
