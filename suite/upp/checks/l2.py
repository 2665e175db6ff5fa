"""UPP level 2 (upp/08 §2): contextualize, get_tasks, get_events, delete_events, get_labels, and
the event lifecycle they make visible (supersession, accumulation, retention; upp/02 §3, §6).

Every check works on fresh entity_keys of its own (all checks share one server) and places the
events it needs with `_placing.place_events`: imported exactly as written when the server offers
upp/import_events and shares this machine's files, else ingested from sentences of the reference
extractor's documented subset (inconclusive when the server's extraction makes no event of the
wanted label). An operation a check needs only as a precondition and that fails makes the check
skip with the reason: the operation is judged by its own check.

Readings (docs/live-upp.md; the catalogue note of each requirement says the same):

* contextualize's `events` are the user's events *before* the call (retrieved synchronously,
  before the text's own ingest); the background ingest is judged through upp/get_tasks.
* A task is polled with a growing pause for at most the client's timeout (`--timeout`); one that
  has not finished by then fails upp/contextualize-background-ingest, and the message says how
  long was waited and which statuses were seen.
* upp/get_events for an unknown user and after deleting all of a user's events may answer `[]` or
  -32001 User Not Found.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.upp import model, ontology
from memconform.suite.upp.checks._common import (
    LIVE, PROFILE_TEXT, USER_NOT_FOUND, check_stored_events, compact, fail, fold, fresh_entity, ingested, need, observe,
    observe_stored_events, report_problems, require_offered, served, server_ontology,
)
from memconform.suite.upp.checks._placing import (
    FINISHED, PLURAL_LABEL, SAYINGS, SECOND_SINGULAR_LABEL, SINGULAR_LABEL, TaskPoll, by_id, event, imports, listed,
    _ingest_one, package, package_file, place_events, placed_with, poll_task, read_export_file, saying, status_of,
    store_events,
)
from memconform.suite.upp.client import RpcReply

#: What a stored event keeps for life (02 §6 "Events are never modified after creation"); only
#: status and superseded_by change.
CONTENT = ("id", "entity_key", "value", "labels", "confidence", "source_type", "created_at")
#: Seconds between placing a staged event and reinforcing it: past a whole second, so a server that stamps
#: the reinforced event anew shows a created_at of its own even on a clock of whole seconds.
REINFORCE_PAUSE = 1.1
#: The status changes 02 §6 allows (besides none).
TRANSITIONS = {("staged", "valid"), ("valid", "superseded")}
#: Where "high" and "low" begin is the server's (02 §6 defines neither): the checks judge only what
#: every reading agrees on, 1.0 as high (upp/high-confidence-valid) and 0.05 as low
#: (upp/low-confidence-staged).
HIGH_CONFIDENCE, LOW_CONFIDENCE = 1.0, 0.05
#: The StoredEvent requirements: a check that validates StoredEvents names them, so each problem
#: is charged to its own requirement whatever operation showed it.
STORED_EVENT_RULES = ("upp/stored-event-required-fields", "upp/stored-event-field-types", "upp/stored-event-status",
                      "upp/stored-event-created-at", "upp/stored-event-entity-key", "upp/stored-event-id-unique",
                      "upp/event-confidence-range", "upp/event-source-type", "upp/superseded-by-consistent")
#: What a major version of an ontology fixes for each label (07 §5: "Major version — Breaking changes:
#: removing labels, changing label semantics, changing cardinality or category").
FIXED_IN_MAJOR = ("category", "cardinality")
#: contextualize's text in upp/l2/contextualize-task: two facts of the extractor subset.
TASK_TEXT = "My name is Grace Hopper. I love sailing."


def _ids(events: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for e in events if isinstance(e.get("id"), str)]


def _brief(e: dict[str, Any] | None) -> str:
    """One event for a message: id, value, labels, status, superseded_by."""
    if e is None:
        return "(not listed)"
    return compact({k: e.get(k) for k in ("id", "value", "labels", "status", "superseded_by")}, 300)


def _get_events(ctx: CheckContext, entity: str) -> tuple[RpcReply, dict[str, dict[str, Any]]]:
    """get_events as a precondition, with the reply kept for messages."""
    reply = ctx.client.get_events(entity)
    if reply.error_code == USER_NOT_FOUND:
        return reply, {}
    result = need(reply, f"upp/get_events for {entity!r}")
    if not isinstance(result, list):
        raise NotApplicable(f"precondition failed: upp/get_events answered {reply.describe()}, not an array "
                            f"(judged by upp/l2/get-events)")
    return reply, by_id([e for e in result if isinstance(e, dict)])


def _task_id(ctx: CheckContext, entity: str, text: str) -> tuple[RpcReply, str]:
    """contextualize as a precondition: the reply and its task_id."""
    reply = ctx.client.contextualize(entity, text)
    result = need(reply, f"upp/contextualize of {text!r}")
    task_id = result.get("task_id") if isinstance(result, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise NotApplicable(f"precondition failed: upp/contextualize answered no task_id ({reply.describe()}); "
                            f"judged by upp/l2/contextualize")
    return reply, task_id


# =============================================================================================
# upp/contextualize and upp/get_tasks
# =============================================================================================

@check("upp/l2/contextualize", spec="upp",
       requirements=("upp/contextualize-result-shape", "upp/contextualize-retrieves-existing",
                     "upp/contextualize-task-pollable", *STORED_EVENT_RULES),
       bindings=LIVE,
       title="upp/contextualize answers {events, task_id}: the user's existing events and a pollable task")
def contextualize(ctx: CheckContext) -> None:
    """A fresh user holds a hobby (hiking) and a name; contextualize with a text about hiking must
    answer at once an object with `events` (StoredEvents of that user that existed before the
    call) and a non-empty `task_id` that upp/get_tasks, asked right away, knows. Credited with
    what it saw: the StoredEvent rules and retrieves-existing only when `events` holds some."""
    ctx.credit_only_observed()
    for op in ("upp/contextualize", "upp/get_events", "upp/get_tasks"):
        require_offered(ctx, op)
    entity = fresh_entity("ctx")
    place_events(ctx, entity, [saying(PLURAL_LABEL), saying(SINGULAR_LABEL)])
    existing = by_id(listed(ctx, entity))
    text = "I love hiking. Which hiking trails would suit me this weekend?"
    reply = ctx.client.contextualize(entity, text)
    if not reply.ok:
        fail(ctx, "upp/contextualize-result-shape", f"upp/contextualize for a user holding {len(existing)} events "
             f"answered no result", reply, "a result object {events: StoredEvent[], task_id: string}")
        return
    report_problems(ctx, "upp/contextualize-result-shape", model.contextualize_result_problems(reply.result),
                    "upp/contextualize", reply)
    observe(ctx, "upp/contextualize-result-shape")
    result = reply.result if isinstance(reply.result, dict) else {}
    events = [e for e in result["events"] if isinstance(e, dict)] if isinstance(result.get("events"), list) else []
    _judge_owner(ctx, "upp/contextualize-result-shape", events, entity, "upp/contextualize's events", reply)
    if events:  # an empty `events` holds no stranger to see
        observe(ctx, "upp/contextualize-retrieves-existing")
    strangers = [e for e in events if e.get("id") not in existing]
    if strangers:
        fail(ctx, "upp/contextualize-retrieves-existing",
             f"{len(strangers)} of the {len(events)} events returned are not events {entity!r} held before the call "
             f"(its events then: {compact(sorted(existing), 300)}); first: {_brief(strangers[0])}", reply,
             "only existing events of that user, retrieved before the text's own ingest (which runs in the background)")
    task_id = result.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        return  # judged with the result's shape
    tasks = ctx.client.get_tasks([task_id])
    if tasks.ok and isinstance(tasks.result, list):
        observe(ctx, "upp/contextualize-task-pollable")
    if tasks.ok and isinstance(tasks.result, list) and status_of(tasks, task_id) is None:
        fail(ctx, "upp/contextualize-task-pollable", f"upp/get_tasks, asked right after upp/contextualize returned "
             f"task_id {task_id!r}, does not report that task", tasks,
             "a TaskStatus with that task_id (pending, running, completed or failed)")
    poll_task(ctx, task_id)  # let the background ingest finish before the check ends
    _judge_quiet_task(ctx)


#: A contextualize text holding no personal fact: its background ingest may store nothing, and its
#: task is a task all the same (round 23's server forgot such tasks when they completed).
QUIET_TEXT = "Hello there, how are you today?"


def _judge_quiet_task(ctx: CheckContext) -> None:
    """contextualize of QUIET_TEXT for a fresh user: its task_id must be reported by upp/get_tasks on
    every poll until it is seen finished, and once more right after."""
    entity = fresh_entity("ctx-quiet")
    reply = ctx.client.contextualize(entity, QUIET_TEXT)
    task_id = reply.result.get("task_id") if reply.ok and isinstance(reply.result, dict) else None
    if not isinstance(task_id, str) or not task_id:
        return  # the result's shape is judged above, on the first call
    poll = poll_task(ctx, task_id)
    if not all(r.ok and isinstance(r.result, list) for r in poll.replies):
        return  # get_tasks' own answers are judged by upp/l2/contextualize-task
    again = ctx.client.get_tasks([task_id]) if poll.final is not None else None
    omitted = [i for i, s in enumerate(poll.statuses) if s is None]
    if again is not None and again.ok and isinstance(again.result, list) and status_of(again, task_id) is None:
        omitted.append(len(poll.statuses))
    if omitted:
        fail(ctx, "upp/contextualize-task-pollable", f"upp/contextualize of {QUIET_TEXT!r} (no personal fact) for "
             f"{entity!r} returned task_id {task_id!r}; polling upp/get_tasks saw: {poll.seen()}"
             f"{', then omitted when asked again' if again is not None and len(poll.statuses) in omitted else ''}",
             again if again is not None and len(poll.statuses) in omitted else poll.last,
             "the task reported on every poll (pending, running, then completed with an empty result, or failed), "
             "whether or not its ingest stored anything")


def _judge_owner(ctx: CheckContext, rid: str, events: list[dict[str, Any]], entity: str, where: str,
                 reply: RpcReply) -> None:
    """Each event carries the entity_key asked for, no two share an id, and no pointer is on an event
    that is not superseded or names itself: the StoredEvent rules the schema alone does not see
    (the members' shapes are judged with the result's shape). Marks what `events` let it see."""
    wrong = [p for p in model.stored_events_problems(events, entity_key=entity)
             if p.requirement in ("upp/stored-event-entity-key", "upp/stored-event-id-unique",
                                  "upp/superseded-by-consistent")]
    report_problems(ctx, rid, wrong, where, reply)
    if ctx.judged is not None:
        observe_stored_events(ctx, events, entity_key=entity)


@check("upp/l2/contextualize-task", spec="upp",
       requirements=("upp/contextualize-background-ingest", "upp/get-tasks-returns-statuses",
                     "upp/get-tasks-one-per-id", "upp/get-tasks-result-by-status", "upp/get-tasks-retained",
                     "upp/delete-physical", *STORED_EVENT_RULES),
       bindings=LIVE,
       title="contextualize's task goes pending/running → completed with its events, and stays reported")
def contextualize_task(ctx: CheckContext) -> None:
    """contextualize of "My name is Grace Hopper. I love sailing." for a fresh user; upp/get_tasks
    is polled with a growing pause for at most the client's timeout. Every answer is one TaskStatus
    with that task_id (result only when completed, error only when failed, completed_at only once
    finished, ISO-8601 times); the task must finish; a completed task's result is StoredEvents of
    the user that upp/get_events lists (and not empty when upp/ingest finds events in the same
    text); asked again at once after it is seen finished, the task is still reported, finished, and
    a completed one with the same result (the same event ids; judged when the second poll comes
    within RETAINED_WITHIN seconds: a result handed out once is no retention period). Credited with what it saw:
    the StoredEvent rules only for the events a completed task holds."""
    ctx.credit_only_observed()
    for op in ("upp/contextualize", "upp/get_tasks", "upp/get_events"):
        require_offered(ctx, op)
    entity = fresh_entity("task")
    _, task_id = _task_id(ctx, entity, TASK_TEXT)
    first = ctx.client.get_tasks([task_id])
    if first.ok and isinstance(first.result, list) and status_of(first, task_id) is None:
        raise NotApplicable(f"upp/get_tasks does not know the task_id {task_id!r} upp/contextualize just returned "
                            f"({first.describe()}): judged by upp/contextualize-task-pollable (upp/l2/contextualize)")
    poll = _poll_after(ctx, task_id, first)
    if not _judge_task_answers(ctx, task_id, poll.replies):
        return
    if poll.final is None:
        _report_unfinished(ctx, task_id, poll)
        return
    seen_at = time.monotonic()
    observe(ctx, "upp/contextualize-background-ingest")  # it finished; a completed one's events are judged below
    # asked again at once, before anything else: retention is judged within seconds of completion
    again = ctx.client.get_tasks([task_id])
    _judge_retained(ctx, task_id, poll.final, again, time.monotonic() - seen_at)
    empty = False
    if poll.final.get("status") == "completed":
        empty = _judge_completed(ctx, entity, task_id, poll.final, poll.replies[-1])
        _judge_result_after_delete(ctx, entity, task_id, poll.final)
    if empty and not ctx.findings:
        # As for a level-1 server fed text: no event from the text is nothing to judge, not a pass
        # of the background ingest and the stored-event rules.
        raise Inconclusive(f"task {task_id!r} completed with no events, and upp/ingest of the same text "
                           f"{TASK_TEXT!r} (for another fresh user) made none either: the server's extraction gave "
                           "the background ingest and the stored-event rules nothing to judge")


#: How soon after a task was seen finished a second poll still judges its result retained (seconds):
#: the retention period is the server's (03 §3), but none at all is no period.
RETAINED_WITHIN = 2.0


def _judge_retained(ctx: CheckContext, task_id: str, final: dict[str, Any], again: RpcReply, after: float) -> None:
    """The finished task asked again right after it was seen finished: still reported, with the same
    status, and a completed task with the same result (the same events, by id)."""
    later = status_of(again, task_id)
    observe(ctx, "upp/get-tasks-retained")
    status = final.get("status")
    if not isinstance(later, dict) or later.get("status") != status:
        fail(ctx, "upp/get-tasks-retained", f"task {task_id!r} was reported {status!r}; asked again right after, "
             f"upp/get_tasks reports {compact(later)}", again,
             f"the finished task still reported as {status!r} during the retention period")
        return
    result = final.get("result")
    if status != "completed" or not isinstance(result, list) or after > RETAINED_WITHIN:
        return
    then_ids, now = _ids(result), later.get("result")
    now_ids = _ids(now) if isinstance(now, list) else None
    if now_ids is None or sorted(now_ids) != sorted(then_ids) or len(now) != len(result):
        fail(ctx, "upp/get-tasks-retained", f"task {task_id!r} was reported completed with {len(result)} event(s) "
             f"{compact(then_ids, 300)}; asked again {after:.1f} s later, it is still completed but its result is "
             f"{compact(now, 300) if now_ids is None else compact(now_ids, 300)}", again,
             "the completed task's result retained: the same events while the task is still reported")


def _judge_result_after_delete(ctx: CheckContext, entity: str, task_id: str, final: dict[str, Any]) -> None:
    """The user's events deleted (delete_events without ids), the completed task asked again: its
    result holds none of the deleted events' values (physical deletion; the task may also be gone,
    or its result empty or null). Judged when the task completed with events, delete_events is
    served and get_events then lists none of them."""
    result = final.get("result")
    values = {fold(e.get("value")) for e in result or () if isinstance(e, dict) and isinstance(e.get("value"), str)}
    if not values or not served(ctx, "upp/delete_events"):
        return
    deleted = ctx.client.delete_events(entity)
    if not deleted.ok or any(fold(e.get("value")) in values for e in listed(ctx, entity)):
        return  # the delete itself is judged by upp/l2/delete-all
    again = ctx.client.get_tasks([task_id])
    later = status_of(again, task_id)
    kept = [e for e in (later or {}).get("result") or () if isinstance(e, dict) and fold(e.get("value")) in values] \
        if isinstance(later, dict) and isinstance(later.get("result"), list) else []
    observe(ctx, "upp/delete-physical")
    if kept:
        fail(ctx, "upp/delete-physical", f"after upp/delete_events deleted every event of {entity!r}, upp/get_tasks "
             f"still returns {len(kept)} of them in task {task_id!r}'s result: {compact(kept, 300)}", again,
             "deleted events gone from storage, task results included (the task's result may then be empty, or the "
             "task forgotten)")


def _poll_after(ctx: CheckContext, task_id: str, first: RpcReply) -> TaskPoll:
    """The first get_tasks answer, and the polls after it while the task is unfinished."""
    status = status_of(first, task_id)
    if isinstance(status, dict) and status.get("status") in FINISHED:
        return TaskPoll(task_id, 0.0, final=status, statuses=[status], replies=[first])
    poll = poll_task(ctx, task_id)
    poll.replies.insert(0, first)
    poll.statuses.insert(0, status)
    return poll


def _judge_task_answers(ctx: CheckContext, task_id: str, replies: list[RpcReply]) -> bool:
    """Every get_tasks answer: an array holding exactly one TaskStatus, for `task_id`, well formed.
    False when an answer was no array (nothing more can be read from them)."""
    problems: dict[str, model.Problem] = {}
    first_bad: RpcReply | None = None
    counted = False
    for reply in replies:
        if not reply.ok or not isinstance(reply.result, list):
            fail(ctx, "upp/get-tasks-returns-statuses", f"upp/get_tasks for task {task_id!r} (just created by "
                 f"upp/contextualize) answered no array", reply, "an array of TaskStatus objects")
            return False
        mine = [s for s in reply.result if isinstance(s, dict) and s.get("task_id") == task_id]
        if (len(mine) != 1 or len(reply.result) != 1) and not counted:
            counted = True
            fail(ctx, "upp/get-tasks-one-per-id", f"upp/get_tasks for the one task {task_id!r}, which it had reported "
                 f"before, answered {len(reply.result)} item(s), {len(mine)} of them for that task", reply,
                 "exactly one TaskStatus, carrying that task_id")
        observe(ctx, "upp/get-tasks-one-per-id")  # an array: its items were counted
        if mine:
            observe(ctx, "upp/get-tasks-returns-statuses", "upp/get-tasks-result-by-status")
        for p in (model.task_status_problems(mine[0]) if mine else []):
            if p not in problems:
                problems[p] = p
                first_bad = first_bad or reply
    if problems:
        report_problems(ctx, "upp/get-tasks-returns-statuses", problems.values(), "upp/get_tasks", first_bad)
    return True


def _report_unfinished(ctx: CheckContext, task_id: str, poll: Any) -> None:
    if poll.statuses and poll.statuses[-1] is None:
        return  # the task vanished: charged to upp/get-tasks-one-per-id above
    fail(ctx, "upp/contextualize-background-ingest",
         f"the background ingest of task {task_id!r} did not finish: the suite polled upp/get_tasks "
         f"{len(poll.statuses)} times over {poll.waited:.1f} s (its bound is the client's timeout, {poll.bound:g} s; "
         f"raise it with --timeout for a slow server) and saw: {poll.seen()}", poll.last,
         "the task to reach completed (with its events) or failed (with an error)")


def _judge_completed(ctx: CheckContext, entity: str, task_id: str, final: dict[str, Any], reply: RpcReply) -> bool:
    """A completed task's result: StoredEvents of the user, each listed by get_events; some
    events when the server's own ingest finds some in the same text. True when there was nothing
    to judge: no event in the result, none stored, and none from upp/ingest of the same text."""
    result = final.get("result")
    if not isinstance(result, list):
        return False  # judged with the TaskStatus shape (upp/get-tasks-result-by-status)
    events = [e for e in result if isinstance(e, dict)]
    _judge_owner(ctx, "upp/contextualize-background-ingest", events, entity, f"task {task_id!r}'s result", reply)
    stored = by_id(listed(ctx, entity))
    missing = [e for e in events if e.get("id") not in stored]
    if missing:
        fail(ctx, "upp/contextualize-background-ingest", f"task {task_id!r} completed with {len(events)} event(s), but "
             f"upp/get_events for {entity!r} does not list {len(missing)} of them: {compact(_ids(missing), 300)} "
             f"(it lists {compact(sorted(stored), 300)})", reply, "the events of a completed task stored for the user")
    if not events and not stored:
        found = _ingest_finds(ctx, TASK_TEXT)
        if found:
            fail(ctx, "upp/contextualize-background-ingest", f"task {task_id!r} completed without storing anything for "
                 f"{entity!r}, yet upp/ingest of the same text {TASK_TEXT!r} (for another fresh user) stores "
                 f"{len(found)} event(s): {compact([e.get('value') for e in found], 300)}", reply,
                 "the text ingested in the background, as upp/ingest would")
        return not found
    return False


def _ingest_finds(ctx: CheckContext, text: str) -> list[dict[str, Any]]:
    """What the server's upp/ingest makes of `text` for a throwaway user (removed afterwards)."""
    if not served(ctx, "upp/ingest"):
        return []
    control = fresh_entity("control")
    reply = ctx.client.ingest(control, text)
    if served(ctx, "upp/delete_events"):
        ctx.client.delete_events(control)
    return [e for e in reply.result if isinstance(e, dict)] if reply.ok and isinstance(reply.result, list) else []


@check("upp/l2/get-tasks-unknown", spec="upp",
       requirements=("upp/get-tasks-unknown-omitted", "upp/get-tasks-one-per-id"),
       bindings=LIVE,
       title="upp/get_tasks answers one status per known task id and leaves unknown ids out, without an error")
def get_tasks_unknown(ctx: CheckContext) -> None:
    """Two contextualize tasks are made. Asked for [first task, an id nobody issued, second task],
    get_tasks answers exactly the two real tasks' statuses, once each, without an error; asked for
    the unknown id alone, it answers `[]`. One status per id is judged only on an array answer."""
    ctx.credit_only_observed()
    for op in ("upp/get_tasks", "upp/contextualize"):
        require_offered(ctx, op)
    tasks = [_task_id(ctx, fresh_entity("tasks"), text)[1] for text in ("I love kayaking.", "I love rowing.")]
    unknown = f"task_mcf_unknown_{secrets.token_hex(8)}"
    asked = [tasks[0], unknown, tasks[1]]
    mixed = ctx.client.get_tasks(asked)  # asked first: a server may forget a finished task once reported
    reported = [s.get("task_id") for s in mixed.result if isinstance(s, dict)] \
        if mixed.ok and isinstance(mixed.result, list) else None
    if reported is not None and not set(tasks) & set(reported):
        raise NotApplicable(f"precondition failed: upp/get_tasks reports neither task upp/contextualize just returned "
                            f"({mixed.describe()}); judged by upp/contextualize-task-pollable")
    if not mixed.ok:
        fail(ctx, "upp/get-tasks-unknown-omitted", f"upp/get_tasks for {compact(asked)} (the middle one unknown) "
             f"answered an error", mixed, "the two real tasks' statuses, the unknown id omitted")
    elif reported is not None:
        observe(ctx, "upp/get-tasks-unknown-omitted", "upp/get-tasks-one-per-id")
        if unknown in reported:
            fail(ctx, "upp/get-tasks-unknown-omitted", f"upp/get_tasks reports the unknown task id {unknown!r}",
                 mixed, "the unknown id omitted")
        if sorted(r for r in reported if r != unknown) != sorted(tasks):
            fail(ctx, "upp/get-tasks-one-per-id", f"asked for {compact(asked)} (the middle one unknown), upp/get_tasks "
                 f"answered statuses for {compact(reported)}", mixed,
                 f"exactly one TaskStatus for each of {compact(tasks)}")
    if reported is None:
        ctx.note(f"upp/get_tasks for three ids answered {mixed.describe()}, not an array of statuses")
    alone = ctx.client.get_tasks([unknown])
    observe(ctx, "upp/get-tasks-unknown-omitted")
    if not alone.ok or (isinstance(alone.result, list) and alone.result):
        fail(ctx, "upp/get-tasks-unknown-omitted", f"upp/get_tasks for the unknown task id {unknown!r} alone did not "
             f"answer an empty array", alone, "[] — an unknown task id is omitted, without an error")
    for task_id in tasks:
        poll_task(ctx, task_id)  # let the background ingests finish before the check ends


# =============================================================================================
# upp/get_events
# =============================================================================================

@check("upp/l2/get-events", spec="upp",
       requirements=("upp/get-events-returns-stored-events", "upp/get-events-all-statuses", "upp/get-events-complete",
                     *STORED_EVENT_RULES),
       bindings=LIVE, title="upp/get_events lists every event of the user, valid, staged and superseded")
def get_events(ctx: CheckContext) -> None:
    """A fresh user gets, one at a time, two names (the first superseded by the second), a hobby,
    and — when events are imported — a language with confidence 0.3 (staged on a server that
    stages); get_events is read after each. It must answer StoredEvents of that user and list
    every event, whatever its status: when only superseded or staged events are missing, the
    listing filters by status; when a valid one is missing too, it is incomplete. Credited with
    all-statuses only when the listing holds an event that is not valid (a server that supersedes
    and stages nothing shows no status to filter by)."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    entity = fresh_entity("events")
    items = [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1), saying(PLURAL_LABEL, 0)]
    not_valid = {0}  # the first name, once the second supersedes it
    if imports(ctx):
        items.append(event("I speak Finnish.", "who_languages", confidence=0.3))
        not_valid.add(3)
    known: dict[int, str] = {}  # item index -> the id get_events listed it under
    missing: dict[int, dict[str, Any]] = {}  # item index -> the event as stored, never listed
    seen: set[str] = set()
    reply: RpcReply | None = None
    for i, item in enumerate(items):
        try:
            [stored] = store_events(ctx, entity, [item])
        except NotApplicable:
            if i == 3:  # a server may refuse a low-confidence event: not judged here
                break
            raise
        reply = ctx.client.get_events(entity)
        if i == 0 and (reply.error_code == USER_NOT_FOUND or (reply.ok and reply.result == [])):
            raise NotApplicable(f"precondition failed: after storing {item['value']!r} for {entity!r}, upp/get_events "
                                f"answers {reply.describe()}: nothing was stored (judged by upp/ingest-persists and "
                                f"upp/import-persists)")
        if not reply.ok or not isinstance(reply.result, list):
            fail(ctx, "upp/get-events-returns-stored-events", f"upp/get_events for {entity!r}, which holds "
                 f"{i + 1} event(s), answered no array", reply, "an array of the user's StoredEvents")
            return
        listing = [e for e in reply.result if isinstance(e, dict)]
        eid = stored.get("id") if "id" in stored else next(
            (e.get("id") for e in listing if e.get("id") not in seen and fold(e.get("value")) == fold(item["value"])),
            None)
        if isinstance(eid, str) and eid in by_id(listing):
            known[i] = eid
        else:
            missing[i] = stored
        seen |= set(by_id(listing))
    check_stored_events(ctx, "upp/get-events-returns-stored-events", reply.result, "upp/get_events",
                        entity_key=entity, reply=reply)
    observe_stored_events(ctx, reply.result, entity_key=entity)
    final = by_id([e for e in reply.result if isinstance(e, dict)])
    observe(ctx, "upp/get-events-returns-stored-events", "upp/get-events-complete")
    if any(final.get(eid, {}).get("status") in ("superseded", "staged") for eid in known.values()):
        observe(ctx, "upp/get-events-all-statuses")
    missing.update({i: {"id": eid, "value": items[i]["value"]} for i, eid in known.items() if eid not in final})
    _report_unlisted(ctx, items, missing, not_valid, len(final), reply)


def _report_unlisted(ctx: CheckContext, items: list[dict[str, Any]], missing: dict[int, dict[str, Any]],
                     not_valid: set[int], listed_count: int, reply: RpcReply) -> None:
    """Charge the events get_events left out: to all-statuses when only superseded or staged ones
    are missing (a filter by status), else to complete (the listing is short, whatever the status)."""
    if not missing:
        return
    described = "; ".join(f"{items[i]['value']!r} ({'superseded or staged' if i in not_valid else 'valid'}, "
                          f"{_brief(e)})" for i, e in sorted(missing.items()))
    if set(missing) <= not_valid:
        fail(ctx, "upp/get-events-all-statuses", f"upp/get_events leaves out {len(missing)} event(s) that are no "
             f"longer valid or were stored with low confidence: {described}", reply,
             "every event of the user, of every status")
    else:
        fail(ctx, "upp/get-events-complete", f"upp/get_events lists {listed_count} event(s) and leaves out "
             f"{len(missing)} the user holds: {described}", reply, "a raw listing of every event stored for the user")


#: How many events another user is given in upp/l2/get-events-among-many: more than a page, or a window
#: of the store's newest events, a server might read before filtering by user (the blind red team's was 40).
MANY = 120


@check("upp/l2/get-events-among-many", spec="upp", requirements=("upp/get-events-complete",), bindings=LIVE,
       title="upp/get_events lists every event of a user, however many events other users were given since")
def get_events_among_many(ctx: CheckContext) -> None:
    """A fresh user A holds one event; then another fresh user B is given MANY events (a plural label) in
    one import. upp/get_events for A must still list A's event, and for B every event B holds: a raw
    listing of all the user's events (03 §2), complete by default (08 §6), however many events the server
    holds for others (found by the blind red team, round 11: the store's newest 40 events read first, then
    filtered by user; seen before only by the state machine). What the user holds is witnessed by its
    export (03 §4, every event): an event missing from the listing fails only when the export holds it
    (one missing from both is upp/events-retained's or the import's business, noted). Inconclusive
    without upp/import_events and shared files; skipped without upp/export_events."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    if not imports(ctx) or not served(ctx, "upp/export_events"):
        raise Inconclusive("the suite gives a user many events in one call only with upp/import_events, and tells "
                           "what the user holds only by its export (upp/export_events), on a server sharing this "
                           "machine's files")
    a, b = fresh_entity("among-a"), fresh_entity("among-b")
    [mine] = place_events(ctx, a, [_unique_home()])
    items = [event(f"I love knitting pattern {i} of {MANY}.", PLURAL_LABEL) for i in range(1, MANY + 1)]
    content = package(fresh_entity("pkg-source"), items, ontology_id=server_ontology(ctx))
    with package_file(ctx, content, "many") as path:
        imported = ctx.client.import_events(b, str(path))
    need(imported, f"upp/import_events of {MANY} events for {b!r}")
    _judge_listed_as_exported(ctx, a, f"{a!r} holds one event, {mine.get('id')!r} ({mine.get('value')!r}); after "
                                      f"another user, {b!r}, was given {MANY} events in one import", {mine.get("id")})
    _judge_listed_as_exported(ctx, b, f"{b!r} was given {MANY} events in one import", set())
    if served(ctx, "upp/delete_events"):
        for who in (a, b):
            ctx.client.delete_events(who)  # leave the shared server as lean as it was


#: How many events like a user's own another user gets before retrieve is asked again.
CROWD = 60


@check("upp/l2/retrieve-among-many", spec="upp", requirements=("upp/retrieve-finds-stored",), bindings=LIVE,
       title="upp/retrieve finds a user's event however many like events other users hold")
def retrieve_among_many(ctx: CheckContext) -> None:
    """A fresh user A holds one event (who_languages, tier_public: no server keeps it out of retrieve by
    sensitivity, 06 §6); upp/retrieve for A asked for its exact value must find it (else inconclusive: that
    is retrieve-shape's business). Another fresh user B is then given CROWD events of the same label and the same
    value, in one import: asked again, retrieve for A must still return A's event. A
    retrieve that ranks every user's events, keeps the top few and only then keeps A's finds nothing (found
    by the blind red team, round 16; the same "among many" as get-events-among-many). Inconclusive without
    upp/import_events and shared files."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/retrieve")
    if not imports(ctx):
        raise Inconclusive("the suite gives a user many events in one call only with upp/import_events, on a server "
                           "sharing this machine's files")
    a, b = fresh_entity("crowd-a"), fresh_entity("crowd-b")
    tongue = "".join(secrets.choice("bcdfghjklmnprstvwz") + secrets.choice("aeiou") for _ in range(4)).title()
    value = f"I speak {tongue}."
    [mine] = place_events(ctx, a, [event(value, "who_languages")])

    def found() -> tuple[RpcReply, bool]:
        reply = ctx.client.retrieve(a, value)
        return reply, reply.ok and isinstance(reply.result, list) and any(
            isinstance(e, dict) and fold(e.get("value")) == fold(mine.get("value")) for e in reply.result)

    before, seen = found()
    if not seen:
        raise Inconclusive(f"upp/retrieve for {a!r} asked for {value!r} did not return its one event even before "
                           f"another user was given events ({before.describe()}): judged by upp/l1/retrieve-shape")
    # the very same value: no ranking can put A's event above them, so only the user filter keeps it
    items = [event(value, "who_languages") for _ in range(CROWD)]
    content = package(fresh_entity("pkg-source"), items, ontology_id=server_ontology(ctx))
    with package_file(ctx, content, "crowd") as path:
        result = need(ctx.client.import_events(b, str(path)), f"upp/import_events of {CROWD} events for {b!r}")
    crowd = [b]
    imported = result.get("imported_count") if isinstance(result, dict) else None
    if isinstance(imported, int) and not isinstance(imported, bool) and 0 <= imported < CROWD:
        # the repeats skipped as duplicates of what B already holds (variant upp-import-skips-duplicates, 08 §6):
        # the rest of the crowd is one event each for other users, so that other users still hold CROWD
        for _ in range(CROWD - max(imported, 1)):
            other = fresh_entity("crowd-c")
            crowd.append(other)
            one = package(fresh_entity("pkg-source"), [event(value, "who_languages")], ontology_id=server_ontology(ctx))
            with package_file(ctx, one, "crowd") as path:
                need(ctx.client.import_events(other, str(path)), f"upp/import_events of one event for {other!r}")
    after, seen = found()
    observe(ctx, "upp/retrieve-finds-stored")
    if not seen:
        fail(ctx, "upp/retrieve-finds-stored", f"upp/retrieve for {a!r} asked for {value!r} returned its one event "
             f"{mine.get('id')!r} before other users ({b!r}" + (f" and {len(crowd) - 1} more" if len(crowd) > 1 else "")
             + f") were given {CROWD} events of the same value, and not after", after, "A's event among the results: it is the best match there is among A's events, "
             "whatever other users hold (results are the user's own, ranked)")
    if served(ctx, "upp/delete_events"):
        for who in (a, *crowd):
            ctx.client.delete_events(who)  # leave the shared server as lean as it was


def _judge_listed_as_exported(ctx: CheckContext, entity: str, story: str, expect: set[Any]) -> None:
    """upp/get_events for `entity` against its export: every exported event must be listed. An id of
    `expect` in neither is noted (upp/events-retained's business, not the listing's)."""
    listing, events = _get_events(ctx, entity)
    exported = ctx.client.export_events(entity)
    file = exported.result.get("file") if exported.ok and isinstance(exported.result, dict) else None
    content, why = read_export_file(file)
    held = content.get("events") if isinstance(content, dict) else None
    if why is not None or not isinstance(held, list):
        ctx.note(f"the export of {entity!r} could not be read ({why or exported.describe()}): its listing was not "
                 "judged")
        return
    observe(ctx, "upp/get-events-complete")
    ids = [e.get("id") for e in held if isinstance(e, dict) and isinstance(e.get("id"), str)]
    gone = sorted(str(i) for i in expect - set(ids) - set(events))
    if gone:
        ctx.note(f"{compact(gone)} of {entity!r} is in neither its listing nor its export: gone from the store "
                 "(upp/events-retained's business), not a listing left short")
    missing = [i for i in ids if i not in events]
    if missing:
        fail(ctx, "upp/get-events-complete", f"{story}: upp/get_events lists {len(events)} event(s) and leaves out "
             f"{len(missing)} of the {len(ids)} its export {file!r} holds: {compact(missing[:5], 300)}", listing,
             "a raw listing of every event of the user (03 §2), complete by default (08 §6 \"Operations return "
             "complete result sets by default\"), whatever other users hold")


@check("upp/l2/get-events-own-user", spec="upp", requirements=("upp/entity-isolation",), bindings=LIVE,
       title="upp/get_events lists the user's own events only")
def get_events_own_user(ctx: CheckContext) -> None:
    """Two fresh users each hold events with values of their own, the second keyed as the first
    with "-2" after it (keys sharing a prefix: a listing selected by SQL `LIKE 'key%'`, found by the
    blind red team, round 16); get_events for either lists none of the other's values and no event
    whose entity_key is the other's."""
    require_offered(ctx, "upp/get_events")
    a = fresh_entity("own")
    b = f"{a}-2"  # an entity_key is an opaque string (01 §7): another user, however alike
    placed = {a: place_events(ctx, a, [saying(SINGULAR_LABEL, 0)]),
              b: place_events(ctx, b, [saying(SINGULAR_LABEL, 1), saying(PLURAL_LABEL, 1)])}
    values = {who: {fold(e.get("value")) for e in events} for who, events in placed.items()}
    for me, other in ((a, b), (b, a)):
        reply = ctx.client.get_events(me)
        result = need(reply, f"upp/get_events for {me!r}")
        if not isinstance(result, list):
            continue  # judged by upp/l2/get-events
        leaked = [e for e in result if isinstance(e, dict)
                  and (fold(e.get("value")) in values[other] - values[me] or e.get("entity_key") == other)]
        if leaked:
            alike = (f", whose key begins with {me!r}" if other.startswith(me) else "")
            fail(ctx, "upp/entity-isolation", f"upp/get_events for {me!r} lists {len(leaked)} event(s) of another user, "
                 f"{other!r}{alike} (who holds {compact(sorted(values[other]))}): "
                 f"{'; '.join(_owned(e) for e in leaked[:3])}", reply,
                 f"only the events of {me!r}: an entity_key names one user, matched whole (01 §7: an opaque string)")


def _owned(e: dict[str, Any]) -> str:
    """One event for a message, with the user it names."""
    return compact({k: e.get(k) for k in ("id", "entity_key", "value", "labels", "status")}, 300)


@check("upp/l2/get-events-unknown-user", spec="upp", requirements=("upp/get-events-unknown-user",), bindings=LIVE,
       title="upp/get_events for a user never written answers [] or -32001")
def get_events_unknown_user(ctx: CheckContext) -> None:
    """An entity_key nobody wrote: an empty array and -32001 User Not Found both conform."""
    require_offered(ctx, "upp/get_events")
    entity = fresh_entity("nobody")
    reply = ctx.client.get_events(entity)
    if not (reply.error_code == USER_NOT_FOUND or (reply.ok and reply.result == [])):
        fail(ctx, "upp/get-events-unknown-user", f"upp/get_events for {entity!r}, an entity_key never written",
             reply, "[] or the error -32001 User Not Found")


# =============================================================================================
# Supersession, accumulation and the lifecycle (02 §3, §6; 04 §4)
# =============================================================================================

@check("upp/l2/supersession", spec="upp",
       requirements=("upp/supersession-singular", "upp/supersession-superseded-by", "upp/supersession-new-valid",
                     "upp/one-valid-per-singular", "upp/superseded-by-existing", "upp/lifecycle-transitions"),
       bindings=LIVE, title="a new event of a singular label supersedes the valid one, naming its successor")
def supersession(ctx: CheckContext) -> None:
    """A bystander user holds a valid who_name event (singular); then a fresh user gets a who_name
    event, then a second one. get_events must show the first superseded with superseded_by = the
    second's id, the second valid, one valid who_name, and every superseded_by naming an event of the
    user; and the bystander's who_name still valid: supersession marks events "for the same user" (02
    §3; found by the blind red team, round 11: a supersession query without the user, seen only by the
    state machine). Credited with what the listing showed: the first event's status only when it is
    listed, its pointer only when it is superseded, the bystander only when its event is listed."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    bystander, entity = fresh_entity("supersede-other"), fresh_entity("supersede")
    [theirs] = place_events(ctx, bystander, [saying(SINGULAR_LABEL, 1)])
    old, new = place_events(ctx, entity, [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1)])
    _judge_bystander(ctx, bystander, theirs, entity, (old, new))
    reply, events = _get_events(ctx, entity)
    before, after = events.get(old["id"]), events.get(new["id"])
    story = (f"{SINGULAR_LABEL} (singular) was stored, each time by {placed_with(ctx)}, as {old['id']!r} "
             f"({old.get('value')!r}), then as "
             f"{new['id']!r} ({new.get('value')!r}); upp/get_events now lists the first as {_brief(before)} and the "
             f"second as {_brief(after)}")
    # A first event that is not listed at all is upp/get-events-all-statuses' (or events-retained's)
    # business: the listing, not the supersession, is then what is wrong.
    observe(ctx, "upp/supersession-new-valid")
    if before is not None:
        observe(ctx, "upp/supersession-singular")
    if before is not None and before.get("status") == "superseded":
        observe(ctx, "upp/supersession-superseded-by")
    if before is not None and before.get("status") != "superseded":
        fail(ctx, "upp/supersession-singular", story, reply, "the first event kept, with status superseded")
    elif before is not None and before.get("superseded_by") != new["id"]:
        fail(ctx, "upp/supersession-superseded-by", story, reply, f"the first event's superseded_by = {new['id']!r}")
    if after is None or after.get("status") != "valid":
        fail(ctx, "upp/supersession-new-valid", story, reply, "the second event valid")
    valid = [e for e in events.values() if e.get("status") == "valid" and SINGULAR_LABEL in (e.get("labels") or [])]
    if sum(SINGULAR_LABEL in (e.get("labels") or []) for e in events.values()) > 1:
        observe(ctx, "upp/one-valid-per-singular")  # two events of the label: both could be valid
    if len(valid) > 1:
        fail(ctx, "upp/one-valid-per-singular", f"{len(valid)} valid {SINGULAR_LABEL} events: "
             f"{'; '.join(_brief(e) for e in valid)}", reply, f"at most one valid {SINGULAR_LABEL} event per user")
    # Only a superseded event's pointer means anything (a pointer elsewhere is
    # upp/superseded-by-consistent's business, judged with the StoredEvent shape).
    dangling = [e for e in events.values() if e.get("status") == "superseded"
                and isinstance(e.get("superseded_by"), str) and e["superseded_by"] not in events]
    if any(e.get("status") == "superseded" and isinstance(e.get("superseded_by"), str) for e in events.values()):
        observe(ctx, "upp/superseded-by-existing")
    if dangling:
        fail(ctx, "upp/superseded-by-existing", f"{len(dangling)} event(s) name a superseded_by that is no event of "
             f"{entity!r}: {_brief(dangling[0])}", reply, "superseded_by naming an existing event of the same user")
    if before is not None and before.get("status") == "superseded" and served(ctx, "upp/delete_events"):
        _judge_orphan(ctx, entity, old, new)


def _judge_orphan(ctx: CheckContext, entity: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    """The successor deleted by its id: the superseded event stays superseded (02 §6 allows no
    superseded → valid; its pointer may be null, or still name the deleted event)."""
    deleted = ctx.client.delete_events(entity, [new["id"]])
    reply, events = _get_events(ctx, entity)
    if not deleted.ok or new["id"] in events or old["id"] not in events:
        return  # the delete itself is judged by upp/l2/delete-by-ids
    observe(ctx, "upp/lifecycle-transitions")
    status = events[old["id"]].get("status")
    if status != "superseded":
        fail(ctx, "upp/lifecycle-transitions", f"{old['id']!r} ({old.get('value')!r}) was superseded by {new['id']!r}; "
             f"after upp/delete_events deleted {new['id']!r}, upp/get_events lists it {status!r}: "
             f"{_brief(events[old['id']])}", reply,
             "the event still superseded: the only state changes are staged → valid and valid → superseded")


#: One text telling a singular label twice, in the extractor subset ("My name is …", "Call me …").
TWICE_TEXT = "My name is Ada Lovelace. Call me Grace Hopper."


@check("upp/l2/supersession-one-text", spec="upp", requirements=("upp/one-valid-per-singular",), bindings=LIVE,
       title="one ingest telling a singular label twice leaves at most one of its events valid")
def supersession_one_text(ctx: CheckContext) -> None:
    """A fresh user ingests one text naming the user twice (who_name, singular). When the server
    extracts two who_name events from it and upp/get_events lists both, at most one may be valid:
    "Only one value is valid at a time" (04 §4), whether the events came in one call or two; which
    one stays valid is the server's (found by the blind red team, round 11: supersession checked
    against the events stored before the call only, seen before only by the state machine). Fewer than
    two who_name events extracted or listed is inconclusive."""
    ctx.credit_only_observed()
    for op in ("upp/ingest", "upp/get_events"):
        require_offered(ctx, op)
    entity = fresh_entity("one-text")
    _, made = ingested(ctx, entity, TWICE_TEXT)
    if sum(SINGULAR_LABEL in (e.get("labels") or []) for e in made) < 2:
        raise Inconclusive(f"upp/ingest of {TWICE_TEXT!r} made fewer than two {SINGULAR_LABEL} events "
                           f"({compact(made, 300)}): the server read the text otherwise, so nothing is judged")
    listing, events = _get_events(ctx, entity)
    names = [e for e in events.values() if SINGULAR_LABEL in (e.get("labels") or [])]
    if len(names) < 2:
        raise Inconclusive(f"upp/get_events lists {len(names)} {SINGULAR_LABEL} event(s) for {entity!r} after the "
                           f"ingest of {TWICE_TEXT!r}: two events of the label were not both seen")
    observe(ctx, "upp/one-valid-per-singular")
    valid = [e for e in names if e.get("status") == "valid"]
    if len(valid) > 1:
        fail(ctx, "upp/one-valid-per-singular", f"one upp/ingest of {TWICE_TEXT!r} for {entity!r} stored "
             f"{len(names)} {SINGULAR_LABEL} (singular) events, and {len(valid)} of them are valid: "
             f"{'; '.join(_brief(e) for e in valid)}", listing,
             f"at most one valid {SINGULAR_LABEL} event: \"Only one value is valid at a time\" (04 §4), however the "
             "events came (which one is the server's)")


def _judge_bystander(ctx: CheckContext, bystander: str, theirs: dict[str, Any], entity: str,
                     placed: tuple[dict[str, Any], ...]) -> None:
    """Another user's valid event of the label, placed before `entity`'s, is still valid after them."""
    if theirs.get("status") != "valid":
        ctx.note(f"the bystander's {SINGULAR_LABEL} event is {_brief(theirs)} when placed, not valid: supersession "
                 "across users was not judged")
        return
    reply, events = _get_events(ctx, bystander)
    now = events.get(theirs["id"])
    if now is None:
        ctx.note(f"the bystander's {SINGULAR_LABEL} event {theirs['id']!r} is not listed any more (judged by "
                 "upp/events-retained): supersession across users was not judged")
        return
    observe(ctx, "upp/supersession-singular")
    if now.get("status") != "valid":
        fail(ctx, "upp/supersession-singular", f"{bystander!r} held {_brief(theirs)}, valid; then {entity!r}, another "
             f"user, stored {SINGULAR_LABEL} twice ({', '.join(repr(e.get('id')) for e in placed)}); upp/get_events "
             f"for {bystander!r} now lists its event as {_brief(now)}", reply,
             f"{bystander!r}'s event still valid: a new event supersedes \"any existing event with the same label for "
             "the same user\" (02 §3), never another user's")


@check("upp/l2/retrieve-excludes-superseded", spec="upp", requirements=("upp/retrieve-excludes-superseded",),
       bindings=LIVE, title="upp/retrieve leaves superseded events out by default (SHOULD)")
def retrieve_excludes_superseded(ctx: CheckContext) -> None:
    """A fresh user gets two who_name events (singular), so the first is superseded; a retrieve
    for the user's name, with only the protocol's parameters, should not return the first one's
    value (only `valid` events are the current state, 06 §3; `include_superseded` is the
    extension that asks for them)."""
    require_offered(ctx, "upp/get_events")
    entity = fresh_entity("retrsup")
    old, new = place_events(ctx, entity, [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1)])
    _, events = _get_events(ctx, entity)
    if (events.get(old["id"]) or {}).get("status") != "superseded":
        # Supersession itself failed: upp/l2/supersession charges that; nothing to judge here.
        raise NotApplicable(f"the first {SINGULAR_LABEL} event was not superseded, so there is no superseded "
                            "event to look for (judged by upp/l2/supersession)")
    reply = ctx.client.retrieve(entity, "What is the user's name?")
    if not reply.ok or not isinstance(reply.result, list):
        return  # the result's shape is upp/l1/retrieve-shape's business
    stale = [e for e in reply.result if isinstance(e, dict) and (e.get("id") == old["id"] or (
        e.get("value") == old.get("value") and e.get("id") != new["id"]))]
    if stale:
        fail(ctx, "upp/retrieve-excludes-superseded",
             f"{old['id']!r} ({old.get('value')!r}) was superseded by {new['id']!r} ({new.get('value')!r}), yet "
             f"upp/retrieve for the user's name returned it: {_brief(stale[0])}", reply,
             "only valid events by default; superseded ones only when the client asks (include_superseded)")


@check("upp/l2/plural-accumulate", spec="upp", requirements=("upp/plural-accumulate",), bindings=LIVE,
       title="events of a plural label accumulate: both stay valid")
def plural_accumulate(ctx: CheckContext) -> None:
    """A fresh user gets two what_interests_hobbies events (plural); get_events must list both
    valid."""
    require_offered(ctx, "upp/get_events")
    entity = fresh_entity("plural")
    first, second = place_events(ctx, entity, [saying(PLURAL_LABEL, 0), saying(PLURAL_LABEL, 1)])
    reply, events = _get_events(ctx, entity)
    now = [events.get(first["id"]), events.get(second["id"])]
    if any(e is None or e.get("status") != "valid" for e in now):
        fail(ctx, "upp/plural-accumulate", f"{PLURAL_LABEL} (plural) was stored twice, as {first['id']!r} "
             f"({first.get('value')!r}) then {second['id']!r} ({second.get('value')!r}); upp/get_events now lists "
             f"them as {_brief(now[0])} and {_brief(now[1])}", reply,
             "both valid: plural labels accumulate, no supersession")


@check("upp/l2/event-lifecycle", spec="upp",
       requirements=("upp/event-immutable", "upp/lifecycle-transitions", "upp/events-retained"),
       bindings=LIVE, title="stored events keep their content, change status only as 02 §6 allows, and stay listed")
def event_lifecycle(ctx: CheckContext) -> None:
    """A fresh user gets, one at a time, two names, a home and two hobbies, and last an ingested
    language; upp/get_events is read after each. Every event (the ingested one as upp/ingest
    returned it) is listed every time afterwards, with the same id, entity_key, value, labels,
    confidence, source_type and created_at, and its status changes only staged → valid or
    valid → superseded. (A superseded event left out of the listing is judged by
    upp/l2/get-events, not here; the status a new event gets by upp/l2/high-confidence-valid.)
    Credited with what the later listings showed of the events seen before."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    entity = fresh_entity("lifecycle")
    steps = [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1), saying(SECOND_SINGULAR_LABEL, 0),
             saying(PLURAL_LABEL, 0, confidence=HIGH_CONFIDENCE), saying(PLURAL_LABEL, 1, confidence=HIGH_CONFIDENCE)]
    seen = _Sightings()
    for step, item in enumerate(steps, 1):
        place_events(ctx, entity, [item])
        _observe(ctx, entity, seen, f"step {step} ({item['value']!r})")
    if served(ctx, "upp/ingest"):
        text = "I speak Portuguese."
        reply = ctx.client.ingest(entity, text)
        for e in (reply.result if reply.ok and isinstance(reply.result, list) else []):
            if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"] not in seen.last:
                seen.record(e["id"], f"upp/ingest's reply to {text!r}", e)
        _observe(ctx, entity, seen, f"the ingest of {text!r}")


class _Sightings:
    """Every event seen so far: where it was last seen and as what, and when it was first seen."""

    def __init__(self) -> None:
        self.last: dict[str, tuple[str, dict[str, Any], int]] = {}
        self.first: dict[str, int] = {}
        self.now = 0
        self.judged: set[tuple[str, Any]] = set()  # (requirement, event id): one finding per event and rule

    def record(self, eid: str, where: str, event_: dict[str, Any]) -> None:
        self.last[eid] = (where, event_, self.now)
        self.first.setdefault(eid, self.now)

    def replaced(self, then: dict[str, Any], since: int, events: dict[str, dict[str, Any]]) -> bool:
        """Whether a valid event first seen after `since` shares a singular label with `then` (so
        `then` should be superseded now)."""
        singular = ontology.user_v1().singular & set(then.get("labels") or [])
        return any(e.get("status") == "valid" and singular & set(e.get("labels") or [])
                   and self.first.get(eid, self.now) > since for eid, e in events.items())


def _observe(ctx: CheckContext, entity: str, seen: _Sightings, after: str) -> None:
    """Read get_events after `after`; judge every event seen before against it, then remember it."""
    reply, events = _get_events(ctx, entity)
    seen.now += 1
    for eid, (where, then, when) in list(seen.last.items()):
        if eid not in events and seen.replaced(then, when, events):
            continue  # a superseded event left out is upp/get-events-all-statuses' business
        _judge_later(ctx, eid, where, then, events.get(eid), after, reply, seen.judged)
    for eid, e in events.items():
        seen.record(eid, f"upp/get_events after {after}", e)


@check("upp/l2/high-confidence-valid", spec="upp", requirements=("upp/high-confidence-valid",), bindings=LIVE,
       title="a new event of confidence 1.0 is created valid")
def high_confidence_valid(ctx: CheckContext) -> None:
    """A fresh user gets two names, then a hobby, each with confidence 1.0 (the highest there is:
    high in any reading of 02 §6), one at a time; upp/get_events right after each must list it
    valid (the second name included: it supersedes the first, and a superseding event is created
    valid too). Placed by ingest, only events the server itself reports with confidence 1.0 are
    judged; when there are none the check is inconclusive."""
    require_offered(ctx, "upp/get_events")
    # Imported, an event may keep the package's status (variant upp-import-keeps-status: a server reading
    # 02 §6's reinforced events so never decides a new event's status there); an ingest always creates
    # it, so where both are offered the three events are also placed by ingest, for another user.
    placers = [("placed", place_events)]
    if imports(ctx) and served(ctx, "upp/ingest"):
        placers.append(("ingested", lambda c, e, items: [_ingest_one(c, e, item) for item in items]))
    judged = 0
    for how, place in placers:
        entity = fresh_entity("high")
        # an ingest's confidence is the server's own (the reference's 0.9): where the server created the first
        # event of a label valid, that confidence is high to it, and the second event of the label (which
        # supersedes the first) at no lower a confidence must be created valid too
        high_to_server: dict[str, float] = {}
        for item in (saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1), saying(PLURAL_LABEL, 0)):
            placed = place(ctx, entity, [item])[0]
            confidence = placed.get("confidence")
            if not isinstance(confidence, (int, float)) or isinstance(confidence, bool):
                continue
            label = item["labels"][0]
            shown_high = how == "ingested" and confidence >= high_to_server.get(label, float("inf"))
            if confidence < HIGH_CONFIDENCE and not shown_high:
                if how == "ingested" and placed.get("status") == "valid":
                    high_to_server.setdefault(label, confidence)
                continue
            judged += 1
            if placed.get("status") != "valid":
                why = ("a new event of confidence 1.0 created valid: 1.0 is high confidence whatever the threshold"
                       if confidence >= HIGH_CONFIDENCE else
                       f"created valid: the server created the first {label} event valid at confidence "
                       f"{high_to_server[label]}, so {confidence} is high confidence to it")
                fail(ctx, "upp/high-confidence-valid", f"the event {how} from {item['value']!r} with confidence "
                     f"{confidence} is listed by upp/get_events right after storage as {_brief(placed)}", None, why)
            elif how == "ingested":
                high_to_server.setdefault(label, confidence)
    if not judged:
        raise Inconclusive(f"the server's extraction reported no event with confidence {HIGH_CONFIDENCE} and without "
                           "upp/import_events the suite cannot give one that confidence, so no new event of high "
                           "confidence in every reading was seen")


@check("upp/l2/low-confidence-staged", spec="upp",
       requirements=("upp/low-confidence-staged", "upp/delete-physical", "upp/delete-count"), bindings=LIVE,
       title="a new event of confidence 0.05 is created staged, and deleted by its id like any other")
def low_confidence_staged(ctx: CheckContext) -> None:
    """One event (who_languages, plural) with confidence 0.05, low in any reading of 02 §6, is
    imported for a fresh user; upp/get_events must list it staged. A server that skips it (03 §4
    allows skipping events for reasons like invalid labels) leaves the check inconclusive, and so
    does a server the suite cannot give a confidence to (no upp/import_events, or files not
    shared). The staged event is then deleted by its id: it is gone, and counted (03 §2: "only
    those specific events are deleted … Deletion is physical"; found by the blind red team: only
    valid events were ever deleted by id)."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    _need_chosen_confidence(ctx)
    entity = fresh_entity("low")
    # staged, as its exporter held it: a package's status may be kept (a reinforced event is valid at
    # a low confidence, 02 §6) or derived from the confidence, and both give staged here
    staged = _import_staged(ctx, entity, event("I speak Finnish.", "who_languages"))
    listing, events = _get_events(ctx, entity)
    observe(ctx, "upp/low-confidence-staged")
    if staged.get("status") != "staged":
        fail(ctx, "upp/low-confidence-staged", f"an event imported with confidence {LOW_CONFIDENCE} is listed as "
             f"{_brief(staged)}", listing,
             f"status staged: a new event of low confidence (and {LOW_CONFIDENCE} is low in any reading) is created "
             "staged")
        return
    _note_if_package_status_kept(ctx)
    if not served(ctx, "upp/delete_events") or not isinstance(staged.get("id"), str):
        ctx.note("the staged event was not deleted by its id (no upp/delete_events, or no id): not judged")
        return
    reply = ctx.client.delete_events(entity, [staged["id"]])
    count = _deleted_count(ctx, reply, "upp/delete_events")
    listing, events = _get_events(ctx, entity)
    observe(ctx, "upp/delete-physical")
    if staged["id"] in events:
        fail(ctx, "upp/delete-physical", f"after deleting the staged event {staged['id']!r} by its id, upp/get_events "
             f"still lists it: {_brief(events[staged['id']])}", listing, "the deleted event gone, whatever its status")
    _judge_count(ctx, count, 0 if staged["id"] in events else 1, f"deleting the staged event {staged['id']!r}", reply)


def _note_if_package_status_kept(ctx: CheckContext) -> None:
    """An event of confidence 0.05 imported with status valid: a server deriving the status stores it staged;
    one keeping the package's (a reinforced event is valid at a low confidence, 02 §6) stores it valid, and
    then the staged probe above was staged by its package, not by the server's rule for new events (which
    the suite can reach only through an import: an ingest's confidence is the server's). Noted, not judged."""
    entity = fresh_entity("low-kept")
    content = package(fresh_entity("pkg-source"), [dict(event("I speak Estonian.", "who_languages"),
                                                        confidence=LOW_CONFIDENCE, status="valid")],
                      ontology_id=server_ontology(ctx))
    with package_file(ctx, content, "low-valid") as path:
        reply = ctx.client.import_events(entity, str(path))
    if not reply.ok:
        return
    if any(e.get("status") == "valid" for e in listed(ctx, entity)):
        ctx.note(f"an event imported with confidence {LOW_CONFIDENCE} and status valid stays valid: the server keeps "
                 "a package's status, so the staged event above was staged by its package, and whether the server "
                 "creates a new event of low confidence staged was not seen")


def _need_chosen_confidence(ctx: CheckContext) -> None:
    if not imports(ctx):
        raise Inconclusive("the suite places an event of a chosen confidence only with upp/import_events on a "
                           "server sharing this machine's files; extracted events carry the server's own confidence")


def _import_staged(ctx: CheckContext, entity: str, item: dict[str, Any]) -> dict[str, Any]:
    """`item` imported for `entity` as a staged event: confidence LOW_CONFIDENCE and status "staged" in the
    package (as an export writes a staged event), so a server that derives the status from the confidence
    and one that keeps the package's both store it staged. Returns the event as upp/get_events lists it
    afterwards; inconclusive when the server skips it."""
    content = package(fresh_entity("pkg-source"), [dict(item, confidence=LOW_CONFIDENCE, status="staged")],
                      ontology_id=server_ontology(ctx))
    before = set(by_id(listed(ctx, entity)))
    with package_file(ctx, content, "staged") as path:
        reply = ctx.client.import_events(entity, str(path))
    result = need(reply, f"upp/import_events of one staged event of confidence {LOW_CONFIDENCE}")
    if isinstance(result, dict) and result.get("imported_count") == 0:
        raise Inconclusive(f"the server skipped the staged event of confidence {LOW_CONFIDENCE} ({compact(result)}): "
                           "no staged event was stored, so there is nothing to judge")
    new = [e for e in listed(ctx, entity) if e.get("id") not in before and fold(e.get("value")) == fold(item["value"])]
    if not new:
        raise NotApplicable(f"precondition failed: upp/import_events answered {compact(result)}, but upp/get_events "
                            f"lists no new event {item['value']!r} for {entity!r} (judged by upp/import-persists)")
    return new[0]


def _not_staged(event: dict[str, Any]) -> Inconclusive:
    return Inconclusive(f"the event imported with confidence {LOW_CONFIDENCE} and status staged is listed as "
                        f"{_brief(event)}: no staged event was seen, so what a staged event does was not either (its "
                        "status is judged by upp/low-confidence-staged)")


@check("upp/l2/staged-supersedes-nothing", spec="upp", requirements=("upp/supersession-new-valid",), bindings=LIVE,
       title="a staged (low-confidence) event of a singular label leaves the valid one valid")
def staged_supersedes_nothing(ctx: CheckContext) -> None:
    """A fresh user holds a valid who_name (singular, confidence 1.0); a second who_name is imported with
    confidence 0.05 and status staged. When upp/get_events lists the second staged, the first must still
    be valid: supersession creates the new event valid (02 §6 rule 4, 04 §4 step 3), and a new event of
    low confidence is created staged, so a staged event supersedes nothing (found by the blind red team,
    round 11). Inconclusive when the suite cannot place an event of a chosen confidence (no
    upp/import_events, or files not shared) or the second event is not stored staged."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    _need_chosen_confidence(ctx)
    entity = fresh_entity("staged-sup")
    [first] = place_events(ctx, entity, [saying(SINGULAR_LABEL, 0)])
    if first.get("status") != "valid":
        raise NotApplicable(f"precondition failed: the {SINGULAR_LABEL} event placed with confidence "
                            f"{HIGH_CONFIDENCE} is listed as {_brief(first)}, not valid (judged by "
                            "upp/high-confidence-valid)")
    second = _import_staged(ctx, entity, saying(SINGULAR_LABEL, 1))
    listing, events = _get_events(ctx, entity)
    later = events.get(second.get("id")) or second
    if later.get("status") != "staged":
        raise _not_staged(later)
    now = events.get(first["id"])
    if now is None:
        raise NotApplicable(f"the valid {SINGULAR_LABEL} event {first['id']!r} is no longer listed (judged by "
                            "upp/events-retained)")
    observe(ctx, "upp/supersession-new-valid")
    if now.get("status") != "valid":
        fail(ctx, "upp/supersession-new-valid", f"{SINGULAR_LABEL} (singular) was stored valid as {first['id']!r} "
             f"({first.get('value')!r}); then a {SINGULAR_LABEL} event of confidence {LOW_CONFIDENCE} was imported "
             f"and is listed staged ({_brief(later)}); upp/get_events now lists the first as {_brief(now)}", listing,
             "the first still valid: supersession creates the new event valid (02 §6 \"4. The new event is created "
             "as `valid`\"), and an event of low confidence is created staged, pending reinforcement, so it "
             "supersedes nothing")


@check("upp/l2/staged-not-superseded", spec="upp", requirements=("upp/lifecycle-transitions",), bindings=LIVE,
       title="a valid event of a singular label leaves a staged one of that label staged, never superseded")
def staged_not_superseded(ctx: CheckContext) -> None:
    """A fresh user is given a who_name staged (imported with confidence 0.05 and status staged), then a
    valid who_name of another value. Supersession marks the user's valid events of the label (02 §6); the
    staged one may stay staged (or, in some reading of "matching", be reinforced), but never become
    superseded: "The only state changes are: staged → valid (reinforcement), valid → superseded" (02 §6;
    found by the blind red team, round 16: supersession over every status). Inconclusive when the suite
    cannot place an event of a chosen confidence or the first event is not stored staged."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_events")
    _need_chosen_confidence(ctx)
    entity = fresh_entity("staged-kept")
    first = _import_staged(ctx, entity, saying(SINGULAR_LABEL, 1))
    if first.get("status") != "staged":
        raise _not_staged(first)
    place_events(ctx, entity, [saying(SINGULAR_LABEL, 0)])
    listing, events = _get_events(ctx, entity)
    now = events.get(first.get("id"))
    if now is None:
        raise NotApplicable(f"the staged {SINGULAR_LABEL} event {first.get('id')!r} is no longer listed (judged by "
                            "upp/events-retained)")
    observe(ctx, "upp/lifecycle-transitions")
    if now.get("status") == "superseded":
        fail(ctx, "upp/lifecycle-transitions", f"{SINGULAR_LABEL} (singular) was imported staged as {_brief(first)}; "
             f"then a valid {SINGULAR_LABEL} event {SAYINGS[SINGULAR_LABEL][0]!r} was placed for {entity!r}, and "
             f"upp/get_events now lists the staged one as {_brief(now)}", listing,
             "the staged event still staged (or valid, if reinforced): 02 §6 \"The only state changes are: staged → "
             "valid (reinforcement), valid → superseded (contradiction)\"; supersession replaces the valid event")


@check("upp/l2/staged-reinforcement", spec="upp", requirements=("upp/staged-reinforcement", "upp/event-immutable"),
       bindings=LIVE,
       title="a staged event is reinforced to valid by the same fact stored valid, not left staged beside it, and "
             "keeps its content")
def staged_reinforcement(ctx: CheckContext) -> None:
    """upp/ingest of "I speak Finnish." for a throwaway user shows the event the server itself makes of that
    sentence (its value and labels). A fresh user is given that very event staged (imported with confidence
    0.05 and status staged), then ingests the same sentence. What a "matching event" is (02 §6) is the
    server's, but an event of the same user with the same value and the same labels is one in any reading:
    when the ingest leaves such an event valid beside the staged one while the staged one stays staged, the
    staged event was not reinforced (found by the blind red team, round 11: the matching event added, the
    staged one never promoted). Only that is judged: a staged event promoted passes; a server that stores no
    valid event of the same value and labels (a wording of its own, an extraction that differs, a duplicate
    dropped) showed no matching event, which is inconclusive. Inconclusive too without upp/import_events (or
    shared files), or when the imported event is not stored staged. The staged event as listed before the
    ingest (made a little over a second later, so a clock of whole seconds moves too) and as listed after it
    must have the same id, entity_key, value, labels, confidence, source_type and created_at: reinforcement
    changes the status only (02 §6 "Events are **never modified** after creation. The only state changes
    are: …"; blind red team round 27: reinforcing rewrote created_at)."""
    ctx.credit_only_observed()
    for op in ("upp/get_events", "upp/ingest"):
        require_offered(ctx, op)
    if not imports(ctx):
        raise Inconclusive("the suite places a staged event only with upp/import_events on a server sharing this "
                           "machine's files")
    sentence = SAYINGS["who_languages"][1]
    control = fresh_entity("reinforce-control")
    _, made = ingested(ctx, control, sentence)
    if served(ctx, "upp/delete_events"):
        ctx.client.delete_events(control)  # leave nothing behind in the shared server
    own = next((e for e in made if e.get("status") == "valid" and isinstance(e.get("value"), str)
                and isinstance(e.get("labels"), list) and e["labels"]), None)
    if own is None:
        raise Inconclusive(f"upp/ingest of {sentence!r} made no valid event with a value and labels "
                           f"({compact(made, 300)}): there is no event of the server's own to reinforce with")
    entity = fresh_entity("reinforce")
    staged = _import_staged(ctx, entity, event(own["value"], own["labels"][0]) | {"labels": list(own["labels"])})
    if staged.get("status") != "staged":
        raise _not_staged(staged)
    time.sleep(REINFORCE_PAUSE)  # a server stamping the reinforced event anew shows it even on a clock of seconds
    reply = ctx.client.ingest(entity, sentence)
    listing, events = _get_events(ctx, entity)
    now = events.get(staged.get("id"))
    if now is None:
        raise NotApplicable(f"the staged event {staged.get('id')!r} is no longer listed after the ingest of "
                            f"{sentence!r} (judged by upp/events-retained)")
    observe(ctx, "upp/event-immutable")
    changed = {k: (staged.get(k), now.get(k)) for k in CONTENT if staged.get(k) != now.get(k)}
    if changed:
        fail(ctx, "upp/event-immutable", f"{entity!r} held the staged event {_brief(staged)}; after upp/ingest of "
             f"{sentence!r} ({reply.describe()}), upp/get_events lists it as {now.get('status')!r} with "
             + "; ".join(f"{k} {compact(a, 120)} → {compact(b, 120)}" for k, (a, b) in changed.items()), listing,
             "the event's content as first stored, whatever its status becomes: 02 §6 \"Events are never modified "
             "after creation. The only state changes are: staged → valid (reinforcement), valid → superseded\"")

    def same(e: dict[str, Any]) -> bool:
        return fold(e.get("value")) == fold(own["value"]) and sorted(map(str, e.get("labels") or [])) == sorted(
            map(str, own["labels"]))

    copies = [e for eid, e in events.items() if eid != staged.get("id") and same(e) and e.get("status") == "valid"]
    if now.get("status") == "valid":
        observe(ctx, "upp/staged-reinforcement")
        return
    if not copies:
        raise Inconclusive(f"after upp/ingest of {sentence!r} ({reply.describe()}) the user holds no valid event "
                           f"with the staged event's value and labels, and the staged event is {_brief(now)}: no "
                           "matching event was stored, so no reinforcement was due that the text fixes")
    observe(ctx, "upp/staged-reinforcement")
    fail(ctx, "upp/staged-reinforcement", f"{entity!r} held {_brief(staged)}, staged (imported with confidence "
         f"{LOW_CONFIDENCE}); upp/ingest of {sentence!r} then stored {_brief(copies[0])}, valid, with the same value "
         f"and labels, yet upp/get_events still lists the staged one as {_brief(now)}", listing,
         "the staged event reinforced by the matching event: staged → valid (02 §6 \"Staged event reinforced → "
         "Transitions to `valid`\"; the lifecycle: \"Reinforced by matching event\"), not left pending beside it")


def _judge_later(ctx: CheckContext, eid: str, where: str, then: dict[str, Any], now: dict[str, Any] | None,
                 after: str, reply: RpcReply, judged: set) -> None:
    """One event as seen in `where` and as upp/get_events lists it after `after`."""
    observe(ctx, "upp/events-retained")
    if now is not None:
        observe(ctx, "upp/event-immutable", "upp/lifecycle-transitions")
    if now is None:
        if ("upp/events-retained", eid) not in judged:
            judged.add(("upp/events-retained", eid))
            fail(ctx, "upp/events-retained", f"event {eid!r} ({then.get('value')!r}, {then.get('status')}) was in "
                 f"{where} and is not listed by upp/get_events after {after}; nothing was deleted", reply,
                 "every stored event (superseded ones too) listed until upp/delete_events removes it")
        return
    changed = {k: (then.get(k), now.get(k)) for k in CONTENT if then.get(k) != now.get(k)}
    if changed and ("upp/event-immutable", eid) not in judged:
        judged.add(("upp/event-immutable", eid))
        fail(ctx, "upp/event-immutable", f"event {eid!r} as in {where}, and as listed after {after}: " + "; ".join(
            f"{k} {compact(a, 120)} → {compact(b, 120)}" for k, (a, b) in changed.items()), reply,
            "the event's content as first stored; only status and superseded_by may change")
    move = (then.get("status"), now.get("status"))
    if move[0] != move[1] and move not in TRANSITIONS and ("upp/lifecycle-transitions", eid) not in judged:
        judged.add(("upp/lifecycle-transitions", eid))
        fail(ctx, "upp/lifecycle-transitions", f"event {eid!r} ({now.get('value')!r}) was {move[0]!r} in {where} and "
             f"is {move[1]!r} after {after}", reply, "only staged → valid or valid → superseded")


# =============================================================================================
# upp/delete_events
# =============================================================================================

def _deleted_count(ctx: CheckContext, reply: RpcReply, what: str) -> int | None:
    """The deleted_count of a delete_events reply (None when there is none). Its shape is judged
    where the check names upp/delete-result-shape."""
    if "upp/delete-result-shape" in ctx.check.requirements:
        if not reply.ok:
            fail(ctx, "upp/delete-result-shape", f"{what} answered no result", reply, "{deleted_count: integer}")
        else:
            report_problems(ctx, "upp/delete-result-shape", model.delete_result_problems(reply.result), what, reply)
        observe(ctx, "upp/delete-result-shape")
    count = reply.result.get("deleted_count") if reply.ok and isinstance(reply.result, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _judge_count(ctx: CheckContext, count: int | None, gone: int, asked: str, reply: RpcReply) -> None:
    """deleted_count against what actually disappeared (03 §2: "the count of events that were
    actually deleted"). No count (judged with the result's shape): not judged."""
    if count is not None:
        observe(ctx, "upp/delete-count")
    if count is not None and count != gone:
        fail(ctx, "upp/delete-count", f"{asked} answered deleted_count {count}, but {gone} event(s) actually "
             f"disappeared", reply, f"deleted_count {gone}: the events actually deleted")


def _unique_home() -> dict[str, Any]:
    """A home no other check's user has, so retrieve cannot find it through another user."""
    town = "".join(secrets.choice("bcdfghjklmnprstvwz") + secrets.choice("aeiou") for _ in range(4)).title()
    return event(f"I live in {town}.", SECOND_SINGULAR_LABEL)


@check("upp/l2/delete-by-ids", spec="upp",
       requirements=("upp/delete-result-shape", "upp/delete-by-ids", "upp/delete-count", "upp/delete-physical"),
       bindings=LIVE, title="delete_events with ids deletes exactly those, physically, and counts them")
def delete_by_ids(ctx: CheckContext) -> None:
    """A fresh user holds a name, a home and a hobby; delete_events with the home's id answers
    {deleted_count} equal to the events that disappeared (1); the home is then gone from
    get_events, from retrieve (asked with its value, once before the delete too, so an answer a server
    cached is asked for again) and from a later export (when offered and readable); name and hobby remain. Deleting it again, or an id that never existed, counts 0.
    Then event_ids naming the hobby twice counts 1 (one event deleted, however often it is named),
    and the name with the home (already deleted) counts 1: deleted_count counts events, not ids
    (03 §2: "the count of events that were actually deleted"). A server refusing a list that
    names an id twice deletes nothing and gives no count: that request is not judged."""
    ctx.credit_only_observed()  # deleted_count is judged only where the server answered one
    for op in ("upp/delete_events", "upp/get_events"):
        require_offered(ctx, op)
    entity = fresh_entity("delete")
    name, home, hobby = place_events(ctx, entity, [saying(SINGULAR_LABEL), _unique_home(), saying(PLURAL_LABEL)])
    held = by_id(listed(ctx, entity))
    # asked once before the delete, so a server caching retrieve answers holds this very answer (blind red
    # team round 27: a retrieve cache delete_events did not clear brought deleted events back)
    ctx.client.retrieve(entity, str(home.get("value")))
    reply = ctx.client.delete_events(entity, [home["id"]])
    count = _deleted_count(ctx, reply, "upp/delete_events")
    listing, events = _get_events(ctx, entity)
    _judge_count(ctx, count, len(set(held) - set(events)), f"deleting one event ({home['id']!r})", reply)
    observe(ctx, "upp/delete-physical", "upp/delete-by-ids")  # the listing after the delete was read
    if home["id"] in events:
        fail(ctx, "upp/delete-physical", f"after deleting {home['id']!r}, upp/get_events still lists it: "
             f"{_brief(events[home['id']])}", listing, "the deleted event gone from upp/get_events")
    kept = [e for e in (name, hobby) if e["id"] not in events]
    if kept:
        fail(ctx, "upp/delete-by-ids", f"deleting only {home['id']!r} also removed {len(kept)} other event(s) of the "
             f"user: {'; '.join(_brief(e) for e in kept)}", listing, "only the named events deleted")
    _gone_from_retrieve(ctx, entity, home)
    _gone_from_export(ctx, entity, home)
    # an id cut short names no event: an id is whole (round 23's server matched ids by prefix)
    prefix = name["id"][:max(1, len(name["id"]) // 2)] if isinstance(name.get("id"), str) else ""
    if prefix and prefix != name["id"]:
        before_ids = by_id(listed(ctx, entity))
        cut = ctx.client.delete_events(entity, [prefix])
        listing, events = _get_events(ctx, entity)
        lost = [e for eid, e in before_ids.items() if eid not in events]
        if lost:
            fail(ctx, "upp/delete-by-ids", f"delete_events naming {prefix!r} (the first half of {name['id']!r}, no "
                 f"event's id) deleted {len(lost)} event(s): {'; '.join(_brief(e) for e in lost)}", cut,
                 "nothing deleted: an id in event_ids names the one event with exactly that id")
    for eid, why in ((home["id"], "was already deleted"), (f"evt_mcf_never_{secrets.token_hex(6)}", "never existed")):
        before = set(by_id(listed(ctx, entity)))
        again = ctx.client.delete_events(entity, [eid])
        count = _deleted_count(ctx, again, "upp/delete_events")
        _judge_count(ctx, count, len(before - set(by_id(listed(ctx, entity)))),
                     f"deleting {eid!r}, which {why},", again)
    for ids, why in (([hobby["id"], hobby["id"]], f"one stored event ({hobby['id']!r}) named twice"),
                     ([name["id"], home["id"]], f"one stored event ({name['id']!r}) and one already deleted "
                                                f"({home['id']!r})")):
        before = set(by_id(listed(ctx, entity)))
        again = ctx.client.delete_events(entity, ids)
        if not again.ok:
            continue  # the list refused: no count to judge (03 §2 does not say a list may repeat an id)
        count = _deleted_count(ctx, again, "upp/delete_events")
        _judge_count(ctx, count, len(before - set(by_id(listed(ctx, entity)))),
                     f"deleting event_ids {compact(ids)}, {why},", again)


def _gone_from_retrieve(ctx: CheckContext, entity: str, deleted: dict[str, Any]) -> None:
    value = str(deleted.get("value"))
    reply = ctx.client.retrieve(entity, value)
    if reply.ok and isinstance(reply.result, list):
        observe(ctx, "upp/delete-physical")  # compared (-32001 for a user deleted whole says nothing)
    found = [e for e in reply.result if isinstance(e, dict) and fold(e.get("value")) == fold(value)] \
        if reply.ok and isinstance(reply.result, list) else []
    if found:
        fail(ctx, "upp/delete-physical", f"after deleting {deleted['id']!r} ({value!r}), upp/retrieve still returns it",
             reply, "the deleted event gone from upp/retrieve")


def _gone_from_export(ctx: CheckContext, entity: str, deleted: dict[str, Any]) -> None:
    """Judged only when the server exports and the suite can read its file."""
    if not (served(ctx, "upp/export_events") and ctx.client.shares_files()):
        return
    reply = ctx.client.export_events(entity)
    file = reply.result.get("file") if reply.ok and isinstance(reply.result, dict) else None
    content, _ = read_export_file(file)
    events = content.get("events") if isinstance(content, dict) else None
    if not isinstance(events, list):
        return  # the export itself is judged by the level-3 checks
    found = [e for e in events if isinstance(e, dict)
             and (e.get("id") == deleted["id"] or fold(e.get("value")) == fold(deleted.get("value")))]
    if found:
        fail(ctx, "upp/delete-physical", f"after deleting {deleted['id']!r}, a later upp/export_events still writes it "
             f"to {file!r}: {_brief(found[0])}", reply, "the deleted event gone from later exports")


@check("upp/l2/delete-other-user", spec="upp",
       requirements=("upp/delete-other-users-untouched", "upp/entity-isolation", "upp/delete-count"),
       bindings=LIVE, title="delete_events never deletes another user's event")
def delete_other_user(ctx: CheckContext) -> None:
    """Users A and B each hold an event. delete_events for A naming B's id leaves B's event in
    place; naming A's and B's ids deletes A's only. Each deleted_count is the number of events that
    actually disappeared."""
    ctx.credit_only_observed()  # deleted_count is judged only where the server answered one
    for op in ("upp/delete_events", "upp/get_events"):
        require_offered(ctx, op)
    a, b = fresh_entity("del-a"), fresh_entity("del-b")
    [mine] = place_events(ctx, a, [saying(SINGULAR_LABEL, 0)])
    [theirs] = place_events(ctx, b, [saying(SINGULAR_LABEL, 1)])
    if mine["id"] == theirs["id"]:
        raise NotApplicable(f"the two users' events share the id {mine['id']!r}, so naming one names both "
                            f"(judged by upp/stored-event-id-unique)")
    for ids in ([theirs["id"]], [mine["id"], theirs["id"]]):
        before = {a: set(by_id(listed(ctx, a))), b: set(by_id(listed(ctx, b)))}
        reply = ctx.client.delete_events(a, ids)
        count = _deleted_count(ctx, reply, "upp/delete_events")
        listing, events = _get_events(ctx, b)
        gone = len(before[a] - set(by_id(listed(ctx, a)))) + len(before[b] - set(events))
        _judge_count(ctx, count, gone, f"delete_events for {a!r} naming {compact(ids)}", reply)
        observe(ctx, "upp/delete-other-users-untouched", "upp/entity-isolation")
        if theirs["id"] not in events:
            what = (f"delete_events for {a!r} naming {compact(ids)} deleted {b!r}'s event {theirs['id']!r}: "
                    f"upp/get_events for {b!r} no longer lists it")
            fail(ctx, "upp/delete-other-users-untouched", what, listing,
                 f"{b!r}'s events untouched by a delete for {a!r}")
            # The catalogue judges entity isolation at level 2 through delete_events too.
            fail(ctx, "upp/entity-isolation", what, listing, f"an operation for {a!r} never deletes {b!r}'s events")
            return


@check("upp/l2/delete-all", spec="upp",
       requirements=("upp/delete-all", "upp/delete-count", "upp/delete-other-users-untouched", "upp/delete-physical"),
       bindings=LIVE, title="delete_events without ids, or with [], deletes all of the user's events and only those")
def delete_all(ctx: CheckContext) -> None:
    """Two users hold three events each, two names (the first superseded by the second) and a hobby,
    the second user keyed as the first with "-2" after it (keys sharing a prefix: found by the blind
    red team, round 11, a delete-all matching the key as a prefix, SQL `LIKE 'key%'`). delete_events
    for the first with event_ids omitted, then for the second with event_ids []: afterwards
    get_events for that user is empty (or -32001) — the superseded name gone too (06 §4 "Complete
    erasure — When no `event_ids` are specified, all events for the user are deleted"; blind red team
    round 27: delete-all kept superseded events) —, the other user's events are untouched, and
    deleted_count is the number that disappeared. upp/retrieve asked for the hobby before the delete
    and after it must not return the deleted hobby (upp/delete-physical; an answer a server cached
    before the delete is asked for again)."""
    ctx.credit_only_observed()  # deleted_count is judged only where the server answered one
    for op in ("upp/delete_events", "upp/get_events"):
        require_offered(ctx, op)
    first = fresh_entity("wipe")
    second = f"{first}-2"  # an entity_key is an opaque string (01 §7): another user, however alike
    hobbies = {}
    for entity in (first, second):
        placed = place_events(ctx, entity, [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1),
                                            saying(PLURAL_LABEL)])
        hobbies[entity] = placed[-1]
        if not any(e.get("status") == "superseded" for e in listed(ctx, entity)):
            ctx.note(f"{entity!r} holds no superseded event after two {SINGULAR_LABEL} events: whether delete-all "
                     "removes superseded events was not seen for it")
    for entity, bystander, how in ((first, second, "omitted"), (second, None, "[]")):
        held = set(_ids(listed(ctx, entity)))
        spared = set(_ids(listed(ctx, bystander))) if bystander else set()
        hobby = str(hobbies[entity].get("value"))
        ctx.client.retrieve(entity, hobby)  # before the delete: an answer a server may cache
        reply = ctx.client.delete_events(entity) if how == "omitted" else ctx.client.delete_events(entity, [])
        count = _deleted_count(ctx, reply, "upp/delete_events")
        after = ctx.client.get_events(entity)
        if not (after.ok and isinstance(after.result, list)) and after.error_code != USER_NOT_FOUND and reply.ok:
            # the state after the delete is what is judged: a failure to read it is no precondition
            # (found by the blind red team: an internal error for a user deleted whole)
            fail(ctx, "upp/delete-all", f"after delete_events for {entity!r} with event_ids {how} answered "
                 f"{compact(reply.result)}, upp/get_events for that user answered {after.describe()}", after,
                 "the user's events gone: upp/get_events answers an empty array, or -32001 User Not Found "
                 "(05 §4) for a user who holds nothing")
            observe(ctx, "upp/delete-all")
            continue
        left = listed(ctx, entity)
        lost = spared - set(_ids(listed(ctx, bystander))) if bystander else set()
        observe(ctx, "upp/delete-all")
        if bystander:
            observe(ctx, "upp/delete-other-users-untouched")
        if not lost:  # when other users lost events, the count may include some the suite cannot see
            _judge_count(ctx, count, len(held - set(_ids(left))),
                         f"deleting all events of {entity!r} (event_ids {how})", reply)
        # events another user owns (entity_key) that the listing shows are that listing's fault,
        # judged by upp/l2/get-events-own-user, not events the delete left behind
        theirs = [e for e in left if isinstance(e.get("entity_key"), str) and e["entity_key"] != entity]
        if theirs:
            ctx.note(f"after deleting all events of {entity!r}, upp/get_events for it lists {len(theirs)} event(s) "
                     f"of other users ({compact(sorted({e['entity_key'] for e in theirs}))}): not charged to the "
                     "delete (judged by upp/l2/get-events-own-user)")
        left = [e for e in left if e not in theirs]
        if reply.ok and hobbies[entity].get("id") not in set(_ids(left)):
            # gone from the listing: then gone from retrieve too (one left listed is upp/delete-all's finding)
            _gone_from_retrieve(ctx, entity, hobbies[entity])
        if left:
            fail(ctx, "upp/delete-all", f"after delete_events for {entity!r} with event_ids {how}, upp/get_events "
                 f"still lists {len(left)} of its {len(held)} events: {'; '.join(_owned(e) for e in left[:3])}",
                 reply, "every event of the user deleted")
        if lost:
            alike = (", whose key begins with the deleted user's" if bystander.startswith(entity) else "")
            fail(ctx, "upp/delete-other-users-untouched", f"deleting all events of {entity!r} also removed "
                 f"{len(lost)} event(s) of {bystander!r}{alike}: {compact(sorted(lost))}", reply,
                 "only the named user's events deleted: an entity_key names one user, matched whole (01 §7: "
                 "an opaque string)")


# =============================================================================================
# upp/get_labels
# =============================================================================================

@check("upp/l2/get-labels", spec="upp",
       requirements=("upp/get-labels-returns-definitions", "upp/label-definition-required-fields",
                     "upp/label-definition-field-types", "upp/get-labels-complete", "upp/ontology-major-stable",
                     "upp/label-category-standard"),
       bindings=LIVE,
       title="upp/get_labels lists the server's ontology as LabelDefinitions "
             "(user/v1: every official label, unchanged)")
def get_labels(ctx: CheckContext) -> None:
    """Every item is a LabelDefinition (the eight required members, the vocabularies of 02 §5),
    names are distinct, categories are the nine standard ones (SHOULD). When upp/info names
    user/v1: every label of the official file is listed with its category, sensitivity,
    cardinality and durability (labels may be added). The labels upp/ingest puts on the events of
    a short profile are among those listed. Credited with what it saw: the user/v1 rules only under
    user/v1, completeness only when the official file or labelled events were compared with the list."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/get_labels")
    reply = ctx.client.get_labels()
    if not reply.ok or not isinstance(reply.result, list):
        fail(ctx, "upp/get-labels-returns-definitions", "upp/get_labels answered no array", reply,
             "an array of LabelDefinitions")
        return
    items = reply.result
    problems = [model.Problem(f"/{i}{p}", p.requirement) for i, item in enumerate(items)
                for p in model.label_definition_problems(item)]
    report_problems(ctx, "upp/label-definition-field-types", problems, "upp/get_labels", reply)
    if items:  # an empty list shows no LabelDefinition to judge
        observe(ctx, "upp/get-labels-returns-definitions", "upp/label-definition-required-fields",
                "upp/label-definition-field-types")
    defs = [d for d in items if isinstance(d, dict) and isinstance(d.get("name"), str)]
    names = [d["name"] for d in defs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        fail(ctx, "upp/get-labels-returns-definitions", f"upp/get_labels lists these names more than once: "
             f"{compact(twice)}", reply, "LabelDefinitions with distinct names")
    if any("category" in d for d in defs):
        observe(ctx, "upp/label-category-standard")
    odd = sorted({str(d.get("category")) for d in defs if d.get("category") not in model.CATEGORIES})
    if odd:
        fail(ctx, "upp/label-category-standard", f"categories outside the nine standard ones: {compact(odd)}",
             reply, f"categories among {', '.join(model.CATEGORIES)}")
    if server_ontology(ctx) == ontology.USER_V1:
        observe(ctx, "upp/get-labels-complete", "upp/ontology-major-stable")  # compared with the official file
        _judge_user_v1(ctx, {d["name"]: d for d in defs}, reply)
    _judge_labels_in_use(ctx, set(names), reply)


def _judge_labels_in_use(ctx: CheckContext, names: set[str], reply: RpcReply) -> None:
    """The labels upp/ingest puts on events are among those get_labels lists (03 §3)."""
    found = _ingest_finds(ctx, PROFILE_TEXT) if names else []
    if any(isinstance(lab, str) for e in found for lab in (e.get("labels") or [])):
        observe(ctx, "upp/get-labels-complete")
    unlisted = sorted({lab for e in found for lab in (e.get("labels") or []) if isinstance(lab, str)} - names)
    if unlisted:
        fail(ctx, "upp/get-labels-complete", f"upp/ingest of {PROFILE_TEXT!r} (for a fresh user) labels events "
             f"{compact(unlisted)}, which upp/get_labels does not list", reply,
             "every label the server puts on an event among the labels upp/get_labels lists")


def _judge_user_v1(ctx: CheckContext, served_defs: dict[str, dict[str, Any]], reply: RpcReply) -> None:
    official = ontology.user_v1()
    missing = sorted(official.label_names - set(served_defs))
    if missing:
        what = (f"upp/info names {ontology.USER_V1!r}, whose official file has {len(official.labels)} labels; "
                f"upp/get_labels leaves out {len(missing)}: {compact(missing)}")
        fail(ctx, "upp/get-labels-complete", what, reply, "every label of the configured ontology")
        fail(ctx, "upp/ontology-major-stable", what, reply, "no user/v1 label removed within the major version")
    changed = []
    for label in official.labels:
        mine = served_defs.get(label.name)
        if mine is not None:
            # A member that is missing or not a string is the LabelDefinition shape's business.
            # 07 §5 names category and cardinality as what a major version fixes; a sensitivity or
            # durability of its own is a deployment's choice the text does not forbid.
            diff = {k: (v, mine.get(k)) for k, v in label.semantics().items()
                    if k in FIXED_IN_MAJOR and isinstance(mine.get(k), str) and mine.get(k) != v}
            changed += [f"{label.name}.{k} is {compact(got)} (official: {want})" for k, (want, got) in diff.items()]
    if changed:
        fail(ctx, "upp/ontology-major-stable", f"{len(changed)} differences from the official {ontology.USER_V1} file: "
             + "; ".join(changed[:8]) + (f"; and {len(changed) - 8} more" if len(changed) > 8 else ""), reply,
             "the official category and cardinality of every user/v1 label")


@check("upp/l2/get-labels-stable", spec="upp", requirements=("upp/get-labels-stable",), bindings=LIVE,
       title="upp/get_labels answers the same definitions after ingests and retrieves")
def get_labels_stable(ctx: CheckContext) -> None:
    """upp/get_labels is asked; a fresh user ingests a short profile and retrieves twice (its name, its
    hobby); upp/get_labels asked again must list the same names with the same definitions, member by
    member (the order of the list aside). The labels are those "defined in the server's configured
    ontology" (03 §3): configured, not grown by use (blind red team round 27: retrieve appended its
    keywords to the labels' examples in place). Inconclusive when the first upp/get_labels answers no
    array or an empty one (judged by upp/l2/get-labels)."""
    require_offered(ctx, "upp/get_labels")
    before = ctx.client.get_labels()
    if not before.ok or not isinstance(before.result, list):
        raise Inconclusive(f"upp/get_labels answered no array ({before.describe()}): judged by upp/l2/get-labels")
    if not before.result:
        raise Inconclusive("upp/get_labels answered no label: there is no definition whose stability could be seen "
                           "(an empty list is judged by upp/l2/get-labels)")
    if served(ctx, "upp/ingest"):
        entity = fresh_entity("labels-use")
        ctx.client.ingest(entity, PROFILE_TEXT)
        if served(ctx, "upp/retrieve"):
            for query in ("name", "What does the user love to do?"):
                ctx.client.retrieve(entity, query)
        if served(ctx, "upp/delete_events"):
            ctx.client.delete_events(entity)
    after = ctx.client.get_labels()
    if not after.ok or not isinstance(after.result, list):
        fail(ctx, "upp/get-labels-stable", f"upp/get_labels answered an array of {len(before.result)} definitions "
             f"before an ingest and two retrieves, and then {after.describe()}", after,
             "the same array of LabelDefinitions")
        return

    def by_name(items: list[Any]) -> dict[str, Any]:
        return {str(d.get("name")): d for d in items if isinstance(d, dict)}

    then, now = by_name(before.result), by_name(after.result)
    changed = [f"{n}: " + "; ".join(f"{k} {compact(then[n].get(k), 150)} → {compact(now[n].get(k), 150)}"
                                     for k in sorted(set(then[n]) | set(now[n])) if then[n].get(k) != now[n].get(k))
               for n in sorted(set(then) & set(now)) if then[n] != now[n]]
    gone, new = sorted(set(then) - set(now)), sorted(set(now) - set(then))
    problems = changed[:3] + ([f"no longer listed: {compact(gone)}"] if gone else []) \
        + ([f"newly listed: {compact(new)}"] if new else [])
    if problems:
        fail(ctx, "upp/get-labels-stable", f"upp/get_labels answered otherwise after upp/ingest of {PROFILE_TEXT!r} "
             f"and two upp/retrieve calls for a fresh user than before them ({len(changed)} definition(s) changed): "
             + " — ".join(problems), after,
             "the same LabelDefinitions before and after: the labels defined in the server's configured ontology "
             "(03 §3), which requests do not change")
