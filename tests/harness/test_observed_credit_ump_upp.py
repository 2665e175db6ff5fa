"""UMP and UPP scripted checks are credited only with what the subject showed them (absence is never
evidence): a requirement about something the subject did not hold is `not_judged`, neither passed
nor failed, and a check that saw nothing at all is skipped (suite/runner.py, credit_only_observed)."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

from memconform.suite.outcomes import Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check
from memconform.suite.ump.checks import l0 as ump_l0
from memconform.suite.ump.corpus import export_corpus

UMP = {c.id: c for c in all_checks("ump")}
UPP = {c.id: c for c in all_checks("upp")}


class _File:
    """A UMP file subject: what the implementation was given, and the records its export holds."""

    def __init__(self, seeded: list[dict[str, Any]], exported: list[dict[str, Any]]) -> None:
        self._seeded, self._exported = seeded, exported

    def seeded(self) -> list[dict[str, Any]]:
        return self._seeded

    def exported(self) -> Any:
        return SimpleNamespace(records=[SimpleNamespace(format="json", record=r, source="export.ump.json",
                                                        pointer=f"/{i}") for i, r in enumerate(self._exported)],
                               problems=[])


def _plain() -> dict[str, Any]:
    rec = copy.deepcopy(ump_l0._plain_record("1.0"))
    for member in ("relations", "supersedes", "lifecycle"):
        rec.pop(member, None)
    for member in ("user", "agent", "session"):
        rec["scope"].pop(member, None)
    rec["body"].pop("structured", None)
    return rec


def test_optional_members_of_a_file_credit_only_the_members_some_record_has():
    rec = dict(_plain(), relations=[{"type": "about", "target": "entity:pnpm"}])
    result = run_check(UMP["ump/l0/optional-members"], "1.0", "file", lambda: _File([rec], [rec]), None)
    assert result.outcome is Outcome.PASSED
    assert "ump/optional-relations" not in result.extra["not_judged"]
    assert set(result.extra["not_judged"]) == set(ump_l0._OPTIONAL_MEMBERS) - {"ump/optional-relations"}


def test_optional_members_dropped_by_the_export_still_fail():
    rec = dict(_plain(), relations=[{"type": "about", "target": "entity:pnpm"}])
    dropped = {k: v for k, v in rec.items() if k != "relations"}
    result = run_check(UMP["ump/l0/optional-members"], "1.0", "file", lambda: _File([rec], [dropped]), None)
    assert [f.requirement for f in result.findings] == ["ump/optional-relations"]


def test_a_file_without_any_optional_member_is_skipped_not_passed():
    rec = _plain()
    result = run_check(UMP["ump/l0/optional-members"], "1.0", "file", lambda: _File([rec], [rec]), None)
    assert result.outcome is Outcome.SKIPPED and result.extra.get("not_exercised")


def test_record_schema_of_a_file_without_records_is_skipped_not_passed():
    result = run_check(UMP["ump/l0/record-schema"], "1.0", "file", lambda: _File([], []), None)
    assert result.outcome is Outcome.SKIPPED
    ok = run_check(UMP["ump/l0/record-schema"], "1.0", "file",
                   lambda: _File([], [r for r in export_corpus("1.0") if r.get("ump") == "1.0"][:1]), None)
    assert ok.outcome is Outcome.PASSED and not ok.extra.get("not_judged")


class _Upp:
    """A UPP server that serves upp/info, upp/get_labels and nothing else."""

    def __init__(self, info: dict[str, Any], labels: list[Any]) -> None:
        self._info, self._labels = info, labels

    def _reply(self, method: str, result: Any) -> Any:
        return SimpleNamespace(ok=True, result=result, error_code=None, method=method, named=method, params={},
                               response={"jsonrpc": "2.0", "id": 1, "result": result},
                               exchange=SimpleNamespace(sent_text="", received_text="", http_status=200),
                               describe=lambda: "a result")

    def info(self) -> Any:
        return self._reply("upp/info", self._info)

    def get_labels(self) -> Any:
        return self._reply("upp/get_labels", self._labels)

    def call(self, method: str, params: Any = None) -> Any:
        if method == "upp/info":
            return self.info()
        if method == "upp/get_labels":
            return self.get_labels()
        return SimpleNamespace(ok=False, result=None, error_code=-32601, method=method, named=method, params=params,
                               response=None, exchange=SimpleNamespace(sent_text="", received_text="",
                                                                       http_status=200),
                               describe=lambda: "-32601")


def test_get_labels_under_an_ontology_of_its_own_does_not_credit_the_user_v1_rules():
    label = {"name": "who_name", "display_name": "Name", "description": "The user's name", "category": "WHO",
             "sensitivity": "tier_personal", "cardinality": "singular", "durability": "permanent",
             "examples": ["My name is Ada"]}
    info = {"protocol_version": "1.0.0", "ontology": "acme/v1", "operations": ["upp/info", "upp/get_labels"],
            "conformance_level": 1}
    result = run_check(UPP["upp/l2/get-labels"], "1.0.0", "http", lambda: _Upp(info, [label]), None)
    assert result.outcome is Outcome.PASSED, result.reason
    # no user/v1 file to compare with, no upp/ingest to label events: neither rule was seen
    assert set(result.extra["not_judged"]) == {"upp/ontology-major-stable", "upp/get-labels-complete"}


# -- a refusal or an answer that leaves a named rule unseen ------------------------------------------

def _ump_reply(body: Any, *, status: int = 200, error_code: str | None = None) -> Any:
    return SimpleNamespace(ok=200 <= status < 300 and error_code is None, body=body, status=status,
                           error_code=error_code, raw="", sent=None, wire=(), operation="remember",
                           describe=lambda: f"HTTP {status}")


class _Rejecting:
    """A UMP server whose remember answers §3.3's own refusal, {result: "rejected"}, to anything."""

    def remember(self, record: Any, **_: Any) -> Any:
        return _ump_reply({"result": "rejected"})


def test_runner_validation_answered_rejected_does_not_credit_the_error_status():
    result = run_check(UMP["ump/runner13/validation"], "1.0", "http", _Rejecting, None)
    assert result.outcome is Outcome.PASSED, result.reason
    assert result.extra["not_judged"] == ["ump/http-error-status", "ump/runner-rules"]


def test_integrity_without_a_signer_does_not_credit_signer_owner():
    rec = dict(_plain(), integrity={"content_hash": "blake3:" + "a" * 52, "signature": "ed25519:AAAA"})
    result = run_check(UMP["ump/l0/integrity"], "1.0", "file", lambda: _File([rec], [rec]), None)
    assert {f.requirement for f in result.findings} >= {"ump/integrity-signature"}
    assert result.extra["not_judged"] == ["ump/integrity-signer-owner"]


class _OffersMore:
    """A UMP server that claims L1 and answers revise, forget and feedback all the same."""

    def offered(self) -> set[str]:
        return {"capabilities", "remember", "get", "recall", "revise", "forget", "feedback"}

    def capabilities(self) -> Any:
        return _ump_reply({"ump": "1.0", "conformance": "L1"})

    def revise(self, *_: Any, **__: Any) -> Any:
        return _ump_reply({"id": "urn:ump:x"})

    forget = feedback = revise


def test_unsupported_operation_is_not_passed_when_every_probe_was_offered_after_all():
    result = run_check(UMP["ump/l1/unsupported-operation"], "1.0", "http", _OffersMore, None)
    assert result.outcome is Outcome.SKIPPED, (result.outcome, result.reason)
    assert "offers after all" in result.reason
