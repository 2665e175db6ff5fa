"""Badges: what the report computed, per spec/version, bindings of one level combined."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from memconform.reports.badge import badge_rows, badge_svg, shields_endpoint
from memconform.suite.cli import cli

from . import make_report

SVG = "{http://www.w3.org/2000/svg}"


def _row(**bindings):
    return {"target": "t", "spec": "ump", "version": "1.0", "bindings": bindings}


def _texts(svg: str) -> list[str]:
    return [el.text for el in ET.fromstring(svg).iter(f"{SVG}text")]


def test_the_colour_follows_how_far_below_the_spec_versions_top_level_the_best_binding_is():
    # OMF 1.0's requirements are all at L1: L1 is full conformance there, as L3 is for UMP
    omf = {"target": "t", "spec": "omf", "version": "1.0", "bindings": {"cli": "L1"}}
    upp = {"target": "t", "spec": "upp", "version": "1.0.0", "bindings": {"http": "L1"}}
    assert shields_endpoint(omf)["color"] == "brightgreen"
    assert shields_endpoint(upp)["color"] == "yellowgreen"


@pytest.mark.parametrize("bindings, message, color", [
    ({"http": "L3", "mcp": "L3"}, "L3 · HTTP+MCP", "brightgreen"),
    ({"http": "L2"}, "L2 · HTTP", "green"),
    ({"http": "L1", "mcp": "L3", "file": "L0"}, "L3 · MCP, L1 · HTTP, L0 · FILE", "brightgreen"),
    ({"file": "L0", "http": None}, "L0 · FILE", "yellow"),
    ({"http": None, "mcp": None}, "not conformant", "red"),
])
def test_message_and_colour(bindings, message, color):
    row = _row(**bindings)
    assert shields_endpoint(row) == {"schemaVersion": 1, "label": "UMP 1.0", "message": message, "color": color}
    assert _texts(badge_svg(row)) == ["UMP 1.0", message]


@pytest.mark.parametrize("statuses, claims, message, color", [
    ({"http": "partial"}, {}, "not conformant", "red"),
    ({"http": "incomplete"}, {}, "not assessed", "lightgrey"),
    ({"http": "error"}, {}, "not judged", "lightgrey"),
    ({"file": "claim"}, {"file": "L0 (emitted file)"}, "L0 (emitted file) · FILE", "blue"),
])
def test_nothing_reached_is_red_only_when_a_must_failed(statuses, claims, message, color):
    row = {**_row(**{b: None for b in statuses}), "statuses": statuses, **({"claims": claims} if claims else {})}
    assert (shields_endpoint(row)["message"], shields_endpoint(row)["color"]) == (message, color)


def test_a_level_with_failures_above_it_is_never_green():
    row = {**_row(http="L1"), "statuses": {"http": "partial"}}
    assert shields_endpoint(row) == {"schemaVersion": 1, "label": "UMP 1.0", "message": "L1 · HTTP", "color": "orange"}


def test_width_grows_with_the_text():
    short = ET.fromstring(badge_svg(_row(http="L1")))
    long = ET.fromstring(badge_svg(_row(http="L1", mcp="L3", file="L0")))
    assert int(long.get("width")) > int(short.get("width"))
    rects = [float(r.get("width")) for r in long.iter(f"{SVG}rect")]
    assert sum(rects) == float(long.get("width"))  # the two halves fill the badge


def test_rows_group_bindings_of_one_spec_version():
    report = make_report()  # ump 1.0: file reaches L0, http is blocked
    rows = badge_rows(report)
    assert rows == [{"target": "demo", "spec": "ump", "version": "1.0", "bindings": {"file": "L0", "http": None},
                     "statuses": {"file": "conformant", "http": "not-conformant"}}]
    assert shields_endpoint(rows[0])["message"] == "L0 · FILE"


def test_report_text_is_escaped_in_the_svg():
    row = {"target": "t", "spec": "<x>&", "version": '1"', "bindings": {"a<b": "L1"}}
    assert _texts(badge_svg(row)) == ['<X>& 1"', "L1 · A<B"]  # parses, and the text survives intact


def test_cli_report_badge(tmp_path):
    src = tmp_path / "memconform-report.json"
    src.write_text(json.dumps(make_report()), encoding="utf-8")
    out = tmp_path / "badges"
    result = CliRunner().invoke(cli, ["report", "badge", str(src), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["ump-1.0.json", "ump-1.0.svg"]
    # file reached L0, http failed a MUST: the badge shows the level and never green
    assert json.loads((out / "ump-1.0.json").read_text()) == {
        "schemaVersion": 1, "label": "UMP 1.0", "message": "L0 · FILE", "color": "orange"}
    assert _texts((out / "ump-1.0.svg").read_text()) == ["UMP 1.0", "L0 · FILE"]


def test_cli_report_badge_names_targets_when_there_are_several(tmp_path):
    report = make_report()
    other = {**report["levels"][0], "target": "../other"}  # a free-text label must not escape the folder
    report["levels"].append(other)
    src = tmp_path / "r.json"
    src.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "badges"
    result = CliRunner().invoke(cli, ["report", "badge", str(src), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        ".._other-ump-1.0.json", ".._other-ump-1.0.svg", "demo-ump-1.0.json", "demo-ump-1.0.svg"]
