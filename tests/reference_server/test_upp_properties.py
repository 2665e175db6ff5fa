"""Invariants of the reference UPP engine under random sequences of ingest, import, delete and
get_events (hypothesis, stateful): after every step

* a user has at most one valid event per singular label (upp/one-valid-per-singular);
* every non-null superseded_by names an existing event of the same user (upp/superseded-by-existing);
* a deleted event is gone from get_events, retrieve and export (upp/delete-physical), and
  deleted_count is the number of the user's events actually deleted (upp/delete-count);
* get_events lists each event once, with the user's entity_key.

Strategies are written by hand (hypothesis-jsonschema does not work with this hypothesis).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from memconform.reference_impl.upp.rpc import RpcError
from memconform.reference_impl.upp.service import UppService
from memconform.suite.upp import ontology

USERS = ("u1", "u2", "u3")
SINGULAR = ("who_name", "where_home", "who_role", "who_age")
PLURAL = ("what_interests_hobbies", "who_languages")
NAMES = ("Ann", "Bo", "Chen", "Dara")
PLACES = ("Lima", "Oslo", "Pune")

sentence = st.one_of(
    st.sampled_from(NAMES).map(lambda n: f"My name is {n}."),
    st.sampled_from(PLACES).map(lambda p: f"I live in {p}."),
    st.sampled_from(("chess", "go", "rain")).map(lambda h: f"I love {h}."),
    st.sampled_from(("Welsh", "Ewe")).map(lambda lang: f"I speak {lang}."),
    st.sampled_from(("nurse", "baker")).map(lambda r: f"I work as a {r}."),
    st.integers(1, 99).map(lambda n: f"I'm {n} years old."),
    st.just("Nothing to see here."),
)
texts = st.lists(sentence, max_size=4).map(" ".join)

labels = st.lists(st.sampled_from((*SINGULAR, *PLURAL, "not_a_label")), min_size=0, max_size=3)
package_event = st.one_of(
    st.fixed_dictionaries({
        "id": st.sampled_from(("evt_a", "evt_b", "evt_c")),
        "entity_key": st.just("elsewhere"),
        "value": st.sampled_from(("User lives in Lima", "User's name is Ann", "User loves go", "")),
        "labels": labels,
        "confidence": st.sampled_from((0.0, 0.3, 0.5, 0.8, 1.0, 1.5)),
        "source_type": st.sampled_from(("user_stated", "inferred", "rumour")),
        "status": st.sampled_from(("valid", "staged", "superseded")),
        "created_at": st.sampled_from(("2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z", "garbage")),
        "superseded_by": st.sampled_from((None, "evt_a", "evt_zzz")),
    }),
    st.sampled_from((None, 1, "text", [])),
)


class UppMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="upp-props-"))
        self.service = UppService(export_dir=self.folder)
        self.deleted: set[tuple[str, str]] = set()
        self.seen: dict[str, dict[str, Any]] = {}  # every event id ever listed -> its user
        self.files = 0

    def teardown(self) -> None:
        if hasattr(self, "service"):
            self.service.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    # -- helpers --------------------------------------------------------------------------------

    def listed(self, user: str) -> list[dict[str, Any]]:
        try:
            got = self.service.call("upp/get_events", {"entity_key": user})
        except RpcError as exc:
            assert exc.code == -32001
            return []
        for e in got:
            self.seen[e["id"]] = e
        return got

    # -- rules ----------------------------------------------------------------------------------

    @rule(user=st.sampled_from(USERS), text=texts)
    def ingest(self, user: str, text: str) -> None:
        got = self.service.call("upp/ingest", {"entity_key": user, "text": text})
        assert all(e["entity_key"] == user for e in got)
        assert {e["id"] for e in got} <= {e["id"] for e in self.listed(user)}

    @rule(user=st.sampled_from(USERS), events=st.lists(package_event, max_size=5))
    def import_(self, user: str, events: list[Any]) -> None:
        self.files += 1
        path = self.folder / f"pkg-{self.files}.json"
        path.write_text(json.dumps({"entity_key": "elsewhere", "ontology": "user/v1", "events": events,
                                    "exported_at": "2026-01-01T00:00:00Z"}), encoding="utf-8")
        before = {e["id"] for e in self.listed(user)}
        got = self.service.call("upp/import_events", {"entity_key": user, "file": str(path)})
        assert got["imported_count"] + got["skipped_count"] == len(events)
        after = self.listed(user)
        assert len(after) - len(before) <= got["imported_count"]  # a reinforcement stores nothing new
        assert not ({e["id"] for e in after} - before) & {"evt_a", "evt_b", "evt_c"}  # new ids

    @rule(user=st.sampled_from(USERS), other=st.sampled_from(USERS),
          pick=st.lists(st.integers(0, 20), max_size=4), extra=st.booleans(), mode=st.sampled_from(("ids", "all", "empty")))
    def delete(self, user: str, other: str, pick: list[int], extra: bool, mode: str) -> None:
        mine = [e["id"] for e in self.listed(user)]
        theirs = [e["id"] for e in self.listed(other)] if other != user else []
        pool = mine + theirs
        if mode == "ids":
            ids = [pool[i % len(pool)] for i in pick] if pool else []
            ids += ["evt_unknown"] if extra else []
            params: dict[str, Any] = {"entity_key": user, "event_ids": ids}
            expected = set(ids) & set(mine)
            if not ids:
                expected = set(mine)  # an empty list deletes all
        else:
            params = {"entity_key": user} if mode == "all" else {"entity_key": user, "event_ids": []}
            expected = set(mine)
        got = self.service.call("upp/delete_events", params)
        assert got == {"deleted_count": len(expected)}
        self.deleted |= {(user, i) for i in expected}
        assert {e["id"] for e in self.listed(other)} >= set(theirs) - expected  # never another user's

    @rule(user=st.sampled_from(USERS))
    def export_and_retrieve(self, user: str) -> None:
        try:
            result = self.service.call("upp/export_events", {"entity_key": user})
        except RpcError as exc:
            assert exc.code == -32001 and not self.listed(user)
            return
        package = json.loads(Path(result["file"]).read_text("utf-8"))
        ids = {e["id"] for e in package["events"]}
        assert ids == {e["id"] for e in self.listed(user)} and result["event_count"] == len(ids)
        assert not {(user, i) for i in ids} & self.deleted
        found = self.service.call("upp/retrieve", {"entity_key": user, "query": "name lives loves speaks",
                                                   "max_results": 1000})
        assert not {(user, e["id"]) for e in found} & self.deleted
        assert {e["status"] for e in found} <= {"valid"}

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def at_most_one_valid_event_per_singular_label(self) -> None:
        singular = ontology.user_v1().singular
        for user in USERS:
            valid = [label for e in self.listed(user) if e["status"] == "valid" for label in e["labels"]]
            for label in singular:
                assert valid.count(label) <= 1, (user, label)

    @invariant()
    def every_pointer_names_an_event_of_the_same_user(self) -> None:
        for user in USERS:
            listed = self.listed(user)
            ids = {e["id"] for e in listed}
            assert len(ids) == len(listed)
            for e in listed:
                assert e["entity_key"] == user
                if e["superseded_by"] is not None:
                    assert e["status"] == "superseded" and e["superseded_by"] in ids and e["superseded_by"] != e["id"]

    @invariant()
    def deleted_events_stay_gone(self) -> None:
        for user in USERS:
            assert not {(user, e["id"]) for e in self.listed(user)} & self.deleted


UppMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None,
                                        suppress_health_check=[HealthCheck.too_slow])
TestUppProperties = UppMachine.TestCase
