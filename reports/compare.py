"""Several runs side by side (issue 6; Bowtie's matrix is the model), read as "what changed".

`comparison(reports)` turns any number of memconform reports into one value: a column per target,
each report's level row per spec/version/binding, and per requirement the outcome each target got
on each binding. The first report is the baseline of the comparison: what it passed and a later
report failed is a regression, what it failed and a later one passed a fix. A requirement some
report did not judge (absent or skipped there) is counted apart: nothing can be said to have
changed about it.

The terminal text (rich) and the HTML page render that value in one order: level changes, MUST
regressions, fixes, other differences, then (HTML, or `--all`) every requirement. Verdict words
come from the reports' level rows (`status`, `blocked_by`: reports/verdict.py), never recomputed.
Report contents are untrusted (target labels come from the command line, messages from servers):
the HTML escapes everything, and rich markup is never interpreted in data (`Text`, not markup).
"""

from __future__ import annotations

import html
import io
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from memconform.reports.verdict import blocked_by, verdict_words

#: Outcome of a requirement on one target and binding, worst first, for the one-word cell.
_SEVERITY = ("failed", "error", "stale", "warning", "info", "xfailed", "skipped", "passed")
#: Outcomes that say nothing was judged: such a requirement is "judged on one side only".
_NOT_JUDGED = ("skipped",)
#: Rows each section shows without --all, so that the whole output fits a screen (~40 lines).
CAPS = {"levels": 8, "regressions": 8, "fixes": 5}

#: (spec, version, binding, requirement id)
ReqKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class Comparison:
    targets: tuple[str, ...]
    #: (spec, version, binding) -> target -> level or None (None: judged, no level reached)
    levels: dict[tuple[str, str, str], dict[str, str | None]]
    #: (spec, version, requirement id) -> target -> binding -> outcome
    outcomes: dict[tuple[str, str, str], dict[str, dict[str, str]]] = field(default_factory=dict)
    keywords: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: (spec, version, binding) -> target -> the report's level row
    rows: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = field(default_factory=dict)

    # -- per requirement and binding ------------------------------------------------------------

    def _pairs(self) -> list[tuple[ReqKey, list[str | None]]]:
        """Every requirement and binding some report judged, with each target's outcome (None:
        not judged there)."""
        out = []
        for (spec, version, rid), per_target in sorted(self.outcomes.items()):
            bindings = sorted({b for per in per_target.values() for b in per})
            for b in bindings:
                cells = [(per_target.get(t) or {}).get(b) for t in self.targets]
                out.append(((spec, version, b, rid), [None if c in _NOT_JUDGED else c for c in cells]))
        return out

    def one_sided(self) -> list[ReqKey]:
        """Judged by some report and not by another: not a difference, counted apart."""
        return [key for key, cells in self._pairs() if None in cells and any(c is not None for c in cells)]

    def regressions(self) -> list[ReqKey]:
        """MUSTs the first report passed and a later one failed."""
        return [key for key, cells in self._pairs()
                if None not in cells and self.keywords.get((key[0], key[1], key[3])) == "MUST"
                and cells[0] == "passed" and "failed" in cells[1:]]

    def fixes(self) -> list[ReqKey]:
        """Requirements the first report failed and a later one passed."""
        return [key for key, cells in self._pairs()
                if None not in cells and cells[0] == "failed" and "passed" in cells[1:]]

    def other_differences(self) -> list[ReqKey]:
        """Judged by every report, outcomes differ, neither a MUST regression nor a fix."""
        named = {*self.regressions(), *self.fixes()}
        return [key for key, cells in self._pairs()
                if None not in cells and len(set(cells)) > 1 and key not in named]

    def disagreements(self) -> list[tuple[str, str, str]]:
        """Requirements (spec, version, id) whose outcome differs on some binding between targets
        that judged them there."""
        out = {(k[0], k[1], k[3]) for k, cells in self._pairs() if None not in cells and len(set(cells)) > 1}
        return sorted(out)

    # -- per spec / version / binding -----------------------------------------------------------

    def level_changes(self) -> list[tuple[str, str, str]]:
        """Rows whose level or status is not the same in every report (or missing from one)."""
        out = []
        for key, per_target in sorted(self.rows.items()):
            seen = {(per_target[t].get("level"), per_target[t].get("status")) if t in per_target else None
                    for t in self.targets}
            if len(seen) > 1:
                out.append(key)
        return out


def _worst(outcomes: Any) -> str:
    found = set(outcomes)
    return next((o for o in _SEVERITY if o in found), "—")


def _labels(reports: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """A column name per target of every report, made unique with the file name when two reports
    judged targets with the same label (e.g. two `reference` runs)."""
    seen: dict[str, int] = defaultdict(int)
    for _, rep in reports:
        for t in rep.get("targets", ()):
            seen[t["label"]] += 1
    out = []
    for name, rep in reports:
        rename = {t["label"]: (t["label"] if seen[t["label"]] == 1 else f"{t['label']} ({name})")
                  for t in rep.get("targets", ())}
        out.append((name, rep, rename))
    return out


def comparison(reports: list[tuple[str, dict[str, Any]]]) -> Comparison:
    """`reports`: (a name for the report, usually its file name; the parsed report), the first
    being what the others are compared with."""
    targets: list[str] = []
    levels: dict[tuple[str, str, str], dict[str, str | None]] = defaultdict(dict)
    rows: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    outcomes: dict[tuple[str, str, str], dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    keywords: dict[tuple[str, str, str], str] = {}
    for _, rep, rename in _labels(reports):
        for label in rename.values():
            if label not in targets:
                targets.append(label)
        for row in rep.get("levels", ()):
            col = rename.get(row["target"], row["target"])
            levels[(row["spec"], row["version"], row["binding"])][col] = row["level"]
            rows[(row["spec"], row["version"], row["binding"])][col] = row
        for req in rep.get("requirements", ()):
            col = rename.get(req["target"], req["target"])
            key = (req["spec"], req["version"], req["id"])
            outcomes[key][col][req["binding"]] = req["outcome"]
            keywords[key] = req["keyword"]
    return Comparison(tuple(targets), dict(levels), {k: dict(v) for k, v in outcomes.items()}, keywords,
                      dict(rows))


def _cell(per_binding: dict[str, str] | None) -> str:
    if not per_binding:
        return "—"
    kinds = set(per_binding.values())
    if len(kinds) == 1:
        return next(iter(kinds))
    return " ".join(f"{b}:{o}" for b, o in sorted(per_binding.items()))


def level_text(row: dict[str, Any] | None, *, ids: int = 0) -> str:
    """A report's level row in a few words: what was reached, its status, what blocks the next
    level (how many MUSTs, or naming `ids` of them, then "+N more")."""
    return "—" if row is None else verdict_words(row, ids=ids, with_level=True)


def _key_width(keys: list[tuple[str, str, str]]) -> int:
    return max((len(f"{k[0]} {k[1]} / {k[2]}") for k in keys), default=0)


def _outcome_cells(cmp: Comparison, key: ReqKey) -> list[str]:
    spec, version, binding, rid = key
    per_target = cmp.outcomes.get((spec, version, rid), {})
    return [(per_target.get(t) or {}).get(binding) or "—" for t in cmp.targets]


def _req_label(key: ReqKey) -> str:
    return f"{key[0].upper()} {key[1]} / {key[2]}"


def render_terminal(cmp: Comparison, *, everything: bool = False, width: int | None = None) -> str:
    """Level changes, MUST regressions, fixes, then counts of what else differs and of what was
    judged on one side only; each section capped (see CAPS) unless `everything`, which also adds
    every level row and every requirement."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Rendered into a buffer and returned: the caller decides where the text goes.
    console = Console(file=io.StringIO(), record=True, width=width or 120, force_terminal=False,
                      color_system=None)
    first = cmp.targets[0] if cmp.targets else "the first report"

    def table(title: str, columns: list[str], *widths: int) -> Table:
        """`widths`: the least width of the first columns (what a row is about stays readable;
        the target columns give way first)."""
        # the title on a line of its own: as a table title it would wrap to the table's width
        console.print(Text(title, no_wrap=not everything, overflow="ellipsis"))
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
        for i, name in enumerate(columns):
            # without --all one line per row, so the count of lines is the count of rows
            t.add_column(Text(name), no_wrap=not everything, overflow="ellipsis" if not everything else "fold",
                         min_width=widths[i] if i < len(widths) else None)
        return t

    def capped(keys: list[Any], cap: str) -> tuple[list[Any], int]:
        if everything or len(keys) <= CAPS[cap]:
            return keys, 0
        return keys[:CAPS[cap]], len(keys) - CAPS[cap]

    def more(n: int) -> None:
        if n:
            console.print(Text(f"+{n} more, --all for everything"))

    def line(text: str) -> None:
        console.print(Text(text, no_wrap=not everything, overflow="ellipsis"))

    changed = cmp.level_changes()
    same = [k for k in sorted(cmp.rows) if k not in changed]
    if changed:
        shown, hidden = capped(changed, "levels")
        t = table(f"Level changes ({len(changed)} of {len(cmp.rows)} spec / version / binding rows)",
                  ["spec / version / binding", *cmp.targets], _key_width(changed))
        for key in shown:
            per = cmp.rows[key]
            t.add_row(Text(f"{key[0].upper()} {key[1]} / {key[2]}"),
                      *(Text(level_text(per.get(tg), ids=3 if everything else 0)) for tg in cmp.targets))
        console.print(t)
        more(hidden)
    else:
        line(f"Level changes: none ({len(cmp.rows)} spec / version / binding rows, the same "
             "level and status in every report)")
    if everything and same:
        t = table("Levels unchanged", ["spec / version / binding", *cmp.targets], _key_width(same))
        for key in same:
            t.add_row(Text(f"{key[0].upper()} {key[1]} / {key[2]}"),
                      *(Text(level_text(cmp.rows[key].get(tg), ids=3)) for tg in cmp.targets))
        console.print(t)

    for name, keys, title in (
            ("regressions", cmp.regressions(), f"MUST regressions ({{n}}): passed in {first}, failed in a later report"),
            ("fixes", cmp.fixes(), f"Fixes ({{n}}): failed in {first}, passed in a later report")):
        console.print()
        if not keys:
            line(title.format(n=0).split(":")[0] + ": none")
            continue
        shown, hidden = capped(keys, name)
        t = table(title.format(n=len(keys)), ["requirement", "spec / binding", *cmp.targets],
                  max(len(k[3]) for k in shown), max(len(_req_label(k)) for k in shown))
        for key in shown:
            t.add_row(Text(key[3]), Text(_req_label(key)), *(Text(c) for c in _outcome_cells(cmp, key)))
        console.print(t)
        more(hidden)

    other = cmp.other_differences()
    console.print()
    if everything and other:
        t = table(f"Other differences ({len(other)})", ["requirement", "keyword", "spec / binding", *cmp.targets])
        for key in other:
            t.add_row(Text(key[3]), cmp.keywords.get((key[0], key[1], key[3]), ""), Text(_req_label(key)),
                      *(Text(c) for c in _outcome_cells(cmp, key)))
        console.print(t)
    else:
        line(f"{len(other)} other difference{'s' if len(other) != 1 else ''} "
             "(SHOULD, MAY, errors, skips)" + (", --all lists them" if other else ""))
    one_sided = {(k[0], k[1], k[3]) for k in cmp.one_sided()}
    line(f"{len(one_sided)} requirement{'s' if len(one_sided) != 1 else ''} judged on one side only "
         "(absent or skipped in a report): not compared")

    if everything:
        console.print()
        req = table("All requirements", ["requirement", "keyword", *cmp.targets])
        for key in sorted(cmp.outcomes):
            req.add_row(Text(f"{key[0].upper()} {key[1]} {key[2]}"), cmp.keywords.get(key, ""),
                        *(Text(_cell(cmp.outcomes[key].get(t))) for t in cmp.targets))
        console.print(req)
    return "".join(line.rstrip() + "\n" for line in console.export_text().splitlines())


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _status_class(row: dict[str, Any] | None) -> str:
    return f"s-{_e(row.get('status') or 'none')}" if row else "s-none"


def render_html(cmp: Comparison) -> str:
    """One self-contained page in the terminal's order, nothing capped: level changes (then the
    unchanged rows), MUST regressions, fixes, other differences, and every requirement."""
    head = "".join(f"<th>{_e(t)}</th>" for t in cmp.targets)
    changed = cmp.level_changes()
    level_rows = "".join(
        f"<tr class=\"{'differs' if key in changed else 'same'}\"><td>{_e(key[0].upper())} {_e(key[1])} / "
        f"{_e(key[2])}</td>"
        + "".join(f"<td class=\"{_status_class(cmp.rows[key].get(t))}\">"
                  f"{_e(level_text(cmp.rows[key].get(t), ids=len(blocked_by(cmp.rows[key].get(t) or {})) or 1))}</td>"
                  for t in cmp.targets) + "</tr>"
        for key in [*changed, *(k for k in sorted(cmp.rows) if k not in changed)])
    first = cmp.targets[0] if cmp.targets else "the first report"

    def req_table(keys: list[ReqKey]) -> str:
        if not keys:
            return "<p>None.</p>"
        body = "".join(
            f"<tr><td><code>{_e(k[3])}</code></td><td>{_e(cmp.keywords.get((k[0], k[1], k[3]), ''))}</td>"
            f"<td>{_e(_req_label(k))}</td>"
            + "".join(f"<td class=\"o-{_e(c)}\">{_e(c)}</td>" for c in _outcome_cells(cmp, k)) + "</tr>"
            for k in keys)
        return (f"<table><tr><th>requirement</th><th>keyword</th><th>spec / binding</th>{head}</tr>{body}</table>")

    differing = set(cmp.disagreements())
    one_sided = {(k[0], k[1], k[3]) for k in cmp.one_sided()}
    req_rows = "".join(
        f"<tr class=\"{'differs' if key in differing else 'same'}\"><td>{_e(key[0].upper())} {_e(key[1])} "
        f"<code>{_e(key[2])}</code></td><td>{_e(cmp.keywords.get(key, ''))}</td>"
        + "".join(f"<td class=\"o-{_e(_worst((cmp.outcomes[key].get(t) or {}).values()))}\">"
                  f"{_e(_cell(cmp.outcomes[key].get(t)))}</td>" for t in cmp.targets) + "</tr>"
        for key in sorted(cmp.outcomes))
    regressions, fixes, other = cmp.regressions(), cmp.fixes(), cmp.other_differences()
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>memconform comparison</title><style>"
            "body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}.o-passed{background:#e6f4ea}"
            ".o-failed,.o-error,.o-stale{background:#fce8e6}.o-warning{background:#fef7e0}"
            ".s-conformant,.s-claim{background:#e6f4ea}.s-partial{background:#fef7e0}"
            ".s-not-conformant,.s-error{background:#fce8e6}.s-not-assessed,.s-incomplete,.s-skipped{background:#f1f3f4}"
            "tr.differs td:first-child{border-left:4px solid #c00}</style></head><body>"
            "<h1>memconform comparison</h1>"
            f"<h2>Level changes</h2><p>{len(changed)} of {len(cmp.rows)} spec / version / binding rows differ "
            f"(marked red at the left, listed first).</p><table><tr><th></th>{head}</tr>{level_rows}</table>"
            f"<h2>MUST regressions ({len(regressions)})</h2><p>Passed in {_e(first)}, failed in a later report.</p>"
            f"{req_table(regressions)}"
            f"<h2>Fixes ({len(fixes)})</h2><p>Failed in {_e(first)}, passed in a later report.</p>{req_table(fixes)}"
            f"<h2>Other differences ({len(other)})</h2>{req_table(other)}"
            f"<p>{len(one_sided)} requirement{'s' if len(one_sided) != 1 else ''} judged on one side only "
            "(absent or skipped in a report): not compared.</p>"
            f"<h2>All requirements</h2><p>{len(differing)} of {len(cmp.outcomes)} differ between targets "
            f"that judged them (marked red at the left).</p><table><tr><th>requirement</th><th>keyword</th>{head}</tr>"
            f"{req_rows}</table></body></html>\n")
