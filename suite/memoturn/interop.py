"""memoturn round trip between two nodes: place typed memories in A, read them back from A, write
what A shows into B, read them back from B, and name every field that did not survive.

memoturn has no export operation: what leaves a node is what GET shows of each memory. The
journey, each view on its own so a loss is charged where it happened:

1. **placing** — `PLAN` is ingested into a fresh profile of A (`fresh_profile`) in one batch, in
   plan order (one memory at a time when A refuses the batch; a memory A refuses makes the round
   trip not applicable);
2. A's GET of every id its ingest answered is the view *export from A*;
3. those records, as A answered them (type, topic_key, summary, content, keywords, session_id,
   source, and for a task `ttl` = expires_at − created_at), are ingested into a fresh profile of B
   in one batch (one at a time when B refuses it), each row before the row that superseded it on A
   and otherwise in A's order, so B's own supersession rebuilds A's chain; B's GET of every id B
   answered is the view *import into B*.

What is placed (`PLAN`, one batch, in this order; every memory names its source):

| name | type | topic_key | session_id | what it carries | expected |
|---|---|---|---|---|---|
| diet-1 | fact | user.diet | — | keywords | superseded by diet-2 |
| style-1 | instruction | reply.style | — | content members out of code-point order | superseded by style-2 |
| deploy | event | — | s-417 | keywords, a null inside an array, members out of order | active |
| diet-2 | fact | user.diet | — | a null inside an array | supersedes diet-1, superseded by diet-3 |
| menu | event | — | s-417 | non-ASCII summary and content, an empty array | active |
| style-2 | instruction | reply.style | — | keywords, non-ASCII, members out of order | supersedes style-1 |
| pet | fact | — | — | astral-plane content | active, supersedes nothing |
| diet-3 | fact | user.diet | — | a null member | supersedes diet-2 |
| refund | task | — | s-417 | `ttl: 3600`, a null inside a nested array | expires 1 h after created_at |

Every view is compared with the plan, memory by memory (a plan name is found through the id each
side's ingest answered for it). Each field is charged once, at the first view where it differs, to
the requirement (suite/memoturn/catalogue.toml) that promises it survives:

| field | export from A | import into B |
|---|---|---|
| the memory itself (`""`): no id answered | memoturn/ingest-status-per-memory | memoturn/ingest-status-per-memory |
| the memory itself (`""`): GET does not find it | memoturn/history-kept (a superseded row), memoturn/record-fields (an active one) | the same |
| `/id` | memoturn/id-construction; memoturn/id-content-addressed when the node's ids are not a function of (type, topic_key, content) alone | the same |
| `/content` | memoturn/content-returned | memoturn/content-returned |
| `/source` | memoturn/source-returned | memoturn/source-returned |
| `/type`, `/topic_key`, `/summary`, `/keywords`, `/session_id` | memoturn/record-fields | memoturn/record-fields |
| `/superseded_by` | memoturn/fact-supersedes, memoturn/instruction-supersedes (by type); memoturn/event-never-supersedes, memoturn/task-never-supersedes, memoturn/fact-without-topic-no-supersession for a row that must stay active | the same |
| `/supersedes` (the replaced rows the view holds) | memoturn/supersedes-listed when the rows it replaced do point at it; otherwise as `/superseded_by` (the supersession did not happen) | the same |
| `/expires_at` (from created_at in any readable form, else from the suite's clock around the ingest; ±1 min) | memoturn/task-ttl-explicit (the task); memoturn/expires-at-tasks-only (any other type) | the same |

Ids: the expected id is the engine's construction of (type, topic_key, content)
(`model.memory_id`), so that two nodes following it give one memory one id. When a node's id
differs, it is asked once more for that memory told in other words (another summary, keywords and
source): the same id back means its ids are content-addressed by a construction of its own
(memoturn/id-construction, a SHOULD: a warning); another id, that they are not content-addressed
at all (memoturn/id-content-addressed). At B the expected id is the construction of what B was
sent: when A lost content, type or topic_key (charged at A), B hashing what A showed is right.

Allowances: `superseded_by` and `supersedes` are compared as plan names, each side's ids read
through its own ingest answers (a node with ids of its own keeps its chain); `supersedes` as a
set, which may hold the whole chain before the row ("the full chain in both directions", as
memoturn/supersedes-listed reads it) or only the row it replaced; B's chain is compared only when every memory reached B (a row lost at A would move B's
pointers, which is A's loss); null and a member left out are one (memoturn/record-fields: "null (or left out) where
unset"); `created_at` and `superseded_at` are each node's own clock and are not compared; an
expiry is compared as an instant relative to the node's created_at (integer milliseconds, seconds,
or RFC 3339: any readable time), or, where the record states none (the page's table has no
created_at), to the suite's clock before and after the node's ingest, and the loss says which; members the plan does not hold (embedding, scores) are not
compared. Every memory names a source, since an MCP node may default one (memoturn/mcp-source-
default, a MAY). A record A shows that B could not take as a memory (no type, summary or content,
a topic_key on an event or task) is charged at A and not offered to B. Afterwards everything
placed is forgotten on both sides, where forget answers.

The pairing module (suite/interop/pairing.py) calls `round_trip(source, destination, *, version,
source_label, destination_label)`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from memconform.suite.interop.model import MISSING, Loss, RoundTrip, charge_once
from memconform.suite.jsonvalue import json_equal
from memconform.suite.memoturn import model
from memconform.suite.memoturn.client import MemoturnClient, MemoturnReply, fresh_profile
from memconform.suite.outcomes import NotApplicable

SPEC = "memoturn"
#: Each node counts the expiry from its own created_at; a minute covers rounding and a slow batch.
EXPIRY_SLACK_MS = 60_000
#: The record's fields written into B as A showed them (besides type, summary and content).
CARRIED = ("topic_key", "keywords", "session_id", "source")


def _memory(mtype: str, summary: str, content: Any, **fields: Any) -> dict[str, Any]:
    return model.new_memory(mtype, summary, content, **fields)


#: (name, memory): the chains of (type, topic_key) follow from the order (`_plan_chain`).
PLAN: tuple[tuple[str, dict[str, Any]], ...] = (
    ("diet-1", _memory("fact", "vegetarian since 2024", {"diet": "vegetarian", "since": 2024},
                       topic_key="user.diet", keywords="food preference", source="claude-code")),
    # members out of code-point order: a node hashing them as sent gives another id
    ("style-1", _memory("instruction", "answer in plain English", {"tone": "plain", "language": "en"},
                        topic_key="reply.style", source="cursor")),
    ("deploy", _memory("event", "deployed v2 to prod", {"version": "v2", "steps": [1, None, 3], "ok": True},
                       keywords="deploy release", session_id="s-417", source="claude-code")),
    ("diet-2", _memory("fact", "pescatarian since 2025", {"diet": "pescatarian", "except": ["sushi", None],
                                                          "since": 2025},
                       topic_key="user.diet", keywords="food preference", source="cursor")),
    ("menu", _memory("event", "ordered the vegan tasting menu — ünïcödé ✓",
                     {"dish": "精進料理", "guests": [], "price": {"amount": 4200, "currency": "JPY"}},
                     keywords="restaurant menu", session_id="s-417", source="support-bot")),
    ("style-2", _memory("instruction", "antworte kurz und auf Deutsch", {"tone": "knapp", "language": "de",
                                                                         "emoji": "✓"},
                        topic_key="reply.style", keywords="sprache stil", source="support-bot")),
    ("pet", _memory("fact", "has a cat called Mochi", {"name": "Mochi 🐈", "pet": "cat"}, source="claude-code")),
    ("diet-3", _memory("fact", "vegan since 2026", {"diet": "vegan", "note": None, "since": 2026},
                       topic_key="user.diet", keywords="food preference vegan", source="claude-code")),
    ("refund", _memory("task", "follow up on refund #88", {"nested": {"a": [None]}, "ticket": 88},
                       session_id="s-417", source="support-bot", ttl=3600)),
)


@dataclass
class _Chain:
    superseded_by: dict[str, str | None] = field(default_factory=dict)
    supersedes: dict[str, list[str]] = field(default_factory=dict)


def _plan_chain(plan: tuple[tuple[str, dict[str, Any]], ...]) -> _Chain:
    """What the page's supersession makes of the plan: each fact or instruction replaces the
    previous one of its (type, topic_key)."""
    chain = _Chain({name: None for name, _ in plan}, {name: [] for name, _ in plan})
    last: dict[tuple[str, str], str] = {}
    for name, m in plan:
        if m["type"] in model.SUPERSEDING and m.get("topic_key"):
            key = (m["type"], m["topic_key"])
            if key in last:
                chain.superseded_by[last[key]] = name
                chain.supersedes[name].append(last[key])
            last[key] = name
    return chain


CHAIN = _plan_chain(PLAN)


# -- the journey ---------------------------------------------------------------------------------

@dataclass
class _Side:
    """One node as the round trip saw it: what it was sent, the ids it answered, what GET showed."""

    client: MemoturnClient
    label: str
    profile: str
    stage: str
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    ids: dict[str, str | None] = field(default_factory=dict)
    view: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    #: ids written beyond the plan (a probe a node did not take as a duplicate), forgotten too
    extra_ids: list[str] = field(default_factory=list)
    #: the suite's clock (Unix ms) before the first ingest went out and after the last answered: where
    #: a record states no readable created_at, the memory was created between the two
    sent_ms: tuple[float, float] | None = None

    @property
    def names_by_id(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, mid in self.ids.items():
            if isinstance(mid, str):
                out.setdefault(mid, name)
        return out


def round_trip(source: MemoturnClient, destination: MemoturnClient, *, version: str, source_label: str,
               destination_label: str) -> RoundTrip:
    a = _Side(source, source_label, fresh_profile("interop"), f"export from {source_label}")
    b = _Side(destination, destination_label, fresh_profile("interop"), f"import into {destination_label}")
    notes: list[str] = []
    losses: list[Loss] = []
    charged: set[tuple[str, str]] = set()
    unoffered: list[str] = []
    reached_b = False
    try:
        a.sent = {name: m for name, m in PLAN}
        answered = _ingest(a, [name for name, _ in PLAN], notes)
        refused = [name for name, why in answered.items() if why is not None]
        if refused:
            raise NotApplicable(f"{source_label} does not take the memories a round trip places: "
                                f"{answered[refused[0]]}")
        _read(a, notes)
        _compare(a, {name: model.id_of(m) for name, m in PLAN}, losses, charged, notes, skip=())

        offered = []
        for name, _ in PLAN:
            record = a.view.get(name)
            if record is None:
                continue  # charged whole at A: nothing to write into B
            problem = _unofferable(record)
            if problem:
                unoffered.append(name)
                notes.append(f"{source_label} shows {name} as no memory {destination_label} could take ({problem}): "
                             f"not offered to {destination_label}")
                continue
            offered.append(name)
        if offered:
            order = _chain_order(a, offered)
            b.sent = {name: _as_ingest(a.view[name], a) for name in order}  # type: ignore[arg-type]
            _ingest(b, order, notes)
            _read(b, notes)
            reached_b = True
            expected_b = {}
            for name in order:
                expected_b[name] = model.id_of(b.sent[name])
                if expected_b[name] != model.id_of(a.sent[name]):
                    notes.append(f"{name}: {source_label} showed another (type, topic_key, content) than was placed, "
                                 f"so {destination_label}'s id is expected from what it was sent")
            never = [name for name, _ in PLAN if name not in b.sent]
            if never:  # B's chain cannot hold rows it never got: compared only where A's was whole
                notes.append(f"the chain on {destination_label} is not compared: {', '.join(never)} never reached it")
            _compare(b, expected_b, losses, charged, notes, skip=tuple(unoffered), chain=not never)
    finally:
        for side in (a, b):
            _forget(side, notes)

    compared = len(unoffered)  # compared (and charged) at A's view
    if reached_b:
        compared += sum(1 for name, _ in PLAN if b.view.get(name) is not None)
    return RoundTrip(SPEC, version, source_label, destination_label, placed=len(PLAN), compared=compared,
                     losses=tuple(losses), notes=tuple(notes),
                     extra={"profiles": {"source": a.profile, "destination": b.profile},
                            "records": {name: a.ids.get(name) for name, _ in PLAN}})


def _ingest(side: _Side, names: list[str], notes: list[str]) -> dict[str, str | None]:
    """Ingests `side.sent[name]` for `names` in that order, as one batch or, when the node refuses
    the batch, one at a time; fills `side.ids` (None where no usable id came back). Answers, per
    name, None when ingested or why not (the refusal)."""
    memories = [side.sent[n] for n in names]
    before = time.time() * 1000
    try:
        return _ingest_all(side, names, memories, notes)
    finally:
        side.sent_ms = (before, time.time() * 1000)


def _ingest_all(side: _Side, names: list[str], memories: list[dict[str, Any]],
                notes: list[str]) -> dict[str, str | None]:
    reply = side.client.ingest(side.profile, memories)
    if reply.ok:
        _take_ids(side, names, reply, notes)
        return {n: None for n in names}
    if reply.not_served:
        raise NotApplicable(f"{side.label} does not serve ingest: {reply.describe()}")
    notes.append(f"{side.label} refused the batch of {len(names)} ({reply.describe()}); ingested one by one")
    out: dict[str, str | None] = {}
    for n in names:
        one = side.client.ingest(side.profile, [side.sent[n]])
        if one.ok:
            _take_ids(side, [n], one, notes)
            out[n] = None
        else:
            side.ids[n] = None
            out[n] = one.describe()
            notes.append(f"{side.label} refused {n}: {one.describe()}")
    return out


def _take_ids(side: _Side, names: list[str], reply: MemoturnReply, notes: list[str]) -> None:
    results = reply.results()
    if results is None or len(results) != len(names):
        # positions cannot be trusted: no memory of the batch can be told from another
        notes.append(f"{side.label}'s ingest answer is not one result per memory "
                     f"({'; '.join(model.ingest_problems(reply.body, len(names)))})")
        side.ids.update({n: None for n in names})
        return
    for n, r in zip(names, results):
        mid = r.get("id") if isinstance(r, dict) else None
        side.ids[n] = mid if isinstance(mid, str) and mid else None


def _read(side: _Side, notes: list[str]) -> None:
    for name, mid in side.ids.items():
        if mid is None:
            continue
        reply = side.client.get(side.profile, mid)
        if reply.not_served:
            raise NotApplicable(f"{side.label} does not serve GET of a memory: {reply.describe()}")
        record = reply.memory() if reply.ok else None
        if record is None and not reply.missing:
            notes.append(f"{side.label}'s GET of {name} answered neither the record nor not-found: {reply.describe()}")
        side.view[name] = record


def _forget(side: _Side, notes: list[str]) -> None:
    """Best effort: a node whose forget is not there, or fails, keeps what was placed (noted)."""
    ids = [mid for mid in side.ids.values() if isinstance(mid, str)] + side.extra_ids
    for mid in dict.fromkeys(ids):
        try:
            reply = side.client.forget(side.profile, mid)
        except Exception as exc:  # noqa: BLE001 — cleaning up must not hide the round trip's verdict
            notes.append(f"{side.label}: forgetting {mid} failed ({exc}); the profile {side.profile!r} keeps "
                         f"what is left")
            return
        if reply.not_served:
            notes.append(f"{side.label} does not serve forget: the profile {side.profile!r} keeps what was placed")
            return
        if not reply.ok and not reply.missing:
            notes.append(f"{side.label} did not forget {mid}: {reply.describe()}")


# -- from A's record to B's ingest ---------------------------------------------------------------

def _unofferable(record: dict[str, Any]) -> str | None:
    problems = model.record_problems(record, where="the record")
    if problems:
        return "; ".join(problems)
    if not record["summary"].strip():
        return "a blank summary"
    if record.get("topic_key") is not None and record["type"] not in model.SUPERSEDING:
        return f"a topic_key on a {record['type']}"
    return None


def _as_ingest(record: dict[str, Any], side: _Side) -> dict[str, Any]:
    m: dict[str, Any] = {"type": record["type"], "summary": record["summary"], "content": record["content"]}
    for name in CARRIED:
        if record.get(name) is not None:
            m[name] = record[name]
    if record["type"] == "task":
        seconds = _lifetime_seconds(record, side)
        if seconds is not None and round(seconds) >= 1:
            m["ttl"] = round(seconds)
    return m


def _created(record: dict[str, Any], side: _Side) -> tuple[float, float, str] | None:
    """When the memory was created, as (earliest, latest) Unix ms and what says so: its created_at in
    any readable form (memoturn/created-at-ms, a SHOULD, asks for milliseconds; seconds and RFC 3339
    are times too), else the suite's clock around the node's ingest (the page's record has no
    created_at); None when neither is known."""
    created = model.instant_ms(record.get("created_at"))
    if created is not None:
        return created, created, f"created_at {model.shown(record.get('created_at'))}"
    if side.sent_ms is not None:
        return (*side.sent_ms, "no readable created_at: the ingest timed by the suite's clock")
    return None


def _lifetime_seconds(record: dict[str, Any], side: _Side) -> float | None:
    """How long the record says a task lives, in seconds; None when its expiry or creation is unknown."""
    expires, created = model.instant_ms(record.get("expires_at")), _created(record, side)
    if expires is None or created is None:
        return None
    return (expires - (created[0] + created[1]) / 2) / 1000


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.3f}"




def _chain_order(a: _Side, names: list[str]) -> list[str]:
    """`names` with each row before the row A shows as having superseded it (either pointer), A's
    order otherwise; a cycle A shows falls back to A's order for the rows in it."""
    by_id = a.names_by_id
    wanted = set(names)
    before: dict[str, set[str]] = {n: set() for n in names}
    for n in names:
        record = a.view[n] or {}
        successor = by_id.get(record.get("superseded_by")) if isinstance(record.get("superseded_by"), str) else None
        if successor in wanted and successor != n:
            before[successor].add(n)
        listed = record.get("supersedes")
        for old in listed if isinstance(listed, list) else ():
            older = by_id.get(old) if isinstance(old, str) else None
            if older in wanted and older != n:
                before[n].add(older)
    order: list[str] = []
    left = list(names)
    while left:
        ready = next((n for n in left if before[n] <= set(order)), left[0])
        order.append(ready)
        left.remove(ready)
    return order


# -- comparing a view with the plan ---------------------------------------------------------------

def _compare(side: _Side, expected_ids: dict[str, str], losses: list[Loss], charged: set[tuple[str, str]],
             notes: list[str], *, skip: tuple[str, ...], chain: bool = True) -> None:
    def lose(name: str, pointer: str, rule: str, want: Any, have: Any) -> None:
        charge_once(losses, charged, Loss(name, pointer, rule, want, have, side.stage))

    names_by_id = side.names_by_id
    id_rule: str | None = None
    for name, planned in PLAN:
        if name in skip:
            continue
        if name in side.ids and side.ids[name] is None:
            lose(name, "", "memoturn/ingest-status-per-memory", _brief(planned), MISSING)
            continue
        if name not in side.ids:
            continue  # never offered to this side (lost whole before it)
        record = side.view.get(name)
        if record is None:
            rule = "memoturn/history-kept" if CHAIN.superseded_by[name] else "memoturn/record-fields"
            lose(name, "", rule, _brief(planned), MISSING)
            continue
        have_id = record.get("id", MISSING)
        if have_id != expected_ids[name]:
            if id_rule is None:
                id_rule = _id_rule(side, name, expected_ids, notes)
            lose(name, "/id", id_rule, expected_ids[name], have_id)
        for pointer, rule in (("type", "memoturn/record-fields"), ("topic_key", "memoturn/record-fields"),
                              ("summary", "memoturn/record-fields"), ("content", "memoturn/content-returned"),
                              ("keywords", "memoturn/record-fields"), ("session_id", "memoturn/record-fields"),
                              ("source", "memoturn/source-returned")):
            want, have = planned.get(pointer), record.get(pointer, MISSING)
            if not _same(want, have):
                lose(name, f"/{pointer}", rule, want, have)
        _compare_expiry(side, name, planned, record, lose)
        if chain:
            _compare_chain(side, name, planned, record, names_by_id, lose)


def _compare_expiry(side: _Side, name: str, planned: dict[str, Any], record: dict[str, Any], lose: Any) -> None:
    have = record.get("expires_at", MISSING)
    if planned["type"] != "task":
        if have not in (None, MISSING):
            lose(name, "/expires_at", "memoturn/expires-at-tasks-only", None, have)
        return
    ttl = planned.get("ttl", model.TASK_TTL_DEFAULT)
    expires, created = model.instant_ms(have), _created(record, side)
    if created is None:
        lose(name, "/expires_at", "memoturn/task-ttl-explicit", f"{ttl} s after its creation (no created_at and no "
             f"ingest time to count from)", have)
        return
    low, high, what = created
    if expires is None or not low + ttl * 1000 - EXPIRY_SLACK_MS <= expires <= high + ttl * 1000 + EXPIRY_SLACK_MS:
        lived = _seconds((expires - (low + high) / 2) / 1000) if expires is not None else None
        if low == high:  # the record's own created_at
            lose(name, "/expires_at", "memoturn/task-ttl-explicit", f"created_at + {ttl} s",
                 f"created_at + {lived} s" if lived is not None else have)
        else:
            lose(name, "/expires_at", "memoturn/task-ttl-explicit", f"ingest + {ttl} s ({what})",
                 f"{model.shown(have)}: ingest + {lived} s" if lived is not None else have)


def _supersede_rule(planned: dict[str, Any]) -> str:
    """The promise a row's place in a chain rests on: its type's supersession, or the rule that
    keeps it out of every chain."""
    mtype = planned["type"]
    if mtype in ("event", "task"):
        return f"memoturn/{mtype}-never-supersedes"
    if not planned.get("topic_key"):
        return "memoturn/fact-without-topic-no-supersession"
    return f"memoturn/{mtype}-supersedes"


def _compare_chain(side: _Side, name: str, planned: dict[str, Any], record: dict[str, Any],
                   names_by_id: dict[str, str], lose: Any) -> None:
    def named(value: Any) -> Any:
        return names_by_id.get(value, value) if isinstance(value, str) else value

    want_by = CHAIN.superseded_by[name]
    have_by = named(record.get("superseded_by", MISSING))
    if not (have_by == want_by or (want_by is None and have_by in (None, MISSING))):
        lose(name, "/superseded_by", _supersede_rule(planned), want_by, have_by)

    # a row this view does not hold is charged whole; listing it is not asked of its successor
    want_list = sorted(old for old in CHAIN.supersedes[name] if side.view.get(old) is not None)
    # "the full chain in both directions": a node may list every row before it in the chain, not only
    # the one it replaced (memoturn/supersedes-listed accepts both)
    chain = {old for old in _predecessors(name) if side.view.get(old) is not None}
    raw = record.get("supersedes", MISSING)
    have_list = [named(x) for x in raw] if isinstance(raw, list) else raw
    same = (set(want_list) <= set(map(str, have_list)) <= chain and len(set(have_list)) == len(have_list)
            if isinstance(have_list, list) else not want_list and have_list in (None, MISSING))
    if not same:
        # the rows it replaced point at it: only the listing is wrong; otherwise no supersession happened
        happened = bool(want_list) and all(
            named((side.view.get(old) or {}).get("superseded_by")) == name for old in want_list)
        rule = "memoturn/supersedes-listed" if happened else _supersede_rule(planned)
        lose(name, "/supersedes", rule, want_list, have_list)


def _predecessors(name: str) -> list[str]:
    """Every row of the plan's chain before `name`, the one it replaced first."""
    out: list[str] = []
    for old in CHAIN.supersedes[name]:
        out += [old, *_predecessors(old)]
    return out


def _id_rule(side: _Side, name: str, expected_ids: dict[str, str], notes: list[str]) -> str:
    """Whether the node's ids are content-addressed by a construction of their own (id-construction)
    or not content-addressed (id-content-addressed): one memory whose id differed, told in other
    words — another summary, keywords and source — must come back under the same id. An event is
    asked when one differed, since it supersedes nothing even on a node that mints a new row."""
    differing = [n for n, _ in PLAN if n in side.sent and isinstance(side.ids.get(n), str)
                 and (side.view.get(n) or {}).get("id", MISSING) != expected_ids.get(n)]
    probe = next((n for n in differing if side.sent[n]["type"] == "event"), differing[0] if differing else name)
    first = side.ids.get(probe)
    told = {**side.sent[probe], "summary": side.sent[probe]["summary"] + " (told again)",
            "keywords": "retold", "source": "memconform-interop"}
    reply = side.client.ingest(side.profile, [told])
    again = reply.result(0).get("id") if reply.ok else None
    if isinstance(again, str) and again != first:
        side.extra_ids.append(again)
    if not isinstance(again, str) or not isinstance(first, str):
        notes.append(f"{side.label}'s ids differ from the engine's construction; whether they are content-addressed "
                     f"could not be told ({reply.describe()}): charged to memoturn/id-construction")
        return "memoturn/id-construction"
    if again == first:
        return "memoturn/id-construction"
    notes.append(f"{side.label} gave {probe} told in other words another id ({again}, not {first}): its ids are not "
                 f"content-addressed")
    return "memoturn/id-content-addressed"


def _same(want: Any, have: Any) -> bool:
    if want is None:
        return have is None or have is MISSING
    return have is not MISSING and json_equal(want, have)


def _brief(memory: dict[str, Any]) -> dict[str, Any]:
    return {k: memory[k] for k in ("type", "topic_key", "summary") if k in memory}
