"""suite/omf/model.py: each problem names the requirement it breaks; the trust gate; the builders."""

from __future__ import annotations

import re

import pytest

from memconform.suite.omf import model as m


def rids(doc, **kw):
    return {p.requirement for p in m.problems(doc, **kw)}


def export_item(content="fact A", **kw):
    return m.item(content, project=kw.pop("project", None), chunk_type="doc", ingestion_mode="document", **kw)


def test_a_well_formed_export_has_no_problems():
    doc = m.document([export_item("fact A"), export_item("fact B", tags=["t"], category="c")])
    assert m.problems(doc) == []


def test_a_nanomem_document_is_valid_wire_but_not_a_memd_export():
    doc = m.document([m.item("fact", memd=False, tags=["x"])], source=None)
    assert m.problems(doc, produced_by_memd=False) == []
    assert "omf/memd-v" in rids(doc)


@pytest.mark.parametrize("version", ["1.1", "2.0", 1.0, None])
def test_omf_version_other_than_1_0(version):
    assert "omf/omf-version" in rids(m.document([], omf=version))


def test_missing_omf_and_memories():
    doc = m.document([])
    del doc["omf"], doc["memories"]
    assert {"omf/omf-version", "omf/memories-required"} <= rids(doc)
    assert "omf/memories-required" in rids(m.document([], memories={}))


@pytest.mark.parametrize("value,ok", [("2026-04-18T00:00:00Z", True), ("2026-04-18T00:00:00.123Z", False),
                                      ("2026-04-18T00:00:00+00:00", False), ("2026-04-18", False),
                                      ("2026-02-30T00:00:00Z", False), (17, False)])
def test_exported_at_seconds_precision_utc(value, ok):
    assert m.is_valid_exported_at(value) is ok
    assert m.exported_at().endswith("Z") and m.is_valid_exported_at(m.exported_at())


@pytest.mark.parametrize("content,rid", [("", "omf/content-not-blank"), (" \t\n", "omf/content-not-blank"),
                                         (5, "omf/content-required"), (None, "omf/content-required")])
def test_content(content, rid):
    assert rid in rids(m.document([export_item(content)]))


def test_missing_content():
    it = export_item()
    del it["content"]
    assert "omf/content-required" in rids(m.document([it]))


def test_item_field_types():
    assert "omf/item-field-types" in rids(m.document([export_item(tags="a")]))
    assert "omf/item-field-types" in rids(m.document([export_item(tags=["a", 1])]))
    assert "omf/item-field-types" in rids(m.document([export_item(category=3)]))


@pytest.mark.parametrize("lc,rid", [
    ({"status": "archived"}, "omf/lifecycle-status-vocabulary"), ({"status": 1}, "omf/lifecycle-status-vocabulary"),
    ({"tier": "longterm"}, "omf/lifecycle-tier-vocabulary"), ({"expires_at_ms": "1"}, "omf/lifecycle-field-types"),
    ({"review_after_ms": 1.0}, "omf/lifecycle-field-types"), ({"lifecycle_updated_at_ms": None}, "omf/lifecycle-field-types"),
    ({"expires_at_ms": True}, "omf/lifecycle-field-types"), ({"supersedes": 7}, "omf/lifecycle-field-types"),
])
def test_lifecycle_shapes(lc, rid):
    assert rid in rids(m.document([export_item(lifecycle=lc)]))


def test_lifecycle_nulls_are_fine_but_must_be_emitted():
    assert rids(m.document([export_item(lifecycle={"expires_at_ms": None, "supersedes": None})])) == set()
    assert "omf/memd-lifecycle" in rids(m.document([export_item(lifecycle="final")]))
    assert "omf/memd-lifecycle" in rids(m.document([export_item(lifecycle=m.OMIT)]))
    partial = export_item()
    del partial["extensions"]["memd"]["lifecycle"]["tier"]
    assert "omf/memd-lifecycle" in rids(m.document([partial]))


def test_memd_extension_rules():
    assert "omf/memd-v" in rids(m.document([export_item(v=2)]))
    assert "omf/memd-chunk-type" in rids(m.document([m.item("x", project=None, chunk_type="blob")]))
    assert "omf/memd-ingestion-mode" in rids(m.document([m.item("x", project=None, ingestion_mode="chat")]))
    assert "omf/memd-project-id" in rids(m.document([export_item(project=5)]))
    same = export_item(chunk_id="c1"), export_item("other", chunk_id="c1")
    assert "omf/memd-chunk-id" in rids(m.document(list(same)))
    assert "omf/memd-namespace" in rids(m.document([export_item() | {"chunk_id": "x"}]))
    assert "omf/memd-namespace" in rids(m.document([export_item() | {"tier": "working"}]))
    # The item is open: a member of another convention is not memd-specific data (omf-export-open-item).
    assert rids(m.document([export_item() | {"importance": 0.5, "id": "n-1"}])) == set()


def test_trust_gate():
    it = m.item("x")
    assert m.is_trusted(m.document([it]), it)
    assert not m.is_trusted(m.document([it], trusted=False), it)
    assert not m.is_trusted(m.document([it], source=None), it)
    for v in (2, "1", 1.0, True, m.OMIT):
        other = m.item("x", v=v)
        assert not m.is_trusted(m.document([other]), other), v
    assert not m.is_trusted(m.document([m.item("x", memd=False)]), m.item("x", memd=False))


def test_builders():
    it = m.item("x", lifecycle={"tier": "history"}, project="p", category="c", status="archived", chunk_id="id1")
    assert it["category"] == "c" and it["status"] == "archived"
    memd = it["extensions"]["memd"]
    assert memd["chunk_id"] == "id1" and memd["project_id"] == "p" and memd["v"] == 1
    assert memd["lifecycle"]["tier"] == "history" and memd["lifecycle"]["status"] == "final"
    assert set(memd["lifecycle"]) == set(m.LIFECYCLE_FIELDS)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", m.uuid7())
    assert m.DEFAULT_LIFECYCLE == {"status": "final", "tier": "long_term", "expires_at_ms": None,
                                   "review_after_ms": None}
