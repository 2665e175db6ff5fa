"""What a seed draws depends on the seed and the effort alone (suite/generation.py): not on which
"local" modules happen to be loaded (a vendor's code, conftest files, memconform installed
editable), from which Hypothesis would otherwise mix parsed constants into its draws."""

from __future__ import annotations

import importlib
import sys

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from memconform.suite.generation import quiet_hypothesis

MARK = "zq-local-constant-"
#: Constants a local module carries: Hypothesis would offer them to text draws
SOURCE = "WORDS = (\n" + "".join(f"    {MARK + str(i)!r},\n" for i in range(200)) + ")\nNUMBERS = (" + \
    ", ".join(str(9_000_000_000 + i) for i in range(200)) + ",)\n"


def _draws(n: int = 400) -> list:
    seen: list = []

    @seed(0)
    @settings(max_examples=n, database=None, deadline=None)
    @given(st.tuples(st.text(max_size=40), st.integers()))
    def collect(value):
        seen.append(value)

    collect()
    return seen


@pytest.fixture
def local_module(tmp_path, monkeypatch):
    (tmp_path / "vendor_code_with_constants.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))

    def load():
        return importlib.import_module("vendor_code_with_constants")

    yield load
    sys.modules.pop("vendor_code_with_constants", None)


def _carries_mark(draws: list) -> bool:
    return any(MARK in text or 9_000_000_000 <= number < 9_000_000_200 for text, number in draws)


def test_a_loaded_local_module_changes_nothing_we_draw(local_module):
    with quiet_hypothesis():
        before = _draws()
    local_module()
    with quiet_hypothesis():
        after = _draws()
    assert before == after
    assert not _carries_mark(after)


def test_without_it_hypothesis_would_draw_the_local_constants(local_module):
    # the guard above is needed: plain Hypothesis offers a loaded local module's constants
    from hypothesis.internal.conjecture import providers

    if not callable(getattr(providers, "_get_local_constants", None)):
        pytest.skip("this Hypothesis mixes in no local constants")
    local_module()
    assert _carries_mark(_draws(1500))
