"""The JSON-RPC 2.0 wire judge: each rule finds what breaks it, under its own requirement id,
and says nothing about what keeps it."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from memconform.suite.upp import jsonrpc as rpc
from memconform.suite.upp.jsonrpc import NOT_JSON, WireProblem

REQ = {"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 7}
NOTE = {"jsonrpc": "2.0", "method": "upp/info", "params": {}}


def ok(id=7, **extra):
    return {"jsonrpc": "2.0", "result": {"protocol_version": "1.0.0"}, "id": id, **extra}


def err(code=-32601, message="Method not found", id=7, **extra):
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id, **extra}


def reqs(problems):
    return sorted(p.requirement for p in problems)


def test_every_requirement_of_the_contract_table_and_no_other():
    text = (Path(__file__).parents[2] / "docs" / "live-upp.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `(upp/[a-z0-9-]+)` \|", text, re.M))
    assert table == set(rpc.REQUIREMENTS)


def test_a_wire_problem_is_a_frozen_value_that_reads_as_a_sentence():
    p = WireProblem(rpc.VERSION, "no jsonrpc")
    assert str(p) == "upp/jsonrpc-version: no jsonrpc"
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.message = "x"


# -- one response --------------------------------------------------------------------------------

@pytest.mark.parametrize("response", [ok(), err(), err(data={"missing_params": ["entity_key"]}),
                                      ok(result=None), err(code=-32000.0)])
def test_a_conforming_response_has_no_problem(response):
    assert rpc.judge_response(response, REQ) == []


@pytest.mark.parametrize("response, requirement", [
    ({"result": 1, "id": 7}, rpc.VERSION),
    ({"jsonrpc": "1.0", "result": 1, "id": 7}, rpc.VERSION),
    ({"jsonrpc": 2.0, "result": 1, "id": 7}, rpc.VERSION),
    ({"jsonrpc": "2.0", "id": 7}, rpc.RESULT_XOR_ERROR),
    ({"jsonrpc": "2.0", "result": 1, "error": {"code": 1, "message": "m"}, "id": 7}, rpc.RESULT_XOR_ERROR),
    (err(code="-32601"), rpc.ERROR_OBJECT),
    (err(code=-32601.5), rpc.ERROR_OBJECT),
    (err(code=True), rpc.ERROR_OBJECT),
    ({"jsonrpc": "2.0", "error": {"code": -32601}, "id": 7}, rpc.ERROR_OBJECT),
    (err(message=None), rpc.ERROR_OBJECT),
    ({"jsonrpc": "2.0", "error": "Method not found", "id": 7}, rpc.ERROR_OBJECT),
    (ok(id="7"), rpc.ID_ECHO),
    (ok(id=8), rpc.ID_ECHO),
    (ok(id=None), rpc.ID_ECHO),
    ({"jsonrpc": "2.0", "result": 1}, rpc.ID_ECHO),
])
def test_each_broken_rule_is_filed_under_its_requirement(response, requirement):
    problems = rpc.judge_response(response, REQ)
    assert reqs(problems) == [requirement], problems
    assert all(p.message for p in problems)


def test_ids_compare_by_json_type_and_value():
    assert rpc.same_id(1, 1.0) and rpc.same_id("a", "a") and rpc.same_id(None, None)
    assert not rpc.same_id(1, "1") and not rpc.same_id(True, 1) and not rpc.same_id(0, None)
    assert rpc.judge_response(ok(id=7.0), REQ) == []
    assert reqs(rpc.judge_response(ok(id=True), {**REQ, "id": 1})) == [rpc.ID_ECHO]
    message = rpc.judge_response(ok(id="7"), REQ)[0].message
    assert '"id": 7' in message and '"id": "7"' in message and "another JSON type" in message


def test_a_request_with_a_null_id_is_answered_with_null():
    assert rpc.judge_response(ok(id=None), {**REQ, "id": None}) == []
    assert reqs(rpc.judge_response(ok(id=1), {**REQ, "id": None})) == [rpc.ID_ECHO]


def test_an_invalid_request_with_a_readable_id_may_get_its_id_or_null():
    invalid = {"jsonrpc": "2.0", "id": 5}  # no method
    assert rpc.judge_response(err(-32600, id=None), invalid) == []
    assert rpc.judge_response(err(-32600, id=5), invalid) == []
    assert reqs(rpc.judge_response(err(-32600, id=6), invalid)) == [rpc.ID_ECHO]


def test_an_answer_that_is_not_an_object_breaks_version_and_result_xor_error():
    assert reqs(rpc.judge_response([ok()], REQ)) == sorted([rpc.VERSION, rpc.RESULT_XOR_ERROR])
    assert reqs(rpc.judge_response("ok", REQ)) == sorted([rpc.VERSION, rpc.RESULT_XOR_ERROR])


def test_nothing_to_echo_when_the_message_sent_was_not_json():
    assert rpc.judge_answer("{oops", err(-32700, id=None)) == []
    assert rpc.judge_answer(b"{oops", err(-32700, id=3)) == []  # expect_parse_error's business


# -- whole exchanges ------------------------------------------------------------------------------

def test_an_exchange_over_http_is_judged_for_bytes_json_type_and_response():
    body = json.dumps(ok()).encode()
    assert rpc.judge_exchange(REQ, body, content_type="application/json; charset=utf-8", http=True) == []
    assert reqs(rpc.judge_exchange(REQ, body, content_type="text/plain", http=True)) == [rpc.HTTP_CONTENT_TYPE]
    assert reqs(rpc.judge_exchange(REQ, body, content_type=None, http=True)) == [rpc.HTTP_CONTENT_TYPE]
    assert rpc.judge_exchange(REQ, body, content_type="text/plain") == []  # stdio: no content type
    assert reqs(rpc.judge_exchange(REQ, json.dumps(ok(id="x")))) == [rpc.ID_ECHO]


@pytest.mark.parametrize("raw, fragment", [
    (b"<h1>Internal Server Error</h1>", "not JSON"),
    (b'{"jsonrpc": "2.0", "result": "caf\xe9", "id": 7}', "not UTF-8"),
    ("\ufeff" + json.dumps(ok()), "byte order mark"),
])
def test_a_message_that_is_not_utf8_json(raw, fragment):
    problems = rpc.judge_exchange(REQ, raw)
    assert rpc.UTF8_JSON in reqs(problems) and any(fragment in p.message for p in problems)


def test_a_bom_is_reported_and_read_past():
    message = rpc.read_message("\ufeff" + json.dumps(ok()))
    assert message.value == ok() and reqs(message.problems) == [rpc.UTF8_JSON]


def test_an_answer_to_a_notification():
    assert rpc.judge_exchange(NOTE, None) == [] and rpc.judge_exchange(NOTE, b"  ") == []
    assert rpc.NOTIFICATION_NO_REPLY in reqs(rpc.judge_exchange(NOTE, json.dumps(ok(id=None))))


def test_a_batch_answer_is_judged_member_by_member():
    batch = [{**REQ, "id": 1}, {**REQ, "id": "b"}, NOTE]
    assert rpc.judge_answer(batch, [ok(id="b"), ok(id=1)]) == []
    problems = rpc.judge_answer(batch, [ok(id=1), {"result": 2, "id": 9}])
    assert reqs(problems) == [rpc.ID_ECHO, rpc.VERSION]
    assert all("member 1" in p.message for p in problems)
    assert rpc.judge_answer(batch, [err(-32600, id=None)]) == []  # null: an invalid member's answer


def test_expects_reply():
    assert rpc.expects_reply(REQ) and rpc.expects_reply({**REQ, "id": None})
    assert not rpc.expects_reply(NOTE) and not rpc.expects_reply(json.dumps(NOTE))
    assert rpc.expects_reply("{oops") and rpc.expects_reply("[]") and rpc.expects_reply({"method": "x"})
    assert not rpc.expects_reply([NOTE, NOTE]) and rpc.expects_reply([NOTE, REQ]) and rpc.expects_reply([1])


# -- stdio lines ----------------------------------------------------------------------------------

def test_one_line_one_message():
    [m] = rpc.read_line(json.dumps(ok()).encode() + b"\r")
    assert m.value == ok() and m.problems == () and m.is_json
    assert rpc.read_line(b"   ") == []
    [garbage] = rpc.read_line(b"server listening on stdin")
    assert garbage.value is NOT_JSON and not garbage.is_json and garbage.problems == ()


def test_two_json_texts_on_one_line_are_two_messages_and_a_framing_problem():
    first, second = rpc.read_line((json.dumps(ok(id=1)) + json.dumps(ok(id=2))).encode())
    assert (first.value["id"], second.value["id"]) == (1, 2)
    assert reqs(first.problems) == [rpc.STDIO_LINE_FRAMING] and second.problems == ()


def test_a_message_over_several_lines_is_read_back_and_reported():
    lines = json.dumps(ok(), indent=2).splitlines()
    assert all(rpc.read_line(line)[0].value is NOT_JSON for line in lines[:2])
    assert rpc.join_lines(lines) == ok() and rpc.join_lines(lines[:-1]) is NOT_JSON
    assert rpc.framing_problem(lines).requirement == rpc.STDIO_LINE_FRAMING


def test_undecodable_bytes_are_reported_and_the_rest_still_read():
    # the value is kept (with U+FFFD) so the UPP checks can go on; the wire check has the problem
    [m] = rpc.read_line(b'{"a": "\xff"}')
    assert m.value == {"a": "\ufffd"} and reqs(m.problems) == [rpc.UTF8_JSON]
    assert "byte 7" in m.problems[0].message
    [junk] = rpc.read_line(b"\xff\xfe")
    assert junk.value is NOT_JSON and reqs(junk.problems) == [rpc.UTF8_JSON]


def test_stray_lines():
    assert rpc.stray_problem(rpc.read_line(b"log: ready")[0], "w").requirement == rpc.UTF8_JSON
    assert rpc.stray_problem(rpc.read_line(json.dumps(ok(id=99)))[0], "w").requirement == rpc.ID_ECHO


# -- provoked rules -------------------------------------------------------------------------------

def test_expect_parse_error():
    assert rpc.expect_parse_error(err(-32700, "Parse error", id=None)) == []
    for wrong, fragment in ((err(-32700, id=1), '"id": 1'), (err(-32600, id=None), "code -32600"),
                            (ok(id=None), "a result"), (None, "nothing came back"), (NOT_JSON, "not JSON"),
                            ([err(-32700, id=None)], "JSON array")):
        problems = rpc.expect_parse_error(wrong)
        assert reqs(problems) == [rpc.PARSE_ERROR] and fragment in problems[0].message, (wrong, problems)


def test_expect_invalid_request():
    assert rpc.expect_invalid_request(err(-32600, id=None), {"foo": "boo"}) == []
    assert reqs(rpc.expect_invalid_request(err(-32600, id=3), {"foo": "boo"})) == [rpc.INVALID_REQUEST]
    sent = '{"jsonrpc": "2.0", "id": 3, "params": {}}'
    assert rpc.expect_invalid_request(err(-32600, id=3), sent) == []
    assert rpc.expect_invalid_request(err(-32600, id=None), sent) == []
    assert reqs(rpc.expect_invalid_request(err(-32601, id=3), sent)) == [rpc.INVALID_REQUEST]


def test_expect_method_not_found_and_error_requirements():
    assert rpc.expect_method_not_found(err(-32601, id=4), 4) == []
    assert reqs(rpc.expect_method_not_found(err(-32601, id="4"), 4)) == [rpc.METHOD_NOT_FOUND]
    assert reqs(rpc.expect_method_not_found({"jsonrpc": "2.0", "id": 4}, 4)) == [rpc.METHOD_NOT_FOUND]
    assert rpc.expect_error(err(-32602, id=1), -32602, requirement="upp/x") == []
    with pytest.raises(ValueError):
        rpc.expect_error(err(-32602), -32602)


def test_expect_no_reply():
    assert rpc.expect_no_reply(None) == [] and rpc.expect_no_reply("") == []
    assert reqs(rpc.expect_no_reply(json.dumps(ok(id=None)))) == [rpc.NOTIFICATION_NO_REPLY]


def test_expect_batch_empty():
    assert rpc.expect_batch_empty(err(-32600, "Invalid Request", id=None)) == []
    assert reqs(rpc.expect_batch_empty([err(-32600, id=None)])) == [rpc.BATCH_EMPTY]
    assert reqs(rpc.expect_batch_empty(err(-32700, id=None))) == [rpc.BATCH_EMPTY]
    assert reqs(rpc.expect_batch_empty(None)) == [rpc.BATCH_EMPTY]


def test_expect_batch():
    batch = [{**REQ, "id": 1}, NOTE, {"foo": "boo"}, {**REQ, "id": "x"}]
    right = [ok(id="x"), err(-32600, id=None), ok(id=1)]
    assert rpc.expect_batch(batch, right) == []
    assert rpc.expect_batch([NOTE, NOTE], None) == []
    # issue 13: an answer to notifications inside a batch is JSON-RPC's MUST NOT, not the batch SHOULD
    assert reqs(rpc.expect_batch([NOTE, NOTE], [])) == [rpc.BATCH_NOTIFICATIONS]
    assert reqs(rpc.expect_batch([NOTE], err(-32600, id=None))) == [rpc.BATCH_NOTIFICATIONS]
    assert rpc.expect_batch([NOTE], err(-32600, id=None), takes_batches=False) == []
    assert reqs(rpc.expect_batch(batch, right + [ok(id=None)])) == [rpc.BATCH_NOTIFICATIONS]
    assert reqs(rpc.expect_batch(batch, None)) == [rpc.BATCH]
    assert reqs(rpc.expect_batch(batch, ok(id=1))) == [rpc.BATCH]
    missing = rpc.expect_batch(batch, [ok(id=1), err(-32600, id=None)])
    assert rpc.BATCH in reqs(missing) and any('"id": "x"' in p.message for p in missing)
    doubled = rpc.expect_batch(batch, right + [ok(id=1)])
    assert any("2 response(s)" in p.message for p in doubled)
    assert any("expected 3" in p.message for p in doubled)
    no_null = rpc.expect_batch(batch, [ok(id="x"), ok(id=1), ok(id=2)])
    assert any("invalid member" in p.message for p in no_null)
