"""Putting known events in front of a server, and waiting for its background tasks (docs/live-upp.md,
"Extraction is the server's business" and "contextualize").

A level-2 or level-3 check judges what a server does with events it holds (supersession,
deletion, export), so it needs specific events: a singular label twice, a plural label twice.
Extraction is the server's business, so:

* when the server serves upp/import_events and shares this machine's files, each event is written
  as a one-event ExportPackage next to the server's own exports and imported: the event arrives
  exactly as written (value, labels, confidence, source_type);
* otherwise each event's `value` is ingested as text. The values are first-person sentences
  written for the reference extractor's documented subset ("My name is …", "I live in …",
  "I love …"), so any extractor worth the name finds the wanted label; when it does not, the
  check is inconclusive, never failed.

Events are placed one call at a time, in the order given, so "the later event" means the same on
both paths and does not depend on how a server orders the events of one package.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.upp import ontology
from memconform.suite.upp.checks._common import (
    PROFILE_TEXT, USER_NOT_FOUND, client_state, compact, fold, fresh_entity, ingested, need,
    server_ontology, served,
)
from memconform.suite.upp.client import ImportFolder, RpcReply

#: Sentences in the reference extractor's subset (reference_impl/upp/extractor.py), by label.
#: Two per label so a check can place a label twice with different values.
SAYINGS: dict[str, tuple[str, str]] = {
    "who_name": ("My name is Ada Lovelace.", "My name is Grace Hopper."),
    "where_home": ("I live in Lisbon.", "I live in Montevideo."),
    "who_role": ("I work as a cartographer.", "I work as a beekeeper."),
    "what_interests_hobbies": ("I love hiking.", "I love playing chess."),
    "who_languages": ("I speak Portuguese.", "I speak Finnish."),
}
SINGULAR_LABEL, SECOND_SINGULAR_LABEL, PLURAL_LABEL = "who_name", "where_home", "what_interests_hobbies"

#: When the events the suite writes were "created": a fixed, long-past time, so messages are the
#: same on every run and a server's own created_at is always distinguishable from the package's.
PACKAGE_EPOCH = datetime(2001, 2, 3, 4, 5, 6, tzinfo=timezone.utc)

#: Polling get_tasks: the first wait, the factor, the longest single wait (03 §3 asks clients not
#: to poll more often than necessary), and a cap on the number of polls whatever the clock does.
FIRST_WAIT, BACKOFF, LONGEST_WAIT, MAX_POLLS = 0.05, 1.6, 1.0, 200
DEFAULT_TIMEOUT = 10.0
FINISHED = ("completed", "failed")


def utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def event(value: str, label: str, *, confidence: float = 1.0, source_type: str = "user_stated") -> dict[str, Any]:
    """An Event (02 §1). Confidence 1.0 by default: high in every reading of 02 §6, so a conforming
    server stores it valid whatever its staging threshold (docs/live-upp.md, Staged)."""
    return {"value": value, "labels": [label], "confidence": confidence, "source_type": source_type}


def saying(label: str, which: int = 0, **members: Any) -> dict[str, Any]:
    """An Event whose value is the `which`-th sentence of SAYINGS for `label`."""
    return event(SAYINGS[label][which], label, **members)


def package(entity_key: str, events: list[dict[str, Any]], *, ontology_id: str | None = None,
            start: datetime = PACKAGE_EPOCH) -> dict[str, Any]:
    """An ExportPackage (02 §4) holding `events` as StoredEvents of `entity_key`, created one second
    apart in list order. Members an event already has are kept (a check may set its own id)."""
    stored = []
    for i, item in enumerate(events):
        full = {"id": f"evt_mcf_{secrets.token_hex(6)}_{i}", "entity_key": entity_key, "status": "valid",
                "created_at": utc(start + timedelta(seconds=i)), "superseded_by": None}
        full.update(item)
        stored.append(full)
    return {"entity_key": entity_key, "ontology": ontology_id or ontology.USER_V1, "events": stored,
            "exported_at": utc(start + timedelta(hours=1))}


# -- where the server can read the suite's files ----------------------------------------------------

def import_folder(ctx: Any) -> ImportFolder:
    """Where to write packages for import_events, learned once per client: the folder of the
    server's own export (a folder it reads) when it shares this machine's files, else the system
    temporary folder."""
    state = client_state(ctx.client)
    if "import_folder" not in state:
        learned = _export_folder(ctx)
        state["import_folder_learned"] = learned is not None
        state["import_folder"] = ImportFolder(learned or Path(tempfile.gettempdir()))
    return state["import_folder"]


def folder_learned(ctx: Any) -> bool:
    """Whether the import folder is the server's own export folder (not the fallback)."""
    import_folder(ctx)
    return bool(client_state(ctx.client)["import_folder_learned"])


def export_root(ctx: Any) -> Path:
    """The folder the server's exports go under, learned once per client: the deepest folder
    holding the exports of two throwaway users. 03 §4 fixes no layout, so a server may give each
    user a folder of its own under one root (a blind red team's did); the folder of one export
    would then take the other users' folders for outside ones. Call only when folder_learned()."""
    state = client_state(ctx.client)
    if "export_root" not in state:
        first = import_folder(ctx).path
        second = _export_folder(ctx)
        root = Path(os.path.commonpath([first.resolve(), second.resolve()])) if second is not None else first
        state["export_root"] = root if len(root.parts) > 2 else first
    return state["export_root"]


def _export_folder(ctx: Any) -> Path | None:
    """The folder of an export made for a throwaway user, None when that does not work. A server
    may not export a user it has never seen, so the user is made to exist first, with whatever
    operation works: ingest, else contextualize (whose task is awaited)."""
    if not (ctx.client.shares_files() and served(ctx, "upp/export_events")):
        return None
    entity = fresh_entity("folder")
    makers = [lambda: None]
    if served(ctx, "upp/ingest"):
        makers.append(lambda: ctx.client.ingest(entity, PROFILE_TEXT))
    if served(ctx, "upp/contextualize"):
        makers.append(lambda: _contextualized(ctx, entity, PROFILE_TEXT))
    folder = None
    for make in makers:
        make()
        folder = _folder_of(ctx.client.export_events(entity))
        if folder is not None:
            break
    if served(ctx, "upp/delete_events"):
        ctx.client.delete_events(entity)  # leave nothing behind in the shared server
    return folder


def _folder_of(reply: RpcReply) -> Path | None:
    file = reply.result.get("file") if reply.ok and isinstance(reply.result, dict) else None
    path = export_path(file)
    return path.parent if path is not None and path.parent.is_dir() else None


def export_path(file: Any) -> Path | None:
    """The file an export answer names, absolute. 03 §4 says only "Path to the generated export
    file": a relative one is taken relative to the working folder the suite and the servers it
    starts share, where such a file is (a blind red team's server answered paths relative to its
    own, round 23); elsewhere it names nothing the suite can find."""
    if not isinstance(file, str) or not file or "\x00" in file:
        return None
    path = Path(file)
    if path.is_absolute():
        return path
    here = Path.cwd() / path
    return here if here.is_file() else None


def _contextualized(ctx: Any, entity: str, text: str) -> None:
    reply = ctx.client.contextualize(entity, text)
    task_id = reply.result.get("task_id") if reply.ok and isinstance(reply.result, dict) else None
    if isinstance(task_id, str) and served(ctx, "upp/get_tasks"):
        wait_task(ctx, task_id)


@contextlib.contextmanager
def package_file(ctx: Any, content: Any, name: str = "package", *, raw: bool = False) -> Iterator[Path]:
    """`content` written in the import folder for as long as the block runs: as JSON, or as the
    text given when `raw` (a file that is not JSON on purpose)."""
    folder = import_folder(ctx)
    file_name = f"mcf-{name}-{secrets.token_hex(6)}.json"
    if raw:
        path = folder.path / file_name
        path.write_text(str(content), encoding="utf-8")
        folder.written.append(path)
    else:
        path = folder.write(file_name, content)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
        if path in folder.written:
            folder.written.remove(path)


def imports(ctx: Any) -> bool:
    """Whether events are placed with import_events (else with ingest)."""
    return served(ctx, "upp/import_events") and ctx.client.shares_files()


#: The largest export file the suite reads (a server's export of a few test events is tiny).
MAX_EXPORT_BYTES = 50 * 1024 * 1024


def read_export_file(file: Any) -> tuple[Any, str | None]:
    """The JSON in the file export_events named, or None and why it could not be read. The
    content is data: parsed as JSON, never evaluated."""
    import json

    if not isinstance(file, str) or not file:
        return None, f"`file` is {compact(file)}, not a path"
    path = export_path(file)
    if path is None:
        return None, (f"{file!r} is a relative path that names no file in the suite's working folder "
                      f"({Path.cwd()}), so the suite cannot tell where it is on the server's machine")
    try:
        size = path.stat().st_size
        if size > MAX_EXPORT_BYTES:
            return None, f"{file!r} holds {size} bytes, more than the {MAX_EXPORT_BYTES} the suite reads"
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, f"there is no file {file!r} (the server shares this machine's files)"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{file!r} cannot be read as UTF-8 text: {exc}"
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"{file!r} is not JSON ({exc}); it begins {text[:120]!r}"


# -- reading a user's events ------------------------------------------------------------------------

def listed(ctx: Any, entity_key: str, what: str = "upp/get_events") -> list[dict[str, Any]]:
    """get_events as a precondition: the user's events ([] for -32001, an unknown user)."""
    reply = ctx.client.get_events(entity_key)
    if reply.error_code == USER_NOT_FOUND:
        return []
    result = need(reply, what)
    if not isinstance(result, list):
        raise NotApplicable(f"precondition failed: {what} answered {reply.describe()}, not an array "
                            f"(judged by upp/get-events-returns-stored-events)")
    return [e for e in result if isinstance(e, dict)]


def by_id(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in events if isinstance(e.get("id"), str)}


# -- placing ----------------------------------------------------------------------------------------

def placed_with(ctx: Any) -> str:
    """How `place_events` stores each event, for a finding's story: a vendor must know whether an
    import or an ingest made the state that was judged."""
    return "upp/import_events of a package of one event" if imports(ctx) else "upp/ingest of a sentence"


def place_events(ctx: Any, entity_key: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Store `events` for `entity_key`, one after the other, and return for each the StoredEvent it
    became, as upp/get_events read it back right after it was placed (its status may have changed
    since: read again to judge). With ingest, the stored value is the server's wording."""
    place = _import_one if imports(ctx) else _ingest_one
    return [place(ctx, entity_key, item) for item in events]


def store_events(ctx: Any, entity_key: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Store `events` like `place_events`, without reading them back (for judging get_events
    itself). For each event: what the server said it stored — the ingested event of the wanted
    label (with its id), or, when imported, the event as written (no id: found again by value)."""
    if imports(ctx):
        for item in events:
            content = package(entity_key, [item], ontology_id=server_ontology(ctx))
            with package_file(ctx, content, "place") as path:
                need(ctx.client.import_events(entity_key, str(path)), f"upp/import_events of {item['value']!r}")
        return [dict(item) for item in events]
    return [_ingested_event(ctx, entity_key, item)[1] for item in events]


def _import_one(ctx: Any, entity_key: str, item: dict[str, Any]) -> dict[str, Any]:
    before = set(by_id(listed(ctx, entity_key)))
    content = package(entity_key, [item], ontology_id=server_ontology(ctx))
    with package_file(ctx, content, "place") as path:
        reply = ctx.client.import_events(entity_key, str(path))
    result = need(reply, f"upp/import_events of one event ({item['value']!r})")
    if not isinstance(result, dict) or result.get("imported_count") != 1:
        raise NotApplicable(f"precondition failed: importing one event answered {reply.describe()} "
                            f"{compact(result)}, not imported_count 1 (judged by upp/import-persists)")
    new = [e for e in listed(ctx, entity_key)
           if e.get("id") not in before and fold(e.get("value")) == fold(item["value"])]
    if not new:
        raise NotApplicable(f"precondition failed: upp/import_events said it imported {item['value']!r} for "
                            f"{entity_key!r}, but upp/get_events lists no new event with that value "
                            f"(judged by upp/import-persists)")
    return new[0]


def _ingest_one(ctx: Any, entity_key: str, item: dict[str, Any]) -> dict[str, Any]:
    text, made = _ingested_event(ctx, entity_key, item)
    if not served(ctx, "upp/get_events"):
        return made
    stored = by_id(listed(ctx, entity_key)).get(made.get("id"))
    if stored is None:
        raise NotApplicable(f"precondition failed: upp/ingest of {text!r} returned {made.get('id')!r}, "
                            f"which upp/get_events does not list (judged by upp/ingest-persists)")
    return stored


def _ingested_event(ctx: Any, entity_key: str, item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Ingest the event's value; the text and the first event of the wanted label that came back."""
    text, label = item["value"], item["labels"][0]
    _, result = ingested(ctx, entity_key, text)
    found = [e for e in result if isinstance(e, dict) and label in (e.get("labels") or [])]
    if not found:
        raise Inconclusive(f"the server's extraction made no {label} event from {text!r} (it answered "
                           f"{compact(result, 300)}); without upp/import_events the suite cannot place one "
                           f"any other way, so there is nothing to judge")
    return text, found[0]


# -- background tasks -------------------------------------------------------------------------------

@dataclass
class TaskPoll:
    """What polling one task saw. `final` is its first finished TaskStatus (completed or failed),
    None when it did not finish within `bound` seconds or get_tasks stopped answering."""

    task_id: str
    bound: float
    final: dict[str, Any] | None = None
    statuses: list[Any] = field(default_factory=list)  # each poll's TaskStatus (None: omitted)
    replies: list[RpcReply] = field(default_factory=list)
    waited: float = 0.0

    @property
    def last(self) -> RpcReply | None:
        return self.replies[-1] if self.replies else None

    def seen(self) -> str:
        """'pending, running ×3, omitted' — the statuses in order, runs folded."""
        names = [s.get("status") if isinstance(s, dict) else "omitted" for s in self.statuses]
        runs: list[list[Any]] = []
        for n in names:
            if runs and runs[-1][0] == n:
                runs[-1][1] += 1
            else:
                runs.append([n, 1])
        return ", ".join(f"{n}" + (f" ×{k}" if k > 1 else "") for n, k in runs) or "nothing"


def client_timeout(client: Any) -> float:
    """The client's own timeout (`--timeout`), on the client or its transport; 10 s when neither says."""
    for holder in (client, getattr(client, "transport", None)):
        value = getattr(holder, "timeout", None)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
    return DEFAULT_TIMEOUT


def status_of(reply: RpcReply, task_id: str) -> dict[str, Any] | None:
    """The TaskStatus for `task_id` in a get_tasks reply (None when absent)."""
    if not reply.ok or not isinstance(reply.result, list):
        return None
    return next((s for s in reply.result if isinstance(s, dict) and s.get("task_id") == task_id), None)


def poll_task(ctx: Any, task_id: str, bound: float | None = None) -> TaskPoll:
    """Ask get_tasks about `task_id` with a growing pause until it is finished, get_tasks fails, or
    `bound` seconds (default: the client's timeout) have passed. Never waits longer than that."""
    bound = float(bound if bound is not None else client_timeout(ctx.client))
    poll = TaskPoll(task_id, bound)
    started, pause = time.monotonic(), FIRST_WAIT
    for _ in range(MAX_POLLS):
        reply = ctx.client.get_tasks([task_id])
        status = status_of(reply, task_id)
        poll.replies.append(reply)
        poll.statuses.append(status)
        poll.waited = time.monotonic() - started
        if not reply.ok:
            break
        if isinstance(status, dict) and status.get("status") in FINISHED:
            poll.final = status
            break
        if poll.waited >= bound:
            break
        time.sleep(min(pause, max(bound - poll.waited, 0.0)))
        pause = min(pause * BACKOFF, LONGEST_WAIT)
    return poll


def wait_task(ctx: Any, task_id: str) -> dict[str, Any] | None:
    """The task's finished TaskStatus, or None when it did not finish within the client's timeout."""
    return poll_task(ctx, task_id).final
