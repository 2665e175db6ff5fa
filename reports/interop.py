"""The interop matrices: per spec version, sources × destinations, each cell one round trip.

Rows are where the records came from, columns where they went; the diagonal is empty (a target is
not paired with itself). A cell reads "kept 12/12", "lost 3 (12)" with the fields in the report and
the HTML page, "changed 3 (12): readings disagree" when every loss comes of two legitimate readings
that together change the records (`Loss.disagreement`, a warning), "error", "skipped" or "—" when that pair made no round trip. Round trips between
formats (check `interop/format-round-trip`) make a matrix of their own.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from memconform.suite.interop.formats import CHECK_ID as FORMAT_CHECK


@dataclass(frozen=True)
class Matrix:
    title: str                                   # "UMP 1.0 — targets" / "formats"
    labels: tuple[str, ...]                      # rows and columns, in first-seen order
    cells: dict[tuple[str, str], dict[str, Any]]  # (source, destination) → the interop entry


def matrices(report: dict[str, Any]) -> list[Matrix]:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for entry in report.get("interop", []):
        if entry["check"] == FORMAT_CHECK:  # one matrix for all formats: each row is its own corpus
            groups[("formats", "", "")].append(entry)
        else:
            groups[("targets", entry["spec"], entry["version"])].append(entry)
    out = []
    for (kind, spec, version), entries in sorted(groups.items(), key=lambda kv: (kv[0][0] != "targets", kv[0])):
        labels: dict[str, None] = {}
        for e in entries:
            labels.setdefault(e["source"])
            labels.setdefault(e["destination"])
        title = f"{spec.upper()} {version} — targets" if kind == "targets" else "formats (A → B → A, by the mapping table)"
        out.append(Matrix(title, tuple(labels), {(e["source"], e["destination"]): e for e in entries}))
    return out


def cell_text(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "—"
    outcome = entry["outcome"]
    if outcome in ("passed", "xfailed"):
        if entry["compared"] < entry["placed"]:  # records the mapping table drops whole (consent …)
            return f"kept {entry['compared']}/{entry['placed']} as promised"
        return f"kept {entry['compared']}/{entry['placed']}"
    if outcome in ("failed", "warning"):
        if entry["losses"]:
            if all(loss.get("disagreement") for loss in entry["losses"]):
                return f"changed {len(entry['losses'])} ({entry['placed']}): readings disagree"
            return f"lost {len(entry['losses'])} ({entry['placed']})"
        return f"back {entry['compared']}/{entry['placed']}"
    return outcome


def render_text(matrix: Matrix) -> list[str]:
    """Plain text lines (the pytest summary): a header row, then one row per source."""
    corner = "from \\ to"
    width = max([len(corner), *(len(x) for x in matrix.labels)])
    texts = {k: cell_text(v) for k, v in matrix.cells.items()}
    col = max([width, *(len(t) for t in texts.values())], default=width)
    lines = [matrix.title, corner.ljust(width) + " | " + " | ".join(x.ljust(col) for x in matrix.labels)]
    for src in matrix.labels:
        row = [("" if src == dst else texts.get((src, dst), "—")).ljust(col) for dst in matrix.labels]
        lines.append(src.ljust(width) + " | " + " | ".join(row))
    return lines


def loss_lines(report: dict[str, Any], limit: int = 30) -> list[str]:
    """One line per lost field (the first `limit`): record, field, promise, where it was seen."""
    lines = []
    for e in report.get("interop", []):
        for loss in e["losses"]:
            blame = (f"no side to blame, readings disagree: {loss['disagreement']}" if loss.get("disagreement")
                     else loss["requirement"])
            lines.append(f"{e['spec'].upper()} {e['version']} {e['source']} → {e['destination']}: "
                         f"{loss['record']}{loss['field']} ({blame}, {loss['stage']}): "
                         f"expected {loss['expected']!r}, got {loss['got']!r}")
    if len(lines) > limit:
        return lines[:limit] + [f"… and {len(lines) - limit} more lost fields in the report"]
    return lines
