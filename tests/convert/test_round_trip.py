"""Format round trips: every cycle keeps what the table promises, the table's losses are real, and a
converter that drops a promised field is caught, naming the field, the row and the stage."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from memconform.suite.convert import ConvertOptions, convert, default_corpora, format_matrix, format_round_trip
from memconform.suite.convert import dispatch, mapping, ump_omf, ump_upp
from memconform.suite.interop.model import MISSING, RoundTrip

NOW = datetime(2031, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
OPTS = ConvertOptions(now=NOW)
PAIRS = list(mapping.table())


@pytest.fixture(scope="module")
def corpora():
    return default_corpora()


@pytest.fixture(scope="module")
def matrix(corpora):
    return {(rt.source, rt.destination): rt for rt in format_matrix(corpora, OPTS)}


def test_the_matrix_covers_every_ordered_pair(matrix):
    assert set(matrix) == set(PAIRS) | {(a, a) for a in mapping.FORMATS}
    assert all(isinstance(rt, RoundTrip) for rt in matrix.values())
    assert len(format_matrix(options=OPTS, include_identity=False)) == len(PAIRS)


@pytest.mark.parametrize("source,target", PAIRS)
def test_every_promised_field_survives_every_cycle(matrix, source, target):
    rt = matrix[(source, target)]
    assert rt.losses == (), "\n".join(loss.describe() for loss in rt.losses)
    assert rt.compared > 0
    assert rt.extra["via"] == [source, target, source]


@pytest.mark.parametrize("source,target", PAIRS)
def test_what_the_table_calls_lost_does_not_come_back(matrix, source, target):
    assert matrix[(source, target)].extra["kept_though_lost"] == []


def test_which_cycles_keep_everything(matrix):
    kept = {pair for pair, rt in matrix.items() if rt.kept_everything}
    # UMP cycles leave the unexportable record behind (consent): everything else comes back.
    assert kept == set(matrix) - {("ump", via) for via in mapping.FORMATS if via != "ump"}
    for via in ("omf", "upp", "oams"):
        rt = matrix[("ump", via)]
        assert (rt.placed, rt.compared) == (12, 11)
        assert rt.extra["lost_by_design"] == {f"mapping/ump-{via}/integrity": 1, f"mapping/ump-{via}/record.redacted": 3,
                                              f"mapping/ump-{via}/record.unexportable": 1}
    assert matrix[("omf", "upp")].extra["lost_by_design"] == {"mapping/omf-upp/document.exported_at": 1,
                                                              "mapping/omf-upp/document.source": 1}
    assert matrix[("omf", "oams")].extra["lost_by_design"] == {"mapping/omf-oams/document.exported_at": 1,
                                                               "mapping/omf-oams/document.source": 1}
    assert matrix[("oams", "ump")].extra["lost_by_design"] == matrix[("oams", "omf")].extra["lost_by_design"] == {}


def test_ump_losses_are_real(corpora):
    secrets = ("sk-live-0000", "ak-1111", '"s0"')
    unexportable = next(r for r in corpora["ump"] if r["consent"].get("exportable") is False)
    signed = next(r for r in corpora["ump"] if "integrity" in r)
    for via in ("omf", "upp", "oams"):
        there = convert(corpora["ump"], source="ump", target=via, options=OPTS).document
        text = json.dumps(there, ensure_ascii=False)
        assert not any(s in text for s in secrets), via
        assert unexportable["id"] not in text and unexportable["body"]["text"] not in text
        assert signed["integrity"]["signature"] not in text
        back = convert(there, source=via, target="ump", options=OPTS).document
        assert unexportable["id"] not in {r["id"] for r in back}
        assert all("integrity" not in r for r in back)


def test_envelope_losses_are_real(corpora):
    for source in ("omf", "upp"):
        for via in mapping.FORMATS:
            if via == source or (source, via) not in mapping.table():
                continue
            back = convert(convert(corpora[source], source=source, target=via, options=OPTS).document,
                           source=via, target=source, options=OPTS).document
            assert back["exported_at"] != corpora[source]["exported_at"]
            if source == "omf":
                assert back["source"] != corpora["omf"]["source"]


@pytest.mark.parametrize("source,field", [("ump", "/body/text"), ("upp", "/value"), ("oams", "/value")])
def test_blank_text_is_lost_on_the_way_to_omf(corpora, source, field):
    doc = json.loads(json.dumps(corpora[source]))
    first = doc[0] if source in ("ump", "oams") else doc["events"][0]
    if source == "ump":
        first["body"]["text"] = " \n\t"
    else:
        first["value"] = ""
    result = convert(doc, source=source, target="omf", options=OPTS)
    blank = [x for x in result.lost if x.row == f"mapping/{source}-omf/record.blank-text"]
    assert [x.field for x in blank] == [field]
    rt = format_round_trip(doc, [source, "omf", source], OPTS)
    assert rt.losses == () and rt.compared == {"ump": 10, "upp": 6, "oams": 5}[source]


# -- a broken converter is caught ---------------------------------------------------------------------

def test_a_converter_dropping_a_mapped_field_is_a_loss_on_the_way_there(corpora, monkeypatch):
    real = ump_omf.fresh_item

    def drops_the_project(rec, ctx):
        item = real(rec, ctx)
        item["extensions"]["memd"].pop("project_id", None)
        return item

    monkeypatch.setattr(ump_omf, "fresh_item", drops_the_project)
    rt = format_round_trip(corpora["ump"], ["ump", "omf", "ump"], OPTS)
    assert rt.losses and not rt.kept_everything
    assert {(x.field, x.requirement, x.stage) for x in rt.losses} == {
        ("/scope/project", "mapping/ump-omf/scope.project", "ump → omf")}
    loss = rt.losses[0]
    assert loss.expected == "github.com/example/memconform" and loss.got is MISSING
    assert loss.record == corpora["ump"][0]["id"]


def test_a_converter_dropping_an_extension_field_is_a_loss(corpora, monkeypatch):
    real = ump_upp.fresh_event

    def drops_observed(rec, ctx, taken=frozenset()):
        event = real(rec, ctx, taken)
        del event["extensions"]["ump"]["fields"]["time"]["observed"]
        return event

    monkeypatch.setattr(ump_upp, "fresh_event", drops_observed)
    rt = format_round_trip(corpora["ump"], ["ump", "upp", "ump"], OPTS)
    assert {(x.field, x.requirement, x.stage) for x in rt.losses} == {
        ("/time/observed", "mapping/ump-upp/time.observed", "ump → upp")}
    assert len(rt.losses) == rt.compared


def test_a_carrier_missing_a_required_field_is_caught_where_it_went_missing(corpora, monkeypatch):
    real = ump_upp.fresh_event

    def drops_the_kind(rec, ctx, taken=frozenset()):
        event = real(rec, ctx, taken)
        del event["extensions"]["ump"]["fields"]["kind"]
        return event

    monkeypatch.setattr(ump_upp, "fresh_event", drops_the_kind)
    rt = format_round_trip(corpora["ump"], ["ump", "upp", "ump"], OPTS)
    kinds = [x for x in rt.losses if x.field == "/kind"]
    # a new record says "semantic": every other kind is lost, and it was lost on the way there
    assert {x.record for x in kinds} == {r["id"] for r in corpora["ump"] if r["kind"] != "semantic"
                                         and r["consent"].get("exportable") is not False}
    assert {(x.requirement, x.stage) for x in kinds} == {("mapping/ump-upp/kind", "ump → upp")}
    # the record could not go home: it came back as a new record, and the warning says why
    assert any("does not restore" in w and "/kind" in w for w in rt.extra["warnings"])


def test_a_converter_dropping_a_field_on_the_way_back_names_that_stage(corpora, monkeypatch):
    real = ump_omf.record_from_item

    def forgets_salience(item, rid, part, ctx):
        rec = real(item, rid, part, ctx)
        rec.get("lifecycle", {}).pop("salience", None)
        return rec

    monkeypatch.setattr(ump_omf, "record_from_item", forgets_salience)
    rt = format_round_trip(corpora["ump"], ["ump", "omf", "ump"], OPTS)
    assert rt.losses and {(x.field, x.requirement, x.stage) for x in rt.losses} == {
        ("/lifecycle/salience", "mapping/ump-omf/lifecycle.salience", "omf → ump")}


def test_a_converter_dropping_records_is_a_loss_of_the_record_row(corpora, monkeypatch):
    real = ump_omf.ump_to_omf

    def drops_the_last(records, ctx):
        doc = real(records, ctx)
        doc["memories"].pop()
        return doc

    monkeypatch.setitem(dispatch.DIRECTIONS, ("ump", "omf"), drops_the_last)
    rt = format_round_trip(corpora["ump"], ["ump", "omf", "ump"], OPTS)
    assert any(x.requirement == "mapping/ump-omf/record" and x.field == "" for x in rt.losses)


def test_a_dishonest_table_is_seen(corpora, monkeypatch):
    """A row that says lost for a field that travels shows up in kept_though_lost."""
    table = mapping.table()
    pair = table[("upp", "omf")]
    rows = tuple(mapping.Row(r.source, r.target, r.field, mapping.Fate.LOST, "", "pretend")
                 if r.field == "/confidence" else r for r in pair.rows)
    monkeypatch.setitem(table, ("upp", "omf"), mapping.Pair(pair.source, pair.target, rows, pair.defaults))
    rt = format_round_trip(corpora["upp"], ["upp", "omf", "upp"], OPTS)
    assert {x["field"] for x in rt.extra["kept_though_lost"]} == {"/confidence"}


def test_round_trip_shapes():
    with pytest.raises(ValueError):
        format_round_trip([], ["ump", "omf"])
    with pytest.raises(ValueError):
        format_round_trip([], ["ump", "omf", "upp"])
    rt = format_round_trip([], ["ump", "omf", "ump"], OPTS)
    assert (rt.placed, rt.compared, rt.losses) == (0, 0, ())


# -- OAMS ----------------------------------------------------------------------------------------------

def test_an_oams_cycle_through_ump_gives_back_every_memory_as_it_was(corpora):
    back = convert(convert(corpora["oams"], source="oams", target="ump", options=OPTS).document,
                   source="ump", target="oams", options=OPTS).document
    assert back == corpora["oams"]   # every field: key, namespace, tags, metadata, embedding, parent_id, …
    rt = format_round_trip(corpora["oams"], ["oams", "ump", "oams"], OPTS)
    assert rt.kept_everything and rt.extra["lost_by_design"] == {}


def test_a_ump_cycle_through_oams_keeps_the_records_and_re_signs_with_a_key(corpora):
    from memconform.suite.ump import integrity
    from memconform.suite.ump.testkeys import test_signing_key

    there = convert(corpora["ump"], source="ump", target="oams", options=OPTS).document
    back = convert(there, source="oams", target="ump", options=OPTS).document
    leaving = [r for r in corpora["ump"] if r["consent"].get("exportable") is not False]
    unredacted = [i for i, r in enumerate(leaving) if not r["consent"].get("redact")]
    for i in unredacted:
        want = {k: v for k, v in leaving[i].items() if k != "integrity"}
        assert back[i] == want
    signed = convert(there, source="oams", target="ump",
                     options=ConvertOptions(now=NOW, sign_key=test_signing_key("owner-a"))).document
    assert all(integrity.verify(r).ok for r in signed)


def test_a_converter_dropping_an_oams_field_is_caught(corpora, monkeypatch):
    from memconform.suite.oams.convert import ump_oams

    real = ump_oams.fresh_record

    def drops_tags(memory, ctx):
        rec = real(memory, ctx)
        rec["body"]["structured"]["x-extensions"]["oams"]["fields"].pop("tags", None)
        return rec

    monkeypatch.setattr(ump_oams, "fresh_record", drops_tags)
    rt = format_round_trip(corpora["oams"], ["oams", "ump", "oams"], OPTS)
    assert {(x.field, x.requirement, x.stage) for x in rt.losses} == {
        ("/tags", "mapping/oams-ump/tags", "oams → ump")}


def test_an_omf_document_through_oams_comes_back_with_its_items(corpora):
    there = convert(corpora["omf"], source="omf", target="oams", options=OPTS).document
    back = convert(there, source="oams", target="omf", options=OPTS).document
    assert back["memories"] == corpora["omf"]["memories"]
    assert back["generator"] == corpora["omf"]["generator"]
    assert back["source"] == {"app": "memconform-convert"}   # lost by design: the converter produced it
    memories = convert(corpora["oams"], source="oams", target="omf", options=OPTS).document
    assert convert(memories, source="omf", target="oams", options=OPTS).document == corpora["oams"]
