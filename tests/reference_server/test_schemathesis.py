"""Schemathesis against the running reference server's own /openapi.json.

Stateless: every operation (but the never-ending SSE stream), 200 examples of positive data and
100 of negative data per operation (fewer only where the input space is smaller), checked with not_a_server_error,
response_schema_conformance, status_code_conformance and content_type_conformance. Stateful:
the OpenAPI links (remember → get / revise / forget / feedback / rehydrate, revise → get …)
chained by schemathesis's state machine. Derandomized (a fixed seed per test) and without the
example database, so every run draws the same cases.

The document is served as shipped; only for generation the remembered records' owner and actor
are pinned to owner-a (whose token is sent), so that remember mostly succeeds and the links have
ids to follow.
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
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance, response_schema_conformance, status_code_conformance,
)

from memconform.reference_impl.ump import serve
from memconform.reference_impl.ump.http_app import build_app
from memconform.suite.ump import testkeys

from .conftest import token_for

CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]
EXAMPLES = {"positive": 200, "negative": 100}
OWNER = testkeys.test_did("owner-a")
#: Operations without any input: there is nothing to make negative.
NO_INPUT = ("GET /.well-known/ump.json", "GET /openapi.json")
#: The SSE stream never ends by itself: schemathesis would wait for it until its timeout. It is
#: tested in test_http.py.
SKIPPED = ("GET /ump/subscribe",)
FIGURES: dict[str, tuple[int, float]] = {}


def _closed(schema: dict[str, Any]) -> None:
    """additionalProperties: false on an object schema and every object schema in it."""
    if isinstance(schema, dict):
        if "properties" in schema:
            schema["additionalProperties"] = False
        for value in schema.get("properties", {}).values():
            _closed(value)


def _tailored(doc: dict[str, Any]) -> dict[str, Any]:
    """The served document, with records and patches narrowed for generation: owner-a owns
    them, and no unknown members (which the record schema refuses), so that remember and revise
    mostly succeed and the links have something to follow."""
    doc = json.loads(json.dumps(doc))
    schemas = doc["components"]["schemas"]
    partial = schemas["partial_record"]
    partial["properties"]["scope"]["properties"]["owner"] = {"const": OWNER}
    partial["properties"]["provenance"]["properties"]["actor"] = {"const": OWNER}
    _closed(partial)
    partial["properties"]["body"]["properties"]["structured"] = {"type": "object"}
    patch = schemas["revise_body"]["allOf"][1]["properties"]["patch"]
    _closed(patch)
    return doc


@pytest.fixture(scope="module")
def api(module_server) -> tuple[str, Any, dict[str, str]]:
    url = module_server.url
    doc = httpx.get(f"{url}/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(_tailored(doc))
    schema.config.update(base_url=url)
    schema.config.generation.update(with_security_parameters=False)
    return url, schema, {"Authorization": f"Bearer {token_for('owner-a', ttl=3600)}"}


def _labels() -> list[str]:
    from importlib import resources

    doc = json.loads((resources.files("memconform.reference_impl.ump") / "openapi.json").read_text("utf-8"))
    return [f"{m.upper()} {p}" for p, item in doc["paths"].items() for m in item]


CASES = [pytest.param(label, mode, id=f"{label}-{mode}") for label in _labels() if label not in SKIPPED
         for mode in ("positive", "negative") if not (mode == "negative" and label in NO_INPUT)]


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_stateless(api, label, mode):
    url, schema, auth = api
    method, path = label.split(" ", 1)
    operation = schema[path][method]
    strategy = operation.as_strategy(generation_mode=GenerationMode(mode), headers=dict(auth))
    count = 0

    @settings(max_examples=EXAMPLES[mode], derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate, Phase.target, Phase.shrink])
    @given(case=strategy)
    def run(case: Any) -> None:
        nonlocal count
        count += 1
        response = case.call(base_url=url, headers=auth, timeout=10)
        case.validate_response(response, checks=CHECKS, headers=auth)

    started = time.monotonic()
    run()
    FIGURES[f"{label} [{mode}]"] = (count, time.monotonic() - started)
    if label not in ("GET /ump/capabilities", *NO_INPUT):  # the others have finite input spaces
        assert count >= EXAMPLES[mode], f"only {count} examples for {label} ({mode})"


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
    _, schema, auth = api
    service = _FreshService()
    server = serve.start_in_thread(service, app=build_app(service, mcp=False))
    url = server.base_url
    schema.config.generation.update(modes=[GenerationMode.POSITIVE])
    base = schema.as_state_machine()
    steps: list[str] = []

    class Workflow(base):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            service.reset()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": url, "headers": auth, "timeout": 10}

        def after_call(self, response: Any, case: Any) -> None:
            steps.append(f"{case.operation.label} {response.status_code}")

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS, headers=auth)

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
    lines = [f"{name:<{width}}  {n:5d} {'calls' if 'calls' in name else 'examples'}  {t:6.1f} s"
             for name, (n, t) in FIGURES.items()]
    print("\nschemathesis figures:\n" + "\n".join(lines))
