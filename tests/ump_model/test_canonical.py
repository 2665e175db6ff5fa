import json

import pytest
from hypothesis import given, settings

from memconform.suite.ump.canonical import CanonicalizationError, canonical_bytes, without_integrity

from ._data import example
from .strategies import json_values


def test_keys_sorted_by_utf16_code_units_rfc8785_example():
    # RFC 8785 §3.2.3 sorting example: the emoji (surrogates D83D…) sorts before U+FB33.
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\x80": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = [k for k in json.loads(canonical_bytes(value))]
    assert keys == ["\r", "1", "\x80", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize(
    "number, text",
    [
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (-0.0, "0"),
        (333333333.33333329, "333333333.3333333"),
        (1e30, "1e+30"),
        (4.50, "4.5"),
        (2e-3, "0.002"),
        (1e-27, "1e-27"),
        (100.0, "100"),
        (9007199254740991, "9007199254740991"),
        (-9007199254740991, "-9007199254740991"),
        (5e-324, "5e-324"),
    ],
)
def test_numbers_as_ecmascript_prints_them(number, text):
    assert canonical_bytes(number) == text.encode()


def test_exact_big_integers_become_doubles():
    assert canonical_bytes(2**53) == b"9007199254740992"
    assert canonical_bytes(10**21) == b"1e+21"
    # JavaScript prints the shortest round-trip digits: (-(2**60)).toString() === '-1152921504606847000'
    assert canonical_bytes({"a": -(2**60)}) == b'{"a":-1152921504606847000}'


def test_inexact_big_integer_names_its_pointer():
    with pytest.raises(CanonicalizationError) as info:
        canonical_bytes({"body": {"structured": {"a/b": [0, 2**53 + 1]}}})
    assert info.value.pointer == "/body/structured/a~1b/1"
    assert isinstance(info.value, ValueError)
    assert "9007199254740993" in str(info.value)


def test_huge_integer_is_refused():
    with pytest.raises(CanonicalizationError) as info:
        canonical_bytes([10**400])
    assert info.value.pointer == "/0"


@pytest.mark.parametrize(
    "value, pointer",
    [
        ({"x": float("nan")}, "/x"),
        ({"x": [float("inf")]}, "/x/0"),
        ({"x": "\ud800"}, "/x"),
        ({"\udc00": 1}, "/\udc00"),
        ({"x": {1: 2}}, "/x"),
        ({"x": {1, 2}}, "/x"),
        ({"x": b"bytes"}, "/x"),
    ],
)
def test_non_json_values_are_refused(value, pointer):
    with pytest.raises(CanonicalizationError) as info:
        canonical_bytes(value)
    assert info.value.pointer == pointer


def test_string_escaping():
    assert canonical_bytes("\u000f\n\"\\/\u2028\x7f€") == b'"\\u000f\\n\\"\\\\/\xe2\x80\xa8\x7f\xe2\x82\xac"'


def test_no_whitespace_and_nested_sorting():
    assert canonical_bytes({"b": [1, {"d": None, "c": True}], "a": "x"}) == b'{"a":"x","b":[1,{"c":true,"d":null}]}'


def test_without_integrity_is_a_shallow_copy():
    record = example()
    stripped = without_integrity(record)
    assert "integrity" not in stripped and "integrity" in record
    assert stripped["body"] is record["body"]
    assert set(stripped) == set(record) - {"integrity"}


def test_integer_printed_by_javascript_for_a_double_is_accepted():
    # JSON.stringify(5.749708526390121e16) === "57497085263901210"; Python reads that back as an int that
    # no double equals exactly, yet it is the canonical text of that double.
    assert canonical_bytes(57497085263901210) == b"57497085263901210"
    assert canonical_bytes(5.749708526390121e16) == b"57497085263901210"
    with pytest.raises(CanonicalizationError):
        canonical_bytes(57497085263901211)


def _as_doubles(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {k: _as_doubles(v) for k, v in value.items()}
    return [_as_doubles(v) for v in value]


@settings(max_examples=80, deadline=None)
@given(json_values)
def test_canonical_form_is_stable_and_means_the_same_value(value):
    out = canonical_bytes(value)
    # Read it back as JavaScript would (every number a double): the same value.
    assert _as_doubles(json.loads(out)) == _as_doubles(value)
    # Canonicalizing the canonical form changes nothing, however Python typed its numbers.
    assert canonical_bytes(json.loads(out)) == out
