"""UMP state machines (issue 16): model-based fuzzing of any live UMP target over its client protocol.

The scripted checks (l1.py, l2.py, l3.py) place a few records and judge one situation. These
machines drive a target through generated sequences of the spec's operations (remember, get,
revise, forget, recall) as two owners, and after every step compare what the target shows with a
model of what §2-§3 and §5.3 say the state must be (feedback and the rehydration helper among
the operations, where the target offers them):

* `ump/stateful/records`: records with generated payloads (NFD and astral text, RTL, U+2028,
  long texts, body.structured numbers near 2^53 and floats, valid_from with offsets and
  fractions), revise chains of any length, soft and hard forget, reads by the owner and by the
  other owner, and a consumer's round: a chain and one other record rehydrated by id as either
  owner (§5.3), then feedback on one of the asker's own records it asked for (§3.8). Model: each
  record's kind, text, structured value, valid_from (as an instant), visibility, lifecycle status,
  supersedes / superseded_by.
* `ump/stateful/recall`: many records per query, of two owners and three visibilities, forgotten
  and revised ones among them, recalled with `limit` at and around its boundaries (1, the default
  10, 11, 50 …), each recall followed (or not) by a rehydration, as the same owner, of the same
  query or of up to eight of the sequence's records by id at once. Model: which records each
  owner may see and which are live.

Readings the spec leaves open are all accepted (docs/catalogue-ump.md, "State machines"): a revise
patch of body.text may keep or drop body.structured (merge or replace, variant
revise-patch-replaces); a hard forget may erase the record or leave a tombstoned shell without its
content (variant hard-forget-shell); a timestamp may come back in another offset or precision as
long as it names the same instant; a refusal of an operation is never judged here (its own
scripted check judges it) but for the owner's feedback on a record it never forgot, and a record
whose remember was refused is simply not modelled. Feedback's effect on ranking is the engine's
(never judged), but §3.8's feedback on the owner's own record, an older link of a chain included,
is accepted and leaves the record as it was; feedback on a forgotten record (accepted or refused
alike) is not sent. Rehydration may include or leave out another owner's public record and a
superseded link, and may frame the text any way (the machine only looks for each record's marker
word, plain ASCII, in the rendered text); what it includes must be visible to the asker and not
forgotten, and carry its own record's body, and no text of a record the asker may not see, or
that was forgotten, is rendered.

Isolation: every sequence writes a fresh marker word into each of its records' text and only ever
judges records it placed (by id); the store is shared with every other check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from memconform.suite.jsonvalue import json_equal
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.stateful import SpecMachine, asks, quote, run_machine
from memconform.suite.ump.checks._live import LIVE, OWNER_A, OWNER_B, PROJECT, did, marker, results_of, sample_record
from memconform.suite.ump import rehydrate as ump_rehydrate
from memconform.suite.ump.client import Auth, Reply

SPEC = "ump"
OWNERS = (OWNER_A, OWNER_B)
VISIBILITIES = ("private", "shared", "public")
KINDS = ("semantic", "episodic", "procedural", "working", "identity")
OUTCOMES = ("followed", "overridden", "ignored", "contradicted")  # §3.8, the same in 0.1 and 1.0
_ABSENT = "<absent>"  # a model value: the member is not there

# -- generated data ------------------------------------------------------------------------------

#: Text no scripted check sends: decomposed (NFD) accents, astral characters, right-to-left
#: script and overrides, the JSON-legal line and paragraph separators, joiners, escapes.
FRAGMENTS = (
    "e\u0301te\u0301", "A\u030angstro\u0308m", "n\u0303", "\U0001F600", "\U0001D518\U0001D52A\U0001D52D",
    "\U00020B9F", "\U0001F469\u200D\U0001F4BB", "\u05e9\u05dc\u05d5\u05dd", "\u0627\u0644\u0633\u0644\u0627\u0645",
    "\u202eevil\u202c", "\u2028", "\u2029", "line\nbreak", "tab\there", "\"quoted\" \\ back", "\u00a0nbsp",
    "\ufeffbom", "über", "日本語", "plain words",
)
_chars = st.characters(blacklist_categories=("Cs", "Cc"), max_codepoint=0x10FFFF)


# Named functions, not lambdas: Hypothesis describes a rule's strategies each time a precondition
# turns a drawn rule down, and it describes a lambda by parsing its source file.
def _joined(first: str, rest: list[str]) -> str:
    return " ".join([first, *rest])


def _lorem(n: int) -> str:
    return " " + "lorem ipsum \U0001F600 dolor " * (n // 12)


_tail = st.builds(_joined, st.sampled_from(FRAGMENTS),
                  st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(_chars, max_size=6)), max_size=4))
#: Long texts: a server that truncates (a column size, a message limit) shows it here.
_long = st.integers(1200, 2400).map(_lorem)
TAILS = st.one_of(_tail, _tail, _tail, _long)

_EDGE_INTS = (2**53 - 1, -(2**53 - 1), 2**53 - 2, 2**31, 2**31 - 1, -(2**31), 2**32 + 1, 2**40 + 3, 10**15 + 7,
              4503599627370497, 0, -1)
INTS = st.one_of(st.sampled_from(_EDGE_INTS), st.integers(-(2**53 - 1), 2**53 - 1))
FLOATS = st.one_of(st.sampled_from((0.1, 1 / 3, 2.5e-8, 123456.789, 1e21, -1.7976931348623157e308, 5e-324)),
                   st.floats(allow_nan=False, allow_infinity=False, width=64))
#: body.structured always has the same members, so a merge patch and a replace give one value.
STRUCTURED = st.fixed_dictionaries({"n": INTS, "f": FLOATS, "s": _tail, "l": st.lists(INTS, max_size=3)})

#: valid_from in the past, with offsets other than Z and fractions of a second.
_OFFSETS = ("Z", "+00:00", "+05:30", "-08:00", "+14:00", "-03:30", "+01:00")
VALID_FROM = st.builds(
    lambda y, mo, d, h, mi, s, frac, off: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{off}",
    st.integers(2001, 2025), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23), st.integers(0, 59),
    st.integers(0, 59), st.sampled_from(("", ".5", ".25", ".123", ".001", ".999")), st.sampled_from(_OFFSETS))

#: `limit` at and around its boundaries: 1, the usual default page (10), one past it, the
#: reference's max_recall (50) and past it.
LIMITS = st.sampled_from((1, 2, 5, 6, 8, 9, 10, 11, 12, 15, 20, 50, 51, 100))


#: filter.valid_at around a record's valid_from: a day, an hour, a second and a millisecond either
#: side (never the instant itself, whose inclusion the machine leaves to the scripted checks)
SHIFTS_MS = (-86_400_000, -3_600_000, -1000, -1, 1, 1, 1000, 3_600_000)


def _render(at: datetime, offset: str) -> str:
    """`at` written in `offset` ("Z", "+05:30" …), with milliseconds when it has a fraction."""
    if offset == "Z":
        local = at.astimezone(timezone.utc)
    else:
        sign = -1 if offset[0] == "-" else 1
        local = at.astimezone(timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))))
    frac = f".{local.microsecond // 1000:03d}" if local.microsecond else ""
    return local.strftime("%Y-%m-%dT%H:%M:%S") + frac + offset


def _utc(at: datetime) -> str:
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else None


def _asks(requirement: str) -> str:
    return asks(SPEC, requirement)


def _show(value: Any, limit: int = 160) -> str:
    return quote(value, limit)


# -- the model -----------------------------------------------------------------------------------

@dataclass
class Rec:
    """What the spec says one record placed by this sequence must look like."""

    id: str
    owner: str
    kind: str
    text: str
    word: str                      # a word only this record (and successors keeping its text) holds
    visibility: str
    origin: str                    # "remember" or "revise": which requirement a wrong content breaks
    structured: list[Any] = field(default_factory=lambda: [_ABSENT])  # the values every reading allows
    valid_from: str | None = None  # as sent, when the sequence chose it
    status: str = "active"         # active | tombstoned | erased
    supersedes: str | None = None
    superseded_by: str | None = None
    seen: bool = False             # served once as the model says (later changes are another bug)


class _UmpMachine(SpecMachine, RuleBasedStateMachine):
    """The model and the judging both UMP machines share."""

    def __init__(self) -> None:
        super().__init__()
        self.tag = marker("sm")  # in every record this sequence places, in no other
        self.recs: dict[str, Rec] = {}
        self.order: list[str] = []
        self.touched: list[str] = []
        self.no_revise = self.no_forget = self.no_hard = False
        self.no_feedback = self.no_rehydrate = False
        #: "patch" or "keep": whether this server's revise applies a patch's scope, as its first
        #: answer showed (variant revise-keeps-scope: §3.5 names no patchable members)
        self.scope_reading: str | None = None

    # -- calling the target ------------------------------------------------------------------

    def _send(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Reply:
        reply = self.call(what, fn, *args, **kwargs)
        if reply.error_code == "internal" or (reply.status is not None and reply.status >= 500):
            self.gone(f"{reply.operation} failed inside the server: {reply.describe()}")
        return reply

    def fail(self, requirement: str, message: str, reply: Reply | None = None) -> None:
        text = message + (f"; the server answered {reply.describe()}" if reply is not None else "")
        self.broken(requirement, f"{text}. {_asks(requirement)}", sent=reply.sent if reply else None,
                    received=(reply.body if reply.body is not None else reply.raw) if reply else None)

    # -- placing records ------------------------------------------------------------------------

    def _remember(self, owner: str, kind: str, visibility: str, tail: str = "", structured: Any = _ABSENT,
                  valid_from: str | None = None) -> Rec | None:
        word = marker("w")
        text = f"{self.tag} {word}{tail}"
        sent = sample_record(kind, owner=owner, text=text, visibility=visibility)
        if structured is not _ABSENT:
            sent["body"]["structured"] = structured
        if valid_from is not None:
            sent["time"] = {"created": valid_from, "valid_from": valid_from}
        reply = self._send(f"remember as {owner}: {kind}, {visibility}, text {_show(text, 120)}"
                           + (f", structured {_show(structured, 120)}" if structured is not _ABSENT else "")
                           + (f", valid_from {valid_from}" if valid_from else ""),
                           self.client.remember, sent, auth=Auth.as_owner(owner))
        body = reply.body if isinstance(reply.body, dict) else {}
        rid = body.get("id")
        if not reply.ok or body.get("result") != "created" or not isinstance(rid, str):
            return None  # refused or merged: judged by the scripted checks, not modelled here
        if self.recs:
            self.judged("ump/id-unique")  # a new id beside this sequence's others
        if rid in self.recs:
            self.fail("ump/id-unique", f"remember of a new record (text {_show(text, 80)}) answered created with "
                                       f"the id {rid}, which this sequence's earlier record already has", reply)
        rec = Rec(rid, owner, kind, text, word, visibility, "remember", [structured], valid_from)
        self.recs[rid] = rec
        self.order.append(rid)
        return rec

    # -- judging what a get shows ---------------------------------------------------------------

    def _chain(self, rec: Rec) -> list[Rec]:
        out = [rec]
        while out[-1].supersedes and out[-1].supersedes in self.recs and len(out) < 100:
            out.append(self.recs[out[-1].supersedes])
        return out

    def _visible_to(self, rec: Rec, asker: str) -> bool:
        return asker == rec.owner or rec.visibility == "public"

    def judge_get(self, rec: Rec, asker: str) -> None:
        reply = self._send(f"get {rec.id} as {asker}", self.client.get, rec.id, auth=Auth.as_owner(asker))
        served = reply.body.get("record") if reply.ok else None
        if reply.ok and not isinstance(served, dict):
            self.fail("ump/get-returns-record", f"{asker}'s get of {rec.id} answered no record object", reply)
        if rec.status == "erased":
            self.judged("ump/forget-hard-erases")
            if served is not None and (served.get("lifecycle") or {}).get("status") != "tombstoned" \
                    or served is not None and rec.text in json.dumps(served.get("body"), ensure_ascii=False):
                self.fail("ump/forget-hard-erases", f"after the owner's hard forget of {rec.id}, {asker}'s get still "
                                                    "returns the record with its content", reply)
            return
        if not self._visible_to(rec, asker):
            self.judged("ump/visibility-private" if rec.visibility == "private" else "ump/visibility-shared-grant")
            if served is not None:
                req = "ump/visibility-private" if rec.visibility == "private" else "ump/visibility-shared-grant"
                self.fail(req, f"{asker}'s get of {rec.owner}'s {rec.visibility} record {rec.id} returned it", reply)
            if not reply.ok and rec.word in json.dumps([reply.body, reply.error_message], ensure_ascii=False):
                req = "ump/visibility-private" if rec.visibility == "private" else "ump/visibility-shared-grant"
                self.fail(req, f"{asker}'s get of {rec.owner}'s {rec.visibility} record {rec.id} was refused but the "
                               "answer reveals its text", reply)
            return
        if served is None:
            if asker != rec.owner or reply.error_code in (None, "rate_limited", "unsupported", "unauthorized"):
                return  # another owner's public record: serving it is a MAY; no verdict on no answer
            if rec.status == "tombstoned":
                # a get hiding tombstones is a reading (ump/forget-retained is a SHOULD, warned by the
                # scripted ump/l2/forget-retained): the machine goes on, the tombstone unseen
                self.note("get does not serve a soft-forgotten record to its owner: its retention is not seen "
                          "through get (ump/l2/forget-retained warns)")
                return
            self.fail("ump/get-returns-record", f"the owner's get of {rec.id}, a record this sequence placed "
                                                "and never erased, did not return it", reply)
        self._judge_served(rec, served, reply, asker)
        rec.seen = True

    def _content_requirement(self, rec: Rec, member: str) -> str:
        if rec.seen and rec.superseded_by:
            return "ump/revise-non-destructive"
        if rec.origin == "revise":
            return "ump/revise-applies-patch"
        return "ump/remember-persists" if member in ("kind", "body.text", "scope.owner") else "ump/get-returns-record"

    def _judge_served(self, rec: Rec, served: dict[str, Any], reply: Reply, asker: str) -> None:
        who = f"{asker}'s get of {rec.id}"
        self.judged("ump/get-returns-record",
                    *(self._content_requirement(rec, m) for m in ("kind", "body.structured")))
        if rec.status == "tombstoned" and asker == rec.owner:
            self.judged("ump/forget-retained", "ump/forget-tombstones")
        if rec.supersedes is not None:
            self.judged("ump/revise-creates-successor")
        if rec.superseded_by is not None:
            self.judged("ump/revise-sets-superseded-by", "ump/revise-sets-valid-to")
        if served.get("id") != rec.id:
            self.fail("ump/get-returns-record", f"{who} returned a record with id {_show(served.get('id'))}", reply)
        body = served.get("body") if isinstance(served.get("body"), dict) else {}
        scope = served.get("scope") if isinstance(served.get("scope"), dict) else {}
        origin = "remembered" if rec.origin == "remember" else "revised into"
        for member, want, got in (("kind", rec.kind, served.get("kind")), ("body.text", rec.text, body.get("text")),
                                  ("scope.owner", did(rec.owner), scope.get("owner"))):
            if got != want:
                diff = ""
                if isinstance(got, str) and isinstance(want, str):
                    at = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
                    diff = (f" (they differ from character {at}: sent {_show(want[at:at + 12])}, served "
                            f"{_show(got[at:at + 12])}; lengths {len(want)} and {len(got)})")
                self.fail(self._content_requirement(rec, member),
                          f"{who} serves {member} {_show(got)}, but the record was {origin} with {_show(want)}{diff}",
                          reply)
        if scope.get("visibility") != rec.visibility:
            self.fail(self._content_requirement(rec, "scope.visibility"),
                      f"{who} serves scope.visibility {_show(scope.get('visibility'))}, but the record was {origin} "
                      f"with {rec.visibility!r}", reply)
        got_structured = body.get("structured", _ABSENT)
        match = [v for v in rec.structured if (v is _ABSENT and got_structured is _ABSENT)
                 or (v is not _ABSENT and got_structured is not _ABSENT and json_equal(v, got_structured))]
        if not match:
            allowed = " or ".join("no body.structured" if v is _ABSENT else _show(v) for v in rec.structured)
            self.fail(self._content_requirement(rec, "body.structured"),
                      f"{who} serves body.structured {_show(None if got_structured is _ABSENT else got_structured)}, "
                      f"but the record was {origin} with {allowed}", reply)
        rec.structured = match[:1]  # a reading chosen once is the target's: later it must hold to it
        time = served.get("time") if isinstance(served.get("time"), dict) else {}
        if rec.valid_from is not None and _instant(time.get("valid_from")) != _instant(rec.valid_from):
            self.fail(self._content_requirement(rec, "time.valid_from"),
                      f"{who} serves time.valid_from {_show(time.get('valid_from'))}, but the record was {origin} "
                      f"with {rec.valid_from!r} (a different instant, not another way of writing it)", reply)
        status = (served.get("lifecycle") or {}).get("status") if isinstance(served.get("lifecycle"), dict) else None
        if rec.status == "tombstoned" and status != "tombstoned":
            self.fail("ump/forget-tombstones", f"{who}: the record was soft-forgotten (answered tombstoned) earlier, "
                                               f"but it is served with lifecycle.status {_show(status)}", reply)
        if rec.supersedes is not None:
            sup = served.get("supersedes")
            if not isinstance(sup, list) or rec.supersedes not in sup:
                self.fail("ump/revise-creates-successor",
                          f"{who}: the record is the successor revise made of {rec.supersedes}, but its supersedes "
                          f"is {_show(sup)}", reply)
        if rec.superseded_by is not None:
            by = served.get("superseded_by")
            if not isinstance(by, list) or rec.superseded_by not in by:
                self.fail("ump/revise-sets-superseded-by", f"{who}: the record was revised into {rec.superseded_by}, "
                                                           f"but its superseded_by is {_show(by)}", reply)
            if time.get("valid_to") is None:
                self.fail("ump/revise-sets-valid-to", f"{who}: the record was revised into {rec.superseded_by}, but "
                                                      f"its time.valid_to is {_show(time.get('valid_to'))}", reply)

    # -- judging what a recall shows ------------------------------------------------------------

    def judge_recall(self, asker: str, request: dict[str, Any], *, must_find: Rec | None = None) -> None:
        reply = self._send(f"recall as {asker}: {json.dumps(request, ensure_ascii=False)}", self.client.recall,
                           request, auth=Auth.as_owner(asker))
        if not reply.ok:
            return  # a refused recall is judged by the scripted recall checks
        results = results_of(reply)
        limit = request.get("limit")
        self._judged_recall(asker, limit, must_find)
        if isinstance(limit, int) and len(results) > limit:
            self.fail("ump/recall-limit", f"{asker}'s recall with limit {limit} answered {len(results)} results", reply)
        most = self.max_recall()
        if most is not None and len(results) > most:
            self.fail("ump/recall-limit", f"{asker}'s recall answered {len(results)} results, more than the "
                                          f"max_recall {most} capabilities advertises", reply)
        ids = [r["record"].get("id") for r in results if isinstance(r.get("record"), dict)]
        for rid in ids:
            rec = self.recs.get(rid) if isinstance(rid, str) else None
            if rec is None:
                continue
            if not self._visible_to(rec, asker):
                req = "ump/visibility-private" if rec.visibility == "private" else "ump/visibility-shared-grant"
                self.fail(req, f"{asker}'s recall returned {rec.owner}'s {rec.visibility} record {rid} (result "
                               f"{ids.index(rid) + 1} of {len(ids)})", reply)
            if rec.status == "tombstoned":
                self.fail("ump/forget-excluded-from-recall", f"{asker}'s default recall returned {rid}, which its "
                                                             "owner soft-forgot earlier (answered tombstoned)", reply)
            if rec.status == "erased":
                self.fail("ump/forget-hard-erases", f"{asker}'s recall returned {rid}, which its owner hard-forgot "
                                                    "earlier", reply)
        if must_find is not None and must_find.id not in ids:
            self.fail("ump/recall-finds-remembered", f"{asker}'s recall for the exact body text "
                                                     f"{_show(must_find.text, 80)} of its own live record "
                                                     f"{must_find.id} did not return it", reply)

    def _judged_recall(self, asker: str, limit: Any, must_find: Rec | None) -> None:
        """What an answered recall can show, given what the sequence placed: records the asker may
        not see, forgotten ones, the limit, the record it must find."""
        if isinstance(limit, int) or self.max_recall() is not None:
            self.judged("ump/recall-limit")
        for rec in self.recs.values():
            if not self._visible_to(rec, asker):
                self.judged("ump/visibility-private" if rec.visibility == "private" else "ump/visibility-shared-grant")
            if rec.status == "tombstoned":
                self.judged("ump/forget-excluded-from-recall")
            if rec.status == "erased":
                self.judged("ump/forget-hard-erases")
        if must_find is not None:
            self.judged("ump/recall-finds-remembered")

    def max_recall(self) -> int | None:
        """capabilities.max_recall, asked once per run (the bound class keeps it)."""
        cls = type(self)
        if "_max_recall" not in cls.__dict__:
            reply = self._send("capabilities", self.client.capabilities)
            value = reply.body.get("max_recall") if reply.ok else None
            cls._max_recall = value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
        return cls.__dict__["_max_recall"]

    # -- feedback (§3.8) ------------------------------------------------------------------------

    def _feedback(self, rec: Rec, outcome: str) -> bool:
        request = {"id": rec.id, "outcome": outcome, "session": f"sess_{self.tag}", "actor": did(rec.owner)}
        reply = self._send(f"feedback on {rec.id} as {rec.owner}: {outcome}", self.client.feedback, request,
                           auth=Auth.as_owner(rec.owner))
        if reply.error_code == "unsupported" or (not reply.ok and reply.status in (404, 405)
                                                 and reply.error_code is None):
            self.no_feedback = True  # below L3: judged by the scripted checks
            self.note(f"feedback answered {reply.describe()}: not judged here")
            return False
        if reply.ok or reply.error_code != "rate_limited":
            self.judged("ump/feedback-accepts-outcome")
        if not reply.ok and reply.error_code != "rate_limited":
            where = "a record a later revise superseded" if rec.superseded_by else (
                "the successor a revise made" if rec.supersedes else "a record it remembered")
            self.fail("ump/feedback-accepts-outcome", f"the owner's feedback (outcome {outcome!r}) on {rec.id}, "
                                                      f"{where} and never forgot, was refused", reply)
        return reply.ok

    # -- judging what a rehydration shows (§5.3) ------------------------------------------------

    def _may_rehydrate(self, rec: Rec, asker: str) -> bool:
        return rec.status == "active" and self._visible_to(rec, asker)

    def judge_rehydrate(self, asker: str, request: dict[str, Any]) -> None:
        """What the rehydration helper includes must be records the asker may see and that are not
        forgotten, and each carries its own body (its marker word) in the rendered text; no text of
        a record it may not see, or that was forgotten, is rendered. Whether another owner's
        public record or a superseded link is included, and how the frame looks, is the target's."""
        reply = self._send(f"rehydrate as {asker}: {json.dumps(request, ensure_ascii=False)}", self.client.rehydrate,
                           request, auth=Auth.as_owner(asker))
        if reply.error_code == "unsupported" or (not reply.ok and reply.status in (404, 405)
                                                 and reply.error_code is None):
            self.no_rehydrate = True  # no helper: the scripted checks say so
            self.note(f"rehydrate answered {reply.describe()}: not judged here")
            return
        text = ump_rehydrate.frame_text(reply.body)
        if not reply.ok or text is None:
            return  # refused or a shape the suite cannot read: judged by the scripted rehydrate checks
        # a helper of its own form may take no ids and answer a search instead: what it includes is
        # judged all the same
        included = ump_rehydrate.included_ids(reply.body)
        who = f"{asker}'s rehydrate"
        if any(rid in self.recs for rid in included):
            self.judged("ump/rehydrate-never-execute")
        for rec in self.recs.values():
            if not self._may_rehydrate(rec, asker):
                self.judged("ump/rehydrate-filter-before-ranking")
            if rec.status == "erased":
                self.judged("ump/forget-hard-erases")
        for rid in included:
            rec = self.recs.get(rid)
            if rec is None:
                continue
            self._judge_rehydrated(rec, asker, f"{who} included {rid}", reply)
            if rec.word not in text:
                self.fail("ump/rehydrate-never-execute",
                          f"{who} lists {rid} as included, but its body (the word {rec.word}, which its text "
                          f"{_show(rec.text, 60)} starts with) is not carried in the rendered text", reply)
        allowed = {r.word for r in self.recs.values() if self._may_rehydrate(r, asker)}
        for rec in self.recs.values():
            if rec.word not in allowed and rec.word in text:
                self._judge_rehydrated(rec, asker, f"{who} renders the text of {rec.id} (its word {rec.word})", reply)

    def _judge_rehydrated(self, rec: Rec, asker: str, what: str, reply: Reply) -> None:
        if rec.status == "erased":
            self.fail("ump/forget-hard-erases", f"{what}, which its owner hard-forgot earlier", reply)
        if not self._visible_to(rec, asker):
            self.fail("ump/rehydrate-filter-before-ranking", f"{what}: {rec.owner}'s {rec.visibility} record, which "
                                                             f"{asker} may not see", reply)
        if rec.status == "tombstoned":
            self.fail("ump/rehydrate-filter-before-ranking", f"{what}, which its owner soft-forgot earlier "
                                                             "(answered tombstoned)", reply)

    def some_ids(self, picks: list[int]) -> list[Rec]:
        ids = list(dict.fromkeys(self.order[p % len(self.order)] for p in picks))
        return [self.recs[i] for i in ids]

    # -- operations both machines make ----------------------------------------------------------

    def heads(self) -> list[Rec]:
        return [r for r in (self.recs[i] for i in self.order) if r.status == "active" and r.superseded_by is None]

    def live(self) -> list[Rec]:
        return [r for r in (self.recs[i] for i in self.order) if r.status != "erased"]

    def _revise(self, rec: Rec, change: str, tail: str, structured: Any, visibility: str) -> Rec | None:
        new_word = marker("w")
        new_text = f"{self.tag} {new_word}{tail}"
        if change == "text":
            patch: dict[str, Any] = {"body": {"text": new_text}}
        elif change == "text+structured":
            patch = {"body": {"text": new_text, "structured": structured}}
        else:
            patch = {"scope": {"owner": did(rec.owner), "project": PROJECT, "visibility": visibility}}
        reply = self._send(f"revise {rec.id} as {rec.owner}: patch {_show(patch, 160)}", self.client.revise,
                           {"id": rec.id, "patch": patch}, auth=Auth.as_owner(rec.owner))
        if reply.error_code == "unsupported":
            self.no_revise = True
            self.note(f"revise answered {reply.describe()}: not judged here")
            return None
        body = reply.body if isinstance(reply.body, dict) else {}
        new_id = body.get("id")
        if not reply.ok or not isinstance(new_id, str):
            return None  # refused: judged by the scripted revise checks
        self.judged("ump/revise-creates-successor")
        if new_id == rec.id or new_id in self.recs:
            self.fail("ump/revise-creates-successor", f"revise of {rec.id} answered the id {new_id}, which is not a "
                                                      "new record's", reply)
        if not isinstance(body.get("supersedes"), list) or rec.id not in body["supersedes"]:
            self.fail("ump/revise-creates-successor", f"revise of {rec.id} answered supersedes "
                                                      f"{_show(body.get('supersedes'))}", reply)
        if change == "text":
            text, word, vis, structured_options = new_text, new_word, rec.visibility, [*rec.structured, _ABSENT]
        elif change == "text+structured":
            text, word, vis, structured_options = new_text, new_word, rec.visibility, [structured]
        else:
            text, word, vis, structured_options = (rec.text, rec.word, self._scope_reading(rec, new_id, visibility),
                                                   list(rec.structured))
        options = [v for i, v in enumerate(structured_options)
                   if v is not _ABSENT or _ABSENT not in structured_options[:i]]
        succ = Rec(new_id, rec.owner, rec.kind, text, word, vis, "revise", options, supersedes=rec.id)
        rec.superseded_by = new_id
        self.recs[new_id] = succ
        self.order.append(new_id)
        return succ

    def _scope_reading(self, rec: Rec, new_id: str, visibility: str) -> str:
        """The successor's visibility after a revise whose patch named `visibility`: the patched one,
        or the prior's where the server keeps scope across a revise (a reading: §3.5 calls revise an
        update, names no patchable members and patches body and time in its example; the public
        implementation keeps scope). The owner's get of the successor shows which; the first answer
        fixes the reading for the sequence, and a server that applies a scope patch once and keeps
        the prior's another time fails revise-applies-patch. A get showing neither is left to the
        invariants, which judge the patched visibility."""
        if visibility == rec.visibility:
            return visibility
        reply = self._send(f"get {new_id} as {rec.owner}", self.client.get, new_id, auth=Auth.as_owner(rec.owner))
        served = reply.body.get("record") if reply.ok and isinstance(reply.body, dict) else None
        shown = (served.get("scope") or {}).get("visibility") if isinstance(served, dict) else None
        if shown not in (visibility, rec.visibility):
            return visibility
        reading = "patch" if shown == visibility else "keep"
        if self.scope_reading is None:
            self.scope_reading = reading
            if reading == "keep":
                self.note(f"revise keeps the prior's scope (a patch of scope.visibility {rec.visibility} → "
                          f"{visibility} left {new_id} {shown}): judged as that reading")
            return shown
        self.judged("ump/revise-applies-patch")  # a later scope revise compared with the reading pinned
        if reading != self.scope_reading:
            self.fail("ump/revise-applies-patch", f"revise of {rec.id} with a patch of scope.visibility "
                                                  f"{rec.visibility} → {visibility} left the successor {new_id} "
                                                  f"{shown}, where an earlier revise of this sequence "
                                                  f"{'applied' if self.scope_reading == 'patch' else 'kept'} "
                                                  "the scope it was sent", reply)
        return shown

    def _forget(self, rec: Rec, hard: bool) -> None:
        request: dict[str, Any] = {"id": rec.id, "reason": "memconform state machine"}
        if hard:
            request["hard"] = True
        reply = self._send(f"forget {rec.id} as {rec.owner}{' (hard)' if hard else ''}", self.client.forget, request,
                           auth=Auth.as_owner(rec.owner))
        if reply.error_code == "unsupported":
            if hard:
                self.no_hard = True
                self.note(f"a hard forget answered {reply.describe()}: not judged here")
            else:
                self.no_forget = True
                self.note(f"forget answered {reply.describe()}: not judged here")
            return
        if not reply.ok:
            return  # refused: judged by the scripted forget checks
        if hard:
            rec.status = "erased"
            return
        if rec.status == "active":
            self.judged("ump/forget-tombstones")
        if rec.status == "active" and reply.body.get("result") != "tombstoned":  # a repeated forget: any answer
            self.fail("ump/forget-tombstones", f"the owner's soft forget of {rec.id} answered result "
                                               f"{_show(reply.body.get('result'))}", reply)
        rec.status = "tombstoned"


# =============================================================================================
# ump/stateful/records
# =============================================================================================

RECORDS_REQUIREMENTS = (
    "ump/remember-persists", "ump/get-returns-record", "ump/id-unique", "ump/revise-creates-successor",
    "ump/revise-sets-superseded-by", "ump/revise-sets-valid-to", "ump/revise-applies-patch",
    "ump/revise-non-destructive", "ump/forget-tombstones", "ump/forget-retained", "ump/forget-hard-erases",
    "ump/visibility-private", "ump/visibility-shared-grant", "ump/feedback-accepts-outcome",
    "ump/rehydrate-filter-before-ranking", "ump/rehydrate-never-execute",
)


class UmpRecordsMachine(_UmpMachine):
    """Records with generated payloads, revise chains, forget, reads as either owner."""

    @initialize(owner=st.sampled_from(OWNERS), visibility=st.sampled_from(VISIBILITIES), tail=TAILS,
                change=st.sampled_from(("text", "text+structured", "scope")), new_tail=_tail, structured=STRUCTURED,
                new_visibility=st.sampled_from(VISIBILITIES), forget_older=st.booleans())
    def a_chain(self, owner: str, visibility: str, tail: str, change: str, new_tail: str, structured: Any,
                new_visibility: str, forget_older: bool) -> None:
        """Every sequence starts with a chain of two: a record and its revision (the older link
        soft-forgotten, or not)."""
        rec = self._remember(owner, "semantic", visibility, tail, structured)
        if rec is None:
            return
        self.judge_get(rec, owner)  # as remembered, before a revise carries its members on
        succ = self._revise(rec, change, new_tail, structured, new_visibility)
        if succ is not None and forget_older and not self.no_forget:
            self._forget(rec, False)
        self.touched = [r.id for r in self._chain(succ)] if succ else []

    @rule(owner=st.sampled_from(OWNERS), kind=st.sampled_from(KINDS), visibility=st.sampled_from(VISIBILITIES),
          tail=TAILS, structured=st.one_of(st.just(_ABSENT), STRUCTURED),
          valid_from=st.one_of(st.none(), VALID_FROM))
    def remember(self, owner: str, kind: str, visibility: str, tail: str, structured: Any,
                 valid_from: str | None) -> None:
        rec = self._remember(owner, kind, visibility, tail, structured, valid_from)
        self.touched = [rec.id] if rec else []

    @precondition(lambda self: not self.no_revise and self.heads())
    @rule(pick=st.integers(0, 50), change=st.sampled_from(("text", "text+structured", "scope")), tail=_tail,
          structured=STRUCTURED, visibility=st.sampled_from(VISIBILITIES))
    def revise(self, pick: int, change: str, tail: str, structured: Any, visibility: str) -> None:
        heads = self.heads()
        succ = self._revise(heads[pick % len(heads)], change, tail, structured, visibility)
        self.touched = [r.id for r in self._chain(succ)] if succ else []

    @precondition(lambda self: not self.no_revise and any(r.supersedes for r in self.heads()))
    @rule(change=st.sampled_from(("text", "text+structured", "scope")), tail=_tail, structured=STRUCTURED,
          visibility=st.sampled_from(VISIBILITIES))
    def revise_longest_chain(self, change: str, tail: str, structured: Any, visibility: str) -> None:
        """Revise the head of the longest chain again: chains of three, four, … links."""
        head = max((r for r in self.heads() if r.supersedes), key=lambda r: len(self._chain(r)))
        succ = self._revise(head, change, tail, structured, visibility)
        self.touched = [r.id for r in self._chain(succ)] if succ else []

    @precondition(lambda self: not self.no_forget and self.live())
    @rule(pick=st.integers(0, 50), hard=st.booleans())
    def forget(self, pick: int, hard: bool) -> None:
        live = self.live()
        rec = live[pick % len(live)]
        if hard and self.no_hard:
            hard = False
        self._forget(rec, hard)
        self.touched = [rec.id]

    @precondition(lambda self: not self.no_forget and self.older_links())
    @rule(pick=st.integers(0, 50))
    def forget_older_link(self, pick: int) -> None:
        """Soft-forget a record a revise superseded (the middle of a chain), the head staying live."""
        older = self.older_links()
        rec = older[pick % len(older)]
        self._forget(rec, False)
        self.touched = [rec.id]

    def older_links(self) -> list[Rec]:
        return [r for r in (self.recs[i] for i in self.order) if r.status == "active" and r.superseded_by]

    @precondition(lambda self: self.order)
    @rule(pick=st.integers(0, 50), asker=st.sampled_from(OWNERS))
    def get(self, pick: int, asker: str) -> None:
        self.judge_get(self.recs[self.order[pick % len(self.order)]], asker)

    @precondition(lambda self: self.order and not (self.no_rehydrate and self.no_feedback))
    @rule(pick=st.integers(0, 50), other=st.integers(0, 50), asker=st.sampled_from(OWNERS),
          outcome=st.sampled_from(OUTCOMES))
    def inject(self, pick: int, other: int, asker: str, outcome: str) -> None:
        """A consumer's round (§5.3, §3.8): rehydrate by id a record with the older links of its
        chain (up to four) and one other record of the sequence, as either owner; then report an
        outcome on one of the asked records that is the asker's own and not forgotten (an older
        link too), which must be accepted and leave the record as it was (read back after)."""
        chain = self._chain(self.recs[self.order[pick % len(self.order)]])[:4]
        asked = [self.recs[i] for i in dict.fromkeys([*(r.id for r in chain), self.order[other % len(self.order)]])]
        if not self.no_rehydrate:
            self.judge_rehydrate(asker, {"ids": [r.id for r in asked], "scope": {"owner": did(asker)}})
        own = [r for r in asked if r.owner == asker and r.status == "active"]
        if own and not self.no_feedback:
            rec = own[(pick + other) % len(own)]
            self.touched = [rec.id] if self._feedback(rec, outcome) else []

    @invariant()
    def touched_records_agree(self) -> None:
        """What the last step changed, as the owner reads it: every record it touched (a revise:
        the whole chain, so a change to an older link shows)."""
        touched, self.touched = self.touched, []
        for rid in touched:
            rec = self.recs[rid]
            self.judge_get(rec, rec.owner)


@check("ump/stateful/records", spec=SPEC, requirements=RECORDS_REQUIREMENTS, bindings=LIVE,
       title="state machine: generated records, revise chains and forgets agree with the model")
def stateful_records(ctx: CheckContext) -> None:
    """Random sequences of remember (generated payloads, two owners, three visibilities), revise
    (of any chain's head), forget (soft or hard), get (as either owner) and a consumer's round
    (rehydrate a chain by id as either owner, then feedback on one of the asker's own records it
    asked for); after each step every record the step touched is read back and compared with the
    model. A discrepancy is shrunk to the shortest sequence and reported on the requirement it
    breaks."""
    run_machine(ctx, UmpRecordsMachine, name="UmpRecords")


# =============================================================================================
# ump/stateful/recall
# =============================================================================================

RECALL_REQUIREMENTS = (
    "ump/recall-limit", "ump/recall-finds-remembered", "ump/visibility-private", "ump/visibility-shared-grant",
    "ump/forget-excluded-from-recall", "ump/forget-hard-erases", "ump/rehydrate-filter-before-ranking",
    "ump/rehydrate-never-execute", "ump/recall-honors-valid-at",
    # what the shared remember, revise and forget steps judge (found by a blind red team: a revise
    # answering the chain's root as supersedes crashed this machine, as a requirement it did not name)
    "ump/id-unique", "ump/revise-creates-successor", "ump/forget-tombstones",
)


class UmpRecallMachine(_UmpMachine):
    """Many records of two owners per query; recalls at the boundaries of `limit`."""

    @initialize(owner=st.sampled_from(OWNERS), visibilities=st.lists(st.sampled_from(VISIBILITIES), min_size=5,
                                                                     max_size=12))
    def a_page(self, owner: str, visibilities: list[str]) -> None:
        """Every sequence starts with a page of one owner's records (5-12)."""
        for visibility in visibilities:
            self._remember(owner, "semantic", visibility)

    @rule(owner=st.sampled_from(OWNERS), visibilities=st.lists(st.sampled_from(VISIBILITIES), min_size=1, max_size=12))
    def remember_several(self, owner: str, visibilities: list[str]) -> None:
        for visibility in visibilities:
            self._remember(owner, "semantic", visibility)

    @precondition(lambda self: not self.no_forget and self.live())
    @rule(pick=st.integers(0, 50), hard=st.booleans())
    def forget(self, pick: int, hard: bool) -> None:
        """Forget one record, then recall its own text as its owner at once: a forgotten record
        is the best match there is for that query, so one served is plain to see (left to the
        later recalls, a tombstone was seldom still there: measured, none at seed 0)."""
        live = self.live()
        rec = live[pick % len(live)]
        self._forget(rec, hard and not self.no_hard)
        if rec.status != "active":
            self.judge_recall(rec.owner, {"query": rec.text, "scope": {"owner": did(rec.owner)}})

    @precondition(lambda self: not self.no_revise and self.heads())
    @rule(pick=st.integers(0, 50), visibility=st.sampled_from(VISIBILITIES))
    def revise(self, pick: int, visibility: str) -> None:
        heads = self.heads()
        self._revise(heads[pick % len(heads)], "scope", "", _ABSENT, visibility)

    @precondition(lambda self: self.order)
    @rule(asker=st.sampled_from(OWNERS), limit=LIMITS, inject=st.sampled_from((None, "query", "ids")),
          picks=st.lists(st.integers(0, 50), min_size=1, max_size=8))
    def recall(self, asker: str, limit: int, inject: str | None, picks: list[int]) -> None:
        """Recall the sequence's marker as either owner; then, as a consumer injecting memory
        would (§5.3), rehydrate the same query with the same limit, or up to eight of the
        sequence's records by id at once (both owners, every visibility, forgotten ones among
        them): whatever is included must be the asker's to see and live (filtered before
        ranking), each with its own body."""
        self.judge_recall(asker, {"query": self.tag, "scope": {"owner": did(asker)}, "limit": limit})
        if inject is None or self.no_rehydrate:
            return
        request: dict[str, Any] = {"query": self.tag, "limit": limit} if inject == "query" else \
            {"ids": [r.id for r in self.some_ids(picks)]}
        self.judge_rehydrate(asker, {**request, "scope": {"owner": did(asker)}})

    @precondition(lambda self: self.heads())
    @rule(pick=st.integers(0, 50))
    def recall_own_text(self, pick: int) -> None:
        """§3.2's workhorse: a live record is found by a recall for its exact body text in its
        owner's scope (the texts here are the sequence's marker and the record's own word)."""
        heads = self.heads()
        rec = heads[pick % len(heads)]
        self.judge_recall(rec.owner, {"query": rec.text, "scope": {"owner": did(rec.owner)}}, must_find=rec)


    @rule(owner=st.sampled_from(OWNERS), visibility=st.sampled_from(VISIBILITIES),
          valid_froms=st.lists(VALID_FROM, min_size=1, max_size=3))
    def remember_dated(self, owner: str, visibility: str, valid_froms: list[str]) -> None:
        """Records whose valid time began in the past (2001-2025), written with offsets other than Z
        and fractions of a second (§2.3)."""
        for valid_from in valid_froms:
            self._remember(owner, "semantic", visibility, valid_from=valid_from)

    def dated(self) -> list[Rec]:
        """Live records this sequence gave a valid_from and never revised: their valid time is
        [valid_from, ∞) whatever reading of revise a target makes."""
        return [r for r in (self.recs[i] for i in self.order) if r.valid_from and r.status == "active"
                and r.supersedes is None and r.superseded_by is None]

    @precondition(lambda self: self.dated())
    @rule(pick=st.integers(0, 50), shift=st.sampled_from(SHIFTS_MS), offset=st.sampled_from(_OFFSETS))
    def recall_as_of(self, pick: int, shift: int, offset: str) -> None:
        """§3.2 / §7 point in time: recall a dated record's own text with filter.valid_at a day to a
        millisecond before or after its valid_from, written in another offset: it is returned when
        valid then, and no record of the sequence is returned before its valid_from."""
        dated = self.dated()
        rec = dated[pick % len(dated)]
        start = _instant(rec.valid_from)
        at = start + timedelta(milliseconds=shift)
        valid_at = _render(at, offset)
        request = {"query": rec.text, "scope": {"owner": did(rec.owner)}, "filter": {"valid_at": valid_at}}
        reply = self._send(f"recall as {rec.owner}: {json.dumps(request, ensure_ascii=False)}", self.client.recall,
                           request, auth=Auth.as_owner(rec.owner))
        if not reply.ok:
            return  # a refused recall is judged by the scripted recall checks
        ids = [r["record"].get("id") for r in results_of(reply) if isinstance(r.get("record"), dict)]
        self.judged("ump/recall-honors-valid-at")
        early = {r.id: r for r in dated if self._visible_to(r, rec.owner) and _instant(r.valid_from) > at}
        for rid in ids:
            if rid in early:
                self.fail("ump/recall-honors-valid-at",
                          f"recall with filter.valid_at {valid_at} (the instant {_utc(at)}) returned {rid}, "
                          f"whose valid time begins later, at valid_from {early[rid].valid_from}", reply)
        if at >= start and rec.id not in ids and len(ids) < 10:
            self.fail("ump/recall-honors-valid-at",
                      f"recall for the exact body text of {rec.id} with filter.valid_at {valid_at} (the instant "
                      f"{_utc(at)}, {shift} ms after its valid_from {rec.valid_from}) left it out "
                      f"({len(ids)} results): it is valid then", reply)


@check("ump/stateful/recall", spec=SPEC, requirements=RECALL_REQUIREMENTS, bindings=LIVE,
       title="state machine: recall over many records of two owners agrees with the model")
def stateful_recall(ctx: CheckContext) -> None:
    """Random sequences placing several records at a time (two owners, three visibilities),
    forgetting and revising some, and recalling the sequence's marker as either owner with limits
    around the default page; every result is judged against the model (visible to the asker, not
    forgotten, at most `limit`), and a recall for a live record's own word must find it; rehydration
    by the marker and by many ids is judged the same way (only visible, live records included,
    each with its own body)."""
    run_machine(ctx, UmpRecallMachine, name="UmpRecall")
