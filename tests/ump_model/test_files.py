import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memconform.suite.ump.files import FileProblem, Loaded, Located, dump_json, dump_ndjson, load, write_md_folder
from memconform.suite.ump.markdown import from_markdown, to_markdown

from ._data import EXAMPLE_TEXT, example, minimal
from .strategies import strict_json, valid_records


def rec(n: int) -> dict:
    return minimal(id="urn:ump:" + "abcdefgh"[n % 8] * (n + 1))


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_array(tmp_path):
    p = write(tmp_path / "a.ump.json", dump_json([rec(0), rec(1)]))
    loaded = load(p)
    assert isinstance(loaded, Loaded) and loaded.problems == ()
    assert loaded.records == (Located(str(p), "/0", "json", rec(0)), Located(str(p), "/1", "json", rec(1)))


def test_single_object_and_the_real_example(tmp_path):
    p = write(tmp_path / "responsibility-confirmed.ump.json", EXAMPLE_TEXT)
    loaded = load(str(p))
    assert loaded.problems == ()
    assert loaded.records == (Located(str(p), "", "json", example()),)


def test_source_is_the_path_as_given(tmp_path, monkeypatch):
    write(tmp_path / "sub" / "x.json", dump_json([rec(0)]))
    monkeypatch.chdir(tmp_path)
    assert load("sub/x.json").records[0].source == "sub/x.json"
    assert load("./sub").records[0].source == os.path.join("./sub", "x.json")


@pytest.mark.parametrize("name", ["a.ndjson", "a.jsonl", "a.ump.ndjson", "a.ump.json"])
def test_ndjson(tmp_path, name):
    text = dump_ndjson([rec(0), rec(1)])
    text = text.replace("\n", "\n\n", 1)  # a blank line is skipped
    p = write(tmp_path / name, text)
    loaded = load(p)
    assert loaded.problems == ()
    assert [(r.pointer, r.format, r.record) for r in loaded.records] == \
        [("line 1", "ndjson", rec(0)), ("line 3", "ndjson", rec(1))]


def test_ndjson_bad_lines_do_not_stop_the_rest(tmp_path):
    lines = [json.dumps(rec(0)), "{broken", "[1, 2]", json.dumps(rec(1)), '"text"']
    p = write(tmp_path / "a.ndjson", "\n".join(lines) + "\n")
    loaded = load(p)
    assert [r.pointer for r in loaded.records] == ["line 1", "line 4"]
    assert [(q.pointer, q.requirement) for q in loaded.problems] == \
        [("line 2", "ump/file-json"), ("line 3", "ump/file-json"), ("line 5", "ump/file-json")]
    assert "column" in loaded.problems[0].message
    assert "array" in loaded.problems[1].message


def test_ndjson_with_unicode_line_separators(tmp_path):
    record = minimal()
    record["body"]["text"] = "a\u2028b\x85c\u2029d"
    text = dump_ndjson([record, record])
    assert "\u2028" not in text and len(text.splitlines()) == 2
    raw = json.dumps(record, ensure_ascii=False) + "\n" + json.dumps(record, ensure_ascii=False) + "\n"
    for content in (text, raw):
        loaded = load(write(tmp_path / "x.ndjson", content))
        assert loaded.problems == () and [r.record for r in loaded.records] == [record, record]


def test_md_file(tmp_path):
    p = write(tmp_path / "one.ump.md", to_markdown(example(), "json"))
    loaded = load(p)
    assert loaded.problems == () and loaded.records == (Located(str(p), "", "md", example()),)


def test_bad_md_file(tmp_path):
    p = write(tmp_path / "bad.ump.md", "---\nump: [\n---\n\nx\n")
    loaded = load(p)
    assert loaded.records == ()
    [problem] = loaded.problems
    assert problem.requirement == "ump/file-md" and problem.source == str(p)
    assert problem.pointer.startswith("line ")


def test_folder_recursive_sorted_and_filtered(tmp_path):
    write(tmp_path / "b.ump.json", dump_json([rec(1)]))
    write(tmp_path / "a" / "z.ump.md", to_markdown(rec(2)))
    write(tmp_path / "a" / "deeper" / "y.jsonl", dump_ndjson([rec(3)]))
    write(tmp_path / "c.json", json.dumps(rec(4)))
    write(tmp_path / "README.md", "# not a record")
    write(tmp_path / "notes.txt", "nothing")
    write(tmp_path / ".well-known" / "ump.json", json.dumps({"ump": "1.0", "conformance": "L0"}))
    write(tmp_path / ".hidden.ump.json", "garbage")
    loaded = load(tmp_path)
    assert loaded.problems == ()
    assert [(Path(r.source).relative_to(tmp_path).as_posix(), r.format, r.record["id"]) for r in loaded.records] == [
        ("a/deeper/y.jsonl", "ndjson", rec(3)["id"]),
        ("a/z.ump.md", "md", rec(2)["id"]),
        ("b.ump.json", "json", rec(1)["id"]),
        ("c.json", "json", rec(4)["id"]),
    ]


@pytest.mark.parametrize(
    "content, pointer, words",
    [
        ('[{"a": 1},\n  {"b": }]', "line 2", "column"),
        ("", "line 1", "invalid JSON"),
        ("   \n", "line 2", "invalid JSON"),
        ("not json at all", "line 1", "invalid JSON"),
        ("42", "", "a number"),
        ('"record"', "", "a string"),
        ("null", "", "null"),
        ('[{"ok": 1}, 3]', "/1", "element 1"),
        ('{"x": NaN}', "", "NaN"),
        (b"\xff\xfe\x00garbage", "line 1", "UTF-8"),
    ],
)
def test_garbage_json(tmp_path, content, pointer, words):
    p = write(tmp_path / "bad.ump.json", content)
    loaded = load(p)
    assert loaded.problems, loaded
    problem = loaded.problems[-1]
    assert isinstance(problem, FileProblem) and problem.requirement == "ump/file-json"
    assert problem.source == str(p) and problem.pointer == pointer
    assert words.lower() in problem.message.lower(), problem.message


def test_array_with_non_objects_keeps_the_objects(tmp_path):
    loaded = load(write(tmp_path / "a.json", json.dumps([rec(0), [], "x", rec(1)])))
    assert [r.pointer for r in loaded.records] == ["/0", "/3"]
    assert [p.pointer for p in loaded.problems] == ["/1", "/2"]


def test_duplicate_keys_are_reported(tmp_path):
    loaded = load(write(tmp_path / "a.json", '{"kind": "semantic", "kind": "episodic"}'))
    assert loaded.records[0].record == {"kind": "episodic"}
    assert "duplicate key 'kind'" in loaded.problems[0].message


def test_missing_path(tmp_path):
    for name, req in (("nope.ump.json", "ump/file-json"), ("nope.ump.md", "ump/file-md"), ("nope", "ump/file-json")):
        given = str(tmp_path / name)
        loaded = load(given)
        assert loaded.records == ()
        assert loaded.problems == (FileProblem(given, "", "no such file or folder", req),)


def test_unreadable_file(tmp_path, monkeypatch):
    p = write(tmp_path / "a.ump.json", "[]")

    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    loaded = load(p)
    assert loaded.records == ()
    [problem] = loaded.problems
    assert problem.source == str(p) and "cannot read" in problem.message and "Permission denied" in problem.message


def test_directory_named_like_a_file_is_walked(tmp_path):
    write(tmp_path / "x.ump.json" / "inner.ump.json", dump_json([rec(0)]))
    loaded = load(tmp_path / "x.ump.json")
    assert loaded.problems == () and len(loaded.records) == 1


def test_explicit_file_of_unknown_kind_is_sniffed(tmp_path):
    assert load(write(tmp_path / "a.txt", to_markdown(rec(0)))).records[0].format == "md"
    assert load(write(tmp_path / "b.txt", dump_json([rec(0)]))).records[0].format == "json"


def test_dump_json_and_ndjson():
    records = [example(), rec(1)]
    assert json.loads(dump_json(records)) == records
    assert dump_json(records).startswith("[\n  {")
    assert "é" in dump_json([minimal(kind="é")])
    assert [json.loads(line) for line in dump_ndjson(records).split("\n") if line] == records
    assert dump_ndjson([]) == "" and dump_json([]) == "[]\n"
    with pytest.raises(ValueError):
        dump_json([{"x": float("nan")}])
    with pytest.raises(ValueError):
        dump_ndjson([{"x": float("inf")}])


def test_write_md_folder(tmp_path):
    records = [example(), rec(1), minimal(id="urn:ump:../../../etc/passwd"), minimal(id=None),
               minimal(id="urn:ump:Ab"), minimal(id="urn:ump:--")]
    folder = tmp_path / "out" / "md"
    paths = write_md_folder(records, folder)
    assert [p.name for p in paths] == [
        "scbkrconfirmedexample.ump.md", "bb.ump.md", "---------etc-passwd.ump.md", "record-3.ump.md",
        "-b.ump.md", "record-5.ump.md",
    ]
    for p in paths:
        assert p.parent == folder and p.resolve().is_relative_to(folder.resolve())
    assert from_markdown(paths[0].read_text("utf-8")) == example()
    assert paths[0].read_text("utf-8").startswith("---\n{\n")  # JSON front matter by default
    loaded = load(folder)
    assert loaded.problems == ()
    assert sorted(strict_json(r.record) for r in loaded.records) == sorted(strict_json(r) for r in records)


def test_write_md_folder_name_clashes_and_yaml(tmp_path):
    paths = write_md_folder([minimal(id="urn:ump:ab"), minimal(id="urn:ump:ab"), minimal(id="urn:ump:aB")],
                            tmp_path, front_matter="yaml")
    assert [p.name for p in paths] == ["ab.ump.md", "ab-2.ump.md", "a-.ump.md"]
    assert paths[0].read_text("utf-8").startswith("---\nump: '1.0'\n")


def test_write_md_folder_long_id(tmp_path):
    [p] = write_md_folder([minimal(id="urn:ump:" + "a" * 1000)], tmp_path)
    assert len(p.name) < 200


@settings(max_examples=40, deadline=None)
@given(st.lists(valid_records(), max_size=4), st.sampled_from(["json", "ndjson"]))
def test_dump_then_load(tmp_path_factory, records, fmt):
    folder = tmp_path_factory.mktemp("dump")
    text = dump_json(records) if fmt == "json" else dump_ndjson(records)
    loaded = load(write(folder / f"x.ump.{fmt}", text))
    assert loaded.problems == ()
    assert [strict_json(r.record) for r in loaded.records] == [strict_json(r) for r in records]


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode),
       st.sampled_from(["x.ump.json", "x.json", "x.ndjson", "x.jsonl", "x.ump.md", "x.bin"]))
def test_load_never_raises(tmp_path_factory, content, name):
    folder = tmp_path_factory.mktemp("junk")
    write(folder / name, content)
    for target in (folder / name, folder):
        loaded = load(target)
        assert isinstance(loaded, Loaded)
        for problem in loaded.problems:
            assert problem.requirement in ("ump/file-json", "ump/file-md") and problem.message
        for located in loaded.records:
            assert isinstance(located.record, dict)
