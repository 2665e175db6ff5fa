"""The memoturn state machine (issue 16's model-based fuzzing, suite/stateful.py): generated
sequences of ingests (batches of one to three typed memories drawn from small pools, so duplicates,
supersession chains and revives happen often), forgets and topic recalls on one fresh profile per
sequence, each answer compared with a model of what the page says the profile holds.

Model: for each (type, topic_key, content) ever ingested, the id the target answered, the source of
its first writer, whether it is active, and what superseded it. The page's rules give every
answer: an unknown memory is `created` and, for a fact or instruction with a topic_key, supersedes
the active row of its (type, topic_key); an active one is `duplicate`; a superseded one is
`revived`, superseding the row that displaced it. Forgets draw only from memories no chain runs
through (events, and the only row of a topic), where the page leaves nothing open. Refusals are
never judged here (their scripted checks judge them): a refused batch changes nothing.

After every ingest and forget, GET of the memories the step touched shows each row as modelled
(active or superseded by whom, the first writer's source, gone once forgotten); a topic recall
shows exactly the active rows of the topic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from memconform.suite.memoturn.checks._common import LIVE
from memconform.suite.memoturn.client import fresh_profile
from memconform.suite.registry import check
from memconform.suite.stateful import SpecMachine, quote, run_machine

TOPICS = ("user.diet", "user.editor-theme", "User.Diet")  # two keys differing only in case are distinct
CONTENTS = ({"v": 1}, {"v": 2}, {"v": "ünïcödé 🦀"}, {"b": [1, None], "a": True}, {"a": True, "b": [1, None]},
            {}, {"text": "line\u2028sep"}, {"n": 9007199254740991})
SOURCES = (None, "claude-code", "cursor")
MEMORY = st.tuples(st.sampled_from(("fact", "instruction", "event")), st.sampled_from(TOPICS),
                   st.integers(0, len(CONTENTS) - 1), st.sampled_from(SOURCES))

REQUIREMENTS = ("memoturn/created-otherwise", "memoturn/duplicate-no-write", "memoturn/revive-superseded",
                "memoturn/fact-supersedes", "memoturn/instruction-supersedes", "memoturn/supersession-keyed-by-type",
                "memoturn/event-never-supersedes", "memoturn/id-content-addressed", "memoturn/id-key-order-insensitive",
                "memoturn/first-writer-source-sticks", "memoturn/forget-hard", "memoturn/history-kept",
                "memoturn/recall-hides-superseded", "memoturn/recall-topic-channel")


def _canonical(content: Any) -> str:
    import json

    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _raw(content: Any) -> str:
    import json

    return json.dumps(content, ensure_ascii=False)


@dataclass
class Row:
    id: str
    type: str
    topic: str | None
    source: str | None
    superseded_by: str | None = None
    #: the content as first sent, members in that order
    raw: str = ""
    forgotten: bool = False
    #: ingested again after it was created (by another source, perhaps): the first writer's source shows
    again: bool = False
    #: the first writer sent a source; when it sent none, `source` is what the server recorded, read
    #: from the first GET (over MCP, the server's MEMOTURN_SOURCE default may fill it)
    source_known: bool = True


class MemoturnMachine(SpecMachine, RuleBasedStateMachine):
    client: Any = None

    def __init__(self) -> None:
        super().__init__()
        self.profile = fresh_profile("machine")
        self.rows: dict[tuple[str, str | None, str], Row] = {}  # (type, topic, canonical content) → row

    # -- the page's rules ------------------------------------------------------------------------

    def _active_of(self, mtype: str, topic: str | None) -> Row | None:
        return next((r for r in self.rows.values() if r.type == mtype and r.topic == topic and topic
                     and not r.forgotten and r.superseded_by is None), None)

    def _which(self, ids: Any) -> str:
        """What the model knows of `ids`: ' (a fact under 'user.diet')' …"""
        known = [f"{r.type} under {r.topic!r}" for i in (ids if isinstance(ids, list) else [])
                 for r in self.rows.values() if r.id == i]
        return f" ({'; '.join(known)})" if known else ""

    def _supersede_rule(self, mtype: str) -> str:
        return "memoturn/fact-supersedes" if mtype == "fact" else "memoturn/instruction-supersedes"

    @rule(batch=st.lists(MEMORY, min_size=1, max_size=3,
                         unique_by=lambda m: (m[0], None if m[0] == "event" else m[1], _canonical(CONTENTS[m[2]]))))
    def ingest(self, batch: list[tuple[str, str, int, str | None]]) -> None:
        memories = []
        for mtype, topic, c, source in batch:
            m: dict[str, Any] = {"type": mtype, "summary": f"{mtype} {topic} #{c}", "content": CONTENTS[c]}
            if mtype != "event":
                m["topic_key"] = topic
            if source:
                m["source"] = source
            memories.append(m)
        shown = ", ".join(f"{m['type']} {m.get('topic_key', '-')} {quote(m['content'], 40)}"
                          + (f" by {m['source']}" if "source" in m else "") for m in memories)
        reply = self.call(f"ingest [{shown}]", self.client.ingest, self.profile, memories)
        if not reply.ok:
            if reply.status is not None and reply.status >= 500:
                self.gone(f"ingest answered HTTP {reply.status}")
            return
        results = reply.results()
        if results is None or len(results) != len(memories):
            return  # the answer's shape is memoturn/ingest-statuses' finding
        touched: list[Row] = []
        for m, res in zip(memories, results):
            if not isinstance(res, dict):
                return
            key = (m["type"], m.get("topic_key"), _canonical(m["content"]))
            got_id, status, superseded = res.get("id"), res.get("status"), res.get("superseded")
            row = self.rows.get(key)
            if row is not None and row.forgotten:
                self.rows.pop(key)
                row = None
            if row is None:
                self._judged_new(m)
                if any(r.id == got_id and not r.forgotten for r in self.rows.values()):
                    self.broken("memoturn/id-content-addressed", f"{m['type']} {quote(m['content'], 60)} got id "
                                f"{got_id!r}, already the id of another memory", received=res)
                displaced = self._active_of(m["type"], m.get("topic_key"))
                want_sup = [displaced.id] if displaced else []
                if status != "created":
                    self.broken("memoturn/created-otherwise", f"a memory new to the profile answered {quote(status)}",
                                received=res)
                if superseded != want_sup:
                    others = {r.id for r in self.rows.values() if r.type != m["type"]}
                    rid = ("memoturn/event-never-supersedes" if m["type"] == "event" else
                           "memoturn/supersession-keyed-by-type" if isinstance(superseded, list) and set(superseded) & others
                           else self._supersede_rule(m["type"]))
                    self.broken(rid, f"a new {m['type']} under {m.get('topic_key')!r} answered superseded "
                                     f"{quote(superseded)}{self._which(superseded)}; the profile's active row of "
                                     f"({m['type']}, {m.get('topic_key')!r}) is {displaced.id if displaced else 'none'} "
                                     f"(supersession is by (type, topic_key), the key as sent)", received=res)
                row = Row(got_id, m["type"], m.get("topic_key"), m.get("source"), raw=_raw(m["content"]),
                          source_known="source" in m)
                self.rows[key] = row
                if displaced:
                    displaced.superseded_by = got_id
                    touched.append(displaced)
            else:
                row.again = True
                self.judged("memoturn/id-key-order-insensitive" if _raw(m["content"]) != row.raw
                            else "memoturn/id-content-addressed",
                            "memoturn/duplicate-no-write" if row.superseded_by is None else "memoturn/revive-superseded")
                if got_id != row.id:
                    self.broken("memoturn/id-key-order-insensitive" if _raw(m["content"]) != row.raw
                                else "memoturn/id-content-addressed", f"{m['type']} {quote(m['content'], 60)} got id "
                                f"{got_id!r}; the same (type, topic_key, content) had {row.id!r}", received=res)
                if row.superseded_by is None:
                    if status != "duplicate" or superseded != []:
                        self.broken("memoturn/duplicate-no-write", f"an active memory re-ingested answered "
                                    f"{quote(status)} superseding {quote(superseded)}, not duplicate []", received=res)
                else:
                    displaced = self._active_of(row.type, row.topic)
                    want_sup = [displaced.id] if displaced else []
                    if status != "revived" or superseded != want_sup:
                        self.broken("memoturn/revive-superseded", f"a superseded memory re-ingested answered "
                                    f"{quote(status)} superseding {quote(superseded)}, not revived {want_sup}",
                                    received=res)
                    row.superseded_by = None
                    if displaced:
                        displaced.superseded_by = row.id
                        touched.append(displaced)
            touched.append(row)
        self._show(touched)

    def _judged_new(self, m: dict[str, Any]) -> None:
        """What the answer to a memory new to the profile can show, given what the profile holds."""
        self.judged("memoturn/created-otherwise")
        if any(not r.forgotten for r in self.rows.values()):
            self.judged("memoturn/id-content-addressed")  # another id it must not take
        if m["type"] == "event":
            if any(r.topic == m.get("topic_key") for r in self.rows.values()):
                self.judged("memoturn/event-never-supersedes")
            return
        if self._active_of(m["type"], m.get("topic_key")) is not None:
            self.judged(self._supersede_rule(m["type"]))
        if any(r.type != m["type"] and r.topic == m.get("topic_key") and not r.forgotten and r.superseded_by is None
               for r in self.rows.values()):
            self.judged("memoturn/supersession-keyed-by-type")  # another type's active row of the same key

    @rule(data=st.data())
    def forget(self, data: Any) -> None:
        lone = [r for r in self.rows.values() if not r.forgotten and (r.topic is None or r.type == "event" or sum(
            1 for o in self.rows.values() if (o.type, o.topic) == (r.type, r.topic)) == 1)]
        if not lone:
            return
        row = data.draw(st.sampled_from(sorted(lone, key=lambda r: r.id)), label="memory")
        reply = self.call(f"forget {row.id}", self.client.forget, self.profile, row.id)
        if reply.ok:
            row.forgotten = True
            self._show([row])

    @rule(topic=st.sampled_from(TOPICS))
    def recall_topic(self, topic: str) -> None:
        reply = self.call(f"recall topic_key={topic!r}", self.client.recall, self.profile, {"topic_key": topic, "k": 50})
        hits = reply.memories() if reply.ok else None
        if hits is None:
            return
        want = {r.id for r in self.rows.values() if r.topic == topic and r.type != "event" and not r.forgotten
                and r.superseded_by is None}
        found = {h.get("id") for h in hits if isinstance(h, dict) and "topic" in (h.get("channels") or ["topic"])}
        if want:
            self.judged("memoturn/recall-topic-channel")
        if any(r.topic == topic and r.superseded_by is not None and not r.forgotten for r in self.rows.values()):
            self.judged("memoturn/recall-hides-superseded")
        stale = {r.id for r in self.rows.values() if r.superseded_by is not None and not r.forgotten} & found
        if stale:
            self.broken("memoturn/recall-hides-superseded", f"recall of topic_key {topic!r} returns superseded "
                                                            f"{sorted(stale)}", received=hits)
        if want - found:
            self.broken("memoturn/recall-topic-channel", f"recall of topic_key {topic!r} misses the active "
                                                         f"{sorted(want - found)}", received=hits)

    def _show(self, rows: list[Row]) -> None:
        """GET of each touched row, compared with the model."""
        for row in {r.id: r for r in rows}.values():
            reply = self.call(f"get {row.id}", self.client.get, self.profile, row.id)
            if row.forgotten:
                self.judged("memoturn/forget-hard")
                # only a record answered is the memory still served: any not-found form, refusal or
                # error is "gone" (its shape is memoturn/error-envelope's and mcp-get-not-found's)
                if reply.ok and reply.memory() is not None:
                    self.broken("memoturn/forget-hard", f"{row.id} still answers its record to GET after its forget "
                                                        f"was accepted", received=reply.received)
                continue
            memory = reply.memory() if reply.ok else None
            if memory is None:
                if reply.missing:
                    self.broken("memoturn/history-kept" if row.superseded_by else "memoturn/created-otherwise",
                                f"{row.id} ({row.type} {row.topic!r}) is gone; it was "
                                f"{'superseded by ' + row.superseded_by if row.superseded_by else 'active'}",
                                received=reply.received)
                return
            if row.superseded_by:
                self.judged("memoturn/history-kept", self._supersede_rule(row.type))
            if row.again:
                self.judged("memoturn/first-writer-source-sticks")
            if memory.get("superseded_by") != row.superseded_by:
                rid = "memoturn/revive-superseded" if row.superseded_by is None else self._supersede_rule(row.type)
                self.broken(rid, f"{row.id} ({row.type} {row.topic!r}) shows superseded_by "
                                 f"{quote(memory.get('superseded_by'))}; by the page it is "
                                 f"{row.superseded_by or 'active (null)'}", received=memory)
            if not row.source_known:
                # what the server recorded for a first write that named no source: none, or over MCP
                # its default (memoturn/source-returned judges which; record-shape's finding, not this)
                row.source, row.source_known = memory.get("source"), True
                continue
            if memory.get("source") != row.source:
                first = (repr(row.source) if row.source is not None else
                         "no source (it sent none and none was recorded)")
                self.broken("memoturn/first-writer-source-sticks", f"{row.id} shows source {quote(memory.get('source'))}; "
                                                                   f"its first writer's was {first}", received=memory)


@check("memoturn/stateful/ingest", spec="memoturn", bindings=LIVE, requirements=REQUIREMENTS,
       title="Generated sequences of ingests, forgets and topic recalls: every answer and GET as the page's rules say")
def stateful_ingest(ctx: Any) -> None:
    run_machine(ctx, MemoturnMachine, name="MemoturnMachine")
