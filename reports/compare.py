"""Several targets' results side by side (issue 6; Bowtie's matrix is the model).

`comparison(reports)` turns any number of memconform reports into one value: a column per target,
the level each reached per spec/version/binding, and per requirement the outcome each target got on
each binding. The terminal table (rich) and the HTML page are renderings of that value. Report
contents are untrusted (target labels come from the command line, messages from servers): the HTML
escapes everything, and rich markup is never interpreted in data (`Text`, not markup strings).
"""

from __future__ import annotations

import html
import io
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

#: Outcome of a requirement on one target and binding, worst first, for the one-word cell.
_SEVERITY = ("failed", "error", "stale", "warning", "info", "xfailed", "skipped", "passed")


@dataclass(frozen=True)
class Comparison:
    targets: tuple[str, ...]
    #: (spec, version, binding) -> target -> level or None (None: judged, no level reached)
    levels: dict[tuple[str, str, str], dict[str, str | None]]
    #: (spec, version, requirement id) -> target -> binding -> outcome
    outcomes: dict[tuple[str, str, str], dict[str, dict[str, str]]] = field(default_factory=dict)
    keywords: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def disagreements(self) -> list[tuple[str, str, str]]:
        """Requirements whose worst outcome differs between targets that judged them."""
        out = []
        for key, per_target in sorted(self.outcomes.items()):
            worst = {_worst(b.values()) for b in per_target.values()}
            if len(worst) > 1 or len(per_target) < len(self.targets):
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
    """`reports`: (a name for the report, usually its file name; the parsed report)."""
    targets: list[str] = []
    levels: dict[tuple[str, str, str], dict[str, str | None]] = defaultdict(dict)
    outcomes: dict[tuple[str, str, str], dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    keywords: dict[tuple[str, str, str], str] = {}
    for _, rep, rename in _labels(reports):
        for label in rename.values():
            if label not in targets:
                targets.append(label)
        for row in rep.get("levels", ()):
            col = rename.get(row["target"], row["target"])
            levels[(row["spec"], row["version"], row["binding"])][col] = row["level"]
        for req in rep.get("requirements", ()):
            col = rename.get(req["target"], req["target"])
            key = (req["spec"], req["version"], req["id"])
            outcomes[key][col][req["binding"]] = req["outcome"]
            keywords[key] = req["keyword"]
    return Comparison(tuple(targets), dict(levels), {k: dict(v) for k, v in outcomes.items()}, keywords)


def _cell(per_binding: dict[str, str] | None) -> str:
    if not per_binding:
        return "—"
    kinds = set(per_binding.values())
    if len(kinds) == 1:
        return next(iter(kinds))
    return " ".join(f"{b}:{o}" for b, o in sorted(per_binding.items()))


def render_terminal(cmp: Comparison, *, everything: bool = False, width: int | None = None) -> str:
    """The level table, then the requirements where the targets disagree (all with `everything`)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Rendered into a buffer and returned: the caller decides where the text goes.
    console = Console(file=io.StringIO(), record=True, width=width or 120, force_terminal=False,
                      color_system=None)
    table = Table(title="Levels reached", show_lines=False)
    table.add_column("spec / version / binding")
    for t in cmp.targets:
        table.add_column(Text(t))
    for (spec, version, binding), per_target in sorted(cmp.levels.items()):
        table.add_row(Text(f"{spec.upper()} {version} / {binding}"),
                      *(Text(_level_text(per_target, t)) for t in cmp.targets))
    console.print(table)
    keys = sorted(cmp.outcomes) if everything else cmp.disagreements()
    req = Table(title="Requirements" + ("" if everything else " where the targets differ"))
    req.add_column("requirement")
    req.add_column("keyword")
    for t in cmp.targets:
        req.add_column(Text(t))
    for key in keys:
        req.add_row(Text(f"{key[0].upper()} {key[1]} {key[2]}"), cmp.keywords.get(key, ""),
                    *(Text(_cell(cmp.outcomes[key].get(t))) for t in cmp.targets))
    if keys:
        console.print(req)
    else:
        console.print("Every requirement has the same outcome on every target.")
    return console.export_text()


def _level_text(per_target: dict[str, str | None], target: str) -> str:
    if target not in per_target:
        return "—"
    return per_target[target] or "not conformant"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def render_html(cmp: Comparison) -> str:
    """One self-contained page: the level table and the full requirement matrix."""
    head = "".join(f"<th>{_e(t)}</th>" for t in cmp.targets)
    level_rows = "".join(
        f"<tr><td>{_e(spec.upper())} {_e(version)} / {_e(binding)}</td>"
        + "".join(f"<td>{_e(_level_text(per, t))}</td>" for t in cmp.targets) + "</tr>"
        for (spec, version, binding), per in sorted(cmp.levels.items()))
    differing = set(cmp.disagreements())
    req_rows = "".join(
        f"<tr class=\"{'differs' if key in differing else 'same'}\"><td>{_e(key[0].upper())} {_e(key[1])} "
        f"<code>{_e(key[2])}</code></td><td>{_e(cmp.keywords.get(key, ''))}</td>"
        + "".join(f"<td class=\"o-{_e(_worst((cmp.outcomes[key].get(t) or {}).values()))}\">"
                  f"{_e(_cell(cmp.outcomes[key].get(t)))}</td>" for t in cmp.targets) + "</tr>"
        for key in sorted(cmp.outcomes))
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>memconform comparison</title><style>"
            "body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}.o-passed{background:#e6f4ea}"
            ".o-failed,.o-error,.o-stale{background:#fce8e6}.o-warning{background:#fef7e0}"
            "tr.differs td:first-child{border-left:4px solid #c00}</style></head><body>"
            f"<h1>memconform comparison</h1><h2>Levels reached</h2><table><tr><th></th>{head}</tr>{level_rows}</table>"
            f"<h2>Requirements</h2><p>{len(differing)} of {len(cmp.outcomes)} differ between targets "
            f"(marked red at the left).</p><table><tr><th>requirement</th><th>keyword</th>{head}</tr>{req_rows}"
            "</table></body></html>\n")
