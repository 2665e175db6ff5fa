"""The help of `memconform run`: its own flags, then the suite's options as the plugin declares them
(the group *memconform* of `pytest --help`), so the two never drift apart."""

from __future__ import annotations

from typing import Any

import click

#: set by `memconform run` itself: listing it would only invite passing it again
_ALWAYS_SET = {"--memconform-only"}


class _Group:
    """Stands in for pytest's parser and option group: records what pytest_addoption declares."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> _Group:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append((names, attrs))

    addini = addoption  # not used by the plugin today; harmless if it starts declaring ini keys


def suite_options() -> list[tuple[str, str]]:
    """(option with its value, help) for each option the memconform plugin adds to pytest."""
    from memconform.suite.plugin import pytest_addoption

    group = _Group()
    pytest_addoption(group)  # type: ignore[arg-type]
    rows = []
    for names, attrs in group.options:
        if set(names) & _ALWAYS_SET or not names[0].startswith("-"):
            continue
        term = ", ".join(names)
        if attrs.get("choices"):
            term += " {" + ",".join(map(str, attrs["choices"])) + "}"
        elif attrs.get("action") not in ("store_true", "store_false"):
            term += " " + (attrs.get("metavar") or names[0].lstrip("-").upper())
        rows.append((term, attrs.get("help", "")))
    return rows


class RunCommand(click.Command):
    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Options of memconform run"):
            formatter.write_dl([
                ("--no-progress", "pytest's own output instead of the live progress display"),
                ("-h, --help", "Show this message and exit."),
            ])
        with formatter.section("Suite options (as in pytest --help, group memconform)"):
            formatter.write_dl(suite_options())
        with formatter.section("Any other pytest option"):
            formatter.write_text("-n N (pytest-xdist), -k EXPR, -x, -q, --junitxml PATH, --collect-only, …")
