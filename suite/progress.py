"""Live progress for `memconform run` (a pytest plugin the command loads with `-p`).

Plain `pytest --target=…` never loads it: its output stays what pytest users expect. Under
`memconform run` (unless `--no-progress`) it

- counts every check as its result arrives — per target, spec version, level and binding: done of
  total and how many passed, failed, warned, errored, were skipped or only informational — from the
  `memconform` result each item reports (`user_properties`), so it works the same on the
  pytest-xdist controller, which receives the workers' reports;
- on a terminal, shows those counts live (rich) instead of pytest's dot line, laid out for the
  terminal's size at each refresh: one line per group, finished groups folded into summary lines
  until every group fits on screen, and a legend of the counters; elsewhere (a CI log) prints one
  plain line each time a spec / level / binding group completes, plus a line every `HEARTBEAT`
  seconds of silence;
- keeps pytest's own failures section and the memconform summary, and ends with the level table
  (one row per spec / version / binding, from the report) rendered as a rich table whose verdict
  is the row's `status` and `blocked_by` in words (reports/verdict.py), never recomputed.

The counting and rendering live in `ProgressState`, `render_live`, `plain_line` and `level_table`:
plain data in, text out, so they can be tested without running pytest.
"""

from __future__ import annotations

import io
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from rich import box
from rich.console import Console, Group as RenderGroup, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from memconform.reports.verdict import verdict_words
from memconform.suite.outcomes import LEVELS

#: Seconds without a completed group after which the plain mode prints an overall line.
HEARTBEAT = 30.0
#: The counters shown, in order; `other` holds MAY-not-offered / inconclusive (info) and xfailed.
COLUMNS = ("passed", "failed", "warning", "error", "skipped", "other")
_OUTCOME_COLUMN = {"passed": "passed", "failed": "failed", "warning": "warning", "error": "error",
                   "stale": "error", "skipped": "skipped", "info": "other", "xfailed": "other"}
#: spec, version, level, binding of a target that could not be opened (plugin.TargetErrorItem)
_CONNECT = ("ump", "-", "L0", "-")

Key = tuple[str, str, str, str, str]  # target, spec, version, level, binding


def _version_key(version: str) -> tuple[Any, ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.\-]", version))


def _level_key(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


# -- the counts ------------------------------------------------------------------------------

@dataclass
class GroupProgress:
    key: Key
    total: int | None = None
    done: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    announced: bool = False

    @property
    def target(self) -> str:
        return self.key[0]

    @property
    def title(self) -> str:
        target, spec, version, level, binding = self.key
        if self.key[1:] == _CONNECT:
            return "opening the target"
        return f"{spec.upper()} {version} / {level} / {binding}"

    @property
    def complete(self) -> bool:
        return self.total is not None and self.done >= self.total

    @property
    def troubled(self) -> bool:
        return bool(self.counts["failed"] or self.counts["error"])


class ProgressState:
    """Per group (target, spec, version, level, binding): how many checks exist and how each
    finished one came out. Thread-safe: the live display renders it from rich's refresh thread."""

    def __init__(self) -> None:
        self.groups: dict[Key, GroupProgress] = {}
        self.total: int | None = None
        self.done = 0
        self.started = time.monotonic()
        self.seen: set[str] = set()
        self.lock = threading.RLock()
        self.targets: list[str] = []

    def _group(self, key: Key) -> GroupProgress:
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = GroupProgress(key)
            if key[0] not in self.targets:
                self.targets.append(key[0])
        return group

    def set_totals(self, keys: Iterable[Key | None]) -> None:
        """The collected items, one key each (None: an item whose group is unknown; it counts in
        the overall total only)."""
        with self.lock:
            totals: Counter[Key] = Counter()
            count = 0
            for key in keys:
                count += 1
                if key is not None:
                    totals[key] += 1
            self.total = count
            for key, n in totals.items():
                self._group(key).total = n

    def record(self, nodeid: str, result: dict[str, Any]) -> GroupProgress | None:
        """One finished item's memconform result; returns its group, or None if already counted."""
        with self.lock:
            if nodeid in self.seen:
                return None
            self.seen.add(nodeid)
            key = result_key(result)
            group = self._group(key)
            group.done += 1
            group.counts[_OUTCOME_COLUMN.get(result.get("outcome", "error"), "error")] += 1
            self.done += 1
            return group

    def ordered(self) -> list[GroupProgress]:
        with self.lock:
            groups = list(self.groups.values())
        order = {t: i for i, t in enumerate(self.targets)}
        return sorted(groups, key=lambda g: (order.get(g.key[0], 0), g.key[1], _version_key(g.key[2]),
                                             _level_key(g.key[3]), g.key[4]))

    def totals(self) -> Counter[str]:
        out: Counter[str] = Counter()
        with self.lock:
            for group in self.groups.values():
                out.update(group.counts)
        return out


def result_key(result: dict[str, Any]) -> Key:
    return (str(result.get("target", "?")), str(result.get("spec", "?")), str(result.get("version", "?")),
            str(result.get("level", "?")), str(result.get("binding", "?")))


def item_key(item: pytest.Item) -> Key | None:
    """The group of a collected memconform item (None for anything else)."""
    check, subject = getattr(item, "check", None), getattr(item, "subject", None)
    if check is not None and subject is not None:
        return (subject.target, subject.spec, subject.version, check.level(subject.version, item.case),
                subject.binding)
    if type(item).__name__ == "TargetErrorItem":
        return (item.name.rsplit("::", 1)[0], *_CONNECT)
    return None


class NodeIdKeys:
    """The group of an item from its node id alone (the pytest-xdist controller sees only ids):
    `memconform::LABEL::SPEC-VERSION::BINDING::CHECK[CASE]` or `memconform::TARGET::connect`."""

    def __init__(self) -> None:
        from memconform.suite.registry import all_checks

        self.checks = {c.id: c for c in all_checks()}
        self.case_cache: dict[tuple[str, str, str, str], dict[str, Any]] = {}

    def __call__(self, nodeid: str) -> Key | None:
        try:
            return self._key(nodeid)
        except Exception:  # an id of another shape: counted overall, not in a group
            return None

    def _key(self, nodeid: str) -> Key | None:
        prefix, sep, name = nodeid.partition("::")
        if prefix != "memconform" or not sep:
            return None
        if name.endswith("::connect"):
            return (name[: -len("::connect")], *_CONNECT)
        label, spec_version, binding, check_part = name.rsplit("::", 3)
        spec, _, version = spec_version.partition("-")
        check_id, bracket, case_id = check_part.partition("[")
        chk = self.checks.get(check_id)
        if chk is None or chk.spec != spec:
            return None
        case = None
        if bracket:
            case_id = case_id[:-1] if case_id.endswith("]") else case_id
            case = self._cases(chk, label, spec, version, binding).get(case_id)
            if case is None:
                return None
        return (label, spec, version, chk.level(version, case), binding)

    def _cases(self, chk: Any, label: str, spec: str, version: str, binding: str) -> dict[str, Any]:
        cache_key = (chk.id, label, version, binding)
        if cache_key not in self.case_cache:
            from memconform.targets.base import Subject

            cases = chk.cases(Subject(label, spec, version, binding)) if chk.cases else ()
            self.case_cache[cache_key] = {c.id: c for c in cases}
        return self.case_cache[cache_key]


# -- rendering -------------------------------------------------------------------------------

_COLUMN_STYLE = {"passed": "green", "failed": "bold red", "warning": "yellow", "error": "bold magenta",
                 "skipped": "dim", "other": "cyan"}


def _elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def _count(n: int | None) -> str:
    return "?" if n is None else str(n)


#: The counters' column headings, and what each counts (the legend under the live table).
_HEADINGS = {"passed": "passed", "failed": "failed", "warning": "warn", "error": "err", "skipped": "skip",
             "other": "other"}
LEGEND = (("passed", "met"), ("failed", "a MUST violated"), ("warn", "a SHOULD violated"),
          ("err", "target error"), ("skip", "cannot run here"),
          ("other", "MAY not offered, inconclusive"))
#: The lines of the live view that are not group rows: the overall line, the heading and its
#: rule; one more stays free for the cursor rich's live display leaves under it.
_FIXED_LINES = 3 + 1


def _legend_lines(width: int) -> list[str]:
    """The legend, wrapped at `width` between its entries (never inside one)."""
    lines: list[str] = []
    for word, meaning in LEGEND:
        entry = f"{word}: {meaning}"
        if lines and len(lines[-1]) + 3 + len(entry) <= width:
            lines[-1] += " · " + entry
        else:
            lines.append(entry)
    return lines


def _fold(groups: list[GroupProgress], budget: int) -> tuple[list[GroupProgress], list[str]]:
    """The groups shown as rows and the summary lines for the others, in at most `budget` lines.
    What needs a look folds last: finished quiet groups first, then those not started, then
    finished ones with failures or errors, then (only on a tiny terminal) running ones."""
    shown = list(groups)
    lines: list[str] = []
    kinds = (  # (which groups, fold the last ones first, the summary line)
        (lambda g: g.complete and not g.troubled, False,
         lambda n, f: f"+ {n} finished group{'s' if n != 1 else ''} without failures or errors"),
        (lambda g: g.done == 0 and not g.complete, True,
         lambda n, f: f"+ {n} group{'s' if n != 1 else ''} not started"),
        (lambda g: g.complete and g.troubled, False,
         lambda n, f: (f"+ {n} finished group{'s' if n != 1 else ''} with failures or errors "
                       f"({sum(g.counts['failed'] for g in f)} failed, {sum(g.counts['error'] for g in f)} err)")),
        (lambda g: True, True,
         lambda n, f: f"+ {n} more group{'s' if n != 1 else ''} running"),
    )
    for belongs, from_end, text in kinds:
        over = len(shown) + len(lines) - budget
        if over <= 0:
            break
        members = [g for g in shown if belongs(g)]
        if not members:
            continue
        take = min(len(members), over + 1)  # the summary line takes a line itself
        folded = members[-take:] if from_end else members[:take]
        gone = {id(g) for g in folded}
        shown = [g for g in shown if id(g) not in gone]
        lines.append(text(len(folded), folded))
    return shown, lines


class LiveView:
    """The live view, laid out for the console it is drawn on: one line per group row, cut to
    the width, finished groups folded into summary lines until everything fits the height."""

    def __init__(self, state: ProgressState, *, elapsed: float | None = None, height: int | None = None) -> None:
        self.state = state
        self.elapsed = elapsed
        self.height = height

    def __rich_console__(self, console: Console, options: Any) -> Any:
        with self.state.lock:
            lines = self.lines(options.max_width, self.height or options.height or options.size.height)
        for line in lines:
            line.no_wrap = True
            line.overflow = "ellipsis"
            yield line

    def lines(self, width: int, height: int) -> list[Text]:
        state = self.state
        elapsed = time.monotonic() - state.started if self.elapsed is None else self.elapsed
        totals = state.totals()
        head = Text.assemble(("memconform ", "bold"), f"{state.done}/{_count(state.total)} checks",
                             f" · {_elapsed(elapsed)}")
        for name in COLUMNS:
            if totals[name]:
                head.append(f" · {totals[name]} {name}", style=_COLUMN_STYLE[name])
        legend = _legend_lines(width)
        budget = max(1, height - _FIXED_LINES - len(legend))
        groups, folded = _fold(state.ordered(), budget)

        many_targets = len(state.targets) > 1
        cells = [[f"{g.key[1].upper()} {g.key[2]}", g.key[3], g.key[4], f"{g.done}/{_count(g.total)}",
                  *(str(g.counts[n]) if g.counts[n] else "·" for n in COLUMNS)] for g in groups]
        headings = ["spec", "level", "binding", "done", *(_HEADINGS[n] for n in COLUMNS)]
        widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(headings)]
        rest = sum(widths) + len(widths) - 1
        target_width = 0
        if many_targets:  # the target gives way first: its start tells targets apart
            target_width = max(6, min(max([6, *(len(g.target) for g in groups)]), width - rest - 1))

        def line(values: list[str], styles: list[str] | None = None, target: str | None = None) -> Text:
            text = Text()
            if many_targets:
                t = target if target is not None else ""
                if len(t) > target_width:
                    t = t[:target_width - 1] + "…"
                text.append(t.ljust(target_width) + " ")
            for i, (value, w) in enumerate(zip(values, widths)):
                cell = value.ljust(w) if i < 3 else value.rjust(w)
                text.append(cell, style=(styles[i] if styles else "") or "")
                if i < len(values) - 1:
                    text.append(" ")
            return text

        out = [head, line(headings, ["bold"] * len(headings), "target" if many_targets else None)]
        out.append(Text("─" * min(width, rest + (target_width + 1 if many_targets else 0))))
        for g, row in zip(groups, cells):
            status = "bold green" if g.complete and not g.troubled else ("red" if g.troubled else "")
            styles = ["", "", "", status, *(_COLUMN_STYLE[n] if g.counts[n] else "dim" for n in COLUMNS)]
            out.append(line(row, styles, g.target))
        out += [Text(f, style="dim") for f in folded]
        out += [Text(x, style="dim italic") for x in legend]
        return out


def render_live(state: ProgressState, *, elapsed: float | None = None, height: int | None = None) -> RenderableType:
    """The live view: an overall line, one row per group, summary lines for the groups folded to
    fit the terminal's height (or `height`), and the legend of the counters."""
    return LiveView(state, elapsed=elapsed, height=height)


def plain_line(group: GroupProgress, state: ProgressState, *, elapsed: float | None = None) -> str:
    """One CI-log line for a group that finished (or the run ended with it unfinished)."""
    elapsed = time.monotonic() - state.started if elapsed is None else elapsed
    c = group.counts
    who = f"{group.target}: " if len(state.targets) > 1 else ""
    counts = (f"{c['passed']} passed, {c['failed']} failed, {c['warning']} warning{'s' if c['warning'] != 1 else ''}, "
              f"{c['error']} error{'s' if c['error'] != 1 else ''}, {c['skipped']} skipped")
    if c["other"]:
        counts += f", {c['other']} other"
    return (f"[memconform] {who}{group.title}: {group.done}/{_count(group.total)} done — {counts} "
            f"({state.done}/{_count(state.total)} checks, {_elapsed(elapsed)})")


def verdict(row: dict[str, Any]) -> str:
    """The verdict of a report level row in a few words (reports/verdict.py says them)."""
    return verdict_words(row, ids=1)


#: The verdict's colour by status: red only where MUSTs failed, never for what was not assessed.
_STATUS_STYLE = {"conformant": "green", "claim": "green", "partial": "yellow", "not-conformant": "red",
                 "error": "magenta", "not-assessed": "dim", "incomplete": "dim", "skipped": "dim"}


def level_table(rows: list[dict[str, Any]]) -> RenderableType:
    """The report's level rows as a table per target (titled with it when there are several: a
    column of long target labels would squeeze the verdicts): one row per spec / version / binding."""
    targets = list(dict.fromkeys(r["target"] for r in rows))
    if len(targets) == 1:
        return _level_table(rows, "memconform levels")
    tables: list[RenderableType] = []
    for target in targets:
        if tables:
            tables.append(Text(""))
        tables.append(_level_table([r for r in rows if r["target"] == target], f"memconform levels · {target}"))
    return RenderGroup(*tables)


def _level_table(rows: list[dict[str, Any]], title: str) -> Table:
    # one space between columns: the verdict keeps its line on a 120-column terminal
    table = Table(title=Text(title), box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0),
                  title_style="bold", title_justify="left")
    for name, justify in (("spec", "left"), ("version", "left"), ("level", "left"), ("binding", "left"),
                          ("MUST\npassed", "right"), ("MUST\nfailed", "right"), ("SHOULD\nwarnings", "right"),
                          ("errors", "right")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    # on a narrow terminal the verdict wraps rather than hide what blocks the next level
    table.add_column("verdict", overflow="fold")
    for row in rows:
        word = verdict(row)
        style = _STATUS_STYLE.get(str(row.get("status")), "")
        table.add_row(row["spec"].upper(), row["version"], row["level"] or "—", row["binding"],
                      str(row["must_passed"]), Text(str(row["must_failed"]), style="red" if row["must_failed"] else ""),
                      Text(str(row["should_warnings"]), style="yellow" if row["should_warnings"] else ""),
                      Text(str(row["errors"]), style="magenta" if row["errors"] else ""), Text(word, style=style))
    return table


# -- the plugin ------------------------------------------------------------------------------

class _NullFile(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)

    def isatty(self) -> bool:
        return False


class ProgressPlugin:
    """Registered on the controller (or the only process) of a `memconform run`."""

    def __init__(self, config: pytest.Config, *, live: bool | None = None) -> None:
        self.config = config
        self.state = ProgressState()
        self.tr = config.pluginmanager.getplugin("terminalreporter")
        tty = bool(self.tr is not None and self.tr.isatty)
        self.live_mode = tty if live is None else live
        self._saved_tw: Any = None
        self._live: Live | None = None
        self._stream: Any = None
        self._last_line = time.monotonic()
        self._xdist_keys: NodeIdKeys | None = None
        self._announced_total = False

    # the terminal reporter keeps counting (stats, failures); only its writing pauses
    def _silence(self) -> None:
        if self.tr is None or self._saved_tw is not None:
            return
        from _pytest._io import TerminalWriter

        self._saved_tw = self.tr._tw
        null = TerminalWriter(_NullFile())
        null.fullwidth = self._saved_tw.fullwidth
        self.tr._tw = null

    def _restore(self) -> None:
        if self.tr is None or self._saved_tw is None:
            return
        self.tr._tw = self._saved_tw
        self.tr.currentfspath = None
        self._saved_tw = None

    def _write(self, line: str) -> None:
        writer = self._saved_tw if self._saved_tw is not None else (self.tr._tw if self.tr else None)
        if writer is None:
            print(line, flush=True)
        else:
            writer.line(line)
            writer.flush()
        self._last_line = time.monotonic()

    # -- collection: the totals
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection(self, session: pytest.Session):
        self._silence()
        return (yield)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.state.set_totals(item_key(item) for item in session.items)
        self._announce_total()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.state.total is not None:
            return  # every worker collects the same items
        if self._xdist_keys is None:
            self._xdist_keys = NodeIdKeys()
        self.state.set_totals(self._xdist_keys(nodeid) for nodeid in ids)
        self._announce_total()

    def _announce_total(self) -> None:
        if self.live_mode or self._announced_total:
            return
        self._announced_total = True
        groups = [g for g in self.state.ordered() if g.total]
        total = self.state.total or 0
        self._write(f"[memconform] {total} check{'s' if total != 1 else ''} in {len(groups)} "
                    f"spec / level / binding group{'s' if len(groups) != 1 else ''}")

    # -- the run
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if self.live_mode and self._live is None:
            self._start_live()

    def _start_live(self) -> None:
        try:  # a duplicate of fd 1: the refresh thread must not write into pytest's fd capture
            self._stream = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace")
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            self._stream = None
        console = Console(file=self._stream or sys.stdout, force_terminal=True)

        def renderable() -> RenderableType:
            return render_live(self.state)  # laid out at each refresh for the terminal's size then

        self._live = Live(get_renderable=renderable, console=console, refresh_per_second=4, transient=False,
                          redirect_stdout=False, redirect_stderr=False)
        self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            try:
                self._live.stop()
            finally:
                self._live = None
                if self._stream is not None:
                    self._stream.flush()
                    self._stream.close()
                    self._stream = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = next((v for k, v in report.user_properties if k == "memconform"), None)
        if result is None:
            if (report.when != "teardown" or report.nodeid in self.state.seen
                    or not report.nodeid.startswith("memconform::")):
                return
            # an item that ended without a memconform result (interrupted): an error of its group
            if self._xdist_keys is None:
                self._xdist_keys = NodeIdKeys()
            key = self._xdist_keys(report.nodeid)
            if key is None:
                return
            result = {"target": key[0], "spec": key[1], "version": key[2], "level": key[3],
                      "binding": key[4], "outcome": "error"}
        group = self.state.record(report.nodeid, result)
        if group is None or self.live_mode:
            return
        if group.complete and not group.announced:
            group.announced = True
            self._write(plain_line(group, self.state))
        elif time.monotonic() - self._last_line >= HEARTBEAT:
            self._write(f"[memconform] {self.state.done}/{_count(self.state.total)} checks done "
                        f"({_elapsed(time.monotonic() - self.state.started)})")

    # -- the end
    def _finish(self) -> None:
        self._stop_live()
        if not self.live_mode:
            for group in self.state.ordered():
                if not group.announced and group.done:
                    group.announced = True
                    self._write(plain_line(group, self.state))
        self._restore()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._finish()

    def pytest_keyboard_interrupt(self) -> None:
        self._finish()

    def pytest_internalerror(self) -> None:
        self._finish()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._finish()
        from memconform.suite.plugin import STATE

        state = config.stash.get(STATE, None)
        if state is None or not state.report or not state.report.get("levels"):
            return
        table = level_table(state.report["levels"])
        if self.live_mode:
            console = Console(file=sys.stdout, force_terminal=True)
            console.print()
            console.print(table)
            return
        # a log: no colour codes, no trailing blanks
        buffer = io.StringIO()
        Console(file=buffer, width=_plain_width(), no_color=True, force_terminal=False).print(table)
        lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
        sys.stdout.write("\n" + "\n".join(lines).strip("\n") + "\n")
        sys.stdout.flush()


def _plain_width() -> int:
    try:
        return max(100, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 120


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """`-p memconform.suite.progress`: on for a run with --target, on the controller only."""
    from memconform.suite.plugin import STATE

    if hasattr(config, "workerinput") or STATE not in config.stash:
        return
    if config.getoption("collectonly", False) or config.pluginmanager.getplugin("terminalreporter") is None:
        return
    config.pluginmanager.register(ProgressPlugin(config), "memconform-progress")
