"""Issue 14, "keep what held": several clients at once against one `memconform serve` process.

Each client (a thread with its own httpx connection and seeded choices) makes a fixed number of
remember / recall / revise / forget calls; revises aim at a few shared chains, so clients race to
revise the same head. Afterwards: no answer was a 5xx or went missing, every acknowledged write is
there as acknowledged, and every revise chain is linear (no record was acknowledged as revised twice,
none is superseded by more than one). Counts only; nothing is timed.
"""

from __future__ import annotations

import random
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from ._serve_process import ServeProcess, auth, record, start

CLIENTS = 6
OPERATIONS = 30  # per client
CHAINS = 3       # shared revise chains the clients race on


@dataclass
class Ledger:
    """What the server acknowledged, shared by the clients."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    texts: dict[str, str] = field(default_factory=dict)        # id → body text it was acknowledged with
    revised: dict[str, str] = field(default_factory=dict)      # prior id → the new id its revise answered
    forgotten: dict[str, str] = field(default_factory=dict)    # id → "tombstoned" | "erased"
    heads: list[str] = field(default_factory=list)             # the newest known id of each chain
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    running = start(tmp_path, "--db", str(tmp_path / "ump.sqlite"))
    try:
        yield running
    finally:
        running.stop()


def _client(url: str, index: int, ledger: Ledger, barrier: threading.Barrier) -> None:
    rng = random.Random(1400 + index)
    mine: list[str] = []  # records this client made outside the chains (only it forgets them)
    with httpx.Client(base_url=url, headers=auth(), timeout=60) as c:
        barrier.wait()
        for n in range(OPERATIONS):
            op = rng.choice(("remember", "remember", "recall", "revise", "revise", "forget"))
            if op == "forget" and not mine:
                op = "remember"
            try:
                if op == "remember":
                    text = f"concurrency client {index} note {n} {rng.getrandbits(32):08x}"
                    r = c.post("/ump/remember", json={"record": record(text)})
                    if r.status_code == 200:
                        with ledger.lock:
                            ledger.texts[r.json()["id"]] = text
                        mine.append(r.json()["id"])
                elif op == "recall":
                    query = f"concurrency client {rng.randrange(CLIENTS)}"
                    r = c.post("/ump/recall", json={"query": query, "limit": 5})
                elif op == "revise":
                    chain = rng.randrange(CHAINS)
                    with ledger.lock:
                        head = ledger.heads[chain]
                    text = f"chain {chain} revised by client {index} at {n}"
                    r = c.post("/ump/revise", json={"id": head, "patch": {"body": {"text": text}}})
                    if r.status_code == 200:
                        new = r.json()["id"]
                        with ledger.lock:
                            if head in ledger.revised:
                                ledger.problems.append(f"{head} acknowledged as revised twice: "
                                                       f"{ledger.revised[head]} and {new}")
                            ledger.revised[head] = new
                            ledger.texts[new] = text
                            if ledger.heads[chain] == head:
                                ledger.heads[chain] = new
                    elif not (r.status_code == 400 and r.json()["error"]["code"] == "invalid_record"):
                        # 400 invalid_record is losing the race: another client revised that head first
                        with ledger.lock:
                            ledger.problems.append(f"client {index} revise: {r.status_code} {r.text[:200]}")
                else:
                    victim = mine.pop(rng.randrange(len(mine)))
                    hard = rng.random() < 0.5
                    r = c.post("/ump/forget", json={"id": victim, "reason": "user_revoked", "hard": hard})
                    if r.status_code == 200:
                        with ledger.lock:
                            ledger.forgotten[victim] = r.json()["result"]
            except httpx.HTTPError as exc:
                with ledger.lock:
                    ledger.problems.append(f"client {index} {op}: no answer ({exc!r})")
                continue
            ledger.count(f"{op} {r.status_code}")
            if r.status_code >= 500 or (r.status_code >= 400 and op != "revise"):
                with ledger.lock:
                    ledger.problems.append(f"client {index} {op}: {r.status_code} {r.text[:200]}")


def test_concurrent_clients_lose_nothing_and_never_fork_a_chain(server: ServeProcess) -> None:
    ledger = Ledger()
    with httpx.Client(base_url=server.url, headers=auth(), timeout=60) as c:
        for chain in range(CHAINS):
            r = c.post("/ump/remember", json={"record": record(f"chain {chain} starts here")})
            assert r.status_code == 200, r.text
            ledger.heads.append(r.json()["id"])
            ledger.texts[r.json()["id"]] = f"chain {chain} starts here"
    roots = list(ledger.heads)
    barrier = threading.Barrier(CLIENTS)
    threads = [threading.Thread(target=_client, args=(server.url, i, ledger, barrier), daemon=True)
               for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "a client never finished"
    assert not ledger.problems, "\n".join(ledger.problems)
    assert sum(ledger.counts.values()) == CLIENTS * OPERATIONS, ledger.counts

    with httpx.Client(base_url=server.url, headers=auth(), timeout=60) as c:
        def get(rid: str) -> httpx.Response:
            return c.get("/ump/memory/" + urllib.parse.quote(rid, safe=""))

        lost = []
        for rid, text in ledger.texts.items():
            r = get(rid)
            fate = ledger.forgotten.get(rid)
            if fate == "erased":
                if r.status_code != 404:
                    lost.append(f"{rid} was erased but answers {r.status_code}")
                continue
            if r.status_code != 200:
                lost.append(f"{rid} acknowledged, now {r.status_code} {r.text[:120]}")
                continue
            rec = r.json()["record"]
            if rec["body"]["text"] != text:
                lost.append(f"{rid} holds {rec['body']['text']!r}, acknowledged with {text!r}")
            status = rec["lifecycle"]["status"]
            if (fate == "tombstoned") != (status == "tombstoned"):
                lost.append(f"{rid} is {status}, forget answered {fate}")
            successors = rec.get("superseded_by") or []
            if len(successors) > 1:
                lost.append(f"{rid} forked: superseded by {successors}")
            if rid in ledger.revised and successors != [ledger.revised[rid]]:
                lost.append(f"{rid} revised into {ledger.revised[rid]} but superseded_by says {successors}")
        assert not lost, "\n".join(lost)

        # Each chain, walked from its root, is one line through every revise acknowledged on it.
        walked = 0
        for root in roots:
            rid, seen = root, set()
            while rid in ledger.revised:
                assert rid not in seen, f"a cycle at {rid}"
                seen.add(rid)
                new = ledger.revised[rid]
                assert get(new).json()["record"].get("supersedes") == [rid]
                rid = new
            walked += len(seen)
        assert walked == len(ledger.revised), "an acknowledged revise lies outside every chain"
    assert ledger.counts.get("revise 200", 0) >= CHAINS, ledger.counts  # the race really ran
