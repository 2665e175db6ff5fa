"""Issue 13: a UPP server that answers near-miss method names (`upp/events`, `upp/export`, …) keeps
failing the naming requirements (`upp/op-*`), and with a descriptor's `[upp.methods]` the semantics
of those operations are judged through its names instead of being skipped; the report says so (the
target's description lists the map, messages say "called as …")."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from memconform.reference_impl.upp.service import NEAR_MISS
from memconform.suite.upp.client import RpcExchange, RpcReply
from memconform.targets.descriptor import DescriptorError, load_descriptor

from .helpers import failed_requirements, run_suite

NAMING = {"upp/op-get-events", "upp/op-delete-events", "upp/op-get-labels", "upp/op-export-events",
          "upp/op-import-events"}
#: Checks that judge the renamed operations' semantics: skipped without the map.
SEMANTIC = ("upp/l2/supersession", "upp/l2/delete-by-ids", "upp/l2/get-labels", "upp/l3/export-file",
            "upp/l3/round-trip", "upp/l3/import")


def _descriptor(tmp: Any, methods: dict[str, str] | None) -> str:
    table = "".join(f'"{op}" = "{name}"\n' for op, name in (methods or {}).items())
    text = (f'name = "near-miss"\nspecs = ["upp@1.0.0"]\n\n[upp.stdio]\n'
            f'command = "{sys.executable} -m memconform.suite.cli serve --upp-stdio --fault upp-near-miss-method-names '
            f'--upp-export-dir {{workdir}}/upp-exports"\n' + (f"\n[upp.methods]\n{table}" if methods else ""))
    path = tmp / "near-miss.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {r["check"]: r["outcome"] for r in report["results"] if r.get("case") in (None, "")}


def test_semantics_are_judged_through_the_aliases_and_the_names_still_fail(pytester, monkeypatch):
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")
    plain = _descriptor(pytester.path, None)
    _, before = run_suite(pytester, f"--target={plain}")
    assert failed_requirements(before) == {f"upp/{n.split('/', 1)[1]}" for n in NAMING}
    skipped = _outcomes(before)
    assert all(skipped[c] == "skipped" for c in SEMANTIC), {c: skipped[c] for c in SEMANTIC}

    mapped = _descriptor(pytester.path, NEAR_MISS)
    _, report = run_suite(pytester, f"--target={mapped}")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) == {f"upp/{n.split('/', 1)[1]}" for n in NAMING}
    judged = _outcomes(report)
    assert all(judged[c] == "passed" for c in SEMANTIC), {c: judged[c] for c in SEMANTIC}
    (target,) = report["targets"]
    assert target["upp_methods"] == NEAR_MISS
    op = next(f["message"] for r in report["results"] for f in r["findings"]
              if f["requirement"] == "upp/op-get-events")
    assert "maps upp/get_events to upp/events" in op and "-32601" in op


def test_a_reply_through_an_alias_says_what_it_was_called_as():
    reply = RpcReply("upp/get_events", {"entity_key": "u"}, RpcExchange("{}", "{}"), response={"result": []},
                     has_result=True, result=[], called_as="upp/events")
    assert reply.describe() == "upp/get_events (called as upp/events) -> result [0 items]"


@pytest.mark.parametrize("table, message", [
    ('"upp/get_event" = "upp/events"\n', "is no UPP operation"),
    ('"upp/get_events" = ""\n', "non-empty string"),
    ('"upp/get_events" = "x"\n"upp/get_labels" = "x"\n', "more than one operation"),
])
def test_a_bad_method_map_is_refused_when_the_file_is_read(tmp_path, table, message):
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\nspecs = ["upp@1.0.0"]\n[upp.stdio]\ncommand = "srv"\n[upp.methods]\n' + table,
                    encoding="utf-8")
    with pytest.raises(DescriptorError, match=message):
        load_descriptor(path)
