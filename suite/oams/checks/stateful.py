"""The OAMS state machine (issue 16's model-based fuzzing, suite/stateful.py): generated sequences of
STORE, FORGET and BATCH_STORE (one with an invalid member among them) on one fresh namespace per
sequence, and after every step LIST read back page by page (limits 1, 2, 3 and 50) and compared with a
model of what §3 says the namespace holds.

Model: key → value of every live memory. A STORE that was answered sets it (an upsert); a FORGET that
was answered removes it; a BATCH_STORE that was answered sets all its members, one that was refused
sets none. Refusals are never judged here (their scripted checks judge them). Keys are drawn from a
small pool holding characters a path must encode (`/`, `:`, space, `%`, non-ASCII), so upserts,
forgets of forgotten keys and paging across updates happen often.

What a LIST shows against the model, and the requirement each discrepancy breaks:

* a key twice in one page → oams/ns-key-unique; on two pages → oams/list-paging;
* a forgotten key → oams/forget-gone;
* a key of a refused batch the model never had → oams/batch-atomic;
* a live key missing, or the pages out of order → oams/list-paging; an item's updated_at after the
  previous one's → oams/list-sorted;
* a key no operation sent (a key stored changed) → oams/store-returns-stored, and then a missing key
  is not also charged to paging;
* a value other than the last one written → oams/store-upsert where the key was written again while
  live, oams/store-returns-stored where it was written once.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memconform.suite.oams import model
from memconform.suite.oams.checks._common import LIVE, owners
from memconform.suite.oams.client import fresh_namespace
from memconform.suite.registry import check
from memconform.suite.stateful import SpecMachine, quote, run_machine

KEYS = ("plain", "with/slash", "with:colon", "with space", "pct%41", "ünïcödé", "emoji-\U0001F600", "dot.key")
_chars = st.characters(blacklist_categories=("Cs", "Cc"), max_codepoint=0x10FFFF)
VALUES = st.one_of(st.text(_chars, max_size=40), st.sampled_from(("", "same value", "# md\n\n**x**", "\u2028 sep")))
TAGS = st.lists(st.sampled_from(("alpha", "beta", "gamma")), max_size=2, unique=True)
LIMITS = st.sampled_from((1, 2, 3, 50))
MAX_PAGES = 60

REQUIREMENTS = ("oams/ns-key-unique", "oams/forget-gone", "oams/batch-atomic", "oams/list-paging", "oams/list-sorted",
                "oams/store-upsert", "oams/store-returns-stored")


class OamsMachine(SpecMachine, RuleBasedStateMachine):
    client: Any = None

    def __init__(self) -> None:
        super().__init__()
        self.namespace = fresh_namespace(owners(self.ctx)[0], "machine")  # type: ignore[attr-defined]
        self.live: dict[str, str] = {}
        self.forgotten: set[str] = set()
        self.refused: set[str] = set()  # keys only ever sent in refused batches
        self.rewritten: set[str] = set()  # keys stored again while live: an upsert shows on them
        self.sent: set[str] = set()  # every key a STORE or BATCH_STORE sent, taken or not

    def _memory(self, key: str, value: Any, tags: list[str]) -> dict[str, Any]:
        memory: dict[str, Any] = {"key": key, "namespace": self.namespace, "value": value}
        if tags:
            memory["tags"] = tags
        return memory

    @rule(key=st.sampled_from(KEYS), value=VALUES, tags=TAGS)
    def store(self, key: str, value: str, tags: list[str]) -> None:
        self.sent.add(key)
        reply = self.call(f"STORE {key!r} = {quote(value, 60)}", self.client.store, self._memory(key, value, tags))
        if reply.ok:
            if key in self.live:
                self.rewritten.add(key)
            self.live[key] = value
            self.forgotten.discard(key)
            self.refused.discard(key)

    @rule(key=st.sampled_from(KEYS))
    def forget(self, key: str) -> None:
        reply = self.call(f"FORGET {key!r}", self.client.forget, self.namespace, key)
        if reply.ok or (reply.status is not None and 200 <= reply.status < 300 and reply.error is None):
            if key in self.live:
                self.live.pop(key)
                self.forgotten.add(key)

    @rule(members=st.lists(st.tuples(st.sampled_from(KEYS), VALUES), min_size=1, max_size=4,
                           unique_by=lambda kv: kv[0]),
          invalid_at=st.one_of(st.none(), st.integers(0, 4)))
    def batch(self, members: list[tuple[str, str]], invalid_at: int | None) -> None:
        memories = [self._memory(k, v, []) for k, v in members]
        if invalid_at is not None:
            bad = {"key": "never-" + members[0][0], "namespace": self.namespace, "value": 42}
            memories.insert(min(invalid_at, len(memories)), bad)
        shown = ", ".join(f"{m['key']!r}" + (" (value 42)" if m["value"] == 42 else "") for m in memories)
        self.sent |= {m["key"] for m in memories}
        reply = self.call(f"BATCH_STORE [{shown}]", self.client.batch_store, memories)
        if reply.ok:
            if invalid_at is not None:
                return self._unmodelled()  # an invalid member taken: oams/invalid-memory-refused's finding
            for k, v in members:
                if k in self.live:
                    self.rewritten.add(k)
                self.live[k] = v
                self.forgotten.discard(k)
                self.refused.discard(k)
        else:
            self.refused |= {m["key"] for m in memories if m["key"] not in self.live}

    def _unmodelled(self) -> None:
        """The target took a batch the spec says it must refuse: what it now holds is no longer
        modelled here, so the machine starts this namespace afresh."""
        self.namespace = fresh_namespace(owners(self.ctx)[0], "machine")  # type: ignore[attr-defined]
        self.live.clear()
        self.forgotten.clear()
        self.refused.clear()
        self.rewritten.clear()
        self.sent.clear()

    @invariant()
    def listed_as_modelled(self) -> None:
        self._compare(2)  # after every step, in pages of two; `list_with` draws other sizes

    @rule(limit=LIMITS)
    def list_with(self, limit: int) -> None:
        self._compare(limit)

    def _compare(self, limit: int) -> None:
        items: list[Any] = []
        cursor, seen = None, set()
        for _ in range(MAX_PAGES):
            reply = self.call(f"LIST limit={limit} cursor={quote(cursor, 40)}", self.client.list, self.namespace,
                              cursor=cursor, limit=limit)
            if reply.error_code == model.NAMESPACE_NOT_FOUND and not items:
                break
            if not reply.ok:
                return  # a refused LIST is oams/list-order's finding, not a state discrepancy
            page, _how = reply.memories()
            if page is None:
                return
            if len(page) > limit:
                self.broken("oams/list-paging", f"a page of {len(page)} memories with limit {limit}",
                            received=reply.received)
            page_keys = [m.get("key") if isinstance(m, dict) else m for m in page]
            twice = sorted({k for k in page_keys if page_keys.count(k) > 1}, key=str)
            if twice:
                self.broken("oams/ns-key-unique", f"one LIST page (limit {limit}) shows {twice} more than once; the "
                                                  f"namespace holds {sorted(self.live)}", received=page_keys)
            again = sorted({k for k in page_keys if any(isinstance(m, dict) and m.get("key") == k for m in items)},
                           key=str)
            if again:
                self.broken("oams/list-paging", f"following the cursor (limit {limit}) shows {again} on two pages",
                            received=page_keys)
            items.extend(page)
            cursor = reply.cursor()
            if not cursor or str(cursor) in seen:
                break
            seen.add(str(cursor))
        keys = [m.get("key") if isinstance(m, dict) else m for m in items]
        self._judged_list(items)
        ghosts = sorted(k for k in set(keys) if isinstance(k, str) and k in self.forgotten)
        if ghosts:
            self.broken("oams/forget-gone", f"LIST shows {ghosts} after FORGET answered success", received=keys)
        leaked = sorted(k for k in set(keys) if isinstance(k, str) and k in self.refused)
        if leaked:
            self.broken("oams/batch-atomic", f"LIST shows {leaked}, sent only in a batch that was refused",
                        received=keys)
        missing = sorted(k for k in self.live if k not in keys)
        # a key no operation sent: a memory stored under another key than the one sent (a key left
        # percent-encoded, folded, trimmed), not a page lost (found by the blind red team)
        strangers = sorted({k for k in keys if k not in self.sent}, key=str)
        if strangers:
            self.broken("oams/store-returns-stored", f"LIST shows {strangers}, keys no STORE or BATCH_STORE sent, "
                                                     f"while {missing or 'nothing'} of the keys stored is missing",
                        received=keys)
        elif missing:
            self.broken("oams/list-paging", f"following the cursor (limit {limit}) never shows {missing}; the "
                                            f"namespace holds {sorted(self.live)}", received=keys)
        for m in items:
            if isinstance(m, dict) and m.get("key") in self.live and m.get("value") != self.live[m["key"]]:
                # a value changed on its first write is what STORE stored, not an upsert's doing
                rule = "oams/store-upsert" if m["key"] in self.rewritten else "oams/store-returns-stored"
                self.broken(rule, f"{m['key']!r} reads {quote(m.get('value'), 80)}, but the last value written was "
                                  f"{quote(self.live[m['key']], 80)}", received=m)
        times = [model.parse_time(m.get("updated_at")) if isinstance(m, dict) else None for m in items]
        for i in range(1, len(times)):
            if times[i] is not None and times[i - 1] is not None and times[i] > times[i - 1]:
                self.broken("oams/list-sorted", f"{keys[i]!r} (updated {items[i].get('updated_at')}) comes after "
                                                f"{keys[i - 1]!r} (updated {items[i - 1].get('updated_at')})",
                            received=keys)


    def _judged_list(self, items: list[Any]) -> None:
        """What a whole LIST walk can show, given what the model holds."""
        if self.live:
            self.judged("oams/list-paging")
        if items:
            self.judged("oams/ns-key-unique")
        if len(items) > 1:
            self.judged("oams/list-sorted")
        if self.forgotten:
            self.judged("oams/forget-gone")
        if self.refused:
            self.judged("oams/batch-atomic")
        if self.rewritten & set(self.live):
            self.judged("oams/store-upsert")
        if set(self.live) - self.rewritten:
            self.judged("oams/store-returns-stored")


@check("oams/stateful/store", spec="oams", bindings=LIVE, requirements=REQUIREMENTS,
       title="Generated sequences of STORE, FORGET and BATCH_STORE: LIST always shows what the model holds")
def stateful_store(ctx: Any) -> None:
    run_machine(ctx, OamsMachine, name="OamsMachine")
