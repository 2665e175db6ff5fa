"""The --target language: every kind parses to its value, bad strings say what is expected."""

from __future__ import annotations

import pytest

from memconform.targets.target_string import (
    DockerTarget, FileTarget, HttpTarget, JsonRpcTarget, McpTarget, ReferenceTarget, TargetStringError, parse_target,
)


@pytest.mark.parametrize("text, expected", [
    ("reference", ReferenceTarget()),
    ("http://127.0.0.1:8700", HttpTarget("http://127.0.0.1:8700")),
    ("http://127.0.0.1:8700/", HttpTarget("http://127.0.0.1:8700")),
    ("mcp+stdio:memconform serve --stdio", McpTarget("mcp+stdio:memconform serve --stdio", "stdio")),
    ("mcp+http://127.0.0.1:8700/mcp", McpTarget("mcp+http://127.0.0.1:8700/mcp", "http")),
    ("jsonrpc+stdio:upp-server", JsonRpcTarget("jsonrpc+stdio:upp-server", "stdio")),
    ("jsonrpc+stdio:memconform serve --upp-stdio",
     JsonRpcTarget("jsonrpc+stdio:memconform serve --upp-stdio", "stdio")),
    ("jsonrpc+http://127.0.0.1:8700/upp", JsonRpcTarget("jsonrpc+http://127.0.0.1:8700/upp", "http")),
    ("jsonrpc+https://upp.example.com/rpc?key=1", JsonRpcTarget("jsonrpc+https://upp.example.com/rpc?key=1", "http")),
    ("  jsonrpc+http://[::1]:8700/  ", JsonRpcTarget("jsonrpc+http://[::1]:8700/", "http")),
    ("docker:upp/server", DockerTarget("docker:upp/server", "upp/server")),
])
def test_kinds(text, expected):
    assert parse_target(text) == expected


def test_file_target():
    assert isinstance(parse_target("file:x.ump.json"), FileTarget)


@pytest.mark.parametrize("text, match", [
    ("", "empty"),
    ("http://", "no host"),
    ("http://127.0.0.1:8700/?x=1", "without query"),
    ("mcp+stdio:", "needs a command"),
    ("mcp+http:///mcp", "no host"),
    ("reference?fault=no-such-fault", "unknown fault"),
    ("jsonrpc+stdio:", "needs a command"),
    ("jsonrpc+stdio:   ", "needs a command"),
    ("jsonrpc+stdio:server 'unclosed", "cannot split"),
    ("jsonrpc+http:///upp", "no host"),
    ("jsonrpc+http://127.0.0.1:8700/upp#frag", "no fragment"),
    ("jsonrpc+ws://127.0.0.1:8700", "expected reference"),
    ("ftp://x", "expected reference"),
])
def test_bad_strings_say_what_is_expected(text, match):
    with pytest.raises(TargetStringError, match=match):
        parse_target(text)


def test_jsonrpc_targets_open_json_rpc_drivers_without_starting_anything():
    from memconform.targets import open_driver
    from memconform.targets.jsonrpc import JsonRpcDriver

    stdio = open_driver("jsonrpc+stdio:/nonexistent/upp-server --flag 'a b'")
    assert isinstance(stdio, JsonRpcDriver) and stdio.argv == ["/nonexistent/upp-server", "--flag", "a b"]
    assert stdio.describe()["kind"] == "jsonrpc+stdio"  # describing starts no process
    http = open_driver("jsonrpc+http://127.0.0.1:8700/upp")
    assert isinstance(http, JsonRpcDriver) and http.url == "http://127.0.0.1:8700/upp"
    stdio.close()
    http.close()


# -- descriptors (*.toml) -------------------------------------------------------------------------

def test_a_toml_path_is_a_descriptor(tmp_path):
    from memconform.targets.target_string import DescriptorTarget

    path = tmp_path / "mine.toml"
    path.write_text('name = "x"\nspecs = ["omf@1.0"]\n[omf.http]\nbase_url = "http://127.0.0.1:1"\n')
    assert parse_target(str(path)) == DescriptorTarget(str(path), path)


def test_a_shipped_descriptor_is_found_by_name_and_by_path():
    from memconform.targets.target_string import DescriptorTarget, shipped_descriptors

    target = parse_target("reference.toml")
    assert isinstance(target, DescriptorTarget) and target.path == shipped_descriptors() / "reference.toml"
    assert parse_target("targets/descriptors/reference.toml").path.name == "reference.toml"


def test_a_local_file_wins_over_a_shipped_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reference.toml").write_text("")
    assert parse_target("reference.toml").path == __import__("pathlib").Path("reference.toml")


def test_a_missing_descriptor_names_the_shipped_ones():
    with pytest.raises(TargetStringError, match=r"no descriptor file 'nope.toml'.*reference.toml"):
        parse_target("nope.toml")
    with pytest.raises(TargetStringError, match="no descriptor file"):
        parse_target("some/dir/reference.toml")  # a path with folders is never looked up among the shipped


def test_a_descriptor_opens_a_descriptor_driver_and_a_bad_one_is_a_string_error(tmp_path):
    from memconform.targets import open_driver
    from memconform.targets.descriptor import DescriptorDriver

    driver = open_driver("reference.toml")
    assert isinstance(driver, DescriptorDriver) and driver.label == "reference.toml"
    assert [(s.spec, s.binding) for s in driver.subjects()] == [("omf", "cli")]
    driver.close()
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nspecs = ["omf@1.0"]\n[omf.cli]\nexport = "x {nope}"\nimport = "y"\n')
    with pytest.raises(TargetStringError, match=r"line 4.*\{nope\}"):
        open_driver(str(bad))
