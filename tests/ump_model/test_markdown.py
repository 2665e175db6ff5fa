import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memconform.suite.ump.markdown import ProjectionError, from_markdown, to_markdown
from memconform.suite.ump.record import validate

from ._data import example, minimal
from .strategies import TRICKY_TEXTS, signed_records, strict_json, valid_records

STYLES = ("yaml", "json")


def roundtrip(record, style):
    return from_markdown(to_markdown(record, front_matter=style))


@pytest.mark.parametrize("style", STYLES)
def test_example_round_trips(style):
    record = example()
    text = to_markdown(record, style)
    assert text.startswith("---\n") and text.endswith("\n---\n\n" + record["body"]["text"] + "\n")
    assert strict_json(from_markdown(text)) == strict_json(record)


def test_json_layout_is_the_reference_implementations():
    record = example()
    meta = {k: v for k, v in record.items()}
    meta["body"] = {"structured": record["body"]["structured"]}
    # toMarkdown: `---\n${JSON.stringify(meta, null, 2)}\n---\n\n${body.text}\n`
    assert to_markdown(record, "json") == "---\n" + json.dumps(meta, indent=2, ensure_ascii=False) + \
        "\n---\n\n" + record["body"]["text"] + "\n"


def test_reads_what_the_older_reference_wrote_without_body():
    record = minimal()
    meta = {k: v for k, v in record.items() if k != "body"}
    text = "---\n" + json.dumps(meta, indent=2) + "\n---\n\n" + record["body"]["text"] + "\n"
    assert from_markdown(text) == record


def test_yaml_front_matter_is_block_style_and_order_preserving():
    text = to_markdown(example(), "yaml")
    lines = text.split("\n")
    assert lines[1] == "ump: '1.0'"
    assert [ln.split(":")[0] for ln in lines if ln and not ln.startswith((" ", "-"))][:5] == \
        ["ump", "id", "kind", "body", "scope"]
    assert "{" not in text.split("---")[1]


def test_reads_the_spec_example():
    text = """---
ump: "1.0"
id: urn:ump:jbswy3dpehpk3pxp
kind: procedural
scope: { owner: did:key:z6Mkexample, project: github.com/x/recall, visibility: private }
time: { observed: 2026-06-04T09:58:00Z, valid_from: 2026-06-04T00:00:00Z }
provenance: { actor_kind: user, method: user_correction }
---

Always run `pnpm gate` before handoff.
"""
    record = from_markdown(text)
    assert record == {
        "ump": "1.0",
        "id": "urn:ump:jbswy3dpehpk3pxp",
        "kind": "procedural",
        "body": {"text": "Always run `pnpm gate` before handoff."},
        "scope": {"owner": "did:key:z6Mkexample", "project": "github.com/x/recall", "visibility": "private"},
        "time": {"observed": "2026-06-04T09:58:00Z", "valid_from": "2026-06-04T00:00:00Z"},
        "provenance": {"actor_kind": "user", "method": "user_correction"},
    }
    assert list(record)[:4] == ["ump", "id", "kind", "body"]


def test_yaml_scalars_that_must_stay_strings():
    text = "---\na: 2026-06-04\nb: 2026-06-04T10:00:00Z\nc: =\nd: 2026-06-04 10:00:00\n---\n\nx\n"
    assert from_markdown(text) == {"a": "2026-06-04", "b": "2026-06-04T10:00:00Z", "c": "=",
                                   "d": "2026-06-04 10:00:00", "body": {"text": "x"}}


def test_yaml_1_2_exponent_floats_are_numbers():
    record = from_markdown("---\nlifecycle: {confidence: 1e-3, salience: 5E-1}\n---\n\nx\n")
    assert record["lifecycle"] == {"confidence": 0.001, "salience": 0.5}


@pytest.mark.parametrize("text", TRICKY_TEXTS)
@pytest.mark.parametrize("style", STYLES)
def test_tricky_texts_round_trip(text, style):
    record = minimal()
    record["body"]["text"] = text
    assert roundtrip(record, style)["body"]["text"] == text


@pytest.mark.parametrize("style", STYLES)
def test_awkward_values_round_trip_exactly(style):
    record = minimal()
    record["body"]["structured"] = {
        "big": 1e21, "neg_zero": -0.0, "small": 1e-7, "tiny": 5e-324, "huge": 1.7976931348623157e308,
        "max_safe": 2**53 - 1, "t": True, "f": False, "n": None, "one": 1, "one_float": 1.0,
        "strings": ["1e3", "yes", "no", "on", "null", "~", "2026-06-04", "=", "0x1F", "012", "1_000", "1:20",
                    "", " ", "-", "---", "...", "? x", "- x", "#", "&a", "*a", "!tag", "%", "@", "`",
                    "'", '"', "\t", "a: b", "{x}", "[x]", "\u2028", "\x85", "\ufeff", "\x00"],
        "keys": {"": 1, "1": 2, "true": 3, "null": 4, "a b": 5, "- x": 6, "x" * 200: 7},
        "nested": [[[]], {}, [{}], {"a": []}],
    }
    record["integrity"] = {"content_hash": "blake3:abc", "signature": "ed25519:AA==", "signer": "did:key:z6Mk"}
    back = roundtrip(record, style)
    assert strict_json(back) == strict_json(record)
    assert math.copysign(1.0, back["body"]["structured"]["neg_zero"]) == -1.0
    assert isinstance(back["body"]["structured"]["one"], int)
    assert isinstance(back["body"]["structured"]["one_float"], float)


def test_crlf_file():
    text = to_markdown(minimal(), "yaml").replace("\n", "\r\n")
    assert from_markdown(text) == minimal()
    assert from_markdown(to_markdown(minimal(), "json").replace("\n", "\r\n")) == minimal()
    # Delimiters, the blank line and the final CRLF are syntax; CRLFs inside the body are text.
    crlf = "---\r\nump: '1.0'\r\n---\r\n\r\nline one\r\nline two\r\n\r\n"
    assert from_markdown(crlf)["body"]["text"] == "line one\r\nline two\r\n"
    assert from_markdown("---\r\nump: '1.0'\r\n---\r\n\r\n\r\nx\r\n")["body"]["text"] == "\r\nx"
    assert from_markdown("---\r\nump: '1.0'\r\n---")["body"]["text"] == ""


def test_crlf_in_body_of_lf_file_is_kept():
    record = minimal()
    record["body"]["text"] = "a\r\nb"
    assert from_markdown(to_markdown(record, "json")) == record


def test_bom_and_no_blank_line_and_no_final_newline():
    assert from_markdown("\ufeff---\n{\"ump\": \"1.0\"}\n---\nbody")["body"]["text"] == "body"
    assert from_markdown("---\nump: '1.0'\n---")["body"]["text"] == ""
    assert from_markdown("---\nump: '1.0'\n---   \n\nx\n")["body"]["text"] == "x"


def test_json_front_matter_is_read_as_json():
    # YAML 1.1 would read 1e+21 as a string and choke on nothing here; JSON keeps it a number.
    record = from_markdown('---\n{"n": 1e+21, "m": -0.0, "u": "\\u00e9"}\n---\n\nx\n')
    assert record["n"] == 1e21 and math.copysign(1, record["m"]) == -1 and record["u"] == "é"


def test_yaml_flow_mapping_that_is_not_json():
    assert from_markdown("---\n{ump: '1.0', kind: semantic,}\n---\n\nx\n")["kind"] == "semantic"
    # Not JSON (NaN), but a valid YAML flow mapping, where NaN is a plain string.
    assert from_markdown('---\n{"x": NaN}\n---\n\nx\n')["x"] == "NaN"


@pytest.mark.parametrize(
    "text, line, pointer, words",
    [
        ("no front matter\n", 1, "", "missing front matter"),
        ("", 1, "", "missing front matter"),
        ("--- \nx", 1, "", "unterminated"),
        ("---\nump: '1.0'\n", 1, "", "unterminated"),
        ("---", 1, "", "unterminated"),
        ("----\nump: 1\n---\n", 1, "", "missing front matter"),
        ("---\n- a\n- b\n---\n\nx\n", 2, "", "mapping"),
        ("---\njust a string\n---\n\nx\n", 2, "", "mapping"),
        ("---\n---\n\nx\n", 2, "", "mapping"),
        ("---\nump: '1.0'\nid: x\nkind: [unclosed\n---\n\nx\n", None, "", "YAML"),
        ("---\nump: '1.0'\n  bad: indent\n---\n\nx\n", 3, "", "YAML"),
        ('---\n{"ump": "1.0",\n "id": [}\n---\n\nx\n', 3, "", "JSON"),
        ("---\na: 1\na: 2\n---\n\nx\n", 3, "", "duplicate"),
        ("---\nbody: text\n---\n\nx\n", None, "/body", "body"),
        ("---\nbody: {text: other}\n---\n\nx\n", None, "/body/text", "differs"),
        ("---\nscope: {1: x}\n---\n\nx\n", None, "/scope", "not a string"),
        ("---\nbody: {structured: {b: !!binary aGk=}}\n---\n\nx\n", None, "/body/structured/b", "JSON"),
        ("---\nx: !!python/object:os.system {}\n---\n\nx\n", 2, "", "YAML"),
        ("---\nx: .nan\n---\n\nx\n", None, "/x", "JSON number"),
    ],
)
def test_projection_errors(text, line, pointer, words):
    with pytest.raises(ProjectionError) as info:
        from_markdown(text, source="mem/a.ump.md")
    err = info.value
    assert isinstance(err, ValueError)
    assert err.source == "mem/a.ump.md"
    assert words.lower() in err.message.lower(), err.message
    assert err.pointer == pointer
    if line is not None:
        assert err.line == line, err
    assert str(err).startswith("mem/a.ump.md")


def test_body_text_identical_in_front_matter_is_accepted():
    assert from_markdown("---\nbody: {text: x}\n---\n\nx\n") == {"body": {"text": "x"}}


def test_to_markdown_refuses():
    with pytest.raises(ValueError):
        to_markdown(minimal(), front_matter="toml")
    for bad in ({"ump": "1.0"}, minimal(body={"text": 5}), minimal(body="x")):
        with pytest.raises(ProjectionError) as info:
            to_markdown(bad)
        assert info.value.pointer == "/body/text"
    bad = minimal()
    bad["body"]["structured"] = {"x": float("nan")}
    with pytest.raises(ProjectionError):
        to_markdown(bad, "json")
    bad["body"]["structured"] = {"x": {1, 2}}
    with pytest.raises(ProjectionError):
        to_markdown(bad, "yaml")


@settings(max_examples=120, deadline=None)
@given(valid_records(), st.sampled_from(STYLES))
def test_any_valid_record_round_trips(record, style):
    back = roundtrip(record, style)
    assert strict_json(back) == strict_json(record)
    assert validate(back) == ()


@settings(max_examples=30, deadline=None)
@given(signed_records(), st.sampled_from(STYLES))
def test_signed_records_still_verify_after_a_round_trip(record, style):
    from memconform.suite.ump.integrity import verify

    assert verify(from_markdown(to_markdown(record, style))).ok


@settings(max_examples=60, deadline=None)
@given(valid_records(), st.sampled_from(STYLES))
def test_crlf_conversion_of_any_projection(record, style):
    # An editor that turns every LF of the file into CRLF changes only the body's own line ends.
    back = from_markdown(to_markdown(record, style).replace("\n", "\r\n"))
    expected = dict(record, body=dict(record["body"], text=record["body"]["text"].replace("\n", "\r\n")))
    assert strict_json(back) == strict_json(expected)


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.text(max_size=200),
    st.text(max_size=200).map(lambda s: "---\n" + s),
    st.text(max_size=200).map(lambda s: "---\n" + s + "\n---\n\nbody\n"),
    st.lists(st.sampled_from(["---", "a: 1", "{", "}", "- x", "body: {}", "'", ": :", "\t", "!!set {}", "&a [*a]"]),
             max_size=8).map(lambda ls: "---\n" + "\n".join(ls) + "\n---\n"),
))
def test_from_markdown_raises_only_projection_error(text):
    try:
        record = from_markdown(text)
    except ProjectionError:
        return
    assert isinstance(record, dict) and isinstance(record["body"]["text"], str)


@pytest.mark.parametrize("style", STYLES)
def test_record_that_is_only_a_body(style):
    assert roundtrip({"body": {"text": "x"}}, style) == {"body": {"text": "x"}}
    assert roundtrip({"body": {"text": "x", "structured": {}}}, style) == {"body": {"text": "x", "structured": {}}}


def test_yaml_aliases():
    record = from_markdown("---\nx: &a [1]\ny: *a\n---\n\nb\n")
    assert record["x"] == record["y"] == [1] and record["x"] is not record["y"]
    for text in ("---\nx: &a [*a]\n---\n\nb\n", "---\nx: &a {y: *a}\n---\n\nb\n"):
        with pytest.raises(ProjectionError) as info:
            from_markdown(text)
        assert "contain itself" in info.value.message


def test_absurd_nesting_is_a_projection_error():
    for fm in ("[" * 5000 + "]" * 5000, "x: " + "[" * 5000 + "]" * 5000, '{"x": ' + "[" * 5000 + "]" * 5000 + "}"):
        with pytest.raises(ProjectionError):
            from_markdown("---\n" + fm + "\n---\n\nb\n")
