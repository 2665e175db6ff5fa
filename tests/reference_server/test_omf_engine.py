"""The OMF reference engine against every rule of OMF 1.0 (../shared/specs/omf-1.0.md), and every
OMF fault against the behaviour it is meant to break."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.reference_impl.omf import OmfEngine, OmfStore, ValidationError

NOW = 1_800_000_000_000


def engine(fault: str | None = None, now: int = NOW) -> OmfEngine:
    return OmfEngine(OmfStore(":memory:"), fault=fault, clock=lambda: now)


def item(content: str, *, project: str | None = None, category: str | None = None, lifecycle: Any = None,
         chunk_id: str | None = None, v: Any = 1, status: str | None = None, **extra: Any) -> dict[str, Any]:
    memd: dict[str, Any] = {"v": v}
    if chunk_id is not None:
        memd["chunk_id"] = chunk_id
    if project is not None:
        memd["project_id"] = project
    if lifecycle is not None:
        memd["lifecycle"] = lifecycle
    out: dict[str, Any] = {"content": content, "extensions": {"memd": memd}, **extra}
    if category is not None:
        out["category"] = category
    if status is not None:
        out["status"] = status
    return out


def doc(*items: dict[str, Any], app: str | None = "memd", **envelope: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": list(items)}
    if app is not None:
        d["source"] = {"app": app}
    d.update(envelope)
    return d


def exported(e: OmfEngine, tenant: str = "t", **flags: Any) -> list[dict[str, Any]]:
    return e.export_document(tenant, **{"include_history": True, **flags})["memories"]


def lifecycles(e: OmfEngine, tenant: str = "t", **flags: Any) -> list[dict[str, Any]]:
    return [i["extensions"]["memd"]["lifecycle"] for i in exported(e, tenant, **flags)]


# -- envelope ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["1.1", "2.0", 1.0, None, ""])
def test_only_omf_1_0_is_accepted(version: Any) -> None:
    e = engine()
    d = doc(item("a"))
    if version is None:
        del d["omf"]
    else:
        d["omf"] = version
    with pytest.raises(ValidationError):
        e.import_document("t", d)
    with pytest.raises(ValidationError):
        e.preview("t", d)
    assert e.store.count() == 0


def test_fault_accepts_other_version() -> None:
    e = engine("omf-accepts-other-version")
    assert e.import_document("t", doc(item("a"), omf="1.1"))["imported"] == 1


@pytest.mark.parametrize("bad", [
    [], "x", {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z"},
    {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": {}},
    {"omf": "1.0", "memories": []}, {"omf": "1.0", "exported_at": 5, "memories": []},
    {"omf": "1.0", "exported_at": "x", "source": "memd", "memories": []},
])
def test_malformed_envelopes_are_refused(bad: Any) -> None:
    with pytest.raises(ValidationError):
        engine().import_document("t", bad)


@pytest.mark.parametrize("bad_item", [
    "text", {"content": 5}, {}, {"content": "a", "tags": "x"}, {"content": "a", "tags": [1]},
    {"content": "a", "category": 3}, {"content": "a", "status": True}, {"content": "a", "extensions": []},
    {"content": "a", "extensions": {"memd": "x"}},     {"content": "a", "extensions": {"memd": {"project_id": 7}}},
])
def test_malformed_item_refuses_the_whole_document(bad_item: Any) -> None:
    e = engine()
    with pytest.raises(ValidationError):
        e.import_document("t", doc(item("good first"), bad_item))
    assert e.store.count() == 0


@pytest.mark.parametrize("content", ["", "   ", "\n\t "])
def test_blank_content_fails_validation(content: str) -> None:
    e = engine()
    with pytest.raises(ValidationError, match="empty or whitespace"):
        e.import_document("t", doc(item("ok"), item(content)))
    assert e.store.count() == 0
    b = engine("omf-accepts-blank-content")
    assert b.import_document("t", doc(item("ok"), item(content)))["imported"] == 2


def test_unicode_white_space_is_blank_and_fault_blank_check_ascii_only() -> None:
    blank = "\u00a0\u3000\u2003"
    with pytest.raises(ValidationError, match="empty or whitespace"):
        engine().import_document("t", doc(item("ok"), item(blank)))
    assert engine("omf-blank-check-ascii-only").import_document("t", doc(item("ok"), item(blank)))["imported"] == 2
    with pytest.raises(ValidationError):  # ASCII white space is still blank to it
        engine("omf-blank-check-ascii-only").import_document("t", doc(item("ok"), item(" \t")))


def test_empty_memories_and_empty_export() -> None:
    e = engine()
    assert e.import_document("t", doc()) == {"imported": 0, "duplicates": 0, "skipped": 0}
    d = e.export_document("t")
    assert d["memories"] == [] and d["omf"] == "1.0" and d["source"] == {"app": "memd"}


def test_exported_at_seconds_precision_and_fault() -> None:
    pattern = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
    assert pattern.match(engine(now=NOW + 123).export_document("t")["exported_at"])
    assert not pattern.match(engine("omf-exported-at-millis", now=NOW + 123).export_document("t")["exported_at"])


def test_export_dates_and_edges_and_their_faults() -> None:
    """created_at is an RFC 3339 date-time, and a replayed edge reads back on both its items (the faults
    "omf-export-dates-day-first" and "omf-export-superseded-by-dropped" break each)."""
    older, newer = "018f0000-0000-7000-8000-000000000001", "018f0000-0000-7000-8000-000000000002"
    edge = doc(item("old", chunk_id=older, lifecycle={"status": "superseded"}),
               item("new", chunk_id=newer, lifecycle={"supersedes": older}))
    for fault, dates_ok, edges_ok in ((None, True, True), ("omf-export-dates-day-first", False, True),
                                      ("omf-export-superseded-by-dropped", True, False)):
        e = engine(fault)
        e.import_document("t", edge)
        items = exported(e)
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT.*Z", it["created_at"]) for it in items) is dates_ok, fault
        old = next(it for it in items if it["content"] == "old")
        assert (old["extensions"]["memd"]["lifecycle"]["superseded_by"] is not None) is edges_ok, fault


def test_exported_at_not_interpreted() -> None:
    e = engine()
    assert e.import_document("t", doc(item("a"), exported_at="1970-01-01T00:00:00Z"))["imported"] == 1
    assert e.import_document("t", doc(item("b"), exported_at="garbage"))["imported"] == 1


def test_nanomem_document_without_source_or_extensions() -> None:
    e = engine()
    d = {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": [{"content": "plain"}]}
    assert e.import_document("t", d)["imported"] == 1
    (only,) = exported(e)
    assert only["content"] == "plain" and only["extensions"]["memd"]["lifecycle"]["status"] == "final"


# -- trust gate ------------------------------------------------------------------------------------

CLAIM = {"status": "expired", "tier": "history", "expires_at_ms": 5, "review_after_ms": 6,
         "lifecycle_updated_at_ms": 7}


def test_trusted_lifecycle_is_honoured() -> None:
    e = engine()
    e.import_document("t", doc(item("a", lifecycle=CLAIM)))
    (lc,) = lifecycles(e)
    assert {k: lc[k] for k in CLAIM} == CLAIM


@pytest.mark.parametrize("app,v", [(None, 1), ("nanomem", 1), ("MEMD", 1), ("memd", 2), ("memd", "1"), ("memd", None)])
def test_untrusted_items_land_at_defaults(app: str | None, v: Any) -> None:
    e = engine()
    it = item("a", lifecycle=CLAIM)
    if v is None:
        del it["extensions"]["memd"]["v"]
    else:
        it["extensions"]["memd"]["v"] = v
    e.import_document("t", doc(it, app=app))
    (lc,) = lifecycles(e)
    assert (lc["status"], lc["tier"], lc["expires_at_ms"], lc["review_after_ms"]) == ("final", "long_term", None, None)


def test_untrusted_lifecycle_is_not_parsed() -> None:
    e = engine()
    assert e.import_document("t", doc(item("a", lifecycle="nonsense"), item("b", lifecycle={"tier": "x"}),
                                      app="other"))["imported"] == 2


def test_fault_trusts_any_source() -> None:
    e = engine("omf-trusts-any-source")
    e.import_document("t", doc(item("a", lifecycle=CLAIM), app=None))
    assert lifecycles(e)[0]["tier"] == "history"


@pytest.mark.parametrize("app", ["MEMD", "Memd", "memd "])
def test_source_app_is_compared_exactly(app: str) -> None:
    e = engine()
    e.import_document("t", doc(item("a", lifecycle=CLAIM), app=app))
    assert lifecycles(e)[0]["tier"] == "long_term"
    casefold = engine("omf-trust-gate-casefold")
    casefold.import_document("t", doc(item("a", lifecycle=CLAIM), app=app))
    assert lifecycles(casefold)[0]["tier"] == "history"
    # still untrusted to it: another app, or no source at all
    for n, other in enumerate(("nanomem", None)):
        casefold.import_document("u", doc(item(f"b{n}", lifecycle=CLAIM), app=other))
    assert {lc["tier"] for lc in lifecycles(casefold, "u")} == {"long_term"}


def test_fault_trusts_other_ext_version() -> None:
    e = engine("omf-trusts-other-ext-version")
    e.import_document("t", doc(item("a", lifecycle=CLAIM, v=2)))
    assert lifecycles(e)[0]["tier"] == "history"
    assert engine().import_document("t", doc(item("a", lifecycle=CLAIM, v=2)))["imported"] == 1


def test_fault_trust_v_truthy() -> None:
    for v in (True, 1.0):
        assert engine().import_document("t", doc(item("a", lifecycle=CLAIM, v=v)))["imported"] == 1
    right = engine()
    right.import_document("t", doc(item("a", lifecycle=CLAIM, v=True)))
    assert lifecycles(right)[0]["tier"] == "long_term"
    e = engine("omf-trust-v-truthy")
    e.import_document("t", doc(item("a", lifecycle=CLAIM, v=True)))
    assert lifecycles(e)[0]["tier"] == "history"
    e.import_document("u", doc(item("b", lifecycle=CLAIM, v="1")))
    assert lifecycles(e, "u")[0]["tier"] == "long_term"


def test_untrusted_fields_flow() -> None:
    e = engine()
    it = item("a", project="p", lifecycle=CLAIM, tags=["x", "a", "x"])
    it["extensions"]["memd"].update(chunk_type="plan", ingestion_mode="conversation")
    e.import_document("t", doc(it, app="other"))
    (out,) = exported(e)
    memd = out["extensions"]["memd"]
    assert (out["tags"], memd["project_id"], memd["chunk_type"], memd["ingestion_mode"]) == \
        (["x", "a", "x"], "p", "plan", "conversation")


@pytest.mark.parametrize("given,expected", [("code", "code"), ("nonsense", "doc"), (None, "doc")])
def test_chunk_type_from_str(given: Any, expected: str) -> None:
    e = engine()
    it = item("a")
    if given:
        it["extensions"]["memd"]["chunk_type"] = given
    e.import_document("t", doc(it))
    assert exported(e)[0]["extensions"]["memd"]["chunk_type"] == expected


@pytest.mark.parametrize("given,expected", [("conversation", "conversation"), ("chat", "document")])
def test_ingestion_mode_from_str(given: str, expected: str) -> None:
    e = engine()
    it = item("a")
    it["extensions"]["memd"]["ingestion_mode"] = given
    e.import_document("t", doc(it))
    assert exported(e)[0]["extensions"]["memd"]["ingestion_mode"] == expected


def test_status_and_dates_are_informational() -> None:
    e = engine()
    e.import_document("t", doc(item("a", status="superseded", expires_at="2000-01-01"), app="x"))
    (out,) = exported(e, include_expired=False)
    assert out["extensions"]["memd"]["lifecycle"]["status"] == "final"


def test_foreign_extensions_ignored() -> None:
    e = engine()
    it = item("a")
    it["extensions"]["nanomem"] = {"lifecycle": {"tier": "history"}, "x": [1]}
    e.import_document("t", doc(it))
    assert lifecycles(e)[0]["tier"] == "long_term"


# -- fail-closed lifecycle ------------------------------------------------------------------------------

BAD_LIFECYCLES = [{"status": 1}, {"tier": ["working"]}, {"status": "gone"}, {"tier": "archive"},
                  {"expires_at_ms": "5"}, {"review_after_ms": 1.5}, {"lifecycle_updated_at_ms": True},
                  "final", [1], 3, {"supersedes": 5}]


@pytest.mark.parametrize("bad", BAD_LIFECYCLES)
def test_trusted_malformed_lifecycle_fails_closed(bad: Any) -> None:
    e = engine()
    d = doc(item("first"), item("second", lifecycle=bad))
    with pytest.raises(ValidationError, match="lifecycle"):
        e.preview("t", d)
    with pytest.raises(ValidationError, match="lifecycle"):
        e.import_document("t", d)
    assert e.store.count() == 0


@pytest.mark.parametrize("bad", BAD_LIFECYCLES[:8])
def test_fault_lenient_lifecycle(bad: Any) -> None:
    assert engine("omf-lenient-lifecycle").import_document("t", doc(item("a", lifecycle=bad)))["imported"] == 1


def test_fault_partial_write_on_invalid() -> None:
    e = engine("omf-partial-write-on-invalid")
    with pytest.raises(ValidationError):
        e.import_document("t", doc(item("first"), item("second", lifecycle={"tier": "x"})))
    assert e.store.count() == 1


def test_nulls_and_missing_lifecycle_fields_are_unset() -> None:
    e = engine()
    nulls = dict.fromkeys(("status", "tier", "supersedes", "superseded_by", "expires_at_ms", "review_after_ms",
                           "lifecycle_updated_at_ms"))
    assert e.import_document("t", doc(item("a", lifecycle=nulls), item("b", lifecycle={}),
                                      item("c", lifecycle=None)))["imported"] == 3
    assert all(lc["status"] == "final" and lc["lifecycle_updated_at_ms"] == NOW for lc in lifecycles(e))


# -- supersession --------------------------------------------------------------------------------------

def test_supersedes_edges_are_replayed_onto_fresh_ids() -> None:
    e = engine()
    e.import_document("t", doc(item("old", chunk_id="S1", lifecycle={"status": "superseded", "superseded_by": "S2"}),
                               item("new", chunk_id="S2", lifecycle={"supersedes": "S1"})))
    old, new = exported(e)
    o, n = old["extensions"]["memd"], new["extensions"]["memd"]
    assert {o["chunk_id"], n["chunk_id"]}.isdisjoint({"S1", "S2"})
    assert n["lifecycle"]["supersedes"] == o["chunk_id"] and o["lifecycle"]["superseded_by"] == n["chunk_id"]
    assert o["lifecycle"]["status"] == "superseded"


def test_edges_resolve_forward_references_too() -> None:
    e = engine()
    e.import_document("t", doc(item("new", chunk_id="S2", lifecycle={"supersedes": "S1"}),
                               item("old", chunk_id="S1", lifecycle={"status": "superseded"})))
    new, old = exported(e)
    assert new["extensions"]["memd"]["lifecycle"]["supersedes"] == old["extensions"]["memd"]["chunk_id"]


def test_orphan_edges_are_dropped_status_kept() -> None:
    e = engine()
    e.import_document("t", doc(item("old", chunk_id="S1", lifecycle={"status": "superseded", "superseded_by": "GONE"}),
                               item("head", chunk_id="S3", lifecycle={"supersedes": "MISSING"})))
    old, head = lifecycles(e)
    assert (old["status"], old["superseded_by"], head["supersedes"]) == ("superseded", None, None)


def test_fault_dangling_edges() -> None:
    e = engine("omf-dangling-edges")
    e.import_document("t", doc(item("head", chunk_id="S3", lifecycle={"supersedes": "MISSING"})))
    assert lifecycles(e)[0]["supersedes"] == "MISSING"


def test_fault_drops_supersession() -> None:
    e = engine("omf-drops-supersession")
    e.import_document("t", doc(item("old", chunk_id="S1", lifecycle={"status": "superseded"}),
                               item("new", chunk_id="S2", lifecycle={"supersedes": "S1"})))
    old, new = lifecycles(e)
    assert old["superseded_by"] is None and new["supersedes"] is None


def test_forward_edge_replayed_and_fault_replay_forward_edges_lost() -> None:
    newer_first = doc(item("new", chunk_id="S2", lifecycle={"supersedes": "S1"}),
                      item("old", chunk_id="S1", lifecycle={"status": "superseded"}))
    older_first = doc(*reversed(newer_first["memories"]))
    for fault, kept in ((None, True), ("omf-replay-forward-edges-lost", False)):
        e = engine(fault)
        e.import_document("t", newer_first)
        edges = {i["content"]: i["extensions"]["memd"]["lifecycle"] for i in exported(e)}
        assert (edges["new"]["supersedes"] is not None, edges["old"]["superseded_by"] is not None) == (kept, kept)
        e = engine(fault)
        e.import_document("t", older_first)  # an edge to an earlier item: replayed either way
        assert {i["content"]: i["extensions"]["memd"]["lifecycle"] for i in exported(e)}["new"]["supersedes"]


def test_fresh_ids_and_fault_keeps_source_ids() -> None:
    e = engine()
    e.import_document("t", doc(item("a", chunk_id="SRC")))
    assert exported(e)[0]["extensions"]["memd"]["chunk_id"] != "SRC"
    k = engine("omf-keeps-source-ids")
    k.import_document("t", doc(item("a", chunk_id="SRC")))
    assert exported(k)[0]["extensions"]["memd"]["chunk_id"] == "SRC"


# -- export ----------------------------------------------------------------------------------------

def seed(e: OmfEngine) -> None:
    e.import_document("t", doc(
        item("final"), item("deleted", lifecycle={"status": "deleted"}), item("error", lifecycle={"status": "error"}),
        item("history", lifecycle={"tier": "history"}), item("superseded", lifecycle={"status": "superseded"}),
        item("expired", lifecycle={"status": "expired"}), item("past", lifecycle={"expires_at_ms": NOW - 1}),
        item("future", lifecycle={"expires_at_ms": NOW + 1}), item("in p", project="p")))


def contents(e: OmfEngine, **flags: Any) -> list[str]:
    return [i["content"] for i in e.export_document("t", **flags)["memories"]]


def test_export_exclusions_and_defaults() -> None:
    e = engine()
    seed(e)
    assert contents(e) == ["final", "superseded", "expired", "past", "future", "in p"]
    assert contents(e, include_history=True) == ["final", "history", "superseded", "expired", "past", "future", "in p"]
    assert contents(e, include_superseded=False) == ["final", "expired", "past", "future", "in p"]
    assert contents(e, include_expired=False) == ["final", "superseded", "future", "in p"]
    assert contents(e, project_id="p") == ["in p"]


@pytest.mark.parametrize("fault,flags,extra", [
    ("omf-exports-deleted", {}, {"deleted", "error"}),
    ("omf-history-by-default", {}, {"history"}),
    ("omf-no-lazy-expiry", {"include_expired": False}, {"past"}),
])
def test_export_faults(fault: str, flags: dict[str, Any], extra: set[str]) -> None:
    good, bad = engine(), engine(fault)
    seed(good)
    seed(bad)
    assert set(contents(bad, **flags)) - set(contents(good, **flags)) == extra


def test_export_document_shape() -> None:
    e = engine()
    e.import_document("t", doc(item("a", category="c", tags=["x"], lifecycle={"status": "superseded"})))
    out = e.export_document("t")["memories"][0]
    assert set(out) <= {"content", "category", "tags", "status", "created_at", "updated_at", "expires_at", "extensions"}
    assert out["status"] == "superseded"
    memd = out["extensions"]["memd"]
    assert memd["v"] == 1 and re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                                       memd["chunk_id"])
    assert set(memd["lifecycle"]) == {"status", "tier", "supersedes", "superseded_by", "expires_at_ms",
                                      "review_after_ms", "lifecycle_updated_at_ms"}


def test_export_writes_incrementally_valid_json() -> None:
    e = engine()
    e.import_document("t", doc(*(item(f"fact {i}") for i in range(5))))
    buf = io.StringIO()
    assert e.export(buf, "t") == 5
    assert len(json.loads(buf.getvalue())["memories"]) == 5


def test_tenants_are_separate() -> None:
    e = engine()
    e.import_document("a", doc(item("x")))
    assert e.import_document("b", doc(item("x")))["imported"] == 1
    assert contents(e) == []


# -- import: buckets, dedup, projects ---------------------------------------------------------------------

def test_buckets_and_archived_filter() -> None:
    e = engine()
    d = doc(item("a"), item("a"), item("  A  "), item("b", status="archived"), item("c", status="expired"))
    assert e.import_document("t", d, include_archived=False) == {"imported": 1, "duplicates": 2, "skipped": 2}
    assert e.import_document("t", d) == {"imported": 2, "duplicates": 3, "skipped": 0}
    assert e.store.count("t") == 3


def test_fault_archived_not_skipped() -> None:
    e = engine("omf-archived-not-skipped")
    assert e.import_document("t", doc(item("b", status="archived")), include_archived=False)["imported"] == 1


def test_dedup_scopes() -> None:
    e = engine()
    e.import_document("t", doc(item("same", project="p")))
    assert e.import_document("t", doc(item("same", project="q"), item("same"), item("same", project="p"))) == \
        {"imported": 2, "duplicates": 1, "skipped": 0}
    f = engine("omf-dedup-across-projects")
    f.import_document("t", doc(item("same", project="p")))
    assert f.import_document("t", doc(item("same", project="q"), item("same")))["duplicates"] == 2


def test_fuzzy_dedup() -> None:
    base = "the release of version two ships on friday with the new importer"
    e = engine()
    e.import_document("t", doc(item(base)))
    assert e.import_document("t", doc(item(base + " today")), fuzzy_threshold=0.5)["duplicates"] == 1
    assert e.import_document("t", doc(item(base + " today")))["imported"] == 1
    with pytest.raises(ValidationError):
        e.import_document("t", doc(), fuzzy_threshold=1.5)


def test_project_resolution_order() -> None:
    e = engine()
    e.import_document("t", doc(item("a", project="p", category="c"), item("b", category="c"), item("c")))
    assert [i["extensions"]["memd"]["project_id"] for i in exported(e)] == ["p", "c", None]
    f = engine("omf-category-ignored")
    f.import_document("t", doc(item("b", category="c")))
    assert exported(f)[0]["extensions"]["memd"]["project_id"] is None


# -- preview ----------------------------------------------------------------------------------------

def test_preview_counts_and_writes_nothing() -> None:
    e = engine()
    e.import_document("t", doc(item("dup", project="p")))
    d = doc(item("dup", project="p"), item("n1", project="p"), item("n2", project="_"), item("n3"), item("n3"),
            item("arch", status="archived"))
    p = e.preview("t", d, include_archived=False)
    assert p == {"total": 6, "to_import": 3, "duplicates": 2, "filtered": 1, "unscoped": 1,
                 "by_project": {"p": 1, "_": 1}}
    assert e.store.count() == 1
    r = e.import_document("t", d, include_archived=False)
    assert (r["imported"], r["duplicates"], r["skipped"]) == (p["to_import"], p["duplicates"], p["filtered"])


def test_fault_preview_writes() -> None:
    e = engine("omf-preview-writes")
    e.preview("t", doc(item("a")))
    assert e.store.count() == 1


def test_fault_project_export_cached() -> None:
    for name, listed in ((None, ["a", "b"]), ("omf-project-export-cached", ["a"])):
        e = engine(name)
        e.import_document("t", doc(item("a", project="p")))
        exported(e, project_id="p")
        e.import_document("t", doc(item("b", project="p")))
        assert [it["content"] for it in exported(e, project_id="p")] == listed
        assert len(exported(e)) == 2  # the whole tenant's export is not cached


def test_fault_export_page_drops_last() -> None:
    many = doc(*(item(f"m{n}") for n in range(1_001)))
    for name, count in ((None, 1_001), ("omf-export-page-drops-last", 1_000)):
        e = engine(name)
        e.import_document("t", many)
        contents = [it["content"] for it in exported(e)]
        assert len(contents) == count
    assert "m999" not in contents and "m1000" in contents


def test_fault_preview_ignores_fuzzy() -> None:
    base = "the quarterly release of the storage engine ships on the first friday"
    for name, duplicates in ((None, 1), ("omf-preview-ignores-fuzzy", 0)):
        e = engine(name)
        e.import_document("t", doc(item(base)))
        assert e.preview("t", doc(item(base + " again")), fuzzy_threshold=0.5)["duplicates"] == duplicates
        assert e.import_document("t", doc(item(base + " again")), fuzzy_threshold=0.5)["duplicates"] == 1


def test_fault_non_object_item_crash() -> None:
    for bad in (1, None, "text"):
        with pytest.raises(ValidationError):
            engine().import_document("t", doc(item("a"), bad))
    e = engine("omf-non-object-item-crash")
    with pytest.raises(AttributeError):
        e.import_document("t", doc(item("a"), 1))
    with pytest.raises(ValidationError):  # a string item still reaches the type test
        e.import_document("t", doc(item("a"), "text"))


def test_fault_dedup_across_tenants() -> None:
    both = doc(item("a", project="p"), item("b"))
    right = engine()
    right.import_document("t", both)
    assert right.import_document("u", both) == {"imported": 2, "duplicates": 0, "skipped": 0}
    e = engine("omf-dedup-across-tenants")
    e.import_document("t", both)
    assert e.import_document("u", both) == {"imported": 0, "duplicates": 2, "skipped": 0}
    assert e.import_document("v", doc(item("a", project="q"))) == {"imported": 1, "duplicates": 0, "skipped": 0}


def test_fault_preview_miscounts() -> None:
    e = engine("omf-preview-miscounts")
    e.import_document("t", doc(item("a")))
    assert e.preview("t", doc(item("a")))["to_import"] == 1
    assert e.import_document("t", doc(item("a")))["imported"] == 0


def test_self_roundtrip() -> None:
    e = engine()
    seed(e)
    first = e.export_document("t", include_history=True)
    e.import_document("u", first)
    second = e.export_document("u", include_history=True)
    strip = lambda d: [(i["content"], i["tags"], i["extensions"]["memd"]["project_id"],  # noqa: E731
                        i["extensions"]["memd"]["lifecycle"]["status"], i["extensions"]["memd"]["lifecycle"]["tier"])
                       for i in d["memories"]]
    assert strip(first) == strip(second)


def test_every_omf_fault_is_registered() -> None:
    names = {n for n, f in FAULTS.items() if f.spec == "omf" and not f.stateful}
    assert len(names) == 76 and all(n.startswith("omf-") for n in FAULTS if FAULTS[n].spec == "omf")
    assert all(FAULTS[n].since == "1.0" and FAULTS[n].breaks for n in names)


# -- hostile input: a clear error and nothing written, never a crash --------------------------------------

def test_out_of_range_ms_fails_validation_and_extremes_export() -> None:
    e = engine()
    with pytest.raises(ValidationError):
        e.import_document("t", doc(item("a", lifecycle={"expires_at_ms": 1 << 63})))
    extremes = {"expires_at_ms": -(1 << 63), "review_after_ms": (1 << 63) - 1, "lifecycle_updated_at_ms": (1 << 63) - 1}
    e.import_document("t", doc(item("a", lifecycle=extremes)))
    (out,) = exported(e)
    assert "expires_at" not in out  # no calendar date shows it: the informational field is left out
    assert {k: out["extensions"]["memd"]["lifecycle"][k] for k in extremes} == extremes


@pytest.mark.parametrize("where", ["content", "tag", "project"])
def test_lone_surrogates_fail_validation(where: str) -> None:
    e = engine()
    bad = "x\ud800"
    it = item(bad) if where == "content" else item("a", tags=[bad]) if where == "tag" else item("a", project=bad)
    with pytest.raises(ValidationError, match="not valid Unicode"):
        e.import_document("t", doc(item("ok"), it))
    assert e.store.count() == 0
    with pytest.raises(ValidationError):
        e.import_document("x\udcff", doc(item("ok")))


def test_memory_text_is_stored_verbatim() -> None:
    e = engine()
    hostile = "'); DROP TABLE chunks; -- \u0000 <script>{{x}}</script> \u202e"
    e.import_document("t", doc(item(hostile, tags=["%s", "?"], project="p'; --")))
    (out,) = exported(e)
    assert (out["content"], out["tags"], out["extensions"]["memd"]["project_id"]) == (hostile, ["%s", "?"], "p'; --")


def test_every_omf_fault_is_exercised_here() -> None:
    """Each fault has a test above showing the behaviour it changes (by its quoted name)."""
    from pathlib import Path

    source = Path(__file__).read_text(encoding="utf-8")
    # the faults only a sequence shows are proven by tests/harness/test_stateful_faults_upp_omf.py
    missing = [n for n, f in FAULTS.items() if f.spec == "omf" and not f.stateful and f'"{n}"' not in source]
    assert missing == []


# -- faults calibrated one by one (issue 5) ----------------------------------------------------------

def test_fault_large_document_crash() -> None:
    many = doc(*(item(f"m{n}") for n in range(5_001)))
    assert engine().preview("t", many)["total"] == 5_001
    with pytest.raises(RuntimeError):
        engine("omf-large-document-crash").preview("t", many)
    assert engine("omf-large-document-crash").preview("t", doc(item("a")))["total"] == 1


def test_fault_missing_v_trusted() -> None:
    e = engine("omf-missing-v-trusted")
    it = item("a", lifecycle=CLAIM)
    del it["extensions"]["memd"]["v"]
    e.import_document("t", doc(it))
    assert lifecycles(e)[0]["tier"] == "history"
    assert engine("omf-missing-v-trusted").import_document("t", doc(item("b", lifecycle=CLAIM, v=2)))["imported"] == 1


def test_fault_v_of_first_item() -> None:
    e = engine("omf-v-of-first-item")
    e.import_document("t", doc(item("a", lifecycle=CLAIM), item("b", lifecycle=CLAIM, v=2)))
    assert [lc["tier"] for lc in lifecycles(e)] == ["history", "history"]  # b trusted with a's v
    e.import_document("u", doc(item("c", lifecycle=CLAIM, v=2), item("d", lifecycle=CLAIM)))
    assert [lc["tier"] for lc in lifecycles(e, "u")] == ["long_term", "long_term"]  # d untrusted with c's v
    clean = engine()
    clean.import_document("t", doc(item("a", lifecycle=CLAIM), item("b", lifecycle=CLAIM, v=2)))
    assert [lc["tier"] for lc in lifecycles(clean)] == ["history", "long_term"]


def test_fault_far_expiry_export_fails() -> None:
    far = {"expires_at_ms": 10 ** 15}  # the year 33658, within 2^53
    clean = engine()
    clean.import_document("t", doc(item("a", lifecycle=far)))
    (exported,) = clean.export_document("t")["memories"]
    assert exported["extensions"]["memd"]["lifecycle"]["expires_at_ms"] == 10 ** 15 and "expires_at" not in exported
    e = engine("omf-far-expiry-export-fails")
    e.import_document("t", doc(item("a", lifecycle=far)))
    with pytest.raises(ValueError):
        e.export_document("t")


def test_fault_restamps_lifecycle() -> None:
    e = engine("omf-restamps-lifecycle")
    e.import_document("t", doc(item("a", lifecycle=CLAIM)))
    (lc,) = lifecycles(e)
    assert (lc["tier"], lc["review_after_ms"], lc["lifecycle_updated_at_ms"]) == ("history", 6, NOW)


def test_fault_category_first() -> None:
    e = engine("omf-category-first")
    e.import_document("t", doc(item("a", project="p", category="c"), item("b", project="p"), item("c")))
    assert [i["extensions"]["memd"]["project_id"] for i in exported(e)] == ["c", "p", None]


@pytest.mark.parametrize("fault,flags,extra", [
    ("omf-superseded-always-exported", {"include_superseded": False}, {"superseded"}),
    ("omf-expired-status-exported", {"include_expired": False}, {"expired"}),
    ("omf-project-filter-ignored", {"project_id": "p"},
     {"final", "superseded", "expired", "past", "future"}),
])
def test_export_filter_faults(fault: str, flags: dict[str, Any], extra: set[str]) -> None:
    good, bad = engine(), engine(fault)
    seed(good)
    seed(bad)
    assert set(contents(bad, **flags)) - set(contents(good, **flags)) == extra


def test_fault_export_by_content() -> None:
    e = engine("omf-export-by-content")
    for c in ("zulu", "alpha", "mike"):
        e.import_document("t", doc(item(c)))
    assert contents(e) == ["alpha", "mike", "zulu"]
    g = engine()
    for c in ("zulu", "alpha", "mike"):
        g.import_document("t", doc(item(c)))
    assert contents(g) == ["zulu", "alpha", "mike"]


def test_fault_export_by_lifecycle_updated() -> None:
    for fault, want in ((None, ["zulu", "alpha", "mike"]), ("omf-export-by-lifecycle-updated", ["mike", "alpha", "zulu"])):
        e = engine(fault)
        for n, c in enumerate(("zulu", "alpha", "mike")):
            e.import_document("t", doc(item(c, lifecycle={"lifecycle_updated_at_ms": 1_700_000_000_000 - n})))
        assert contents(e) == want


def test_fault_project_export_keeps_history() -> None:
    rows = doc(item("old", project="p", lifecycle={"tier": "history"}), item("new", project="p"))
    for fault, want in ((None, ["new"]), ("omf-project-export-keeps-history", ["old", "new"])):
        e = engine(fault)
        e.import_document("t", rows)
        assert [i["content"] for i in e.export_document("t", project_id="p")["memories"]] == want
        assert [i["content"] for i in e.export_document("t")["memories"]] == ["new"]


def test_fault_fuzzy_ignored() -> None:
    base = "the release of version two ships on friday with the new importer"
    e = engine("omf-fuzzy-ignored")
    e.import_document("t", doc(item(base)))
    assert e.import_document("t", doc(item(base + " today")), fuzzy_threshold=0.5)["imported"] == 1
    assert e.import_document("t", doc(item(base)), fuzzy_threshold=0.5)["duplicates"] == 1


def test_fault_tags_lowercased() -> None:
    e = engine("omf-tags-lowercased")
    e.import_document("t", doc(item("a", tags=["Z", "a", "M"])))
    assert exported(e)[0]["tags"] == ["z", "a", "m"]


@pytest.mark.parametrize("fault,field,value,expected", [
    ("omf-unknown-type-other", "chunk_type", "blob", "other"),
    ("omf-unknown-mode-conversation", "ingestion_mode", "streaming", "conversation"),
])
def test_fault_unknown_type_mode(fault: str, field: str, value: str, expected: str) -> None:
    e = engine(fault)
    it = item("a")
    it["extensions"]["memd"][field] = value
    e.import_document("t", doc(it))
    assert exported(e)[0]["extensions"]["memd"][field] == expected


def test_fault_untrusted_drops_fields() -> None:
    e = engine("omf-untrusted-drops-fields")
    it = item("a", project="p")
    it["extensions"]["memd"].update(chunk_type="plan", ingestion_mode="conversation")
    e.import_document("t", doc(it, app="other"))
    e.import_document("t", doc(dict(it, content="b")))
    a, b = (i["extensions"]["memd"] for i in exported(e))
    assert (a["project_id"], a["chunk_type"], a["ingestion_mode"]) == (None, "doc", "document")
    assert (b["project_id"], b["chunk_type"], b["ingestion_mode"]) == ("p", "plan", "conversation")


def test_fault_memories_optional() -> None:
    d = doc()
    del d["memories"]
    assert engine("omf-memories-optional").import_document("t", d)["imported"] == 0
    with pytest.raises(ValidationError):
        engine("omf-memories-optional").import_document("t", dict(doc(), memories={}))


def test_fault_exports_version_1() -> None:
    e = engine("omf-exports-version-1")
    e.import_document("t", doc(item("a")))
    first = e.export_document("t")
    assert first["omf"] == "1"
    with pytest.raises(ValidationError):
        e.import_document("u", first)


def test_fault_exports_v_string() -> None:
    e = engine("omf-exports-v-string")
    e.import_document("t", doc(item("a", lifecycle={"tier": "working"})))
    first = e.export_document("t")
    assert first["memories"][0]["extensions"]["memd"]["v"] == "1"
    e.import_document("u", first)  # its own export is no longer trusted
    assert lifecycles(e, "u")[0]["tier"] == "long_term"


def test_fault_exports_sparse_lifecycle() -> None:
    e = engine("omf-exports-sparse-lifecycle")
    e.import_document("t", doc(item("a", chunk_id="A"), item("b", lifecycle={"supersedes": "A"})))
    a, b = lifecycles(e)
    assert a["superseded_by"] is not None and b["supersedes"] == exported(e)[0]["extensions"]["memd"]["chunk_id"]
    for lc in (a, b):  # every null member left out, every set one kept
        assert not {"expires_at_ms", "review_after_ms"} & lc.keys() and {"status", "tier"} <= lc.keys()
    assert "supersedes" not in a and "superseded_by" not in b
    assert "superseded_by" in lifecycles(engine_with(item("b")))[0]


@pytest.mark.parametrize("fault,member", [("omf-refuses-unknown-chunk-type", "chunk_type"),
                                          ("omf-refuses-unknown-ingestion-mode", "ingestion_mode")])
def test_fault_refuses_unknown_vocabulary(fault: str, member: str) -> None:
    def with_member(content: str, value: str) -> dict[str, Any]:
        it = item(content)
        it["extensions"]["memd"][member] = value
        return it

    e = engine(fault)
    with pytest.raises(ValidationError):
        e.import_document("t", doc(with_member("a", "blob")))
    known = {"chunk_type": "plan", "ingestion_mode": "conversation"}[member]
    assert e.import_document("t", doc(with_member("a", known)))["imported"] == 1
    assert engine().import_document("t", doc(with_member("b", "blob")))["imported"] == 1  # the reference: the default


def engine_with(*items: dict[str, Any]) -> OmfEngine:
    e = engine()
    e.import_document("t", doc(*items))
    return e


def test_fault_refuses_null_lifecycle() -> None:
    e = engine("omf-refuses-null-lifecycle")
    with pytest.raises(ValidationError):
        e.import_document("t", doc(item("a", lifecycle={"status": "draft", "tier": None})))
    assert e.import_document("t", doc(item("a", lifecycle={"status": "draft"})))["imported"] == 1


def test_fault_preview_no_by_project() -> None:
    p = engine("omf-preview-no-by-project").preview("t", doc(item("a", project="p")))
    assert "by_project" not in p and p["to_import"] == 1


def test_fault_refuses_empty_memories() -> None:
    with pytest.raises(ValidationError):
        engine("omf-refuses-empty-memories").import_document("t", doc())
    assert engine("omf-refuses-empty-memories").import_document("t", doc(item("a")))["imported"] == 1


def test_fault_status_sets_lifecycle() -> None:
    e = engine("omf-status-sets-lifecycle")
    e.import_document("t", doc(item("a", status="draft"), item("b", status="archived"), app="other"))
    assert [lc["status"] for lc in lifecycles(e)] == ["draft", "final"]


def test_fault_dates_set_expiry() -> None:
    e = engine("omf-dates-set-expiry")
    plain = {"content": "a", "expires_at": "2001-01-01"}
    e.import_document("t", doc(plain, app=None))
    assert lifecycles(e)[0]["expires_at_ms"] == 978_307_200_000
    assert exported(e, include_expired=False) == []
    g = engine()
    g.import_document("t", doc(plain, app=None))
    assert lifecycles(g)[0]["expires_at_ms"] is None


@pytest.mark.parametrize("fault,path,value", [
    ("omf-exports-type-uppercase", ("chunk_type",), "DOC"),
    ("omf-exports-mode-uppercase", ("ingestion_mode",), "DOCUMENT"),
    ("omf-exports-tier-hyphen", ("lifecycle", "tier"), "long-term"),
    ("omf-exports-status-active", ("lifecycle", "status"), "active"),
    ("omf-exports-ms-strings", ("lifecycle", "lifecycle_updated_at_ms"), str(NOW)),
])
def test_export_shape_faults(fault: str, path: tuple[str, ...], value: Any) -> None:
    e = engine(fault)
    e.import_document("t", doc(item("a")))
    got: Any = exported(e)[0]["extensions"]["memd"]
    for key in path:
        got = got[key]
    assert got == value


def test_fault_exports_sparse_project_and_no_chunk_id() -> None:
    e = engine("omf-exports-sparse-project")
    e.import_document("t", doc(item("a"), item("b", project="p")))
    a, b = (i["extensions"]["memd"] for i in exported(e))
    assert "project_id" not in a and b["project_id"] == "p"
    k = engine("omf-exports-no-chunk-id")
    k.import_document("t", doc(item("a")))
    assert "chunk_id" not in exported(k)[0]["extensions"]["memd"]


def test_fault_exports_null_category() -> None:
    e = engine("omf-exports-null-category")
    e.import_document("t", doc(item("a"), item("b", category="c")))
    assert [i["category"] for i in exported(e)] == [None, "c"]
    assert "category" not in exported(engine_with(item("a")))[0]


def test_fault_exports_tier_top_level() -> None:
    e = engine("omf-exports-tier-top-level")
    e.import_document("t", doc(item("a")))
    assert exported(e)[0]["tier"] == "long_term"
    assert "tier" not in exported(engine_with(item("a")))[0]


def test_fault_expiry_drops_future() -> None:
    good, bad = engine(), engine("omf-expiry-drops-future")
    seed(good)
    seed(bad)
    assert set(contents(good, include_expired=False)) - set(contents(bad, include_expired=False)) == {"future"}
    assert contents(good) == contents(bad)


# -- interop-only faults (suite/interop/omf.py proves them; the single-target suite passes them) ----------

def test_fault_import_one_pass_edges() -> None:
    newer_first = doc(item("new", chunk_id="n", lifecycle={"supersedes": "o"}),
                      item("old", chunk_id="o", lifecycle={"status": "superseded"}))
    older_first = doc(*reversed(newer_first["memories"]))
    for fault, d, edge in ((None, newer_first, True), ("omf-import-one-pass-edges", newer_first, False),
                           ("omf-import-one-pass-edges", older_first, True)):
        e = engine(fault)
        e.import_document("t", d)
        lcs = {i["content"]: i["extensions"]["memd"]["lifecycle"] for i in exported(e)}
        assert (lcs["new"]["supersedes"] is not None, lcs["old"]["superseded_by"] is not None) == (edge, edge)


def test_fault_import_dates_override_lifecycle() -> None:
    it = item("a", lifecycle={"lifecycle_updated_at_ms": 1_700_000_000_123, "expires_at_ms": 1_600_000_000_250},
              updated_at="2023-11-14T22:13:20Z", expires_at="2020-09-13T12:26:40Z")
    for fault, want in ((None, (1_700_000_000_123, 1_600_000_000_250)),
                        ("omf-import-dates-override-lifecycle", (1_700_000_000_000, 1_600_000_000_000))):
        e = engine(fault)
        e.import_document("t", doc(it))
        (lc,) = lifecycles(e)
        assert (lc["lifecycle_updated_at_ms"], lc["expires_at_ms"]) == want
    untrusted = engine("omf-import-dates-override-lifecycle")
    untrusted.import_document("t", doc(it, app="nanomem"))
    assert lifecycles(untrusted)[0]["expires_at_ms"] is None  # untrusted: defaults, the dates unused


def test_fault_export_truncates_content() -> None:
    long = "x" * 300
    e = engine("omf-export-truncates-content")
    e.import_document("t", doc(item(long), item("short")))
    assert [i["content"] for i in exported(e)] == ["x" * 256, "short"]
    assert exported(engine_with(item(long)))[0]["content"] == long


# -- variants: each decision point made the other way (reference_impl/omf/policy.py) --------------------

def variant(*names: str) -> OmfEngine:
    return OmfEngine(OmfStore(":memory:"), clock=lambda: NOW, variants=names)


def test_tags_are_the_array_sent() -> None:
    e = engine()
    e.import_document("t", doc(item("a", tags=["Z", "a", "M", "a"])))
    assert exported(e)[0]["tags"] == ["Z", "a", "M", "a"]


def test_fault_tags_sorted_unique() -> None:
    e = engine("omf-tags-sorted-unique")
    e.import_document("t", doc(item("a", tags=["Z", "a", "M", "a"])))
    assert exported(e)[0]["tags"] == ["M", "Z", "a"]


def test_variant_preview_stored_rows_only() -> None:
    twice = doc(item("a"), item("b"), item("a"))
    assert engine().preview("t", twice)["to_import"] == 2
    e = variant("omf-preview-stored-rows-only")
    assert (e.preview("t", twice)["to_import"], e.import_document("t", twice)["imported"]) == (3, 2)
    assert e.preview("t", doc(item("a")))["duplicates"] == 1  # stored rows are still looked up
    assert e.store.count() == 2  # and the preview wrote nothing


def test_variant_lifecycle_error_keeps_earlier_items_only_for_lifecycle_errors() -> None:
    e = variant("omf-lifecycle-error-keeps-earlier")
    with pytest.raises(ValidationError):
        e.import_document("t", doc(item("first"), item("second", lifecycle={"tier": "x"}), item("third")))
    assert [i["content"] for i in exported(e)] == ["first"]
    with pytest.raises(ValidationError):  # whole-document validation still writes nothing
        e.import_document("u", doc(item("first"), item("   ")))
    with pytest.raises(ValidationError):  # nor does a preview
        e.preview("v", doc(item("first"), item("second", lifecycle={"tier": "x"})))
    assert e.store.count("u") == e.store.count("v") == 0


def test_variant_dedup_stored_rows_only() -> None:
    e = variant("omf-dedup-stored-rows-only")
    assert e.import_document("t", doc(item("same"), item("same"))) == {"imported": 2, "duplicates": 0, "skipped": 0}
    assert e.preview("t", doc(item("same"), item("new"), item("new")))["to_import"] == 2
    assert e.import_document("t", doc(item("same"))) == {"imported": 0, "duplicates": 1, "skipped": 0}


def test_variant_canonical_verbatim_and_word_trigrams() -> None:
    e = variant("omf-canonical-verbatim")
    e.import_document("t", doc(item("Fact  A")))
    assert e.import_document("t", doc(item("fact a")))["imported"] == 1
    assert e.import_document("t", doc(item("Fact  A")))["duplicates"] == 1
    e = variant("omf-word-trigrams")
    base = "the quarterly release of the storage engine ships on the first friday of june"
    e.import_document("t", doc(item(base)))
    assert e.import_document("t", doc(item(base + " again")), fuzzy_threshold=0.5)["duplicates"] == 1
    assert e.import_document("t", doc(item("something else entirely")), fuzzy_threshold=0.5)["imported"] == 1


def test_variant_dedup_before_filter() -> None:
    e = variant("omf-dedup-before-filter")
    e.import_document("t", doc(item("x")))
    assert e.import_document("t", doc(item("x", status="archived"), item("y", status="archived")),
                             include_archived=False) == {"imported": 0, "duplicates": 1, "skipped": 1}
    assert engine().import_document("t", doc(item("x", status="archived")), include_archived=False)["skipped"] == 1


def test_variant_null_project_unscoped() -> None:
    e = variant("omf-null-project-unscoped")
    it = item("n", category="cat")
    it["extensions"]["memd"]["project_id"] = None
    e.import_document("t", doc(it, item("absent", category="cat")))
    assert [i["extensions"]["memd"]["project_id"] for i in exported(e)] == [None, "cat"]
    d = engine()
    d.import_document("t", doc(it))
    assert exported(d)[0]["extensions"]["memd"]["project_id"] == "cat"


def test_variant_vocab_case_sensitive() -> None:
    a, b = item("a"), item("b")
    a["extensions"]["memd"].update(chunk_type="Code", ingestion_mode="Conversation")
    b["extensions"]["memd"].update(chunk_type="code", ingestion_mode="conversation")
    e = variant("omf-vocab-case-sensitive")
    e.import_document("t", doc(a, b))
    assert [(i["extensions"]["memd"]["chunk_type"], i["extensions"]["memd"]["ingestion_mode"])
            for i in exported(e)] == [("doc", "document"), ("code", "conversation")]


def test_variants_of_the_export() -> None:
    lapsed = item("lapsed", lifecycle={"expires_at_ms": NOW - 1})
    e = variant("omf-export-open-item", "omf-hint-status-only", "omf-export-no-dates")
    e.import_document("t", doc(lapsed))
    out = exported(e)[0]
    assert out["importance"] == 0.5 and "status" not in out
    assert not {"created_at", "updated_at", "expires_at"} & set(out)
    d = engine()
    d.import_document("t", doc(lapsed))
    assert exported(d)[0]["status"] == "expired" and "importance" not in exported(d)[0]


def test_variant_v_typed_refuses_a_string_v_and_keeps_other_values_untrusted() -> None:
    e = variant("omf-v-typed")
    with pytest.raises(ValidationError, match="extensions.memd.v must be an integer"):
        e.import_document("t", doc(item("a", v="1")))
    assert e.import_document("t", doc(item("b", v=2, lifecycle={"tier": "history"})))["imported"] == 1
    assert lifecycles(e)[0]["tier"] == "long_term"
    assert engine().import_document("t", doc(item("a", v="1")))["imported"] == 1


def test_variants_of_fuzzy_boundary_category_and_empty_tags() -> None:
    e = variant("omf-fuzzy-strict-threshold")
    e.import_document("t", doc(item("abcdef")))
    assert e.import_document("t", doc(item("abcdef")), fuzzy_threshold=1.0)["imported"] == 0  # exact still dedups
    assert e.import_document("t", doc(item("abcdeg")), fuzzy_threshold=0.6)["imported"] == 1  # 3/5 = 0.6, not above
    assert engine().import_document("t", doc(item("abcdef"), item("abcdeg")), fuzzy_threshold=0.6)["duplicates"] == 1
    e = variant("omf-export-category-from-project", "omf-export-no-empty-tags")
    e.import_document("t", doc(item("scoped", project="p1"), item("own", project="p1", category="c"), item("none")))
    out = exported(e)
    assert [i.get("category") for i in out] == ["p1", "c", None]
    assert not any("tags" in i for i in out)



def test_variant_created_whole_seconds_lists_ties_by_descending_chunk_id_and_seconds_in_order() -> None:
    clock = [NOW]
    e = OmfEngine(OmfStore(":memory:"), clock=lambda: clock[0], variants=("omf-created-whole-seconds",))
    for n, text in enumerate(("first", "second", "third")):
        clock[0] = NOW - NOW % 1000 + n  # three writes within one second
        e.import_document("t", doc(item(text)))
    clock[0] += 1000
    e.import_document("t", doc(item("next second")))
    out = exported(e)
    ties = sorted(out[:3], key=lambda i: i["extensions"]["memd"]["chunk_id"], reverse=True)
    assert [i["content"] for i in out[:3]] == [i["content"] for i in ties] == ["third", "second", "first"]
    assert out[3]["content"] == "next second"


# -- round 24's misses (a blind memd CLI), each a fault shown here ----------------------------------

def test_fault_export_project_prefix() -> None:
    for name, want in (("omf-export-project-prefix", ["a", "b"]), (None, ["a"])):
        e = engine(name) if name else engine()
        e.import_document("t", doc(item("a", project="p1"), item("b", project="p10"), item("c", project="p2")))
        assert [i["content"] for i in e.export_document("t", project_id="p1")["memories"]] == want


def test_fault_untrusted_edges_replayed() -> None:
    for name, edge in (("omf-untrusted-edges-replayed", True), (None, False)):
        e = engine(name) if name else engine()
        e.import_document("t", doc(item("old", chunk_id="s-old"), item("new", lifecycle={"supersedes": "s-old"}),
                                   app="someone-else"))
        new = [i for i in exported(e) if i["content"] == "new"][0]
        assert (new["extensions"]["memd"]["lifecycle"]["supersedes"] is not None) is edge


def test_fault_supersede_chain_clobber() -> None:
    chain = doc(item("a", chunk_id="s-a"), item("b", chunk_id="s-b", lifecycle={"supersedes": "s-a"}),
                item("c", chunk_id="s-c", lifecycle={"supersedes": "s-b"}))
    for name, kept in (("omf-supersede-chain-clobber", False), (None, True)):
        e = engine(name) if name else engine()
        e.import_document("t", chain)
        by = {i["content"]: i["extensions"]["memd"] for i in exported(e)}
        assert (by["b"]["lifecycle"]["supersedes"] == by["a"]["chunk_id"]) is kept


def test_fault_fuzzy_skips_exact_short() -> None:
    for name, imported in (("omf-fuzzy-skips-exact-short", 1), (None, 0)):
        e = engine(name) if name else engine()
        e.import_document("t", doc(item("ok")))
        assert e.import_document("t", doc(item("ok")), fuzzy_threshold=0.5)["imported"] == imported


def test_fault_fuzzy_overlap_coefficient() -> None:
    short = "the storage engine"
    long = short + " ships on the first friday of june with the new planner"
    for name, imported in (("omf-fuzzy-overlap-coefficient", 0), (None, 1)):
        e = engine(name) if name else engine()
        e.import_document("t", doc(item(long)))
        assert e.import_document("t", doc(item(short)), fuzzy_threshold=0.9)["imported"] == imported
