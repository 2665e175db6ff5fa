"""JSON equality and the differences a message names (suite/jsonvalue.py)."""

from memconform.suite.jsonvalue import json_differences, json_equal


def test_json_equality_is_json_s_not_python_s():
    assert not json_equal(True, 1) and not json_equal([0], [False])
    assert json_equal(1, 1.0) and json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_the_differences_name_the_member_that_changed():
    sent = {"a": [1, 2], "b": True, "c": {"x": " v "}, "same": "kept"}
    back = {"a": [1, 3], "b": 1, "c": {"x": "v"}, "same": "kept", "extra": None}
    assert json_differences(sent, back, "content") == [
        "content.a[1]: sent 2, came back 3", "content.b: sent true, came back 1",
        'content.c.x: sent " v ", came back "v"', "content.extra: not sent, returned"]
    assert json_differences({"gone": 1}, {}) == ["gone: sent, not returned"]
    assert json_differences([1], [1, 2], "v") == ["v: sent [1], came back [1, 2]"]
    assert json_differences(sent, sent) == []


def test_only_the_first_differences_are_named():
    assert len(json_differences({str(i): i for i in range(10)}, {str(i): -i - 1 for i in range(10)})) == 4
