"""JUnit XML (`--junitxml`) classnames for memconform items.

pytest makes a classname of the node id's parts joined by dots, and CI tools (Jenkins, GitLab,
Azure) split classnames into package trees at every dot: `http://127.0.0.1:8700` and `ump-1.0`
would become six nested packages. Here each item's classname is
`memconform.<target>.<spec>-<version>.<binding>` (a target error: `memconform.<target>`; a round
trip: `memconform.interop[.formats]`) with the dots inside each part replaced by `_`, and its name
the check id with its case: one package per target, spec version and binding.
"""

from __future__ import annotations

import re

import pytest

_SPEC_VERSION = re.compile(r"^[a-z]+-\d[\w.]*$")


def _part(text: str) -> str:
    return text.replace(".", "_")


def junit_names(nodeid: str) -> tuple[str, str] | None:
    """(classname, name) for a memconform node id, None for any other test."""
    prefix = "memconform::"
    if not nodeid.startswith(prefix):
        return None
    rest = nodeid[len(prefix):]
    if rest.startswith("interop::"):
        parts = rest.split("::")
        return ".".join(["memconform", *map(_part, parts[:-1])]), parts[-1]
    # Target labels may hold "::" (an IPv6 host); check ids and case ids never do: split from the right.
    parts = rest.rsplit("::", 3)
    if len(parts) == 4 and _SPEC_VERSION.match(parts[1]):
        target, spec_version, binding, check = parts
        return f"memconform.{_part(target)}.{_part(spec_version)}.{_part(binding)}", check
    target, _, name = rest.rpartition("::")
    return f"memconform.{_part(target)}", name


class JunitNames:
    """Registered by the plugin for runs with --target (a vendor's own run keeps pytest's names)."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # tryfirst: before junitxml's own hook writes (and, at teardown, closes) the test case; it
        # keeps the attributes a plugin set (record_testreport restores them over its own).
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        names = junit_names(report.nodeid)
        if xml is None or names is None:
            return
        reporter = xml.node_reporter(report)
        reporter.add_attribute("classname", names[0])
        reporter.add_attribute("name", names[1])
