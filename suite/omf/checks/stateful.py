"""OMF's state machine (issue 16): a model-based fuzz of import, preview and export over one tenant.

`omf/stateful/import-export` drives a fresh tenant per sequence with generated trusted documents
(source.app memd, extensions.memd.v 1): items over Unicode (NFD, astral, RTL, U+2028, long texts),
texts differing only in case or spacing, the same text in several projects (and in projects whose
names differ only in case), tags, archived items (top-level status) imported with
include_archived true or false, and supersedes chains (each item may supersede the one before it:
chains of any length up to the document's). Rules: import (after a preview of the same document,
with the same flags, when drawn), re-import of the tenant's own export (into itself: all
duplicates; into a fresh tenant: the self round trip). After every step an export with every
include flag true is compared with the model (docs/catalogue-omf.md, "State machines (issue 16)").

Where the text leaves a choice open the model keeps every reading alive at once and drops those
the target's answers contradict (a target must stay consistent with at least one): the canonical
form of dedup (folded or verbatim), whether rows written earlier in the same document are
"existing" for dedup, and whether an archived duplicate is skipped or a duplicate. Tags are
compared as sets (order free; a set-reading stores them sorted).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import LIVE, cite, counts, fresh_tenant, is_memd, summarize
from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.registry import check
from memconform.suite.stateful import SpecMachine, quote, run_machine

REQUIREMENTS = ("omf/import-buckets", "omf/dedup-exact", "omf/dedup-scope-project", "omf/preview-matches-import",
                "omf/export-every-eligible", "omf/tags-verbatim", "omf/supersedes-replayed",
                "omf/superseded-by-derived", "omf/lifecycle-honoured", "omf/self-roundtrip")

PROJECTS = (None, "alpha", "Alpha", "beta")
AWKWARD = ("Jose\u0301 Mari\u0301a", "José María", "🦀 crab 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "שלום עולם مرحبا",
           "line\u2028sep\u2029end",
           "ÅNGSTRÖM", "ångström", "  spaced   out  ", "spaced out", "L" * 1500 + " long", "9007199254740993",
           "tab\tand \"quotes\"")


def _canonical(text: str, form: str) -> str:
    return text if form == "verbatim" else " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Reading:
    """One legitimate reading of the open dedup choices (docs/omf.md, policy.py)."""

    form: str            # "folded" | "verbatim"
    within: bool         # rows written earlier in this document are existing rows
    filter_first: bool   # an archived duplicate is skipped (True) or a duplicate (False)


READINGS = tuple(Reading(f, w, ff) for f, w, ff in itertools.product(("folded", "verbatim"), (True, False),
                                                                      (True, False)))


@dataclass
class Row:
    content: str
    project: str | None
    tags: frozenset[str]
    status: str
    key: int                       # unique per written row in the model
    supersedes: int | None = None  # model keys
    superseded_by: int | None = None


@dataclass
class State:
    reading: Reading
    rows: list[Row] = field(default_factory=list)

    def copy(self) -> "State":
        return State(self.reading, [replace(r) for r in self.rows])


def _simulate(state: State, items: list[dict[str, Any]], include_archived: bool, keys: itertools.count) -> dict[str, int]:
    """Import `items` into `state` under its reading; the counts {imported, duplicates, skipped}."""
    r = state.reading
    got = {"imported": 0, "duplicates": 0, "skipped": 0}
    existing = {(_canonical(x.content, r.form), x.project) for x in state.rows}
    pending: list[Row] = []
    id_map: dict[str, int] = {}
    edges: list[tuple[int, str]] = []
    for it in items:
        memd = it["extensions"]["memd"]
        canon = (_canonical(it["content"], r.form), memd.get("project_id"))
        filtered = not include_archived and it.get("status") == "archived"
        if filtered and r.filter_first:
            got["skipped"] += 1
            continue
        if canon in existing:
            got["duplicates"] += 1
            continue
        if filtered:
            got["skipped"] += 1
            continue
        row = Row(it["content"], memd.get("project_id"), frozenset(it.get("tags") or ()),
                  memd["lifecycle"]["status"], next(keys))
        if r.within:
            existing.add(canon)
        pending.append(row)
        id_map[memd["chunk_id"]] = row.key
        if memd["lifecycle"].get("supersedes"):
            edges.append((row.key, memd["lifecycle"]["supersedes"]))
        got["imported"] += 1
    state.rows.extend(pending)
    by_key = {x.key: x for x in state.rows}
    for new, old_source in edges:
        old = id_map.get(old_source)
        if old is not None:
            by_key[new].supersedes = old
            by_key[old].superseded_by = new
    return got


def _strategies() -> dict[str, Any]:
    from hypothesis import strategies as st

    letters = st.characters(blacklist_categories=("Cs", "Co", "Cn"), blacklist_characters="\x00")
    text = st.text(letters, min_size=1, max_size=24).map(lambda s: s if s.strip() else s + "a")
    # texts past 1,000 characters reach where prefix indexes and truncations live
    long_text = text.map(lambda s: (s * (1001 // len(s) + 1))[:1001 + len(s)])
    base = st.one_of(text, st.sampled_from(AWKWARD), long_text)
    how = st.sampled_from(["same", "same", "upper", "lower", "spaced"])
    item = st.fixed_dictionaries({
        "content": base, "how": how, "project": st.sampled_from(PROJECTS),
        "tags": st.lists(st.sampled_from(["a", "B", "b", "ü", "🦀", "x y"]), max_size=3, unique=True),
        "archived": st.sampled_from([False, False, False, True]),
        "supersedes_previous": st.booleans(), "status": st.sampled_from(["final", "final", "superseded", "draft"]),
        "tier": st.sampled_from(["long_term", "working"]), "again": st.integers(0, 50)})
    return {"items": st.lists(item, min_size=1, max_size=8), "include_archived": st.booleans(),
            "preview": st.booleans()}


class OmfMachine(SpecMachine):
    """Mixed into a RuleBasedStateMachine by `_machine()` (Hypothesis imported only when it runs)."""

    previews = True
    archived_flag = True

    def setup(self) -> None:
        self.tenant = fresh_tenant("sm-omf")
        self.states = [State(r) for r in READINGS]
        self.keys = itertools.count()
        self.docs = 0

    # -- documents -------------------------------------------------------------------------------

    def _document(self, drawn: list[dict[str, Any]]) -> dict[str, Any]:
        self.docs += 1
        held = [r.content for r in self.states[0].rows]
        items = []
        for i, d in enumerate(drawn):
            content = d["content"]
            if d["how"] != "same" and (held or items):
                pool = held + [x["content"] for x in items]
                source = pool[d["again"] % len(pool)]
                content = {"upper": source.upper(), "lower": source.lower(),
                           "spaced": "  " + source.replace(" ", "   ") + " "}[d["how"]]
                if not content.strip():
                    content = source
            chunk = f"src-{self.docs}-{i}"
            lifecycle = model.lifecycle(status=d["status"], tier=d["tier"])
            if d["supersedes_previous"] and items:
                lifecycle["supersedes"] = items[-1]["extensions"]["memd"]["chunk_id"]
            it = model.item(content, chunk_id=chunk, lifecycle=lifecycle, tags=list(d["tags"]),
                            **({"project": d["project"]} if d["project"] is not None else {}))
            if d["archived"]:
                it["status"] = "archived"
            items.append(it)
        # an item is superseded by at most the next one: a chain, never a fork
        return model.document(items)

    # -- reading the target back -----------------------------------------------------------------

    def _export(self, tenant: str) -> tuple[Any, list[dict[str, Any]]] | None:
        run = self.call(f"export of tenant {tenant!r} (every include flag true)", self.client.export, tenant,
                        include_history=True, include_superseded=True, include_expired=True)
        doc = run.parsed_document()
        if not run.ok or not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
            return None  # judged by the export checks
        return run, [it for it in doc["memories"] if isinstance(it, dict)]

    @staticmethod
    def _shown(it: dict[str, Any]) -> tuple[str, str | None, frozenset[str], str]:
        memd = model.memd_extension(it) or {}
        lc = memd.get("lifecycle") if isinstance(memd.get("lifecycle"), dict) else {}
        return (it.get("content"), memd.get("project_id"), frozenset(t for t in it.get("tags") or () if isinstance(t, str)),
                lc.get("status"))

    def _compare(self, state: State, exported: list[dict[str, Any]]) -> tuple[str, str] | None:
        """The first discrepancy between `state` and the export: (requirement, what), or None."""
        want = sorted(((r.content, r.project or "", sorted(r.tags), r.status) for r in state.rows), key=repr)
        shown = [self._shown(it) for it in exported]
        got = sorted(((c, p or "", sorted(t), s) for c, p, t, s in shown), key=repr)
        if want != got:
            plain_w = sorted(((c, p) for c, p, _, _ in want), key=repr)
            plain_g = sorted(((c, p) for c, p, _, _ in got), key=repr)
            if plain_w == plain_g:
                tw = {(c, p): t for c, p, t, _ in want}
                bad = [(c, p, t, tw.get((c, p))) for c, p, t, _ in got if tw.get((c, p)) != t]
                if bad:
                    return "omf/tags-verbatim", (f"the export shows tags {bad[0][2]} on {quote(bad[0][0], 80)}; the "
                                                 f"import sent {bad[0][3]}")
                sw = sorted(((c, p, st) for c, p, _, st in want), key=repr)
                sg = sorted(((c, p, st) for c, p, _, st in got), key=repr)
                return "omf/lifecycle-honoured", (f"the export shows the lifecycle statuses {_minus(sg, sw)[:3]} where "
                                                  f"the trusted imports said {_minus(sw, sg)[:3]}")
            missing = _minus(plain_w, plain_g)
            extra = _minus(plain_g, plain_w)
            if missing:
                return "omf/export-every-eligible", (
                    f"the export of {len(got)} item(s) leaves out {len(missing)} the imports wrote: "
                    f"{'; '.join(f'{quote(c, 80)} (project {p or None!r})' for c, p in missing[:4])}")
            return "omf/import-buckets", (f"the tenant holds {len(extra)} row(s) the counts did not import: "
                                          f"{'; '.join(f'{quote(c, 80)} (project {p or None!r})' for c, p in extra[:4])}")
        # edges: by (content, project), which the export shows
        ident = {r.key: (r.content, r.project) for r in state.rows}
        ids = {(model.memd_extension(it) or {}).get("chunk_id"): (it.get("content"),
               (model.memd_extension(it) or {}).get("project_id")) for it in exported}
        # ordered by repr: a project may be None beside a named one
        want_sup = sorted(((ident[r.key], ident.get(r.supersedes)) for r in state.rows if r.supersedes is not None),
                          key=repr)
        want_by = sorted(((ident[r.key], ident.get(r.superseded_by)) for r in state.rows
                          if r.superseded_by is not None), key=repr)
        got_sup, got_by = [], []
        for it in exported:
            lc = model.lifecycle_of(it)
            me = (it.get("content"), (model.memd_extension(it) or {}).get("project_id"))
            if lc.get("supersedes") is not None:
                got_sup.append((me, ids.get(lc.get("supersedes"))))
            if lc.get("superseded_by") is not None:
                got_by.append((me, ids.get(lc.get("superseded_by"))))
        if sorted(got_sup, key=repr) != sorted(want_sup, key=repr):
            return "omf/supersedes-replayed", (f"the export's supersedes edges (newer → older, by content) are "
                                               f"{_edges(got_sup)}; the imports' replayed edges are {_edges(want_sup)}")
        if sorted(got_by, key=repr) != sorted(want_by, key=repr):
            return "omf/superseded-by-derived", (f"the export's superseded_by pointers (older → newer) are "
                                                 f"{_edges(got_by)}; derived from the replayed edges they are "
                                                 f"{_edges(want_by)}")
        return None

    def _counts_problem(self, state: State, trial: State, want: dict[str, int], got: dict[str, int] | None,
                        total: int, exported: list[dict[str, Any]] | None) -> tuple[str, str]:
        if got is None or sum(got.values()) != total:
            return "omf/import-buckets", (f"the import of {total} item(s) answered {got}; each item lands in exactly "
                                          f"one bucket (expected {want} under the reading {_say(state.reading)})")
        if got["imported"] < want["imported"] and exported is not None:
            # which row the reading writes is not in the tenant: new to its project, held in another?
            shown = [(it.get("content"), (model.memd_extension(it) or {}).get("project_id")) for it in exported]
            for content, project in _minus([(r.content, r.project) for r in trial.rows], shown):
                canon = _canonical(content, "folded")
                elsewhere = sorted({repr(r.project) for r in trial.rows
                                    if r.project != project and _canonical(r.content, "folded") == canon})
                if elsewhere:
                    return "omf/dedup-scope-project", (
                        f"the import answered {got}, expected {want}: {quote(content, 80)} is new to project "
                        f"{project!r}, yet it was not written (the same text is held in project(s) "
                        f"{', '.join(elsewhere)} only)")
        return "omf/dedup-exact", (f"the import answered {got}; expected {want} (dedup against the rows of each "
                                   f"item's project, reading {_say(state.reading)})")

    # -- rules -----------------------------------------------------------------------------------

    def do_import(self, drawn: list[dict[str, Any]], include_archived: bool, preview: bool) -> None:
        doc = self._document(drawn)
        self._import(self.tenant, doc, include_archived if self.archived_flag else True, preview and self.previews,
                     f"a generated document ({summarize(doc, 500)})")

    def _import(self, tenant: str, doc: dict[str, Any], include_archived: bool, preview: bool, what: str) -> None:
        body = model.dumps(doc)
        flags = {"include_archived": include_archived} if self.archived_flag else {}
        shown = None
        if preview:
            p = self.call(f"preview into {tenant!r} of {what}, include_archived={include_archived}",
                          self.client.import_document, tenant, body, dry_run=True, **flags)
            if p.ok and isinstance(p.result, dict):
                shown = {"imported": p.result.get("to_import"), "duplicates": p.result.get("duplicates"),
                         "skipped": p.result.get("filtered")}
        run = self.call(f"import into {tenant!r} of {what}, include_archived={include_archived}",
                        self.client.import_document, tenant, body, **flags)
        got = counts(run)
        if shown is not None and got is not None and shown != got:
            self.broken("omf/preview-matches-import",
                        f"the preview of {what} into {tenant!r} (include_archived={include_archived}) answered "
                        f"to_import {shown['imported']}, duplicates {shown['duplicates']}, filtered {shown['skipped']}; "
                        f"the import that followed, same tenant and flags, answered {got}. The spec: "
                        f"{cite('omf/preview-matches-import')}",
                        sent=body[:2000], received={"preview": p.result, "import": run.result})
        if tenant != self.tenant:
            return
        self._judge(doc, include_archived, got, run)

    def _judge(self, doc: dict[str, Any], include_archived: bool, got: dict[str, int] | None, run: Any) -> None:
        exported = self._export(self.tenant)
        if exported is not None and got is not None:
            self.observed.append(1)  # an import's counts and the export after it were both compared
        alive, first = [], None
        for state in self.states:
            trial = state.copy()
            want = _simulate(trial, doc["memories"], include_archived, self.keys)
            problem = None if got == want else self._counts_problem(state, trial, want, got, len(doc["memories"]),
                                                                     exported[1] if exported else None)
            if problem is None and exported is not None:
                problem = self._compare(trial, exported[1])
            if problem is None:
                alive.append(trial)
            elif first is None:
                first = problem
        if not alive:
            rid, what = first or ("omf/import-buckets", "no reading explains the answer")
            self.broken(rid, f"{what}. Sent: import into {self.tenant!r} of {summarize(doc, 900)} "
                        f"(include_archived={include_archived}); came back: {run.describe()}. No legitimate reading "
                        f"(canonical form folded or verbatim; dedup within the document or against stored rows only; "
                        f"archived duplicates skipped or duplicates) explains it after the earlier steps. The spec: "
                        f"{cite(rid)}", sent=doc, received=exported[1] if exported else run.result)
        self.states = alive

    def do_reimport_self(self) -> None:
        """The tenant's own export imported into itself: every item a duplicate."""
        exported = self._export(self.tenant)
        if exported is None or not exported[1]:
            return
        doc = exported[0].parsed_document()
        self._import(self.tenant, doc, True, False, f"the tenant's own export ({len(exported[1])} item(s))")

    def do_roundtrip(self) -> None:
        """The tenant's own export imported into a fresh tenant: the same contents, tags, projects,
        statuses and edges (omf/self-roundtrip)."""
        exported = self._export(self.tenant)
        if exported is None or not exported[1]:
            return
        doc = exported[0].parsed_document()
        other = fresh_tenant("sm-omf-rt")
        run = self.call(f"import into a fresh tenant {other!r} of {self.tenant!r}'s export ({len(exported[1])} "
                        f"item(s))", self.client.import_document, other, model.dumps(doc),
                        **({"include_archived": True} if self.archived_flag else {}))
        again = self._export(other)
        if not run.ok or again is None:
            self.broken("omf/self-roundtrip", f"the implementation's own export of {self.tenant!r} "
                        f"({len(exported[1])} item(s)) did not import into a fresh tenant: {run.describe()}. The spec: "
                        f"{cite('omf/self-roundtrip')}", sent=doc, received=run.result or run.error)
        mine = sorted(self._key(it, exported[1]) for it in exported[1])
        theirs = sorted(self._key(it, again[1]) for it in again[1])
        if mine != theirs:
            lost, added = _minus(mine, theirs), _minus(theirs, mine)
            self.broken("omf/self-roundtrip", f"the export of {self.tenant!r} imported into the fresh tenant "
                        f"{other!r} reads back differently: lost or changed {[(quote(x[0], 60),) + x[1:] for x in lost[:3]]}, "
                        f"new {[(quote(x[0], 60),) + x[1:] for x in added[:3]]} (content, project, tags, status, tier, "
                        f"superseded content). The spec: {cite('omf/self-roundtrip')}", sent=doc, received=again[1])

    @staticmethod
    def _key(it: dict[str, Any], items: list[dict[str, Any]]) -> tuple[Any, ...]:
        lc = model.lifecycle_of(it)
        memd = model.memd_extension(it) or {}
        by_id = {(model.memd_extension(x) or {}).get("chunk_id"): x.get("content") for x in items}
        return (it.get("content"), memd.get("project_id") or "", tuple(sorted(t for t in it.get("tags") or ()
                                                                                if isinstance(t, str))),
                lc.get("status"), lc.get("tier"), by_id.get(lc.get("supersedes")) or "")


def _minus(a: list[Any], b: list[Any]) -> list[Any]:
    rest = list(b)
    out = []
    for x in a:
        if x in rest:
            rest.remove(x)
        else:
            out.append(x)
    return out


def _edges(pairs: list[Any]) -> str:
    return "[" + ", ".join(f"{quote(a[0], 40)} → {quote(b[0], 40) if b else None}" for a, b in pairs[:6]) + \
        ("…" if len(pairs) > 6 else "") + "]"


def _say(r: Reading) -> str:
    return (f"canonical {r.form}, {'dedup within the document' if r.within else 'dedup against stored rows only'}, "
            f"{'archived duplicates skipped' if r.filter_first else 'archived duplicates counted duplicates'}")


def _machine() -> type:
    from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

    s = _strategies()

    class Machine(OmfMachine, RuleBasedStateMachine):
        @initialize()
        def start(self) -> None:
            self.setup()

        @rule(items=s["items"], include_archived=s["include_archived"], preview=s["preview"])
        def import_document(self, items, include_archived, preview):
            self.do_import(items, include_archived, preview)

        @rule()
        def reimport_own_export(self):
            self.do_reimport_self()

        @rule()
        def roundtrip_to_fresh_tenant(self):
            self.do_roundtrip()

    return Machine


@check("omf/stateful/import-export", spec="omf", requirements=REQUIREMENTS, bindings=LIVE,
       title="a model-based fuzz of imports, previews and exports of one tenant: buckets, dedup scopes, "
             "supersession replay, round trips")
def import_export(ctx) -> None:
    """The machine (module doc) within the effort's budget; one finding, the shrunk sequence."""
    if not is_memd(ctx):
        raise NotApplicable("the machine reads memd's counts, projects and lifecycle: a plain consumer promises none")
    lacks = set(getattr(ctx.client, "lacks", ()) or ())
    if {"include_history", "include_superseded", "include_expired"} & lacks:
        raise NotApplicable(f"the export lacks {sorted(lacks)}: the machine reads every row back with every include flag")
    observed: list[int] = []
    run_machine(ctx, _machine(), name="OmfImportExport", previews="dry_run" not in lacks,
                archived_flag="include_archived" not in lacks, observed=observed)
    if not observed and not ctx.findings:
        # nothing passes on what it did not observe: no import answered counts with an export after it
        raise Inconclusive("no generated import came back with its counts and a readable export of the tenant, so the "
                           "model had nothing to compare (the import and export checks judge why)")

