"""UMP round trips (suite/interop/ump.py).

Between two separate reference implementations — one in process (`--target=reference`, its HTTP or
MCP binding), one served by `memconform serve` in a child process with a store of its own — nothing
is lost in either direction, under UMP 0.1 and 1.0. Each interop-only UMP fault is caught on
whichever side it sits, as losses naming exactly the fault's requirements, the field and the stage;
some single-target faults are caught too. A small scripted server (`FakeUmp`) shows the
allowances: what a server may change without a loss, and what it may not.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.suite import catalogue
from memconform.suite.interop import ump
from memconform.suite.interop.model import MISSING, RoundTrip
from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.suite.ump import consent, ids, integrity
from memconform.suite.ump.client import Reply
from memconform.suite.ump.testkeys import test_did, test_signing_key
from memconform.targets import open_driver

from . import helpers
from .helpers import described

SERVED, IN_PROCESS = "served", "in-process"
VERSIONS = ("0.1", "1.0")
OWNER = test_did("owner-a")
OWNER_NOTE = "every request is made as the records' owner"


def corpus_keys(version: str) -> list[str]:
    """The records a round trip with an L2+ source places: the corpus, the chain A makes by
    revising twice, the tombstone."""
    return [e.key for e in ump.build_corpus(version, "x")] + ["revised-0", "revised-1", "revised-2", "tombstone"]


def sent_keys(version: str) -> set[str]:
    """The records remembered into A complete (with their own id and signature)."""
    return set(corpus_keys(version)) - {"revised-1", "revised-2"}




def served_client(url: str, version: str) -> tuple[Any, Any]:
    driver = open_driver(url, timeout=30.0)
    subject = next(s for s in driver.subjects() if (s.spec, s.version) == ("ump", version))
    return driver, driver.client(subject)


def in_process(fault: str | None = None, **kw: Any) -> tuple[Any, Any]:
    return helpers.in_process("ump", fault, **{"version": "1.0", **kw})


def trip(source: Any, destination: Any, source_label: str, destination_label: str,
         version: str = "1.0") -> RoundTrip:
    return ump.round_trip(source, destination, version=version, source_label=source_label,
                          destination_label=destination_label)




def keys_of(rt: RoundTrip, records: set[str]) -> set[str]:
    """The corpus keys of the records the losses name."""
    by_id = {r["source_id"]: r["key"] for r in rt.extra["records"]}
    return {by_id.get(r, r) for r in records}


@pytest.fixture(scope="module")
def served(served_reference):
    """UMP clients of the module's served reference, one per version (its own store)."""
    drivers = {v: served_client(served_reference.url, v) for v in VERSIONS}
    try:
        yield {v: client for v, (_, client) in drivers.items()}
    finally:
        for driver, _ in drivers.values():
            driver.close()


# -- clean: reference ↔ reference keeps everything ----------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("direction", ["in-process to served", "served to in-process"])
def test_reference_to_reference_keeps_everything(served, direction, version):
    driver, local = in_process(version=version)
    try:
        rt = (trip(local, served[version], IN_PROCESS, SERVED, version) if direction == "in-process to served"
              else trip(served[version], local, SERVED, IN_PROCESS, version))
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.kept_everything
    assert (rt.spec, rt.version) == ("ump", version)
    assert rt.placed == rt.compared == len(corpus_keys(version)) == (11 if version == "0.1" else 12)
    assert [r["key"] for r in rt.extra["records"]] == corpus_keys(version)
    for r in rt.extra["records"]:  # B kept every id it was given
        assert r["destination_id"] == r["source_id"] and ids.ID_PATTERN.fullmatch(r["source_id"]), r
        assert r["lost_at"] is None
    assert rt.extra["levels"] == {"source": "L3", "destination": "L3"}
    assert len(rt.notes) == 1 and rt.notes[0].startswith(OWNER_NOTE), rt.notes


def test_mcp_source_keeps_everything(served):
    """The same with the in-process reference's MCP binding (streamable HTTP) as the source."""
    driver, local = in_process(binding="mcp")
    try:
        rt = trip(local, served["1.0"], f"{IN_PROCESS} (mcp)", SERVED)
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.placed == rt.compared == 12
    assert rt.extra["bindings"] == {"source": "mcp", "destination": "http"}


def test_round_trips_leave_each_store_its_own(served):
    """B holds what the round trip imported, A does not hold B's: two stores, not one."""
    driver, local = in_process()
    try:
        rt = trip(local, served["1.0"], IN_PROCESS, SERVED)
        assert rt.kept_everything, described(rt)
        other = in_process()
        try:
            some = rt.extra["records"][0]["source_id"]
            assert local.get(some).ok and served["1.0"].get(some).ok
            assert other[1].get(some).error_code == "not_found"
        finally:
            other[0].close()
    finally:
        driver.close()


# -- interop-only faults: each is caught where it happens --------------------------------------------

INTEROP_FAULTS = sorted(n for n, f in FAULTS.items() if f.spec == "ump" and f.interop_only)

#: fault → (fields its losses name, {side: (stage prefix, keys of the records hit)})
EXPECTED: dict[str, tuple[set[str], Callable[[str, str], tuple[str, set[str]]]]] = {
    # Dropped on get: as the source, A's export lacks it on every record carrying evidence (the
    # successors are built from A's export of their prior, so lack it without a further loss); as
    # the destination, B's export lacks it on every record A exported with it.
    "get-drops-provenance-evidence": ({"/provenance/evidence"}, lambda side, v: (
        # as the source, not the tombstone: forget may give it provenance of its own (§9)
        ("export from", {"semantic", "identity", "revised-0"}) if side == "source"
        else ("export from", {"semantic", "identity", "revised-0", "revised-1", "revised-2", "tombstone"}))),
    # Every record arriving with its own id gets a new one: as the source, every record placed
    # complete; as the destination, every record imported.
    "remember-remints-supplied-ids": ({"/id"}, lambda side, v: (
        ("placing in", sent_keys(v)) if side == "source" else ("import into", set(corpus_keys(v))))),
    # Arriving signed records are re-signed with the server's key: as the source, every record
    # placed (but the two revise and forget re-sign with the owner's key); as the destination, all.
    "remember-resigns-with-service-key": ({"/integrity/signer"}, lambda side, v: (
        ("export from", sent_keys(v) - {"revised-0", "tombstone"}) if side == "source"
        else ("export from", set(corpus_keys(v))))),
}


def test_every_interop_only_ump_fault_has_expectations():
    assert set(INTEROP_FAULTS) == set(EXPECTED)
    assert len(INTEROP_FAULTS) >= 3
    for name in INTEROP_FAULTS:
        assert FAULTS[name].bindings == ("http", "mcp"), name  # engine faults, both live bindings


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("side", ["source", "destination"])
@pytest.mark.parametrize("name", INTEROP_FAULTS)
def test_interop_fault_is_caught(served, name, side, version):
    driver, faulty = in_process(name, version=version)
    label = f"{IN_PROCESS}?fault={name}"
    try:
        rt = (trip(faulty, served[version], label, SERVED, version) if side == "source"
              else trip(served[version], faulty, SERVED, label, version))
    finally:
        driver.close()
    fields, where = EXPECTED[name]
    stage, keys = where(side, version)
    assert rt.losses, f"{name} on the {side} side went unseen"
    assert {loss.requirement for loss in rt.losses} == set(FAULTS[name].breaks), described(rt)
    assert {loss.field for loss in rt.losses} == fields, described(rt)
    assert {loss.stage for loss in rt.losses} == {f"{stage} {label}"}, described(rt)
    assert keys_of(rt, {loss.record for loss in rt.losses}) == keys, described(rt)
    assert len(rt.losses) == len(keys)  # one loss per record hit
    assert not rt.kept_everything
    for loss in rt.losses:
        assert loss.expected != loss.got and loss.got is not None
    if name == "get-drops-provenance-evidence":
        assert all(isinstance(x.expected, list) and x.got is MISSING for x in rt.losses)
    elif name == "remember-remints-supplied-ids":
        assert all(ids.ID_PATTERN.fullmatch(x.got) and x.got != x.expected for x in rt.losses)
        assert rt.compared == rt.placed  # still readable under the new ids: only the id was lost
    else:
        assert all(x.expected == OWNER and x.got.startswith("did:key:") for x in rt.losses)
        if side == "source":  # B refuses what no longer verifies, as it must: noted, not charged to B
            assert rt.compared == rt.placed - len(keys)
            assert sum("as it must" in n for n in rt.notes) == len(keys), rt.notes
        else:
            assert rt.compared == rt.placed


def test_a_served_faulty_reference_is_caught_too(serve_reference):
    """The fault switch of `memconform serve --fault` works the same: the served one re-mints ids."""
    faulty = serve_reference(fault="remember-remints-supplied-ids")
    driver, local = in_process()
    remote, client = served_client(faulty.url, "1.0")
    try:
        rt = trip(local, client, IN_PROCESS, "served?fault=remember-remints-supplied-ids")
    finally:
        driver.close()
        remote.close()
    assert {(x.requirement, x.field, x.stage) for x in rt.losses} == {
        ("ump/id-stable", "/id", "import into served?fault=remember-remints-supplied-ids")}, described(rt)
    assert len(rt.losses) == rt.placed == rt.compared == 12


# -- single-target faults a round trip shows as well -----------------------------------------------

SINGLE = [
    # (fault, the faulty side, version, {(field, requirement, stage prefix)})
    ("mangles-non-ascii-text", "destination", "1.0", {("/body/text", "ump/remember-persists", "export from")}),
    ("serves-unsigned", "destination", "0.1", {("/integrity", "ump/integrity-required", "export from")}),
    ("serves-extra-member", "destination", "1.0", {("/stored", "ump/record-field-types", "export from")}),
    ("revise-skips-superseded-by", "source", "1.0",
     {("/superseded_by", "ump/revise-sets-superseded-by", "export from")}),
    ("revise-keeps-valid-to", "source", "0.1", {("/time/valid_to", "ump/revise-sets-valid-to", "export from")}),
    ("revise-rewrites-prior-body", "source", "1.0",
     {("/body/text", "ump/revise-non-destructive", "export from"),
      ("/body/text", "ump/revise-applies-patch", "export from")}),
    ("forget-deletes", "source", "1.0", {("", "ump/forget-retained", "export from")}),
    ("live-keeps-0.1-records", "source", "1.0", {("/ump", "ump/normalize-imported-0.1", "export from")}),
]


@pytest.mark.parametrize(("name", "side", "version", "expected"), SINGLE, ids=[s[0] for s in SINGLE])
def test_single_target_fault_shows_in_a_round_trip(served, name, side, version, expected):
    driver, faulty = in_process(name, version=version)
    label = f"{IN_PROCESS}?fault={name}"
    try:
        rt = (trip(faulty, served[version], label, SERVED, version) if side == "source"
              else trip(served[version], faulty, SERVED, label, version))
    finally:
        driver.close()
    seen = {(x.field, x.requirement, x.stage) for x in rt.losses}
    assert seen == {(f, r, f"{s} {label}") for f, r, s in expected}, described(rt)


def test_redaction_across_owners_is_not_a_loss_of_the_owners_round_trip(served):
    """redact-not-applied only changes what other owners see: the owner's round trip is untouched."""
    driver, faulty = in_process("redact-not-applied")
    try:
        rt = trip(faulty, served["1.0"], IN_PROCESS, SERVED)
    finally:
        driver.close()
    assert rt.kept_everything, described(rt)


# -- allowances, with a scripted server ---------------------------------------------------------------

def resign(rec: dict[str, Any]) -> dict[str, Any]:
    return integrity.sign({k: v for k, v in rec.items() if k != "integrity"}, test_signing_key("owner-a"))


def _merge(base: Any, patch: Any) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = copy.deepcopy(base)
        for k, v in patch.items():
            out[k] = _merge(base.get(k), v)
        return out
    return copy.deepcopy(patch)


class FakeUmp:
    """An in-memory UMP store behind the `UmpClient` protocol that keeps what it is given. Hooks
    make it misbehave: `on_remember(record) -> record | Reply`, `on_get(record) -> record`. Its
    revise sets the prior's valid_to to "now" (not the successor's valid_from) and stamps
    provenance, its forget sets valid_to too: both allowed."""

    binding = "fake"
    NOW = "2026-11-21T12:00:00Z"

    def __init__(self, version: str = "1.0", level: str = "L3", *, offered: set[str] | None = None,
                 on_remember: Callable[[dict], Any] | None = None, on_get: Callable[[dict], dict] | None = None,
                 merge_answers: bool = False, writable: bool = True):
        self.version, self.level, self.writable = version, level, writable
        self._offered = frozenset(offered or {"capabilities", "recall", "remember", "get", "revise", "forget"})
        self.on_remember, self.on_get, self.merge_answers = on_remember, on_get, merge_answers
        self.store: dict[str, dict[str, Any]] = {}

    def _reply(self, op: str, sent: Any, body: Any = None, code: str | None = None) -> Reply:
        return Reply(op, self.binding, sent, body=body, error_code=code, error_message=code and f"{code} (fake)")

    def offered(self) -> frozenset[str]:
        return self._offered

    def capabilities(self, request: Any = None) -> Reply:
        return self._reply("capabilities", request, {"ump": self.version, "conformance": self.level,
                                                      "writable": self.writable})

    def remember(self, record: Any, *, auth: Any = None, wrap: bool = True) -> Reply:
        rec = copy.deepcopy(record)
        if rec.get("ump") == "0.1" and self.version != "0.1":
            rec = resign(dict(rec, ump=self.version))
        if self.on_remember is not None:
            out = self.on_remember(rec)
            if isinstance(out, Reply):
                return out
            rec = out
        self.store[rec["id"]] = rec
        result = "merged" if self.merge_answers else "created"
        return self._reply("remember", record, {"id": rec["id"], "result": result})

    def get(self, id: str, *, auth: Any = None) -> Reply:
        if id not in self.store:
            return self._reply("get", {"id": id}, code="not_found")
        rec = copy.deepcopy(self.store[id])
        return self._reply("get", {"id": id}, {"record": self.on_get(rec) if self.on_get else rec})

    def _stamp(self, rec: dict[str, Any], method: str, ref: str) -> None:
        prov = rec.get("provenance")
        if isinstance(prov, dict):
            rec["provenance"] = dict(prov, actor=OWNER, actor_kind="agent", method=method,
                                     source=dict(prov.get("source") or {}, ref=ref))

    def revise(self, request: dict[str, Any], *, auth: Any = None) -> Reply:
        prior = self.store[request["id"]]
        succ = _merge({k: v for k, v in prior.items() if k not in ("integrity", "superseded_by")}, request["patch"])
        succ["id"], succ["supersedes"] = ids.random_id(), [prior["id"]]
        succ["time"] = dict(succ["time"], created=self.NOW, valid_to=None)
        self._stamp(succ, "revise", prior["id"])
        self.store[succ["id"]] = resign(succ)
        self.store[prior["id"]] = resign(dict(prior, time=dict(prior["time"], valid_to=self.NOW),
                                              superseded_by=[succ["id"]]))
        return self._reply("revise", request, {"id": succ["id"], "supersedes": [prior["id"]]})

    def forget(self, request: dict[str, Any], *, auth: Any = None) -> Reply:
        rec = copy.deepcopy(self.store[request["id"]])
        rec["lifecycle"] = dict(rec.get("lifecycle") or {}, status="tombstoned")
        rec["time"] = dict(rec["time"], valid_to=self.NOW)
        self._stamp(rec, "forget", rec["id"])
        self.store[rec["id"]] = resign(rec)
        return self._reply("forget", request, {"result": "tombstoned"})


def fake_trip(source: FakeUmp, destination: FakeUmp) -> RoundTrip:
    return ump.round_trip(source, destination, version=source.version, source_label="A", destination_label="B")


def test_fake_to_fake_keeps_everything_with_what_revise_and_forget_may_set():
    rt = fake_trip(FakeUmp(), FakeUmp())
    assert rt.losses == (), described(rt)
    assert rt.placed == rt.compared == 12


def test_re_signed_equivalent_forms_are_not_losses():
    """valid_to null → absent, empty lists dropped, re-signed by the owner: the same record."""
    def tidy(rec: dict[str, Any]) -> dict[str, Any]:
        if rec["time"].get("valid_to", 1) is None:
            del rec["time"]["valid_to"]
        for key in ("supersedes", "superseded_by", "relations"):
            if rec.get(key) == []:
                del rec[key]
        return resign(rec)

    rt = fake_trip(FakeUmp(), FakeUmp(on_remember=tidy))
    assert rt.losses == (), described(rt)


def test_merge_answering_the_records_own_id_is_not_a_loss():
    rt = fake_trip(FakeUmp(), FakeUmp(merge_answers=True))
    assert rt.kept_everything, described(rt)


@pytest.mark.parametrize("level", ["L2", "L3"])
def test_dropped_integrity_is_a_note_below_l3_and_a_loss_at_l3(level):
    def unsigned(rec: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in rec.items() if k != "integrity"}

    rt = fake_trip(FakeUmp(), FakeUmp(level=level, on_get=unsigned))
    if level == "L2":
        assert rt.losses == (), described(rt)
        assert sum("optional below L3" in n for n in rt.notes) == 12
    else:
        assert {(x.field, x.requirement) for x in rt.losses} == {("/integrity", "ump/integrity-required")}
        assert len(rt.losses) == 12


def test_redaction_of_the_owners_own_read_is_a_loss():
    """Every read is the owner's: a server stripping consent.redact paths from it loses them."""
    rt = fake_trip(FakeUmp(), FakeUmp(on_get=consent.apply_redact))
    seen = {(x.field, x.requirement) for x in rt.losses}
    assert seen == {("/body/structured/token", "ump/get-returns-record"),
                    ("/body/structured/api_key", "ump/get-returns-record"),
                    ("/body/structured/items", "ump/get-returns-record"),
                    ("/integrity", "ump/integrity-required")}, described(rt)  # redaction drops integrity
    assert keys_of(rt, {x.record for x in rt.losses}) == {"semantic", "procedural"}


def test_an_altered_field_without_re_signing_shows_as_field_and_signature():
    def alter(rec: dict[str, Any]) -> dict[str, Any]:
        rec["body"]["text"] = rec["body"]["text"].upper()
        return rec

    rt = fake_trip(FakeUmp(), FakeUmp(on_remember=alter))
    seen = {(x.field, x.requirement, x.stage) for x in rt.losses}
    assert seen == {("/body/text", "ump/remember-persists", "export from B"),
                    ("/integrity/content_hash", "ump/integrity-content-hash", "export from B")}, described(rt)
    assert len(rt.losses) == 2 * 12


def test_visibility_widened_is_charged_to_the_visibility_it_had():
    def public(rec: dict[str, Any]) -> dict[str, Any]:
        return resign(dict(rec, scope=dict(rec["scope"], visibility="public")))

    rt = fake_trip(FakeUmp(), FakeUmp(on_remember=public))
    by_key = {k: {(x.field, x.requirement) for x in rt.losses if keys_of(rt, {x.record}) == {k}}
              for k in corpus_keys("1.0")}
    assert by_key["semantic"] == {("/scope/visibility", "ump/visibility-private")}
    assert by_key["episodic"] == {("/scope/visibility", "ump/visibility-shared-grant")}
    assert by_key["procedural"] == set()  # it was public already


def test_a_refused_record_is_a_loss_naming_what_the_server_answered():
    def no_identity(rec: dict[str, Any]) -> Any:
        if rec["kind"] == "identity":
            return Reply("remember", "fake", rec, error_code="invalid_record", error_message="no identity here")
        return rec

    rt = fake_trip(FakeUmp(), FakeUmp(on_remember=no_identity))
    assert [(x.field, x.requirement, x.stage) for x in rt.losses] == [("", "ump/remember-persists", "import into B")]
    assert "invalid_record" in rt.losses[0].got
    assert rt.compared == rt.placed - 1 and not rt.kept_everything


def test_a_1_0_source_may_refuse_the_0_1_record():
    def no_legacy(rec: dict[str, Any]) -> Any:
        if "0.1 record carried" in rec["body"]["text"]:
            return Reply("remember", "fake", rec, error_code="invalid_record", error_message="no 0.1 here")
        return rec

    rt = fake_trip(FakeUmp(on_remember=no_legacy), FakeUmp())
    assert rt.losses == () and rt.placed == rt.compared == 11, described(rt)
    assert any("importing 0.1 records is a MAY" in n for n in rt.notes)


def test_below_l2_provenance_and_the_revise_chain_are_skipped_with_notes():
    def no_provenance(rec: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in rec.items() if k not in ("provenance", "integrity")}

    source = FakeUmp(level="L1", offered={"capabilities", "recall", "remember", "get"}, on_get=no_provenance)
    rt = fake_trip(source, FakeUmp(level="L1", offered={"capabilities", "recall", "remember", "get"}))
    assert rt.losses == (), described(rt)
    assert rt.placed == rt.compared == 8  # the corpus only: no chain by revise, no tombstone
    notes = " | ".join(rt.notes)
    for part in ("no supersession chain made by revise", "no tombstone", "provenance is not compared"):
        assert part in notes


def test_what_cannot_be_judged_is_not_applicable():
    with pytest.raises(NotApplicable, match="does not offer get"):
        fake_trip(FakeUmp(offered={"capabilities", "remember"}), FakeUmp())
    with pytest.raises(NotApplicable, match="writable: false"):
        fake_trip(FakeUmp(), FakeUmp(writable=False))
    with pytest.raises(NotApplicable, match="opened for UMP 0.1"):
        fake_trip(FakeUmp(), FakeUmp(version="0.1"))


def test_an_unreachable_target_is_a_target_error():
    def unreachable(rec: dict[str, Any]) -> Any:
        raise TargetError("cannot connect to B")

    with pytest.raises(TargetError, match="cannot connect"):
        fake_trip(FakeUmp(), FakeUmp(on_remember=unreachable))


# -- the table of promises ------------------------------------------------------------------------------

@pytest.mark.parametrize(("parts", "expected", "role", "requirement"), [
    (("id",), "x", "imported", "ump/get-returns-record"),
    (("ump",), "1.0", "imported", "ump/emit-advertised-version"),
    (("ump",), "1.0", "legacy", "ump/normalize-imported-0.1"),
    (("kind",), "semantic", "imported", "ump/remember-persists"),
    (("body", "text"), "t", "imported", "ump/remember-persists"),
    (("body", "text"), "t", "prior", "ump/revise-non-destructive"),
    (("body", "text"), "t", "successor", "ump/revise-applies-patch"),
    (("body", "structured", "k"), 1, "imported", "ump/get-returns-record"),
    (("scope", "owner"), OWNER, "imported", "ump/remember-persists"),
    (("scope", "visibility"), "private", "imported", "ump/visibility-private"),
    (("scope", "visibility"), "shared", "imported", "ump/visibility-shared-grant"),
    (("scope", "visibility"), "public", "imported", "ump/get-returns-record"),
    (("scope", "session"), "s", "imported", "ump/get-returns-record"),
    (("time", "created"), "t", "imported", "ump/get-returns-record"),
    (("time", "valid_from"), "t", "imported", "ump/recall-honors-valid-at"),
    (("time", "valid_to"), "t", "imported", "ump/recall-honors-valid-at"),
    (("supersedes",), [], "successor", "ump/revise-creates-successor"),
    (("superseded_by",), [], "imported", "ump/revise-sets-superseded-by"),
    (("provenance", "actor_kind"), "user", "imported", "ump/provenance-required"),
    (("provenance", "evidence"), [], "imported", "ump/get-returns-record"),
    (("consent", "retention"), "P1D", "imported", "ump/consent-retention-tombstone"),
    (("consent", "redact"), [], "imported", "ump/consent-redact-boundary"),
    (("consent", "exportable"), False, "imported", "ump/export-exportable"),
    (("lifecycle", "salience"), 0.5, "imported", "ump/lifecycle-hints-set"),
    (("lifecycle", "status"), "tombstoned", "tombstone", "ump/forget-retained"),
    (("stored",), MISSING, "imported", "ump/record-field-types"),
])
def test_each_field_is_charged_to_the_requirement_that_promised_it(parts, expected, role, requirement):
    assert ump._requirement(parts, version="1.0", expected=expected, role=role) == requirement


def test_every_requirement_the_round_trip_names_is_in_the_catalogue():
    text = Path(ump.__file__).read_text(encoding="utf-8")
    named = set(re.findall(r'"(ump/[a-z0-9.-]+)"', text)) | {integrity.REQ_CONTENT_HASH, integrity.REQ_SIGNATURE,
                                                             integrity.REQ_SIGNER_OWNER}
    cat = catalogue.load("ump")
    assert named and named <= set(cat.by_id), sorted(named - set(cat.by_id))
    for rid in named - {"ump/normalize-imported-0.1", "ump/emit-advertised-version"}:
        assert cat.get(rid).applies_to("0.1"), rid  # usable in a 0.1 round trip too
