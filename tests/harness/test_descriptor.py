"""Target descriptors: template expansion (quoting, optional parts, errors) and loading."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from memconform.targets.descriptor import (
    SHIPPED, DescriptorDriver, DescriptorError, Template, load_descriptor,
)


def expand(text: str, **values) -> str:
    return Template.parse(text).expand(values)


@pytest.mark.parametrize("text, values, expected", [
    ("run {tenant}", {"tenant": "t1"}, "run t1"),
    ("run {tenant}", {"tenant": "a b"}, "run 'a b'"),
    ("run {tenant}", {"tenant": "x'; rm -rf /"}, "run 'x'\"'\"'; rm -rf /'"),
    ("run {flag}", {"flag": True}, "run true"),
    ("run {flag}", {"flag": False}, "run false"),
    ("run {f}", {"f": 0.85}, "run 0.85"),
    ("run {project?--project-id {project}} end", {"project": "p 1"}, "run --project-id 'p 1' end"),
    ("run {project?--project-id {project}} end", {"project": None}, "run  end"),
    ("run {project?--project-id {project}} end", {"project": ""}, "run  end"),
    ("run {flag?--flag {flag}}", {"flag": False}, "run --flag false"),  # False is set: only None is not
    ("literal {{braces}}", {}, "literal {braces}"),
])
def test_expansion(text, values, expected):
    assert expand(text, **values) == expected


def test_a_value_with_spaces_and_quotes_stays_one_argument():
    nasty = "it's a \"tenant\" with $HOME and ;"
    assert Template.parse("cmd --tenant-id {tenant} --x").argv({"tenant": nasty}) == ["cmd", "--tenant-id", nasty, "--x"]


def test_names_include_those_inside_optional_parts():
    assert Template.parse("a {x?--x {y}} {z}").names == {"x", "y", "z"}


@pytest.mark.parametrize("text, match", [
    ("run {tenant", "not closed"),
    ("run {}", "not followed by a name"),
    ("run {project?--p {project}", "never closed"),
    ("run }", "lone"),
    ("run {a-b}", "not closed"),
])
def test_bad_templates(text, match):
    with pytest.raises(DescriptorError, match=match):
        Template.parse(text, "here")


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """\
name = "fake"
specs = ["omf@1.0"]
known_deviations = ["OMF-X", { requirement = "OMF-Y", reason = "because" }]
[omf.cli]
export = "tool export --db {db} --tenant-id {tenant} {project?--project-id {project}} --output {file}"
import = "tool import --db {db} --tenant-id {tenant} --input {file} --dry-run {dry_run}"
[omf.vars]
db = "{workdir}/s.sqlite"
[omf.http]
base_url = "http://127.0.0.1:8700/"
"""


def test_a_good_descriptor_loads(tmp_path):
    d = load_descriptor(write(tmp_path, GOOD))
    assert d.name == "fake" and d.specs == (("omf", "1.0"),)
    assert d.http_base_url == "http://127.0.0.1:8700"
    assert [x.requirement for x in d.known_deviations] == ["OMF-X", "OMF-Y"]
    values = d.var_values(tmp_path / "w d")
    assert values["db"] == f"{tmp_path}/w d/s.sqlite" and values["python"] == sys.executable
    argv = d.cli.export.argv({**values, "tenant": "t", "project": None, "file": "/f"})
    assert argv == ["tool", "export", "--db", f"{tmp_path}/w d/s.sqlite", "--tenant-id", "t", "--output", "/f"]


def test_an_unknown_name_is_an_error_naming_the_line(tmp_path):
    text = GOOD.replace("--input {file}", "--input {fiel}")
    with pytest.raises(DescriptorError, match=r"line 6 \(omf.cli.import\).*\{fiel\}.*known here"):
        load_descriptor(write(tmp_path, text))


def test_an_export_only_name_is_unknown_in_import(tmp_path):
    text = GOOD.replace("--dry-run {dry_run}", "{project?--project-id {project}}")
    with pytest.raises(DescriptorError, match=r"omf.cli.import.*\{project\}"):
        load_descriptor(write(tmp_path, text))


@pytest.mark.parametrize("change, match", [
    (("specs = [\"omf@1.0\"]", "specs = [\"omf@2.0\"]"), "known versions of omf"),
    (("specs = [\"omf@1.0\"]", "specs = [\"ump@1.0\"]"), "descriptors can drive omf"),
    (("specs = [\"omf@1.0\"]", "specs = []"), "specs must be a list"),
    (("import = ", "importt = "), r"unknown key\(s\) \['importt'\]"),
    (("base_url = \"http://127.0.0.1:8700/\"", "base_url = \"127.0.0.1:8700\""), "needs base_url"),
    (("db = ", "tenant = "), "may not redefine"),
    (("name = \"fake\"", "name = \"fake\"\ncolour = 1"), "unknown key"),
    (("[omf.vars]", "[omf.vars]\nx = \"{nope}\""), r"omf.vars.x.*\{nope\}"),
    (("name = \"fake\"", "name = \"fake"), "not valid TOML"),
])
def test_bad_descriptors(tmp_path, change, match):
    with pytest.raises(DescriptorError, match=match):
        load_descriptor(write(tmp_path, GOOD.replace(*change)))


def test_a_missing_descriptor(tmp_path):
    with pytest.raises(DescriptorError, match="cannot read descriptor"):
        load_descriptor(tmp_path / "nope.toml")


def test_omf_needs_a_way_to_reach_it(tmp_path):
    with pytest.raises(DescriptorError, match=r"no \[omf.cli\] or \[omf.http\]"):
        load_descriptor(write(tmp_path, 'name = "x"\nspecs = ["omf@1.0"]\n'))


def test_the_shipped_descriptors_load_and_use_memds_flags():
    ref = load_descriptor(SHIPPED / "reference.toml")
    memd = load_descriptor(SHIPPED / "memd.example.toml")
    assert ref.cli and memd.cli
    values = {"tenant": "t", "project": "p", "include_history": True, "include_superseded": None,
              "include_expired": False, "file": "/out", "workdir": "/w", "python": "py"}
    assert shlex.join(memd.cli.export.argv(values)) == (
        "memd export-omf --tenant-id t --project-id p --output /out --include-history true --include-expired false")
    imp = memd.cli.import_.argv({**values, "include_archived": None, "fuzzy_threshold": 0.9, "dry_run": True})
    assert shlex.join(imp) == "memd import-omf --tenant-id t --input /out --fuzzy-threshold 0.9 --dry-run true"


def test_driver_subjects_follow_the_sections(tmp_path):
    both = DescriptorDriver.open(write(tmp_path, GOOD), label="t.toml")
    assert [(s.spec, s.version, s.binding) for s in both.subjects()] == [("omf", "1.0", "cli"), ("omf", "1.0", "http")]
    assert both.describe()["known_deviations"][1] == {"requirement": "OMF-Y", "reason": "because"}
    both.close()
    cli_only = GOOD.split("[omf.http]")[0]
    only = DescriptorDriver.open(write(tmp_path, cli_only, "c.toml"))
    assert [s.binding for s in only.subjects()] == ["cli"]
    only.close()


def test_a_mandatory_name_without_a_value_is_a_target_error_saying_how_to_fix_it():
    from memconform.suite.outcomes import TargetError

    with pytest.raises(TargetError, match=r"\{project\} has no value.*\{project\?--flag \{project\}\}"):
        Template.parse("x --project-id {project}", "t.toml line 3").argv({"project": None})
