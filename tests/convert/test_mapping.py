"""The mapping table: complete for every pair, consistent with the converters' native fields, and
rendered verbatim as docs/mapping.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.suite.convert import dispatch, mapping, mapping_markdown, omf_upp, ump_omf, ump_upp
from memconform.suite.memoturn.convert import oams_memoturn, omf_memoturn, ump_memoturn, upp_memoturn
from memconform.suite.oams.convert import omf_oams, ump_oams, upp_oams
from memconform.suite.convert.mapping import Fate

PAIRS = list(mapping.table())
DOC = Path(__file__).resolve().parents[2] / "docs" / "mapping.md"

#: The converters' native fields per direction (the code the "mapped" rows describe).
NATIVES = {("ump", "omf"): ump_omf.UMP_TO_OMF, ("omf", "ump"): ump_omf.OMF_TO_UMP,
           ("ump", "upp"): ump_upp.UMP_TO_UPP, ("upp", "ump"): ump_upp.UPP_TO_UMP,
           ("omf", "upp"): omf_upp.OMF_TO_UPP, ("upp", "omf"): omf_upp.UPP_TO_OMF,
           ("ump", "oams"): ump_oams.UMP_TO_OAMS, ("oams", "ump"): ump_oams.OAMS_TO_UMP,
           ("omf", "oams"): omf_oams.OMF_TO_OAMS, ("oams", "omf"): omf_oams.OAMS_TO_OMF,
           ("upp", "oams"): upp_oams.UPP_TO_OAMS, ("oams", "upp"): upp_oams.OAMS_TO_UPP,
           ("memoturn", "ump"): ump_memoturn.MEMOTURN_TO_UMP, ("ump", "memoturn"): ump_memoturn.UMP_TO_MEMOTURN,
           ("memoturn", "oams"): oams_memoturn.MEMOTURN_TO_OAMS, ("oams", "memoturn"): oams_memoturn.OAMS_TO_MEMOTURN,
           ("memoturn", "omf"): omf_memoturn.MEMOTURN_TO_OMF, ("omf", "memoturn"): omf_memoturn.OMF_TO_MEMOTURN,
           ("memoturn", "upp"): upp_memoturn.MEMOTURN_TO_UPP, ("upp", "memoturn"): upp_memoturn.UPP_TO_MEMOTURN}
#: Mapped rows that are structure, not a field copy: a UPP event's entity_key is its package's.
STRUCTURAL = {("upp", "ump", "/entity_key")}


def test_the_doc_is_the_table():
    assert DOC.read_text("utf-8") == mapping_markdown(), (
        "docs/mapping.md differs from suite/convert/mapping.py; regenerate it (suite/convert/render.py)")


@pytest.mark.parametrize("source,target", PAIRS)
def test_every_field_of_the_source_has_exactly_one_row(source, target):
    fields = [r.field for r in mapping.rows(source, target) if not r.is_policy]
    assert sorted(fields) == sorted(mapping.RECORD_FIELDS[source] + mapping.DOCUMENT_FIELDS[source])
    assert mapping.pair(source, target).row("@record").fate is Fate.MAPPED


def test_row_ids_are_unique_and_named_after_the_pair():
    ids = [r.id for pair in mapping.table().values() for r in pair.rows]
    assert len(ids) == len(set(ids))
    assert "mapping/ump-omf/body.text" in ids
    assert "mapping/omf-upp/document.source" in ids
    assert "mapping/ump-omf/record.unexportable" in ids


@pytest.mark.parametrize("source,target", PAIRS)
def test_mapped_rows_are_the_converters_native_fields(source, target):
    rows = {(r.field, r.to) for r in mapping.rows(source, target)
            if r.fate is Fate.MAPPED and r.field.startswith("/") and (source, target, r.field) not in STRUCTURAL}
    assert rows == {(n.a, n.b) for n in NATIVES[(source, target)]}


@pytest.mark.parametrize("source,target", PAIRS)
def test_extension_rows_point_into_the_carrier(source, target):
    carrier = f"{mapping.CARRIER[target]}/{source}/"
    for row in mapping.rows(source, target):
        if row.fate is Fate.EXTENSION:
            assert row.to.startswith(carrier), row
        if row.fate is Fate.LOST:
            assert row.note and not row.to, row


def test_every_lost_row_says_why():
    for pair in mapping.table().values():
        for row in pair.rows:
            if row.fate is Fate.LOST:
                assert len(row.note) > 20, row


def test_what_the_pairs_lose():
    lost = {(a, b): {r.field for r in mapping.rows(a, b) if r.fate is Fate.LOST} for a, b in PAIRS}
    assert lost[("ump", "omf")] == {"/integrity", "@unexportable", "@redacted", "@blank-text"}
    assert lost[("ump", "upp")] == {"/integrity", "@unexportable", "@redacted"}
    assert lost[("omf", "ump")] == lost[("omf", "upp")] == {"document:/source", "document:/exported_at"}
    assert lost[("upp", "ump")] == {"document:/exported_at"}
    assert lost[("upp", "omf")] == {"document:/exported_at", "@blank-text"}
    assert lost[("ump", "oams")] == lost[("ump", "upp")]
    assert lost[("oams", "ump")] == set()   # OAMS has no envelope, and every field rides along
    assert lost[("omf", "oams")] == lost[("omf", "ump")]
    assert lost[("oams", "omf")] == {"@blank-text"}
    assert lost[("upp", "oams")] == lost[("upp", "ump")]
    assert lost[("oams", "upp")] == set()


def test_wildcards_know_their_siblings():
    sib = mapping.siblings("omf")
    assert sib["/extensions"] == {"memd"}
    assert {"content", "tags", "extensions"} <= sib[""]
    assert {"omf", "memories", "source", "exported_at"} <= sib["document:"]
    assert mapping.siblings("upp")["document:"] == {"entity_key", "ontology", "exported_at", "events"}


def test_the_table_and_the_converters_have_the_same_directions():
    assert set(mapping.table()) == set(dispatch.DIRECTIONS)
    assert {(a, b) for a in mapping.FORMATS for b in mapping.FORMATS if a != b and "oams" in (a, b)} <= set(
        mapping.table())
    for a, b in PAIRS:
        assert a in mapping.FORMATS and b in mapping.FORMATS


def test_oams_rows():
    there, back = mapping.pair("ump", "oams"), mapping.pair("oams", "ump")
    assert {(r.field, r.to) for r in there.rows if r.fate is Fate.MAPPED and r.field.startswith("/")} == {
        ("/id", "/key"), ("/body/text", "/value"), ("/time/created", "/created_at"),
        ("/lifecycle/confidence", "/metadata/confidence")}
    assert {(r.field, r.to) for r in back.rows if r.fate is Fate.MAPPED and r.field.startswith("/")} == {
        ("/key", "/id"), ("/value", "/body/text"), ("/created_at", "/time/created"),
        ("/metadata/confidence", "/lifecycle/confidence")}
    # the rest of a memory rides in body.structured["x-extensions"].oams, of a record in metadata["x-extensions"].ump
    for field in ("/namespace", "/tags", "/updated_at", "/parent_id", "/source_id", "/embedding", "/embedding_model",
                  "/metadata/*", "/*"):
        assert back.row(field).fate is Fate.EXTENSION
        assert back.row(field).to == "/body/structured/x-extensions/oams/fields" + field
    assert there.row("/scope/owner").to == "/metadata/x-extensions/ump/fields/scope/owner"
    assert "hash" in there.row("/scope/owner").note
    assert mapping.siblings("oams")["/metadata"] == {"confidence"}
    assert mapping.pair("ump", "oams").row("/integrity").id == "mapping/ump-oams/integrity"


def test_unknown_pair():
    with pytest.raises(KeyError, match="no mapping"):
        mapping.pair("ump", "xml")
