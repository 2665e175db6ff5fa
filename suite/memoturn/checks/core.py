"""Core (L1): ingest statuses and their ids, the record GET answers, supersession by (type,
topic_key) with its chain both ways, revive, provenance, atomic capped batches, forget, errors.

Ids are read from the target's own ingest results: an implementation whose id construction differs
from the engine's (memoturn/id-construction is a SHOULD) is still judged on everything else."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from memconform.suite.jsonvalue import json_differences, json_equal
from memconform.suite.memoturn import model
from memconform.suite.memoturn.checks._common import (HTTP, LIVE, envelope_problem, got, http_only, ids_of, ingest,
                                                      ingest_answer, judge_refused, mentions, precondition,
                                                      profile, ready_profile, record, say, served, source_problem,
                                                      word)
from memconform.suite.memoturn.client import shown
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import observe

ERRORS = ("memoturn/error-envelope", "memoturn/error-codes", "memoturn/no-server-error")


def _errors(ctx: Any) -> tuple[str, ...]:
    return ERRORS if ctx.binding == "http" else ()


def fact(topic: str, content: Any, summary: str | None = None, **more: Any) -> dict[str, Any]:
    return model.new_memory("fact", summary or f"fact about {topic}", content, topic_key=topic, **more)


def _status(reply: Any, i: int = 0) -> Any:
    return reply.result(i).get("status")


def _superseded(reply: Any, i: int = 0) -> Any:
    return reply.result(i).get("superseded")


def _stored_alone(ctx: Any, prof: str, memory: dict[str, Any], rule: str, what: str) -> None:
    """After a refused batch, `memory` (one of it) ingested alone must be `created`; and, so that
    "created" means something, ingested once more it must be `duplicate` (a store that keeps nothing
    answers created every time: then nothing can be seen either way)."""
    alone = ingest(ctx, prof, [memory], what)
    again = ingest(ctx, prof, [memory], f"{what}, once more")
    if _status(again, 0) != "duplicate":
        raise NotApplicable(f"the same memory ingested twice answered {shown(_status(alone, 0))} then "
                            f"{shown(_status(again, 0))}: the statuses do not show what the profile holds "
                            f"({again.describe()}; judged by memoturn/ingest-statuses)")
    if _status(alone, 0) != "created":
        say(ctx, rule, f"after the refused batch, one of its memories ingested alone is {shown(_status(alone, 0))}, "
                       f"not 'created': the refused batch stored it", alone)


def _expect_status(ctx: Any, rid: str, reply: Any, i: int, want: str, what: str) -> bool:
    status = _status(reply, i)
    if status != want:
        say(ctx, rid, f"{what}: results[{i}].status is {shown(status)}, not {want!r}", reply)
        return False
    return True


@check("memoturn/ingest-statuses", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/ingest-status-per-memory", "memoturn/created-otherwise", "memoturn/duplicate-no-write",
                     "memoturn/batch-one-txid", "memoturn/profile-auto-create", "memoturn/id-content-addressed"),
       title="Ingest answers one result per memory, in order (created, then duplicate with no write), and one txid")
def ingest_statuses(ctx: Any) -> None:
    """A batch of three distinct memories into a profile never written, then the same batch again:
    created ×3 in request order, then duplicate ×3 superseding nothing, and GET shows each record
    unchanged by the repeat. A step that goes wrong ends the check: what it did not reach is not judged."""
    ctx.credit_only_observed()
    prof = profile("statuses")
    batch = [fact(f"user.{word('t')}", {"n": 1}), model.new_memory("event", "an event happened", {"e": word()}),
             model.new_memory("instruction", "answer briefly", {"style": "brief"}, topic_key=f"style.{word()}")]
    first = served(ctx.client.ingest(prof, batch))
    if not first.ok:
        say(ctx, "memoturn/profile-auto-create", "the first ingest into a profile never written was refused", first)
        ctx.note("the first ingest was refused: the statuses, ids and txid could not be seen")
        return
    ctx.observed("memoturn/profile-auto-create")
    _names_kept(ctx, prof)
    problems = model.ingest_problems(first.body, len(batch))
    ctx.observed("memoturn/batch-one-txid")  # an object's txid is always judged; a non-object is a finding on it
    for p in problems:
        rid = "memoturn/batch-one-txid" if "`txid`" in p else "memoturn/ingest-status-per-memory"
        say(ctx, rid, f"the ingest answer is not the page's shape: {p}", first)
    if problems:
        ctx.note("the first ingest's answer is not the page's shape: the statuses and ids were not read")
        return
    ids = [first.result(i).get("id") for i in range(len(batch))]
    if len(set(ids)) != len(ids):
        say(ctx, "memoturn/ingest-status-per-memory", f"three distinct memories got ids {ids}", first)
        ctx.note("three distinct memories got fewer ids: the statuses were not read")
        return
    for i in range(len(batch)):
        _expect_status(ctx, "memoturn/created-otherwise", first, i, "created", "a memory new to the profile")
    ctx.observed("memoturn/created-otherwise")
    before = []
    for i, id in enumerate(ids):
        reply, memory = got(ctx, prof, id)
        if memory is None:
            say(ctx, "memoturn/profile-auto-create", f"the memory ingested as {id!r} is not there afterwards", reply)
            ctx.note(f"the memory ingested as {id!r} is not there afterwards: the repeat was not tried")
            return
        before.append(memory)
    for i, (memory, sent) in enumerate(zip(before, batch)):
        if memory.get("type") != sent["type"] or memory.get("summary") != sent["summary"]:
            say(ctx, "memoturn/ingest-status-per-memory", f"results[{i}] names {ids[i]!r}, which GET shows as a "
                f"{shown(memory.get('type'))} {shown(memory.get('summary'))}; memory {i} sent was a {sent['type']} "
                f"{sent['summary']!r}: results are one per memory, in request order", first)
            ctx.note("the results are not one per memory in request order: the repeat was not tried")
            return
    ctx.observed("memoturn/ingest-status-per-memory")
    # the same memories told again in other words: the content hash makes them duplicates, and
    # "no write" keeps the first summary and keywords
    batch = [dict(m, summary=m["summary"] + " (told again)", keywords="again") for m in batch]
    again = precondition(ctx.client.ingest(prof, batch), "the same batch again, in other words")
    if model.ingest_problems(again.body, len(batch)):
        say(ctx, "memoturn/ingest-status-per-memory", "the repeated batch's answer is not the page's shape: "
            + "; ".join(model.ingest_problems(again.body, len(batch))), again)
        ctx.note("the repeated batch's answer is not the page's shape: its ids and statuses were not read")
        return
    ctx.observed("memoturn/id-content-addressed")  # each repeat's id is compared with the first
    repeated = []
    for i in range(len(batch)):
        if again.result(i).get("id") != ids[i]:
            say(ctx, "memoturn/id-content-addressed", f"the same (type, topic_key, content) re-ingested with another "
                f"summary got id {shown(again.result(i).get('id'))}, first {ids[i]!r}", again)
        else:
            ctx.observed("memoturn/duplicate-no-write")  # a repeat named by its id: its status is compared
            if _expect_status(ctx, "memoturn/duplicate-no-write", again, i, "duplicate",
                              "an already-active memory re-ingested"):
                repeated.append(i)
                if _superseded(again, i) != []:
                    say(ctx, "memoturn/duplicate-no-write",
                        f"a duplicate reported superseding {shown(_superseded(again, i))}", again)
    for i in (repeated if len(repeated) == len(batch) else ()):  # a repeat that wrote something moves other rows
        id, old = ids[i], before[i]
        reply, now = got(ctx, prof, id)
        if now != old:
            say(ctx, "memoturn/duplicate-no-write", f"a duplicate ingest changed the record {id!r}: before "
                                                    f"{shown(old)}, after {shown(now)}", reply)
    if len(repeated) == len(batch):
        _duplicate_task_keeps_expiry(ctx, prof)


def _names_kept(ctx: Any, control: str) -> None:
    """The profile an ingest creates is the one it names: a name holding "%41" (sent percent-encoded, "%2541",
    over REST) and one holding "é" are listed as written (a blind red team, round 26: segments decoded twice,
    "p%41" becoming "pA", and decoded as Latin-1, "café" becoming "cafÃ©"). The page gives names no rule, so
    a server may refuse either (noted); judged where the namespace's listing names `control`, written before."""
    pct, cafe = profile("pct"), word("n")
    names = {f"{pct}%41": pct, f"café-{cafe}": cafe}  # each name, and a part of it no other name holds
    taken = []
    for name in names:
        reply = ctx.client.ingest(name, [model.new_memory("event", "deployed v2 to prod", {"version": word()})])
        if reply.ok:
            taken.append(name)
        else:
            ctx.note(f"an ingest into the profile {name!r} was not taken ({reply.describe()}): the page gives names no "
                     "rule, so whether it is kept as written was not judged")
    if not taken:
        return
    listing = ctx.client.profiles()
    if not listing.ok or not mentions(listing.body, control):
        ctx.note(f"the namespace's profiles were not listed, or the listing does not name {control!r}, written before "
                 f"({listing.describe()}): whether {taken} were created under their own names was not seen")
        return
    listed = _strings(listing.body)
    for name in taken:
        # judged on what the listing shows: a name holding the unique part, and not the name sent
        others = sorted(x for x in listed if names[name] in x and x != name)
        if others and name not in listed:
            say(ctx, "memoturn/profile-auto-create", f"an ingest into the profile {name!r} was taken, and the "
                                                     f"namespace's profile listing names {others}, not {name!r}: the "
                                                     f"profile created is the one the ingest names", listing)


def _strings(value: Any) -> set[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value) | set().union(*map(_strings, value.values()))
    if isinstance(value, list):
        return set().union(*map(_strings, value))
    return set()


def _duplicate_task_keeps_expiry(ctx: Any, prof: str) -> None:
    """A task sent again with another ttl is a duplicate (the ttl is not hashed): no write, so its expires_at
    stays (a blind red team, round 26: the duplicate's ttl rewrote it). Not judged where a task with a ttl is
    not taken (task-ttl-explicit's)."""
    task = model.new_memory("task", "call back", {"who": word()}, ttl=600)
    first = ctx.client.ingest(prof, [task])
    tid = first.result().get("id") if first.ok else None
    _, before = got(ctx, prof, tid) if isinstance(tid, str) else (None, None)
    if before is None or before.get("expires_at") is None:
        ctx.note("a task with ttl 600 was not taken, or shows no expires_at: a duplicate with another ttl was not tried")
        return
    again = ctx.client.ingest(prof, [dict(task, ttl=7200)])
    if not again.ok or again.result().get("id") != tid or _status(again, 0) != "duplicate":
        return  # the status of the repeat is judged above, on the batch
    reply, after = got(ctx, prof, tid)
    if after is not None and after.get("expires_at") != before.get("expires_at"):
        say(ctx, "memoturn/duplicate-no-write", f"a task ingested with ttl 600 had expires_at "
            f"{shown(before.get('expires_at'))}; the same task again with ttl 7200 answered duplicate, and GET now "
            f"shows expires_at {shown(after.get('expires_at'))}: a duplicate writes nothing", reply)


@check("memoturn/content-addressed-ids", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/id-content-addressed", "memoturn/id-key-order-insensitive", "memoturn/id-construction"),
       title="The id is a hash of (type, topic_key, content) alone, canonical in member order, and the engine's bytes")
def content_addressed_ids(ctx: Any) -> None:
    ctx.credit_only_observed()  # an id that is no mem_ hash is not compared with anything
    prof = profile("ids")
    topic = f"user.{word('k')}"
    content = {"b": [1, 2, {"y": "ü", "x": None}], "a": "vegan 🌱", "c": True}
    reordered = {"c": True, "a": "vegan 🌱", "b": [1, 2, {"x": None, "y": "ü"}]}
    base = ingest(ctx, prof, [fact(topic, content, "first summary", keywords="one two")], "a fact")
    id0 = base.result().get("id")
    if not isinstance(id0, str) or not id0.startswith("mem_"):
        say(ctx, "memoturn/id-content-addressed", f"the id is {shown(id0)}, not mem_ + a hash", base)
        ctx.note("the first id is no mem_ hash: its member order and construction were not judged")
        return
    ctx.observed("memoturn/id-content-addressed", "memoturn/id-key-order-insensitive", "memoturn/id-construction")
    same = ingest(ctx, prof, [fact(topic, content, "another summary", keywords="three", source=word("agent"),
                                   session_id=word("s"), embedding=[0.5, 0.25])],
                  "the same fact with another summary, keywords, source, session and embedding")
    if same.result().get("id") != id0:
        say(ctx, "memoturn/id-content-addressed", f"the same (type, topic_key, content) with another summary, keywords, "
            f"source, session_id and embedding got id {shown(same.result().get('id'))}, first {id0!r}: only the "
            f"three are hashed", same)
    moved = ingest(ctx, prof, [fact(topic, reordered, "first summary", keywords="one two")],
                   "the same fact, its content's members in another order")
    if moved.result().get("id") != id0:
        say(ctx, "memoturn/id-key-order-insensitive", f"the same content with its members in another order got id "
                                                      f"{shown(moved.result().get('id'))}, first {id0!r}", moved)
    other = ingest(ctx, prof, [fact(f"user.{word('k')}", {"diet": word("d")})], "a fact of other content")
    if other.result().get("id") == id0:
        say(ctx, "memoturn/id-content-addressed", f"a fact of other topic and content got the same id {id0!r}", other)
    event = ingest(ctx, prof, [model.new_memory("event", "first summary", content)], "an event of the same content")
    if event.result().get("id") == id0:
        say(ctx, "memoturn/id-content-addressed", f"an event and a fact of the same content share id {id0!r}: the type "
                                                  f"is part of the hash", event)
    want = model.memory_id("fact", topic, content)
    if id0 != want:
        say(ctx, "memoturn/id-construction", f"the id is {id0!r}; the engine's construction gives {want!r} for type "
            f"'fact', topic_key {topic!r}, content {model.canonical_content(content)!r}", base)
    _id_probes(ctx, prof)


def _id_probes(ctx: Any, prof: str) -> None:
    """Memories whose ids the suite computes itself, in one batch (a blind red team, round 26): content that
    differs only in the order of an array's members is different content, so a different id (the MUST);
    and where an id is not the engine's construction, the SHOULD warns: keys sorted by code point, not by
    UTF-16 code units ("\ue000" before "😀"); an event without topic_key hashed with its empty topic and
    both separators; a string in NFD hashed as sent, not normalised to NFC."""
    w = word()
    probes = [("content {\"xs\": [1, 2]}", model.new_memory("event", "order a", {"xs": [1, 2], "w": w})),
              ("content {\"xs\": [2, 1]}", model.new_memory("event", "order b", {"xs": [2, 1], "w": w})),
              ("content keys \"\\ue000\" and \"😀\"", model.new_memory("event", "keys", {"\ue000": 1, "😀": 2, "w": w})),
              ("an event without topic_key", model.new_memory("event", "deployed v2 to prod", {"version": w})),
              ("content \"cafe\\u0301\" (NFD)", model.new_memory("event", "nfd", {"name": "cafe\u0301", "w": w}))]
    reply = ctx.client.ingest(prof, [m for _, m in probes])
    if not reply.ok or model.ingest_problems(reply.body, len(probes)):
        ctx.note(f"the batch of id probes was not taken ({reply.describe()}): arrays in order and the exact "
                 "construction on them were not judged")
        return
    ids = [reply.result(i).get("id") for i in range(len(probes))]
    if ids[0] == ids[1]:
        say(ctx, "memoturn/id-content-addressed", f"two events whose content differs only in the order of an array's "
            f"members ({probes[0][0]} and {probes[1][0]}) got one id {ids[0]!r}: an array's order is content "
            f"(canonical JSON sorts object members, not arrays)", reply)
    off = [(what, got, model.memory_id(m["type"], m.get("topic_key"), m["content"]))
           for (what, m), got in zip(probes, ids)]
    off = [(what, got, want) for what, got, want in off if got != want]
    if off:
        say(ctx, "memoturn/id-construction", "ids that are not the engine's construction (SHA-256 of type, 0x00, "
            "topic_key or \"\", 0x00, compact JSON with keys sorted by code point and raw UTF-8): "
            + "; ".join(f"{what}: {got!r}, the engine's {want!r}" for what, got, want in off), reply)


@check("memoturn/record-shape", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/record-fields", "memoturn/content-returned", "memoturn/source-returned"),
       title="GET answers the record as ingested: content structurally equal, source and every field of the page's table")
def record_shape(ctx: Any) -> None:
    """A fact with every optional field and an event with none: GET answers each sent value; a
    field the event did not set is null (or absent: JSON cannot tell an absent member from a null
    one the server does not keep)."""
    ctx.credit_only_observed()  # content and source are judged where a record or a hit shows them
    prof = profile("record")
    # "Rene\u0301e" is decomposed (NFD): a server that normalizes text in transit shows it composed;
    # `true` beside numbers: a server that stores booleans as integers shows 1
    # a float of thirteen digits: content is returned as ingested (only its id is implementation-
    # defined); a summary with spaces around it: returned as sent, not "cleaned"; an embedding of
    # more digits than f32 keeps: where GET echoes it, it holds f32's precision ("optional f32 vector");
    # a content string with spaces around it: kept (a blind red team, round 30, trimmed every one)
    full = fact(f"user.{word('k')}", {"nested": {"list": [1, "two", None, {"deep": True}]}, "text": "ünïcödé ✓ 🦀",
                                      "n": 9007199254740991, "nfd": "Rene\u0301e", "flags": [True, False, 0, 1],
                                      "x": 0.1234567891234, "padded": "  spaces around, kept  "},
                "  one-line gist for Rene\u0301e  ", keywords="food preference", session_id=word("s"),
                source="claude-code")
    bare = model.new_memory("event", "deployed v2 to prod", {"version": word("v")})
    sent = served(ctx.client.ingest(prof, [full, bare]))
    if not sent.ok:
        # a valid memory refused is not an unmet precondition when the bare event alone is taken: the
        # page's content is "JSON payload — the full memory" (a blind red team, round 21: Unicode content
        # refused `internal` left three rules "not assessable", the run "incomplete")
        control = served(ctx.client.ingest(prof, [bare]))
        if control.ok:
            say(ctx, "memoturn/content-returned", "a fact whose content holds Unicode (ü, ✓, 🦀, an NFD name), nested "
                                                  "lists, 2^53−1, a 13-digit float and booleans was refused in a batch "
                                                  "with a bare event, while the bare event alone was accepted: content "
                                                  "is \"JSON payload — the full memory\"", sent)
            return
    reply = ingest_answer(precondition(sent, f"a full fact and a bare event into {prof!r}"), [full, bare],
                          "a full fact and a bare event")
    for i, sent in enumerate((full, bare)):
        id = reply.result(i).get("id")
        got_reply, memory = got(ctx, prof, id)
        if memory is None:
            say(ctx, "memoturn/record-fields", f"GET of the memory ingested as {id!r} answered no record", got_reply)
            continue
        ctx.observed("memoturn/record-fields", "memoturn/source-returned")  # each field compared below
        if "content" in memory:
            ctx.observed("memoturn/content-returned")
        for p in model.record_problems(memory):
            say(ctx, "memoturn/record-fields", f"GET's record: {p}", got_reply)
        if memory.get("id") != id:
            say(ctx, "memoturn/record-fields", f"GET answered id {shown(memory.get('id'))} for {id!r}", got_reply)
        if "content" in memory and not json_equal(memory.get("content"), sent["content"]):
            say(ctx, "memoturn/content-returned", f"content came back changed on GET "
                                                  f"({'; '.join(json_differences(sent['content'], memory.get('content'), 'content'))}): "
                                                  f"sent {shown(sent['content'])}, GET answered {shown(memory.get('content'))}",
                got_reply)
        problem = source_problem(ctx, sent, memory.get("source"))
        if problem:
            say(ctx, "memoturn/source-returned", f"{problem}, GET answered {shown(memory.get('source'))}", got_reply)
        for name in ("type", "topic_key", "summary", "keywords", "session_id"):
            if memory.get(name) != sent.get(name) and not (name not in sent and memory.get(name) in (None, "")):
                say(ctx, "memoturn/record-fields", f"{name} was sent {shown(sent.get(name))}, GET answered "
                                                   f"{shown(memory.get(name))}", got_reply)
        for name in ("superseded_by", "superseded_at"):  # expires_at: memoturn/expires-at-tasks-only's
            if memory.get(name) is not None:
                say(ctx, "memoturn/record-fields", f"{name} of a {sent['type']} never superseded is "
                                                   f"{shown(memory.get(name))}, not null", got_reply)
    # an embedding, on a memory of its own (a node that embeds for itself may refuse one: not this
    # check's to judge); GET need not echo it, but an echo holds what an f32 keeps
    # its source in capitals ("Free-form"): kept as written, on GET and on the hit the vector channel
    # alone finds (a blind red team, round 26: a source lowercased at ingest; vector-only hits without one)
    vector = [0.123456789, 0.987654321]
    placed = ctx.client.ingest(prof, [model.new_memory("event", "an event with its embedding", {"v": word()},
                                                       embedding=vector, source="Claude-Code")])
    mid = placed.result().get("id") if placed.ok else None
    if isinstance(mid, str):
        got_reply, memory = got(ctx, prof, mid)
        problem = _embedding_problem(vector, (memory or {}).get("embedding"))
        if problem:
            say(ctx, "memoturn/record-fields", problem, got_reply)
        if memory is not None:
            ctx.observed("memoturn/source-returned")
            if memory.get("source") != "Claude-Code":
                say(ctx, "memoturn/source-returned", f"source was sent 'Claude-Code' (free-form), GET answered "
                                                     f"{shown(memory.get('source'))}", got_reply)
        by_vector = ctx.client.recall(prof, {"embedding": vector})
        vhit = next((h for h in by_vector.memories() or [] if isinstance(h, dict) and h.get("id") == mid),
                    None) if by_vector.ok else None
        if vhit is not None:
            ctx.observed("memoturn/source-returned")
            if vhit.get("source") != "Claude-Code":
                say(ctx, "memoturn/source-returned", f"source was sent 'Claude-Code', and the hit a recall by the "
                                                     f"memory's own embedding alone answered has source "
                                                     f"{shown(vhit.get('source'))}", by_vector)
    # values a "falsy" or "one line" shortcut loses (a blind red team, round 26): an empty content object,
    # and a summary holding U+2028 (a server may refuse a summary that is not one line; one it takes is kept)
    for what, sent, name in (("an event whose content is {}", model.new_memory("event", f"{word()} empty content", {}),
                              "content"),
                             ("an event whose summary holds U+2028",
                              model.new_memory("event", "first part\u2028second part", {"w": word()}), "summary")):
        placed = ctx.client.ingest(prof, [sent])
        mid = placed.result().get("id") if placed.ok else None
        if not isinstance(mid, str):
            ctx.note(f"{what} was not taken ({placed.describe()}): it was not read back")
            continue
        got_reply, memory = got(ctx, prof, mid)
        if memory is None or (name == "content" and "content" not in memory):
            continue
        rule = "memoturn/content-returned" if name == "content" else "memoturn/record-fields"
        ctx.observed(rule)
        if not json_equal(memory.get(name), sent[name]) or (name == "summary" and memory.get(name) != sent[name]):
            say(ctx, rule, f"{name} was sent {shown(sent[name])}, GET answered {shown(memory.get(name))}", got_reply)
    # "returned on every memory": recall's hits too (a recall that is not served is Recall's finding)
    hits_reply = ctx.client.recall(prof, {"topic_key": full["topic_key"]})
    hit = next((h for h in hits_reply.memories() or [] if isinstance(h, dict)
                and h.get("id") == reply.result(0).get("id")), None) if hits_reply.ok else None
    if hit is not None:
        ctx.observed("memoturn/source-returned", *(("memoturn/content-returned",) if "content" in hit else ()))
        if hit.get("source") != full["source"]:
            say(ctx, "memoturn/source-returned", f"source was sent {full['source']!r}, recall's hit answered "
                                                 f"{shown(hit.get('source'))}", hits_reply)
        if "content" in hit and not json_equal(hit.get("content"), full["content"]):
            say(ctx, "memoturn/content-returned", f"content came back changed on recall's hit "
                                                  f"({'; '.join(json_differences(full['content'], hit.get('content'), 'content'))}): "
                                                  f"sent {shown(full['content'])}, recall's hit answered {shown(hit.get('content'))}",
                hits_reply)
    if "memoturn/content-returned" not in ctx.judged:
        ctx.note("neither GET nor recall showed a record's content")


#: f32 keeps 24 bits of mantissa (about 7 decimal digits): what it rounds a value to is within this
#: relative distance of it; coarser is not "an f32 vector".
F32_RELATIVE = 1e-6


def _embedding_problem(sent: Any, echoed: Any) -> str | None:
    """An embedding GET echoes (it need not: the page promises no echo) that is not the one sent to
    f32 precision."""
    if sent is None or echoed is None:
        return None
    if (not isinstance(echoed, list) or len(echoed) != len(sent)
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in echoed)):
        return f"embedding was sent {shown(sent)}, GET echoed {shown(echoed)}"
    off = [(a, b) for a, b in zip(sent, echoed) if abs(a - b) > F32_RELATIVE * max(1.0, abs(a))]
    if off:
        return (f"embedding was sent {shown(sent)}, GET echoed {shown(echoed)}: {off[0][0]!r} came back "
                f"{off[0][1]!r}, coarser than an f32 keeps it (\"optional f32 vector\")")
    return None


@check("memoturn/type-and-topic-key-validity", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/type-enum", "memoturn/topic-key-only-fact-instruction", *ERRORS),
       title="A type outside the four, and a topic_key on an event or a task, are refused")
def type_and_topic_key(ctx: Any) -> None:
    ctx.credit_only_observed()  # judge_refused says what each refusal showed: a request accepted shows no envelope
    http_only(ctx)
    prof = ready_profile(ctx, "validity")
    cases = [
        ("memoturn/type-enum", "a memory of type 'opinion'", model.new_memory("opinion", "an opinion", {"o": 1})),
        ("memoturn/type-enum", "a memory of type 'Fact' (the types are lower case)", model.new_memory("Fact", "x", {"f": 1})),
        ("memoturn/type-enum", "a memory without a type", {"summary": "no type", "content": {}}),
        ("memoturn/topic-key-only-fact-instruction", "an event with a topic_key",
         model.new_memory("event", "an event", {"e": word()}, topic_key="user.diet")),
        ("memoturn/topic-key-only-fact-instruction", "a task with a topic_key",
         model.new_memory("task", "a task", {"t": word()}, topic_key="user.todo")),
    ]
    for rid, what, memory in cases:
        reply = ctx.client.ingest(prof, [memory])
        if rid == "memoturn/topic-key-only-fact-instruction" and reply.ok:
            _topic_key_dropped(ctx, prof, reply, what)
            continue
        judge_refused(ctx, reply, rule=rid, what=what)


def _topic_key_dropped(ctx: Any, prof: str, reply: Any, what: str) -> None:
    """An event or task sent with a topic_key and taken: "valid only on fact and instruction" says no
    such memory carries one, not that it is refused, so a memory stored without the key is a reading
    (variant memoturn-topic-key-dropped; a blind red team, round 21); one stored carrying it is not."""
    rule = "memoturn/topic-key-only-fact-instruction"
    mid = reply.result().get("id")
    if not isinstance(mid, str):
        say(ctx, rule, f"{what} was accepted and answered no id to read it back by", reply)
        return
    answer, rec = got(ctx, prof, mid)
    if rec is None:
        say(ctx, rule, f"{what} was accepted, and GET of its id {mid!r} answered no memory", answer)
    elif rec.get("topic_key") is not None:
        say(ctx, rule, f"{what} was accepted and stored carrying topic_key {shown(rec.get('topic_key'))}; the key is "
                       "valid only on fact and instruction: refuse the memory, or take it without the key", answer)
    else:
        observe(ctx, rule)
        ctx.note(f"{what} was taken with the key dropped (GET shows none): a reading of \"valid only on fact and "
                 "instruction\"")


@check("memoturn/summary-required", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/summary-required",),
       title="A memory without a summary, or with a blank one, is refused (the engine's rule)")
def summary_required(ctx: Any) -> None:
    prof = ready_profile(ctx, "summary")
    for what, memory in (("a fact without a summary", {"type": "fact", "topic_key": f"k.{word()}", "content": {}}),
                         ("an event with a blank summary", {"type": "event", "summary": "   ", "content": {"e": word()}})):
        judge_refused(ctx, ctx.client.ingest(prof, [memory]), rule="memoturn/summary-required", what=what)


def _chain(ctx: Any, mtype: str, tag: str) -> None:
    """Two memories of `mtype` under one topic_key: the second supersedes the first, both ways."""
    prof = profile(tag)
    topic = f"user.{word('diet')}"
    old_m = model.new_memory(mtype, "vegetarian since 2024", {"diet": "vegetarian"}, topic_key=topic,
                             keywords="food preference")
    new_m = model.new_memory(mtype, "vegan since 2026", {"diet": "vegan"}, topic_key=topic, keywords="food preference")
    rule = "memoturn/fact-supersedes" if mtype == "fact" else "memoturn/instruction-supersedes"
    ctx.credit_only_observed()  # a step that goes wrong ends the chain: what it did not reach is not judged
    first = ingest(ctx, prof, [old_m], f"the first {mtype}")
    old = first.result().get("id")
    # the two ingests a few ms apart, so that a millisecond clock tells them apart and superseded_at
    # can be judged against both (never a verdict on the wait: a clock that does not tell is not judged)
    time.sleep(0.01)
    second = ingest(ctx, prof, [new_m], f"a second {mtype} of the same topic_key")
    new = second.result().get("id")
    ctx.observed(rule)  # what the second ingest reported superseding is compared
    if _superseded(second) != [old]:
        say(ctx, rule, f"the second {mtype} under topic_key {topic!r} reported superseded "
                       f"{shown(_superseded(second))}, not [{old!r}]", second)
    old_reply, old_rec = got(ctx, prof, old)
    if old_rec is None:
        say(ctx, "memoturn/history-kept", f"the superseded {mtype} {old!r} is gone: GET answered no record", old_reply)
        ctx.note(f"the superseded {mtype} is gone: the chain's other side was not read")
        return
    else:
        ctx.observed("memoturn/history-kept")  # the old row is there; its superseded_at is read below
        if _superseded(second) == [old]:
            ctx.observed("memoturn/supersession-same-transaction")  # GET right after the answer
        else:
            ctx.note("the second ingest did not report superseding the first: that the row was superseded in the "
                     "same transaction was not seen")
        if old_rec.get("superseded_by") is None and _superseded(second) == [old]:
            say(ctx, "memoturn/supersession-same-transaction", "the ingest answered that it superseded "
                f"{old!r}, but right after it GET shows the old row active", old_reply)
            ctx.note(f"the old {mtype} is not superseded: the new one's supersedes was not read")
            return
        if old_rec.get("superseded_by") != new:
            say(ctx, rule, f"the replaced {mtype}'s superseded_by is {shown(old_rec.get('superseded_by'))}, not {new!r}",
                old_reply)
            ctx.note(f"the old {mtype} does not point at the new one: the new one's supersedes was not read")
            return
        elif not _is_time(old_rec.get("superseded_at")):
            # "set" is the MUST; the form (integer Unix ms) is memoturn/created-at-ms', a SHOULD
            say(ctx, "memoturn/history-kept", f"the superseded {mtype}'s superseded_at is "
                                              f"{shown(old_rec.get('superseded_at'))}, not set to a time (any "
                                              f"readable one: Unix milliseconds or seconds, or an RFC 3339 string)",
                old_reply)
    new_reply, new_rec = got(ctx, prof, new)
    if new_rec is None:
        raise NotApplicable(f"precondition failed: GET of the new {mtype} {new!r}: {new_reply.describe()}")
    if not _superseded_when_replaced(ctx, mtype, old_rec, new_rec, old_reply):
        _superseded_when_replaced_by_task_clock(ctx, mtype, tag)
    ctx.observed("memoturn/supersedes-listed")
    sup = new_rec.get("supersedes")
    if not isinstance(sup, list) or old not in sup:
        say(ctx, "memoturn/supersedes-listed", f"GET of the {mtype} that replaced {old!r} lists supersedes "
                                               f"{shown(sup)}", new_reply)
    # a third: it is the active (second) row that is replaced, whatever the first one was
    third = ingest(ctx, prof, [model.new_memory(mtype, "pescatarian since 2027", {"diet": "pescatarian"},
                                                topic_key=topic, keywords="food preference")],
                   f"a third {mtype} of the same topic_key")
    if _superseded(third) != [new]:
        say(ctx, rule, f"the third {mtype} under topic_key {topic!r} reported superseded {shown(_superseded(third))}, "
                       f"not [{new!r}], the active one", third)
    reply, rec = got(ctx, prof, new)
    if rec is not None and rec.get("superseded_by") != third.result().get("id"):
        say(ctx, rule, f"after a third {mtype} of topic_key {topic!r}, the second ({new!r}) has superseded_by "
                       f"{shown(rec.get('superseded_by'))}, not {shown(third.result().get('id'))}", reply)


def _is_time(value: Any) -> bool:
    return model.instant_ms(value) is not None


def _superseded_when_replaced(ctx: Any, mtype: str, old_rec: dict[str, Any], new_rec: dict[str, Any],
                              reply: Any) -> bool:
    """superseded_at is "set when a newer memory replaces this one", in the ingest's own transaction: it
    is the time of the replacement, so nearer the new row's created_at than the old row's own. Judged
    only where the clock told the two ingests apart (a server stamping whole seconds may not). False when
    the records state no created_at to compare with (another clock is then read)."""
    shown_at = {name: old_rec.get(name) for name in ("created_at", "superseded_at")}
    shown_at["new created_at"] = new_rec.get("created_at")
    # instants, whatever form each is in (milliseconds, seconds, RFC 3339)
    old_at, at, new_at = (model.instant_ms(v) for v in shown_at.values())
    if old_at is None or new_at is None or at is None or new_at <= old_at:
        # no superseded_at is history-kept's failure; no created_at shown: the server's clock is read otherwise
        return at is None or (old_at is not None and new_at is not None)
    if at - old_at < (new_at - old_at) / 2:
        say(ctx, "memoturn/supersession-same-transaction", f"the replaced {mtype} was created at "
            f"{shown(shown_at['created_at'])} and the one replacing it at {shown(shown_at['new created_at'])}, but "
            f"its superseded_at is {shown(shown_at['superseded_at'])}: the replacement's time is the newer memory's "
            f"ingest, not a time before it", reply)
    return True


#: The TTL of the clock tasks: long enough never to expire during a check.
CLOCK_TTL = 3600


def _superseded_when_replaced_by_task_clock(ctx: Any, mtype: str, tag: str) -> None:
    """Where the records state no created_at (the page's table has none), the server's own clock is read
    from a task in each ingest's batch: its expires_at is the batch's time plus the TTL sent. The
    replaced row's superseded_at must be nearer the replacing batch's time than its own. Not judged
    (noted) where the expiries do not tell the two ingests apart (a server counting whole seconds)."""
    prof = profile(f"{tag}-clock")
    topic = f"user.{word('clock')}"

    def batch(n: int) -> tuple[Any, str | None, float | None]:
        fact = model.new_memory(mtype, f"clock {n}", {"n": n, "w": word()}, topic_key=topic)
        task = model.new_memory("task", f"clock task {n}", {"n": n, "w": word()}, session_id=f"s-{word()}",
                                ttl=CLOCK_TTL)
        reply = ingest(ctx, prof, [fact, task], f"a {mtype} with a clock task ({n})")
        _, rec = got(ctx, prof, reply.result(1).get("id"))
        expires = model.instant_ms((rec or {}).get("expires_at"))
        return reply, reply.result(0).get("id"), None if expires is None else expires - CLOCK_TTL * 1000

    _, old, old_at = batch(1)
    time.sleep(0.05)
    second, new, new_at = batch(2)
    old_reply, old_rec = got(ctx, prof, old)
    at = model.instant_ms((old_rec or {}).get("superseded_at"))
    if _superseded(second) != [old] or (old_rec or {}).get("superseded_by") != new or at is None:
        ctx.note("the records state no created_at, and the clock tasks' supersession did not go as the first: "
                 "superseded_at against the replacement's time was not judged")
        return
    if old_at is None or new_at is None or new_at <= old_at:
        ctx.note("the records state no created_at, and the clock tasks' expires_at did not tell the two ingests "
                 "apart: superseded_at against the replacement's time was not judged")
        return
    if at - old_at < (new_at - old_at) / 2:
        say(ctx, "memoturn/supersession-same-transaction", f"the records state no created_at; by the server's clock "
            f"(a task in each batch, expires_at minus its TTL of {CLOCK_TTL} s) the replaced {mtype} was written at "
            f"{old_at:.0f} ms and the one replacing it at {new_at:.0f} ms, but its superseded_at is "
            f"{shown(old_rec.get('superseded_at'))}: the replacement's time is the newer memory's ingest, not a time "
            f"before it", old_reply)


@check("memoturn/fact-supersession", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/fact-supersedes", "memoturn/history-kept", "memoturn/supersedes-listed",
                     "memoturn/supersession-same-transaction"),
       title="The page's running example: a second fact of a topic_key supersedes the first, the chain visible both ways")
def fact_supersession(ctx: Any) -> None:
    _chain(ctx, "fact", "supersede-fact")


@check("memoturn/instruction-supersession", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/instruction-supersedes", "memoturn/history-kept", "memoturn/supersedes-listed",
                     "memoturn/supersession-same-transaction"),
       title="Instructions supersede as facts do")
def instruction_supersession(ctx: Any) -> None:
    _chain(ctx, "instruction", "supersede-instr")


def _active(ctx: Any, prof: str, id: str, rid: str, what: str) -> None:
    reply, rec = got(ctx, prof, id)
    if rec is None:
        say(ctx, rid, f"{what} {id!r} is not there", reply)
    elif rec.get("superseded_by") is not None:
        say(ctx, rid, f"{what} {id!r} was superseded by {shown(rec.get('superseded_by'))}", reply)


@check("memoturn/no-supersession-across", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/supersession-keyed-by-type", "memoturn/event-never-supersedes",
                     "memoturn/task-never-supersedes", "memoturn/fact-without-topic-no-supersession"),
       title="Nothing supersedes across types, events and tasks accumulate, an identical event is a duplicate")
def no_supersession_across(ctx: Any) -> None:
    prof = profile("accumulate")
    topic = f"user.{word('k')}"
    f = ingest(ctx, prof, [fact(topic, {"v": "fact"})], "a fact")
    i = ingest(ctx, prof, [model.new_memory("instruction", "an instruction", {"v": "instr"}, topic_key=topic)],
               "an instruction of the same topic_key")
    if _superseded(i) != []:
        say(ctx, "memoturn/supersession-keyed-by-type", f"an instruction under the topic_key of a fact superseded "
                                                        f"{shown(_superseded(i))}", i)
    _active(ctx, prof, f.result().get("id"), "memoturn/supersession-keyed-by-type",
            "after an instruction of its topic_key, the fact")
    # a topic_key is matched as written: one with spaces around it is another key (where it is accepted)
    padded = ctx.client.ingest(prof, [fact(f" {topic} ", {"v": "padded"})])
    if padded.ok and model.ingest_problems(padded.body, 1) == []:
        if _superseded(padded) != []:
            say(ctx, "memoturn/supersession-keyed-by-type", f"a fact under topic_key {f' {topic} '!r} superseded "
                                                            f"{shown(_superseded(padded))}", padded)
        _active(ctx, prof, f.result().get("id"), "memoturn/supersession-keyed-by-type",
                f"after a fact under topic_key {f' {topic} '!r}, the fact under {topic!r}")
    for mtype, rid in (("event", "memoturn/event-never-supersedes"), ("task", "memoturn/task-never-supersedes")):
        session = word("s")  # one session: "session-scoped" is no supersession key either
        first_m = model.new_memory(mtype, f"one {mtype}", {"n": 1, "w": word()}, session_id=session)
        one = ingest(ctx, prof, [first_m], f"a {mtype}")
        # an event of other content told in the same words is another event: it accumulates (the id
        # is a hash of the content, not of the summary)
        summary = first_m["summary"] if mtype == "event" else f"another {mtype}"
        two = ingest(ctx, prof, [model.new_memory(mtype, summary, {"n": 2, "w": word()}, session_id=session)],
                     f"another {mtype} of the same session" + (", in the same words" if mtype == "event" else ""))
        if _superseded(two) != []:
            say(ctx, rid, f"a second {mtype} superseded {shown(_superseded(two))}", two)
        if mtype == "event" and (_status(two, 0) != "created" or two.result().get("id") == one.result().get("id")):
            say(ctx, rid, f"a second event of other content, with the summary of the first ({summary!r}), answered "
                          f"{shown(_status(two, 0))} with id {shown(two.result().get('id'))} (the first's is "
                          f"{shown(one.result().get('id'))}): events accumulate, and the id is the content's", two)
        _active(ctx, prof, one.result().get("id"), rid, f"after a second {mtype}, the first")
        if mtype == "event":
            # accumulation is of distinct content: the identical event has the same id and is a duplicate
            same = ingest(ctx, prof, [dict(first_m, summary="the same event, told again")], "the first event again")
            if same.result().get("id") == one.result().get("id"):
                _expect_status(ctx, rid, same, 0, "duplicate", "an identical event re-ingested")
    plain = ingest(ctx, prof, [model.new_memory("fact", "a fact without topic", {"p": 1, "w": word()})], "a fact without topic_key")
    plain2 = ingest(ctx, prof, [model.new_memory("fact", "another fact without topic", {"p": 2, "w": word()})],
                    "another fact without topic_key")
    if _superseded(plain2) != []:
        say(ctx, "memoturn/fact-without-topic-no-supersession", f"a fact without topic_key superseded "
                                                                 f"{shown(_superseded(plain2))}", plain2)
    _active(ctx, prof, plain.result().get("id"), "memoturn/fact-without-topic-no-supersession",
            "after another fact without topic_key, the first")


@check("memoturn/revive", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/revive-superseded", "memoturn/supersedes-listed"),
       title="Re-asserting a superseded fact revives it and moves the supersession pointer")
def revive(ctx: Any) -> None:
    prof = profile("revive")
    topic = f"user.{word('diet')}"
    wa = word("rev")
    a_m, b_m = fact(topic, {"diet": "vegetarian"}, f"{wa} vegetarian"), fact(topic, {"diet": "vegan"})
    a = ingest(ctx, prof, [a_m], "fact A").result().get("id")
    b_reply = ingest(ctx, prof, [b_m], "fact B of the same topic_key")
    b = b_reply.result().get("id")
    if _superseded(b_reply) != [a]:
        raise NotApplicable(f"precondition failed: B did not supersede A ({b_reply.describe()}; judged by "
                            f"memoturn/fact-supersession)")
    ctx.credit_only_observed()  # supersedes-listed is read only where the pointer moved
    ctx.observed("memoturn/revive-superseded")  # the re-ingest's answer is judged from here on
    again = ingest(ctx, prof, [a_m], "fact A again")
    if again.result().get("id") != a:
        say(ctx, "memoturn/revive-superseded", f"fact A re-ingested got id {shown(again.result().get('id'))}, first {a!r}", again)
        return
    if not _expect_status(ctx, "memoturn/revive-superseded", again, 0, "revived", "a superseded fact re-ingested"):
        return
    if _superseded(again) != [b]:
        say(ctx, "memoturn/revive-superseded", f"the revived fact reported superseded {shown(_superseded(again))}, "
                                               f"not [{b!r}] (the pointer moves)", again)
    ra, rec_a = got(ctx, prof, a)
    if rec_a is None or rec_a.get("superseded_by") is not None:
        say(ctx, "memoturn/revive-superseded", f"after the revive, A's superseded_by is "
                                               f"{shown(rec_a.get('superseded_by') if rec_a else 'no record')}, not null", ra)
    else:
        # "superseded_by / superseded_at | set when a newer memory replaces this one": A is replaced no more
        if rec_a.get("superseded_at") is not None:
            say(ctx, "memoturn/revive-superseded", f"after the revive, A's superseded_by is null but its superseded_at "
                                                   f"is still {shown(rec_a.get('superseded_at'))}: the old row is "
                                                   f"active again", ra)
    rb, rec_b = got(ctx, prof, b)
    if rec_b is None or rec_b.get("superseded_by") != a:
        say(ctx, "memoturn/revive-superseded", f"after the revive, B's superseded_by is "
                                               f"{shown(rec_b.get('superseded_by') if rec_b else 'no record')}, not {a!r}", rb)
    elif rec_a is not None:
        # "the full chain in both directions": B points at A now, so A lists B (judged only where the
        # pointer did move: a pointer that did not is revive-superseded's finding above)
        ctx.observed("memoturn/supersedes-listed")
        sup = rec_a.get("supersedes")
        if not isinstance(sup, list) or b not in sup:
            say(ctx, "memoturn/supersedes-listed", f"after the revive, B ({b!r}) is superseded by A ({a!r}), yet GET "
                                                   f"of A lists supersedes {shown(sup)}", ra)
    if rec_a is None or rec_a.get("superseded_by") is not None or rec_b is None or rec_b.get("superseded_by") != a:
        return  # the revive did not go as the page says: found above; what follows builds on it
    _revived_is_recalled(ctx, prof, a, wa)
    # A→B→A→B: the fourth revives B and displaces the active row, A (a blind red team, round 26: the row
    # displaced was the topic's last created one, leaving A and B both active)
    fourth = ingest(ctx, prof, [b_m], "fact B again, after A was revived")
    if _expect_status(ctx, "memoturn/revive-superseded", fourth, 0, "revived", "B, superseded by the revived A, "
                                                                               "re-ingested"):
        ra, rec_a = got(ctx, prof, a)
        if _superseded(fourth) != [a] or rec_a is None or rec_a.get("superseded_by") != b:
            say(ctx, "memoturn/revive-superseded", f"after A, B, A, B under one topic_key, the fourth ingest reported "
                f"superseded {shown(_superseded(fourth))} and A's superseded_by is "
                f"{shown(rec_a.get('superseded_by') if rec_a else 'no record')}: the active row, A ({a!r}), is the one "
                f"the pointer moves from", fourth, received={"ingest": fourth.received, "GET A": ra.received})
    _revive_within_a_batch(ctx)
    _revive_after_forget(ctx)


def _revived_is_recalled(ctx: Any, prof: str, a: str, wa: str) -> None:
    """"The old row becomes active again": found like any active row, by a word of its summary (a blind
    red team, round 26: the revive rewrote the row but not its FTS entry)."""
    reply = ctx.client.recall(prof, {"query": wa})
    if reply.ok and reply.memories() is not None and a not in ids_of([h for h in reply.memories() if isinstance(h, dict)]):
        say(ctx, "memoturn/revive-superseded", f"the revived fact {a!r} holds {wa!r} in its summary, and a recall of "
                                               f"{wa!r} does not return it: the old row is active again", reply)


def _revive_within_a_batch(ctx: Any) -> None:
    """A, B, A in one batch: the third finds A superseded by B, so it is revived, and A is the active row
    after the batch (a blind red team, round 26: an id already seen in the batch was answered duplicate)."""
    prof = profile("revive-batch")
    topic = f"user.{word('diet')}"
    a_m, b_m = fact(topic, {"diet": "vegetarian", "w": word()}), fact(topic, {"diet": "vegan", "w": word()})
    reply = ingest(ctx, prof, [a_m, b_m, a_m], "facts A, B, A of one topic_key in one batch")
    a, b = reply.result(0).get("id"), reply.result(1).get("id")
    statuses = [_status(reply, i) for i in range(3)]
    if statuses[:2] != ["created", "created"] or _superseded(reply, 1) != [a]:
        ctx.note(f"A, B, A in one batch answered {statuses}, B superseding {shown(_superseded(reply, 1))}: B did not "
                 "supersede A within the batch, so the third was not judged")
        return
    rb, rec_b = got(ctx, prof, b)
    if statuses[2] != "revived" or rec_b is None or rec_b.get("superseded_by") != a:
        say(ctx, "memoturn/revive-superseded", f"A, B, A of one topic_key in one batch: B superseded A, then the "
            f"third answered {shown(statuses[2])} superseding {shown(_superseded(reply, 2))}, and B's superseded_by is "
            f"{shown(rec_b.get('superseded_by') if rec_b else 'no record')}: A re-asserted is revived and B displaced",
            reply, received={"ingest": reply.received, "GET B": rb.received})


def _revive_after_forget(ctx: Any) -> None:
    """A, then B superseding A, then B forgotten: A re-ingested (revived, or duplicate where forgetting B made A
    active again) is active, so a topic recall returns it (a blind red team, round 26: a row whose successor was
    forgotten was taken as active, answered duplicate and stayed hidden)."""
    prof = profile("revive-forget")
    topic = f"user.{word('diet')}"
    a_m, b_m = fact(topic, {"diet": "vegetarian", "w": word()}), fact(topic, {"diet": "vegan", "w": word()})
    a = ingest(ctx, prof, [a_m], "fact A").result().get("id")
    second = ingest(ctx, prof, [b_m], "fact B of the same topic_key")
    b = second.result().get("id")
    gone = ctx.client.forget(prof, b) if _superseded(second) == [a] else None
    if gone is None or not gone.ok:
        ctx.note("B did not supersede A, or its forget was not accepted: A re-ingested after it was not judged")
        return
    again = ingest(ctx, prof, [a_m], "fact A again, after B was forgotten")
    if _status(again, 0) not in ("revived", "duplicate"):
        return  # created: a forget that took A too; not this rule's to judge
    reply = ctx.client.recall(prof, {"topic_key": topic})
    if reply.ok and reply.memories() is not None and a not in ids_of([h for h in reply.memories() if isinstance(h, dict)]):
        say(ctx, "memoturn/revive-superseded", f"A ({a!r}), then B superseding it, then B forgotten, then A re-ingested "
            f"(answered {shown(_status(again, 0))}): a recall by the topic_key does not return A; re-asserting an old "
            f"fact reinstates it", reply, received={"ingest A again": again.received, "recall": reply.received})


@check("memoturn/in-batch-duplicate", spec="memoturn", bindings=LIVE, requirements=("memoturn/in-batch-duplicate",),
       title="The same memory twice in one batch is stored once; the second is a duplicate")
def in_batch_duplicate(ctx: Any) -> None:
    prof = profile("inbatch")
    m = model.new_memory("event", "twice in one batch", {"w": word()})
    reply = ingest(ctx, prof, [m, dict(m)], "one memory twice in a batch")
    ids = [reply.result(i).get("id") for i in (0, 1)]
    if ids[0] != ids[1]:
        say(ctx, "memoturn/in-batch-duplicate", f"the same memory twice in one batch got ids {ids}", reply)
    elif [_status(reply, 0), _status(reply, 1)] != ["created", "duplicate"]:
        say(ctx, "memoturn/in-batch-duplicate", f"statuses {[_status(reply, 0), _status(reply, 1)]}, not "
                                                f"['created', 'duplicate']", reply)


@check("memoturn/provenance", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/source-excluded-from-hash", "memoturn/first-writer-source-sticks",
                     "memoturn/supersession-profile-wide"),
       title="source is outside the hash, the first writer's attribution sticks, supersession is profile-wide")
def provenance(ctx: Any) -> None:
    ctx.credit_only_observed()  # a step that goes wrong ends the check: what it did not reach is not judged
    prof = profile("provenance")
    topic = f"user.{word('indent')}"
    tabs = {"indent": "tabs"}
    first = ingest(ctx, prof, [fact(topic, tabs, "prefers tabs", source="claude-code")], "a fact from claude-code")
    id_a = first.result().get("id")
    second = ingest(ctx, prof, [fact(topic, tabs, "prefers tabs", source="cursor")], "the same fact from cursor")
    if second.result().get("id") != id_a:
        say(ctx, "memoturn/source-excluded-from-hash", f"the same memory from another source got id "
                                                       f"{shown(second.result().get('id'))}, not {id_a!r}", second)
        ctx.note("the same memory from another source got another id: attribution and supersession were not tried")
        return
    ctx.observed("memoturn/source-excluded-from-hash")
    _expect_status(ctx, "memoturn/source-excluded-from-hash", second, 0, "duplicate",
                   "the same memory from another source")
    reply, rec = got(ctx, prof, id_a)
    if rec is not None:
        ctx.observed("memoturn/first-writer-source-sticks")
    if rec is not None and rec.get("source") != "claude-code":
        say(ctx, "memoturn/first-writer-source-sticks", f"after a duplicate from 'cursor', source is "
                                                        f"{shown(rec.get('source'))}, not the first writer's 'claude-code'", reply)
    spaces = ingest(ctx, prof, [fact(topic, {"indent": "spaces"}, "prefers spaces", source="cursor")],
                    "a fact of the same topic_key from cursor")
    if _superseded(spaces) != [id_a]:
        say(ctx, "memoturn/supersession-profile-wide", f"a fact from 'cursor' under the topic_key of one from "
                                                       f"'claude-code' superseded {shown(_superseded(spaces))}, not [{id_a!r}]", spaces)
        if "memoturn/first-writer-source-sticks" not in ctx.judged:
            ctx.note("the first fact was neither read back nor superseded: whose source it keeps was not seen")
        return
    ctx.observed("memoturn/supersession-profile-wide")
    revived = ingest(ctx, prof, [fact(topic, tabs, "prefers tabs", source="support-bot")], "the first fact from a third source")
    if _status(revived, 0) == "revived":
        reply, rec = got(ctx, prof, id_a)
        if rec is not None:
            ctx.observed("memoturn/first-writer-source-sticks")
        if rec is not None and rec.get("source") != "claude-code":
            say(ctx, "memoturn/first-writer-source-sticks", f"after a revive from 'support-bot', source is "
                                                            f"{shown(rec.get('source'))}, not 'claude-code'", reply)
    if "memoturn/first-writer-source-sticks" not in ctx.judged:
        ctx.note("the first fact was not read back after a duplicate or a revive: whose source it keeps was not seen")


@check("memoturn/batch-atomic", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/batch-atomic", "memoturn/type-enum", *ERRORS),
       title="A batch with one invalid memory is refused whole: none of its memories is stored")
def batch_atomic(ctx: Any) -> None:
    ctx.credit_only_observed()  # a batch taken whole is type-enum's failure: atomicity is then not judged
    http_only(ctx)
    prof = ready_profile(ctx, "atomic")
    good = model.new_memory("event", "the valid one", {"w": word()})
    bad = model.new_memory("opinion", "the invalid one", {"w": word()})
    reply = ctx.client.ingest(prof, [good, bad])
    # taking the invalid memory is type-enum's failure; atomicity then cannot be seen
    if not judge_refused(ctx, reply, rule="memoturn/type-enum", what="a batch whose second memory has type 'opinion'"):
        ctx.note("the batch with an invalid memory was accepted: whether a refused batch stores nothing was not seen")
        return
    _stored_alone(ctx, prof, good, "memoturn/batch-atomic", "the valid memory alone, afterwards")
    ctx.observed("memoturn/batch-atomic")


@check("memoturn/batch-cap", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/batch-cap", "memoturn/error-envelope", "memoturn/recall-k", "memoturn/type-enum",
                     "memoturn/batch-atomic"),
       title="A batch of 1,000 memories is accepted (and recalled whole with k 1,000), one of 1,001 refused whole, "
             "in the error envelope; 1,000 whose last is of no type of the four refused whole, storing nothing")
def batch_cap(ctx: Any) -> None:
    ctx.credit_only_observed()  # the envelope is judged on an HTTP refusal other than 413 (errors.md)
    http_only(ctx)
    ctx.observed("memoturn/batch-cap")
    prof = ready_profile(ctx, "cap")
    tag = word()
    # each summary also holds a word of its own, so a memory a recall of "cap" left out can be looked for alone
    over = [model.new_memory("event", f"cap {i} {tag}x{i}", {"i": i, "t": tag}) for i in range(model.BATCH_CAP + 1)]
    reply = ctx.client.ingest(prof, over)
    if judge_refused(ctx, reply, rule="memoturn/batch-cap", what=f"a batch of {len(over)} memories", code=None):
        if reply.binding == "http" and reply.status == 413:
            # errors.md lets a 413 from middleware come without the envelope: one that holds it is seen right
            if envelope_problem(reply) is None:
                ctx.observed("memoturn/error-envelope")
            else:
                ctx.note(f"the over-cap batch was refused 413, which errors.md lets come without the envelope "
                         f"({reply.describe()}): the envelope was not judged")
        _stored_alone(ctx, prof, over[-1], "memoturn/batch-cap", "one memory of the refused batch, alone")
    whole = profile("cap")
    refused = _bad_last_of_the_cap(ctx, prof, whole, over[:model.BATCH_CAP - 1])
    full = served(ctx.client.ingest(whole, over[:model.BATCH_CAP]))
    if not full.ok:
        say(ctx, "memoturn/batch-cap", f"a batch of exactly {model.BATCH_CAP} memories was refused", full)
    elif len(full.results() or []) != model.BATCH_CAP:
        say(ctx, "memoturn/batch-cap", f"a batch of {model.BATCH_CAP} answered {len(full.results() or [])} results", full)
    else:
        if refused:
            # the refused batch held these 999 memories: none of them was stored, so each is new here
            stored = [i for i in range(model.BATCH_CAP - 1) if _status(full, i) == "duplicate"]
            ctx.observed("memoturn/batch-atomic")
            if stored:
                say(ctx, "memoturn/batch-atomic", f"a batch of {model.BATCH_CAP} memories whose last had type 'bogus' "
                    f"was refused; the same {model.BATCH_CAP - 1} memories then sent with a valid last one answered "
                    f"'duplicate' for {len(stored)} of them (results[{stored[0]}] to results[{stored[-1]}]): the "
                    f"refused batch stored them", full,
                    received={"statuses": {str(i): _status(full, i) for i in (0, stored[0], stored[-1],
                                                                              model.BATCH_CAP - 1)}})
        _k_up_to_the_cap(ctx, whole, full, tag)


def _bad_last_of_the_cap(ctx: Any, control: str, fresh: str, memories: list[dict[str, Any]]) -> bool:
    """A batch of exactly 1,000 whose last memory has type 'bogus', into a profile never written: refused
    whole (a blind red team, round 26: the validation loop stopped at index 998, and batches over 500 were
    validated and committed in chunks of 500), and, refused, it creates no profile: where the namespace's
    profiles are listed and the listing names `control` (written before), it does not name `fresh`.
    True when it was refused (what it stored is judged on the same memories sent next, by the caller)."""
    bad = model.new_memory("event", "the one of no known type", {"w": word()}) | {"type": "bogus"}
    reply = ctx.client.ingest(fresh, [*memories, bad])
    if not judge_refused(ctx, reply, rule="memoturn/type-enum", code=None,
                         what=f"a batch of {len(memories) + 1} memories whose last has type 'bogus'"):
        return False
    listing = ctx.client.profiles()
    if not listing.ok or not mentions(listing.body, control):
        ctx.note(f"the namespace's profiles were not listed, or the listing does not name {control!r}, written before "
                 f"({listing.describe()}): whether the refused batch created its profile was not seen")
        return True
    ctx.observed("memoturn/batch-atomic")
    if mentions(listing.body, fresh):
        say(ctx, "memoturn/batch-atomic", f"a batch into the profile {fresh!r}, never written, was refused whole, and the "
                                          f"namespace's profile listing then names {fresh!r}: a refused batch leaves "
                                          f"nothing behind, its profile included (the profile auto-creates on first "
                                          f"ingest)", listing, sent={"ingest": f"{len(memories) + 1} memories, the "
                                                                               f"last of type 'bogus'"})
    return True


def _k_up_to_the_cap(ctx: Any, prof: str, full: Any, tag: str) -> None:
    """The 1,000 memories just written, each summary holding "cap": a recall of "cap" with k 1,000 answers all
    of them (api-rest.md: k clamps to 1,000, so every k up to it is honoured; a blind red team, round 26: k
    clamped at 100, and at 999). A shortfall is k's only where a memory left out is found by a word of its
    own (round 30: events that superseded each other, and a keyword scan of the first 100 rows, were charged
    to k; supersession and the keyword channel have checks of their own)."""
    rule = "memoturn/recall-k"
    reply = served(ctx.client.recall(prof, {"query": "cap", "k": model.BATCH_CAP}))
    hits = reply.memories() if reply.ok else None
    if hits is None:
        ctx.note(f"the recall of the 1,000 memories with k 1,000 was not answered with hits ({reply.describe()}): k up "
                 f"to the cap was not judged (recall is memoturn/recall-k's own check's)")
        return
    if len(hits) >= model.BATCH_CAP:
        ctx.observed(rule)
        return
    found = set(ids_of([h for h in hits if isinstance(h, dict)]))
    left_out = next((i for i in range(model.BATCH_CAP) if full.result(i).get("id") not in found), None)
    mid = full.result(left_out).get("id") if left_out is not None else None
    alone = served(ctx.client.recall(prof, {"query": f"{tag}x{left_out}", "k": 8})) if mid else None
    if alone is None or not alone.ok or mid not in ids_of([h for h in alone.memories() or [] if isinstance(h, dict)]):
        ctx.note(f"the recall of \"cap\" with k {model.BATCH_CAP} answered {len(hits)} of the {model.BATCH_CAP} "
                 f"memories holding it, and the memory it left out ({mid}, results[{left_out}]) is not found by a word "
                 f"of its own either: the shortfall is not k's (not judged here)")
        return
    ctx.observed(rule)
    say(ctx, rule, f"{model.BATCH_CAP} memories of this profile hold the word \"cap\" in their summary, and the "
                   f"recall of \"cap\" with k {model.BATCH_CAP} answered {len(hits)} hits, leaving out {mid} "
                   f"(results[{left_out}]), which a recall of its own word {tag}x{left_out} finds: k is honoured up "
                   f"to 1,000 (api-rest.md: k clamps to 1,000)", reply,
        received={"hits": len(hits), "ids (first 3)": ids_of([h for h in hits[:3] if isinstance(h, dict)])})


@check("memoturn/forget", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/forget-hard",),
       title="Forget removes the memory, active or superseded: GET answers not found, recall never returns it")
def forget(ctx: Any) -> None:
    prof = profile("forget")
    w = word("forget")
    topic = f"user.{word('k')}"
    old = ingest(ctx, prof, [fact(topic, {"v": 1}, f"{w} first")], "a fact").result().get("id")
    new = ingest(ctx, prof, [fact(topic, {"v": 2}, f"{w} second")], "its successor").result().get("id")
    chain = ((old, "a superseded fact"), (new, "an active fact"))
    present = {id for id, _ in chain if record(ctx, prof, id, "reading back before forget") is not None}
    if not present:
        raise NotApplicable("neither fact of the chain answers GET before forget: nothing to forget (judged by "
                            "memoturn/fact-supersession)")
    # The recall judged after the forget is made once before it too, as it will be made again: a server
    # answering a repeated recall from a cache that forget leaves alone serves the forgotten rows (a blind
    # red team, round 21: the cache was cleared by ingest only)
    recall_params = {"query": w, "include_superseded": True, "topic_key": topic}
    ctx.client.recall(prof, recall_params)
    # Both are forgotten, even one GET did not show (a server hiding superseded rows from GET is
    # memoturn/history-kept's finding): recall below is judged only on ids whose forget was accepted.
    forgotten = []
    for id, what in chain:
        reply = served(ctx.client.forget(prof, id))
        if not reply.ok:
            if id in present:
                say(ctx, "memoturn/forget-hard", f"forget of {what} {id!r} was refused", reply)
            continue
        forgotten.append(id)
        if id not in present:
            continue  # a GET that did not show it before says nothing after
        after = served(ctx.client.get(prof, id))
        # only a record answered is the memory still served: any not-found form, any refusal or error
        # is "gone" here (the shape of a not-found is memoturn/error-envelope's and mcp-get-not-found's)
        if after.ok and after.memory() is not None:
            say(ctx, "memoturn/forget-hard", f"after forgetting {what} {id!r} (accepted), GET still answers its "
                                             f"record", after)
    hits = ctx.client.recall(prof, recall_params)
    if hits.ok and hits.memories() is not None:
        left = [h.get("id") for h in hits.memories() if isinstance(h, dict) and h.get("id") in forgotten]
        if left:
            say(ctx, "memoturn/forget-hard", f"after forget of {left} was accepted, recall (include_superseded) still "
                                             f"returns them (the same recall, made before the forget too)", hits)
    # a fact of the topic after both were forgotten supersedes neither: the rows are gone (a blind red team,
    # round 26: the topic's active-row index still named the forgotten row)
    if forgotten:
        third = ctx.client.ingest(prof, [fact(topic, {"v": 3}, f"{w} third")])
        named = [i for i in _superseded(third) or [] if i in forgotten] if third.ok and isinstance(
            _superseded(third), list) else []
        if named:
            say(ctx, "memoturn/forget-hard", f"after forget of {forgotten} was accepted, a new fact under topic_key "
                                             f"{topic!r} reported superseding {named}: a forgotten row is gone", third)
    _forget_takes_its_own_entries(ctx)


def _forget_takes_its_own_entries(ctx: Any) -> None:
    """Forget removes the row, its FTS entry and its vector, and nothing of another row (a blind red team,
    round 26: the vector stayed, and a recall by it answered the forgotten memory; FTS entries were deleted by
    (type, topic_key), so forgetting a replaced fact unindexed the active one)."""
    rule = "memoturn/forget-hard"
    prof = profile("forget-own")
    vector = [0.6, 0.8]
    placed = ctx.client.ingest(prof, [model.new_memory("event", f"{word()} an event with its vector", {"w": word()},
                                                       embedding=vector)])
    vid = placed.result().get("id") if placed.ok else None
    gone = ctx.client.forget(prof, vid) if isinstance(vid, str) else None
    if gone is None or not gone.ok:
        ctx.note(f"an event with an embedding was not taken, or its forget not accepted "
                 f"({(gone or placed).describe()}): its vector after the forget was not judged")
    else:
        reply = ctx.client.recall(prof, {"embedding": vector, "include_superseded": True})
        hits = reply.memories() if reply.ok else None
        if hits is not None and vid in ids_of([h for h in hits if isinstance(h, dict)]):
            say(ctx, rule, f"after forget of {vid!r} was accepted, a recall by the very embedding it was ingested with "
                           f"answers it: forget deletes its vector", reply)
    topic = f"user.{word('k')}"
    wa, wb = word("old"), word("new")
    a = ingest(ctx, prof, [fact(topic, {"v": 1}, f"{wa} first")], "a fact").result().get("id")
    second = ingest(ctx, prof, [fact(topic, {"v": 2}, f"{wb} second")], "its successor")
    b = second.result().get("id")
    before = ctx.client.recall(prof, {"query": wb})
    if _superseded(second) != [a] or not before.ok or b not in ids_of([h for h in before.memories() or []
                                                                       if isinstance(h, dict)]):
        ctx.note(f"the successor did not supersede the fact, or a recall of {wb!r} did not find it before any forget "
                 f"({before.describe()}): forgetting the replaced fact was not judged against it")
        return
    gone = ctx.client.forget(prof, a)
    if not gone.ok:
        return  # a refused forget of a superseded fact is the forget check's, above
    reply = ctx.client.recall(prof, {"query": wb})
    hits = reply.memories() if reply.ok else None
    if hits is not None and b not in ids_of([h for h in hits if isinstance(h, dict)]):
        say(ctx, rule, f"a fact {a!r} and its successor {b!r} under topic_key {topic!r}: a recall of {wb!r}, a word of "
                       f"the successor's summary, found it; after forget of {a!r} (the replaced one) was accepted, the "
                       f"same recall does not: forget removes its own row's FTS entry, no other", reply)


@check("memoturn/profile-isolation", spec="memoturn", bindings=LIVE, requirements=("memoturn/profile-isolation",),
       title="Two profiles holding the same memory: forget, supersession, GET, recall and ending a session in one "
             "leave the other as it was")
def profile_isolation(ctx: Any) -> None:
    rule = "memoturn/profile-isolation"
    ctx.credit_only_observed()  # each part is judged only where what it provokes was accepted
    alice, bob = profile("alice"), profile("bob")
    w, topic, s = word("iso"), f"user.{word('k')}", f"s-{word('s')}"
    shared = fact(topic, {"diet": "vegetarian", "w": w}, f"{w} vegetarian")
    task = model.new_memory("task", f"{w} call back", {"w": w}, session_id=s)
    event = model.new_memory("event", f"{w} signed up", {"w": w})
    mine = ingest(ctx, alice, [shared, task, event], "a fact, a task of a session and an event into the first profile")
    theirs = ingest(ctx, bob, [shared, task, event], "the same three into a second profile")
    fact_id, task_id = theirs.result(0).get("id"), theirs.result(1).get("id")
    reply, rec = got(ctx, alice, mine.result(0).get("id"))
    ctx.observed(rule)
    if rec is None or rec.get("superseded_by") is not None:
        say(ctx, rule, f"after the same fact was ingested into {bob!r}, the fact of {alice!r} is "
                       f"{'gone' if rec is None else 'superseded by ' + shown(rec.get('superseded_by'))}", reply)
    private = ingest(ctx, alice, [model.new_memory("event", f"{w} opened a ticket", {"w": word()})],
                     "an event into the first profile only").result().get("id")
    reply, rec = got(ctx, bob, private)
    ctx.observed(rule)
    if rec is not None:
        say(ctx, rule, f"GET in {bob!r} answers {private}, ingested into {alice!r} only", reply)
    reply = ctx.client.recall(bob, {"query": w})
    if reply.ok and private in ids_of([h for h in reply.memories() or [] if isinstance(h, dict)]):
        say(ctx, rule, f"recall in {bob!r} by {w!r} answers {private}, ingested into {alice!r} only", reply)
    _namespace_apart(ctx, alice, private, w)
    # the topic and vector channels too: a fact with a topic_key and an embedding, in the first only
    t2, vec = f"user.{word('k')}", [0.0, 0.0, 0.6, 0.8]
    lone = ctx.client.ingest(alice, [fact(t2, {"w": word()}, f"{word()} private fact", embedding=vec)])
    lone_id = lone.result().get("id") if lone.ok else None
    for what, params in (("topic_key", {"topic_key": t2}), ("embedding", {"embedding": vec})):
        if not isinstance(lone_id, str):
            break
        reply = ctx.client.recall(bob, params)
        if reply.ok and lone_id in ids_of([h for h in reply.memories() or [] if isinstance(h, dict)]):
            say(ctx, rule, f"recall in {bob!r} by {what} answers {lone_id}, a fact ingested into {alice!r} only",
                reply)
    # supersession is profile-wide, not wider
    newer = ingest(ctx, alice, [fact(topic, {"diet": "vegan", "w": w}, f"{w} vegan")],
                   "a newer fact of the same topic_key into the first profile")
    if newer.result().get("id") != fact_id:
        reply, rec = got(ctx, bob, fact_id)
        if rec is None or rec.get("superseded_by") is not None:
            say(ctx, rule, f"after a newer fact of topic_key {topic!r} was ingested into {alice!r}, the fact "
                           f"{fact_id} of {bob!r} is {'gone' if rec is None else 'superseded by ' + shown(rec.get('superseded_by'))}",
                reply)
    # the same id in both: forgetting it, or ending its session, in one profile leaves the other's
    _kept_elsewhere(ctx, ctx.client.forget(alice, mine.result(0).get("id")), bob, fact_id,
                    f"forgetting {fact_id} in {alice!r}")
    # and the other way: a forget that takes whichever profile holds the id first takes the first's
    shared_event = mine.result(2).get("id")
    if theirs.result(2).get("id") == shared_event:
        _kept_elsewhere(ctx, ctx.client.forget(bob, shared_event), alice, shared_event,
                        f"forgetting {shared_event} in {bob!r}")
    if ctx.binding == "http":
        _kept_elsewhere(ctx, ctx.client.end_session(alice, s), bob, task_id, f"ending session {s!r} in {alice!r}")


def _namespace_apart(ctx: Any, prof: str, id: str, w: str) -> None:
    """The profile of the same name in another namespace is another database: GET and recall there find
    nothing of `prof`'s (a blind red team's server, round 30, kept its stores by profile name alone). A
    node whose credential covers one namespace may refuse the other: then nothing is seen."""
    here = ctx.client.namespace
    there = f"{here}-elsewhere"
    other = ctx.client.in_namespace(there)
    reply = other.get(prof, id)
    rec = reply.memory() if reply.ok else None
    if not reply.ok and not reply.missing:
        ctx.note(f"GET in namespace {there!r} was not served ({reply.describe()}): whether namespaces are kept "
                 f"apart was not seen")
        return
    ctx.observed("memoturn/profile-isolation")
    if rec is not None:
        say(ctx, "memoturn/profile-isolation", f"GET of {id} in {there}/{prof} answers the memory ingested into "
                                               f"{here}/{prof} only: a profile of the same name in another namespace "
                                               "is another database", reply)
    reply = other.recall(prof, {"query": w})
    if reply.ok and id in ids_of([h for h in reply.memories() or [] if isinstance(h, dict)]):
        say(ctx, "memoturn/profile-isolation", f"recall in {there}/{prof} by {w!r} answers {id}, ingested into "
                                               f"{here}/{prof} only", reply)


def _kept_elsewhere(ctx: Any, done: Any, other: str, id: str, what: str) -> None:
    """After `what` (answered `done`) in one profile, `other`'s memory of the same id is still there."""
    if not done.ok:
        ctx.note(f"{what} was not accepted ({done.describe()}): what it does to another profile was not seen")
        return
    reply, rec = got(ctx, other, id)
    ctx.observed("memoturn/profile-isolation")
    if rec is None:
        say(ctx, "memoturn/profile-isolation", f"after {what}, GET of the same memory {id} in {other!r} answers no "
                                               "record", reply)


@check("memoturn/errors", spec="memoturn", bindings=HTTP, requirements=ERRORS,
       title="Malformed and invalid requests are 400 invalid_request in the envelope; an unknown id is 404 not_found")
def errors(ctx: Any) -> None:
    ctx.credit_only_observed()  # judge_refused credits the envelope and codes only on a refusal it read
    prof = ready_profile(ctx, "errors")
    for what, payload in (("a body that is not JSON", b'{"memories": [}'),
                          ("`memories` that is not an array", {"memories": {"type": "fact"}}),
                          ("a memory that is not an object", {"memories": ["a string"]}),
                          ("a body that is a JSON array", [{"type": "fact"}])):
        judge_refused(ctx, ctx.client.send_raw("ingest", prof, payload), rule="memoturn/error-codes", what=what)
    judge_refused(ctx, ctx.client.send_raw("recall", prof, b"not json"), rule="memoturn/error-codes",
                  what="a recall body that is not JSON")
    reply = ctx.client.get(prof, "mem_" + "f" * 32)
    if reply.not_served and reply.status == 404 and _get_route_served(ctx, prof):
        # the route answers a known id's record, so this 404 is the not-found refusal, whatever its body
        # (a blind red team, round 26: a nested {"error": {"code", "message"}} read as a route not served)
        reply = replace(reply, not_served=False)
    judge_refused(ctx, served(reply), rule="memoturn/error-codes", what="GET of an id never ingested",
                  code="not_found", status=404)
    # lookups that miss in other places: a profile never written is a lookup miss too
    # (a bare 404 reads as a route not served: noted, never a verdict, and the rest still judged)
    nobody = profile("never-written")
    reply = ctx.client.get(nobody, "mem_" + "e" * 32)
    if reply.not_served:
        ctx.note(f"GET in a profile never written answered {reply.describe()}: no envelope to judge")
    else:
        judge_refused(ctx, reply, rule="memoturn/error-codes", what="GET in a profile never written",
                      code="not_found", status=404)
    # answers the page leaves open (deleting what is not there may succeed; an unknown type may be
    # refused or match nothing), so only a server error and, on a refusal, its envelope are judged
    for what, reply in (("DELETE of an id never ingested", ctx.client.forget(prof, "mem_" + "d" * 32)),
                        ("a recall whose types filter names an unknown type",
                         ctx.client.recall(prof, {"query": "anything", "types": ["opinion"]}))):
        _answered_or_refused(ctx, what, reply)
    _bad_input_never_5xx(ctx, prof)


def _answered_or_refused(ctx: Any, what: str, reply: Any) -> None:
    """An answer the page leaves open: taken, or refused in the envelope; never a server error."""
    if reply.ok:
        observe(ctx, "memoturn/no-server-error")
    elif reply.not_served:
        ctx.note(f"{what} answered {reply.describe()}: no envelope to judge")
    else:
        judge_refused(ctx, reply, rule="memoturn/error-codes", what=what, code=None)


def _get_route_served(ctx: Any, prof: str) -> bool:
    """Whether GET of a memory the profile holds answers its record (the route is there)."""
    placed = ctx.client.ingest(prof, [model.new_memory("event", "a memory to read back", {"w": word()})])
    mid = placed.result().get("id") if placed.ok else None
    if not isinstance(mid, str):
        return False
    reply = ctx.client.get(prof, mid)
    return reply.ok and reply.memory() is not None


def _bad_input_never_5xx(ctx: Any, prof: str) -> None:
    """Values of the wrong type, or that a naive engine chokes on, where the page leaves open whether they
    are refused or read: only a server error (5xx) is judged, and a refusal's envelope (a blind red team,
    round 26: a numeric summary, an embedding of strings, k 2.5, an all-zero query embedding and an
    unbalanced double quote in a query each answered 500)."""
    placed = ctx.client.ingest(prof, [model.new_memory("event", 'say "hi" to Dana', {"w": word()},
                                                       embedding=[1.0, 0.0])])
    if not placed.ok:
        ctx.note(f"an event with a 2-dim embedding was not taken ({placed.describe()}): the recalls below meet "
                 "no vector and no quoted summary")
    cases = (("an ingest whose summary is the number 42", "ingest",
              [model.new_memory("event", "x", {"x": word()}) | {"summary": 42}]),
             ("an ingest whose embedding is [\"a\", \"b\"]", "ingest",
              [model.new_memory("event", "vec", {"x": word()}) | {"embedding": ["a", "b"]}]),
             ("a recall with k 2.5", "recall", {"query": "say", "k": 2.5}),
             ("a recall by the all-zero embedding [0.0, 0.0]", "recall", {"embedding": [0.0, 0.0]}),
             ('a recall by the query `say "hi` (an unbalanced double quote)', "recall", {"query": 'say "hi'}))
    for what, op, payload in cases:
        reply = ctx.client.ingest(prof, payload) if op == "ingest" else ctx.client.recall(prof, payload)
        _answered_or_refused(ctx, what, reply)
