"""Schemathesis against the running reference server's own /openapi.json, with every check.

Checks: all of schemathesis's registered checks (`CHECK_NAMES`: not_a_server_error,
status_code_conformance, content_type_conformance, response_headers_conformance,
response_schema_conformance, negative_data_rejection, positive_data_acceptance,
missing_required_header, unsupported_method, allow_header_conformance, use_after_free,
ensure_resource_availability, ignored_auth, object_level_authorization). Each runs where it can
observe something: the data checks on every generated case, missing_required_header /
unsupported_method / allow_header_conformance in the coverage phase (its cases), use_after_free /
ensure_resource_availability in the stateful phase (they need a scenario's history),
object_level_authorization needs a second principal (schemathesis's multi-auth configuration),
which this test does not set up, so it never fires.

* `test_stateless`: every operation (but the never-ending SSE stream) with 200 positive and 200
  negative examples (fewer only where the input space is smaller: capabilities, the two input-less
  GETs), generated from the document *as served*.
* `test_coverage_phase`: schemathesis's engine, coverage phase only (missing/unsupported methods,
  missing headers, boundary values), on the document as served.
* `test_stateful_links`: the OpenAPI links (remember → get / revise / forget / feedback /
  rehydrate, revise → get …) chained by schemathesis's state machine, each scenario on a fresh store.

Derandomized (hypothesis `derandomize`, the engine's deterministic mode) and without the example
database, so every run draws the same cases; nothing is timed.

Tailoring (only for generation, never for judging: every tailored schema only narrows the served
one, so a tailored positive case is a positive case of the served document, and every check judges
responses against the document as served):

* `remember` positive examples have the `UMP-Version` header pinned to 1.0: a 0.1 runtime refuses
  a record whose `ump` is "1.0" (§8: an unknown major version is rejected), a dependency between
  a header and the body that OpenAPI cannot state (the `ump` member's description says it).
  They are drawn twice: once with nothing else narrowed (most draw an owner that is not the
  token's issuer: 403, what the server must answer), once with the record's owner and actor
  pinned to owner-a (whose token is sent), so that what lies behind the ownership check (merge,
  signing, storing) is exercised too; there `id` is left out (the server mints one), because
  an id drawn twice, for two different records, is refused the second time (invalid_record): a
  matter of the store's state, which a schema cannot state; and `body.structured` holds integers
  within ±(2^53−1) only (a record is signed over its RFC 8785 form, which an integer no double
  equals does not have: refused with invalid_record, a rule on numbers at any depth).
* The stateful phase uses the same narrowed remember (so that the links have stored records to
  follow); negative data is not generated there, and positive_data_acceptance is left out there
  (STATEFUL_CHECKS: a valid request may meet a refusing state, e.g. revise after forget).
"""

from __future__ import annotations

import collections
import json
import time
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks

from memconform.reference_impl.ump import serve
from memconform.reference_impl.ump.http_app import build_app
from memconform.suite.ump import testkeys

from .conftest import token_for

load_all_checks()
CHECK_NAMES = sorted(CHECKS.get_all_names())
CHECK_FUNCTIONS = CHECKS.get_all()
EXAMPLES = {"positive": 200, "negative": 200}
OWNER = testkeys.test_did("owner-a")
#: Operations without any input: there is nothing to make negative.
NO_INPUT = ("GET /.well-known/ump.json", "GET /openapi.json")
#: The SSE stream never ends by itself: schemathesis would wait for it until its timeout. It is
#: tested in test_http.py.
SKIPPED = ("GET /ump/subscribe",)
FIGURES: dict[str, tuple[int, float]] = {}
#: In a scenario a schema-valid request can meet a state that refuses it (revise of a record forget
#: tombstoned: 400 invalid_record, §3.5/§3.6); positive_data_acceptance judges data, not state, and
#: runs in test_stateless on the same operations.
STATEFUL_CHECKS = [c for c in CHECK_FUNCTIONS if c.__name__ != "positive_data_acceptance"]


def _tailored(doc: dict[str, Any], *, owner: bool = True) -> dict[str, Any]:
    """The served document with remember narrowed for generation (see the module docstring): the
    UMP-Version header pinned to 1.0, and with `owner` the record's owner and actor to owner-a."""
    doc = json.loads(json.dumps(doc))
    schemas = doc["components"]["schemas"]
    partial = schemas["partial_record"]
    if owner:
        partial["properties"]["scope"]["properties"]["owner"] = {"const": OWNER}
        partial["properties"]["provenance"]["properties"]["actor"] = {"const": OWNER}
        del partial["properties"]["id"]  # the server mints it; a drawn id may be taken already (state)
        # a signed record needs an RFC 8785 form: an integer no IEEE 754 double equals has none
        # (refused, invalid_record), a rule on numbers at any depth that OpenAPI cannot state;
        # schemathesis draws such integers from constants it finds in the loaded code
        partial["properties"]["body"]["properties"]["structured"] = {
            "type": "object", "additionalProperties": {"anyOf": [
                {"type": "integer", "minimum": -(2**53 - 1), "maximum": 2**53 - 1},
                {"type": "string"}, {"type": "boolean"}, {"type": "null"}]}}
    remember = doc["paths"]["/ump/remember"]["post"]
    header = dict(doc["components"]["parameters"]["UmpVersion"], schema={"const": "1.0"})
    remember["parameters"] = [header if p.get("$ref", "").endswith("/UmpVersion") else p
                              for p in remember["parameters"]]
    return doc


def _schema(url: str, doc: dict[str, Any]) -> Any:
    schema = schemathesis.openapi.from_dict(doc)
    schema.config.update(base_url=url)
    schema.config.generation.update(with_security_parameters=False)
    return schema


@pytest.fixture(scope="module")
def api(module_server) -> tuple[str, dict[str, Any], dict[str, str]]:
    url = module_server.url
    doc = httpx.get(f"{url}/openapi.json", timeout=10).json()
    return url, doc, {"Authorization": f"Bearer {token_for('owner-a', ttl=3600)}"}


def _labels() -> list[str]:
    from importlib import resources

    doc = json.loads((resources.files("memconform.reference_impl.ump") / "openapi.json").read_text("utf-8"))
    return [f"{m.upper()} {p}" for p, item in doc["paths"].items() for m in item]


CASES = [pytest.param(label, mode, "served", id=f"{label}-{mode}") for label in _labels() if label not in SKIPPED
         for mode in ("positive", "negative") if not (mode == "negative" and label in NO_INPUT)]
CASES.append(pytest.param("POST /ump/remember", "positive", "tailored", id="POST /ump/remember-positive-owner-a"))


@pytest.mark.parametrize(("label", "mode", "doc_kind"), CASES)
def test_stateless(api, label, mode, doc_kind):
    url, doc, auth = api
    if label == "POST /ump/remember" and mode == "positive":
        doc = _tailored(doc, owner=doc_kind == "tailored")
    schema = _schema(url, doc)
    method, path = label.split(" ", 1)
    operation = schema[path][method]
    strategy = operation.as_strategy(generation_mode=GenerationMode(mode), headers=dict(auth))
    count = 0
    statuses: collections.Counter[int] = collections.Counter()

    @settings(max_examples=EXAMPLES[mode], derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate, Phase.target, Phase.shrink])
    @given(case=strategy)
    def run(case: Any) -> None:
        nonlocal count
        count += 1
        response = case.call(base_url=url, headers=auth, timeout=10)
        statuses[response.status_code] += 1
        case.validate_response(response, checks=CHECK_FUNCTIONS, headers=auth)

    started = time.monotonic()
    run()
    FIGURES[f"{label} [{mode}{', owner-a' if doc_kind == 'tailored' else ''}]"] = (count, time.monotonic() - started)
    if label not in ("GET /ump/capabilities", *NO_INPUT):  # the others have finite input spaces
        assert count >= EXAMPLES[mode], f"only {count} examples for {label} ({mode})"
    if doc_kind == "tailored":  # the narrowing reaches past the ownership check: records are stored
        assert statuses[200] > 0, dict(statuses)


def _coverage_run(url: str, doc: dict[str, Any], auth: dict[str, str]) -> tuple[int, list[str], list[str], list[str]]:
    """One engine run, coverage phase only: (cases, failures, errors, how each phase ended)."""
    from schemathesis.engine import Status, events, from_schema

    schema = _schema(url, doc)
    schema.config.update(headers=dict(auth))
    schema.config.phases.update(phases=["coverage"])
    schema.config.checks.update(included_check_names=CHECK_NAMES)
    schema.config.generation.update(deterministic=True, database="none")
    schema = schema.exclude(path="/ump/subscribe")
    failures: list[str] = []
    errors: list[str] = []
    seen: list[str] = []
    cases = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            cases += len(event.recorder.cases)
            if event.status == Status.FAILURE:
                for checks in event.recorder.checks.values():
                    failures += [f"{event.recorder.label}: {c.name}: {c.failure_info.failure.title}"
                                 for c in checks if c.status == Status.FAILURE and c.failure_info]
        elif isinstance(event, events.NonFatalError):
            errors.append(str(event.info.format()) if hasattr(event, "info") else repr(event))
        elif isinstance(event, events.FatalError):
            raise AssertionError(f"schemathesis stopped: {event.exception!r}")
        elif isinstance(event, (events.PhaseFinished, events.Interrupted)):
            phase = getattr(event, "phase", None)
            seen.append(f"{type(event).__name__} {getattr(phase, 'name', phase)} {getattr(event, 'status', '')} "
                        f"{getattr(phase, 'skip_reason', '')}")
    return cases, failures, errors, seen


def test_coverage_phase(api):
    """schemathesis's engine, coverage phase, every check, on the document as served. Once in a
    loaded full run the engine ended without running the phase and without saying why (no error,
    no case): such a run judged nothing, so it is run again once; two in a row fail with how the
    phases ended."""
    url, doc, auth = api
    started = time.monotonic()
    cases, failures, errors, seen = _coverage_run(url, doc, auth)
    if cases == 0 and not failures and not errors:
        cases, failures, errors, again = _coverage_run(url, doc, auth)
        seen += ["-- run again --", *again]
    FIGURES["coverage phase (cases)"] = (cases, time.monotonic() - started)
    assert not errors, errors
    assert not failures, sorted(set(failures))
    assert cases > 0, seen  # the engine's phases as they ended, and why one was skipped


class _FreshService:
    """Stands for a UmpService that `reset()` replaces with an empty one: every stateful scenario
    starts from an empty store, so the same choices always meet the same answers (hypothesis
    rejects a strategy whose behaviour depends on what earlier scenarios left behind)."""

    def __init__(self) -> None:
        self._current = serve.make_service()

    def reset(self) -> None:
        old, self._current = self._current, serve.make_service()
        old.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current, name)


def test_stateful_links(api):
    _, doc, auth = api
    service = _FreshService()
    server = serve.start_in_thread(service, app=build_app(service, mcp=False))
    url = server.base_url
    schema = _schema(url, _tailored(doc))
    schema.config.generation.update(modes=[GenerationMode.POSITIVE])
    base = schema.as_state_machine()
    steps: list[str] = []

    class Workflow(base):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            service.reset()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": url, "headers": auth, "timeout": 10}

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            steps.append(f"{case.operation.label} {response.status_code}")

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            # the history lets use_after_free and ensure_resource_availability look back
            case.validate_response(response, checks=STATEFUL_CHECKS, headers=auth,
                                   recorder=getattr(self, "recorder", None))

    started = time.monotonic()
    try:
        Workflow.run(settings=settings(max_examples=60, stateful_step_count=8, derandomize=True, database=None,
                                       deadline=None, suppress_health_check=list(HealthCheck),
                                       phases=[Phase.explicit, Phase.generate, Phase.shrink]))
    finally:
        server.stop()
        service.close()
    FIGURES["stateful (calls)"] = (len(steps), time.monotonic() - started)
    print("\nstateful steps:", dict(sorted(collections.Counter(steps).items())))
    # the links were followed: get, revise, forget and feedback of a remembered record succeeded
    succeeded = {s.rsplit(" ", 1)[0] for s in steps if s.endswith(" 200")}
    for label in ("POST /ump/remember", "GET /ump/memory/{id}", "POST /ump/revise", "POST /ump/forget",
                  "POST /ump/feedback"):
        assert label in succeeded, (label, sorted(set(steps)))


def test_figures(api):
    """Not a check: prints how many examples each operation got (run with -s to see them)."""
    if not FIGURES:
        pytest.skip("run with the other tests of this module")
    width = max(map(len, FIGURES))
    lines = [f"{name:<{width}}  {n:5d} {'calls' if 'calls' in name else 'cases' if 'cases' in name else 'examples'}"
             f"  {t:6.1f} s" for name, (n, t) in FIGURES.items()]
    print("\nschemathesis figures:\n" + "\n".join(lines))
