"""memoturn times (red team 15): the page gives superseded_at and expires_at no format, so every
MUST reads any time a record can state as an instant; only memoturn/created-at-ms asks for integer
milliseconds (a SHOULD)."""

from __future__ import annotations

import pytest

from memconform.suite.memoturn import model

MS = 1795828255891


@pytest.mark.parametrize("value", [MS, float(MS), MS // 1000 * 1000 // 1000, "2026-11-28T01:10:55.891Z",
                                   "2026-11-28T01:10:55.891123Z", "2026-11-28T03:10:55.891+02:00",
                                   "2026-11-28 01:10:55.891z"])
def test_every_readable_form_is_the_same_instant(value):
    got = model.instant_ms(value)
    assert got is not None and abs(got - MS) < 1000, (value, got)


@pytest.mark.parametrize("value", [None, True, "", "not a time", "2026-11-28T01:10:55", "2026-11-28", [MS], {}, 0, -5])
def test_what_is_no_time(value):
    assert model.instant_ms(value) is None
