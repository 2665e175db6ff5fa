"""The --target language: every kind parses to its value, bad strings say what is expected."""

from __future__ import annotations

import pytest

from memconform.targets.target_string import (
    FileTarget, HttpTarget, McpTarget, ReferenceTarget, TargetStringError, UnsupportedTarget, parse_target,
)


@pytest.mark.parametrize("text, expected", [
    ("reference", ReferenceTarget()),
    ("http://127.0.0.1:8700", HttpTarget("http://127.0.0.1:8700")),
    ("http://127.0.0.1:8700/", HttpTarget("http://127.0.0.1:8700")),
    ("mcp+stdio:memconform serve --stdio", McpTarget("mcp+stdio:memconform serve --stdio", "stdio")),
    ("mcp+http://127.0.0.1:8700/mcp", McpTarget("mcp+http://127.0.0.1:8700/mcp", "http")),
    ("jsonrpc+stdio:upp-server", UnsupportedTarget("jsonrpc+stdio:upp-server", "jsonrpc+stdio")),
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
    ("ftp://x", "expected reference"),
])
def test_bad_strings_say_what_is_expected(text, match):
    with pytest.raises(TargetStringError, match=match):
        parse_target(text)
