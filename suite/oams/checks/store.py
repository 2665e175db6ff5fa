"""STORE (§2, §3): the five operations answer at their paths / methods, the stored memory comes back
as sent with its timestamps, upsert and idempotence on (namespace, key), invalid memories and
namespaces refused."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from memconform.suite.oams import model
from memconform.suite.oams.checks._common import (LIVE, MEMORY_ABOUT, find, judge_error, key, listed,
                                                  memory_rules_held, namespace, precondition, recalled,
                                                  same_instant, say, unjudged)
from memconform.suite.oams.client import OPERATIONS
from memconform.suite.registry import check

SHAPE_RULES = ("oams/key-required", "oams/namespace-required", "oams/value-string", "oams/timestamps-utc",
               "oams/updated-not-before-created", "oams/tags-strings", "oams/metadata-object", "oams/provenance-fields",
               "oams/embedding-floats", "oams/embedding-model-required")
ENDPOINTS = {"store": "oams/store-endpoint", "recall": "oams/recall-endpoint", "list": "oams/list-endpoint",
             "forget": "oams/forget-endpoint", "batch_store": "oams/batch-endpoint"}


def where_op(ctx: Any, op: str) -> str:
    rest, method = OPERATIONS[op]
    return rest if ctx.binding == "http" else method


@check("oams/operations-served", spec="oams", bindings=LIVE,
       requirements=("oams/five-operations", *ENDPOINTS.values()),
       title="STORE, RECALL, LIST, FORGET and BATCH_STORE all answer at their §3 paths / methods")
def operations_served(ctx: Any) -> None:
    """One call of each operation on a fresh namespace. An operation that is not there (404/405, or
    -32601) or that answers an error fails its endpoint rule and oams/five-operations; a server of
    another draft (other paths, other field names) is told so, field by field."""
    c = ctx.client
    ns, k1, k2 = namespace(ctx, tag="ops"), key("ops"), key("ops")
    memory = model.new_memory(ns, k1, "operations check: aardvark")
    replies = {
        "store": c.store(memory),
        "batch_store": c.batch_store([model.new_memory(ns, k2, "operations check: batch aardvark")]),
        "recall": c.recall({"namespace": ns, "query": "aardvark"}),
        "list": c.list(ns),
    }
    stored = k1 if replies["store"].ok else k2 if replies["batch_store"].ok else None
    replies["forget"] = c.forget(ns, stored or k1)
    missing = []
    for op, reply in replies.items():
        rule = ENDPOINTS[op]
        if reply.not_served:
            missing.append(where_op(ctx, op))
            say(ctx, rule, f"{where_op(ctx, op)} is not served", reply)
        elif op == "forget" and stored is None and reply.error_code == model.MEMORY_NOT_FOUND:
            continue  # nothing was stored to forget: a refusal of an unknown key is right
        elif not reply.ok and not (op == "forget" and reply.status == 204):
            say(ctx, rule, f"{where_op(ctx, op)} answered an error to a well-formed request", reply)
        elif op == "store" and (not isinstance(reply.result, dict)
                                or any(f not in reply.result for f in ("key", "namespace", "value"))):
            say(ctx, rule, f"{where_op(ctx, op)} answered something that is not an OAMS 0.1 memory, field by field: "
                           f"{model.shape_report(reply.result)}", reply)
    if missing:
        note = (" — none of the five operations is where OAMS 0.1 puts it: this server does not speak OAMS 0.1's "
                "REST binding (an earlier draft has other paths and field names)" if len(missing) == 5 else "")
        say(ctx, "oams/five-operations", f"not served: {', '.join(missing)}{note}")


@check("oams/store-returns-memory", spec="oams", bindings=LIVE,
       requirements=("oams/store-returns-stored", "oams/updated-equals-created", *SHAPE_RULES),
       title="STORE answers the stored memory, as sent, with equal server-assigned timestamps")
def store_returns_memory(ctx: Any) -> None:
    # the shape rules are judged on what STORE answers: a member it leaves out is not judged here
    # (its absence is oams/store-returns-stored's finding)
    ctx.credit_only_observed()
    ns = namespace(ctx, tag="store")
    # confidence 0.1 has no exact float32: a store keeping metadata numbers as float32 answers
    # 0.10000000149011612 (found by the blind red team, seen by the interop matrix alone until then)
    sent = [
        model.new_memory(ns, key("store"), "# Notes\n\n**Markdown** value — ünïcödé ✓\nsecond line",
                         tags=["research", "memory"], metadata={"value_type": "markdown", "confidence": 0.1,
                                                                "language": "en", "nested": {"a": [1, 2, None], "ok": True},
                                                                # nine digits: a store rounding metadata numbers
                                                                # (to 4 places: round 18's) answers 0.1235
                                                                "weight": 0.123456789},
                         source_id="https://example.com/article?x=1#frag", parent_id=None),
        model.new_memory(ns, key("store.v"), "with a vector", embedding_model="text-embedding-3-small",
                         embedding=[0.0123, -0.0456, 0.5], source_id=None),
    ]
    for memory in sent:
        asked = datetime.now(timezone.utc)
        reply = ctx.client.store(memory)
        answered = datetime.now(timezone.utc)
        precondition(reply, "STORE of a valid memory")
        got = reply.result
        _judge_assigned_time(ctx, got, asked, answered, reply)
        for p in model.memory_problems(got):
            if p.requirement in ctx.check.requirements:
                say(ctx, p.requirement, f"the stored memory STORE answered is not valid: {p} "
                                        f"({model.shape_report(got)})", reply)
        ctx.observed(*(memory_rules_held([got]) & set(SHAPE_RULES)), "oams/store-returns-stored")
        diffs = model.same_memory_fields(memory, got)
        if diffs:
            say(ctx, "oams/store-returns-stored", "STORE's answer is not the memory as sent: " + "; ".join(diffs), reply)
        if isinstance(got, dict):
            if "created_at" not in got or "updated_at" not in got:
                say(ctx, "oams/store-returns-stored", "STORE without timestamps answered no server-assigned "
                                                      f"created_at/updated_at ({model.shape_report(got)})", reply)
            elif model.parse_time(got["created_at"]) and model.parse_time(got["updated_at"]):
                ctx.observed("oams/updated-equals-created")
                if not same_instant(got["created_at"], got["updated_at"]):
                    say(ctx, "oams/updated-equals-created", f"a memory written once has created_at "
                                                            f"{got['created_at']} but updated_at {got['updated_at']}",
                        reply)
        back = find(listed(ctx, ns), memory["key"])
        if back is None:
            say(ctx, "oams/store-returns-stored", f"the stored memory {memory['key']!r} is not in LIST of {ns!r}")
        else:
            diffs = model.same_memory_fields(memory, back, read=True)
            if diffs:
                say(ctx, "oams/store-returns-stored", "LIST reads back a memory other than the one stored: "
                                                      + "; ".join(diffs), sent=memory, received=back)
    _awkward_round_trips(ctx)
    _kept_whole(ctx)
    _confidence_zero(ctx, ns)
    unjudged(ctx, "STORE's answers", {**MEMORY_ABOUT, "oams/updated-equals-created": "memory with both timestamps "
                                                                                   "valid"})


#: How far a server-assigned time may be from this machine's clock (two clocks, and the request's own
#: time): a local time written as UTC is off by the zone's offset, an hour or more for most zones.
CLOCK_SLACK = timedelta(minutes=30)


def _judge_assigned_time(ctx: Any, got: Any, asked: datetime, answered: datetime, reply: Any) -> None:
    """A created_at the server assigned is the time of this write, in UTC (found by the blind red team:
    local time labelled Z, two hours ahead)."""
    created = model.parse_time(got.get("created_at")) if isinstance(got, dict) else None
    if created is None:
        return  # absent or not RFC 3339 UTC: judged with the shape rules above
    if not asked - CLOCK_SLACK <= created <= answered + CLOCK_SLACK:
        ahead = created - answered if created > answered else -(asked - created)
        hours = ahead.total_seconds() / 3600
        say(ctx, "oams/timestamps-utc", f"STORE without timestamps answered created_at {got['created_at']}, "
                                        f"{abs(hours):.1f} h {'ahead of' if hours > 0 else 'behind'} this machine's "
                                        f"clock ({answered.strftime('%Y-%m-%dT%H:%M:%SZ')} when the answer came): the "
                                        f"time of the write, in UTC, is within {CLOCK_SLACK.seconds // 60} minutes of "
                                        f"it (a local time labelled UTC?)", reply)


def _awkward_round_trips(ctx: Any) -> None:
    """Memories a careless store changes on the way (found by the blind red team, each seen only by the
    state machine or not at all): a key holding `/`, `%` and non-ASCII (a REST router that never
    percent-decodes it), a value with astral characters and trailing white space (utf8mb3 storage, a
    trim), a namespace whose scope has capitals (a case-folding collation), a value in decomposed form
    (Unicode normalization to NFC on ingest). Each must come back, from
    STORE and from LIST, exactly as sent. One the server refuses is noted, not judged: a server may
    restrict what it takes as a key or a scope."""
    cases = (
        ("a key holding '/', '%' and non-ASCII", model.new_memory(namespace(ctx, tag="store"), f"{key('awk')}/a%2Fb-ключ",
                                                                  "a memory under an awkward key")),
        ("a value with astral characters and trailing white space",
         model.new_memory(namespace(ctx, tag="store"), key("awk.v"), "rocket \U0001F680 launch \U0001D11E\n\n  ")),
        ("a namespace whose scope has capitals", model.new_memory(namespace(ctx, tag="Store-Scope"), key("awk.ns"),
                                                                  "a memory in a capitalised scope")),
        # decomposed text is text as sent: a store that normalizes to NFC changes the value's code points
        ("a value with decomposed characters (e + U+0301 COMBINING ACUTE ACCENT, not NFC)",
         model.new_memory(namespace(ctx, tag="store"), key("awk.nfd"), "Rene\u0301e's cafe\u0301")),
    )
    for what, memory in cases:
        reply = ctx.client.store(memory)
        if not reply.ok:
            ctx.note(f"STORE of {what} was refused ({reply.describe()}); not judged: a server may restrict keys and "
                     f"scopes")
            continue
        _read_back(ctx, what, memory, reply, ("key", "namespace", "value"), sent=memory)


def _confidence_zero(ctx: Any, ns: str) -> None:
    """metadata.confidence 0.0 is the lower bound of §2's "(0.0–1.0)", inside the range (round 25: a range
    check written 0 < c <= 1 refused it with -32003). STORE takes it and answers it."""
    memory = model.new_memory(ns, key("conf0"), "a memory held with no confidence", metadata={"confidence": 0.0})
    reply = ctx.client.store(memory)
    if not reply.ok:
        say(ctx, "oams/metadata-object", "STORE of a memory whose metadata.confidence is 0.0 was refused: §2 gives "
                                         "confidence the range (0.0–1.0), and 0.0 is its lower bound, inside it",
            reply)
        return
    ctx.observed("oams/metadata-object")
    got = reply.result.get("metadata") if isinstance(reply.result, dict) else None
    if not isinstance(got, dict) or got.get("confidence") != 0:
        say(ctx, "oams/metadata-object", f"STORE of metadata {{\"confidence\": 0.0}} answered metadata {got!r}: "
                                         "0.0 is inside §2's range (0.0–1.0), to be kept", reply)


#: A value past 65,535 characters (a TEXT column of 64 KiB) and a source_id past 255 (a VARCHAR(255)).
LONG_VALUE, LONG_SOURCE = 70_000, 307


def _kept_whole(ctx: Any) -> None:
    """Round 25 (a blind red team's server): a key in decomposed form (NFD; a store normalizing keys
    to NFC makes it another key), a key holding '%25' sent on REST with the key in the path alone
    (a router percent-decoding twice stores '%'), a value of 70,000 characters (cut to 65,535) and a
    307-character source_id (cut to 255). Each comes back from STORE and LIST as sent; a refusal is
    noted, not judged (a server may bound keys and values, or want the key in the body)."""
    ns = namespace(ctx, tag="store")
    long_source = "sha256:" + "a" * (LONG_SOURCE - len("sha256:"))
    cases = (
        ("a key in decomposed form (cafe + U+0301 COMBINING ACUTE ACCENT, not NFC)",
         model.new_memory(ns, f"{key('nfd')}-cafe\u0301", "a memory under a decomposed key"), ("key", "value")),
        ("a key holding '%25' (sent percent-encoded, %2525)",
         model.new_memory(ns, f"{key('pct')}-50%25off", "a memory under a key with %25"), ("key", "value")),
        (f"a value of {LONG_VALUE} characters", model.new_memory(ns, key("long.v"), "x" * LONG_VALUE), ("key", "value")),
        (f"a source_id of {LONG_SOURCE} characters",
         model.new_memory(ns, key("long.s"), "a memory with a long source", source_id=long_source),
         ("key", "value", "source_id")),
    )
    for what, memory, fields in cases:
        body = memory
        if ctx.binding == "http" and "%" in memory["key"]:
            # REST carries the pair in the path: a body holding the key too would be compared with
            # the path's decoding, and a disagreement refused, hiding what the path decoded to
            body = {k: v for k, v in memory.items() if k not in ("key", "namespace")}
        reply = ctx.client.store(body, namespace=memory["namespace"], key=memory["key"])
        if not reply.ok:
            ctx.note(f"STORE of {what} was refused ({reply.describe()[:300]}); not judged: a server may bound keys, "
                     "values and source_ids, or want the key in the body")
            continue
        _read_back(ctx, what, memory, reply, fields, sent=body)


def _read_back(ctx: Any, what: str, memory: dict[str, Any], reply: Any, fields: tuple[str, ...], *,
               sent: Any) -> None:
    """A STORE taken: its answer, and LIST of the memory's namespace, show `fields` as sent."""
    ctx.observed("oams/store-returns-stored")
    diffs = _with_lengths(model.same_memory_fields(memory, reply.result, fields), memory, reply.result, fields)
    if diffs:
        say(ctx, "oams/store-returns-stored", f"STORE of {what}: the answer is not the memory as sent: "
                                              + "; ".join(diffs), reply)
    ns = memory["namespace"]
    items = listed(ctx, ns)
    back = find(items, memory["key"])
    if back is None:
        say(ctx, "oams/store-returns-stored", f"STORE of {what} answered success, but LIST of {ns!r} holds no "
                                              f"memory with the key {memory['key']!r} (keys listed: "
                                              f"{[m.get('key') for m in items if isinstance(m, dict)]})",
            sent=sent, received=items)
        return
    diffs = _with_lengths(model.same_memory_fields(memory, back, fields), memory, back, fields)
    if diffs:
        say(ctx, "oams/store-returns-stored", f"STORE of {what}: LIST reads back another memory: "
                                              + "; ".join(diffs), sent=sent, received=back)


def _with_lengths(diffs: list[str], sent: dict[str, Any], got: Any, fields: tuple[str, ...]) -> list[str]:
    """The differences, with the lengths of long strings that differ (their excerpts look alike)."""
    if not diffs or not isinstance(got, dict):
        return diffs
    return diffs + [f"`{f}` sent {len(sent[f])} characters, came back {len(got[f])}" for f in fields
                    if isinstance(sent.get(f), str) and isinstance(got.get(f), str) and len(sent[f]) > 200
                    and len(got[f]) != len(sent[f])]


@check("oams/store-given-timestamps", spec="oams", bindings=LIVE, requirements=("oams/store-keeps-given-timestamps",),
       title="A STORE that provides created_at / updated_at keeps them")
def store_given_timestamps(ctx: Any) -> None:
    ns = namespace(ctx, tag="times")
    memory = model.new_memory(ns, key("times"), "dated", created_at="2026-01-02T03:04:05Z",
                              updated_at="2026-02-03T04:05:06.5Z")
    reply = ctx.client.store(memory)
    precondition(reply, "STORE with given timestamps")
    for name in ("created_at", "updated_at"):
        got = reply.result.get(name) if isinstance(reply.result, dict) else None
        if not same_instant(got, memory[name]):
            say(ctx, "oams/store-keeps-given-timestamps", f"{name} was sent {memory[name]}, answered {got!r}", reply)
    back = find(listed(ctx, ns), memory["key"]) or {}
    for name in ("created_at", "updated_at"):
        if not same_instant(back.get(name), memory[name]):
            say(ctx, "oams/store-keeps-given-timestamps", f"{name} was sent {memory[name]}, LIST reads "
                                                          f"{back.get(name)!r}", sent=memory, received=back)
    # BATCH_STORE writes many memories (what an import of an export sends): the times they give are
    # theirs too (found by the blind red team: a batch that dropped them was blamed on the filters)
    batch = [model.new_memory(ns, key("times.b"), f"dated in a batch {i}", created_at=f"2026-01-0{i + 2}T03:04:05Z",
                              updated_at=f"2026-02-0{i + 3}T04:05:06.5Z") for i in range(2)]
    reply = ctx.client.batch_store(batch)
    if not reply.ok:
        ctx.note(f"BATCH_STORE of memories with given timestamps was refused ({reply.describe()}); judged by "
                 "oams/batch-returns and oams/batch-atomic, not here")
        return
    items = listed(ctx, ns)
    for m in batch:
        back = find(items, m["key"]) or {}
        wrong = [f"{name} was sent {m[name]}, LIST reads {back.get(name)!r}" for name in ("created_at", "updated_at")
                 if not same_instant(back.get(name), m[name])]
        if wrong:
            say(ctx, "oams/store-keeps-given-timestamps", f"BATCH_STORE of {m['key']!r}: " + "; ".join(wrong), reply,
                received=back)
    _offset_times_kept_as_instant(ctx, ns)


#: Times given with a +02:00 offset, and the instant they name (round 25: a server dropping the offset
#: stored the wall clock with 'Z', 2026-01-01T12:00:00Z, two hours later)
OFFSET_TIME, OFFSET_INSTANT = "2026-01-01T12:00:00+02:00", "2026-01-01T10:00:00Z"


def _offset_times_kept_as_instant(ctx: Any, ns: str) -> None:
    """§2 asks times "RFC 3339 timestamp, UTC": a STORE giving them with an offset may be refused
    (oams/invalid-memory-refused judges that, and a time kept with its offset); one taken and stored in
    UTC keeps the instant given, here and in LIST. A UTC time at another instant is not the time provided."""
    memory = model.new_memory(ns, key("times.o"), "dated with an offset", created_at=OFFSET_TIME,
                              updated_at=OFFSET_TIME)
    reply = ctx.client.store(memory)
    if not reply.ok:
        ctx.note(f"STORE of times given as {OFFSET_TIME} was refused ({reply.describe()[:200]}): §2 asks UTC, so a "
                 "refusal is a reading (its code is oams/invalid-memory-refused's)")
        return
    back = find(listed(ctx, ns), memory["key"])
    want = model.parse_time(OFFSET_INSTANT)
    wrong = [f"{where} has {name} {got[name]}" for where, got in (("the answer", reply.result), ("LIST", back))
             if isinstance(got, dict) for name in ("created_at", "updated_at")
             if (t := model.parse_time(got.get(name))) is not None and t != want]
    if wrong:
        say(ctx, "oams/store-keeps-given-timestamps", f"STORE gave created_at and updated_at {OFFSET_TIME} (the "
                                                      f"instant {OFFSET_INSTANT}) and was taken; " + "; ".join(wrong)
            + f": a time provided with an offset is refused, or kept as its instant ({OFFSET_INSTANT} in UTC), never "
              "moved (its wall clock read as UTC is another instant)", reply, received={"answer": reply.result,
                                                                                        "listed": back})


@check("oams/store-idempotent", spec="oams", bindings=LIVE, requirements=("oams/store-idempotent", "oams/ns-key-unique"),
       title="Repeating an identical STORE leaves one memory, value and created_at unchanged")
def store_idempotent(ctx: Any) -> None:
    ctx.credit_only_observed()  # a refused repeat leaves nothing to count under the pair
    ns = namespace(ctx, tag="idem")
    memory = model.new_memory(ns, key("idem"), "stored twice", tags=["x"])
    first = ctx.client.store(memory)
    precondition(first, "the first STORE")
    before = find(listed(ctx, ns), memory["key"]) or {}
    second = ctx.client.store(memory)
    if not second.ok:
        say(ctx, "oams/store-idempotent", "repeating an identical STORE was refused", second)
        ctx.note("the repeated STORE was refused: how many memories the pair holds was not judged")
        return
    ctx.observed("oams/store-idempotent", "oams/ns-key-unique")  # the repeat taken; LIST's count is compared below
    if isinstance(second.result, dict) and second.result.get("value") != memory["value"]:
        say(ctx, "oams/store-idempotent", "the value changed on an identical repeat", second)
    items = listed(ctx, ns)
    same = [m for m in items if isinstance(m, dict) and m.get("key") == memory["key"]]
    if len(same) != 1:
        say(ctx, "oams/ns-key-unique", f"after two STOREs of ({ns!r}, {memory['key']!r}) LIST holds {len(same)} "
                                       "memories with that pair", sent=memory, received=items)
    elif model.parse_time(before.get("created_at")) and not same_instant(before.get("created_at"),
                                                                          same[0].get("created_at")):
        say(ctx, "oams/store-idempotent", f"created_at moved from {before.get('created_at')} to "
                                          f"{same[0].get('created_at')} on an identical repeat", second)


#: The times the upsert check's first STORE gives: far in the past, so the update's own time is later
#: whatever the server's clock resolution (found by the blind red team: an update that kept the first
#: write's updated_at was not seen while both writes fell within one clock tick)
FIRST_WRITE = "2020-01-01T00:00:00Z"


@check("oams/store-upsert", spec="oams", bindings=LIVE, requirements=("oams/store-upsert", "oams/ns-key-unique"),
       title="STORE of a new value on an existing pair replaces it, keeping created_at and moving updated_at to "
             "the update's time")
def store_upsert(ctx: Any) -> None:
    ctx.credit_only_observed()  # a refused upsert leaves nothing to count under the pair
    ns = namespace(ctx, tag="upsert")
    k = key("upsert")
    first = ctx.client.store(model.new_memory(ns, k, "old value", source_id="https://a.example/first",
                                              created_at=FIRST_WRITE, updated_at=FIRST_WRITE))
    precondition(first, "the first STORE")
    a = find(listed(ctx, ns), k) or {}
    # the source changes too: an upsert that keeps the old row's provenance is found by the blind red team
    memory = model.new_memory(ns, k, "new value", source_id="https://a.example/second")
    second = ctx.client.store(memory)
    if not second.ok:
        say(ctx, "oams/store-upsert", "STORE of a new value on an existing (namespace, key) was refused", second)
        ctx.note("the upsert was refused: how many memories the pair holds was not judged")
        return
    ctx.observed("oams/store-upsert", "oams/ns-key-unique")  # the answer's value and LIST's count are compared below
    b = second.result if isinstance(second.result, dict) else {}
    if b.get("value") != "new value":
        say(ctx, "oams/store-upsert", f"the answer's value is {b.get('value')!r}, not the new one", second)
    items = listed(ctx, ns)
    same = [m for m in items if isinstance(m, dict) and m.get("key") == k]
    if len(same) != 1:
        say(ctx, "oams/ns-key-unique", f"LIST holds {len(same)} memories with ({ns!r}, {k!r}) after an upsert",
            sent=memory, received=items)
    elif same[0].get("value") != "new value":
        say(ctx, "oams/store-upsert", f"LIST reads the value {same[0].get('value')!r} after the upsert",
            sent=memory, received=same[0])
    elif same[0].get("source_id") != memory["source_id"]:
        say(ctx, "oams/store-upsert", f"LIST reads source_id {same[0].get('source_id', '<missing>')!r} after an upsert "
                                      f"that sent {memory['source_id']!r} (the first STORE sent "
                                      f"'https://a.example/first'): the memory was not replaced", sent=memory,
            received=same[0])
    else:
        if model.parse_time(a.get("created_at")) and not same_instant(a.get("created_at"), same[0].get("created_at")):
            say(ctx, "oams/store-upsert", f"created_at moved from {a.get('created_at')} to "
                                          f"{same[0].get('created_at')}", second)
        ta, tb = model.parse_time(a.get("updated_at")), model.parse_time(same[0].get("updated_at"))
        if ta and tb and tb < ta:
            say(ctx, "oams/store-upsert", f"updated_at went back from {a.get('updated_at')} to "
                                          f"{same[0].get('updated_at')}", second)
        _judge_last_write(ctx, ns, k, a, b, same[0], second)
        _recalled_after_update(ctx, ns, k, memory)
    _same_value_new_tags(ctx, ns)
    _pairs_that_concatenate_alike(ctx, ns)
    _batch_update_keeps_created(ctx, ns)


def _batch_update_keeps_created(ctx: Any, ns: str) -> None:
    """BATCH_STORE writes memories as STORE does: a batch bringing a new value for a pair STORE wrote
    first, giving no times, keeps its created_at, "When the memory was first written" (§2) (round 25: a
    batch path stamping every member as new reset it)."""
    k = key("upsert.b")
    if not ctx.client.store(model.new_memory(ns, k, "first written by STORE", created_at=FIRST_WRITE,
                                             updated_at=FIRST_WRITE)).ok:
        ctx.note(f"STORE of ({ns!r}, {k!r}) was refused: an update of it by BATCH_STORE was not tried")
        return
    before = find(listed(ctx, ns), k) or {}
    if not same_instant(before.get("created_at"), FIRST_WRITE):
        ctx.note(f"({ns!r}, {k!r}) was stored with created_at {FIRST_WRITE} and LIST read "
                 f"{before.get('created_at')!r}: whether a BATCH_STORE update keeps it was not judged (keeping given "
                 "timestamps is oams/store-keeps-given-timestamps')")
        return
    memory = model.new_memory(ns, k, "updated by BATCH_STORE")
    reply = ctx.client.batch_store([memory])
    if not reply.ok:
        ctx.note(f"BATCH_STORE of a new value for ({ns!r}, {k!r}) was refused ({reply.describe()[:200]}): judged by "
                 "oams/batch-returns, not here")
        return
    back = find(listed(ctx, ns), k)
    if back is None or back.get("value") != memory["value"]:
        ctx.note(f"after BATCH_STORE of a new value for ({ns!r}, {k!r}) LIST reads "
                 f"{'no memory' if back is None else repr(back.get('value'))}: its created_at was not judged")
        return
    if not same_instant(back.get("created_at"), FIRST_WRITE):
        say(ctx, "oams/store-upsert", f"({ns!r}, {k!r}) was first written by STORE with created_at {FIRST_WRITE}; a "
                                      f"BATCH_STORE then brought a new value and no times, and LIST reads created_at "
                                      f"{back.get('created_at')!r}: created_at is \"When the memory was first written\" "
                                      "(§2), and a batch updates the pair as STORE does", reply, sent=memory,
            received=back)


def _recalled_after_update(ctx: Any, ns: str, k: str, memory: dict[str, Any]) -> None:
    """The upsert replaced the memory for RECALL too (round 25: a recall index refreshed on insert
    only answered the value from before the update). Both values hold the query word "value"; which
    memories RECALL finds is implementation-defined, so only a memory it answers under the key is judged."""
    rec = ctx.client.recall({"namespace": ns, "query": "value"})
    items = recalled(rec) if rec.ok else None
    if items is None:
        ctx.note(f"RECALL after the upsert was not served, refused or not an array ({rec.describe()[:200]}): what it "
                 "answers for the updated memory was not judged")
        return
    hit = find([m for m in items if isinstance(m, dict) and m.get("namespace", ns) == ns], k)
    if hit is None:
        ctx.note(f"RECALL of 'value' on {ns!r} after the upsert did not answer {k!r}: its value there was not judged")
    elif hit.get("value") != memory["value"]:
        say(ctx, "oams/store-upsert", f"({ns!r}, {k!r}) was updated from 'old value' to {memory['value']!r}, and "
                                      f"RECALL of 'value' then answered it with the value {hit.get('value')!r}: the "
                                      "STORE replaced the memory, RECALL answers the memory as last written",
            rec, sent=memory)


def _same_value_new_tags(ctx: Any, ns: str) -> None:
    """A re-STORE of the same value with other tags and metadata replaces them (round 25: a STORE
    skipped when the value was unchanged kept the first write's tags): the memory is the one last written."""
    k = key("retag")
    first = model.new_memory(ns, k, "same value", tags=["first"], metadata={"round": 1})
    if not ctx.client.store(first).ok:
        ctx.note(f"STORE of ({ns!r}, {k!r}) was refused: a re-STORE with the same value and new tags was not tried")
        return
    memory = model.new_memory(ns, k, "same value", tags=["second"], metadata={"round": 2})
    reply = ctx.client.store(memory)
    if not reply.ok:
        say(ctx, "oams/store-upsert", "a re-STORE of the same value with new tags and metadata was refused", reply)
        return
    back = find(listed(ctx, ns), k)
    if back is None:
        say(ctx, "oams/store-upsert", f"after two STOREs of ({ns!r}, {k!r}) LIST of {ns!r} holds no memory with the "
                                      "key", sent=memory)
        return
    wrong = [f"`{f}` {back.get(f, '<missing>')!r} (sent {memory[f]!r}; the first STORE sent {first[f]!r})"
             for f in ("tags", "metadata") if model.same_memory_fields(memory, back, (f,), read=True)]
    if wrong:
        say(ctx, "oams/store-upsert", f"({ns!r}, {k!r}) was stored with tags ['first'], then STORE sent the same value "
                                      "with tags ['second'] and other metadata; LIST reads " + " and ".join(wrong)
            + ": STORE upserts, and the memory is the one last written, whether or not its value changed",
            reply, sent=memory, received=back)


def _pairs_that_concatenate_alike(ctx: Any, ns: str) -> None:
    """(ns, "bc") and (ns + "b", "c") are two pairs, though their namespace and key run together alike:
    a store keying rows by the two joined (round 18's "o:a"+"bc" = "o:ab"+"c") keeps one of them."""
    other = ns + "b"
    pairs = [model.new_memory(ns, "bc", "the pair ending in bc"), model.new_memory(other, "c", "the pair ending in c")]
    for m in pairs:
        if not ctx.client.store(m).ok:
            ctx.note(f"STORE of ({m['namespace']!r}, {m['key']!r}) was refused: pairs whose namespace and key run "
                     "together alike were not tried")
            return
    for m in pairs:
        back = find(listed(ctx, m["namespace"]), m["key"])
        if back is None or back.get("value") != m["value"]:
            say(ctx, "oams/ns-key-unique", f"after STORE of ({ns!r}, 'bc') and ({other!r}, 'c'), two pairs whose "
                                           f"namespace and key run together alike, LIST of {m['namespace']!r} reads "
                                           f"{'no ' + repr(m['key']) if back is None else repr(back.get('value'))}: "
                                           "each (namespace, key) pair is its own memory", sent=m, received=back)


def _judge_last_write(ctx: Any, ns: str, k: str, before: dict[str, Any], answered: dict[str, Any],
                      back: dict[str, Any], reply: Any) -> None:
    """§2 updated_at is the "Last write": the update gave no updated_at, so the answer's and LIST's are
    the update's own time, later than the FIRST_WRITE the pair held. Judged only where LIST showed the
    first write at FIRST_WRITE (keeping given times is oams/store-keeps-given-timestamps')."""
    if not same_instant(before.get("updated_at"), FIRST_WRITE):
        ctx.note(f"the first STORE gave updated_at {FIRST_WRITE} and LIST read {before.get('updated_at')!r}: whether "
                 "the update moved updated_at to its own time was not judged (keeping given timestamps is "
                 "oams/store-keeps-given-timestamps')")
        return
    first = model.parse_time(FIRST_WRITE)
    stale = [f"{where} has updated_at {got.get('updated_at')}"
             for where, got in (("the update's answer", answered), (f"LIST of {ns!r} after it", back))
             if (t := model.parse_time(got.get("updated_at"))) is not None and t <= first]  # type: ignore[operator]
    if stale:
        say(ctx, "oams/store-upsert", f"({ns!r}, {k!r}) was first stored with updated_at {FIRST_WRITE}, then STORE "
                                      f"sent a new value and no updated_at; {' and '.join(stale)}, the first write's: "
                                      "updated_at is the last write's time (§2 \"Last write\")", reply,
            received={"answer": answered, "listed": back})


@check("oams/tags-lowercase", spec="oams", bindings=LIVE, requirements=("oams/tags-lowercase",),
       title="Tags are lowercased on ingest, by STORE and by BATCH_STORE")
def tags_lowercase(ctx: Any) -> None:
    ns = namespace(ctx, tag="tags")
    memory = model.new_memory(ns, key("tags"), "tagged", tags=["Research", "MixedCase"])
    reply = ctx.client.store(memory)
    precondition(reply, "STORE with tags")
    back = find(listed(ctx, ns), memory["key"])
    tags = back.get("tags") if isinstance(back, dict) else None
    stored_lowered = isinstance(tags, list) and sorted(tags) == ["mixedcase", "research"]  # §2 fixes no order
    if not stored_lowered:
        say(ctx, "oams/tags-lowercase", f"tags {memory['tags']} were stored as {tags!r} (LIST), not lowercased",
            sent=memory, received=back)
    # BATCH_STORE ingests too (found by the blind red team: a batch path that skipped the lowercasing)
    batch = [model.new_memory(ns, key("tags.b"), "tagged in a batch", tags=["Imported", "MixedCase"])]
    reply = ctx.client.batch_store(batch)
    if not reply.ok:
        ctx.note(f"BATCH_STORE of a memory with tags was refused ({reply.describe()}): the batch path's ingest was not "
                 "judged (oams/batch-returns judges the refusal)")
        return
    back = find(listed(ctx, ns), batch[0]["key"])
    if back is None:
        ctx.note(f"after BATCH_STORE, LIST of {ns!r} holds no {batch[0]['key']!r}: the batch path's tags were not "
                 "judged (oams/batch-returns judges that)")
        return
    tags = back.get("tags")
    if not (isinstance(tags, list) and sorted(tags) == ["imported", "mixedcase"]):
        say(ctx, "oams/tags-lowercase", f"BATCH_STORE of {batch[0]['key']!r} with tags {batch[0]['tags']} in {ns!r}: "
                                        f"LIST reads tags {tags!r}, not lowercased"
                                        + (" (STORE's are: the SHOULD is about ingest, and a batch ingests too)"
                                           if stored_lowered else ""), reply, received=back)


#: (what, the memory's members beyond key/namespace, or None to leave value out)
INVALID = (
    ("a number as value", {"value": 42}),
    ("an object as value", {"value": {"text": "x"}}),
    ("no value", {}),
    ("an embedding without embedding_model", {"value": "v", "embedding": [0.1, 0.2]}),
    ("tags that are not an array of strings", {"value": "v", "tags": "research"}),
    ("created_at as integer milliseconds (an earlier draft's times)", {"value": "v", "created_at": 1767225600000,
                                                                       "updated_at": 1767225600000}),
    (NOT_UTC := "created_at not in UTC", {"value": "v", "created_at": "2026-01-01T12:00:00+02:00",
                                          "updated_at": "2026-01-01T12:00:00+02:00"}),
)
#: The instant the non-UTC times above name, as a server normalizing them to UTC stores it.
NOT_UTC_INSTANT = "2026-01-01T10:00:00Z"


def _normalized_to_utc(reply: Any) -> bool:
    """STORE took the non-UTC memory and answered its times as the same instant in UTC. §2 defines a
    memory as valid by its members' presence and asks the times be "RFC 3339 timestamp, UTC": a
    server that stores UTC from a client's offset time has stored what §2 asks (variant
    oams-times-normalized), as a server that refuses it has (the reference)."""
    got = reply.result if reply.ok else None
    return (isinstance(got, dict) and same_instant(got.get("created_at"), NOT_UTC_INSTANT)
            and same_instant(got.get("updated_at"), NOT_UTC_INSTANT))


@check("oams/invalid-memory-refused", spec="oams", bindings=LIVE,
       requirements=("oams/invalid-memory-refused", "oams/error-codes", "oams/error-shape"),
       title="A STORE of an invalid memory is refused with -32003 and stores nothing")
def invalid_memory_refused(ctx: Any) -> None:
    ctx.credit_only_observed()  # the error shape and code are judged only on a refusal (judge_error)
    ns = namespace(ctx, tag="invalid")
    keys, normalized = [], set()
    echoed: dict[str, Any] = {}
    for what, members in INVALID:
        k = key("bad")
        keys.append(k)
        reply = ctx.client.store({"key": k, "namespace": ns, **members})
        if what == NOT_UTC and _normalized_to_utc(reply):
            normalized.add(k)
            ctx.note(f"STORE of a memory with {what} was taken and its times stored as the same instant in UTC "
                     f"({reply.result.get('created_at')}): §2's UTC is what was stored")
            continue
        if what == NOT_UTC and reply.ok:
            # taken, its answer not in UTC: what was stored decides (LIST below); a wrong answer alone
            # is oams/store-returns-stored's (round 18: an answer echoing the input, UTC stored)
            echoed[k] = reply
            continue
        judge_error(ctx, reply, code=model.VALIDATION_FAILED, refused_rule="oams/invalid-memory-refused",
                    what=f"STORE of a memory with {what}")
    if ctx.binding != "http":
        # over JSON-RPC the key is the memory's own (REST's is the path): a memory without one is
        # refused as invalid (not an internal error: a blind red team's server, round 18, said -32603),
        # or given a key of the server's choosing (§2: "Implementations MAY use ULID, UUIDv7, content-hash,
        # or a human-readable slug", the same round's legitimate reading)
        keyless = ctx.client.store({"namespace": ns, "value": "a memory without a key"})
        assigned = keyless.result.get("key") if keyless.ok and isinstance(keyless.result, dict) else None
        if isinstance(assigned, str) and assigned:
            ctx.note(f"oams.store of a memory without key was taken under the key {assigned!r} the server chose "
                     "(§2 leaves key forms to the implementation)")
        else:
            judge_error(ctx, keyless, code=model.VALIDATION_FAILED, refused_rule="oams/invalid-memory-refused",
                        what="oams.store of a memory without key (and no key assigned in the answer)")
    listing = [m for m in listed(ctx, ns) if isinstance(m, dict)]
    held = [m.get("key") for m in listing]
    for k, reply in echoed.items():
        back = next((m for m in listing if m.get("key") == k), None)
        in_utc = back is not None and model.parse_time(back.get("created_at")) is not None \
            and str(back.get("created_at")).endswith("Z")
        if in_utc and same_instant(back.get("created_at"), NOT_UTC_INSTANT):
            normalized.add(k)
            ctx.note(f"STORE of a memory with {NOT_UTC} was taken and LIST shows its times as the same instant in UTC "
                     f"({back.get('created_at')}): §2's UTC is what was stored (STORE's answer, "
                     f"{reply.result.get('created_at') if isinstance(reply.result, dict) else reply.result!r}, is "
                     "oams/store-returns-stored's)")
            continue
        if in_utc:
            # stored valid, in UTC, at another instant: the given times were replaced, which is
            # oams/store-keeps-given-timestamps' finding; nothing invalid was stored (round 18)
            normalized.add(k)
            ctx.note(f"STORE of a memory with {NOT_UTC} was taken and LIST shows it at {back.get('created_at')}, in UTC "
                     "but another instant: nothing invalid was stored (replacing given times is "
                     "oams/store-keeps-given-timestamps')")
            continue
        say(ctx, "oams/invalid-memory-refused",
            f"STORE of a memory with {NOT_UTC} (2026-01-01T12:00:00+02:00) was taken, and "
            + (f"LIST shows created_at {back.get('created_at')!r}" if back is not None else "LIST does not show it")
            + f": it must be refused with {model.VALIDATION_FAILED}, or stored as the same instant in UTC "
              f"({NOT_UTC_INSTANT})", reply)
    stored = [k for k in keys if k in held and k not in normalized and k not in echoed]
    ctx.observed("oams/invalid-memory-refused")
    if stored:
        whats = dict(zip(keys, (w for w, _ in INVALID)))
        say(ctx, "oams/invalid-memory-refused", f"LIST of {ns!r} holds invalid memories that STORE was to refuse: "
                                                + "; ".join(f"{k!r} ({whats.get(k, 'no key')})" for k in stored))


@check("oams/scope-refused", spec="oams", bindings=LIVE,
       requirements=("oams/scope-no-slash-colon", "oams/error-codes", "oams/error-shape"),
       title="A STORE into a namespace whose scope holds / or : is refused with -32003")
def scope_refused(ctx: Any) -> None:
    ctx.credit_only_observed()  # the error shape and code are judged only on a refusal (judge_error)
    owner = namespace(ctx, tag="scope").split(":")[0]
    for bad in (f"{owner}:a/b", f"{owner}:a:b"):
        reply = ctx.client.store(model.new_memory(bad, key("scope"), "scoped"))
        judge_error(ctx, reply, code=model.VALIDATION_FAILED, refused_rule="oams/scope-no-slash-colon",
                    what=f"STORE into namespace {bad!r}")
    # BATCH_STORE writes memories as STORE does, under the same rule (round 25: a batch skipped the scope check)
    bad = f"{owner}:bad/scope"
    reply = ctx.client.batch_store([model.new_memory(bad, key("scope.b"), "scoped in a batch")])
    judge_error(ctx, reply, code=model.VALIDATION_FAILED, refused_rule="oams/scope-no-slash-colon",
                what=f"BATCH_STORE of one memory into namespace {bad!r}")

