"""UMP L1 robustness: the target's own OpenAPI document fuzzed with schemathesis, and bad input
sent on purpose (malformed JSON, wrong types, oversize bodies, unknown routes and methods, bad
escapes, garbage tokens) over HTTP, and wrong tool arguments over MCP.

What every check here asks of an answer to a request that is wrong on purpose:

* it is an error, carried in the §3 envelope `{"error": {"code", "message"}}` with a §3.7 code
  (over MCP: a tool result with isError from which that code can be read, ump/mcp-errors);
* it is never a 5xx (HTTP) or an `internal` code, and never carries a traceback: the failure was
  foreseeable, so an unexpected one is no §3.7 code (ump/error-codes). The other live checks treat
  a 500 to a *valid* request as the target erroring (catalogue note of ump/error-codes); here the
  request is the test, and a 500 is the finding;
* over HTTP its status is the one of its code (ump/http-error-status, SHOULD);
* it leaves the store as it was: a record remembered just before is still served unchanged
  (ump/remember-persists), and nothing the probe carried was stored (ump/remember-invalid-record).

A reading the catalogue makes (ump/unsupported-operation): an unknown route or method may be
answered with a plain 404/405 (a SHOULD matter); an envelope there must still carry a §3.7 code.

The OpenAPI fuzz judges every answer the same way, and besides holds the target to its own
document: an error that does not match its documented error schema is reported against
ump/error-envelope; a success that does not match its documented response schema is only logged
(`SUCCESS_SCHEMA_REQUIREMENT` is None), since the operation checks judge every §3 response shape.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.generation import quiet_hypothesis
from memconform.suite.effort import ENV_EXAMPLES, ENV_SECONDS, fuzz_budget
from memconform.suite.outcomes import LEVELS, NotApplicable, TargetError
from memconform.suite.registry import Case, check
from memconform.suite.runner import CheckContext
from memconform.suite.ump import captoken, testkeys
from memconform.suite.ump.checks._live import OWNER_A, did, marker, results_of, sample_record
from memconform.suite.ump.client import Auth, Reply

log = logging.getLogger("memconform.suite.ump.robustness")

HTTP = ("http",)
MCP = ("mcp",)

#: §3.7, the whole error vocabulary.
ERROR_CODES = ("unauthorized", "forbidden_scope", "not_found", "invalid_record", "consent_violation",
               "signature_invalid", "unsupported", "rate_limited")
#: HTTP status per §3.7 code (docs/live-ump.md); every other code is a 4xx.
STATUS_FOR_CODE = {"not_found": 404, "unauthorized": 401, "forbidden_scope": 403, "rate_limited": 429}
#: What gives a stack trace away in a body: Python, Node/Java/.NET, Go, Ruby.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"\n]+\", line \d+|"
                       r"\n\s+at [\w$.<>]+ ?\(|goroutine \d+ \[|\.rb:\d+:in `")

#: How many examples of one kind of finding one operation reports (the rest are counted).
EXAMPLES_PER_FINDING = 3
#: The requirement a fuzzed success answer breaks when it does not match the response schema of
#: the target's own OpenAPI document (None: such answers are logged, not reported). A shape
#: fault of one operation (capabilities' conformance, recall's signals …) shows here as well as
#: in that operation's own check.
# A success that departs from the target's own OpenAPI document is the document's problem as much
# as the server's, and the operation checks already judge every §3 response shape against the
# spec's schemas: such mismatches are logged, not charged to a requirement.
SUCCESS_SCHEMA_REQUIREMENT: str | None = None


# =============================================================================================
# shared helpers
# =============================================================================================

def _spec(requirement: str) -> str:
    """'§3.3: “…”' — the section and sentence a message cites."""
    req = catalogues.load("ump").get(requirement)
    quote = req.quote if len(req.quote) <= 160 else req.quote[:157] + "…"
    return f"§{req.section}: “{quote}”"


def _short(value: Any, limit: int = 300) -> str:
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value[: limit * 4]).decode("utf-8", "replace")
        size = len(value)
    elif isinstance(value, str):
        text, size = value, len(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
        size = len(text)
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    if len(text) > limit:
        return text[:limit] + f"… ({size} characters in all)"
    return text


def _strings(value: Any, budget: int = 200) -> list[str]:
    """The strings in a JSON value (an error message, a `detail` …), a bounded number of them."""
    out: list[str] = []
    stack = [value]
    while stack and len(out) < budget:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item[:50])
    return out


def _traceback_in(text: str | None, body: Any = None) -> str | None:
    """The first line of a stack trace found in `text` or in the strings of the parsed `body`
    (where JSON escaping would hide the line breaks and quotes), or None."""
    for candidate in [text or "", *_strings(body)]:
        m = TRACEBACK.search(candidate)
        if m is not None:
            return candidate[m.start():].strip().splitlines()[0][:160]
    return None


def _owner_token(ttl: float = 1800.0) -> str:
    """owner-a's token as the target knows owner-a (a vendor's own key: docs/vendor-keys.md)."""
    from memconform.suite.ump import owners

    try:
        return owners.active().token(OWNER_A, ttl=ttl)
    except owners.CannotSign as exc:
        raise NotApplicable(f"cannot make owner-a's token: {exc}") from None


def _caps(ctx: CheckContext) -> dict[str, Any]:
    if ctx.binding == "mcp":
        tools = ctx.client.tools() or []
        if "ump.capabilities" not in {t.get("name") for t in tools if isinstance(t, dict)}:
            return {}
    reply = ctx.client.capabilities()
    return reply.body if reply.ok and isinstance(reply.body, dict) else {}


def _level_at_least(ctx: CheckContext, wanted: str) -> bool:
    """Whether the target claims `wanted` or more (an unreadable level gets the benefit of the
    doubt: ump/l1/capabilities reports it)."""
    level = _caps(ctx).get("conformance")
    return level not in LEVELS or LEVELS.index(level) >= LEVELS.index(wanted)


# =============================================================================================
# ump/l1/openapi-fuzz: schemathesis over the target's /openapi.json
# =============================================================================================

def _openapi_document(ctx: CheckContext) -> dict[str, Any]:
    reply = ctx.client.call_raw("GET", "/openapi.json", None, {"Accept": "application/json"},
                                auth=Auth.anonymous())
    if reply.status in (401, 403):
        reply = ctx.client.call_raw("GET", "/openapi.json", None, {"Accept": "application/json"},
                                    auth=Auth.as_owner(OWNER_A))
    if reply.status == 404:
        raise NotApplicable("the target serves no OpenAPI document (GET /openapi.json answered 404): "
                            "nothing to fuzz from (the bad-input checks still run)")
    if reply.status != 200:
        raise NotApplicable(f"GET /openapi.json answered {reply.describe()}: no OpenAPI document to fuzz from")
    doc = reply.body
    version = doc.get("openapi") if isinstance(doc, dict) else None
    if not isinstance(version, str) or not version.startswith("3."):
        what = (f"openapi {version!r}" if isinstance(doc, dict) and "openapi" in doc
                else "Swagger 2.0" if isinstance(doc, dict) and "swagger" in doc
                else "not a JSON object" if not isinstance(doc, dict) else "no `openapi` member")
        raise NotApplicable(f"GET /openapi.json is not an OpenAPI 3.x document ({what}): nothing to fuzz from")
    if not isinstance(doc.get("paths"), dict) or not doc["paths"]:
        raise NotApplicable("the target's OpenAPI document lists no paths: nothing to fuzz")
    return doc


_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def _resolve(doc: dict[str, Any], node: Any) -> Any:
    """One level of a local `$ref` (enough for response objects)."""
    for _ in range(8):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/")):
            return node
        target: Any = doc
        for part in node["$ref"][2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        node = target
    return node


def _streams(doc: dict[str, Any], operation: dict[str, Any]) -> bool:
    for response in (operation.get("responses") or {}).values():
        content = _resolve(doc, response)
        content = content.get("content") if isinstance(content, dict) else None
        if isinstance(content, dict) and any(str(t).lower().startswith("text/event-stream") for t in content):
            return True
    return False


def _operations(doc: dict[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """The (method, path) pairs to fuzz, and why the others are not."""
    chosen: list[tuple[str, str]] = []
    left_out: list[str] = []
    for path, item in doc["paths"].items():
        if not isinstance(item, dict):
            continue
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            label = f"{method.upper()} {path}"
            if not (path.startswith("/ump/") or path == "/.well-known/ump.json"):
                left_out.append(f"{label} (not a UMP route)")
            elif path == "/ump/subscribe" or _streams(doc, operation):
                left_out.append(f"{label} (an event stream, judged by the subscribe checks)")
            else:
                chosen.append((method, path))
    return chosen, left_out


def _closed(schema: Any) -> None:
    """additionalProperties: false on an object schema and every object schema in its properties."""
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict):
            schema["additionalProperties"] = False
            for value in schema["properties"].values():
                _closed(value)


def _tailored(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as generation sees it: wherever a request schema describes a record (an
    object with `scope.owner`, `provenance.actor`), the owner and actor are owner-a, whose token
    is sent, and records and patches carry no unknown members, so that remember mostly succeeds
    and the links have ids to follow. Responses are judged against the document as served."""
    doc = copy.deepcopy(doc)
    owner = did(OWNER_A)

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for value in node:
                walk(value)
            return
        if not isinstance(node, dict):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            for member, inner in (("scope", "owner"), ("provenance", "actor")):
                sub = props.get(member)
                if isinstance(sub, dict) and isinstance(sub.get("properties"), dict) and inner in sub["properties"]:
                    sub["properties"][inner] = {"const": owner}
            if {"kind", "body", "scope"} <= set(props):
                _closed(node)
                body = props.get("body")
                if isinstance(body, dict) and isinstance(body.get("properties"), dict) \
                        and isinstance(body["properties"].get("structured"), dict):
                    body["properties"]["structured"] = {"type": "object"}
            if isinstance(props.get("patch"), dict):
                _closed(props["patch"])
        for value in node.values():
            walk(value)

    walk(doc.get("paths"))
    walk(doc.get("components"))
    return doc


def _header(headers: Any, name: str) -> str:
    """One header of a schemathesis Response (lists of values, lower-case names)."""
    value = headers.get(name) if hasattr(headers, "get") else None
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) else ""


class _Stop(Exception):
    """Ends a Hypothesis run early: out of time, or the target stopped answering."""


def _transport_error_types() -> tuple[type[BaseException], ...]:
    import requests

    return (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
            requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)


@dataclass
class _Kind:
    requirement: str
    what: str          # "were answered …": the plural account for the message
    count: int = 0
    examples: list[tuple[str, str, str]] = field(default_factory=list)  # (sent, received, detail)


@dataclass
class _Fuzz:
    """The state of one fuzz run: findings per (operation, kind), counts, notes."""

    ctx: CheckContext
    base_url: str
    headers: dict[str, str]
    timeout: float
    judge_ops: dict[str, Any]
    deadline: float
    session: Any = None
    kinds: dict[tuple[str, str], _Kind] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    transport: str | None = None
    out_of_time: bool = False
    share: float | None = None          # how long the current stateless run may take …
    run_deadline: float | None = None   # … counted from its first request (not its warm-up)
    cut: str | None = None              # the run that used up its share

    # -- sending ------------------------------------------------------------------------------

    def call(self, case: Any, phase: str) -> Any:
        """Send one case; None when it cannot be sent (an unusable example); raises _Stop when
        time is up or the target stopped answering."""
        import requests

        if self.transport is not None:
            raise _Stop()
        now = time.monotonic()
        if now > self.deadline:
            self.out_of_time = True
            raise _Stop()
        if self.share is not None:
            if self.run_deadline is None:
                self.run_deadline = now + self.share
            elif now > self.run_deadline:
                self.cut = f"{case.operation.label} ({phase})"
                raise _Stop()
        try:
            return case.call(base_url=self.base_url, headers=dict(self.headers), timeout=self.timeout,
                             session=self.session, allow_redirects=False)
        except _transport_error_types() as exc:
            request = getattr(exc, "request", None)
            sent = self._request_text(request) if request is not None else f"{case.method} {case.path}"
            self.transport = (f"{case.operation.label} ({phase}): {sent} → no answer: {type(exc).__name__}: "
                              f"{_short(str(exc), 200)}")
            raise _Stop() from None
        except requests.exceptions.RequestException as exc:
            # the generated request could not be built (a header value requests refuses, …):
            # our side, not the target's
            self.notes.append(f"{case.operation.label}: an example could not be sent ({type(exc).__name__})")
            return None

    @staticmethod
    def _request_text(request: Any) -> str:
        body = getattr(request, "body", None)
        text = f"{request.method} {request.path_url}"
        if body:
            text += " " + _short(body, 300)
        return text

    # -- judging ------------------------------------------------------------------------------

    def _add(self, op: str, kind: str, requirement: str, what: str, sent: str, received: str, detail: str) -> None:
        entry = self.kinds.setdefault((op, kind), _Kind(requirement, what))
        entry.count += 1
        if len(entry.examples) < EXAMPLES_PER_FINDING:
            entry.examples.append((sent, received, detail))

    def judge(self, op: str, response: Any, phase: str) -> None:
        from schemathesis.core.failures import Failure, FailureGroup

        self.sent[op] = self.sent.get(op, 0) + 1
        status = response.status_code
        content = response.content or b""
        text = content.decode("utf-8", "replace")
        ctype = _header(response.headers, "content-type")
        sent = f"[{phase}] " + self._request_text(response.request)
        received = f"HTTP {status}" + (f" ({ctype})" if ctype else "") + f": {_short(text, 500)}"
        try:
            body: Any = json.loads(text) if text.strip() else None
            is_json = bool(text.strip())
        except ValueError:
            body, is_json = None, False
        trace = _traceback_in(text, body)
        if status >= 500:
            self._add(op, "5xx", "ump/error-codes",
                      "were answered with a 5xx status: an unexpected failure, for which §3.7 has no code",
                      sent, received, f"HTTP {status}" + (f", with a stack trace ({trace})" if trace else ""))
            return
        if status < 200 or 300 <= status < 400:
            return
        # an answer that is no 5xx: ump/error-codes' "no unexpected failure" was compared
        self.ctx.observed("ump/error-codes")
        err = body.get("error") if isinstance(body, dict) else None
        envelope = isinstance(err, dict) and isinstance(err.get("code"), str) and isinstance(err.get("message"), str)
        if 200 <= status < 300:
            self.ctx.observed("ump/messages-json-objects")
            if isinstance(body, dict):
                self.ctx.observed("ump/http-error-status")  # an envelope under a 2xx was looked for
            if not isinstance(body, dict):
                self._add(op, "not-object", "ump/messages-json-objects",
                          "were answered with a success whose body is not a JSON object", sent, received,
                          "not JSON" if not is_json else f"a JSON {type(body).__name__}")
                return
            if err is not None:
                self._add(op, "2xx-error", "ump/http-error-status",
                          "were answered with an error envelope under a 2xx status (an error is never a 2xx)",
                          sent, received, f"HTTP {status} with `error`")
                return
        else:  # 4xx
            self.ctx.observed("ump/error-envelope")
            if envelope and err["code"] in ERROR_CODES:  # its status: the code's, otherwise a 4xx
                self.ctx.observed("ump/http-error-status")
            if trace:
                self._add(op, "traceback", "ump/error-codes",
                          "were answered with a stack trace in the body: an exception escaped the handler, an "
                          "unexpected failure whatever the code says", sent, received, trace)
            if not envelope:
                self._add(op, "no-envelope", "ump/error-envelope",
                          "failed without the envelope {\"error\": {\"code\", \"message\"}}", sent, received,
                          "not JSON" if not is_json else f"HTTP {status} body {_short(body, 120)}")
                return
            code = err["code"]
            if code not in ERROR_CODES:
                self._add(op, "code", "ump/error-codes", "failed with a code that is not one of §3.7's",
                          sent, received, f"code {code!r}")
            else:
                wanted = STATUS_FOR_CODE.get(code)
                if wanted is not None and status != wanted:
                    self._add(op, "status", "ump/http-error-status",
                              "failed under a status that is not the one of their code", sent, received,
                              f"{code} under HTTP {status}, not {wanted}")
        judge_op = self.judge_ops.get(op)
        if judge_op is None:
            return
        try:
            judge_op.validate_response(response, case=None)
        except (Failure, FailureGroup) as exc:
            failures = list(exc.exceptions) if isinstance(exc, FailureGroup) else [exc]
            detail = "; ".join(f"{f.title}: {_short(f.message, 240)}" for f in failures[:2])
            if 200 <= status < 300:
                if SUCCESS_SCHEMA_REQUIREMENT is None:
                    log.info("openapi-fuzz: %s answered a success off its documented schema: %s", op, detail)
                    return
                self._add(op, "schema", SUCCESS_SCHEMA_REQUIREMENT,
                          "were answered with a success that does not match the response schema the target's "
                          "own OpenAPI document gives for it", sent, received, detail)
            else:
                self._add(op, "error-schema", "ump/error-envelope",
                          "failed with an error body that does not match the error schema the target's own "
                          "OpenAPI document gives for it", sent, received, detail)
        except Exception as exc:  # noqa: BLE001 — the document's schema itself cannot be used
            from schemathesis.errors import SchemathesisError

            if not isinstance(exc, SchemathesisError):
                raise
            note = f"{op}: responses cannot be validated ({type(exc).__name__}: {_short(str(exc), 160)})"
            if note not in self.notes:
                self.notes.append(note)
            self.judge_ops.pop(op, None)

    def report(self) -> None:
        who = f"as owner-a, UMP-Version {self.ctx.version}"
        for (op, _kind), entry in self.kinds.items():
            sent, received, detail = entry.examples[0]
            more = "".join(f"; also {s} → {_short(r, 160)} ({d})" for s, r, d in entry.examples[1:])
            self.ctx.violation(
                entry.requirement,
                f"{op}: {entry.count} of {self.sent.get(op, entry.count)} fuzzed requests ({who}) {entry.what}; "
                f"first: {detail}{more}; {_spec(entry.requirement)}",
                sent=sent, received=received, where=op)


#: Stateless examples drawn for one document, replayed for the next subject (the other version)
#: of the same target: generation does not depend on answers, and seeded alike it would draw the
#: very same examples again. Keyed by (base URL, document digest, label, mode, count, seed).
_DRAWN: dict[tuple[str, str, str, str, int, int], list[Any]] = {}

#: The last server's (judge, generation) schemas: each load takes schemathesis ~0.5 s, and a
#: server's versions serve one document. Keyed by the server and the document's digest, as _DRAWN
#: is: a schema that has run a state machine is not reused against another server.
_LOADED: dict[tuple[str, str], tuple[Any, Any]] = {}


def _loaded(base_url: str, doc: dict[str, Any], digest: str) -> tuple[Any, Any]:
    import schemathesis

    key = (base_url, digest)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = (schemathesis.openapi.from_dict(doc), schemathesis.openapi.from_dict(_tailored(doc)))
    return _LOADED[key]


def _stateless(fuzz: _Fuzz, schema: Any, digest: str, labels: list[tuple[str, str]], examples: int,
               deadline: float, run_seed: int) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    from hypothesis.errors import HypothesisException
    from schemathesis import GenerationMode
    from schemathesis.errors import SchemathesisError

    for key in [k for k in _DRAWN if k[:2] != (fuzz.base_url, digest)]:
        del _DRAWN[key]
    plan = [(method, path, mode, n) for method, path in labels
            for mode, n in (("positive", examples - examples // 2), ("negative", examples // 2)) if n > 0]
    for index, (method, path, mode, n) in enumerate(plan):
        now = time.monotonic()
        if now >= deadline:
            fuzz.out_of_time = True
            fuzz.notes.append(f"out of time before {len(plan) - index} of {len(plan)} stateless runs")
            return
        # each remaining run gets its share of the time left (and what earlier ones did not
        # use), counted from its first request
        fuzz.deadline = deadline
        fuzz.share, fuzz.run_deadline, fuzz.cut = (deadline - now) / (len(plan) - index), None, None
        label = f"{method.upper()} {path}"
        key = (fuzz.base_url, digest, label, mode, n, run_seed)
        if key in _DRAWN:
            try:
                for case in _DRAWN[key]:
                    response = fuzz.call(case, mode)
                    if response is not None:
                        fuzz.judge(label, response, mode)
            except _Stop:
                if fuzz.cut:
                    fuzz.notes.append(f"{fuzz.cut}: cut short at the end of its share of the time")
            if fuzz.transport is not None:
                return
            continue
        try:
            operation = schema[path][method]
            strategy = operation.as_strategy(generation_mode=GenerationMode(mode), headers=dict(fuzz.headers))
        except (SchemathesisError, LookupError) as exc:
            fuzz.notes.append(f"{label}: no {mode} examples can be generated ({type(exc).__name__}: "
                              f"{_short(str(exc), 160)})")
            continue
        drawn: list[Any] = []
        complete = True

        @seed(run_seed)
        @settings(max_examples=n, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate],
                  report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
        @given(case=strategy)
        def run(case: Any) -> None:
            response = fuzz.call(case, mode)
            drawn.append(case)
            if response is not None:
                fuzz.judge(label, response, mode)

        try:
            run()
        except _Stop:
            complete = False
            if fuzz.cut:
                fuzz.notes.append(f"{fuzz.cut}: {len(drawn)} of {n} examples within its share of the time")
        except HypothesisException as exc:
            # Unsatisfiable (no input can be made negative) …: nothing to do with the target
            if type(exc).__name__ != "Unsatisfiable":
                complete = False
                if fuzz.transport is None and not fuzz.out_of_time:
                    fuzz.notes.append(f"{label} ({mode}): Hypothesis stopped: {type(exc).__name__}")
        except SchemathesisError as exc:
            complete = False
            fuzz.notes.append(f"{label} ({mode}): schemathesis cannot generate from the document "
                              f"({type(exc).__name__}: {_short(str(exc), 160)})")
        if fuzz.transport is not None:
            return
        if complete:
            _DRAWN[key] = drawn


def _stateful(fuzz: _Fuzz, schema: Any, labels: list[tuple[str, str]], scenarios: int, deadline: float,
              run_seed: int) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, reject, seed, settings
    from hypothesis.errors import HypothesisException
    from schemathesis import GenerationMode
    from schemathesis.errors import SchemathesisError

    if scenarios <= 0 or time.monotonic() >= deadline:
        return
    fuzz.deadline, fuzz.share, fuzz.run_deadline = deadline, None, None
    wanted = {(m.upper(), p) for m, p in labels}
    try:
        schema.config.generation.update(modes=[GenerationMode.POSITIVE])
        narrowed = schema.include(lambda ctx: (ctx.operation.method.upper(), ctx.operation.path) in wanted)
        base = narrowed.as_state_machine()
    except SchemathesisError as exc:
        fuzz.notes.append(f"stateful: not run ({type(exc).__name__}: {_short(str(exc), 160)})")
        return

    class Workflow(base):  # type: ignore[misc, valid-type]
        def call(self, case: Any, **kwargs: Any) -> Any:
            response = fuzz.call(case, "stateful")
            if response is None:  # an example that cannot be sent: not this scenario
                reject()
            return response

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {}

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            fuzz.judge(case.operation.label, response, "stateful")

    seed(run_seed)(Workflow)  # hypothesis carries a state machine's @seed into its run
    try:
        Workflow.run(settings=settings(max_examples=scenarios, stateful_step_count=6,
                                       database=None, deadline=None, suppress_health_check=list(HealthCheck),
                                       phases=[Phase.generate], report_multiple_bugs=False,
                                       verbosity=Verbosity.quiet, print_blob=False))
    except _Stop:
        pass
    except HypothesisException as exc:
        # Flaky generation: the store changed under the links between runs (it is shared)
        if fuzz.transport is None and not fuzz.out_of_time:
            fuzz.notes.append(f"stateful: Hypothesis stopped: {type(exc).__name__}")
    except SchemathesisError as exc:
        fuzz.notes.append(f"stateful: schemathesis stopped ({type(exc).__name__}: {_short(str(exc), 160)})")
    except BaseExceptionGroup as group:  # a FlakyFailure wrapping our _Stop
        if not group.subgroup(_Stop):
            raise


@check("ump/l1/openapi-fuzz", spec="ump",
       requirements=("ump/error-codes", "ump/error-envelope", "ump/messages-json-objects", "ump/http-error-status"),
       bindings=HTTP,
       title="schemathesis over the target's OpenAPI: no 5xx, every answer as documented, errors in the envelope")
def openapi_fuzz(ctx: CheckContext) -> None:
    """Fuzz the target through its own `/openapi.json` (OpenAPI 3.x) with schemathesis: every UMP
    operation it documents (routes under /ump/ and /.well-known/ump.json, not the SSE stream),
    stateless with positive and negative examples, then stateful through the document's links
    (remember → get/revise/forget …). Requests go as owner-a (a fresh capability token) with
    `UMP-Version` of the subject; generation pins records' owner and actor to owner-a so that
    remember mostly succeeds; answers are judged against the document as served. Seeded by
    `--seed` (default 0: the same examples every run; recorded in the report so `memconform
    replay REPORT ump/l1/openapi-fuzz` re-runs them; the second version of a target replays the first's), no
    example database, Hypothesis' caches in the user's cache directory, never in the working
    directory. No document (404), one that is not OpenAPI 3.x, or one schemathesis cannot read:
    skipped with the reason.

    Judged: a 5xx (ump/error-codes), a success that is not a JSON object or does not match the
    documented schema (ump/messages-json-objects, see SUCCESS_SCHEMA_REQUIREMENT), an error without the envelope or not matching
    the documented error schema (ump/error-envelope), a code outside §3.7 or a stack trace
    (ump/error-codes), a code under another status or an envelope under a 2xx
    (ump/http-error-status, SHOULD). One finding per operation and kind, with a count and up to
    three examples.

    Effort: `--effort` (suite/effort.py: quick 6, default 12, thorough 200 examples per operation,
    half positive, half negative, and as many stateful scenarios of up to 6 calls), or
    `MEMCONFORM_FUZZ_EXAMPLES`; 0 switches the check off. `MEMCONFORM_FUZZ_SECONDS` (quick 5,
    default 8, thorough 120) bounds the whole run: what is left when it is over is
    not sent. Every request waits at most the driver's timeout (10 s); a target that stops
    answering ends the check as a target error."""
    ctx.credit_only_observed()  # a rule no answer was compared with (no error seen, say) is not judged
    examples, seconds = fuzz_budget()
    if examples == 0 or seconds == 0:
        raise NotApplicable(f"fuzzing is switched off ({ENV_EXAMPLES}={examples}, {ENV_SECONDS}={seconds:g})")
    base_url = getattr(ctx.client, "base_url", None)
    if not isinstance(base_url, str):
        raise NotApplicable("the driver gives no base URL to fuzz")
    started = time.monotonic()
    doc = _openapi_document(ctx)
    labels, left_out = _operations(doc)
    if not labels:
        raise NotApplicable(f"the target's OpenAPI document lists no UMP operation to fuzz "
                            f"(left out: {', '.join(left_out) or 'nothing'})")

    import requests
    import schemathesis
    from schemathesis.errors import SchemathesisError

    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()
    with quiet_hypothesis():
        try:
            judge_schema, gen_schema = _loaded(base_url, doc, digest)
        except SchemathesisError as exc:
            raise NotApplicable(f"the target's OpenAPI document cannot be used: {type(exc).__name__}: "
                                f"{_short(str(exc), 300)}") from None
        for schema in (judge_schema, gen_schema):
            schema.config.update(base_url=base_url)
            schema.config.generation.update(with_security_parameters=False)
        judge_ops: dict[str, Any] = {}
        for method, path in labels:
            try:
                judge_ops[f"{method.upper()} {path}"] = judge_schema[path][method]
            except (SchemathesisError, LookupError):
                pass
        timeout = min(float(getattr(ctx.client, "timeout", 10.0) or 10.0), 10.0)
        headers = {"Authorization": f"Bearer {_owner_token()}", "UMP-Version": ctx.version,
                   "Accept": "application/json"}
        deadline = started + seconds
        fuzz = _Fuzz(ctx, base_url, headers, timeout, judge_ops, deadline)
        with requests.Session() as session:
            fuzz.session = session
            run_seed = ctx.property_seed()
            _stateless(fuzz, gen_schema, digest, labels, examples, started + seconds * 0.75, run_seed)
            if fuzz.transport is None:
                _stateful(fuzz, gen_schema, labels, examples, deadline, run_seed)
    for note in fuzz.notes:
        log.info("openapi-fuzz %s (UMP %s): %s", base_url, ctx.version, note)
    log.info("openapi-fuzz %s (UMP %s): %d requests judged in %.1f s: %s", base_url, ctx.version,
             sum(fuzz.sent.values()), time.monotonic() - started, json.dumps(fuzz.sent))
    fuzz.report()
    if fuzz.transport is not None:
        raise TargetError(f"the target stopped answering while fuzzed: {fuzz.transport}")
    if not fuzz.sent:
        why = "; ".join(fuzz.notes[:5]) or "no example could be generated"
        raise NotApplicable(f"no fuzzed request was answered: {why}")


# =============================================================================================
# ump/l1/bad-input (HTTP) and ump/l1/bad-arguments (MCP): one case per probe
# =============================================================================================

#: What every bad-input probe judges; the remember probes add ump/remember-invalid-record, the
#: unknown route and method probes trade ump/error-envelope for ump/unsupported-operation.
_ANSWER = ("ump/error-envelope", "ump/error-codes", "ump/http-error-status", "ump/messages-json-objects",
           "ump/remember-persists")
_ROUTE = ("ump/unsupported-operation", "ump/error-codes", "ump/http-error-status", "ump/messages-json-objects",
          "ump/remember-persists")
_REMEMBER = (*_ANSWER, "ump/remember-invalid-record")
_MCP_ANSWER = ("ump/mcp-errors", "ump/mcp-errors-iserror", "ump/error-codes", "ump/remember-persists")
_MCP_REMEMBER = (*_MCP_ANSWER, "ump/remember-invalid-record")

_OVERSIZE = (1 << 20) + (64 << 10)  # 1 MiB + 64 KiB
_DEPTH = 10_000


def _record(word: str, **members: Any) -> dict[str, Any]:
    rec = sample_record("semantic", text=f"{word} a record sent by a bad-input probe")
    rec.update(members)
    return rec


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class _Probe:
    """One deliberately bad request.

    `body(word)` builds the request body around a fresh marker word; `stores` names a probe
    whose body carries that word in a record (so the store can be searched for it afterwards);
    `invalid_record` a remember of something that is no record (refused with invalid_record, ump/
    remember-invalid-record); `must_fail` a request no server can honour (a success is a finding);
    `route` an unknown route or method (a plain 404/405 is a SHOULD matter)."""

    id: str
    what: str
    method: str
    path: str
    body: Callable[[str], bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stores: bool = False
    invalid_record: bool = False
    must_fail: bool = True
    route: bool = False
    level: str = "L1"

    @property
    def requirements(self) -> tuple[str, ...]:
        if self.route:
            return _ROUTE
        return _REMEMBER if self.stores or self.invalid_record else _ANSWER


_JSON = {"Content-Type": "application/json"}

HTTP_PROBES = (
    _Probe("malformed-json-remember", "a remember whose body is cut off in the middle (not JSON)",
           "POST", "/ump/remember",
           lambda w: b'{"record": {"kind": "semantic", "body": {"text": "' + w.encode() + b' cut off',
           _JSON, stores=True, invalid_record=True),
    _Probe("malformed-json-recall", "a recall whose body is not JSON (a trailing comma, a single quote)",
           "POST", "/ump/recall", lambda w: b"{'query': '" + w.encode() + b"',}", _JSON),
    _Probe("empty-body", "a remember with an empty body", "POST", "/ump/remember", lambda w: b"", _JSON,
           invalid_record=True, stores=False),
    _Probe("array-body", "a remember whose body is a JSON array holding a record", "POST", "/ump/remember",
           lambda w: _json([{"record": _record(w)}]), _JSON, stores=True, invalid_record=True),
    _Probe("string-body", "a recall whose body is a JSON string", "POST", "/ump/recall",
           lambda w: _json(f"{w} query"), _JSON),
    _Probe("record-number", "a remember whose record is the number 5", "POST", "/ump/remember",
           lambda w: _json({"record": 5}), _JSON, invalid_record=True),
    _Probe("kind-number", "a remember of a record whose kind is the number 5", "POST", "/ump/remember",
           lambda w: _json({"record": _record(w, kind=5)}), _JSON, stores=True, invalid_record=True),
    _Probe("id-object", "a remember of a record whose id is an object", "POST", "/ump/remember",
           lambda w: _json({"record": _record(w, id={})}), _JSON, stores=True, invalid_record=True),
    # a lone surrogate is no Unicode text: I-JSON (RFC 7493 §2.1), which RFC 8785 canonicalizes, excludes it,
    # so no content hash covers it (round 20: stored, then every read of the owner answered 500)
    _Probe("lone-surrogate-text", "a remember of a record whose body.text holds a lone surrogate (\\ud800)",
           "POST", "/ump/remember",
           lambda w: _json({"record": _record(w)}).replace(b"a record sent by", b"a record \\ud800 sent by"),
           _JSON, stores=True, invalid_record=True),
    # RFC 8259 §8.1: JSON between systems is UTF-8; a byte no UTF-8 text holds must not crash the decoder
    # (round 28: a body decoded without handling UnicodeDecodeError answered 500)
    _Probe("non-utf8-recall", "a recall whose body holds the byte 0xFF, which no UTF-8 text holds", "POST",
           "/ump/recall", lambda w: b'{"query": "' + w.encode() + b' \xff"}', _JSON, must_fail=False),
    # round 28: a valid_at without an offset parsed to a naive time, whose comparison crashed (500)
    _Probe("valid-at-no-offset", "a recall whose filter.valid_at is a date-time without an offset", "POST",
           "/ump/recall", lambda w: _json({"query": w, "filter": {"valid_at": "2026-01-01T00:00:00"}}), _JSON,
           must_fail=False),
    _Probe("limit-string", "a recall whose limit is the string \"ten\"", "POST", "/ump/recall",
           lambda w: _json({"query": w, "limit": "ten"}), _JSON, must_fail=False),
    _Probe("query-object", "a recall whose query is an object", "POST", "/ump/recall",
           lambda w: _json({"query": {"text": w}}), _JSON, must_fail=False),
    _Probe("forget-id-object", "a forget whose id is an object", "POST", "/ump/forget",
           lambda w: _json({"id": {}, "reason": f"{w} probe"}), _JSON, level="L2"),
    _Probe("deeply-nested", f"a recall whose filter is an array nested {_DEPTH} deep", "POST", "/ump/recall",
           lambda w: b'{"query": "' + w.encode() + b'", "filter": ' + b"[" * _DEPTH + b"]" * _DEPTH + b"}",
           _JSON, must_fail=False),
    _Probe("oversize-body", "a remember of a record whose body.text makes the request larger than 1 MiB",
           "POST", "/ump/remember",
           lambda w: _json({"record": _record(w, body={"text": f"{w} " + "x" * _OVERSIZE})}), _JSON,
           stores=True, must_fail=False),
    _Probe("unknown-route", "GET /ump/nope, a route UMP does not have", "GET", "/ump/nope", route=True),
    _Probe("wrong-method-recall", "DELETE /ump/recall (recall is POST)", "DELETE", "/ump/recall", route=True),
    _Probe("wrong-method-remember", "GET /ump/remember (remember is POST)", "GET", "/ump/remember", route=True),
    _Probe("bad-percent-encoding", "GET /ump/memory/%ZZ, an id whose percent-encoding is malformed", "GET",
           "/ump/memory/%ZZ"),
    _Probe("garbage-authorization", "a recall with `Authorization: Bearer` and a token that is garbage",
           "POST", "/ump/recall", lambda w: _json({"query": w}),
           {**_JSON, "Authorization": "Bearer !!not-a-token%%"}, must_fail=False),
)


def _probe_cases(subject: Any) -> list[Case]:
    return [Case(p.id, payload=p, requirements=p.requirements) for p in HTTP_PROBES]


@dataclass
class _Sentinel:
    """A record remembered before a probe, to see that the probe left the store alone."""

    id: str | None
    text: str | None
    why_not: str | None = None


#: Refusals of who asks: a server may ask the token before it reads the body (§3 orders neither).
_AUTHORIZATION = ("forbidden_scope", "unauthorized")


def _parsed(body: Any) -> Any:
    try:
        return json.loads(body) if isinstance(body, (bytes, str)) else body
    except ValueError:
        return None


def _granted(request: Any) -> bool:
    """Whether the record in a remember request names owner-a, whose token the probes carry: only
    then must the refusal be about the record rather than about who asks."""
    rec = request.get("record", request) if isinstance(request, dict) else None
    scope = rec.get("scope") if isinstance(rec, dict) else None
    return isinstance(scope, dict) and scope.get("owner") == did(OWNER_A)


def _sentinel(ctx: CheckContext) -> _Sentinel:
    rec = sample_record("semantic", text=f"{marker('sen')} a sentinel the bad-input probe must leave alone")
    reply = ctx.client.remember(rec, auth=Auth.as_owner(OWNER_A))
    rid = reply.body.get("id") if reply.ok and isinstance(reply.body, dict) else None
    if not isinstance(rid, str) or not rid:
        return _Sentinel(None, None, f"the sentinel remember did not succeed ({reply.describe()})")
    return _Sentinel(rid, rec["body"]["text"])


def _again(call: Callable[[], Any]) -> Any:
    """A request after a probe, sent once more when the first attempt found no answer: a server
    that answered the probe with a crash may close the kept-alive connection under the next
    request (that race is not the finding; a server that no longer answers at all is)."""
    try:
        return call()
    except TargetError:
        time.sleep(0.2)
        return call()


def _check_sentinel(ctx: CheckContext, sentinel: _Sentinel, what: str, sent: Any) -> None:
    if sentinel.id is None:
        return  # no sentinel: ump/remember-persists is not judged
    ctx.observed("ump/remember-persists")
    try:
        reply = _again(lambda: ctx.client.get(sentinel.id, auth=Auth.as_owner(OWNER_A)))
    except TargetError as exc:
        ctx.violation("ump/remember-persists", f"after {what}, the target no longer answers (get of the sentinel "
                      f"record {sentinel.id} remembered just before: {exc}); a refused request leaves the store "
                      f"and the server as they were; {_spec('ump/remember-persists')}", sent=sent)
        return
    rec = reply.body.get("record") if reply.ok and isinstance(reply.body, dict) else None
    text = rec.get("body", {}).get("text") if isinstance(rec, dict) and isinstance(rec.get("body"), dict) else None
    if text != sentinel.text:
        ctx.violation("ump/remember-persists", f"after {what}, get of the record remembered just before it "
                      f"({sentinel.id}) answered {reply.describe()}: the store lost or changed it; "
                      f"{_spec('ump/remember-persists')}", sent=sent, received=reply.body or reply.raw,
                      where=sentinel.id)


def _stored_with(ctx: CheckContext, word: str) -> dict[str, Any] | None:
    """A record holding `word` that the store serves to owner-a, if any."""
    found = _again(lambda: ctx.client.recall({"query": word, "scope": {"owner": did(OWNER_A)}},
                                             auth=Auth.as_owner(OWNER_A)))
    for res in results_of(found):
        rec = res.get("record")
        body = rec.get("body") if isinstance(rec, dict) else None
        if isinstance(body, dict) and isinstance(body.get("text"), str) and word in body["text"]:
            return rec
    return None


def _judge_refusal(ctx: CheckContext, probe_what: str, reply: Reply, *, route: bool, sent: Any) -> str | None:
    """Judge an HTTP answer that is not a success. Returns its §3.7 code when it has one."""
    status = reply.status or 0
    text = reply.raw if reply.raw is not None else json.dumps(reply.body, ensure_ascii=False)
    received = reply.body if reply.body is not None else reply.raw
    trace = _traceback_in(text, reply.body)
    if status >= 500:
        ctx.violation("ump/error-codes", f"{probe_what} was answered HTTP {status}"
                      f"{' with a stack trace (' + trace + ')' if trace else ''}: a failure the server did not "
                      f"foresee, for which §3.7 has no code; bad input is refused with a §3.7 code (invalid_record "
                      f"for a body that is no valid request); {_spec('ump/error-codes')}",
                      sent=sent, received=received)
        return None
    if trace:
        ctx.violation("ump/error-codes", f"{probe_what} was answered HTTP {status} with a stack trace in the body "
                      f"({trace}): an exception escaped the handler, an unexpected failure whatever the code says; "
                      f"{_spec('ump/error-codes')}", sent=sent, received=received)
    body = reply.body
    err = body.get("error") if isinstance(body, dict) else None
    envelope = isinstance(err, dict) and isinstance(err.get("code"), str) and isinstance(err.get("message"), str)
    if not envelope:
        shape = ("not JSON" if body is None else f"the JSON {_short(body, 120)}")
        if route:
            ctx.violation("ump/unsupported-operation", f"{probe_what} was answered HTTP {status} with {shape}, not "
                          f"the envelope {{\"error\": {{\"code\": \"unsupported\" (or not_found), \"message\"}}}}; "
                          f"{_spec('ump/unsupported-operation')}", sent=sent, received=received)
        else:
            ctx.violation("ump/error-envelope", f"{probe_what} was answered HTTP {status} with {shape}, not the "
                          f"envelope {{\"error\": {{\"code\", \"message\"}}}}; {_spec('ump/error-envelope')}",
                          sent=sent, received=received)
        return None
    code = err["code"]
    if code not in ERROR_CODES:
        ctx.violation("ump/error-codes", f"{probe_what} was refused with code {code!r} (HTTP {status}), which is not "
                      f"one of §3.7's {', '.join(ERROR_CODES)}; {_spec('ump/error-codes')}",
                      sent=sent, received=received)
        return None
    if route and code not in ("unsupported", "not_found"):
        ctx.violation("ump/unsupported-operation", f"{probe_what} was refused with {code}; what the server does not "
                      f"offer is refused with unsupported (or, for a route, not_found); "
                      f"{_spec('ump/unsupported-operation')}", sent=sent, received=received)
    wanted = STATUS_FOR_CODE.get(code)
    if status < 400 or (wanted is not None and status != wanted):
        ctx.violation("ump/http-error-status", f"{probe_what} was refused with {code} under HTTP {status}; "
                      f"{code} goes with {wanted or 'a 4xx status'}; {_spec('ump/http-error-status')}",
                      sent=sent, received=received)
    return code


@check("ump/l1/bad-input", spec="ump", requirements=(*_REMEMBER, "ump/unsupported-operation"), bindings=HTTP,
       title="bad input (malformed JSON, wrong types, oversize, unknown routes …) gets a §3.7 error, never a 500, "
             "and leaves the store alone", cases=_probe_cases)
def bad_input(ctx: CheckContext) -> None:
    """One deliberately bad HTTP request per case, as owner-a (a valid token) with the subject's
    UMP-Version. A record is remembered first (the sentinel) and must be served unchanged after
    the probe (ump/remember-persists); a probe carrying a record with a fresh marker word must not
    leave it in the store (ump/remember-invalid-record).

    The answer must not be a 5xx nor carry a stack trace (ump/error-codes), must be the envelope
    with a §3.7 code (ump/error-envelope, ump/error-codes; for an unknown route or method a plain
    404/405 is only a SHOULD matter, ump/unsupported-operation), under the status of its code
    (ump/http-error-status, SHOULD). A remember of something that is no record is refused with
    invalid_record. A request some server may honour (a recall whose limit is "ten" or whose
    query is an object, an oversize record, a garbage token on a server without tokens) may
    succeed: then its answer must be a JSON object, and the refusal rules are not judged."""
    ctx.credit_only_observed()
    probe: _Probe = ctx.payload
    if probe.level != "L1" and not _level_at_least(ctx, probe.level):
        raise NotApplicable(f"{probe.what}: the target claims a level below {probe.level}")
    word = marker("bad")
    body = probe.body(word) if probe.body is not None else None
    headers = {"UMP-Version": ctx.version, **probe.headers}
    sentinel = _sentinel(ctx)
    reply = ctx.client.call_raw(probe.method, probe.path, body, headers, auth=Auth.as_owner(OWNER_A))
    what = probe.what
    sent = f"{probe.method} {probe.path}" + (f"\n{_short(body, 600)}" if body else "") + \
           "".join(f"\n{k}: {v}" for k, v in probe.headers.items() if k.lower() != "content-type")
    status = reply.status or 0
    if 200 <= status < 300:
        # a success is judged as an answer (a JSON object, no error under a 2xx), not as a refusal
        ctx.observed("ump/messages-json-objects", "ump/http-error-status")
        if probe.must_fail and probe.invalid_record and isinstance(reply.body, dict) \
                and reply.body.get("result") == "rejected":
            ctx.observed("ump/remember-invalid-record")
        if not isinstance(reply.body, dict):
            ctx.violation("ump/messages-json-objects", f"{what} was answered HTTP {status} with "
                          f"{'non-JSON' if reply.body is None else 'the JSON ' + _short(reply.body, 120)}, not a "
                          f"JSON object; {_spec('ump/messages-json-objects')}", sent=sent,
                          received=reply.body if reply.body is not None else reply.raw)
        elif "error" in reply.body:
            ctx.violation("ump/http-error-status", f"{what} was answered with an error envelope under HTTP "
                          f"{status}: an error is never a 2xx; {_spec('ump/http-error-status')}", sent=sent,
                          received=reply.body)
        elif probe.must_fail:
            if probe.invalid_record and reply.body.get("result") == "rejected":
                pass  # §3.3's own refusal, {result: "rejected"}: as good as the envelope
            elif probe.invalid_record:
                ctx.violation("ump/remember-invalid-record", f"{what} was accepted ({reply.describe()}); what is no "
                              f"record is refused with invalid_record and not stored; "
                              f"{_spec('ump/remember-invalid-record')}", sent=sent, received=reply.body)
            elif probe.route:
                ctx.violation("ump/unsupported-operation", f"{what} was answered as a success "
                              f"({reply.describe()}); {_spec('ump/unsupported-operation')}", sent=sent,
                              received=reply.body)
            else:
                ctx.violation("ump/error-envelope", f"{what} was answered as a success ({reply.describe()}): a "
                              f"request that cannot be read cannot succeed; it fails with the envelope; "
                              f"{_spec('ump/error-envelope')}", sent=sent, received=reply.body)
    elif 300 <= status < 400:
        ctx.violation("ump/error-envelope" if not probe.route else "ump/unsupported-operation",
                      f"{what} was answered with a redirect (HTTP {status}), not an error; "
                      f"{_spec('ump/error-envelope' if not probe.route else 'ump/unsupported-operation')}",
                      sent=sent, received=reply.body if reply.body is not None else reply.raw)
    else:
        code = _judge_refusal(ctx, what, reply, route=probe.route, sent=sent)
        if code is not None:  # an envelope with a §3.7 code, under the status judged
            ctx.observed("ump/error-envelope", "ump/unsupported-operation", "ump/error-codes", "ump/http-error-status",
                         "ump/messages-json-objects")
            if probe.invalid_record:
                ctx.observed("ump/remember-invalid-record")
        if probe.invalid_record and code is not None and code != "invalid_record" \
                and not (code in _AUTHORIZATION and not _granted(_parsed(body))):
            ctx.violation("ump/remember-invalid-record", f"{what} was refused with {code}; the §3.7 code for what is "
                          f"no valid record is invalid_record; {_spec('ump/remember-invalid-record')}", sent=sent,
                          received=reply.body)
    rejected = 200 <= status < 300 and isinstance(reply.body, dict) and reply.body.get("result") == "rejected"
    if probe.stores and not (200 <= status < 300 and not probe.must_fail):
        ctx.observed("ump/remember-invalid-record")  # the store is searched for the probe's marker
        left = _stored_with(ctx, word)
        if left is not None and (not (200 <= status < 300) or rejected):
            ctx.violation("ump/remember-invalid-record", f"{what} was refused (HTTP {status}), yet the store now "
                          f"serves a record holding its marker {word!r} ({left.get('id')}): a refused record is not "
                          f"stored; {_spec('ump/remember-invalid-record')}", sent=sent, received=left)
    _check_sentinel(ctx, sentinel, what, sent)


# -- MCP ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _ToolProbe:
    """One ump.* tool call with wrong or missing arguments (always a JSON object: the MCP
    protocol itself allows nothing else there)."""

    id: str
    what: str
    operation: str
    arguments: Callable[[str], Any]
    stores: bool = False
    invalid_record: bool = False
    must_fail: bool = True
    level: str = "L1"

    @property
    def requirements(self) -> tuple[str, ...]:
        return _MCP_REMEMBER if self.operation == "remember" or self.stores or self.invalid_record else _MCP_ANSWER


MCP_PROBES = (
    _ToolProbe("remember-no-record", "ump.remember without arguments", "remember", lambda w: {},
               invalid_record=True),
    _ToolProbe("remember-record-number", "ump.remember whose record is the number 5", "remember",
               lambda w: {"record": 5}, invalid_record=True),
    _ToolProbe("remember-record-array", "ump.remember whose record is an array holding a record", "remember",
               lambda w: {"record": [_record(w)]}, stores=True, invalid_record=True),
    _ToolProbe("remember-kind-number", "ump.remember of a record whose kind is the number 5", "remember",
               lambda w: {"record": _record(w, kind=5)}, stores=True, invalid_record=True),
    _ToolProbe("remember-id-object", "ump.remember of a record whose id is an object", "remember",
               lambda w: {"record": _record(w, id={})}, stores=True, invalid_record=True),
    _ToolProbe("recall-no-arguments", "ump.recall without arguments", "recall", lambda w: {}, must_fail=False),
    _ToolProbe("get-id-object", "ump.get whose id is an object", "get", lambda w: {"id": {}}),
    _ToolProbe("get-id-number", "ump.get whose id is the number 5", "get", lambda w: {"id": 5}),
    _ToolProbe("recall-query-number", "ump.recall whose query is the number 5", "recall",
               lambda w: {"query": 5}, must_fail=False),
    _ToolProbe("recall-limit-string", "ump.recall whose limit is the string \"ten\"", "recall",
               lambda w: {"query": w, "limit": "ten"}, must_fail=False),
    _ToolProbe("recall-filter-string", "ump.recall whose filter is a string", "recall",
               lambda w: {"query": w, "filter": "kind=semantic"}, must_fail=False),
    _ToolProbe("forget-id-object", "ump.forget whose id is an object", "forget",
               lambda w: {"id": {}, "reason": f"{w} probe"}, level="L2"),
)


def _tool_cases(subject: Any) -> list[Case]:
    return [Case(p.id, payload=p, requirements=p.requirements) for p in MCP_PROBES]


def _mcp_code(reply: Reply) -> str | None:
    """The §3.7 code an MCP error carries: the driver reads structuredContent.error.code, else the
    "<code>: …" opening of the message or text (the public implementation's form)."""
    if reply.error_code:
        return reply.error_code
    body = reply.body if isinstance(reply.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else {}
    code = err.get("code")
    return code if isinstance(code, str) else None


@check("ump/l1/bad-arguments", spec="ump", requirements=_MCP_REMEMBER, bindings=MCP,
       title="ump.* tools called with wrong or missing arguments answer isError with a §3.7 code, and leave "
             "the store alone", cases=_tool_cases)
def bad_arguments(ctx: CheckContext) -> None:
    """One ump.* tool call per case with arguments of the wrong type or missing, as owner-a. The
    answer must be a tool result with isError from which a §3.7 code can be read (ump/mcp-errors;
    a JSON-RPC error instead is what §4.1 and MCP 2025-11-25 leave to unknown tools), the code one
    of §3.7's, never `internal` nor a stack trace (ump/error-codes). A remember of something that
    is no record is refused with invalid_record and stores nothing (ump/remember-invalid-record);
    a record remembered before the call is still served unchanged after it
    (ump/remember-persists). A recall some server may honour (limit "ten", query 5) may succeed:
    then the error rules are not judged."""
    ctx.credit_only_observed()
    probe: _ToolProbe = ctx.payload
    if probe.operation not in ctx.client.offered():
        raise NotApplicable(f"the server lists no ump.{probe.operation} tool")
    if probe.level != "L1" and not _level_at_least(ctx, probe.level):
        raise NotApplicable(f"{probe.what}: the target claims a level below {probe.level}")
    word = marker("bad")
    arguments = probe.arguments(word)
    sentinel = _sentinel(ctx)
    owner = Auth.as_owner(OWNER_A)
    if probe.operation == "remember":
        reply = ctx.client.remember(arguments, auth=owner, wrap=False)
    elif probe.operation == "get":  # the driver sends {"id": <the value given>}, whatever its type
        reply = ctx.client.get(arguments["id"], auth=owner)
    else:
        reply = getattr(ctx.client, probe.operation)(arguments, auth=owner)
    what = probe.what
    sent = {"tool": f"ump.{probe.operation}", "arguments": arguments}
    received = reply.body if reply.body is not None else reply.raw
    remarks = "; ".join(reply.wire)
    failed = reply.error_code is not None or "isError" in remarks or "JSON-RPC error" in remarks
    code = _mcp_code(reply) if failed else None
    if not failed:
        if probe.operation == "remember" and isinstance(reply.body, dict) and reply.body.get("result") == "rejected":
            failed = True  # §3.3's own refusal, {result: "rejected"}: as good as an error
            if probe.invalid_record:
                ctx.observed("ump/remember-invalid-record")
        elif probe.must_fail and probe.invalid_record:
            ctx.violation("ump/remember-invalid-record", f"{what} was accepted ({reply.describe()}); what is no "
                          f"record is refused with invalid_record and not stored; "
                          f"{_spec('ump/remember-invalid-record')}", sent=sent, received=received)
    else:
        text = "\n".join(t for t in (reply.raw, reply.error_message) if t)
        trace = _traceback_in(text, reply.body)
        ctx.observed("ump/mcp-errors-iserror")  # how the failure came back is judged below
        if code is not None:
            ctx.observed("ump/mcp-errors", "ump/error-codes")
            if probe.invalid_record:
                ctx.observed("ump/remember-invalid-record")
        if "JSON-RPC error" in remarks:
            ctx.violation("ump/mcp-errors", f"{what} failed as a JSON-RPC error, not as tool output carrying the §3 "
                          f"envelope ({remarks}): {reply.describe()}; {_spec('ump/mcp-errors')}", sent=sent,
                          received=received)
        elif code is None:
            ctx.violation("ump/mcp-errors", f"{what} failed with {reply.describe()}: no §3.7 code can be read from "
                          f"structuredContent.error.code or a \"<code>: …\" message; {_spec('ump/mcp-errors')}",
                          sent=sent, received=received)
        if "without isError" in remarks or "protocol error" in remarks:  # readings the text allows
            ctx.violation("ump/mcp-errors-iserror", f"{what} failed as {remarks}, not as a tool result with isError: "
                          f"true: {reply.describe()}; {_spec('ump/mcp-errors-iserror')}", sent=sent, received=received)
        if code == "internal" or trace:
            how = ", ".join(x for x in ("code internal" if code == "internal" else "",
                                        f"a stack trace: {trace}" if trace else "") if x)
            ctx.violation("ump/error-codes", f"{what} failed unexpectedly ({how}): bad arguments are refused with "
                          f"a §3.7 code (invalid_record); {_spec('ump/error-codes')}", sent=sent, received=received)
        elif code is not None and code not in ERROR_CODES:
            ctx.violation("ump/error-codes", f"{what} failed with code {code!r}, which is not one of §3.7's "
                          f"{', '.join(ERROR_CODES)}; {_spec('ump/error-codes')}", sent=sent, received=received)
        elif probe.invalid_record and code is not None and code != "invalid_record" \
                and not (code in _AUTHORIZATION and not _granted(arguments)):
            ctx.violation("ump/remember-invalid-record", f"{what} was refused with {code}; the §3.7 code for what is "
                          f"no valid record is invalid_record; {_spec('ump/remember-invalid-record')}", sent=sent,
                          received=received)
    if probe.stores:
        ctx.observed("ump/remember-invalid-record")  # the store is searched for the call's marker
        left = _stored_with(ctx, word)
        if left is not None:
            ctx.violation("ump/remember-invalid-record", f"{what} {'was refused' if failed else 'answered'} "
                          f"({reply.describe()}), and the store now serves a record holding its marker {word!r} "
                          f"({left.get('id')}): a refused record is not stored; "
                          f"{_spec('ump/remember-invalid-record')}", sent=sent, received=left)
    _check_sentinel(ctx, sentinel, what, sent)
