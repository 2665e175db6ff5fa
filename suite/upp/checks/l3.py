"""UPP level 3 (upp/08 §2): export_events and import_events, and the ExportPackage between them
(upp/03 §4, upp/02 §4).

The file export_events names lives on the server's machine: the suite reads it only when the
server shares this machine's files (stdio, or HTTP on a loopback address); otherwise the checks
of its content are skipped with that reason. The same holds for packages the suite writes for
import_events: they go next to the server's own exports (`_placing.import_folder`). The round
trip needs neither: the server imports the file it wrote itself.

Readings (docs/live-upp.md, import_events): imported events get new ids and created_at; events
are stored in created_at order applying supersession; a package of another ontology is refused
with -32002, a file that is not an ExportPackage with -32602, and neither imports anything.
Events with labels outside the ontology are judged by upp/bad-input/import-unknown-labels.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.upp import model
from memconform.suite.upp.isotime import instant
from memconform.suite.upp.checks._common import (
    INVALID_PARAMS, LIVE, ONTOLOGY_NOT_FOUND, USER_NOT_FOUND, compact, fail, fold, fresh_entity, ingested, need,
    observe, observe_stored_events,
    report_problems, require_offered, served, server_ontology,
)
from memconform.suite.upp.checks._placing import (
    PLURAL_LABEL, SECOND_SINGULAR_LABEL, SINGULAR_LABEL, by_id, event, export_path, export_root, folder_learned, import_folder, imports, listed,
    package, package_file, place_events, read_export_file, saying,
)
from memconform.suite.upp.checks.l2 import STORED_EVENT_RULES
from memconform.suite.upp.client import RpcReply

NOT_SHARED = ("the server does not share this machine's files (it is neither a stdio child nor on a loopback "
              "address), so the suite can neither read the file upp/export_events writes nor write one "
              "upp/import_events can read")


def _need_files(ctx: CheckContext) -> None:
    if not ctx.client.shares_files():
        raise NotApplicable(NOT_SHARED)


def _brief(e: dict[str, Any] | None) -> str:
    if e is None:
        return "(not stored)"
    return compact({k: e.get(k) for k in ("id", "value", "labels", "status", "superseded_by")}, 300)


def _profile(ctx: CheckContext, entity: str, *, staged: bool = False) -> dict[str, dict[str, Any]]:
    """Three events, one of them superseded: two names, then a hobby (agent_observed, 0.85); with
    `staged`, a fourth held staged (`_add_staged`). Returns every event the user holds, by id: those
    listed now and those read back when placed (a listing that leaves some out is judged by
    upp/l2/get-events, not by the export checks)."""
    placed = place_events(ctx, entity, [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1),
                                        dict(saying(PLURAL_LABEL, 0, confidence=0.85, source_type="agent_observed"),
                                             **WINDOW)])
    if staged:
        _add_staged(ctx, entity)
    return {**by_id(placed), **by_id(listed(ctx, entity))}


#: The staged event of an exported profile: a language (plural: it supersedes nothing either way).
STAGED = event("I speak Finnish.", "who_languages", confidence=0.05) | {"status": "staged"}


def _add_staged(ctx: CheckContext, entity: str) -> None:
    """A staged event for the export to carry (03 §4 "Includes events of all statuses (`valid`, `staged`,
    `superseded`)"; found by the blind red team, round 11: an export leaving staged events out went
    unseen, as no exported user held one). Imported with confidence 0.05 and status staged, so a server
    deriving the status from the confidence and one keeping the package's both store it staged. Only
    with upp/import_events and shared files; otherwise, or when the server skips it or stores it
    otherwise, noted: the export is then judged without a staged event."""
    if not imports(ctx):
        ctx.note("no staged event in the exported profile: the suite places one only with upp/import_events on a "
                 "server sharing this machine's files, so an export leaving staged events out is not judged")
        return
    content = package(fresh_entity("pkg-source"), [STAGED], ontology_id=server_ontology(ctx))
    with package_file(ctx, content, "staged") as path:
        reply = ctx.client.import_events(entity, str(path))
    held = [e for e in listed(ctx, entity) if fold(e.get("value")) == fold(STAGED["value"])]
    if not held or held[0].get("status") != "staged":
        ctx.note(f"the staged event imported for {entity!r} ({reply.describe()}) is listed as "
                 f"{_brief(held[0] if held else None)}: the export is judged without a staged event")


#: A validity window (02 §1) on the imported hobby: where the store keeps it (get_events shows it),
#: the export must too (an import may also assign new timestamps: then there is nothing to keep).
#: Placed with ingest, the window is not sent.
WINDOW = {"valid_from": "2026-03-01T00:00:00Z", "valid_until": "2027-03-01T00:00:00Z"}


def _window(e: dict[str, Any]) -> tuple[Any, Any]:
    """valid_from and valid_until as instants where they parse (a server may write the same instant
    another way in its export), else as given; absent and null alike (02 §2: "string | null", not
    required)."""
    start, end = (instant(e.get(name)) or e.get(name) for name in ("valid_from", "valid_until"))
    return start, end


def _essence(e: dict[str, Any]) -> tuple[Any, ...]:
    """What a round trip keeps (upp/import-persists): value, labels, confidence, source_type."""
    labels = e.get("labels")
    confidence = e.get("confidence")
    return (fold(e.get("value")), tuple(sorted(map(str, labels))) if isinstance(labels, list) else labels,
            round(confidence, 9) if isinstance(confidence, (int, float)) else confidence, e.get("source_type"))


def _comparable(e: dict[str, Any]) -> bool:
    """Whether a stored event's members have their StoredEvent types (a value of the wrong type is
    the StoredEvent shape's business, not a change made by the import)."""
    return (isinstance(e.get("value"), str) and isinstance(e.get("labels"), list)
            and isinstance(e.get("confidence"), (int, float)) and not isinstance(e.get("confidence"), bool)
            and isinstance(e.get("source_type"), str))


def _import(ctx: CheckContext, entity: str, content: Any, name: str, *, raw: bool = False) -> RpcReply:
    with package_file(ctx, content, name, raw=raw) as path:
        return ctx.client.import_events(entity, str(path))


#: UPP's own codes in the implementation range (05 §4), each with a meaning of its own: no way to say
#: "this file is not an ExportPackage".
UPP_CODES = (-32001, -32002, -32003, -32004)


def file_refused(reply: RpcReply) -> bool:
    """An error that refuses the named file as the client's mistake: -32602, or an implementation
    code of -32000..-32099 other than UPP's four (05 §4; upp/import-bad-file)."""
    code = reply.error_code
    return code == INVALID_PARAMS or (code is not None and -32099 <= code <= -32000 and code not in UPP_CODES)


def _readable(ctx: CheckContext, reply: RpcReply) -> None:
    """Skip when a well-formed package was refused as a bad file and the suite wrote it to the
    fallback folder: the server may only read its own folders (06 §7), which the suite could not
    learn (docs/live-upp.md, import_events)."""
    if file_refused(reply) and not folder_learned(ctx):
        raise NotApplicable(f"the server refused a package the suite wrote to {str(import_folder(ctx).path)!r} "
                            f"({reply.describe()}): the suite could not learn the server's export folder, so it "
                            f"cannot write where the server reads")


def _nothing_stored(ctx: CheckContext, rid: str, entity: str, why: str, reply: RpcReply) -> None:
    """After a refused import, the destination user holds nothing."""
    stored = listed(ctx, entity) if served(ctx, "upp/get_events") else []
    if stored:
        fail(ctx, rid, f"{why}; yet upp/get_events for {entity!r} lists {len(stored)} event(s) afterwards: "
             f"{_brief(stored[0])}", reply, "a refused import stores nothing")


# =============================================================================================
# upp/export_events
# =============================================================================================

@check("upp/l3/export", spec="upp", requirements=("upp/export-result-shape", "upp/export-all-events"), bindings=LIVE,
       title="upp/export_events answers {file, event_count, exported_at}, counting every event of the user")
def export(ctx: CheckContext) -> None:
    """A fresh user holds two names (one superseded), a hobby and, placed by import, a staged language;
    export_events answers a path, an integer event_count equal to the number of events get_events
    lists, and an ISO-8601 exported_at — and not the events themselves. The count is judged only when
    one is answered."""
    ctx.credit_only_observed()
    for op in ("upp/export_events", "upp/get_events"):
        require_offered(ctx, op)
    entity = fresh_entity("export")
    held = list(_profile(ctx, entity, staged=True).values())
    reply = ctx.client.export_events(entity)
    if not reply.ok:
        fail(ctx, "upp/export-result-shape", f"upp/export_events for {entity!r}, which holds {len(held)} events, "
             f"answered no result", reply, "{file, event_count, exported_at}")
        ctx.note("upp/export_events answered no result, so no event_count was read")
        return
    report_problems(ctx, "upp/export-result-shape", model.export_result_problems(reply.result), "upp/export_events",
                    reply)
    observe(ctx, "upp/export-result-shape")
    if isinstance(reply.result, dict) and "events" in reply.result:
        fail(ctx, "upp/export-result-shape", "the result carries the events themselves (an `events` member)", reply,
             "the path to the file and its metadata only — 03 §4: \"the path to the generated file, not the events "
             "themselves\"")
    count = reply.result.get("event_count") if isinstance(reply.result, dict) else None
    if isinstance(count, int):
        observe(ctx, "upp/export-all-events")
    if isinstance(count, int) and count != len(held):
        fail(ctx, "upp/export-all-events", f"event_count is {count}, but {entity!r} holds {len(held)} events "
             f"(statuses {compact(sorted(str(e.get('status')) for e in held))})", reply,
             "event_count = every event of the user, of every status")


@check("upp/l3/export-file", spec="upp",
       requirements=("upp/export-writes-package", "upp/export-package-fields", "upp/export-all-events",
                     "upp/superseded-by-existing", *STORED_EVENT_RULES),
       bindings=LIVE, title="the file upp/export_events writes is an ExportPackage with every event of the user")
def export_file(ctx: CheckContext) -> None:
    """The export of a user holding two names (one superseded), a hobby and, placed by import, a staged
    language is read from the file the server names: a .json file holding an ExportPackage whose entity_key is the user, whose
    ontology is the server's, and whose events are exactly the user's events (every status),
    event_count of them, every superseded_by naming an event of the file. Skipped when the server
    does not share this machine's files. Credited with what the file held: the StoredEvent rules
    for the members its events carry, the pointer rule only when an event is superseded."""
    ctx.credit_only_observed()
    for op in ("upp/export_events", "upp/get_events"):
        require_offered(ctx, op)
    _need_files(ctx)
    entity = fresh_entity("export-file")
    held = _profile(ctx, entity, staged=True)
    reply = ctx.client.export_events(entity)
    result = need(reply, f"upp/export_events for {entity!r}")
    file = result.get("file") if isinstance(result, dict) else None
    content, why = read_export_file(file)
    if why is not None:
        fail(ctx, "upp/export-writes-package", f"the export file cannot be read: {why}", reply,
             "a .json file holding an ExportPackage at the path `file` names")
        return
    if not file.endswith(".json"):
        fail(ctx, "upp/export-writes-package", f"the export file {file!r} is not a .json file", reply,
             "a .json file")
    report_problems(ctx, "upp/export-package-fields", model.export_package_problems(content), f"the file {file}", reply)
    observe(ctx, "upp/export-writes-package", "upp/export-package-fields")
    if not isinstance(content, dict):
        return
    wrong = {k: (content.get(k), want) for k, want in (("entity_key", entity), ("ontology", server_ontology(ctx)))
             if want is not None and content.get(k) != want}
    if wrong:
        fail(ctx, "upp/export-writes-package", f"in {file!r}: " + "; ".join(
            f"{k} is {compact(got)}, not {want!r}" for k, (got, want) in wrong.items()), reply,
            "entity_key = the exported user, ontology = the server's (upp/info)")
    events = content.get("events")
    if isinstance(events, list):
        key = content.get("entity_key") if isinstance(content.get("entity_key"), str) else None
        observe_stored_events(ctx, events, entity_key=key)
        observe(ctx, "upp/export-all-events")  # compared with the events the user holds
        if any(isinstance(e, dict) and e.get("status") == "superseded" and isinstance(e.get("superseded_by"), str)
               for e in events):
            observe(ctx, "upp/superseded-by-existing")
        _judge_exported_events(ctx, file, [e for e in events if isinstance(e, dict)], held, result, reply)
        judge_pointers(ctx, [e for e in events if isinstance(e, dict)], f"the export file {file!r}", reply)
    _awkward_user_export(ctx)


def _awkward_user_export(ctx: CheckContext) -> None:
    """Users keyed as no safe file name is: with a dot and an e-mail address, and with a "/" ("team/a"
    style). The package names its user as the user is keyed (found by the blind red team: an entity_key
    written in its file-name-safe form); the file's own name is the server's to choose. A server that
    refuses such a key when it is written is noted, not judged; but once the user holds events, the
    export is owed like any other user's: an error for it fails (blind red team round 27: a file name
    made of the entity_key as given, so a "/" in the key answered -32603). Keys that climb out of the
    export folder ("../") are upp/l3/export-confined-paths' business, not these."""
    for entity in (f"{fresh_entity('export-file')}.maría@example.com", f"{fresh_entity('export-team')}/a"):
        try:
            place_events(ctx, entity, [saying(PLURAL_LABEL, 0)])
        except NotApplicable as exc:
            ctx.note(f"a user keyed {entity!r} could not be given an event ({exc}); its export was not judged")
            continue
        reply = ctx.client.export_events(entity)
        result = reply.result if reply.ok and isinstance(reply.result, dict) else {}
        if not reply.ok:
            fail(ctx, "upp/export-writes-package", f"upp/export_events for {entity!r}, a user holding an event "
                 f"(placed just before), answered no result", reply,
                 "the user's ExportPackage written and its path answered: an entity_key is an opaque string (01 §7), "
                 "so a key holding \"/\", \".\" or \"@\" names a user like any other; the file's name is the "
                 "server's to choose")
            continue
        content, why = read_export_file(result.get("file"))
        if why is not None or not isinstance(content, dict):
            ctx.note(f"the export of {entity!r} could not be read ({why or reply.describe()}); not judged")
            continue
        if content.get("entity_key") != entity:
            fail(ctx, "upp/export-writes-package", f"the export of the user {entity!r} names entity_key "
                 f"{compact(content.get('entity_key'))} in its file {result.get('file')!r}", reply,
                 "entity_key = the exported user, as keyed (the file's name may differ)")
        if served(ctx, "upp/delete_events"):
            ctx.client.delete_events(entity)


def judge_pointers(ctx: CheckContext, events: list[dict[str, Any]], where: str, reply: RpcReply) -> None:
    """Every superseded_by among `events` (all the events of one user) names one of them: an export
    holds every event of the user, so a pointer to anything else dangles (a successor deleted since
    clears the pointer in a conforming server; the checks delete nothing here)."""
    ids = set(by_id(events))
    # Only a superseded event's pointer means anything (one on another event is
    # upp/superseded-by-consistent's business, judged with the StoredEvent shape).
    dangling = [e for e in events if e.get("status") == "superseded" and isinstance(e.get("superseded_by"), str)
                and e["superseded_by"] not in ids]
    if dangling:
        fail(ctx, "upp/superseded-by-existing", f"in {where}, {len(dangling)} superseded_by pointer(s) dangle: they "
             f"name no event among the user's {len(events)}: " + "; ".join(_brief(e) for e in dangling[:4]), reply,
             "every superseded_by naming an event of the same user (after an import, one of the new ids)")


def _judge_exported_events(ctx: CheckContext, file: str, events: list[dict[str, Any]],
                           held: dict[str, dict[str, Any]], result: Any, reply: RpcReply) -> None:
    written = by_id(events)
    missing = [held[i] for i in held if i not in written]
    extra = [written[i] for i in written if i not in held]
    count = result.get("event_count") if isinstance(result, dict) else None
    problems = []
    if missing:
        problems.append(f"{len(missing)} of the user's events are not in it: "
                        + "; ".join(_brief(e) for e in missing[:4]))
    if extra:
        problems.append(f"{len(extra)} event(s) in it are no events of the user: "
                        + "; ".join(_brief(e) for e in extra[:4]))
    if isinstance(count, int) and count != len(events):
        problems.append(f"it holds {len(events)} events but the reply's event_count is {count}")
    # the events themselves, not only their ids: what a round trip keeps (value, labels, confidence,
    # source_type; immutable, 02 §6) is what the user holds (found by the blind red team: an export
    # could rewrite members unseen)
    # and the validity window the store shows (found by the blind red team: an export dropping it)
    changed = [(held[i], written[i]) for i in held if i in written and _comparable(held[i])
               and _comparable(written[i]) and (_essence(held[i]) != _essence(written[i])
                                                or _window(held[i]) != _window(written[i]))]
    if changed:
        def kept(e: dict[str, Any]) -> str:
            return compact({k: e.get(k) for k in ("id", "value", "labels", "confidence", "source_type", "valid_from",
                                                  "valid_until") if k in e}, 300)

        problems.append(f"{len(changed)} event(s) in it differ from what upp/get_events shows: " + "; ".join(
            f"{kept(a)} written as {kept(b)}" for a, b in changed[:3]))
    if problems:
        fail(ctx, "upp/export-all-events", f"the export file {file!r}: " + " — ".join(problems), reply,
             f"exactly the {len(held)} events of the user, of every status "
             f"({compact(sorted(str(e.get('status')) for e in held.values()))}), event_count of them")


@check("upp/l3/export-unknown-user", spec="upp", requirements=("upp/export-unknown-user",), bindings=LIVE,
       title="upp/export_events for a user never written answers an empty export or -32001")
def export_unknown_user(ctx: CheckContext) -> None:
    """An entity_key nobody wrote: an export of zero events and -32001 User Not Found both conform."""
    require_offered(ctx, "upp/export_events")
    entity = fresh_entity("nobody")
    reply = ctx.client.export_events(entity)
    count = reply.result.get("event_count") if reply.ok and isinstance(reply.result, dict) else None
    if not (reply.error_code == USER_NOT_FOUND or count == 0):
        fail(ctx, "upp/export-unknown-user", f"upp/export_events for {entity!r}, an entity_key never written", reply,
             "an export with event_count 0, or the error -32001 User Not Found")


# =============================================================================================
# upp/import_events
# =============================================================================================

@check("upp/l3/import", spec="upp",
       requirements=("upp/import-result-shape", "upp/import-persists", "upp/import-new-ids"), bindings=LIVE,
       title="upp/import_events stores a package's events for the requested user, with new ids and created_at")
def import_events(ctx: CheckContext) -> None:
    """A package of another (never written) entity_key holding a name (user_stated, 0.9), a hobby
    (agent_observed, 0.85) and a second hobby (inferred, 0.0), created in 2001, is imported for a
    fresh user: {imported_count: 3, skipped_count: 0}; get_events for the user lists each with the
    same value, labels, confidence
    and source_type, under ids not in the package and created_at not the package's; the package's
    entity_key holds nothing. The result's shape and the new ids are judged only on an import
    that was taken (the ids only on an event found again)."""
    ctx.credit_only_observed()
    for op in ("upp/import_events", "upp/get_events"):
        require_offered(ctx, op)
    _need_files(ctx)
    source, entity = fresh_entity("pkg-source"), fresh_entity("import")
    # the third at confidence 0.0, the low end of 02 §1's range: persisted (staged), not skipped (found
    # by the blind red team: an import that dropped it and counted it skipped)
    content = package(source, [saying(SINGULAR_LABEL), saying(PLURAL_LABEL, confidence=0.85,
                                                                  source_type="agent_observed"),
                               saying(PLURAL_LABEL, 1, confidence=0.0, source_type="inferred")],
                      ontology_id=server_ontology(ctx))
    n = len(content["events"])
    reply = _import(ctx, entity, content, "import")
    _readable(ctx, reply)
    if reply.error_code == ONTOLOGY_NOT_FOUND:
        raise NotApplicable(f"the server refuses a package of the ontology its upp/info reports "
                            f"({content['ontology']!r}) with -32002: upp/info and upp/import_events disagree about "
                            f"the server's ontology (upp/info's value is judged by upp/info-ontology)")
    if not reply.ok:
        fail(ctx, "upp/import-persists", f"importing a well-formed package of {n} {content['ontology']} events for "
             f"{entity!r} was refused", reply, f"{{imported_count: {n}, skipped_count: 0}}")
        ctx.note("the import was refused, so no result or stored event could be read")
        return
    report_problems(ctx, "upp/import-result-shape", model.import_result_problems(reply.result),
                    "upp/import_events", reply)
    observe(ctx, "upp/import-result-shape", "upp/import-persists")  # the events are looked for below
    counts = _counts(reply)
    if counts is not None and counts != (n, 0):
        fail(ctx, "upp/import-persists", f"a package of {n} valid events (one at confidence 0.0) was answered "
             f"{compact(reply.result)}", reply, f"imported_count {n}, skipped_count 0")
    stored = listed(ctx, entity)
    _judge_imported(ctx, content["events"], stored, entity, reply)
    elsewhere = listed(ctx, source)
    if elsewhere:
        fail(ctx, "upp/import-persists", f"the events were stored for the package's entity_key {source!r} (it now "
             f"holds {len(elsewhere)}), not only for the requested {entity!r}", reply,
             "the events persisted for the entity_key of the request")
    # a package of no events is a package too (an export of a user whose events were all deleted):
    # answered with its counts, 0 and 0 (round 23's server refused it)
    empty = package(fresh_entity("pkg-empty"), [], ontology_id=server_ontology(ctx))
    none = _import(ctx, fresh_entity("import-empty"), empty, "empty")
    if _counts(none) != (0, 0):
        fail(ctx, "upp/import-result-shape", "a well-formed package whose events are [] was answered "
             f"{none.describe()}", none, "{imported_count: 0, skipped_count: 0}")


#: upp/l3/import-accounting's packages: (what they hold, their entries). The entries that are no
#: Event (a number, an unknown source_type) may be skipped, or the file refused whole as no
#: ExportPackage; the U+0000 inside a value is a JSON string like any other, which some stores
#: cannot hold. Each package begins with a good event, so a failure half way shows.
def _accounting_packages(ontology_id: str | None) -> list[tuple[str, dict[str, Any]]]:
    odd = package(fresh_entity("pkg-odd"), [saying(SINGULAR_LABEL), saying(PLURAL_LABEL, source_type="mcf_guess"),
                                            saying(SECOND_SINGULAR_LABEL)], ontology_id=ontology_id)
    odd["events"].insert(1, 42)
    nul = package(fresh_entity("pkg-nul"), [saying(SINGULAR_LABEL, 1),
                                            event("I love ka\u0000rate.", PLURAL_LABEL)], ontology_id=ontology_id)
    return [("a good event, the number 42, an event whose source_type is 'mcf_guess', and a good event", odd),
            ("a good event and one whose value holds U+0000", nul)]


@check("upp/l3/import-accounting", spec="upp", requirements=("upp/import-counts",), bindings=LIVE,
       title="import_events counts every entry of a package once, and an import answered with an error stores none")
def import_accounting(ctx: CheckContext) -> None:
    """Two packages, each imported for a fresh user: [a good who_name event, the number 42, a hobby
    whose source_type is no source_type, a good where_home event], and [a good who_name event, a
    hobby whose value holds U+0000]. Taken, the counts must add up to the package's entries and
    imported_count must be the number of the package's events get_events lists for the user;
    refused, the user must hold none of them. Which entries are skipped, and the refusal's code,
    are other rules' (upp/import-bad-file, upp/l3/import)."""
    ctx.credit_only_observed()
    for op in ("upp/import_events", "upp/get_events"):
        require_offered(ctx, op)
    _need_files(ctx)
    for what, content in _accounting_packages(server_ontology(ctx)):
        entity = fresh_entity("import-count")
        reply = _import(ctx, entity, content, "accounting")
        _readable(ctx, reply)
        if reply.error_code == ONTOLOGY_NOT_FOUND:
            raise NotApplicable(f"the server refuses a package of the ontology its upp/info reports "
                                f"({content['ontology']!r}) with -32002 (judged by upp/info-ontology)")
        values = {fold(e["value"]) for e in content["events"] if isinstance(e, dict)}
        stored = [e for e in listed(ctx, entity) if fold(e.get("value")) in values]
        entries = len(content["events"])
        if not reply.ok:
            observe(ctx, "upp/import-counts")
            if stored:
                fail(ctx, "upp/import-counts", f"importing a package of {what} was answered with an error, yet "
                     f"upp/get_events lists {len(stored)} of its events for {entity!r}: "
                     f"{compact([e.get('value') for e in stored], 300)}", reply,
                     "an import answered with an error stores none of the package's events (or, taken, the stored "
                     "ones counted in imported_count)")
            continue
        counts = _counts(reply)
        if counts is None:
            continue  # the result's shape is upp/l3/import's
        observe(ctx, "upp/import-counts")
        imported, skipped = counts
        if imported + skipped != entries or imported != len(stored):
            fail(ctx, "upp/import-counts", f"importing a package of {entries} entries ({what}) was answered "
                 f"{compact(reply.result)}, and upp/get_events lists {len(stored)} of them for {entity!r}: "
                 f"{compact([e.get('value') for e in stored], 300)}", reply,
                 f"imported_count = the entries stored ({len(stored)}), and imported_count + skipped_count = "
                 f"{entries}: each entry imported or skipped, counted once")


def _counts(reply: RpcReply) -> tuple[int, int] | None:
    """(imported_count, skipped_count) when both are integers (else the shape is judged alone)."""
    result = reply.result if reply.ok and isinstance(reply.result, dict) else {}
    counts = (result.get("imported_count"), result.get("skipped_count"))
    return counts if all(isinstance(c, int) and not isinstance(c, bool) for c in counts) else None


def _judge_imported(ctx: CheckContext, sent: list[dict[str, Any]], stored: list[dict[str, Any]], entity: str,
                    reply: RpcReply) -> None:
    for original in sent:
        twins = [e for e in stored if fold(e.get("value")) == fold(original["value"])]
        if not twins:
            fail(ctx, "upp/import-persists", f"the imported event {original['value']!r} is not among the events "
                 f"upp/get_events lists for {entity!r}: {compact([e.get('value') for e in stored])}", reply,
                 "every imported event stored for the user")
            continue
        twin = twins[0]
        observe(ctx, "upp/import-new-ids")
        if _comparable(twin) and _essence(twin) != _essence(original):
            fail(ctx, "upp/import-persists", f"the event imported as {compact(_essence(original))} "
                 f"(value, labels, confidence, source_type) is stored as {compact(_essence(twin))}", reply,
                 "the package's value, labels, confidence and source_type kept")
        if twin.get("id") in {e["id"] for e in sent}:
            fail(ctx, "upp/import-new-ids", f"the event {original['value']!r} kept the package's id {twin.get('id')!r}",
                 reply, "a new id assigned by the importing server")
        if twin.get("created_at") == original["created_at"]:
            fail(ctx, "upp/import-new-ids", f"the event {original['value']!r} kept the package's created_at "
                 f"{original['created_at']!r}", reply, "a new created_at assigned by the importing server")


@check("upp/l3/import-supersession", spec="upp", requirements=("upp/import-supersession",), bindings=LIVE,
       title="importing applies supersession: of two events of a singular label only the later stays valid")
def import_supersession(ctx: CheckContext) -> None:
    """One package holds two who_name events (singular, created a second apart, in that order).
    After importing it for a fresh user, the earlier is superseded and at most one who_name event
    is valid. (Whether the later one is valid, and what superseded_by names, is judged by the
    supersession checks of level 2.)"""
    for op in ("upp/import_events", "upp/get_events"):
        require_offered(ctx, op)
    _need_files(ctx)
    entity = fresh_entity("import-supersede")
    content = package(fresh_entity("pkg-source"), [saying(SINGULAR_LABEL, 0), saying(SINGULAR_LABEL, 1)],
                      ontology_id=server_ontology(ctx))
    reply = _import(ctx, entity, content, "supersede")
    _readable(ctx, reply)
    need(reply, "upp/import_events of a package of 2 events")
    stored = listed(ctx, entity)
    earlier = next((e for e in stored if fold(e.get("value")) == fold(content["events"][0]["value"])), None)
    if earlier is None:
        raise NotApplicable(f"precondition failed: the earlier imported name is not listed for {entity!r} "
                            f"(judged by upp/l3/import and upp/l2/get-events)")
    valid = [e for e in stored if e.get("status") == "valid" and SINGULAR_LABEL in (e.get("labels") or [])]
    if earlier.get("status") != "superseded" or len(valid) > 1:
        first, second = content["events"]
        fail(ctx, "upp/import-supersession", f"imported {SINGULAR_LABEL} (singular) {first['value']!r} (created "
             f"{first['created_at']}) then {second['value']!r} (created {second['created_at']}) in one package; "
             f"afterwards the earlier is {_brief(earlier)} and {len(valid)} {SINGULAR_LABEL} event(s) are valid: "
             f"{'; '.join(_brief(e) for e in valid)}", reply,
             "the earlier superseded and at most one valid: supersession applies as during normal storage")


@check("upp/l3/import-ontology-mismatch", spec="upp", requirements=("upp/import-ontology-mismatch",), bindings=LIVE,
       title="a package of another ontology is refused, importing nothing, or imported by the label rule")
def import_ontology_mismatch(ctx: CheckContext) -> None:
    """A package whose `ontology` is `mcf-other/v9`, holding an event labelled who_name (a label of
    the server's ontology) and one labelled `mcf_other_label` (in none), is imported for a fresh
    user. Two readings conform (docs/catalogue-upp.md): a refusal (-32002 Ontology Not Found,
    -32602, or an implementation code of -32000..-32099) after which the user holds nothing; or an
    import under 03 §4's label rule: imported_count 1, skipped_count 1, and only the who_name
    event stored, or (a label being its ontology's) imported_count 0, skipped_count 2, nothing
    stored. A success that counts otherwise, or -32603, fails."""
    require_offered(ctx, "upp/import_events")
    _need_files(ctx)
    entity = fresh_entity("import-ontology")
    other = "mcf-other/v9"
    foreign = saying(SINGULAR_LABEL)
    alien = {**saying(PLURAL_LABEL), "labels": ["mcf_other_label"]}
    content = package(fresh_entity("pkg-source"), [foreign, alien], ontology_id=other)
    reply = _import(ctx, entity, content, "ontology")
    _readable(ctx, reply)
    if reply.ok:
        stored = listed(ctx, entity) if served(ctx, "upp/get_events") else None
        counts = _counts(reply)
        if counts is None and stored is None:
            raise NotApplicable(f"the package of ontology {other!r} was imported ({reply.describe()}) with no usable "
                                "counts and no upp/get_events to list what was stored: which events were imported "
                                "was not seen (the result's shape is judged by upp/l3/import)")
        # the label rule read two ways: a label name the server's ontology defines (who_name imported), or
        # a label as its ontology's, so none of the package's is the server's (both skipped, round 23)
        readings = {"by label name": ((1, 1), [fold(foreign["value"])]), "every event skipped": ((0, 2), [])}
        fits = [name for name, (want_counts, want_values) in readings.items()
                if (counts is None or counts == want_counts)
                and (stored is None or sorted(fold(e.get("value")) for e in stored) == want_values)]
        if not fits:
            wrong = [f"answered {compact(reply.result)}"] if counts is not None else []
            if stored is not None:
                wrong.append(f"upp/get_events then lists {compact([_brief(e) for e in stored], 600)}")
            fail(ctx, "upp/import-ontology-mismatch", f"a package whose ontology is {other!r} (the server's is "
                 f"{server_ontology(ctx)!r}), holding a {SINGULAR_LABEL} event and one labelled 'mcf_other_label', "
                 f"was imported for {entity!r}: " + "; ".join(wrong), reply,
                 "a refusal (-32002, -32602 or an implementation code) storing nothing, or an import by the label "
                 f"rule: imported_count 1, skipped_count 1, only {foreign['value']!r} stored (the label names the "
                 "server's ontology defines), or imported_count 0, skipped_count 2, nothing stored (a label is its "
                 "ontology's)")
        else:
            ctx.note(f"the package of ontology {other!r} was imported by the label rule (03 §4; {fits[0]}), not "
                     "refused: whether a refusal would leave nothing stored was not seen")
        return
    if not (reply.error_code == ONTOLOGY_NOT_FOUND or file_refused(reply)):
        fail(ctx, "upp/import-ontology-mismatch", f"a package whose ontology is {other!r} (the server's is "
             f"{server_ontology(ctx)!r}) was refused for {entity!r}, but not as a bad request", reply,
             "-32002 Ontology Not Found, -32602 or an implementation code of -32000..-32099 (the package is the "
             "client's, so not -32603), or an import by the label rule")
    _nothing_stored(ctx, "upp/import-ontology-mismatch", entity, f"a package of ontology {other!r} was refused", reply)


@check("upp/l3/import-bad-file", spec="upp", requirements=("upp/import-bad-file",), bindings=LIVE,
       title="a file that cannot be read or is not an ExportPackage is refused as a bad request")
def import_bad_file(ctx: CheckContext) -> None:
    """import_events with a path where no file is; and, when the server shares this machine's
    files, with a file that is not JSON, a JSON object that is no ExportPackage, and a JSON array:
    each refused with -32602 Invalid Params or an implementation code of -32000..-32099 other than
    UPP's four (not -32603: the file is the client's), and the user holds nothing afterwards."""
    require_offered(ctx, "upp/import_events")
    entity = fresh_entity("import-bad")
    nowhere = str(import_folder(ctx).path / f"mcf-missing-{secrets.token_hex(6)}.json")
    cases: list[tuple[str, RpcReply]] = [("a path where no file is", ctx.client.import_events(entity, nowhere))]
    if ctx.client.shares_files():
        for what, content, raw in (("a file that is not JSON", "this is {not JSON", True),
                                   ("a JSON object that is no ExportPackage", {"mcf": "no package"}, False),
                                   ("a JSON array", [], False)):
            cases.append((what, _import(ctx, entity, content, "bad", raw=raw)))
    wrong = [(what, reply) for what, reply in cases if not file_refused(reply)]
    if wrong:
        fail(ctx, "upp/import-bad-file", f"{len(wrong)} of {len(cases)} bad files were not refused as a bad request: "
             + "; ".join(f"{what} → {reply.describe()}" for what, reply in wrong) + ". The first in full",
             wrong[0][1], "for each, the error -32602 Invalid Params or an implementation code of -32000..-32099 "
             "(not -32603 Internal Error, not -32001..-32004, which mean other things)")
    _nothing_stored(ctx, "upp/import-bad-file", entity, "files that are no ExportPackage were imported", cases[0][1])


@check("upp/l3/import-confined-paths", spec="upp", requirements=("upp/import-confined-paths",), bindings=LIVE,
       title="upp/import_events does not read files outside the folders it imports from")
def import_confined_paths(ctx: CheckContext) -> None:
    """A valid package written to a new folder of its own in the system temporary folder (not the
    server's export folder) is named to import_events: a server that confines its reads refuses
    it with -32602. The same package is then named by paths that begin in the export folder and
    lead out of it to that file (issue 14): `<export folder>/../../…/tmp/<new folder>/package.json`
    and the relative `../../…/tmp/<new folder>/package.json`, and a symbolic link inside the export
    folder to it; each must be refused too. Never a folder beside the export folder: a server may
    import from a folder above the one its exports go to (round 16). Skipped when the server does
    not share this machine's files, or when the suite could not learn the server's export folder;
    a probe the suite cannot set up (no symbolic links) is left out."""
    require_offered(ctx, "upp/import_events")
    _need_files(ctx)
    if not folder_learned(ctx):
        raise NotApplicable("the suite could not learn the server's export folder, so it cannot tell a folder the "
                            "server is configured to read from one it is not")
    folder = export_root(ctx)
    content = package(fresh_entity("pkg-source"), [saying(SINGULAR_LABEL)], ontology_id=server_ontology(ctx))
    # A refusal shows confinement only from a server that reads the same package where it may.
    with package_file(ctx, content, "confined-control") as inside:
        control = ctx.client.import_events(fresh_entity("import-control"), str(inside))
    if file_refused(control):
        raise NotApplicable(f"precondition failed: upp/import_events refused even the same package written in its "
                            f"export folder {str(folder)!r} ({control.describe()}), so refusing one elsewhere shows no "
                            "confinement; imports are judged by upp/l3/import")
    made: list[Path] = []
    try:
        elsewhere = Path(tempfile.mkdtemp(prefix="mcf-elsewhere-"))
        made.append(elsewhere)
        path = elsewhere / "package.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        if path.resolve().is_relative_to(folder.resolve()):
            raise NotApplicable(f"the server writes its exports under {str(folder)!r}, which holds the system "
                                f"temporary folder: the suite has no folder it knows to be outside")
        probes = [(str(path), "a file in a new folder of the system temporary folder")]
        # The climbing paths lead to that same file: which folders above its exports a server reads
        # is its own (it may write them in per-user subfolders of the folder it imports from, as a
        # blind red team's did in round 16), so a folder beside them proves nothing; a new folder of
        # the system temporary folder is no server's. Enough .. to reach / from whatever folder the
        # server takes a relative path from (.. at / stays at /).
        up = "../" * max(32, len(folder.resolve().parts) + 2)
        rest = path.resolve().relative_to(path.resolve().anchor)
        probes += [(f"{folder}/{up}{rest}", f"a path that starts in that folder and climbs out of it with .. to "
                    f"{str(path)!r}"),
                   (f"{up}{rest}", f"a relative path climbing out with .. to {str(path)!r}")]
        try:  # a symbolic link inside the export folder to the package outside it
            link = folder / f"mcf-link-{secrets.token_hex(6)}.json"
            link.symlink_to(path)
            made.append(link)
            probes.append((str(link), f"a symbolic link inside the export folder to {str(path)!r}"))
        except (OSError, NotImplementedError):
            pass
        for file, what in probes:
            reply = ctx.client.import_events(fresh_entity("import-confined"), file)
            if not file_refused(reply):
                fail(ctx, "upp/import-confined-paths", f"upp/import_events read {file!r} ({what}): a file the suite "
                     f"wrote in a new folder of the system temporary folder ({str(elsewhere)!r}), outside the folder "
                     f"the server writes its exports under ({str(folder)!r})", reply, "a refusal (-32602, or an implementation code of "
                     "-32000..-32099): a client cannot make the server read arbitrary files, whatever path leads "
                     "there")
    finally:
        for p in reversed(made):
            if p.is_symlink() or p.is_file():
                p.unlink(missing_ok=True)
            else:
                shutil.rmtree(p, ignore_errors=True)


@check("upp/l3/export-confined-paths", spec="upp", requirements=("upp/export-confined-paths",), bindings=LIVE,
       title="an entity_key holding a path never makes upp/export_events write outside its folder (SHOULD)")
def export_confined_paths(ctx: CheckContext) -> None:
    """Users whose entity_keys lead into a new folder of the system temporary folder, one climbing
    there with `../../…` and one its absolute path (issue 14), get a profile by upp/ingest and are
    exported: no file may appear in that folder (the answered file, nor any other). A refusal of
    the entity_key confines the writes too. The folder is removed afterwards. Skipped when the
    server does not share this machine's files or the suite could not learn its export folder."""
    for op in ("upp/ingest", "upp/export_events"):
        require_offered(ctx, op)
    _need_files(ctx)
    if not folder_learned(ctx):
        raise NotApplicable("the suite could not learn the server's export folder, so it cannot tell where an "
                            "export may be written")
    folder = export_root(ctx).resolve()
    # The keys lead into a new folder of the system temporary folder, never beside the exports: a
    # server may write its exports in subfolders of the folder it owns (per user, per shard), so a
    # file beside the learned folder may still be the server's own tree; a new temporary folder is
    # no server's, and only a key steering the write can put a file there.
    target = Path(tempfile.mkdtemp(prefix="mcf-escape-")).resolve()
    if target.is_relative_to(folder):
        shutil.rmtree(target, ignore_errors=True)
        raise NotApplicable(f"the server writes its exports under {str(folder)!r}, which holds the system temporary "
                            "folder: the suite has no folder it knows to be outside")
    up = "../" * max(32, len(folder.parts) + 2)  # .. at / stays at /: reaches / from any folder
    rest = target.relative_to(target.anchor)
    try:
        for make in (lambda t: f"{up}{rest}/{t}", lambda t: str(target / t)):
            token = f"mcf-escape-{secrets.token_hex(6)}"
            entity = make(token)
            ingested(ctx, entity)  # inconclusive when the server extracts nothing: no user to export
            try:
                reply = ctx.client.export_events(entity)
                file = reply.result.get("file") if reply.ok and isinstance(reply.result, dict) else None
                named = export_path(file)
                written = [named.resolve()] if named is not None else []
                written += sorted(p.resolve() for p in target.rglob("*") if p.is_file() and token in str(p))
                outside = [str(p) for p in dict.fromkeys(written) if p.is_relative_to(target)]
                if outside:
                    fail(ctx, "upp/export-confined-paths", f"upp/export_events for the entity_key {entity!r} wrote "
                         f"{', '.join(map(repr, outside[:3]))}: in the folder the entity_key named ({str(target)!r}, "
                         f"a new folder of the system temporary folder), outside the folder the server writes its "
                         f"exports under ({str(folder)!r})", reply,
                         "the export file inside the export folder whatever the entity_key (or the entity_key "
                         "refused): a client must not choose where the server writes")
            finally:
                if served(ctx, "upp/delete_events"):
                    ctx.client.delete_events(entity)
    finally:
        shutil.rmtree(target, ignore_errors=True)


@check("upp/l3/round-trip", spec="upp", requirements=("upp/import-persists", "upp/superseded-by-existing"),
       bindings=LIVE,
       title="export → import into another user keeps every event's value, labels, confidence and source_type")
def round_trip(ctx: CheckContext) -> None:
    """A fresh user holds two names (one superseded) and a hobby; the server's own export file is
    imported for a second fresh user: every exported event is imported (none skipped), and the
    second user's valid events are the export's valid events, compared by value, labels,
    confidence and source_type. The exported events are read from the file when the server shares
    this machine's files (the export itself is judged by upp/l3/export-file), else from
    upp/get_events of the first user. Every superseded_by among the second user's events must name
    one of them: an import that keeps the package's pointers while minting new ids leaves them
    dangling. The pointer rule is judged only when an imported event is superseded and points."""
    ctx.credit_only_observed()
    for op in ("upp/export_events", "upp/import_events", "upp/get_events"):
        require_offered(ctx, op)
    origin, copy = fresh_entity("trip-from"), fresh_entity("trip-to")
    _profile(ctx, origin)
    exported = ctx.client.export_events(origin)
    result = need(exported, f"upp/export_events for {origin!r}")
    file = result.get("file") if isinstance(result, dict) else None
    if not isinstance(file, str):
        raise NotApplicable(f"precondition failed: upp/export_events named no file ({exported.describe()}); "
                            f"judged by upp/l3/export")
    expected = _exported_events(ctx, origin, file)
    # How many the export holds: the file's events when read, else what the export said.
    count = len(expected) if ctx.client.shares_files() else result.get("event_count")
    reply = ctx.client.import_events(copy, file)
    if not reply.ok:
        fail(ctx, "upp/import-persists", f"the server refused to import its own export {file!r} (of {origin!r}, "
             f"{count} events) for {copy!r}", reply, f"imported_count {count}, skipped_count 0")
        return
    counts = _counts(reply)
    if counts is not None and isinstance(count, int):
        observe(ctx, "upp/import-persists")
    if counts is not None and isinstance(count, int) and counts != (count, 0):
        fail(ctx, "upp/import-persists", f"importing the server's own export of {count} events answered "
             f"{compact(reply.result)}", reply, f"imported_count {count}, skipped_count 0")
    stored = listed(ctx, copy)
    if any(e.get("status") == "superseded" and isinstance(e.get("superseded_by"), str) for e in stored):
        observe(ctx, "upp/superseded-by-existing")
    else:
        ctx.note(f"no event imported for {copy!r} is superseded with a pointer, so no pointer could dangle")
    judge_pointers(ctx, stored, f"upp/get_events for {copy!r} after the import", reply)
    if not all(_comparable(e) for e in stored):
        ctx.note("the imported events' members are not all comparable (judged by the StoredEvent shape)")
        return  # the members' types are the StoredEvent shape's business
    observe(ctx, "upp/import-persists")
    # The valid events are compared: the superseded ones are superseded again on import, and how
    # get_events shows them is judged by the level-2 checks.
    want = Counter(_essence(e) for e in expected if e.get("status") == "valid")
    got = Counter(_essence(e) for e in stored if e.get("status") == "valid")
    if want != got and got == _valid_in_listed_order(expected):
        # 03 §4 fixes neither the export's order nor the import's ("Supersession rules apply as during
        # normal storage"): an export listing the events newest first, imported in the order listed,
        # makes the earlier event of a singular label current. Each reading is the server's to take
        # (variants upp-newest-first, upp-import-package-order); together they are no violation.
        ctx.note(f"the export of {origin!r} lists the events in another order than they were stored, and the "
                 f"import applied supersession in the order listed, so another event of a singular label is "
                 f"current for {copy!r}: 03 §4 fixes neither order, so a client moving this server's data "
                 f"through its own export and import sees that change")
        return
    if want != got:
        lost, gained = want - got, got - want
        fail(ctx, "upp/import-persists", f"after export of {origin!r} and import for {copy!r}, the valid events "
             f"differ (value, labels, confidence, source_type): missing "
             f"{compact(sorted(map(str, lost.elements())), 600)}; not in the export "
             f"{compact(sorted(map(str, gained.elements())), 600)}", reply,
             "every exported event stored for the new user with its value, labels, confidence and source_type")


def _valid_in_listed_order(events: list[dict[str, Any]]) -> Counter[tuple[Any, ...]] | None:
    """The valid events an import storing `events` in the order listed would leave, applying
    supersession as storage does (02 §6): of the events held valid or superseded, a valid one
    supersedes the valid ones it shares a singular label with; staged ones stay out. None when an
    event's labels are not a list of strings."""
    from memconform.suite.upp import ontology

    singular = ontology.user_v1().singular  # a label outside the ontology is no singular one
    held: list[list[Any]] = []  # [event, status]
    for e in events:
        if e.get("status") not in ("valid", "superseded"):
            continue
        labels = e.get("labels")
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            return None
        for h in held:
            if h[1] == "valid" and set(h[0]["labels"]) & set(labels) & singular:
                h[1] = "superseded"
        held.append([e, "valid"])
    return Counter(_essence(e) for e, status in held if status == "valid")


def _exported_events(ctx: CheckContext, origin: str, file: str) -> list[dict[str, Any]]:
    """The events the export holds: from its file when readable, else the user's listing. A file
    that is no valid ExportPackage skips the round trip (judged by upp/l3/export-file)."""
    if not ctx.client.shares_files():
        events = listed(ctx, origin)
        if any(model.stored_event_problems(e) for e in events):
            raise NotApplicable(f"precondition failed: upp/get_events lists malformed StoredEvents for {origin!r} "
                                f"(judged by upp/l2/get-events), so the exported events cannot be known")
        return events
    content, why = read_export_file(file)
    if why is None and model.export_package_problems(content):
        why = "it is not a valid ExportPackage: " + "; ".join(model.export_package_problems(content)[:3])
    if why is not None:
        raise NotApplicable(f"precondition failed: the export of {origin!r} cannot be used: {why} "
                            f"(judged by upp/l3/export-file)")
    return [e for e in content["events"] if isinstance(e, dict)]
