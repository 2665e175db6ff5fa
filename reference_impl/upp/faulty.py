"""The wrong UPP implementations that need more than a line: each named after its fault
(reference_impl/upp/faults.py, where the one-line ones sit beside their entries) and written apart
from the right one (service.py), as Bowtie's miniatures are.

A wrap takes the service and the method it replaces (`original`) and returns the wrong method
(reference_impl/faults.py, `install_wraps`); `after` and `before` (reference_impl/wraps.py) build the
common ones, `within`
reaches a part of the service (its JSON-RPC endpoint, its task runner, its store) instead.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta, timezone
from typing import Any

from memconform.reference_impl.upp import ranking
from memconform.reference_impl.upp.rpc import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
                                               ONTOLOGY_NOT_FOUND, PARSE_ERROR, USER_NOT_FOUND, RpcError,
                                               dumps, error_response, request_problem)
from memconform.reference_impl.wraps import Wrap, after, before, drop, each, keep, then, within  # noqa: F401 (the table uses them)


#: The names public implementations answer instead of the spec's (upp-near-miss-method-names).
NEAR_MISS = {"upp/get_events": "upp/events", "upp/delete_events": "upp/delete", "upp/get_labels": "upp/labels",
             "upp/export_events": "upp/export", "upp/import_events": "upp/import"}


# -- building wraps (the shared ones: reference_impl/wraps.py) ------------------------------------

def object_of(member: str) -> Callable[[Any], Any]:
    """An array answer put inside an object ({"events": [...]})."""
    return lambda answer: {member: answer}


# -- JSON-RPC on the wire (parts of rpc.RpcEndpoint) ---------------------------------------------

def every_response(change: Callable[[dict[str, Any]], None]) -> dict[str, Wrap]:
    """Every response object the endpoint sends, changed before it is rendered."""
    def render(endpoint: Any, original: Callable[..., str]) -> Callable[..., str]:
        def wrong(response: Any) -> str:
            for r in response if isinstance(response, list) else [response]:
                change(r)
            return original(response)
        return wrong
    return within("_endpoint", render=render)


def id_as_string(response: dict[str, Any]) -> None:
    id_ = response.get("id")
    if "result" in response and isinstance(id_, (int, float)) and not isinstance(id_, bool):
        response["id"] = str(id_)


def result_beside_error(response: dict[str, Any]) -> None:
    if "error" in response:
        response["result"] = None


def error_without_message(response: dict[str, Any]) -> None:
    if "error" in response:
        response["error"].pop("message", None)


def recoded(change: Callable[[RpcError], RpcError | None]) -> dict[str, Wrap]:
    """The operations' errors given another code on the wire: `change` returns the error sent
    instead, or None to send it as it is."""
    def dispatch(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(method: str, params: Any) -> Any:
            try:
                return original(method, params)
            except RpcError as exc:
                raise (change(exc) or exc) from None
        return wrong
    return within("_endpoint", _dispatch=dispatch)


def missing_params_as_internal(exc: RpcError) -> RpcError | None:
    if exc.code == INVALID_PARAMS and isinstance(exc.data, dict) and "missing_params" in exc.data:
        return RpcError(INTERNAL_ERROR, "Internal error")
    return None


def invalid_params_unnamed(exc: RpcError) -> RpcError | None:
    """upp-invalid-params-unnamed: every -32602 says only "Invalid params", no data."""
    return RpcError(INVALID_PARAMS, "Invalid params") if exc.code == INVALID_PARAMS else None


def unknown_method_as_invalid_request(exc: RpcError) -> RpcError | None:
    return RpcError(INVALID_REQUEST, exc.message) if exc.code == METHOD_NOT_FOUND else None


def invalid_request_as_parse_error(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda message, problem: error_response(None, PARSE_ERROR, f"Parse error: {problem}")


def notification_replied(in_batch_only: bool) -> dict[str, Wrap]:
    def answer(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(response: dict[str, Any], *, in_batch: bool) -> dict[str, Any] | None:
            if in_batch or not in_batch_only:
                return response | {"id": None}
            return original(response, in_batch=in_batch)
        return wrong
    return within("_endpoint", _answer_notification=answer)


def any_number_as_id(endpoint: Any, original: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """upp-id-out-of-range-internal: every number is an id, infinities too (1e400 parses as one), so
    the request runs and its response cannot be written (JSON has no Infinity): -32603."""
    return lambda value: original(value) or (isinstance(value, float) and not isinstance(value, bool))


def batches_unbounded() -> dict[str, Wrap]:
    """upp-batch-unbounded: no bound on a batch's length nor on its answer (as before issue 14)."""
    return within("_endpoint", _batch_refusal=lambda endpoint, original: lambda messages: None,
                  _answer_full=lambda endpoint, original: lambda spent: False)


def fails_on_large_messages(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-large-message-internal: any message over 1 MiB answers -32603 (the request never runs)."""
    def wrong(text: Any) -> str | None:
        if len(text) > (1 << 20):
            return dumps(error_response(None, INTERNAL_ERROR, "Internal error"))
        return original(text)
    return wrong


def supersedes_every_status(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-supersedes-staged: supersession marks every event of the user sharing a singular label
    (the status filter forgotten in the query), so a staged one becomes superseded too."""
    def supersede(entity_key: str, new: Any, labels: Any) -> None:
        original(entity_key, new, labels)
        triggering = service._triggering(labels)
        for row in service._store.events(entity_key, statuses=("staged",)):
            if row.seq != new.seq and triggering.intersection(row.labels):
                service._store.promote(row.seq)  # the store allows staged → superseded only by way of valid
                service._store.supersede(row.seq, new.id)
    return supersede


def ranks_all_then_filters(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-retrieve-top-then-user: retrieve ranks every user's events, keeps the top `limit`, and only
    then keeps the asking user's (a shared search index queried without the user filter)."""
    def ranked(owner: Any, query: str, limit: int) -> list[dict[str, Any]]:
        if owner is None:
            return original(owner, query, limit)
        return [e for e in original(None, query, limit) if e["entity_key"] == owner]
    return ranked


def bom_first(endpoint: Any, original: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """upp-stdio-bom: stdout opened with encoding utf-8-sig, so a byte order mark precedes the
    first response (and only it)."""
    first = [True]

    def line(text: str) -> bytes:
        data = original(text)
        if first[0]:
            first[0] = False
            return b"\xef\xbb\xbf" + data
        return data
    return line


def renders_nan(endpoint: Any, original: Callable[[Any], str]) -> Callable[[Any], str]:
    """upp-id-infinity-echoed: responses are written by Python's json with its default allow_nan, so
    an id read as infinity is echoed as `Infinity`, which is no JSON."""
    import json

    return lambda response: json.dumps(response, ensure_ascii=False, separators=(",", ":"))


def exits_on_unparsable(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-stdio-exits-on-parse-error: a line that is not JSON ends the process with exit code 1
    (json.loads' exception caught at the top of the loop as fatal), instead of -32700."""
    import json
    import sys

    def handle(text: Any) -> str | None:
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            print("fatal: cannot decode request", file=sys.stderr)
            raise SystemExit(1) from None
        return original(text)
    return handle


def split_line(endpoint: Any, original: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """A raw newline after the opening bracket: two lines."""
    return lambda text: original(text[:1] + "\n" + text[1:])


def export_pretty(endpoint: Any, original: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """upp-stdio-export-pretty: the export_events answer alone is written with indent=2 (a debug
    setting left on for the one result a human reads), so it spans several lines."""
    import json

    def line(text: str) -> bytes:
        value = json.loads(text)
        result = value.get("result") if isinstance(value, dict) else None
        if isinstance(result, dict) and "file" in result and "event_count" in result:
            text = json.dumps(value, indent=2, ensure_ascii=False)
        return original(text)
    return line


def log_line_before_labels(endpoint: Any, original: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """upp-stdio-log-on-stdout: a log line printed to stdout before get_labels' answer (print()
    where the logger was meant)."""
    import json

    def line(text: str) -> bytes:
        value = json.loads(text)
        result = value.get("result") if isinstance(value, dict) else None
        if isinstance(result, list) and result and isinstance(result[0], dict) and "cardinality" in result[0]:
            return f"[upp] get_labels: serving {len(result)} labels\n".encode() + original(text)
        return original(text)
    return line


# -- params, errors and the operations served ----------------------------------------------------

def retrieve_requires_max_results(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def take(raw: Any, method: str, required: dict[str, Any], optional: dict[str, Any] | None = None) -> Any:
        if method == "upp/retrieve":
            required = {**required, **(optional or {})}
        return original(raw, method, required, optional)
    return take


def entity_key_folded(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-entity-key-folded: every entity_key is read as a "canonical user id", NFKC-normalized and
    case-folded, so `Alice-x` and `alice-x` (or a key in NFC and in NFD) are one user."""
    import unicodedata

    def take(raw: Any, method: str, required: dict[str, Any], optional: dict[str, Any] | None = None) -> Any:
        taken = original(raw, method, required, optional)
        if isinstance(taken.get("entity_key"), str):
            taken["entity_key"] = unicodedata.normalize("NFKC", taken["entity_key"]).casefold()
        return taken
    return take


def user_not_found_when_nothing_matches(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def retrieve(raw: Any) -> Any:
        events = original(raw)
        query = ranking.words(raw["query"])
        if not any(query & ranking.words(" ".join((e["value"], *e["labels"]))) for e in events):
            raise RpcError(USER_NOT_FOUND, f"User not found: {raw['entity_key'][:200]!r}",
                           {"entity_key": raw["entity_key"]})
        return events
    return retrieve


def drops_long_queries(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def retrieve(raw: Any) -> Any:
        events = original(raw)
        return [] if len(raw["query"].split()) > 3 else events
    return retrieve


def with_superseded(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda owner: service._store.events(owner, statuses=("valid", "superseded"))


def unknown_user_as_invalid_params(service: Any, original: Callable[[str], None]) -> Callable[[str], None]:
    """An unknown entity_key refused -32602, whatever the engine would answer for it (-32001, or an
    empty result under variant upp-unknown-user-empty)."""
    def known_user(entity_key: str) -> None:
        if not service._store.user_exists(entity_key):
            raise RpcError(INVALID_PARAMS, f"Invalid params: no user {entity_key[:200]!r}",
                           {"invalid_params": ["entity_key"]})
        original(entity_key)
    return known_user


def served_as(names: dict[str, str]) -> dict[str, Wrap]:
    return after("_served", lambda served: {names.get(name, name): method for name, method in served.items()})


def unserved(method: str) -> dict[str, Wrap]:
    """One operation not served (so info does not list it either)."""
    return after("_served", lambda served: {name: m for name, m in served.items() if name != method})


# -- events ----------------------------------------------------------------------------------------

def extracted(change: Callable[[Any], Any]) -> dict[str, Wrap]:
    """Every event the extractor gave (an ExtractedEvent) changed before it is stored."""
    return after("_checked", lambda events: [change(e) for e in events])


def ids_per_user(service: Any, original: Callable[[str], str]) -> Callable[[str], str]:
    counts: dict[str, int] = {}

    def new_id(entity_key: str) -> str:
        counts[entity_key] = counts.get(entity_key, 0) + 1
        return f"evt_{counts[entity_key]}"
    return new_id


def superseded_value_rewritten(event: dict[str, Any]) -> None:
    if event["status"] == "superseded":
        event["value"] = f"[superseded] {event['value']}"


def superseded_by_empty(event: dict[str, Any]) -> None:
    if event["superseded_by"] is None:
        event["superseded_by"] = ""


def staged_when_superseding(service: Any, original: Callable[..., str]) -> Callable[..., str]:
    def new_status(entity_key: str, labels: Any, confidence: float) -> str:
        return "staged" if service._contradicts(entity_key, labels) else original(entity_key, labels, confidence)
    return new_status


# -- upp/ingest ------------------------------------------------------------------------------------

class _Discard(Exception):
    """Rolls the ingest's transaction back once its answer is made."""


def ingest_not_persisted(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def ingest(raw: Any) -> Any:
        answer: Any = None
        with service._lock:
            try:
                with service._store.transaction():
                    answer = original(raw)
                    raise _Discard
            except _Discard:
                return answer
    return ingest


# -- upp/contextualize and tasks -------------------------------------------------------------------

def ingest_first(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """contextualize ingests at once, before retrieving; its task only reports those events."""
    def ingest_later(entity_key: str, text: str) -> Callable[[], Callable[[], list[Any]]]:
        ids = [r.id for r in service._extract_and_store(entity_key, text)]
        return lambda: lambda: service._current(entity_key, ids)
    return ingest_later


def never_completes(runner: Any, original: Callable[..., None]) -> Callable[..., None]:
    return lambda task, render: None  # the job ran (its events are stored); the task stays running


def unknown_task_errors(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def get_tasks(raw: Any) -> Any:
        found = original(raw)
        known = {s["task_id"] for s in found}
        unknown = [t for t in raw["task_ids"] if t not in known]
        if unknown:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown task id {unknown[0][:100]!r}",
                           {"invalid_params": ["task_ids"]})
        return found
    return get_tasks


def tasks_forgotten(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def get_tasks(raw: Any) -> Any:
        found = original(raw)
        for status in found:
            if status["status"] in ("completed", "failed"):
                service._tasks.forget(status["task_id"])
        return found
    return get_tasks


# -- upp/info --------------------------------------------------------------------------------------

def info_needs_entity_key(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def info(raw: Any) -> Any:
        service._take(raw, "upp/info", {"entity_key": service._key})
        return original(raw)
    return info


def info_ontology_changes(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    calls = [0]

    def info(raw: Any) -> Any:
        result = original(raw)
        calls[0] += 1
        if calls[0] > 1:
            result["ontology"] = "user/v2"
        return result
    return info


def without_import_listed(info: dict[str, Any]) -> dict[str, Any]:
    info["operations"].remove("upp/import_events")  # the level was counted with it
    return info


def local_time(runner: Any, original: Callable[[Any], str]) -> Callable[[Any], str]:
    """upp-task-times-local: task times rendered in the server's local zone, a fixed +02:00 (the
    same instant, named with a non-zero offset)."""
    local = timezone(timedelta(hours=2))
    return lambda t: t.astimezone(local).isoformat(timespec="microseconds")


def naive_utc(runner: Any, original: Callable[[Any], str]) -> Callable[[Any], str]:
    """upp-task-times-naive: task times written as `datetime.utcnow().isoformat()` writes them: the UTC
    wall-clock time with no designator, which ISO-8601 reads as a local time."""
    return lambda t: t.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")


# -- upp/delete_events -----------------------------------------------------------------------------

def _hidden_of(service: Any) -> set[tuple[str, str]]:
    """The events soft-deleted on this service (its two wraps share them; both run under its lock)."""
    return vars(service).setdefault("_soft_deleted", set())


def delete_soft(service: Any, original: Callable[..., int]) -> Callable[..., int]:
    def delete(entity_key: str, ids: list[str] | None) -> int:
        hidden = _hidden_of(service)
        rows = [r for r in service._store.events(entity_key)
                if (ids is None or r.id in ids) and (entity_key, r.id) not in hidden]
        hidden.update((entity_key, r.id) for r in rows)
        return len(rows)
    return delete


def hidden_from_get_events(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def get_events(raw: Any) -> Any:
        hidden = _hidden_of(service)
        return [e for e in original(raw) if (raw["entity_key"], e["id"]) not in hidden]
    return get_events


def refuses_whole_package(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """`_store_imported` that validates every event first and refuses the package on the first bad label."""
    def store_imported(key: str, events: list[Any]) -> Any:
        for n, event in enumerate(events, 1):
            problem = service._import_problem(event)
            if problem is not None:
                raise RpcError(INVALID_PARAMS, f"Invalid params: event {n}: {problem}", {"invalid_params": ["file"]})
        return original(key, events)
    return store_imported


def wiped_users_remembered(service: Any, original: Callable[..., int]) -> Callable[..., int]:
    """`_delete` that leaves a user deleted whole in a cache of profiles (read by `crash_on_wiped`)."""
    def delete(entity_key: str, ids: list[str] | None) -> int:
        count = original(entity_key, ids)
        if ids is None:
            service.__dict__.setdefault("_wiped", set()).add(entity_key)
        return count
    return delete


def crash_on_wiped(service: Any, original: Callable[[str], None]) -> Callable[[str], None]:
    """`_known_user` that trips over the cached profile of a user deleted whole (an internal error)
    where the store says the user is gone, until the user is written again: whatever the engine answers
    for a user it does not hold (-32001, or an empty result under variant upp-unknown-user-empty)."""
    def known_user(entity_key: str) -> None:
        if entity_key in service.__dict__.get("_wiped", ()) and not service._store.user_exists(entity_key):
            raise RuntimeError(f"profile cache holds {entity_key!r} but the store has no row")
        original(entity_key)
    return known_user


def count_asked(service: Any, original: Callable[..., int]) -> Callable[..., int]:
    def delete(entity_key: str, ids: list[str] | None) -> int:
        count = original(entity_key, ids)
        return count if ids is None else len(ids)
    return delete


def counts_requested(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """upp-delete-count-counts-requested: deleted_count counts the ids as listed that named one of
    the user's events (read before the delete), so an id listed twice counts twice; unknown ids,
    ids already deleted and other users' ids still count 0."""
    def delete_events(raw: Any) -> Any:
        asked = raw.get("event_ids") if isinstance(raw, dict) else None
        key = raw.get("entity_key") if isinstance(raw, dict) else None
        if not (isinstance(asked, list) and asked and isinstance(key, str)
                and all(isinstance(i, str) for i in asked)):
            return original(raw)
        held = {r.id for r in service._store.by_ids(key, asked)}
        result = original(raw)
        return {**result, "deleted_count": sum(1 for i in asked if i in held)}
    return delete_events


def all_needs_ids(service: Any, original: Callable[..., int]) -> Callable[..., int]:
    return lambda entity_key, ids: 0 if ids is None else original(entity_key, ids)


# -- upp/export_events -----------------------------------------------------------------------------

def export_returns_events(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def export(raw: Any) -> Any:
        import json
        from pathlib import Path

        result = original(raw)
        return result | {"events": json.loads(Path(result["file"]).read_text("utf-8"))["events"]}
    return export


def no_file(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def write(*args: Any) -> Any:
        path = original(*args)
        path.unlink()
        return path
    return write


def path_from_entity_key(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def write(package: dict[str, Any], entity_key: str, now: Any) -> Any:
        import json

        path = service.export_dir / f"{entity_key}-{now:%Y%m%dT%H%M%S%fZ}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(package), encoding="utf-8")
        return path
    return write


def lexical_confinement(service: Any, original: Callable[[str], Any]) -> Callable[[str], Any]:
    """upp-import-lexical-confinement: the file must *begin* with an allowed folder, tested on the
    path as written, so `<export folder>/../elsewhere` and a symbolic link in the folder pass."""
    def read_import(file: str) -> Any:
        from pathlib import Path

        from memconform.reference_impl.upp import exports

        candidate = Path(file) if Path(file).is_absolute() else service.export_dir / file
        allowed = [str(p) for d in (service.export_dir, *service.import_dirs) for p in (d, d.resolve())]
        if not any(str(candidate).startswith(d) for d in allowed):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {file!r} is outside the import folders",
                           {"invalid_params": ["file"]})
        return exports.read_package(candidate)
    return read_import


def in_package(change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Wrap]:
    """Every event of the ExportPackage changed (or dropped when `change` returns None)."""
    def package(p: dict[str, Any]) -> dict[str, Any]:
        p["events"] = [e for e in (change(e) for e in p["events"]) if e is not None]
        return p
    return after("_package", package)


# -- upp/import_events -----------------------------------------------------------------------------

def into_package_user(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def import_events(raw: Any) -> Any:
        try:
            owner = service._read_import(raw["file"])["entity_key"]
        except (RpcError, KeyError, TypeError):
            owner = None
        return original({**raw, "entity_key": owner} if owner else raw)
    return import_events


def keeps_ids(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    from memconform.reference_impl.upp import params

    def import_event(key: str, event: dict[str, Any], created_at: str, **store: Any) -> Any:
        if params.nonempty_string(event.get("id")) and not service._store.id_taken(key, event["id"]):
            store["id"] = event["id"]
        return original(key, event, created_at, **store)
    return import_event


def keeps_superseded_by(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def import_event(key: str, event: dict[str, Any], created_at: str, **store: Any) -> Any:
        row = original(key, event, created_at, **store)
        if isinstance(event.get("superseded_by"), str):
            service._store.supersede(row.seq, event["superseded_by"])
        return row
    return import_event


def without_validity(key: str, event: dict[str, Any], created_at: str,
                     **store: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`_import_event`'s arguments with the event's valid_from / valid_until left out."""
    event = {k: v for k, v in event.items() if k not in ("valid_from", "valid_until")}
    return (key, event, created_at), store


def ignores_labels(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    from memconform.reference_impl.upp import exports

    return lambda event: exports.event_problem(event, service.ontology.names, check_labels=False)


def stores_before_refusing(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """An import refused for its ontology keeps what it stored before checking."""
    def import_events(raw: Any) -> Any:
        try:
            return original(raw)
        except RpcError as exc:
            if exc.code == ONTOLOGY_NOT_FOUND:
                service._store_imported(raw["entity_key"], service._read_import(raw["file"])["events"])
            raise
    return import_events


# -- faults only a longer sequence shows (issue 16: upp/stateful/events) ---------------------------

def supersedes_recent_only(service: Any, original: Callable[..., None]) -> Callable[..., None]:
    """Supersession looks at the user's last few stored events only (a "recent events" query with a
    LIMIT): a valid event older than the new one's three predecessors stays valid."""
    def supersede(entity_key: str, new: Any, labels: Any) -> None:
        triggering = service._triggering(labels)
        if not triggering:
            return
        by = service._superseded_by(new)
        for row in service._store.events(entity_key)[-4:]:
            if row.seq != new.seq and row.status == "valid" and triggering.intersection(row.labels):
                service._store.supersede(row.seq, by)
    return supersede


def any_label_triggers(service: Any, original: Callable[..., set[str]]) -> Callable[..., set[str]]:
    """An event with a singular label supersedes through every one of its labels, plural ones too
    (the check "is this event singular?" asked of the event, not of each label)."""
    def triggering(labels: Any) -> set[str]:
        found = original(labels)
        return set(labels) if found else found
    return triggering


def listed_in_pages(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """get_events assembles a long listing from pages of 10 and the seam is off by one: the 11th
    event of a user is left out (pages [0:10] and [11:20], …)."""
    def get_events(raw: Any) -> Any:
        events = original(raw)
        return events[:10] + events[11:] if len(events) > 10 else events
    return get_events


#: The "recent events" window of upp-get-events-recent-window.
RECENT_WINDOW = 100


def recent_window(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """upp-get-events-recent-window: get_events reads the store's newest RECENT_WINDOW events (a "recent
    events" query with a LIMIT) and then keeps the user's: a user's events stored before a hundred others
    of anyone are never listed again (exports still hold them)."""
    def get_events(raw: Any) -> Any:
        key = service._take(raw, "upp/get_events", {"entity_key": service._key})["entity_key"]
        service._known_user(key)
        recent = [r for r in service._store.events(None)[-RECENT_WINDOW:] if r.entity_key == key]
        rows = recent[::-1] if service.policy.listing_order == "newest-first" else recent
        return [service._present(r) for r in rows]
    return get_events


def without_astral(event: dict[str, Any]) -> dict[str, Any] | None:
    """The export writer of a store whose text columns hold only the Basic Multilingual Plane (as
    MySQL's utf8mb3): an event whose value has a character past U+FFFF is left out of the file."""
    return None if any(ord(c) > 0xFFFF for c in str(event.get("value", ""))) else event


def orders_by_text(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """import_events orders a package by created_at compared as text, not as instants: an offset
    (+02:00) or a fraction (.5) puts an event in the wrong place, and supersession keeps the wrong one."""
    def store_imported(key: str, events: list[Any]) -> Any:
        ordered = sorted(events, key=lambda e: str(e.get("created_at")) if isinstance(e, dict) else "")
        return original(key, [{**e, "created_at": None} if isinstance(e, dict) else e for e in ordered])
    return store_imported


def deletes_copies(service: Any, original: Callable[..., int]) -> Callable[..., int]:
    """A content-addressed store: deleting events by id also deletes every other user's event with
    the same value and labels (they shared one row of content)."""
    def delete(entity_key: str, ids: list[str] | None) -> int:
        if ids is not None:
            mine = {(r.value, tuple(r.labels)) for r in service._store.by_ids(entity_key, ids)}
            for row in service._store.events(None):
                if row.entity_key != entity_key and (row.value, tuple(row.labels)) in mine:
                    service._store.delete(row.entity_key, [row.id])
        return original(entity_key, ids)
    return delete


def delete_all_by_prefix(store: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-delete-all-by-prefix: deleting all of a user's events matches the entity_key as a prefix (as
    SQL `WHERE entity_key LIKE ? || '%'` does), so the user keyed `K-2` loses its events with `K`'s."""
    def delete(entity_key: str | None, ids: Any) -> list[Any]:
        if ids is None and entity_key is not None:
            keys = sorted({r.entity_key for r in store.events(None) if r.entity_key.startswith(entity_key)})
            return [row for key in keys for row in original(key, None)]
        return original(entity_key, ids)
    return delete


def get_events_by_prefix(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """upp-get-events-by-prefix: get_events selects the user's events by a prefix match on the
    entity_key (SQL `WHERE entity_key LIKE ? || '%'`), so K's listing also holds K-2's events."""
    def get_events(raw: Any) -> Any:
        mine = original(raw)
        key = raw["entity_key"]
        return mine + [service._present(r) for r in service._store.events(None)
                       if r.entity_key != key and r.entity_key.startswith(key)]
    return get_events


def skips_held_ignoring_case(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """import_events skips an event the user already holds with the same labels and a value equal
    ignoring case (a case-insensitive unique key meant to make re-imports idempotent), and still
    counts it imported: "Lisbon" and "LISBON" are one."""
    def import_event(key: str, event: dict[str, Any], created_at: str, **store: Any) -> Any:
        for row in service._store.events(key):
            if row.value != event["value"] and row.value.casefold() == str(event["value"]).casefold() \
                    and set(row.labels) == set(event["labels"]):
                return row
        return original(key, event, created_at, **store)
    return import_event


def loses_lone_last(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """import_events inserts in batches of 4 and never flushes a last batch of one: a package of 5,
    9, 13 … events loses its last event (by storage order), and the count still says all."""
    def store_imported(key: str, events: list[Any]) -> Any:
        from memconform.reference_impl.upp import exports

        ordered = exports.storage_order(events)
        if len(ordered) > 4 and len(ordered) % 4 == 1:
            result = original(key, [{**e, "created_at": None} if isinstance(e, dict) else e for e in ordered[:-1]])
            return {**result, "imported_count": result["imported_count"] + 1}
        return original(key, events)
    return store_imported


def ingest_supersedes_stored_only() -> dict[str, Wrap]:
    """An ingest's supersession looks only at the events stored before that ingest (the query runs
    with a bound taken when the ingest began, as a batch insert would): two facts of one singular
    label told in one text ("My name is A. Call me B.") both stay valid. Imports are untouched."""
    import threading

    batch = threading.local()

    def extract_and_store(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def run(entity_key: str, text: str) -> Any:
            with service._lock:
                batch.floor = max((r.seq for r in service._store.events(entity_key)), default=0)
            try:
                return original(entity_key, text)
            finally:
                batch.floor = None
        return run

    def supersede(service: Any, original: Callable[..., None]) -> Callable[..., None]:
        def wrong(entity_key: str, new: Any, labels: Any) -> None:
            floor = getattr(batch, "floor", None)
            if floor is None:
                return original(entity_key, new, labels)
            triggering = service._triggering(labels)
            by = service._superseded_by(new)
            for row in service._store.events(entity_key, statuses=("valid",)):
                if row.seq <= floor and triggering.intersection(row.labels):
                    service._store.supersede(row.seq, by)
            return None
        return wrong

    return {"_extract_and_store": extract_and_store, "_supersede": supersede}


def task_result_valid_only(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A finished task's result is read again through the retrieval query, which keeps valid events
    only: once a later event supersedes one of the task's events, the task's result loses it."""
    def current(entity_key: str, ids: list[str]) -> list[dict[str, Any]]:
        return [e for e in original(entity_key, ids) if e.get("status") != "superseded"]
    return current


def delete_keeps_staged(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Deleting by ids skips the staged events among them."""
    def wrong(entity_key: str, ids: list[str] | None) -> int:
        if ids is not None:
            staged = {row.id for row in service._store.by_ids(entity_key, ids) if row.status == "staged"}
            ids = [i for i in ids if i not in staged] or [f"evt_none_{len(ids)}"]
        return original(entity_key, ids)
    return wrong


# -- round 6 (envelope, tasks) ---------------------------------------------------------------------

def null_id_as_notification(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-id-null-as-notification: what is a notification is decided by `message.get("id") is None`,
    so a request with `"id": null` runs like one and gets no response (HTTP 204, no stdio line)."""
    def handle(message: Any, *, in_batch: bool = False) -> dict[str, Any] | None:
        response = original(message, in_batch=in_batch)
        if response is not None and request_problem(message, endpoint._valid_id) is None \
                and message.get("id") is None:  # valid requests only: an invalid one is refused before
            return endpoint._answer_notification(response, in_batch=in_batch)
        return response
    return handle


def single_batch_unwrapped(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-batch-single-unwrapped: a batch of one is handled as the request it holds ("nothing to
    batch"), so its response comes back bare instead of in an array of one."""
    def handle(messages: list[Any]) -> Any:
        if len(messages) == 1:
            return endpoint._handle_request(messages[0])
        return original(messages)
    return handle


def stops_at_first_error(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-batch-stops-on-error: a batch is worked through until a member's answer is an error, and the
    loop then breaks where it meant to go on: the members after it are neither run nor answered."""
    def handle(messages: list[Any]) -> Any:
        refusal = endpoint._batch_refusal(messages)
        if refusal is not None:
            return refusal
        responses: list[dict[str, Any]] = []
        for m in messages:
            response = endpoint._handle_request(m, in_batch=True)
            if response is not None:
                responses.append(response)
                if "error" in response:
                    break
        return responses or None
    return handle


def result_handed_out_once(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """upp-tasks-result-once: a completed task's result is popped when first delivered, like a queue
    message; later polls still say completed, with `result: null`."""
    delivered: set[str] = set()

    def get_tasks(raw: Any) -> Any:
        found = []
        for status in original(raw):
            if status.get("status") == "completed":
                if status["task_id"] in delivered:
                    status = {**status, "result": None}
                delivered.add(status["task_id"])
            found.append(status)
        return found
    return get_tasks


# -- found by the blind red team, round 23 (a UPP stdio server written from the spec alone) -----------

def entity_key_stripped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-entity-key-stripped: every entity_key is trimmed as it is read, so ` bob` and `bob` are one user."""
    def take(raw: Any, method: str, required: dict[str, Any], optional: dict[str, Any] | None = None) -> Any:
        taken = original(raw, method, required, optional)
        if isinstance(taken.get("entity_key"), str):
            taken["entity_key"] = taken["entity_key"].strip()
        return taken
    return take


def delete_ids_by_prefix(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-delete-ids-by-prefix: an id in event_ids names every event whose id begins with it (abbreviated
    ids), so a cut-short id deletes events it does not name."""
    def delete(entity_key: str, ids: list[str] | None) -> int:
        if ids is not None:
            stored = [r.id for r in service._store.events(entity_key)]
            ids = sorted({s for s in stored for i in ids if s.startswith(i)} | set(ids))
        return original(entity_key, ids)
    return delete


def non_finite_read_as_null(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-nan-parsed: messages are read by a JSON parser that takes NaN and Infinity (Python's default),
    each read as null: `"id": NaN` is a request with id null, not text that is no JSON."""
    import json as _json
    import math

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    def handle(text: Any) -> Any:
        try:
            readable = bytes(text).decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
            return original(_json.dumps(clean(_json.loads(readable))))
        except (ValueError, RecursionError, TypeError):
            return original(text)
    return handle


def empty_package_refused(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-import-empty-refused: a package whose events are [] is refused -32602 ("nothing to import")
    instead of answered {imported_count: 0, skipped_count: 0}."""
    def store_imported(key: str, events: list[Any]) -> Any:
        if not events:
            raise RpcError(INVALID_PARAMS, "Invalid params: the package holds no events")
        return original(key, events)
    return store_imported


def quotes_refused_value(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-refused-value-written-raw (with `raw_dumps`): an Invalid params message quotes the string
    it refused, as sent (an unpaired surrogate included)."""
    def take(raw: Any, method: str, required: Any, optional: Any = None) -> Any:
        try:
            return original(raw, method, required, optional)
        except RpcError as exc:
            named = (exc.data or {}).get("invalid_params") if isinstance(exc.data, dict) else None
            quoted = [raw[n] for n in named or () if isinstance(raw, dict) and isinstance(raw.get(n), str)]
            if exc.code != INVALID_PARAMS or not quoted:
                raise
            raise RpcError(exc.code, f"{exc.message} (got {quoted[0][:80]})", exc.data) from None
    return take


def raw_dumps(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-refused-value-written-raw: answers rendered with ensure_ascii=False and no fallback, so a
    string no UTF-8 can hold reaches the encoder, which fails on it."""
    import json as _json

    return lambda response: _json.dumps(response, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def malformed_dropped_uncounted(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-import-uncounted-skips: a schema pass drops the package's entries that are no Event (a
    number, an unknown source_type) before the import counts anything; only label skips are counted."""
    from memconform.reference_impl.upp import exports

    def store_imported(key: str, events: list[Any]) -> Any:
        return original(key, [e for e in events
                              if exports.event_problem(e, service.ontology.names, check_labels=False) is None])
    return store_imported


def imports_one_by_one(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-import-partial-on-error: each entry is imported in a transaction of its own, and an entry
    that is not an object fails the import (-32603) after the ones before it were stored."""
    def store_imported(key: str, events: list[Any]) -> Any:
        imported = skipped = 0
        for entry in events:
            if not isinstance(entry, dict):
                raise RpcError(INTERNAL_ERROR, "Internal error: 'int' object has no attribute 'get'")
            counts = original(key, [entry])
            imported, skipped = imported + counts["imported_count"], skipped + counts["skipped_count"]
        return {"imported_count": imported, "skipped_count": skipped}
    return store_imported


def drops_empty_tasks(runner: Any, original: Callable[..., None]) -> Callable[..., None]:
    """upp-task-dropped-when-empty: a task whose ingest stored no event is forgotten when it completes."""
    def complete(task: Any, render: Callable[[], list[Any]]) -> None:
        if render():
            original(task, render)
        else:
            runner.forget(task.task_id)
    return complete


def result_snapshot(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-task-result-snapshot: a task's result is the events as they were when it completed, kept
    in the task: events deleted since are still reported."""
    def ingest_later(entity_key: str, text: str) -> Callable[[], Callable[[], list[Any]]]:
        job = original(entity_key, text)

        def snapshot() -> Callable[[], list[Any]]:
            events = job()()
            return lambda: events
        return snapshot
    return ingest_later


def delete_revalidates(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-delete-revalidates-predecessor: deleting an event makes the events it superseded valid
    again (superseded → valid is no state change 02 §6 allows; this store has no trigger refusing it)."""
    def delete(entity_key: str, ids: list[str] | None) -> int:
        service._store._db.execute("DROP TRIGGER IF EXISTS events_status_transitions")
        gone_ids = {r.id for r in service._store.events(entity_key) if ids is None or r.id in ids}
        orphans = [r.seq for r in service._store.events(entity_key, statuses=("superseded",))
                   if r.superseded_by in gone_ids]
        count = original(entity_key, ids)
        with service._store.transaction():
            for seq in orphans:
                service._store._db.execute("UPDATE events SET status = 'valid', superseded_by = NULL WHERE seq = ?",
                                           (seq,))
        return count
    return delete


# -- found by the blind red team (round 27) --------------------------------------------------------

def notification_dropped(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-notification-not-executed: nobody waits for a notification's answer, so the handler returns
    before dispatching it: a valid notification is acknowledged (no response, as it should be) and never
    carried out."""
    def handle(message: Any, *, in_batch: bool = False) -> dict[str, Any] | None:
        if isinstance(message, dict) and "id" not in message and request_problem(message, endpoint._valid_id) is None:
            return None
        return original(message, in_batch=in_batch)
    return handle


def reinforce_restamps() -> dict[str, Wrap]:
    """upp-reinforce-restamps: reinforcing a staged event writes it again as an upsert would, stamped
    with the reinforcing event's created_at: the event is listed with that created_at from then on."""
    def store_event(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(entity_key: str, **kw: Any) -> Any:
            staged = {r.seq for r in service._store.events(entity_key, statuses=("staged",))}
            row = original(entity_key, **kw)
            if row.seq in staged and row.status == "valid":
                service.__dict__.setdefault("_restamped", {})[row.id] = kw["created_at"]
            return row
        return wrong

    def present(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(row: Any) -> dict[str, Any]:
            shown = original(row)
            stamp = service.__dict__.get("_restamped", {}).get(shown.get("id"))
            return shown | {"created_at": stamp} if stamp is not None else shown
        return wrong
    return {"_store_event": store_event, "_present": present}


def entity_key_cut(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-entity-key-cut: every entity_key is cut to 64 characters as it is read (a VARCHAR(64) user
    column), so two keys sharing their first 64 characters name one user."""
    def take(raw: Any, method: str, required: dict[str, Any], optional: dict[str, Any] | None = None) -> Any:
        taken = original(raw, method, required, optional)
        if isinstance(taken.get("entity_key"), str):
            taken["entity_key"] = taken["entity_key"][:64]
        return taken
    return take


def retrieve_cache_kept_by_delete() -> dict[str, Wrap]:
    """upp-retrieve-cache-stale: retrieve answers are cached per (user, query, limit) and the cache is
    cleared when an event is stored for the user, but not by upp/delete_events: a query asked before a
    delete keeps answering the deleted events."""
    def cache(service: Any) -> dict[tuple[str, str, int], Any]:
        return service.__dict__.setdefault("_retrieve_cache", {})

    def retrieved(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(entity_key: str, query: str, limit: int) -> Any:
            key = (entity_key, query, limit)
            if key not in cache(service):
                cache(service)[key] = original(entity_key, query, limit)
            return cache(service)[key]
        return wrong

    def store_event(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(entity_key: str, **kw: Any) -> Any:
            for key in [k for k in cache(service) if k[0] == entity_key]:
                del cache(service)[key]
            return original(entity_key, **kw)
        return wrong
    return {"_retrieved": retrieved, "_store_event": store_event}


def labels_grown_by_retrieve(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-labels-mutated-by-retrieve: retrieve's keyword expansion appends the query's words to the
    `examples` of the labels of the events it found, in the ontology's own definitions (not a copy), so
    upp/get_labels answers them grown after every retrieve."""
    import copy
    import re

    from memconform.reference_impl.upp.labels import Ontology

    # the server's own copy: user_v1() is shared by every service of the process
    service.ontology = Ontology(service.ontology.id, tuple(copy.deepcopy(list(service.ontology.definitions))))

    def wrong(entity_key: str, query: str, limit: int) -> Any:
        events = original(entity_key, query, limit)
        for label in {x for e in events for x in e.get("labels", ())}:
            definition = service.ontology.definition(label)
            if definition is not None:
                definition.setdefault("examples", []).extend(re.findall(r"\w+", query))
        return events
    return wrong


def delete_all_keeps_superseded(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-delete-all-keeps-superseded: delete_events without ids deletes the user's current events (valid
    and staged), keeping the superseded ones as an audit trail."""
    def delete(entity_key: str, ids: list[str] | None) -> int:
        if ids is None:
            ids = [r.id for r in service._store.events(entity_key, statuses=("valid", "staged"))]
            if not ids:
                return 0
        return original(entity_key, ids)
    return delete


def labels_any_case(service: Any, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """upp-import-labels-any-case: an imported event's labels are checked against the ontology ignoring
    case, and the event is stored with its labels as given (WHO_NAME)."""
    from memconform.reference_impl.upp import exports

    def problem(event: Any) -> str | None:
        if isinstance(event, dict) and isinstance(event.get("labels"), list):
            lowered = [x.lower() if isinstance(x, str) else x for x in event["labels"]]
            return exports.event_problem({**event, "labels": lowered}, service.ontology.names)
        return original(event)
    return problem


def raw_file_name(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """upp-export-raw-filename: the export file is named `<entity_key>-<time>.json` in the export folder,
    the key as given; a path leading out of the folder is refused, but no folder is made for a "/" in
    the key, so the write fails and the export answers -32603."""
    def write(package: dict[str, Any], entity_key: str, now: Any) -> Any:
        import json

        folder = service.export_dir.resolve()
        path = (folder / f"{entity_key}-{now:%Y%m%dT%H%M%S%fZ}.json").resolve()
        if not path.is_relative_to(folder):
            raise RpcError(INVALID_PARAMS, "Invalid params: entity_key", {"invalid_params": ["entity_key"]})
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(package), encoding="utf-8")
        return path
    return write
