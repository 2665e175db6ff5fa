"""UPP's state machine (issue 16): a model-based fuzz of a user's events over the client protocol.

`upp/stateful/events` drives two fresh users per sequence with generated operations — import of
generated packages (one user, the other, or both at once), import of a variant of a value already
held (case changed, NFD), deletion by ids (with another user's id and an unknown one mixed in) or
of everything, export, and re-import of one user's export into the other — and after every step
compares what the server shows (upp/get_events; the export file when it reads one) with a model of
what the spec says the state must be (docs/catalogue-upp.md, "State machines (issue 16)"):

* every event placed is listed, with its value, labels and confidence as sent (values generated
  over Unicode: NFD, astral, RTL, U+2028, long texts; keys differing only in case);
* import stores a package's events in created_at order (instants, with offsets and fractions;
  package order for ties) applying supersession; a later import supersedes like a later ingest.
  Packages list their events in that order, so a server storing them in package order (03 §4
  fixes no order: "assigns new IDs and timestamps") stores the same sequence;
* singular labels: the newest valid event sharing one supersedes every other (superseded_by names
  it); plural labels accumulate; an event with both kinds is superseded through its singular ones;
* delete_events is physical, counts what it deleted, touches no other user;
* an export holds every event; importing it elsewhere stores every event again.

Readings accepted (docs/live-upp.md): any listing order; an emptied user may be unknown (-32001)
or empty; an event whose superseder was deleted may stay superseded (pointer null, naming an
existing event, or still naming the deleted one: events are never modified) or be valid again; confidences are 0.9..1.0, high in every staging reading.
Events are placed with upp/import_events, so the machine needs it, upp/get_events and shared
files (else it is not applicable).
"""

from __future__ import annotations

import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.stateful import SpecMachine, quote, run_machine
from memconform.suite.upp import ontology
from memconform.suite.upp.isotime import instant as _instant
from memconform.suite.upp.checks._common import (
    LIVE, METHOD_NOT_FOUND, USER_NOT_FOUND, compact, fresh_entity, known_labels, require_offered, served,
    server_ontology, spec_ref,
)
from memconform.suite.upp.checks._placing import (FINISHED, client_timeout, folder_learned, import_folder,
                                                  package_file, read_export_file)


def duplicate_form(value: str) -> str:
    """A value as a duplicate detector that ignores case, runs of whitespace and Unicode
    compatibility forms sees it (08 §6 leaves what a duplicate is to the implementation)."""
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


SINGULAR = ("who_name", "where_home", "when_timezone")
PLURAL = ("what_interests_hobbies", "who_languages", "what_skills")
#: Every singular label of user/v1: an ingest may store any label of the ontology.
SINGULARS = ontology.user_v1().singular
PLURALS = ontology.user_v1().plural

REQUIREMENTS = ("upp/import-persists", "upp/get-events-complete", "upp/events-retained",
                "upp/supersession-singular", "upp/import-supersession", "upp/plural-accumulate",
                "upp/one-valid-per-singular", "upp/supersession-superseded-by", "upp/superseded-by-existing",
                "upp/delete-by-ids", "upp/delete-count", "upp/delete-other-users-untouched",
                "upp/export-all-events", "upp/ingest-persists", "upp/contextualize-retrieves-existing",
                "upp/contextualize-task-pollable", "upp/contextualize-background-ingest", "upp/get-tasks-one-per-id",
                "upp/get-tasks-unknown-omitted", "upp/get-tasks-retained", "upp/lifecycle-transitions",
                "upp/delete-physical", "upp/delete-all")

#: Texts scenarios never send: combining marks (NFD), astral characters, right-to-left script, the
#: JSON-unsafe line separators, a long text.
AWKWARD = ("Jose\u0301 Mari\u0301a", "José María", "🦀 Ferris the crab 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
           "שלום עולם مرحبا",
           "line one\u2028line two\u2029end", "tab\tand \"quotes\" and \\ backslash", "ÅNGSTRÖM", "ångström",
           "x" * 3000 + " long", "9007199254740993", "0.1 + 0.2 = 0.30000000000000004", "İstanbul ǅ ß ﬁ")

EPOCH = datetime(2001, 2, 3, 4, 5, 6, tzinfo=timezone.utc)

#: The most events the machine lets one user hold. Re-importing one user's export into the other
#: doubles what they hold, so a long sequence (--effort thorough) grew a user to ~10k events and a
#: correct server importing in quadratic time passed the per-operation timeout: the run ended in
#: "error". No finding needs more than a few dozen events (supersession, pointers, deletion all
#: show on a handful), so a step that would take a user past this bound is not run.
MAX_HELD = 80

#: What ingest's generated texts tell (one to five words of letters for a name; the rest of the clause
#: for a place, a hobby, a language).
NAMES = ("Ada Lovelace", "Zoë Ærøe", "José María", "Łukasz Żółw", "ŞENOL", "grace hopper", "O'Brien-Smith",
         "Jean-Luc Picard", "Ngũgĩ", "Ada")
PLACES = ("Lisbon", "São Paulo", "Zürich", "東京", "Tel Aviv-Yafo", "the Dolomites", "Reykjavík", "Lisbon")
HOBBIES = ("hiking", "chess", "rock climbing and chess", "🦀 crabs", "ÜBERFLÜSSIG things", "hiking")
LANGUAGES = ("Portuguese", "Ελληνικά", "עברית", "Portuguese and Welsh")


def _text(said: tuple[list[str], str, str, str]) -> str:
    clauses, opening, how, stop = said
    text = opening + stop.join(clauses) + stop.strip()
    return text.lower() if how == "lower" else text.upper() if how == "upper" else text


# Named functions, not lambdas, in the strategies: Hypothesis describes a rule's strategies when a
# drawn rule is turned down, and it describes a lambda by parsing its source file (a lambda made
# anew by each _strategies() call is parsed anew).
def _not_blank(s: str) -> str:
    return s if s.strip() else s + "a"


def _spaced(pair: tuple[str, str]) -> str:
    return f"{pair[0]} {pair[1]}"


def _formatted(pair: tuple[str, str]) -> str:
    return pair[0].format(pair[1])


def _strategies() -> dict[str, Any]:
    from hypothesis import strategies as st

    letters = st.characters(blacklist_categories=("Cs", "Co", "Cn"), blacklist_characters="\x00")
    text = st.text(letters, min_size=1, max_size=30).map(_not_blank)
    value = st.one_of(text, st.sampled_from(AWKWARD),
                      st.tuples(st.sampled_from(AWKWARD), text).map(_spaced))
    labels = st.one_of(st.tuples(st.sampled_from(SINGULAR)).map(list), st.tuples(st.sampled_from(PLURAL)).map(list),
                       st.tuples(st.sampled_from(SINGULAR), st.sampled_from(PLURAL)).map(list),
                       st.tuples(st.sampled_from(PLURAL), st.sampled_from(SINGULAR)).map(list))
    confidence = st.one_of(st.sampled_from([1.0, 0.9, 0.95, 1, 0.9000000000000001, 0.9999999999999999]),
                           st.floats(0.9, 1.0))
    offset = st.sampled_from([0, 0, 60, 120, -300, 330, -570, 840, -720])
    when = st.tuples(st.integers(0, 7200), st.integers(0, 999_999), offset, st.booleans())
    event = st.fixed_dictionaries({"value": value, "labels": labels, "confidence": confidence,
                                   "source_type": st.sampled_from(["user_stated", "agent_observed", "inferred"]),
                                   "when": when})
    # ingest's texts: clauses of the documented extractor subset (docs/live-upp.md), names, places,
    # hobbies and languages over Unicode, the same label told twice in one text, case changed
    clause = st.one_of(
        st.tuples(st.sampled_from(["My name is {}", "Call me {}", "I go by {}"]), st.sampled_from(NAMES)),
        st.tuples(st.sampled_from(["I live in {}", "I moved to {}"]), st.sampled_from(PLACES)),
        st.tuples(st.sampled_from(["I love {}", "I enjoy {}"]), st.sampled_from(HOBBIES)),
        st.tuples(st.sampled_from(["I speak {}"]), st.sampled_from(LANGUAGES)),
    ).map(_formatted)
    said = st.tuples(st.lists(clause, min_size=1, max_size=4), st.sampled_from(["", "Hi, ", "Well, ", "By the way, "]),
                     st.sampled_from(["same", "same", "lower", "upper"]), st.sampled_from([". ", ".\n", "! "]))
    text = said.map(_text)
    return {"events": st.lists(event, min_size=1, max_size=6), "user": st.sampled_from([0, 1]), "text": text,
            "order": st.integers(0, 1_000),
            "targets": st.sampled_from([(0,), (1,), (0, 1)]), "index": st.integers(0, 10_000),
            "how": st.sampled_from(["upper", "lower", "swapcase", "nfd", "nfc"]),
            "picks": st.lists(st.integers(0, 10_000), max_size=4),
            "extra": st.sampled_from(["", "other-user", "unknown"])}


def _stamp(when: tuple[int, int, int, bool]) -> str:
    """created_at: seconds after the epoch, a fraction, an offset (minutes), 'Z' or '+00:00'."""
    seconds, micros, minutes, zulu = when
    t = (EPOCH + timedelta(seconds=seconds, microseconds=micros)).astimezone(timezone(timedelta(minutes=minutes)))
    text = t.isoformat(timespec="microseconds" if micros % 1000 else "milliseconds" if micros else "seconds")
    return text[:-6] + "Z" if minutes == 0 and zulu else text


def _changed(value: str, how: str) -> str:
    if how in ("nfd", "nfc"):
        return unicodedata.normalize(how.upper(), value)
    return getattr(value, how)()


@dataclass(eq=False)
class Ev:
    """One event as the model holds it."""

    value: str
    labels: list[str]
    confidence: float
    source_type: str
    step: int                      # the step that placed it
    id: str | None = None          # the server's id, once listed
    status: str = "valid"
    by: "Ev | None" = None         # what superseded it
    orphan: bool = False           # superseded by an event deleted since: stays superseded, any pointer
    gone_by: frozenset[str] = frozenset()  # ids of deleted events that superseded it (its pointer may still name one)
    seen: bool = False
    origin: str = "import"         # "import", "ingest" or "task" (a contextualize's background ingest)
    loose: bool = False            # status free (staged, or one of several of one label told in one text)
    alt: frozenset[str] = frozenset()  # other ids its superseded_by may name (one text's events)
    adopted: bool = False          # learnt from a listing, not from what an operation returned
    shown: str | None = None       # the status the last listing gave it

    def brief(self) -> str:
        return f"{quote(self.value, 80)} {self.labels} ({self.id or 'no id yet'})"


@dataclass
class User:
    key: str
    events: list[Ev] = field(default_factory=list)
    adopt: bool = False            # a background ingest the machine could not follow: take what is listed
    adopt_into: "Task | None" = None  # the completed task whose ingest stored what is adopted


#: What an event's origin promises it is stored (the requirement an event lost breaks).
PERSISTS = {"import": "upp/import-persists", "ingest": "upp/ingest-persists",
            "task": "upp/contextualize-background-ingest"}
SAID = {"import": "upp/import_events said it imported", "ingest": "upp/ingest returned",
        "task": "a completed upp/contextualize task reported"}


@dataclass
class Task:
    id: str
    user: "User"
    text: str
    status: str = "pending"
    ids: list[str] | None = None   # the events its completed result held


class UppEventsMachine(SpecMachine):
    """Mixed into a RuleBasedStateMachine by `_machine()` (Hypothesis imported only when it runs)."""

    exports = False   # the server serves export_events and shares files
    deletes = False
    ingests = False   # upp/ingest
    tasks = False     # upp/contextualize and upp/get_tasks
    labels_ok = True

    def setup(self) -> None:
        self.users = [User(fresh_entity("sm-a")), User(fresh_entity("sm-b"))]
        self.step_no = 0
        self.task_list: list[Task] = []

    # -- placing ---------------------------------------------------------------------------------

    def _place(self, user: User, events: list[dict[str, Any]], what: str, *, rule: str = "import") -> None:
        self.step_no += 1
        content = {"entity_key": fresh_entity("sm-pkg"), "ontology": server_ontology(self.ctx) or ontology.USER_V1,
                   "events": [], "exported_at": "2001-02-03T06:00:00Z"}
        # oldest first, as written: the package's order and its created_at order agree (a blind red
        # team's server stored a package in its order, which 03 §4 allows)
        events = [events[i] for i in sorted(range(len(events)), key=lambda i: (_instant(events[i]["created_at"]), i))]
        for i, e in enumerate(events):
            content["events"].append({"id": f"evt_sm_{self.step_no}_{i}", "entity_key": content["entity_key"],
                                      "value": e["value"], "labels": e["labels"], "confidence": e["confidence"],
                                      "source_type": e["source_type"], "status": "valid",
                                      "created_at": e["created_at"], "superseded_by": None})
        sent = [f"{quote(e['value'], 60)} {e['labels']} created {e['created_at']}" for e in events]
        with package_file(self.ctx, content, "sm") as path:
            reply = self.call(f"upp/import_events for {user.key!r} of {what}: [{'; '.join(sent)}]",
                              self.client.import_events, user.key, str(path))
        if reply.error_code is not None and not folder_learned(self.ctx):
            # as upp/l3/import: a package the suite could write only where it guessed, refused, says
            # nothing of the server (its export folder was not learned); the model holds nothing of it
            self.note(f"upp/import_events refused a package the suite wrote to {str(import_folder(self.ctx).path)!r} "
                      f"({reply.describe()}): the server's export folder was not learned, so no import was judged")
            return
        result = reply.result if reply.ok else None
        if isinstance(result, dict):
            self.judged("upp/import-persists")  # the count compared with the package's
        order = sorted(range(len(events)), key=lambda i: (_instant(events[i]["created_at"]), i))
        skipped = self._deduped(user, events, order, result)
        if skipped is None:
            dups = self._duplicates(user, events, order, sequential=True)
            also = (f" (or imported_count {len(events) - len(dups)} with skipped_count {len(dups)}: the user already "
                    f"holds {len(dups)} of them valid with the same value and labels, which a server may skip as "
                    f"duplicates, 08 §6; or as many as repeat a held value but for case, whitespace or Unicode "
                    f"compatibility form)" if dups else "")
            self.broken("upp/import-persists", f"upp/import_events of a package of {len(events)} valid event(s) for "
                        f"{user.key!r} answered {reply.describe()} {compact(result, 200)}; expected imported_count "
                        f"{len(events)}{also}. The spec: {spec_ref('upp/import-persists')}",
                        sent=content, received=reply.response)
            skipped = set()
        for i in order:
            if i in skipped:
                continue  # a duplicate of an event the user holds valid, skipped by the server
            e = events[i]
            new = Ev(e["value"], list(e["labels"]), e["confidence"], e["source_type"], self.step_no)
            self._store(user, new)

    def _deduped(self, user: User, events: list[dict[str, Any]], order: list[int], result: Any) -> set[int] | None:
        """The package's events the server skipped, when its counts are a legitimate reading: every
        event imported, or (08 §6: "Implementations handle duplicate detection internally"; 03 §4
        skipped_count "e.g., invalid labels") the events the user already holds valid with the same
        value and labels skipped and counted in skipped_count. Whether a duplicate is judged against
        the user's events before the import or as each event is stored (an earlier event of the
        package may supersede the one it repeats) is the server's: either count is taken. What is a
        duplicate is the server's too, within reason: the same labels and the same value, or the same
        value but for case, runs of whitespace and Unicode compatibility forms, as an event the user
        holds valid or holds at all (a blind red team's server, round 27: "User enjoys chess" held,
        "User enjoys CHESS" skipped; an event repeating a superseded one skipped: a re-import changes
        nothing). None: the counts fit no reading."""
        if not isinstance(result, dict) or result.get("imported_count") == len(events):
            return set() if isinstance(result, dict) else None
        fits: list[tuple[set[int], bool]] = []
        for folded in (False, True):
            for held in ("valid", "any"):
                for sequential in (True, False):
                    dups = self._duplicates(user, events, order, sequential=sequential, folded=folded, held=held)
                    if dups and result.get("imported_count") == len(events) - len(dups) \
                            and result.get("skipped_count") == len(dups) and all(dups != f for f, _ in fits):
                        fits.append((dups, folded))
        if len(fits) > 1:  # counts alike, events not: the listing tells which the server stored
            fits = [fit for fit in fits if self._listing_holds(user, [events[i] for i in order if i not in fit[0]])] \
                or fits[:1]
        if not fits:
            return None
        dups, folded = fits[0]
        self.note("upp/import_events skipped events the user already held valid with the same "
                  f"{'value but for case, whitespace or compatibility form' if folded else 'value'} "
                  "and labels, counting them in skipped_count: taken as duplicate detection (08 §6)")
        return dups

    def _listing_holds(self, user: User, stored: list[dict[str, Any]]) -> bool:
        """Whether upp/get_events lists, beside the events the model held for `user`, every one of
        `stored` (by value and labels)."""
        _, listed = self._listing(user)
        if listed is None:
            return False
        left = Counter((e.get("value"), frozenset(e.get("labels") or ())) for e in listed)
        left.subtract(Counter((ev.value, frozenset(ev.labels)) for ev in user.events))
        want = Counter((e["value"], frozenset(e["labels"])) for e in stored)
        return all(left[k] >= n for k, n in want.items())

    def _duplicates(self, user: User, events: list[dict[str, Any]], order: list[int], *,
                    sequential: bool, folded: bool = False, held: str = "valid") -> set[int]:
        """The package's events (indices) that repeat, value and labels, an event the user holds
        valid (or, `held` "any", holds whatever its status): as the user's events stand before the
        import, or (`sequential`) as each event of the package, in storage order, is stored and
        supersedes; values compared as written, or (`folded`) by `duplicate_form`. An event whose
        status the model leaves to the server (a loose or orphaned one) counts by the status the
        last listing gave it."""
        same = duplicate_form if folded else (lambda v: v)
        holds = [[same(ev.value), frozenset(ev.labels),
                  (ev.shown or ev.status) if (ev.loose or ev.orphan) else ev.status] for ev in user.events]
        found: set[int] = set()
        for i in order:
            e = events[i]
            key = (same(e["value"]), frozenset(e["labels"]))
            if any((held == "any" or h[2] == "valid") and (h[0], h[1]) == key for h in holds):
                found.add(i)
                continue
            if sequential:
                singular = set(e["labels"]) & SINGULARS
                for h in holds:
                    if h[2] == "valid" and singular & h[1]:
                        h[2] = "superseded"
                holds.append([same(e["value"]), frozenset(e["labels"]), "valid"])
        return found

    def _store(self, user: User, new: Ev, *, together: list[Ev] | None = None) -> None:
        """`new` stored after every event the user holds; `together`: the events stored by the same
        ingest (their order is the server's: an event they supersede may name any of them)."""
        singular = {x for x in new.labels if x in SINGULARS}
        for old in user.events:  # an orphan stays superseded (02 §6): nothing supersedes it again
            if old.status == "valid" and not old.orphan and singular & set(old.labels):
                old.status, old.by = "superseded", new
                if together:
                    old.alt = frozenset(e.id for e in together if e.id and singular & set(old.labels) & set(e.labels))
        user.events.append(new)

    def _absorb(self, user: User, events: list[dict[str, Any]], origin: str, *, adopted: bool = False) -> list[Ev]:
        """The events an ingest (or a completed task) returned, as the server shows them: added to
        the model in the order returned; several sharing a singular label are told apart by the
        server (at most one of them stays valid), a staged one may be reinforced later. `adopted`:
        events a background ingest stored that the machine learns from a listing (when and in what
        order they were stored is unknown: they and the events sharing a singular label with them
        are judged loosely)."""
        self.step_no += 1
        ids = {ev.id: ev for ev in user.events if ev.id}
        fresh: list[Ev] = []
        for e in events:
            eid = e.get("id")
            if not isinstance(eid, str) or not isinstance(e.get("value"), str) or not isinstance(e.get("labels"), list):
                continue  # the shape is judged by the ingest and task checks
            if eid in ids:  # a staged event reinforced: whatever it was, its status is now the server's
                ids[eid].loose = True
                continue
            if any(x.id == eid for x in fresh):
                continue
            ev = Ev(e["value"], [str(x) for x in e["labels"]], e.get("confidence"), str(e.get("source_type")),
                    self.step_no, id=eid, origin=origin)
            if e.get("status") == "staged":
                ev.loose, ev.status = True, "staged"
            fresh.append(ev)
        if adopted:
            for ev in fresh:
                ev.loose = ev.adopted = True
                mine = {x for x in ev.labels if x in SINGULARS}
                for other in user.events:
                    if mine & set(other.labels):
                        other.loose = True
            user.events.extend(fresh)
            return fresh
        believed = [ev for ev in fresh if not ev.loose]
        for ev in believed:
            mine = {x for x in ev.labels if x in SINGULARS}
            if any(mine & set(o.labels) for o in believed if o is not ev):
                ev.loose = True  # one text told this label twice: which one is newest is the server's
        for ev in fresh:
            if ev in believed:
                self._store(user, ev, together=believed)
            else:
                user.events.append(ev)
        return fresh

    def _listing(self, user: User) -> tuple[Any, list[dict[str, Any]] | None]:
        reply = self.call(f"upp/get_events for {user.key!r}", self.client.get_events, user.key)
        if reply.ok and isinstance(reply.result, list):
            return reply, [e for e in reply.result if isinstance(e, dict)]
        if reply.error_code == USER_NOT_FOUND:
            return reply, []
        return reply, None

    def _learn_ids(self, user: User, listed: list[dict[str, Any]]) -> None:
        """Match the events placed since the last listing with the ids the server lists for them
        (by value and labels)."""
        new = [e for e in user.events if e.id is None]
        if not new:
            return
        known = {e.id for e in user.events if e.id}
        fresh = [e for e in listed if e.get("id") not in known]
        # events with one value and labels are told apart by their supersession chains: the oldest
        # (the most hops from a valid one) first on both sides
        groups: dict[tuple[str, tuple[str, ...]], list[Ev]] = {}
        for ev in new:
            groups.setdefault((ev.value, tuple(sorted(ev.labels))), []).append(ev)
        pointers = {e.get("id"): e.get("superseded_by") for e in fresh}

        def hops(start: Any, step: Any) -> int:
            n, seen = 0, set()
            while start is not None and start not in seen:
                seen.add(start)
                start, n = step(start), n + 1
            return n

        for (value, labels), evs in groups.items():
            same = [e for e in fresh if e.get("value") == value and isinstance(e.get("labels"), list)
                    and tuple(sorted(str(x) for x in e["labels"])) == labels]
            same.sort(key=lambda e: -hops(e.get("id"), pointers.get))
            evs.sort(key=lambda ev: -hops(ev, lambda x: x.by if x.by in evs else None))
            for ev, match in zip(evs, same):
                ev.id = match.get("id")

    # -- judging ---------------------------------------------------------------------------------

    def _export_events(self, user: User) -> list[dict[str, Any]] | None:
        if not self.exports:
            return None
        reply = self.call(f"upp/export_events for {user.key!r}", self.client.export_events, user.key)
        file = reply.result.get("file") if reply.ok and isinstance(reply.result, dict) else None
        content, _ = read_export_file(file)
        if isinstance(content, dict) and isinstance(content.get("events"), list):
            return [e for e in content["events"] if isinstance(e, dict)]
        return None

    def _missing(self, user: User, missing: list[Ev], listed: list[dict[str, Any]], reply: Any) -> None:
        """Events the model holds that get_events does not list: the export says whether the store
        still holds them (a listing that leaves some out) or lost them."""
        exported = self._export_events(user)
        if exported is not None:
            self.judged("upp/get-events-complete")
            in_export = {e.get("id") for e in exported} | {e.get("value") for e in exported}
            hidden = [ev for ev in missing if ev.id in in_export or (ev.id is None and ev.value in in_export)]
            if hidden:
                self.broken("upp/get-events-complete",
                            f"upp/get_events for {user.key!r} lists {len(listed)} event(s) but leaves out "
                            f"{len(hidden)} the user holds (its own export holds them): "
                            f"{'; '.join(ev.brief() for ev in hidden[:5])}. The spec: "
                            f"{spec_ref('upp/get-events-complete')}", received=reply.response)
        lost_now = [ev for ev in missing if not ev.seen]
        if lost_now:
            origin = lost_now[0].origin
            lost_now = [ev for ev in lost_now if ev.origin == origin]
            rid = PERSISTS[origin]
            self.broken(rid,
                        f"{SAID[origin]} {len(lost_now)} event(s) for {user.key!r} that neither "
                        f"upp/get_events nor an export shows with the value and labels "
                        f"{'sent' if origin == 'import' else 'returned'}: "
                        f"{'; '.join(ev.brief() for ev in lost_now[:5])}; listed: "
                        f"{compact([(e.get('value'), e.get('labels')) for e in listed], 600)}. The spec: "
                        f"{spec_ref(rid)}", received=reply.response)
        self.broken("upp/events-retained",
                    f"event(s) of {user.key!r} listed before are gone though nothing deleted them: "
                    f"{'; '.join(ev.brief() for ev in missing[:5])}. The spec: {spec_ref('upp/events-retained')}",
                    received=reply.response)

    def _judge(self, user: User) -> None:
        reply, listed = self._listing(user)
        if listed is None:
            return  # not a listing: judged by upp/l2/get-events; nothing to compare here
        self._learn_ids(user, listed)
        by_id = {e.get("id"): e for e in listed}
        if any(ev.seen for ev in user.events):
            self.judged("upp/events-retained")  # events listed before, looked for again
        missing = [ev for ev in user.events if ev.id is None or ev.id not in by_id]
        if missing:
            self._missing(user, missing, listed, reply)
        mine = {ev.id for ev in user.events}
        strangers = [e for e in listed if e.get("id") not in mine]
        if not user.adopt:
            self.judged("upp/get-events-complete")  # every event listed is one the sequence placed
        if strangers and user.adopt:
            for ev in self._absorb(user, strangers, "task", adopted=True):
                if user.adopt_into is not None and user.adopt_into.ids is not None:
                    user.adopt_into.ids.append(ev.id)  # its result must show it when asked again
            strangers = []
        user.adopt, user.adopt_into = False, None
        if strangers:
            self.broken("upp/get-events-complete",
                        f"upp/get_events for {user.key!r} lists {len(strangers)} event(s) the sequence never placed "
                        f"for that user: {compact(strangers, 500)}. The spec: {spec_ref('upp/get-events-complete')}",
                        received=reply.response)
        for ev in user.events:
            ev.seen = True
            got = by_id[ev.id]
            ev.shown = got.get("status") if isinstance(got.get("status"), str) else None
            if not ev.adopted:  # what an operation said it stored (an adopted event was taken from a listing)
                self.judged(PERSISTS[ev.origin])
            if got.get("value") != ev.value or sorted(got.get("labels") or []) != sorted(ev.labels) \
                    or got.get("confidence") != ev.confidence:
                rid = PERSISTS[ev.origin]
                how = {"import": "imported", "ingest": "returned by upp/ingest",
                       "task": "reported by a completed task"}[ev.origin]
                self.broken(rid,
                            f"the event {how} for {user.key!r} as value {quote(ev.value, 120)}, labels "
                            f"{ev.labels}, confidence {ev.confidence!r} is listed as value "
                            f"{quote(got.get('value'), 120)}, labels {got.get('labels')}, confidence "
                            f"{got.get('confidence')!r}: changed in transit. The spec: {spec_ref(rid)}",
                            received=got)
        self._judge_statuses(user, by_id, reply)

    def _judge_statuses(self, user: User, by_id: dict[Any, dict[str, Any]], reply: Any) -> None:
        for label in sorted(SINGULARS & {str(x) for e in by_id.values() for x in e.get("labels") or ()}):
            if sum(label in ev.labels for ev in user.events) > 1:
                self.judged("upp/one-valid-per-singular")  # the model holds an event of that label superseded
            valid = [e for e in by_id.values() if e.get("status") == "valid" and label in (e.get("labels") or [])]
            if len(valid) > 1:
                self.broken("upp/one-valid-per-singular", f"{user.key!r} holds {len(valid)} valid {label} events "
                            f"(singular): {compact(valid, 500)}. The spec: {spec_ref('upp/one-valid-per-singular')}",
                            received=reply.response)
        ids = {ev.id: ev for ev in user.events}
        for ev in user.events:
            got = by_id[ev.id]
            status, pointer = got.get("status"), got.get("superseded_by")
            if ev.orphan and not ev.loose:
                self.judged("upp/lifecycle-transitions")  # it was superseded: it stays so
                if status != "superseded":
                    self.broken("upp/lifecycle-transitions", f"{ev.brief()} of {user.key!r} was superseded by an event "
                                f"deleted since, and is now listed with status {status!r}; expected superseded (02 "
                                f"§6 allows no superseded → valid). The spec: {spec_ref('upp/lifecycle-transitions')}",
                                received=got)
            elif ev.loose and status not in ("valid", "superseded", "staged"):
                self.broken("upp/supersession-singular", f"{ev.brief()} of {user.key!r}, told in one text with another "
                            f"of its singular label, is listed with status {status!r}; expected superseded or valid",
                            received=got)
            if ev.orphan or ev.loose:
                if ev.orphan:
                    self.judged("upp/superseded-by-existing")  # its superseder was deleted
                if pointer is not None and pointer not in ids and pointer not in ev.gone_by:
                    self.broken("upp/superseded-by-existing", f"{ev.brief()} of {user.key!r} names superseded_by "
                                f"{pointer!r}, which is no event of that user (expected null, an existing event, or "
                                f"the deleted event that superseded it: {sorted(ev.gone_by)}). The spec: "
                                f"{spec_ref('upp/superseded-by-existing')}", received=got)
                continue
            if ev.status == "superseded":
                by = ev.by
                same = by is not None and by.step == ev.step and ev.origin == "import"
                rid = "upp/import-supersession" if same else "upp/supersession-singular"
                self.judged(rid)  # the model holds it superseded: so must the listing
            if ev.status == "superseded" and status != "superseded":
                shared = sorted(set(ev.labels) & set(by.labels if by else []) & SINGULARS)
                when = "later in the same package, by created_at" if same else "by a later import"
                self.broken(rid, f"{ev.brief()} of {user.key!r} is listed {status!r}, but {by.brief() if by else '?'} "
                            f"sharing the singular label(s) {shared} was stored after it ({when}): it must be "
                            f"superseded. The spec: {spec_ref(rid)}", received=got)
            if ev.status == "valid" and any(o is not ev and set(o.labels) & set(ev.labels) & PLURALS
                                            for o in user.events):
                self.judged("upp/plural-accumulate")  # another event shares a plural label with it
            if ev.status == "valid" and status != "valid":
                culprit = ids.get(pointer)
                shared = set(ev.labels) & set(culprit.labels) if culprit is not None else set()
                if culprit is not None and shared and not (shared & SINGULARS):
                    rid = "upp/plural-accumulate"
                    why = f"it shares only the plural label(s) {sorted(shared)} with {culprit.brief()}"
                elif culprit is not None and culprit.step == ev.step and ev.origin == "import":
                    rid = "upp/import-supersession"
                    why = (f"{culprit.brief()}, placed in the same package, is older by created_at or earlier in the "
                           f"package, so it cannot supersede it")
                else:
                    rid = "upp/supersession-singular"
                    why = "no event stored after it shares one of its singular labels"
                self.broken(rid, f"{ev.brief()} of {user.key!r} is listed {status!r} (superseded_by {pointer!r}), "
                            f"but must be valid: {why}. The spec: {spec_ref(rid)}", received=got)
        for ev in user.events:  # pointers once every status agrees with the model (a wrong status comes first)
            got = by_id[ev.id]
            pointer = got.get("superseded_by")
            if ev.orphan or ev.loose:
                continue
            if ev.status == "superseded" and ev.by is not None and ev.by.id is not None:
                self.judged("upp/supersession-superseded-by", "upp/superseded-by-existing")
            if ev.status == "superseded" and ev.by is not None and ev.by.id is not None and pointer != ev.by.id \
                    and pointer not in ev.alt:
                rid = "upp/superseded-by-existing" if pointer not in ids else "upp/supersession-superseded-by"
                self.broken(rid, f"{ev.brief()} of {user.key!r} is superseded by {ev.by.brief()}, but its "
                            f"superseded_by is {pointer!r}. The spec: {spec_ref(rid)}", received=got)

    def _judge_all(self) -> None:
        for user in self.users:
            self._judge(user)

    # -- rules -----------------------------------------------------------------------------------

    def _unique(self, user: User, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Values unique within one package (so the listing can be matched back), created_at stamped."""
        out, seen = [], set()
        for e in events:
            value = e["value"]
            while value in seen:
                value += " ²"
            seen.add(value)
            out.append({**e, "value": value, "created_at": _stamp(e["when"])})
        return out

    def _full(self, user: User, more: int) -> bool:
        """Whether `more` events would take `user` past MAX_HELD (the step is then not run)."""
        return len(user.events) + more > MAX_HELD

    def do_import(self, targets: tuple[int, ...], events: list[dict[str, Any]]) -> None:
        if any(self._full(self.users[t], len(events)) for t in targets):
            return
        events = self._unique(self.users[targets[0]], events)
        for t in targets:
            self._place(self.users[t], events, f"{len(events)} generated event(s)")
        self._judge_all()

    def do_import_variant(self, user: int, index: int, how: str) -> None:
        u = self.users[user]
        if not u.events or self._full(u, 1):
            return
        base = u.events[index % len(u.events)]
        value = _changed(base.value, how)
        if value == base.value or any(e.value == value for e in u.events):
            value = value + " ·"
        event = {"value": value, "labels": base.labels, "confidence": base.confidence,
                 "source_type": base.source_type, "created_at": "2001-02-03T04:05:06Z"}
        self._place(u, [event], f"a value differing from {quote(base.value, 60)} only by {how}")
        self._judge_all()

    def do_delete(self, user: int, picks: list[int], extra: str) -> None:
        if not self.deletes:
            self.note("upp/delete_events answered -32601 Method Not Found: not judged here")
            return
        u, other = self.users[user], self.users[1 - user]
        held = [e for e in u.events if e.id]
        chosen = list(dict.fromkeys(held[p % len(held)] for p in picks)) if held else []
        ids = [e.id for e in chosen]
        if extra == "other-user" and any(e.id for e in other.events):
            ids.append(next(e.id for e in other.events if e.id))
        elif extra == "unknown":
            ids.append("evt_mcf_never_stored")
        everything = not picks
        reply = self.call(f"upp/delete_events for {u.key!r} with event_ids {ids if not everything else '(omitted: all)'}",
                          self.client.delete_events, u.key, *(() if everything else (ids,)))
        gone = list(u.events) if everything else chosen
        count = reply.result.get("deleted_count") if reply.ok and isinstance(reply.result, dict) else None
        if reply.ok:
            self.judged("upp/delete-count")
        elif reply.error_code == METHOD_NOT_FOUND:
            self.deletes = False
            self.note(f"upp/delete_events answered {reply.describe()}: not judged here")
        # deleting all: the count is judged once the listing shows what actually went (a delete-all that
        # keeps some events is upp/delete-all's finding, its truthful count no miscount; red team round 27)
        if count != len(gone) and reply.ok and not everything:
            self.broken("upp/delete-count", f"upp/delete_events for {u.key!r} with "
                        f"{'no event_ids' if everything else f'event_ids {ids}'} answered deleted_count {count!r}; "
                        f"{len(gone)} of them are that user's events. The spec: {spec_ref('upp/delete-count')}",
                        sent=ids, received=reply.response)
        if not reply.ok:
            return
        for ev in gone:
            u.events.remove(ev)
        for ev in u.events:
            if ev.by is not None and ev.by in gone:
                # 02 §6 "Events are never modified after creation": the pointer may keep naming it
                ev.gone_by = ev.gone_by | ({ev.by.id} if ev.by.id else set())
                ev.orphan, ev.by = True, None
        _, listed = self._listing(u)
        if everything:
            kept = [e for e in listed or [] if e.get("id") in {g.id for g in gone if g.id}]
            if listed is not None and any(g.id for g in gone):
                self.judged("upp/delete-all")
            if kept:
                self.broken("upp/delete-all", f"upp/delete_events for {u.key!r} without event_ids answered "
                            f"deleted_count {count!r}, but upp/get_events still lists {len(kept)} of the user's "
                            f"{len(gone)} events: {compact(kept, 400)}. The spec: {spec_ref('upp/delete-all')}",
                            received=listed)
            if count != len(gone):
                self.broken("upp/delete-count", f"upp/delete_events for {u.key!r} without event_ids answered "
                            f"deleted_count {count!r}; the user's {len(gone)} events are gone. The spec: "
                            f"{spec_ref('upp/delete-count')}", received=reply.response)
        if listed is not None:
            if not everything and (gone or any(ev.id for ev in u.events)):
                self.judged("upp/delete-by-ids")  # events it named gone, or events it did not name kept
            still = [e for e in listed if e.get("id") in {g.id for g in gone}]
            if still:
                self.broken("upp/delete-by-ids", f"upp/delete_events for {u.key!r} deleted {count!r}, but "
                            f"upp/get_events still lists {compact(still, 400)}. The spec: {spec_ref('upp/delete-by-ids')}",
                            received=listed)
            left = {e.get("id") for e in listed}
            lost = [ev for ev in u.events if ev.id and ev.id not in left]
            if lost and not everything:
                self.broken("upp/delete-by-ids", f"upp/delete_events for {u.key!r} with event_ids {ids} also "
                            f"removed events it did not name: {'; '.join(ev.brief() for ev in lost[:5])}. The spec: "
                            f"{spec_ref('upp/delete-by-ids')}", received=listed)
        _, theirs = self._listing(other)
        if theirs is not None:
            if any(ev.id for ev in other.events):
                self.judged("upp/delete-other-users-untouched")
            there = {e.get("id") for e in theirs}
            lost = [ev for ev in other.events if ev.id and ev.id not in there]
            if lost:
                self.broken("upp/delete-other-users-untouched",
                            f"upp/delete_events for {u.key!r} ({'all' if everything else f'event_ids {ids}'}) removed "
                            f"events of another user, {other.key!r}: {'; '.join(ev.brief() for ev in lost[:5])}. "
                            f"The spec: {spec_ref('upp/delete-other-users-untouched')}", received=theirs)
        self._judge_all()

    def do_export(self, user: int) -> None:
        if not self.exports:
            self.note("upp/export_events answered -32601 Method Not Found (or files are not shared): not judged here")
            return
        u = self.users[user]
        exported = self._export_events(u)
        if exported is None:
            return  # no readable file: the export checks judge it
        self._judge_export(u, exported)

    def _judge_export(self, u: User, exported: list[dict[str, Any]]) -> None:
        there = {e.get("id"): e for e in exported}
        if any(ev.id for ev in u.events):
            self.judged("upp/export-all-events")
        lost = [ev for ev in u.events if ev.id and (ev.id not in there or there[ev.id].get("value") != ev.value)]
        if lost:
            self.broken("upp/export-all-events",
                        f"the export of {u.key!r} holds {len(exported)} event(s) but leaves out (or changes the value "
                        f"of) {len(lost)}: {'; '.join(ev.brief() for ev in lost[:5])}; the file's values: "
                        f"{compact([e.get('value') for e in exported], 500)}. The spec: "
                        f"{spec_ref('upp/export-all-events')}", received=exported)

    def do_reimport(self, user: int) -> None:
        """Export one user and import that file for the other: every event stored again."""
        if not self.exports:
            self.note("upp/export_events answered -32601 Method Not Found (or files are not shared): not judged here")
            return
        u, other = self.users[user], self.users[1 - user]
        if self._full(other, len(u.events)):
            return
        exported = self._export_events(u)
        if exported is None or not u.events:
            return
        self._judge_export(u, exported)
        events = [{"value": e["value"], "labels": e["labels"], "confidence": e["confidence"],
                   "source_type": e.get("source_type"), "created_at": e.get("created_at")} for e in exported]
        self._place(other, events, f"the export of {u.key!r} ({len(events)} event(s), written by the server)")
        self._judge_all()

    # -- ingest and background tasks ---------------------------------------------------------------

    def do_ingest(self, user: int, text: str) -> None:
        """upp/ingest of a generated text: what it returns is what the user now holds besides the
        rest (its wording and labels are the server's), with supersession applied."""
        if not self.ingests:
            self.note("upp/ingest answered -32601 Method Not Found: not judged here")
            return
        u = self.users[user]
        if self._full(u, 8):  # a text tells at most four facts, each maybe two events
            return
        reply = self.call(f"upp/ingest for {u.key!r} of {quote(text, 200)}", self.client.ingest, u.key, text)
        if reply.error_code == METHOD_NOT_FOUND:
            self.ingests = False
            self.note(f"upp/ingest answered {reply.describe()}: not judged here")
        if not reply.ok or not isinstance(reply.result, list):
            return  # nothing extracted (-32004) or a shape the ingest checks judge: nothing stored to model
        self._absorb(u, [e for e in reply.result if isinstance(e, dict)], "ingest")
        self._judge_all()

    def do_contextualize(self, user: int, text: str) -> None:
        """upp/contextualize of a generated text: its events are events the user held before the
        call; its task is polled (asking again for every earlier task of the sequence) until it
        finishes; a completed task's events are then held like an ingest's."""
        if not self.tasks:
            self.note("upp/contextualize or upp/get_tasks answered -32601 Method Not Found: not judged here")
            return
        u = self.users[user]
        if self._full(u, 8):
            return
        held = {ev.id for ev in u.events if ev.id}
        reply = self.call(f"upp/contextualize for {u.key!r} of {quote(text, 200)}", self.client.contextualize,
                          u.key, text)
        result = reply.result if reply.ok and isinstance(reply.result, dict) else None
        if reply.error_code == METHOD_NOT_FOUND:
            self.tasks = False
            self.note(f"upp/contextualize answered {reply.describe()}: not judged here")
        if result is None:
            u.adopt = True  # judged by upp/l2/contextualize; whatever it stored is taken as listed
            self._judge_all()
            return
        events = result.get("events")
        if isinstance(events, list) and (held or events):
            self.judged("upp/contextualize-retrieves-existing")
        strangers = [e for e in events if isinstance(e, dict) and e.get("id") not in held] \
            if isinstance(events, list) else []
        if strangers:
            self.broken("upp/contextualize-retrieves-existing",
                        f"upp/contextualize for {u.key!r} of {quote(text, 120)} returned {len(strangers)} event(s) "
                        f"that are not events the user held before the call ({sorted(held)}): "
                        f"{compact(strangers, 400)}. The spec: {spec_ref('upp/contextualize-retrieves-existing')}",
                        received=reply.response)
        task_id = result.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            u.adopt = True  # judged by upp/l2/contextualize
            self._judge_all()
            return
        task = Task(task_id, u, text)
        earlier = [t for t in self.task_list if t.status in FINISHED]
        self.task_list.append(task)
        bound, started, pause, first = client_timeout(self.client), time.monotonic(), 0.01, True
        while True:
            asked = [task_id] + [t.id for t in earlier]
            poll = self.call(f"upp/get_tasks for {asked}", self.client.get_tasks, asked)
            if not poll.ok or not isinstance(poll.result, list):
                if poll.error_code == METHOD_NOT_FOUND:
                    self.tasks = False
                    self.note(f"upp/get_tasks answered {poll.describe()}: not judged here")
                u.adopt = True  # judged by upp/l2/contextualize-task
                self.task_list.remove(task)
                time.sleep(0.2)
                self._judge_all()
                return
            self._judge_tasks(poll, earlier)
            mine = [x for x in poll.result if isinstance(x, dict) and x.get("task_id") == task_id]
            self.judged("upp/get-tasks-one-per-id", *(("upp/contextualize-task-pollable",) if first else ()))
            if len(mine) != 1:
                rid = "upp/contextualize-task-pollable" if not mine else "upp/get-tasks-one-per-id"
                when = "right after upp/contextualize returned" if first else "while polling"
                self.broken(rid, f"upp/get_tasks asked for {asked}, {when} "
                            f"task {task_id!r}, answered {len(mine)} status(es) for it: {compact(poll.result, 400)}. "
                            f"The spec: {spec_ref(rid)}", received=poll.response)
            first = False
            status = mine[0].get("status")
            if status in FINISHED:
                self.judged("upp/contextualize-background-ingest")  # it finished within the client's timeout
                break
            if time.monotonic() - started > bound:
                self.broken("upp/contextualize-background-ingest",
                            f"task {task_id!r} of upp/contextualize for {u.key!r} is still {status!r} after "
                            f"{bound:g} s (the client's timeout). The spec: "
                            f"{spec_ref('upp/contextualize-background-ingest')}", received=poll.response)
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
        task.status = status
        found = mine[0].get("result")
        if status == "completed" and isinstance(found, list):
            task.ids = [e.get("id") for e in found if isinstance(e, dict) and isinstance(e.get("id"), str)]
            self._absorb(u, [e for e in found if isinstance(e, dict)], "task")
            # an event its ingest stored that the result leaves out is found by the listing below;
            # the result must show it when asked again (upp/get-tasks-retained)
            u.adopt, u.adopt_into = True, task
        else:
            u.adopt = True  # a failed background ingest may have stored nothing, or anything
        self._judge_all()

    def _judge_tasks(self, reply: Any, tasks: list[Task]) -> None:
        """Every finished task asked for: reported once, still finished as before; a completed one's
        result still holds the events it held that the user still holds, and no other: none deleted
        since (physical deletion reaches a task's copy too)."""
        for t in tasks:
            self.judged("upp/get-tasks-one-per-id", "upp/get-tasks-retained")
            mine = [x for x in reply.result if isinstance(x, dict) and x.get("task_id") == t.id]
            if len(mine) > 1:
                self.broken("upp/get-tasks-one-per-id", f"upp/get_tasks reports task {t.id!r} {len(mine)} times: "
                            f"{compact(mine, 400)}. The spec: {spec_ref('upp/get-tasks-one-per-id')}",
                            received=reply.response)
            got = mine[0] if mine else None
            if got is None or got.get("status") != t.status:
                self.broken("upp/get-tasks-retained",
                            f"task {t.id!r} (upp/contextualize for {t.user.key!r} of {quote(t.text, 80)}) was reported "
                            f"{t.status!r}; asked again later in the sequence, upp/get_tasks "
                            f"{'omits it' if got is None else 'reports it ' + repr(got.get('status'))}. The spec: "
                            f"{spec_ref('upp/get-tasks-retained')}", received=reply.response)
            if t.ids is None or not isinstance(got.get("result"), list):
                continue
            shown = {e.get("id") for e in got["result"] if isinstance(e, dict)}
            still = {ev.id for ev in t.user.events if ev.id in t.ids}
            gone = set(t.ids) - still  # deleted since the task completed (the only way out of the model)
            if gone:
                self.judged("upp/delete-physical")
            if shown & gone:
                self.broken("upp/delete-physical",
                            f"task {t.id!r} (upp/contextualize for {t.user.key!r} of {quote(t.text, 80)}) completed "
                            f"with the events {t.ids}; {sorted(map(str, gone))} were deleted since, yet its result "
                            f"still holds {sorted(map(str, shown & gone))}. The spec: {spec_ref('upp/delete-physical')}",
                            received=got)
            if not still <= shown or not shown <= set(t.ids):
                self.broken("upp/get-tasks-retained",
                            f"task {t.id!r} (upp/contextualize for {t.user.key!r} of {quote(t.text, 80)}) completed "
                            f"with the events {t.ids}; asked again later, its result holds {sorted(map(str, shown))}"
                            f"{', leaving out ' + str(sorted(still - shown)) if still - shown else ''}"
                            f"{', which the user still holds' if still - shown else ''}"
                            f". The spec: {spec_ref('upp/get-tasks-retained')}", received=got)

    def do_get_tasks(self, order: int) -> None:
        """upp/get_tasks for every finished task of the sequence, in a drawn order, with an id nobody
        issued among them."""
        tasks = [t for t in self.task_list if t.status in FINISHED]
        if not tasks:
            return
        asked = [t.id for t in tasks]
        asked = asked[order % len(asked):] + asked[:order % len(asked)]
        unknown = "task_mcf_never_issued"
        asked.insert(order % (len(asked) + 1), unknown)
        reply = self.call(f"upp/get_tasks for {asked}", self.client.get_tasks, asked)
        if not reply.ok or not isinstance(reply.result, list):
            if reply.ok:
                return  # no array: judged by upp/l2/contextualize-task
            self.broken("upp/get-tasks-unknown-omitted",
                        f"upp/get_tasks for {asked} (the tasks of this sequence and the unknown {unknown!r}) "
                        f"answered an error: {reply.describe()}. The spec: {spec_ref('upp/get-tasks-unknown-omitted')}",
                        received=reply.response)
        self.judged("upp/get-tasks-unknown-omitted")
        if any(isinstance(x, dict) and x.get("task_id") == unknown for x in reply.result):
            self.broken("upp/get-tasks-unknown-omitted", f"upp/get_tasks reports the task id {unknown!r}, which "
                        f"nobody issued. The spec: {spec_ref('upp/get-tasks-unknown-omitted')}",
                        received=reply.response)
        self._judge_tasks(reply, tasks)


def _machine() -> type:
    from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

    s = _strategies()

    class Machine(UppEventsMachine, RuleBasedStateMachine):
        @initialize()
        def start(self) -> None:
            self.setup()

        @rule(who=s["targets"], events=s["events"])
        def import_package(self, who, events):
            self.do_import(who, events)

        @rule(user=s["user"], index=s["index"], how=s["how"])
        def import_variant(self, user, index, how):
            self.do_import_variant(user, index, how)

        @rule(user=s["user"], picks=s["picks"], extra=s["extra"])
        def delete(self, user, picks, extra):
            self.do_delete(user, picks, extra)

        @rule(user=s["user"])
        def export(self, user):
            self.do_export(user)

        @rule(user=s["user"])
        def reimport(self, user):
            self.do_reimport(user)

        @rule(user=s["user"], text=s["text"])
        def ingest(self, user, text):
            self.do_ingest(user, text)

        @rule(user=s["user"], text=s["text"])
        def contextualize(self, user, text):
            self.do_contextualize(user, text)

        @rule(order=s["order"])
        def get_tasks(self, order):
            self.do_get_tasks(order)

        def teardown(self) -> None:
            if self.deletes:
                for u in getattr(self, "users", []):
                    try:
                        self.client.delete_events(u.key)
                    except Exception:  # noqa: BLE001 - leaving less behind is a courtesy
                        pass

    return Machine


@check("upp/stateful/events", spec="upp", requirements=REQUIREMENTS, bindings=LIVE,
       title="a model-based fuzz of two users' events: imports, supersession, deletion, export and re-import")
def events(ctx: CheckContext) -> None:
    """The machine (module doc) within the effort's budget; one finding, the shrunk sequence."""
    for op in ("upp/import_events", "upp/get_events"):
        require_offered(ctx, op)
    if not ctx.client.shares_files():
        raise NotApplicable("the server does not share this machine's files, so the suite cannot write the packages "
                            "upp/import_events reads: the machine places every event that way")
    labels = known_labels(ctx)
    if labels is not None and not set(SINGULAR + PLURAL) <= labels:
        raise NotApplicable(f"the server's ontology does not define {sorted(set(SINGULAR + PLURAL) - labels)}, "
                            "the user/v1 labels the machine places")
    import_folder(ctx)
    exports = served(ctx, "upp/export_events")
    run_machine(ctx, _machine(), name="UppEvents", exports=exports, deletes=served(ctx, "upp/delete_events"),
                ingests=served(ctx, "upp/ingest"),
                tasks=served(ctx, "upp/contextualize") and served(ctx, "upp/get_tasks"))
