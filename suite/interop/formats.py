"""Round trips between formats (UMP ⇄ OMF ⇄ UPP, suite/convert) as interop results: each ordered
pair A → B → A on the default corpora, judged by the mapping table (docs/mapping.md). A broken
promise of the table fails; what the table says is lost (consent, signatures, `exported_at`) is
listed in the notes, not charged; a field the table calls lost that came back anyway fails too, since
then the table is wrong."""

from __future__ import annotations

import time
import traceback
from typing import Any

from memconform.suite.interop.model import RoundTrip, loss_json
from memconform.suite.outcomes import Outcome

CHECK_ID = "interop/format-round-trip"
VERSIONS = {"ump": "1.0", "omf": "1.0", "upp": "1.0.0"}


def format_pairs() -> list[tuple[str, str]]:
    from memconform.suite.convert.mapping import FORMATS

    return [(a, b) for a in FORMATS for b in FORMATS if a != b]


def judge_format_pair(a: str, b: str) -> tuple[Outcome, dict[str, Any]]:
    """Runs A → B → A on A's default corpus; never raises (a crash is an error result)."""
    from memconform.suite.convert import default_corpora, format_round_trip

    started = time.perf_counter()
    rt: RoundTrip | None = None
    reason = None
    try:
        rt = format_round_trip(default_corpora()[a], [a, b, a])
        dishonest = list(rt.extra.get("kept_though_lost") or [])
        if rt.losses:
            outcome, reason = Outcome.FAILED, f"{len(rt.losses)} promised field(s) did not come back"
        elif dishonest:
            outcome, reason = Outcome.FAILED, f"the mapping table calls lost what came back: {dishonest[:5]}"
        else:
            outcome = Outcome.PASSED
    except Exception:  # a bug in the converters: an error, with the traceback
        outcome, reason = Outcome.ERROR, "the conversion crashed:\n" + traceback.format_exc()
    notes = list(rt.notes) if rt else []
    if rt and rt.extra.get("lost_by_design"):
        notes.append("lost by design (docs/mapping.md): " + ", ".join(
            f"{k} ×{v}" for k, v in sorted(rt.extra["lost_by_design"].items())))
    return outcome, {
        "check": CHECK_ID, "spec": a, "version": VERSIONS.get(a, "-"), "source": a, "destination": b,
        "source_binding": "convert", "destination_binding": "convert", "outcome": outcome.value, "reason": reason,
        "placed": rt.placed if rt else 0, "compared": rt.compared if rt else 0,
        "losses": [loss_json(x) for x in (rt.losses if rt else ())], "notes": notes,
        "duration": round(time.perf_counter() - started, 6),
    }


def describe(entry: dict[str, Any], limit: int = 40) -> str:
    lines = [f"{entry['source'].upper()} → {entry['destination'].upper()} → {entry['source'].upper()}: "
             f"{entry['reason'] or 'kept what the mapping table promises'}"]
    for loss in entry["losses"][:limit]:
        lines.append(f"✗ {loss['record']}{loss['field']}: expected {loss['expected']!r}, got {loss['got']!r} "
                     f"({loss['stage']}; {loss['requirement']})")
    lines.extend(f"note: {n}" for n in entry["notes"])
    return "\n".join(lines)
