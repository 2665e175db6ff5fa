"""Round trips between formats (each spec's `format` in suite/specs.py: suite/convert) as interop
results: each ordered pair A → B → A on the default corpora, judged by the mapping table
(docs/mapping.md). A broken promise of the table fails; what the table says is lost (consent,
signatures, `exported_at`) is listed in the notes, not charged; a field the table calls lost that
came back anyway fails too, since then the table is wrong."""

from __future__ import annotations

import time
import traceback
from dataclasses import replace

from memconform.suite.interop.pairing import Judged, Pairing
from memconform.suite.outcomes import Outcome

CHECK_ID = "interop/format-round-trip"


def format_pairs() -> list[tuple[str, str]]:
    from memconform.suite.convert.formats import names

    return [(a, b) for a in names() for b in names() if a != b]


def judge_format_pair(a: str, b: str) -> Judged:
    """Runs A → B → A on A's default corpus; never raises (a crash is an error result)."""
    from memconform.suite.convert import default_corpora, format_round_trip
    from memconform.suite.convert.mapping import VERSIONS
    from memconform.targets.base import Subject

    # the formats stand where targets stand in a round trip between implementations
    pairing = Pairing(Subject(a, a, VERSIONS[a], "convert"), Subject(b, b, VERSIONS[b], "convert"))
    started = time.perf_counter()
    try:
        rt = format_round_trip(default_corpora()[a], [a, b, a])
    except Exception:  # a bug in the converters: an error, with the traceback
        return Judged(pairing, Outcome.ERROR, None, "the conversion crashed:\n" + traceback.format_exc(),
                      time.perf_counter() - started, check=CHECK_ID)
    dishonest = list(rt.extra.get("kept_though_lost") or [])
    outcome, reason = Outcome.PASSED, None
    if rt.losses:
        outcome, reason = Outcome.FAILED, f"{len(rt.losses)} promised field(s) did not come back"
    elif dishonest:
        outcome, reason = Outcome.FAILED, f"the mapping table calls lost what came back: {dishonest[:5]}"
    if rt.extra.get("lost_by_design"):
        rt = replace(rt, notes=(*rt.notes, "lost by design (docs/mapping.md): " + ", ".join(
            f"{k} ×{v}" for k, v in sorted(rt.extra["lost_by_design"].items()))))
    return Judged(pairing, outcome, rt, reason, time.perf_counter() - started, check=CHECK_ID)
