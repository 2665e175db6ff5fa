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
form of dedup (FORMS: verbatim, trimmed, spaced, case-folded, both, both after NFKC), whether rows written earlier in the same document are
"existing" for dedup, and whether an archived duplicate is skipped or a duplicate. Tags are
compared as the arrays they are: "applied verbatim" keeps their order and repeats.

Each sequence's tenant is fresh, but the texts drawn repeat across sequences (and a round trip sends
a tenant's texts to a fresh one): a text counted a duplicate that only another tenant holds is
charged to omf/dedup-scope-tenant, never to the import that lost it.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import LIVE, counts, fresh_tenant, is_memd, summarize
from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.registry import check
from memconform.suite.stateful import SpecMachine, asks, quote, run_machine

REQUIREMENTS = ("omf/import-buckets", "omf/dedup-exact", "omf/dedup-scope-project", "omf/dedup-scope-null",
                "omf/dedup-scope-tenant",
                "omf/preview-matches-import",
                "omf/export-every-eligible", "omf/tags-verbatim", "omf/supersedes-replayed",
                "omf/superseded-by-derived", "omf/lifecycle-honoured", "omf/self-roundtrip", "omf/dedup-fuzzy",
                "omf/export-include-history", "omf/export-include-superseded", "omf/export-include-expired",
                "omf/export-lazy-expiry")

#: A past and a future expires_at_ms, far from the clock (no race with the export's lazy-expiry check).
PAST_MS, FUTURE_MS = 1_000, 4_102_444_800_000  # 1970-01-01T00:00:01Z, 2100-01-01

PROJECTS = (None, "alpha", "Alpha", "beta")
AWKWARD = ("Jose\u0301 Mari\u0301a", "José María", "🦀 crab 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "שלום עולם مرحبا",
           "line\u2028sep\u2029end",
           "ÅNGSTRÖM", "ångström", "  spaced   out  ", "spaced out", "L" * 1500 + " long", "9007199254740993",
           "tab\tand \"quotes\"")


#: The canonical forms dedup may compare ("canonical form" is never defined): the text as given, trimmed,
#: its white space collapsed, case-folded, both (the reference's "folded"), and that after NFKC. A blind
#: red team's trim-only form was failed when the model knew two.
FORMS = ("folded", "verbatim", "trimmed", "spaced", "cased", "folded-nfkc")


@functools.lru_cache(maxsize=4096)
def _canonical(text: str, form: str) -> str:
    if form == "verbatim":
        return text
    if form == "trimmed":
        return text.strip()
    if form == "cased":
        return text.casefold()
    if form == "spaced":
        return " ".join(text.split())
    if form == "folded-nfkc":
        return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()
    return " ".join(text.split()).casefold()


@functools.lru_cache(maxsize=4096)
def _trigrams(text: str, kind: str) -> frozenset[str]:
    """"trigram Jaccard" without a definition of trigrams: the canonical text's character trigrams,
    pg_trgm's (each word padded with two blanks before and one after), or the whole text's, lower-cased
    and padded so."""
    if kind == "padded":
        padded = "  " + text.lower() + " "
        return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))
    if kind == "words":
        return frozenset(g for word in text.split() for padded in ("  " + word + " ",)
                         for g in (padded[i:i + 3] for i in range(len(padded) - 2)))
    if len(text) < 3:
        return frozenset((text,)) if text else frozenset()
    return frozenset(text[i:i + 3] for i in range(len(text) - 2))


def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


@dataclass(frozen=True)
class Reading:
    """One legitimate reading of the open dedup choices (docs/omf.md, policy.py)."""

    form: str            # one of FORMS
    within: bool         # rows written earlier in this document are existing rows
    filter_first: bool   # an archived duplicate is skipped (True) or a duplicate (False)
    # fuzzy dedup (omf/dedup-fuzzy), chosen at the first import with a fuzzy_threshold: trigrams of
    # "characters", "words" or "padded" (`_trigrams`), a similarity equal to the threshold a duplicate
    # (strict False) or not
    trigrams: str | None = None
    strict: bool | None = None
    # pass 2 (the text names MetadataStore::atomic_supersede and the superseded_by pointer it writes, no
    # more): the older row keeps its parsed status (False) or atomic_supersede marks it superseded (True)
    marks_status: bool = False
    # pass 2's source → target map holds the written items only (False), or also a duplicate's source id
    # mapped to the existing row it matched (True): the text does not say whether an edge to an item
    # deduplicated away is dropped or lands on the row that item is a duplicate of
    maps_duplicates: bool = False


READINGS = tuple(Reading(f, w, ff, marks_status=m, maps_duplicates=d) for f, w, ff, m, d in
                 itertools.product(FORMS, (True, False), (True, False), (False, True), (False, True)))


@dataclass
class Row:
    content: str
    project: str | None
    tags: tuple[str, ...]          # as sent: order and repeats are kept (omf/tags-verbatim)
    status: str
    key: int                       # unique per written row in the model
    supersedes: int | None = None  # model keys
    superseded_by: int | None = None
    tier: str = "long_term"
    expires: int | None = None     # expires_at_ms as sent


@dataclass
class State:
    reading: Reading
    rows: list[Row] = field(default_factory=list)

    def copy(self) -> "State":
        return State(self.reading, [replace(r) for r in self.rows])


def _simulate(state: State, items: list[dict[str, Any]], include_archived: bool, keys: itertools.count,
              fuzzy: float | None = None) -> dict[str, int]:
    """Import `items` into `state` under its reading; the counts {imported, duplicates, skipped}."""
    r = state.reading
    got = {"imported": 0, "duplicates": 0, "skipped": 0}
    existing: dict[tuple[str, str | None], int] = {}  # canonical form and project -> the first such row
    for x in state.rows:
        existing.setdefault((_canonical(x.content, r.form), x.project), x.key)
    # the trigrams of each scope's rows (with the row), for fuzzy dedup
    near: dict[str | None, list[tuple[frozenset[str], int]]] = {}
    if fuzzy is not None:
        for x in state.rows:
            near.setdefault(x.project, []).append((_trigrams(_canonical(x.content, r.form), r.trigrams or "characters"),
                                                   x.key))

    def similar(canon: str, project: str | None) -> int | None:
        """The first row of the scope the text is a fuzzy duplicate of."""
        if fuzzy is None:
            return None
        mine = _trigrams(canon, r.trigrams or "characters")
        return next((key for other, key in near.get(project, ())
                     if (_similarity(mine, other) > fuzzy if r.strict else _similarity(mine, other) >= fuzzy)), None)
    pending: list[Row] = []
    id_map: dict[str, int] = {}
    duplicate_of: dict[str, int] = {}  # a duplicate's source chunk id -> the row it matched
    edges: list[tuple[int, str]] = []
    for it in items:
        memd = it["extensions"]["memd"]
        canon = (_canonical(it["content"], r.form), memd.get("project_id"))
        filtered = not include_archived and it.get("status") == "archived"
        if filtered and r.filter_first:
            got["skipped"] += 1
            continue
        matched = existing.get(canon)
        if matched is None:
            matched = similar(*canon)
        if matched is not None:
            got["duplicates"] += 1
            duplicate_of.setdefault(memd["chunk_id"], matched)
            continue
        if filtered:
            got["skipped"] += 1
            continue
        lc = memd["lifecycle"]
        row = Row(it["content"], memd.get("project_id"), tuple(it.get("tags") or ()),
                  lc["status"], next(keys), tier=lc.get("tier") or "long_term", expires=lc.get("expires_at_ms"))
        if r.within:
            existing.setdefault(canon, row.key)
            if fuzzy is not None:
                near.setdefault(canon[1], []).append((_trigrams(canon[0], r.trigrams or "characters"), row.key))
        pending.append(row)
        id_map[memd["chunk_id"]] = row.key
        if memd["lifecycle"].get("supersedes"):
            edges.append((row.key, memd["lifecycle"]["supersedes"]))
        got["imported"] += 1
    if r.maps_duplicates:
        for source, key in duplicate_of.items():
            id_map.setdefault(source, key)
    state.rows.extend(pending)
    by_key = {x.key: x for x in state.rows}
    for new, old_source in edges:
        old = id_map.get(old_source)
        if old is not None:
            by_key[new].supersedes = old
            by_key[old].superseded_by = new
            if r.marks_status:
                by_key[old].status = "superseded"
    return got


# Named functions, not lambdas, in the strategies: Hypothesis describes a rule's strategies when a
# drawn rule is turned down, and it describes a lambda by parsing its source file.
def _not_blank(s: str) -> str:
    return s if s.strip() else s + "a"


def _past_1000(s: str) -> str:
    """Texts past 1,000 characters reach where prefix indexes and truncations live."""
    return (s * (1001 // len(s) + 1))[:1001 + len(s)]


def _strategies() -> dict[str, Any]:
    from hypothesis import strategies as st

    letters = st.characters(blacklist_categories=("Cs", "Co", "Cn"), blacklist_characters="\x00")
    text = st.text(letters, min_size=1, max_size=24).map(_not_blank)
    long_text = text.map(_past_1000)
    base = st.one_of(text, st.sampled_from(AWKWARD), long_text)
    how = st.sampled_from(["same", "same", "upper", "lower", "spaced", "same", "upper", "near", "near-upper",
                           "near-cut"])
    item = st.fixed_dictionaries({
        "content": base, "how": how, "project": st.sampled_from(PROJECTS),
        # repeats and any order: tags are applied verbatim, as the array sent
        "tags": st.lists(st.sampled_from(["a", "B", "b", "ü", "🦀", "x y"]), max_size=4),
        "archived": st.sampled_from([False, False, False, True]),
        "supersedes_previous": st.booleans(),
        "status": st.sampled_from(["final", "final", "superseded", "draft", "expired"]),
        "tier": st.sampled_from(["long_term", "working", "history"]), "again": st.integers(0, 50),
        "expires": st.sampled_from([None, "past", None, "past", "future"])})
    return {"items": st.lists(item, min_size=1, max_size=8), "include_archived": st.booleans(),
            "preview": st.booleans(), "fuzzy": st.sampled_from([None, None, None, 0.3, 0.5, 0.8, 1.0]),
            # every combination but all true (the export after each import), the lazy-expiry one most
            "flags": st.sampled_from([(True, True, False), (False, False, False), (True, True, False),
                                      (False, True, True), (True, False, True), (False, True, False),
                                      (True, False, False), (False, False, True), (True, True, False)])}


class OmfMachine(SpecMachine):
    """Mixed into a RuleBasedStateMachine by `_machine()` (Hypothesis imported only when it runs)."""

    previews = True
    archived_flag = True
    fuzzy = True
    #: (content, project) → the tenants this run sent it to, across sequences (run_machine's attribute)
    elsewhere: dict[tuple[str, str | None], set[str]] | None = None

    def setup(self) -> None:
        self.tenant = fresh_tenant("sm-omf")
        self.states = [State(r) for r in READINGS]
        self.keys = itertools.count()
        self.docs = 0
        for offered, what in ((self.previews, "dry_run: omf/preview-matches-import"),
                              (self.fuzzy, "fuzzy_threshold: omf/dedup-fuzzy")):
            if not offered:
                self.note(f"the target's import takes no {what} not judged")

    # -- documents -------------------------------------------------------------------------------

    def _document(self, drawn: list[dict[str, Any]]) -> dict[str, Any]:
        self.docs += 1
        held = [(r.content, r.project) for r in self.states[0].rows]
        items = []
        for i, d in enumerate(drawn):
            content, project = d["content"], d["project"]
            if d["how"] != "same" and (held or items):
                pool = held + [(x["content"], (model.memd_extension(x) or {}).get("project_id")) for x in items]
                source, where = pool[d["again"] % len(pool)]
                # a copy mostly lands in its source's project (a duplicate), else in the project whose name
                # differs from it only in case, or anywhere
                project = where if d["again"] % 3 else {"alpha": "Alpha", "Alpha": "alpha"}.get(where, project)
                # near copies (fuzzy dedup): a word added, the last character cut, case changed too
                content = {"upper": source.upper(), "lower": source.lower(),
                           "spaced": "  " + source.replace(" ", "   ") + " ", "near": source + " again",
                           "near-upper": source.upper() + " AGAIN", "near-cut": source[:-1]}[d["how"]]
                if not content.strip():
                    content = source
            chunk = f"src-{self.docs}-{i}"
            expires = {None: None, "past": PAST_MS, "future": FUTURE_MS}[d["expires"]]
            lifecycle = model.lifecycle(status=d["status"], tier=d["tier"], expires_at_ms=expires)
            if d["supersedes_previous"] and items:
                lifecycle["supersedes"] = items[-1]["extensions"]["memd"]["chunk_id"]
            it = model.item(content, chunk_id=chunk, lifecycle=lifecycle, tags=list(d["tags"]),
                            **({"project": project} if project is not None else {}))
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
    def _shown(it: dict[str, Any]) -> tuple[str, str | None, tuple[Any, ...], tuple[Any, ...]]:
        """content, project, tags (in the export's order), and the lifecycle (status, tier,
        expires_at_ms) as exported."""
        memd = model.memd_extension(it) or {}
        lc = memd.get("lifecycle") if isinstance(memd.get("lifecycle"), dict) else {}
        return (it.get("content"), memd.get("project_id"), _tags(it),
                (lc.get("status"), lc.get("tier"), lc.get("expires_at_ms")))

    def _compare(self, state: State, exported: list[dict[str, Any]],
                 rows: list[Row] | None = None) -> tuple[str, str] | None:
        """The first discrepancy between `state` (or those of its `rows` an export with flags may
        show) and the export: (requirement, what), or None."""
        rows = state.rows if rows is None else rows
        want = sorted(((r.content, r.project or "", list(r.tags), (r.status, r.tier, r.expires)) for r in rows),
                      key=repr)
        shown = [self._shown(it) for it in exported]
        got = sorted(((c, p or "", list(t), s) for c, p, t, s in shown), key=repr)
        if want != got:
            plain_w = sorted(((c, p) for c, p, _, _ in want), key=repr)
            plain_g = sorted(((c, p) for c, p, _, _ in got), key=repr)
            if plain_w == plain_g:
                tw = {(c, p): t for c, p, t, _ in want}
                bad = [(c, p, t, tw.get((c, p))) for c, p, t, _ in got if tw.get((c, p)) != t]
                if bad:
                    return "omf/tags-verbatim", (f"the export shows tags {bad[0][2]} on {quote(bad[0][0], 80)}; the "
                                                 f"import sent {bad[0][3]} (the same array: order and repeats kept)")
                sw = sorted(((c, p, st) for c, p, _, st in want), key=repr)
                sg = sorted(((c, p, st) for c, p, _, st in got), key=repr)
                return "omf/lifecycle-honoured", (f"the export shows the lifecycles (status, tier, expires_at_ms) "
                                                  f"{_minus(sg, sw)[:3]} where the trusted imports said "
                                                  f"{_minus(sw, sg)[:3]}")
            missing = _minus(plain_w, plain_g)
            extra = _minus(plain_g, plain_w)
            if missing:
                return "omf/export-every-eligible", (
                    f"the export of {len(got)} item(s) leaves out {len(missing)} the imports wrote: "
                    f"{'; '.join(f'{quote(c, 80)} (project {p or None!r})' for c, p in missing[:4])}")
            return "omf/import-buckets", (f"the tenant holds {len(extra)} row(s) the counts did not import: "
                                          f"{'; '.join(f'{quote(c, 80)} (project {p or None!r})' for c, p in extra[:4])}")
        if rows is not state.rows:
            return None  # a filtered export: its edges may name rows it leaves out
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

    def _held_by_others(self, content: str, project: str | None, form: str) -> list[str]:
        """The other tenants this run sent `content` (in `form`'s canonical form) to, in `project`."""
        canon = _canonical(content, form)
        return sorted({tenant for (text, where), tenants in (self.elsewhere or {}).items()
                       if where == project and _canonical(text, form) == canon
                       for tenant in tenants if tenant != self.tenant})

    def _hold(self, tenant: str, items: list[dict[str, Any]]) -> None:
        """Remember which texts `tenant` was sent (for omf/dedup-scope-tenant's blame), run-wide."""
        if self.elsewhere is None:
            return
        for it in items:
            if isinstance(it, dict) and isinstance(it.get("content"), str):
                project = (model.memd_extension(it) or {}).get("project_id")
                self.elsewhere.setdefault((it["content"], project), set()).add(tenant)

    def _counts_problem(self, state: State, trial: State, want: dict[str, int], got: dict[str, int] | None,
                        total: int, exported: list[dict[str, Any]] | None, items: list[dict[str, Any]] = (),
                        include_archived: bool = True, fuzzy: float | None = None) -> tuple[str, str]:
        if got is None or sum(got.values()) != total:
            return "omf/import-buckets", (f"the import of {total} item(s) answered {got}; each item lands in exactly "
                                          f"one bucket (expected {want} under the reading {_say(state.reading)})")
        if got["imported"] < want["imported"] and exported is not None:
            # which row the reading writes is not in the tenant: new to its project, held in another?
            shown = [(it.get("content"), (model.memd_extension(it) or {}).get("project_id")) for it in exported]
            for content, project in _minus([(r.content, r.project) for r in trial.rows], shown):
                canon = _canonical(content, state.reading.form)
                elsewhere = sorted({repr(r.project) for r in trial.rows
                                    if r.project != project and _canonical(r.content, state.reading.form) == canon})
                if elsewhere and project is None:  # "project_id IS NULL rows only"
                    return "omf/dedup-scope-null", (
                        f"the import answered {got}, expected {want}: {quote(content, 80)} is new to the unscoped rows "
                        f"(no project), yet it was not written (the same text is held in project(s) "
                        f"{', '.join(elsewhere)} only)")
                if elsewhere:
                    return "omf/dedup-scope-project", (
                        f"the import answered {got}, expected {want}: {quote(content, 80)} is new to project "
                        f"{project!r}, yet it was not written (the same text is held in project(s) "
                        f"{', '.join(elsewhere)} only)")
                others = self._held_by_others(content, project, state.reading.form)
                if others:
                    return "omf/dedup-scope-tenant", (
                        f"the import answered {got}, expected {want}: {quote(content, 80)} is new to tenant "
                        f"{self.tenant!r} (project {project!r}), yet it was not written; the same text is held in that "
                        f"project only by other tenants this run wrote to ({', '.join(map(repr, others[:3]))})")
        if fuzzy is not None:
            exact = _simulate(state.copy(), items, include_archived, itertools.count(), None)
            if exact != want or got == exact:  # the near copies decided it
                return "omf/dedup-fuzzy", (f"the import with fuzzy_threshold {fuzzy} answered {got}; expected {want} "
                                           f"(without fuzzy dedup it would be {exact}; trigram Jaccard against the rows "
                                           f"of each item's project, reading {_say(state.reading)})")
        return "omf/dedup-exact", (f"the import answered {got}; expected {want} (dedup against the rows of each "
                                   f"item's project, reading {_say(state.reading)})")

    # -- rules -----------------------------------------------------------------------------------

    def do_import(self, drawn: list[dict[str, Any]], include_archived: bool, preview: bool,
                  fuzzy: float | None = None) -> None:
        doc = self._document(drawn)
        self._import(self.tenant, doc, include_archived if self.archived_flag else True, preview and self.previews,
                     f"a generated document ({summarize(doc, 500)})", fuzzy if self.fuzzy else None)

    def _import(self, tenant: str, doc: dict[str, Any], include_archived: bool, preview: bool, what: str,
                fuzzy: float | None = None) -> None:
        body = model.dumps(doc)
        flags: dict[str, Any] = {"include_archived": include_archived} if self.archived_flag else {}
        if fuzzy is not None:
            flags["fuzzy_threshold"] = fuzzy
            what += f", fuzzy_threshold={fuzzy}"
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
        if shown is not None and got is not None:
            self.judged("omf/preview-matches-import")
        if shown is not None and got is not None and shown != got \
                and not self._previewed_from_stored_rows(doc["memories"], include_archived, fuzzy, shown):
            self.broken("omf/preview-matches-import",
                        f"the preview of {what} into {tenant!r} (include_archived={include_archived}) answered "
                        f"to_import {shown['imported']}, duplicates {shown['duplicates']}, filtered {shown['skipped']}; "
                        f"the import that followed, same tenant and flags, answered {got}. The spec: "
                        f"{asks('omf', 'omf/preview-matches-import')}",
                        sent=body[:2000], received={"preview": p.result, "import": run.result})
        self._hold(tenant, doc["memories"])
        if tenant != self.tenant:
            return
        self._judge(doc, include_archived, got, run, fuzzy)

    def _previewed_from_stored_rows(self, items: list[dict[str, Any]], include_archived: bool,
                                    fuzzy: float | None, shown: dict[str, Any]) -> bool:
        """Whether the preview's counts are what a preview that, writing nothing, looks duplicates up
        among the stored rows only makes of `items` under a reading still alive ("walks the same … path
        … but never writes"; variant omf-preview-stored-rows-only). The import's own counts are judged
        against the readings after it."""
        for state in self.states:
            # before the first fuzzy import no reading has chosen its trigrams yet: try each, as _judge forks
            choices = ([(kind, strict) for kind in ("characters", "words", "padded") for strict in (False, True)]
                       if fuzzy is not None and state.reading.trigrams is None
                       else [(state.reading.trigrams, state.reading.strict)])
            for kind, strict in choices:
                trial = State(replace(state.reading, within=False, trigrams=kind, strict=strict), state.copy().rows)
                if _simulate(trial, items, include_archived, itertools.count(10 ** 9), fuzzy) == shown:
                    return True
        return False

    def _judge(self, doc: dict[str, Any], include_archived: bool, got: dict[str, int] | None, run: Any,
               fuzzy: float | None = None) -> None:
        exported = self._export(self.tenant)
        if exported is not None and got is not None:
            self.observed.append(1)  # an import's counts and the export after it were both compared
        if fuzzy is not None and any(st.reading.trigrams is None for st in self.states):
            # the first fuzzy import: each reading forks over the fuzzy choices
            self.states = [State(replace(st.reading, trigrams=kind, strict=strict), st.rows)
                           for st in self.states for kind in ("characters", "words", "padded")
                           for strict in (False, True)]
        self._judged_import(doc["memories"], got, exported, fuzzy)
        alive, first = [], None
        for state in self.states:
            trial = state.copy()
            want = _simulate(trial, doc["memories"], include_archived, self.keys, fuzzy)
            problem = None if got == want else self._counts_problem(state, trial, want, got, len(doc["memories"]),
                                                                     exported[1] if exported else None,
                                                                     doc["memories"], include_archived, fuzzy)
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
                        f"(canonical form {', '.join(FORMS)}; dedup within the document or against stored rows only; "
                        f"archived duplicates skipped or duplicates) explains it after the earlier steps. The spec: "
                        f"{asks('omf', rid)}", sent=doc, received=exported[1] if exported else run.result)
        self.states = alive

    def _judged_import(self, items: list[dict[str, Any]], got: dict[str, int] | None,
                       exported: tuple[Any, list[dict[str, Any]]] | None, fuzzy: float | None) -> None:
        """What comparing this import's counts and the export after it with the model can show,
        given what the tenant and the document hold."""
        rows = self.states[0].rows if self.states else []
        if got is not None:
            self.judged("omf/import-buckets")
            # identical text, which every canonical form maps together
            texts = [(r.content, r.project) for r in rows] + \
                [(it["content"], (it["extensions"]["memd"]).get("project_id")) for it in items]
            if len(set(texts)) < len(texts):
                self.judged("omf/dedup-exact")  # a text met twice in one project: one is a duplicate
            by_text: dict[str, set[Any]] = {}
            for text, project in texts:
                by_text.setdefault(text, set()).add(project)
            if any(len(projects) > 1 for projects in by_text.values()):
                self.judged("omf/dedup-scope-project")  # the same text in two projects: both written
            if any(len(projects) > 1 and None in projects for projects in by_text.values()):
                self.judged("omf/dedup-scope-null")  # the same text unscoped and in a project: both written
            if fuzzy is not None and (rows or len(items) > 1):
                self.judged("omf/dedup-fuzzy")
        if exported is None:
            return
        after = rows + [None] * (got or {}).get("imported", 0)
        if after:
            self.judged("omf/export-every-eligible", "omf/lifecycle-honoured")
        if any(r.tags for r in rows) or any(it.get("tags") for it in items):
            self.judged("omf/tags-verbatim")
        if any(r.supersedes is not None for r in rows) or \
                any(it["extensions"]["memd"]["lifecycle"].get("supersedes") for it in items):
            self.judged("omf/supersedes-replayed", "omf/superseded-by-derived")

    def do_export_filtered(self, flags: tuple[bool, bool, bool]) -> None:
        """An export with include_history / include_superseded / include_expired drawn (not all
        true): the rows the model holds that those flags keep, and no other (lazy expiry: a past
        expires_at_ms is expired)."""
        history, superseded, expired = flags
        run = self.call(f"export of tenant {self.tenant!r} with include_history={history}, include_superseded="
                        f"{superseded}, include_expired={expired}", self.client.export, self.tenant,
                        include_history=history, include_superseded=superseded, include_expired=expired)
        doc = run.parsed_document()
        if not run.ok or not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
            return  # judged by the export checks
        exported = [it for it in doc["memories"] if isinstance(it, dict)]
        rows = self.states[0].rows if self.states else []
        for flag, requirement, held in (
                (history, "omf/export-include-history", lambda r: r.tier == "history"),
                (superseded, "omf/export-include-superseded", lambda r: r.status == "superseded"),
                (expired, "omf/export-include-expired", lambda r: r.status == "expired"),
                (expired, "omf/export-lazy-expiry", lambda r: r.expires is not None and r.expires <= PAST_MS)):
            if not flag and any(held(r) for r in rows):
                self.judged(requirement)  # a row the flag leaves out is held: one shown would be seen

        def why_not(r: Row) -> str | None:
            if not history and r.tier == "history":
                return "omf/export-include-history"
            if not superseded and r.status == "superseded":
                return "omf/export-include-superseded"
            if not expired and r.status == "expired":
                return "omf/export-include-expired"
            if not expired and r.expires is not None and r.expires <= PAST_MS:
                return "omf/export-lazy-expiry"
            return None

        alive, first = [], None
        for state in self.states:
            kept = [r for r in state.rows if why_not(r) is None]
            problem = self._compare(state, exported, kept)
            if problem is not None and problem[0] == "omf/import-buckets":
                # rows shown that the flags leave out: which flag they ignore
                shown = [(c, p) for c, p, _, _ in (self._shown(it) for it in exported)]
                extra = _minus(shown, [(r.content, r.project) for r in kept])
                dropped = [r for r in state.rows if why_not(r) and (r.content, r.project) in extra]
                if dropped:
                    rid = why_not(dropped[0])
                    r = dropped[0]
                    problem = (rid, f"the export with include_history={history}, include_superseded={superseded}, "
                                    f"include_expired={expired} shows {quote(r.content, 80)} (project {r.project!r}, "
                                    f"status {r.status}, tier {r.tier}, expires_at_ms {r.expires}), which those flags "
                                    f"leave out")
            if problem is None:
                alive.append(state)
            elif first is None:
                first = problem
        if not alive:
            rid, what = first or ("omf/export-every-eligible", "no reading explains the export")
            self.broken(rid, f"{what}. The spec: {asks('omf', rid)}", received=exported)
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
        self._hold(other, exported[1])
        got = counts(run)
        if got is not None:
            # The tenant was consistent with a reading of dedup, so its export holds no two rows that
            # reading dedups: a fresh tenant has nothing else for an item to match.
            self.judged("omf/dedup-scope-tenant")
            if got["duplicates"]:
                self.broken("omf/dedup-scope-tenant", f"the export of {self.tenant!r} ({len(exported[1])} item(s)) "
                            f"imported into the fresh tenant {other!r} answered {got}: a tenant that held nothing "
                            f"counted {got['duplicates']} duplicate(s), which only another tenant's rows can have "
                            f"matched. The spec: {asks('omf', 'omf/dedup-scope-tenant')}", sent=doc, received=run.result)
        again = self._export(other)
        if not run.ok or again is None:
            self.broken("omf/self-roundtrip", f"the implementation's own export of {self.tenant!r} "
                        f"({len(exported[1])} item(s)) did not import into a fresh tenant: {run.describe()}. The spec: "
                        f"{asks('omf', 'omf/self-roundtrip')}", sent=doc, received=run.result or run.error)
        self.judged("omf/self-roundtrip")
        mine = sorted(self._key(it, exported[1]) for it in exported[1])
        theirs = sorted(self._key(it, again[1]) for it in again[1])
        if mine != theirs:
            lost, added = _minus(mine, theirs), _minus(theirs, mine)
            self.broken("omf/self-roundtrip", f"the export of {self.tenant!r} imported into the fresh tenant "
                        f"{other!r} reads back differently: lost or changed {[(quote(x[0], 60),) + x[1:] for x in lost[:3]]}, "
                        f"new {[(quote(x[0], 60),) + x[1:] for x in added[:3]]} (content, project, tags, status, tier, "
                        f"superseded content). The spec: {asks('omf', 'omf/self-roundtrip')}", sent=doc, received=again[1])

    @staticmethod
    def _key(it: dict[str, Any], items: list[dict[str, Any]]) -> tuple[Any, ...]:
        lc = model.lifecycle_of(it)
        memd = model.memd_extension(it) or {}
        by_id = {(model.memd_extension(x) or {}).get("chunk_id"): x.get("content") for x in items}
        return (it.get("content"), memd.get("project_id") or "", _tags(it),
                lc.get("status"), lc.get("tier"), by_id.get(lc.get("supersedes")) or "")


def _tags(it: dict[str, Any]) -> tuple[Any, ...]:
    """An exported item's tags as sent back, in order (an absent member is no tags; a member that is
    no array is shown as it is)."""
    tags = it.get("tags", [])
    return tuple(tags) if isinstance(tags, list) else (tags,)


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
            f"{'archived duplicates skipped' if r.filter_first else 'archived duplicates counted duplicates'}"
            f"{', a superseded row marked superseded' if r.marks_status else ''}"
            f"{', edges to a deduplicated item land on the row it matched' if r.maps_duplicates else ''}")


def _machine() -> type:
    from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

    s = _strategies()

    class Machine(OmfMachine, RuleBasedStateMachine):
        @initialize()
        def start(self) -> None:
            self.setup()

        @rule(items=s["items"], include_archived=s["include_archived"], preview=s["preview"], fuzzy=s["fuzzy"])
        def import_document(self, items, include_archived, preview, fuzzy):
            self.do_import(items, include_archived, preview, fuzzy)

        @rule(flags=s["flags"])
        def export_with_flags(self, flags):
            self.do_export_filtered(flags)

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
                archived_flag="include_archived" not in lacks, fuzzy="fuzzy_threshold" not in lacks,
                observed=observed, elsewhere={})
    if not observed and not ctx.findings:
        # nothing passes on what it did not observe: no import answered counts with an export after it
        raise Inconclusive("no generated import came back with its counts and a readable export of the tenant, so the "
                           "model had nothing to compare (the import and export checks judge why)")

