"""Lifecycle (L3): what a task's TTL does to its record and to recall, re-ingesting an expired task,
the timestamps' unit, and sessions (listing them, ending one).

Timestamps are judged as instants, whatever their form: integer milliseconds (recall.md, the
engine), seconds (api-rest.md's example) or an RFC 3339 string (the page gives no format) —
created-at-ms alone asks for integer milliseconds, as a SHOULD. A record without created_at (the
page's table lists none) has its expiry counted from the suite's clock around the ingest. Expiry is judged with ttl: 1 and a bounded wait: the check polls for at
most a few seconds and fails only on a task still recalled after it; a task with the default TTL,
recalled beside it, shows that tasks are recallable at all."""

from __future__ import annotations

import json
import time
import weakref
from dataclasses import dataclass
from typing import Any

from memconform.suite.memoturn import model
from memconform.suite.memoturn.checks._common import (LIVE, got, ids_of, ingest, ingest_answer, ingest_carrying,
                                                      mentions, precondition, profile, recall, say, served, word)
from memconform.suite.memoturn.client import MemoturnReply, shown
from memconform.suite.outcomes import NotApplicable, TargetError, Waived
from memconform.suite.registry import check

DAY = model.TASK_TTL_DEFAULT
#: The slack on a TTL: the page states no precision, and created_at and expires_at may be stamped
#: a moment apart.
SLACK_S = 60
#: How long a task with ttl: 1 may stay recalled before that is a failure.
EXPIRY_WAIT_S = 4.0
POLL_S = 0.2
#: When recall-drops-expired looks, after the ttl: 1 ingest was answered: half a second past expiry.
PAST_EXPIRY_S = 1.5


def mem(mtype: str, summary: str, **fields: Any) -> dict[str, Any]:
    return model.new_memory(mtype, summary, {"note": word("c")}, **fields)


def place(ctx: Any, prof: str, memories: list[dict[str, Any]], what: str = "placing the memories") -> list[str]:
    reply = ingest(ctx, prof, memories, what)
    return [str(reply.result(i).get("id")) for i in range(len(memories))]



def fetched(ctx: Any, prof: str, mid: str, what: str) -> tuple[MemoturnReply, dict[str, Any]]:
    """GET a memory just ingested: the reply (for the failure message) and its record."""
    reply, rec = got(ctx, prof, mid)
    if rec is None:
        raise NotApplicable(f"precondition failed: {what} {mid!r}: {reply.describe()} (judged by the Core checks)")
    return reply, rec


@dataclass(frozen=True)
class Sent:
    """When an ingest went out and when its answer came back, by the suite's clock (Unix ms): where a
    record states no readable created_at (the page's record table has none), the ingest happened
    between the two."""

    before_ms: float
    after_ms: float

    @staticmethod
    def now() -> float:
        return time.time() * 1000


def lifetime(ctx: Any, rule: str, reply: MemoturnReply, rec: dict[str, Any], want_s: int, what: str,
             sent: Sent) -> None:
    """Judge a task's expires_at against `want_s` seconds after its creation: from its created_at where
    the record states a readable one (either form: Unix ms or seconds, RFC 3339), else from the
    suite's own clock around the ingest (`sent`), with SLACK_S either way (clock skew, rounding)."""
    created, expires = rec.get("created_at"), rec.get("expires_at")
    if expires is None:
        say(ctx, rule, f"{what} has no expires_at: a task expires", reply)
        return
    expires_ms = model.instant_ms(expires)
    if expires_ms is None:
        say(ctx, rule, f"{what} has expires_at {shown(expires)}, not a time (Unix milliseconds or seconds, or an "
                       f"RFC 3339 string)", reply)
        return
    created_ms = model.instant_ms(created)
    slack = SLACK_S * 1000
    if created_ms is not None:
        lived_s = (expires_ms - created_ms) / 1000
        if abs(lived_s - want_s) * 1000 > slack:
            say(ctx, rule, f"{what} has created_at {shown(created)} and expires_at {shown(expires)}: it lives "
                           f"{lived_s:g} s, not {want_s} s", reply)
        return
    # no created_at to count from: the suite's clock, before and after the ingest
    low, high = sent.before_ms + want_s * 1000 - slack, sent.after_ms + want_s * 1000 + slack
    if not low <= expires_ms <= high:
        off = (expires_ms - sent.after_ms) / 1000
        say(ctx, rule, f"{what} states no readable created_at ({shown(created)}), so its expiry was counted from the "
                       f"suite's clock around the ingest: expires_at {shown(expires)} is {off:g} s after the ingest "
                       f"was answered, not {want_s} s (±{SLACK_S} s for clock skew)", reply)


@dataclass(frozen=True)
class ShortTasks:
    """A task with ttl: 1 and one with the default TTL, both holding `word`, ingested into `profile`
    at `sent_at` (monotonic): `reply` is the ingest's answer, not yet judged."""

    profile: str
    word: str
    memories: list[dict[str, Any]]
    reply: MemoturnReply
    sent_at: float
    #: when the answer came back (monotonic): the task was created before it
    answered_at: float


#: The tags of the two checks that wait for a task with ttl: 1 to expire.
_SHORT_TASK_CHECKS = ("drop", "rein")
#: Placements made by the other check on the same client, waiting for their own check.
_early: weakref.WeakKeyDictionary[Any, dict[str, ShortTasks]] = weakref.WeakKeyDictionary()


def short_tasks(ctx: Any, tag: str) -> ShortTasks:
    """The placement check `tag` judges: made by the other expiry check on this client if it ran
    first, else now. Whichever runs first also sends the other's ingest, unjudged, so the two
    one-second expiries elapse together: each check still judges only its own answer, and the
    second waits only for what is left of its second. A placement whose ingest did not get an answer
    is dropped: its check then sends its own and sees that itself."""
    try:
        waiting = _early.setdefault(ctx.client, {})
    except TypeError:  # a client that cannot be weakly referenced shares nothing
        waiting = {}
    mine = waiting.pop(tag, None)
    if mine is not None:
        return mine
    mine = _send_short_tasks(ctx, tag)
    for other in _SHORT_TASK_CHECKS:
        if other != tag and other not in waiting:
            try:
                waiting[other] = _send_short_tasks(ctx, other)
            except TargetError:
                pass
    return mine


def _send_short_tasks(ctx: Any, tag: str) -> ShortTasks:
    prof, w = profile(tag), word()
    memories = [mem("task", f"{w} short task", ttl=1), mem("task", f"{w} lasting task")]
    sent_at = time.monotonic()
    reply = ctx.client.ingest(prof, memories)
    return ShortTasks(prof, w, memories, reply, sent_at, time.monotonic())


def wait_expired(ctx: Any, prof: str, w: str, short: str, keeper: str,
                 started: float | None = None) -> tuple[bool, MemoturnReply]:
    """Poll a recall of `w` until the task `short` (ttl: 1) is gone or EXPIRY_WAIT_S have passed since
    its ingest at `started` (monotonic; default now): (gone, the last reply). `keeper`, a task with
    the default TTL holding `w`, must be recalled every time, or tasks are not recalled at all and
    expiry cannot be observed."""
    if started is None:
        started = time.monotonic()
    time.sleep(max(0.0, started + 1.0 - time.monotonic()))
    while True:
        reply, hits = recall(ctx, prof, {"query": w}, f"a recall by {w!r}")
        found = ids_of(hits)
        if keeper not in found:
            raise NotApplicable(f"the task with the default 24 h TTL, holding the query word, was not recalled, so "
                                f"expiry cannot be told from tasks never being recalled ({reply.describe()}; judged "
                                f"by memoturn/recall-keyword-channel)")
        if short not in found:
            return True, reply
        if time.monotonic() - started >= EXPIRY_WAIT_S:
            return False, reply
        time.sleep(POLL_S)


# -- expires_at and TTLs ---------------------------------------------------------------------------------

@check("memoturn/expires-at-tasks-only", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/expires-at-tasks-only",),
       title="expires_at is set on tasks only")
def expires_at_tasks_only(ctx: Any) -> None:
    rule = "memoturn/expires-at-tasks-only"
    prof = profile("exp")
    w = word()
    placed = dict(zip(place(ctx, prof, [mem("fact", f"{w} fact", topic_key=f"user.{word('t')}"),
                                        mem("event", f"{w} event"),
                                        mem("instruction", f"{w} instruction", topic_key=f"style.{word('t')}"),
                                        mem("task", f"{w} task")]), model.TYPES))
    for mid, mtype in placed.items():
        got_reply, rec = fetched(ctx, prof, mid, f"reading back the {mtype}")
        expires = rec.get("expires_at")
        if mtype == "task" and expires is None:
            say(ctx, rule, f"GET of the task {mid} answers no expires_at: a task has one (default 24 h)", got_reply)
        elif mtype != "task" and expires is not None:
            say(ctx, rule, f"GET of the {mtype} {mid} answers expires_at {shown(expires)}: only tasks expire",
                got_reply)
    # ttl on a fact: the page leaves its fate open (refused, or ignored), but the fact does not expire
    sent = mem("fact", f"{w} fact sent with a ttl", topic_key=f"user.{word('t')}", ttl=60)
    reply = served(ctx.client.ingest(prof, [sent]))
    if reply.ok and not model.ingest_problems(reply.body, 1):
        mid = str(reply.result(0).get("id"))
        got_reply, rec = got(ctx, prof, mid)
        if rec is not None and rec.get("expires_at") is not None:
            say(ctx, rule, f"a fact sent with ttl: 60 was accepted, and GET of it ({mid}) answers expires_at "
                           f"{shown(rec.get('expires_at'))}: only tasks expire", got_reply)
    # recall hits need not carry expires_at (the engine leaves it out), but one that does must not lie
    reply, hits = recall(ctx, prof, {"query": w, "k": 20}, f"a recall by {w!r}")
    for h in hits:
        if placed.get(h.get("id"), "task") != "task" and h.get("expires_at") is not None:
            say(ctx, rule, f"the recalled {placed[h['id']]} {h['id']} carries expires_at {shown(h['expires_at'])}: "
                           f"only tasks expire", reply)


@check("memoturn/task-ttl-default", spec="memoturn", bindings=LIVE, requirements=("memoturn/task-ttl-default",),
       title="A task without ttl expires 24 hours after it was created")
def task_ttl_default(ctx: Any) -> None:
    prof = profile("ttld")
    before = Sent.now()
    (mid,) = place(ctx, prof, [mem("task", f"{word()} follow up on refund")])
    sent = Sent(before, Sent.now())
    reply, rec = fetched(ctx, prof, mid, "reading back the task")
    lifetime(ctx, "memoturn/task-ttl-default", reply, rec, DAY, f"the task {mid}, ingested without ttl,", sent)


@check("memoturn/task-ttl-explicit", spec="memoturn", bindings=LIVE, requirements=("memoturn/task-ttl-explicit",),
       title="A task with ttl: n (seconds) expires n seconds after it was created")
def task_ttl_explicit(ctx: Any) -> None:
    prof = profile("ttle")
    # two hours: well below the default (a namespace policy may clamp longer TTLs) and far from it
    ttl = 7200
    memories = [mem("task", f"{word()} renew the certificate", ttl=ttl)]
    before = Sent.now()
    placed = ingest_carrying(ctx, prof, memories, "ttl", "memoturn/task-ttl-explicit", f"a task with ttl: {ttl}")
    sent = Sent(before, Sent.now())
    if placed is None:
        return
    mid = str(placed.result(0).get("id"))
    reply, rec = fetched(ctx, prof, mid, "reading back the task")
    lifetime(ctx, "memoturn/task-ttl-explicit", reply, rec, ttl, f"the task {mid}, ingested with ttl: {ttl},", sent)
    _ttl_edges(ctx, prof)


#: A ttl past 2^31 seconds (95 years): a signed 32-bit field wraps it negative.
HUGE_TTL = 3_000_000_000


def _ttl_edges(ctx: Any, prof: str) -> None:
    """Two ttls a server may refuse (the page bounds neither), judged only where taken (a blind red team,
    round 26): ttl 3,000,000,000 s, taken, leaves the task there with expires_at after its creation (a
    governance policy may clamp it, never wrap it into the past); ttl 0, taken, expires at once, never
    the 24 h default (its falsy value read as no ttl)."""
    rule = "memoturn/task-ttl-explicit"
    for ttl in (HUGE_TTL, 0):
        task = mem("task", f"{word()} a task with ttl {ttl}", ttl=ttl)
        before = Sent.now()
        reply = served(ctx.client.ingest(prof, [task]))
        sent = Sent(before, Sent.now())
        mid = reply.result().get("id") if reply.ok else None
        if not isinstance(mid, str):
            ctx.note(f"a task with ttl {ttl} was not taken ({reply.describe()}): the page bounds no ttl, so that "
                     "is not judged")
            continue
        got_reply, rec = got(ctx, prof, mid)
        what = f"the task {mid}, taken with ttl: {ttl},"
        if rec is None:
            if ttl == HUGE_TTL and got_reply.missing:
                say(ctx, rule, f"{what} is not found by GET right after the ingest: a ttl of 95 years does not "
                               f"expire it at once", got_reply, received={"ingest": reply.received,
                                                                         "GET": got_reply.received})
            continue  # ttl 0: expired at once, hidden from GET (a reading)
        expires_ms, created_ms = model.instant_ms(rec.get("expires_at")), model.instant_ms(rec.get("created_at"))
        if expires_ms is None:
            continue  # no expiry to compare: the ttl checks' own findings
        start, late = (created_ms, created_ms) if created_ms is not None else (sent.before_ms, sent.after_ms)
        if ttl == HUGE_TTL and expires_ms <= start:
            say(ctx, rule, f"{what} has expires_at {shown(rec.get('expires_at'))}, not after its creation "
                           f"({shown(rec.get('created_at')) if created_ms is not None else 'by the suite clock'}): "
                           f"a long ttl may be clamped, never turned into the past", got_reply)
        elif ttl == 0 and expires_ms > late + SLACK_S * 1000:
            say(ctx, rule, f"{what} has expires_at {shown(rec.get('expires_at'))}, "
                           f"{(expires_ms - late) / 1000:g} s after its creation: a ttl of 0 s taken expires at "
                           f"once (or is refused), it is not read as no ttl (the 24 h default)", got_reply)


@check("memoturn/recall-drops-expired", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-drops-expired",),
       title="A task with ttl: 1 is no longer recalled once it has expired")
def recall_drops_expired(ctx: Any) -> None:
    tasks = short_tasks(ctx, "drop")
    prof, w = tasks.profile, tasks.word
    placed = ingest_carrying(ctx, prof, tasks.memories, "ttl", "memoturn/recall-drops-expired", "a task with ttl: 1",
                             sent=tasks.reply)
    if placed is None:
        return
    short, keeper = (str(placed.result(i).get("id")) for i in range(2))
    rule = "memoturn/recall-drops-expired"
    # One look, half a second past the task's own lifetime after the answer came back: the task was
    # created before that answer, so by any server's clock it is then at least half a second past its
    # expires_at (no clock is compared, only time elapsed). The lifetime is the server's expires_at −
    # created_at where both are readable (the TTL checks allow it SLACK_S; waiting it out keeps a server
    # whose expires_at rounds up from failing here), else the ttl: 1 asked. The later the look, the
    # more expired: never a pass that hangs on speed.
    past = own_lifetime_s(ctx, prof, short) + PAST_EXPIRY_S - 1
    time.sleep(max(0.0, tasks.answered_at + past - time.monotonic()))
    for what, params in (("a recall", {"query": w}), ("a recall with types ['task']", {"query": w, "types": ["task"]})):
        reply, hits = recall(ctx, prof, params, f"{what} by {w!r}")
        found = ids_of(hits)
        if keeper not in found:
            if what == "a recall":
                raise NotApplicable(f"the task with the default 24 h TTL, holding the query word, was not recalled, so "
                                    f"expiry cannot be told from tasks never being recalled ({reply.describe()}; "
                                    f"judged by memoturn/recall-keyword-channel)")
            ctx.note(f"{what} did not answer the lasting task either: the typed path shows nothing of expiry")
            continue
        if short in found:
            say(ctx, rule, f"{what}: the task {short}, ingested with ttl: 1, is still recalled "
                           f"{time.monotonic() - tasks.answered_at:.1f} s after its ingest was answered, so at least "
                           f"{PAST_EXPIRY_S - 1:g} s past its expires_at (created + {past - PAST_EXPIRY_S + 1:g} s)",
                reply)


#: The longest own lifetime of a ttl: 1 task waited out; a longer one is memoturn/task-ttl-explicit's
#: to judge, and this check then looks at it.
LONGEST_WAIT_S = 5.0


def own_lifetime_s(ctx: Any, prof: str, mid: str) -> float:
    """The seconds a ttl: 1 task lives by its record: expires_at − created_at (any readable time
    form), at least 1 and at most LONGEST_WAIT_S; 1 when the record does not say."""
    _, rec = got(ctx, prof, mid)
    if not isinstance(rec, dict):
        return 1.0
    created, expires = model.instant_ms(rec.get("created_at")), model.instant_ms(rec.get("expires_at"))
    if created is None or expires is None:
        return 1.0
    return min(max((expires - created) / 1000.0, 1.0), LONGEST_WAIT_S)


@check("memoturn/expired-task-reingest", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/expired-task-reingest",),
       title="An expired task ingested again is active again (created or revived), not a duplicate")
def expired_task_reingest(ctx: Any) -> None:
    rule = "memoturn/expired-task-reingest"
    tasks = short_tasks(ctx, "rein")
    prof, w, again = tasks.profile, tasks.word, dict(tasks.memories[0])
    placed = ingest_answer(precondition(tasks.reply, f"placing an expiring task into {prof!r}"),
                           tasks.memories, "placing the memories")
    short, keeper = (str(placed.result(i).get("id")) for i in range(2))
    gone, reply = wait_expired(ctx, prof, w, short, keeper, tasks.sent_at)
    if not gone:
        raise NotApplicable(f"the task with ttl: 1 never stopped being recalled, so it was never seen expired "
                            f"({reply.describe()}; judged by memoturn/recall-drops-expired)")
    # the same memory (ttl is outside the content hash) with the default TTL: a fresh, long expiry
    del again["ttl"]
    reply = ingest(ctx, prof, [again], "ingesting the expired task again")
    status = reply.result(0).get("status")
    if status not in ("created", "revived"):
        say(ctx, rule, f"the expired task ingested again answered {shown(status)}: an expired task is not "
                       f"\"already-active\", so it is created or revived, not a duplicate", reply)
    rid = reply.result(0).get("id")
    reply, hits = recall(ctx, prof, {"query": w}, f"a recall by {w!r} after the ingest")
    if rid not in ids_of(hits):
        say(ctx, rule, f"after the expired task was ingested again ({shown(status)}), recall still does not answer it "
                       f"({rid})", reply)


@check("memoturn/created-at-ms", spec="memoturn", bindings=LIVE, requirements=("memoturn/created-at-ms",),
       title="created_at, expires_at and superseded_at are integer Unix milliseconds")
def created_at_ms(ctx: Any) -> None:
    rule = "memoturn/created-at-ms"
    prof = profile("ms")
    w, topic = word(), f"user.{word('t')}"
    old, task = place(ctx, prof, [mem("fact", f"{w} vegetarian", topic_key=topic), mem("task", f"{w} call back")])
    place(ctx, prof, [mem("fact", f"{w} vegan", topic_key=topic)], "placing a fact that supersedes the first")
    # a clock a year off is another problem; seconds are a thousandfold off
    year_ms = 366 * DAY * 1000
    now_ms = time.time() * 1000
    seen: list[str] = []

    def judge(value: Any, what: str, want_ms: float, reply: MemoturnReply) -> None:
        if value is None:
            return
        seen.append(what)
        if not model.is_integer(value):
            form = "a time, but" if model.instant_ms(value) is not None else "not a time, and"
            say(ctx, rule, f"{what} is {shown(value)}: {form} not integer Unix milliseconds", reply)
        elif abs(value - want_ms) > year_ms:
            say(ctx, rule, f"{what} is {value}, not Unix milliseconds (now is about {int(now_ms)} ms)", reply)

    reply, rec = fetched(ctx, prof, task, "reading back the task")
    judge(rec.get("created_at"), "the task's created_at", now_ms, reply)
    judge(rec.get("expires_at"), "the task's expires_at", now_ms + DAY * 1000, reply)
    reply, rec = fetched(ctx, prof, old, "reading back the superseded fact")
    judge(rec.get("created_at"), "the fact's created_at", now_ms, reply)
    judge(rec.get("superseded_at"), "the superseded fact's superseded_at", now_ms, reply)
    reply, hits = recall(ctx, prof, {"query": w}, f"a recall by {w!r}")
    for h in hits:
        judge(h.get("created_at"), f"the recalled {h.get('id')}'s created_at", now_ms, reply)
    if not seen:
        raise NotApplicable("neither GET nor recall answers any timestamp: none to judge (a missing created_at is "
                            "memoturn/record-fields' to judge)")


# -- sessions -----------------------------------------------------------------------------------------------

def _sessions_tool(ctx: Any, reply: MemoturnReply, tool: str) -> None:
    """Over MCP a server that lists no `tool` leaves sessions to REST (mcp.md lists memory_session_end
    and memory_sessions_list, the typed-memories page names only the REST routes): waived, never a
    pass. A server listing it is judged on it as REST's route is (a blind red team, round 21: a server
    ending every session sharing a prefix was judged by nothing over MCP)."""
    if ctx.binding == "mcp" and reply.not_served:
        raise Waived(f"the server lists no {tool} tool ({reply.describe()}); over MCP ending and listing sessions "
                     "are judged where the server offers them")


@check("memoturn/session-end-tasks", spec="memoturn", bindings=LIVE, requirements=("memoturn/session-end-tasks",),
       title="Ending a session removes its tasks from recall and GET; its durable memories survive")
def session_end_tasks(ctx: Any) -> None:
    rule = "memoturn/session-end-tasks"
    prof = profile("end")
    # the other session's id begins with the ended one's: ending s-1 is no reason to end s-10
    w, s = word(), f"s-{word('s')}"
    other = f"{s}0"
    task, event, fact, elsewhere = place(ctx, prof, [mem("task", f"{w} draft the reply", session_id=s),
                                                     mem("event", f"{w} opened the ticket", session_id=s),
                                                     mem("fact", f"{w} prefers email", session_id=s),
                                                     mem("task", f"{w} check the logs", session_id=other)])
    names = {task: f"the task of session {s!r}", event: f"the event of session {s!r}",
             fact: f"the fact of session {s!r}", elsewhere: f"the task of session {other!r}"}
    # a session is ended in its profile (DELETE …/{profile}/sessions/{sid}): the same session id in another
    # profile is another session (a blind red team's server, round 30, ended it namespace-wide)
    neighbour = profile("end-other")
    (twin,) = place(ctx, neighbour, [mem("task", f"{w} the same session id in another profile", session_id=s)])
    reply, hits = recall(ctx, prof, {"query": w}, f"a recall by {w!r} before the session ends")
    missing = [n for i, n in names.items() if i not in ids_of(hits)]
    if missing:
        raise NotApplicable(f"before the session ended, recall did not find {', '.join(missing)} ({reply.describe()}; "
                            f"judged by memoturn/recall-keyword-channel)")
    ended = ctx.client.end_session(prof, s)
    _sessions_tool(ctx, ended, "memory_session_end")
    if not ended.ok:
        say(ctx, rule, f"ending session {s!r} was {'not served' if ended.not_served else 'refused'}", ended)
        return
    reply, hits = recall(ctx, prof, {"query": w}, f"a recall by {w!r} after the session ended")
    found = ids_of(hits)
    if task in found:
        say(ctx, rule, f"after session {s!r} ended, recall still answers its task {task}", reply)
    for mid in (event, fact, elsewhere):
        if mid not in found:
            say(ctx, rule, f"after session {s!r} ended, recall no longer answers {names[mid]} ({mid}): only the "
                           f"ended session's tasks go", reply)
    reply, rec = got(ctx, prof, task)
    if rec is not None and not expired(rec):
        # mcp.md: "its task memories expire immediately" — a record GET still shows, expired, is that
        say(ctx, rule, f"after session {s!r} ended, GET still answers its task {task}, not expired "
                       f"(expires_at {shown(rec.get('expires_at'))})", reply)
    for mid in (event, fact):
        reply, rec = got(ctx, prof, mid)
        if rec is None:
            say(ctx, rule, f"after session {s!r} ended, GET no longer answers {names[mid]} ({mid}): durable "
                           f"memories survive", reply)
    reply, rec = got(ctx, neighbour, twin)
    if rec is None or expired(rec):
        say(ctx, rule, f"after session {s!r} ended in profile {prof!r}, GET of {twin}, a task of the same session id "
                       f"in profile {neighbour!r}, answers {'no record' if rec is None else 'it expired'}: a session "
                       f"is ended in its own profile (DELETE …/{{profile}}/sessions/{{sid}})", reply)


def expired(rec: dict[str, Any]) -> bool:
    expires = model.instant_ms(rec.get("expires_at"))
    return expires is not None and expires <= (time.time() + SLACK_S) * 1000


@check("memoturn/sessions-listed", spec="memoturn", bindings=LIVE, requirements=("memoturn/sessions-listed",),
       title="The sessions listing names the sessions tasks were ingested with, most recent first")
def sessions_listed(ctx: Any) -> None:
    rule = "memoturn/sessions-listed"
    prof = profile("list")
    older, s = f"s-{word('s')}", f"s-{word('s')}"
    # a task: session_id is an "optional grouping; required semantics only for tasks", so a listing
    # of the sessions that hold tasks only is a reading the page allows (a blind red team's server)
    place(ctx, prof, [mem("task", f"{word()} open the migration", session_id=older)], "a task of a first session")
    # a few ms apart, so that a millisecond clock tells the two sessions' activity apart
    time.sleep(0.01)
    place(ctx, prof, [mem("task", f"{word()} finish the migration", session_id=s)], "a task of a later session")
    reply = ctx.client.sessions(prof)
    _sessions_tool(ctx, reply, "memory_sessions_list")
    if not reply.ok:
        say(ctx, rule, f"listing the sessions was {'not served' if reply.not_served else 'refused'}", reply)
        return
    # the answer's shape is not documented: the session's id anywhere in it is the listing
    if not mentions(reply.body, s):
        say(ctx, rule, f"a task was ingested with session_id {s!r}, and the session listing does not name it",
            reply)
        return
    # mcp.md: "List recent sessions, most recent first" (the tool wraps the REST route): the later
    # session is named before the first (round 21: oldest first)
    text = json.dumps(reply.body, ensure_ascii=False)
    if mentions(reply.body, older) and text.index(json.dumps(older)) < text.index(json.dumps(s)):
        say(ctx, rule, f"the listing names session {older!r} before {s!r}, whose task was ingested after its: "
                       "sessions are listed most recent first", reply)


