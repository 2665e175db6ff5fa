"""Absence is never a pass (issue 12, item 3; issue 13, OMF): every check runs against targets that
answer well and hold nothing (tests/harness/miniatures/empty_target.py), and none may pass unless
what it requires is really met by such a target, shown by something the check observed.

* UMP over HTTP and MCP: capabilities as the reference says them; remember answers "created" and keeps
  nothing, so get is not_found, recall finds nothing and a subscription stays silent;
* UPP over JSON-RPC (HTTP and stdio): every method answers a valid empty result;
* OMF over HTTP and as a command line (a descriptor's [omf.cli]): imports validate and import
  nothing, exports are valid and empty; and a plain OMF producer whose export shows no
  extensions.memd (no chunk ids, lifecycle or edges);
* a JSON-RPC stdio child that answers nothing at all (silence is no "no reply").

A check that passed and is not in the allow-list below passed on nothing: it must skip
(NotApplicable) or be inconclusive with the reason, or charge the requirement when the spec
demands the thing be there. Each allow-list entry says what the check observed that satisfies its
requirement on an empty target.

The targets answer at once, and the run's timeout only bounds a broken one: no verdict here
depends on how long anything took.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import selectors
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from memconform.suite.registry import all_checks

from .helpers import run_suite
from .miniatures import STARTUP, _stop_group, reaper, script, stdio_command  # noqa: F401

#: The timeout of the runs against the empty server (loopback, answering at once): the subscribe checks
#: that judge events wait it out for one an empty store never publishes (6 of them at 10 s were 60 s of
#: this file).
EMPTY_WAIT = 3

#: Check id (or `id[case]` as an fnmatch pattern) → what it observed that satisfies its requirement
#: on a target that holds nothing.
ALLOWED = {
    # -- UMP: answers the target gave --------------------------------------------------------------
    "ump/l1/capabilities": "observed the capabilities document, well-formed",
    "ump/l1/capabilities-no-0.1-runtime": "observed the answer to a client announcing 0.1",
    "ump/l1/http-route-capabilities": "observed GET /ump/capabilities answer the §3.1 response",
    "ump/l1/mcp-capabilities-open": "observed ump.capabilities answer a call without a token",
    "ump/l1/http-route-recall": "observed POST /ump/recall answer the §3.2 response ({results: []} is one)",
    "ump/l1/http-route-remember": "observed POST /ump/remember answer the §3.3 response and a bare record answered",
    "ump/l1/l1-one-binding": "observed remember, get, recall and capabilities answered on the binding",
    "ump/l1/messages-json-objects": "observed every response body, each a JSON object",
    "ump/l1/error-envelope": "observed the refusals, each in the §3 envelope with a §3.7 code",
    "ump/l1/http-error-status": "observed the refusals' HTTP statuses",
    "ump/l1/unsupported-operation": "observed the refusal of an unlisted UMP-Version",
    "ump/l1/get-not-found": "observed not_found for ids never stored: exactly what an empty store owes",
    "ump/l2/unknown-id-not-found": "observed not_found from revise, forget and feedback of an unknown id",
    "ump/l1/id-minted-form": "observed the ids remember minted, in §6.2's form",
    "ump/l1/id-unique": "observed distinct ids for distinct records answered created",
    "ump/l1/server-accepts-all-kinds": "observed remember accept a record of each kind (kinds-accept-all); with no "
                                       "record read back, \"get returns it with its kind\" is left not judged",
    "ump/l2/integrity-optional-l2": "observed remember accept a record without integrity (MAY)",
    "ump/l1/reject-invalid-record": "observed each invalid record refused with invalid_record",
    "ump/l1/reject-unknown-major": "observed the unknown major version refused",
    "ump/l1/remember-invalid": "observed what is not a record refused with invalid_record",
    "ump/l2/remember-reject-policy": "observed records that fail consent or scope policy refused",
    "ump/l3/remember-reject-bad-signature": "observed tampered records refused with signature_invalid",
    "ump/l3/absurd-token-times": "observed each token with an absurd exp/nbf refused with unauthorized",
    "ump/l3/token-times-beyond-calendar": "observed each token with a time past any calendar refused with unauthorized",
    "ump/l2/redact-required-members": "observed each hostile consent.redact refused at remember (a server that "
                                      "stores them without serving any is inconclusive)",
    "ump/l3/integrity-verify-on-read": "observed records whose integrity fails refused with signature_invalid",
    "ump/l3/rehydrate-verify": "observed the inline records given: the signed one included, the others dropped",
    "ump/l3/http-route-subscribe": "observed GET /ump/subscribe answer 200 text/event-stream",
    "ump/l1/vectors[*/records-invalid/*]": "observed each invalid vector refused with its code (partial records "
                                           "accepted are inconclusive unless read back)",
    "ump/runner13/capabilities": "observed capabilities: 200, ump, five kinds",
    "ump/runner13/remember": "observed remember answer 200 with an id and created",
    "ump/runner13/validation": "observed a record without body refused 400 invalid_record",
    "ump/runner13/discovery": "observed the well-known document with ump and conformance",
    "ump/runner13/capability-tokens": "observed recall without a token refused 401",
    "ump/runner13/subscribe": "observed GET /ump/subscribe answer 200 text/event-stream",
    "ump/l1/mcp-tool-*": "observed the tool listing (the reserved ump.* names, their schemas; ump.capabilities' "
                         "answer)",
    "ump/l1/mcp-errors": "observed the failing tools' results, each with a readable §3.7 code",
    "ump/l1/mcp-text-mirrors-structured": "observed remember's answer: its text block the same JSON as its "
                                          "structuredContent",
    # -- UPP: every method answered, the JSON-RPC wire rules on real exchanges ------------------------
    "upp/l1/info": "observed upp/info's result",
    "upp/l1/info-operations": "observed upp/info list the operations it answers",
    "upp/l1/op-*": "observed the operation answered under its spec name (no -32601)",
    "upp/l2/op-*": "observed the operation answered under its spec name (no -32601)",
    "upp/l3/op-*": "observed the operation answered under its spec name (no -32601)",
    "upp/l1/params-may-be-omitted": "observed calls without params answered",
    "upp/l1/unknown-params-ignored": "observed calls with an unknown member answered as without it",
    "upp/l1/retrieve-unknown-user": "observed [] for a user never written: what the spec asks",
    "upp/l2/get-events-unknown-user": "observed [] for a user never written: what the spec asks",
    "upp/l3/export-unknown-user": "observed an export of 0 events for a user never written: what the spec asks",
    "upp/l2/get-tasks-unknown": "observed the real tasks' statuses and the unknown id left out",
    "upp/l3/import-bad-file": "observed each bad file refused with -32602",
    "upp/l3/import-confined-paths": "observed a package outside the export folder refused, the same one inside taken",
    "upp/l3/import-ontology-mismatch": "observed the foreign ontology refused with -32002",
    "upp/bad-input/missing-params": "observed each call without a required parameter refused with -32602",
    "upp/bad-input/wrong-types": "observed each mistyped parameter refused with -32602",
    "upp/bad-input/params-array": "observed params given as an array refused with -32602",
    "upp/bad-input/non-json": "observed each message that is not JSON answered -32700",
    "upp/bad-input/bad-batch": "observed each bad request of the batch refused",
    "upp/attacks/id-unreadable": "observed each unusable id answered -32600 with id null, and upp/info answered after",
    "upp/attacks/batch-bounded": "observed the 1,000-request batch refused (or its answer's size), and upp/info "
                                 "answered after",
    "omf/attacks/large-document": "observed the preview of 10,000 items answered (counts or a refusal), no crash",
    "upp/attacks/body-bounded": "observed the 2 MiB request answered (refused or served), and upp/info answered after",
    "upp/attacks/unpaired-surrogate": "observed the ingest and the get_events holding an unpaired surrogate answered "
                                      "in UTF-8 JSON, and upp/info answered after each",
    "upp/wire/batch": "observed the batch's responses",
    "upp/wire/batch-empty": "observed the answer to []",
    "upp/wire/batch-notifications": "observed the mixed batch answered without a response to its notification, and "
                                    "no answer to a batch of notifications from a server seen answering upp/info",
    "upp/wire/error-object": "observed the error objects of the sample exchanges",
    "upp/wire/http-content-type": "observed the responses' Content-Type",
    "upp/wire/id-echo": "observed each response echo its request's id",
    "upp/wire/invalid-request": "observed each invalid request answered -32600",
    "upp/wire/jsonrpc-version": "observed jsonrpc 2.0 in every response",
    "upp/wire/method-not-found": "observed -32601 for unknown methods",
    "upp/wire/notification-no-reply": "observed no reply to notifications from a server seen answering upp/info "
                                      "before and after each",
    "upp/wire/parse-error": "observed -32700 for what is not JSON",
    "upp/wire/result-xor-error": "observed result or error, never both, in every response",
    "upp/wire/utf8-json": "observed every response UTF-8 JSON",
    "upp/wire/stdio-line-framing": "observed the stdio framing of every response line",
    "upp/wire/http-chunked-body": "observed upp/info and upp/retrieve POSTed chunked answered as when sent with a "
                                  "Content-Length",
    # -- OMF: refusals and empty documents are what was asked for ----------------------------------------
    "omf/validation/omf-version": "observed each document with a wrong omf refused",
    "omf/validation/bad-input": "observed each malformed document refused",
    "omf/validation/content-not-blank": "observed each document with blank content refused",
    "omf/validation/empty-memories": "observed an empty memories array import as zero counts, and an empty tenant "
                                     "export memories: []: exactly the requirement",
    "omf/fail-closed/string": "observed each trusted document with a non-string status or tier refused",
    "omf/fail-closed/vocabulary": "observed each trusted document with an unknown status or tier refused",
    "omf/fail-closed/ms": "observed each trusted document with a non-integer *_ms field refused",
    "omf/fail-closed/object": "observed each trusted document with a non-object lifecycle refused",
    "omf/preview/fail-closed": "observed each preview of a malformed trusted document fail",
}

#: What a plain OMF producer (no extensions.memd) passes on its content, tags, categories and counts.
PLAIN_OMF_ALLOWED = {
    **{k: v for k, v in ALLOWED.items() if k.startswith("omf/")},
    "omf/fail-closed/null-unset": "observed the items with null lifecycle fields imported and listed",
    "omf/validation/exported-at-not-interpreted": "observed the item imported and listed whatever exported_at",
    "omf/export/exclusions": "observed which rows each export lists, by content",
    "omf/export/order": "observed the rows listed in creation order, by content",
    "omf/export/project-filter": "observed the export for one project list that project's row, by content",
    "omf/export/after-writes": "observed every row listed, by content: after a second import into a project, and "
                               "all of 1,025",
    "omf/preview/fuzzy": "observed the preview's counts of one near-copy equal the import's",
    "omf/import/buckets": "observed the counts and the rows listed, by content",
    "omf/import/include-archived": "observed the counts",
    "omf/import/dedup-scopes": "observed the counts",
    "omf/import/dedup-tenant": "observed the second tenant's counts and the rows it lists, by content",
    "omf/import/fuzzy": "observed the counts",
    "omf/preview/matches-import": "observed the preview's counts and the import's",
    "omf/preview/no-write": "observed the seeded row listed, and the listing unchanged by the preview",
}

#: What only extensions.memd shows: against the plain producer these must never pass.
MEMD_ONLY = ("omf/supersession/replayed", "omf/import/fresh-chunk-id", "omf/fail-closed/self-roundtrip")


#: Inside an allowed pattern, what must still never pass: an invalid vector that only lacks a
#: member the server fills is accepted as a partial record, and passes only once read back complete.
NEVER = ("ump/l1/vectors[*/records-invalid/missing-id]", "ump/l1/vectors[*/records-invalid/missing-ump]",
         "ump/l1/vectors[*/records-invalid/missing-time]", "ump/l1/vectors[*/records-invalid/missing-time-created]",
         "ump/l1/vectors[*/records-invalid/missing-scope-visibility]")


def _split(key: str) -> tuple[str, str | None]:
    """`id[case]` → (id, case); `id` → (id, None)."""
    check, _, case = key.partition("[")
    return check, case[:-1] if case else None


def _matches(key: str, patterns: Any) -> bool:
    check, case = _split(key)
    for pattern in patterns:
        p_check, p_case = _split(pattern)
        if fnmatch.fnmatchcase(check, p_check) and (p_case is None or fnmatch.fnmatchcase(case or "", p_case)):
            return True
    return False


def _passed(report: dict[str, Any]) -> set[str]:
    return {f"{r['check']}[{r['case']}]" if r.get("case") else r["check"]
            for r in report["results"] if r["outcome"] == "passed"}


def _offenders(report: dict[str, Any], allowed: dict[str, str]) -> list[str]:
    return sorted(key for key in _passed(report) if _matches(key, NEVER) or not _matches(key, allowed))


class EmptyTarget:
    """`empty_target.py MODE` as a child in a session of its own; `url` once it listens."""

    def __init__(self, mode: str):
        self.proc = subprocess.Popen([sys.executable, script("empty_target"), mode], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            ready = sel.select(STARTUP)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"the empty target ({mode}) did not start: {line!r}")
        self.url = line

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # it ends itself at the end of its input
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            _stop_group(self.proc.pid, self.proc)
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture
def empty_target() -> Iterator[Any]:
    started: list[EmptyTarget] = []

    def start(mode: str) -> EmptyTarget:
        started.append(EmptyTarget(mode))
        return started[-1]

    try:
        yield start
    finally:
        for target in started:
            target.stop()


@pytest.fixture(autouse=True)
def _no_fuzz(monkeypatch: pytest.MonkeyPatch) -> None:
    # The OpenAPI fuzz judges 5xx and error envelopes of real answers only; off, it is skipped.
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")
    # a machine fails on a store that keeps nothing; how short its printed sequence gets is not what
    # this file is about (the default's 2.5 s of shortening, per machine)
    monkeypatch.setenv("MEMCONFORM_STATEFUL_SHRINK_SECONDS", "0.5")


def test_nothing_passes_on_an_empty_ump_upp_and_omf_server(pytester, empty_target):
    target = empty_target("http")
    # an empty store never publishes: each subscribe check waits out the whole timeout for nothing
    result, report = run_suite(pytester, f"--target={target.url}", f"--timeout={EMPTY_WAIT}")
    assert report, result.stdout.str()[-3000:]
    judged = {r["spec"] for r in report["results"] if r["outcome"] != "error"}
    assert judged == {"ump", "upp", "omf"}, judged  # discovery found all three: the guard covers them
    offenders = _offenders(report, ALLOWED)
    assert not offenders, f"{len(offenders)} check(s) passed on nothing: {offenders}"


def test_nothing_passes_on_an_empty_ump_server_over_mcp(pytester, empty_target):
    target = empty_target("http")
    mcp = "mcp+http://" + target.url.removeprefix("http://") + "/mcp"
    result, report = run_suite(pytester, f"--target={mcp}", f"--timeout={EMPTY_WAIT}")
    assert report, result.stdout.str()[-3000:]
    assert {(r["spec"], r["binding"]) for r in report["results"]} == {("ump", "mcp")}
    offenders = _offenders(report, ALLOWED)
    assert not offenders, f"{len(offenders)} check(s) passed on nothing: {offenders}"


def test_nothing_passes_on_an_empty_upp_server_over_stdio(pytester, reaper):
    target = "jsonrpc+stdio:" + stdio_command("empty_target", "upp-stdio")
    result, report = run_suite(pytester, f"--target={target}", "--timeout=10")
    assert report, result.stdout.str()[-3000:]
    assert {r["spec"] for r in report["results"]} == {"upp"}
    offenders = _offenders(report, ALLOWED)
    assert not offenders, f"{len(offenders)} check(s) passed on nothing: {offenders}"


def test_nothing_passes_on_an_empty_omf_command_line(pytester, tmp_path):
    descriptor = tmp_path / "empty-omf.toml"
    descriptor.write_text(
        'name = "empty OMF command line"\nspecs = ["omf@1.0"]\n\n[omf.vars]\n'
        f"script = {json.dumps(script('empty_target'))}\n\n[omf.cli]\n"
        'export = "{python} {script} omf-cli export --tenant-id {tenant} --output {file} '
        '{project?--project-id {project}}"\n'
        'import = "{python} {script} omf-cli import --tenant-id {tenant} --input {file} '
        '{fuzzy_threshold?--fuzzy-threshold {fuzzy_threshold}} --dry-run {dry_run}"\n', encoding="utf-8")
    result, report = run_suite(pytester, f"--target={descriptor}")
    assert report, result.stdout.str()[-3000:]
    assert {(r["spec"], r["binding"]) for r in report["results"]} == {("omf", "cli")}
    offenders = _offenders(report, ALLOWED)
    assert not offenders, f"{len(offenders)} check(s) passed on nothing: {offenders}"


def test_nothing_passes_on_an_omf_export_without_memd_extension(pytester, empty_target):
    target = empty_target("omf-plain")
    result, report = run_suite(pytester, f"--target={target.url}", "--spec=omf", "--timeout=10")
    assert report, result.stdout.str()[-3000:]
    outcomes = {r["check"]: r for r in report["results"]}
    for check in MEMD_ONLY:
        assert outcomes[check]["outcome"] != "passed", check
        assert outcomes[check]["reason"], check  # skipped with the reason, or failed with findings
    offenders = _offenders(report, PLAIN_OMF_ALLOWED)
    assert not offenders, f"{len(offenders)} check(s) passed on nothing: {offenders}"


def test_silence_is_no_reply_only_from_a_target_that_answers(pytester, reaper):
    # A child that answers the driver's upp/info and then reads every line and answers none: its
    # silence to a notification proves nothing.
    target = "jsonrpc+stdio:" + stdio_command("upp_stdio", "hang", "--after", "1")
    checks = ("upp/wire/notification-no-reply", "upp/bad-input/bad-notifications")
    result, report = run_suite(pytester, f"--target={target}", "--timeout=1",
                               *(f"--check={c}" for c in checks))
    assert report, result.stdout.str()[-3000:]
    outcomes = {r["check"]: r for r in report["results"]}
    for check in checks:
        assert outcomes[check]["outcome"] not in ("passed", "failed"), outcomes[check]
        assert "no answer within 1 s" in outcomes[check]["reason"], outcomes[check]["reason"]


def test_every_allowed_entry_names_a_check():
    ids = {c.id for c in all_checks()}
    for pattern in (*ALLOWED, *PLAIN_OMF_ALLOWED, *NEVER):
        check, _ = _split(pattern)
        assert any(fnmatch.fnmatchcase(i, check) for i in ids), pattern
    assert set(MEMD_ONLY) <= ids


# -- round trips: an edge is kept only between ids the export shows -----------------------------------

def test_an_omf_round_trip_without_chunk_ids_keeps_no_edge():
    from memconform.suite.interop import omf as interop_omf

    planned = interop_omf.plan()
    # A destination that exports content and tags only: no chunk ids, no lifecycle, no edges.
    plain = [{"content": p.content, "tags": list(p.tags)} for p in planned if p.exported]
    views = [interop_omf.View("export", "source", {"omf": "1.0", "memories": plain}, plain)]
    losses, _ = interop_omf._compare(planned, views, [], "plain")
    edges = {(loss.record, loss.field) for loss in losses if loss.field.endswith(("/supersedes", "/superseded_by"))}
    head = next(p for p in planned if p.key == "chain-head")
    mid = next(p for p in planned if p.key == "chain-mid")
    assert (head.record, "/extensions/memd/lifecycle/supersedes") in edges
    assert (mid.record, "/extensions/memd/lifecycle/superseded_by") in edges


def test_a_upp_round_trip_keeps_no_pointer_to_a_successor_without_id():
    from memconform.suite.interop import upp as interop_upp

    superseded = next(p for p in interop_upp.PLAN if p.successor is not None)
    successor = next(p for p in interop_upp.PLAN if p.key == superseded.successor)
    view = interop_upp.View("export", "export", "source", "mcf-user", [])
    # Neither event carries an id; the superseded one's pointer is null: no edge was observed.
    got = dict(superseded.event, status="superseded", superseded_by=None)
    found = {superseded.key: got, successor.key: dict(successor.event, status=successor.status)}
    diffs = list(interop_upp._differences(superseded, got, view, found, interop_upp.READINGS[0]))
    assert [d[0] for d in diffs if d[0] == "/superseded_by"] == ["/superseded_by"]
