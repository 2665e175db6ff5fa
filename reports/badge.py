"""Badges rendered from the JSON report: an SVG and a shields.io endpoint document per
target/spec/version.

A badge says only what the report computed from real outcomes (a baseline never raises it): the
level each binding reached, bindings with the same level combined ("L3 · HTTP+MCP"), a file's claim
("L0 (emitted file) · FILE"), or, when nothing was reached, "not conformant" (red: MUSTs failed) or
"not assessed" (grey: nothing failed, but nothing could be shown here; never red).
"""

from __future__ import annotations

import html
from collections import defaultdict
from typing import Any

from memconform.suite.outcomes import LEVELS

#: By how far the best level falls short of the spec version's highest level: a spec whose levels
#: end at L1 (OMF) is fully met at L1 and shows as brightly as UMP at L3.
SHADES = ("brightgreen", "green", "yellowgreen", "yellow")
NO_LEVEL = "red"
#: a level was reached, but MUSTs failed above it (or on another binding): never a shade of green
BLOCKED = "orange"
#: a file's claim: about a file, not an implementation level
CLAIM = "blue"
#: nothing reached and nothing failed: not assessable here, or the target could not be judged
NEUTRAL = "lightgrey"
#: shields.io's named colours as hex, so the SVG needs nothing from the network.
HEX = {"brightgreen": "#4c1", "green": "#97ca00", "yellowgreen": "#a4a61d", "yellow": "#dfb317",
       "red": "#e05d44", "orange": "#fe7d37", "blue": "#007ec6", "lightgrey": "#9f9f9f"}
NOT_CONFORMANT = "not conformant"
NOT_ASSESSED = "not assessed"
NOT_JUDGED = "not judged"
#: Average advance of an 11px Verdana glyph, plus padding either side: good enough for a badge.
CHAR_WIDTH = 7
PADDING = 10


def badge_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's level rows grouped per target/spec/version: {target, spec, version,
    bindings: {binding: level or None}, statuses: {binding: status}, claims: {binding: title}}."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(dict)
    statuses: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    claims: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    for row in report["levels"]:
        key = (row["target"], row["spec"], row["version"])
        groups[key][row["binding"]] = row["level"]
        if row.get("status"):
            statuses[key][row["binding"]] = row["status"]
        if (row.get("claim") or {}).get("reached") and row["level"] is None:
            claims[key][row["binding"]] = row["claim"]["title"]
    return [{"target": t, "spec": s, "version": v, "bindings": dict(sorted(b.items())),
             **({"statuses": dict(sorted(statuses[(t, s, v)].items()))} if statuses[(t, s, v)] else {}),
             **({"claims": dict(sorted(claims[(t, s, v)].items()))} if claims[(t, s, v)] else {})}
            for (t, s, v), b in sorted(groups.items())]


def _best(row: dict[str, Any]) -> str | None:
    reached = [lv for lv in row["bindings"].values() if lv is not None]
    return max(reached, key=LEVELS.index) if reached else None


def label(row: dict[str, Any]) -> str:
    return f"{row['spec'].upper()} {row['version']}"


def message(row: dict[str, Any]) -> str:
    """Highest level first; a binding without a level is left out (the badge names the bindings
    it vouches for, so it never implies the others)."""
    by_level: dict[str, list[str]] = defaultdict(list)
    for binding, level in row["bindings"].items():
        if level is not None:
            by_level[level].append(binding.upper())
    parts = [f"{lv} · {'+'.join(sorted(by_level[lv]))}"
             for lv in sorted(by_level, key=LEVELS.index, reverse=True)]
    parts += [f"{title} · {binding.upper()}" for binding, title in (row.get("claims") or {}).items()]
    if parts:
        return ", ".join(parts)
    statuses = set((row.get("statuses") or {}).values())
    if not statuses or "not-conformant" in statuses or "partial" in statuses:
        return NOT_CONFORMANT
    return NOT_JUDGED if statuses <= {"error", "skipped"} else NOT_ASSESSED


def top_level(spec: str, version: str) -> str:
    """The highest level the spec version's catalogue has requirements at (L3 when unknown)."""
    from memconform.suite import catalogue

    try:
        levels = {r.level for r in catalogue.load(spec).for_version(version)}
    except (ImportError, LookupError, OSError, ValueError):  # a spec this version does not know
        return LEVELS[-1]
    return max(levels, key=LEVELS.index) if levels else LEVELS[-1]


def color(row: dict[str, Any]) -> str:
    best = _best(row)
    statuses = set((row.get("statuses") or {}).values())
    failing = bool(statuses & {"partial", "not-conformant"})
    if best is None:
        if row.get("claims") and not failing:
            return CLAIM
        if failing or not statuses:  # a report without statuses predates them: red as it was
            return NO_LEVEL
        return NEUTRAL
    if failing:
        return BLOCKED
    short = LEVELS.index(top_level(row["spec"], row["version"])) - LEVELS.index(best)
    return SHADES[min(max(short, 0), len(SHADES) - 1)]


def _width(text: str) -> int:
    return len(text) * CHAR_WIDTH + 2 * PADDING


def badge_svg(row: dict[str, Any]) -> str:
    left, right = label(row), message(row)
    lw, rw = _width(left), _width(right)
    fill = HEX[color(row)]
    e = html.escape  # spec and binding names come from the report: escape like any report text
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + rw}" height="20" role="img" '
            f'aria-label="{e(left)}: {e(right)}"><title>{e(left)}: {e(right)}</title>'
            f'<rect width="{lw}" height="20" fill="#555"/>'
            f'<rect x="{lw}" width="{rw}" height="20" fill="{fill}"/>'
            f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
            f'<text x="{lw / 2}" y="14">{e(left)}</text>'
            f'<text x="{lw + rw / 2}" y="14">{e(right)}</text></g></svg>\n')


def shields_endpoint(row: dict[str, Any]) -> dict[str, Any]:
    """https://shields.io/badges/endpoint-badge: serve this JSON and point shields at it."""
    return {"schemaVersion": 1, "label": label(row), "message": message(row), "color": color(row)}
