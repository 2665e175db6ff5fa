"""Issue 14, "keep what held": kill -9 during writes. A few clients remember and revise against
`memconform serve --db FILE`; once a fixed number of writes has been acknowledged, the server gets
SIGKILL while the clients are still writing. Restarted on the same file, it holds every acknowledged
write as acknowledged (text, supersession) and the file passes `PRAGMA integrity_check`. Counts only;
nothing is timed.
"""

from __future__ import annotations

import sqlite3
import threading
import urllib.parse
from pathlib import Path

import httpx

from ._serve_process import ServeProcess, auth, record, start

WRITERS = 3
KILL_AFTER = 120   # acknowledged writes before the kill
CEILING = 400      # per writer: a writer stops here even if the kill never came


def _writer(url: str, index: int, acked: dict[str, str], revised: dict[str, str], lock: threading.Lock,
            enough: threading.Event, problems: list[str]) -> None:
    last: str | None = None
    with httpx.Client(base_url=url, headers=auth(), timeout=30) as c:
        for n in range(CEILING):
            try:
                if last is not None and n % 3 == 2:
                    text = f"crash writer {index} revision {n}"
                    r = c.post("/ump/revise", json={"id": last, "patch": {"body": {"text": text}}})
                else:
                    text = f"crash writer {index} note {n}"
                    r = c.post("/ump/remember", json={"record": record(text)})
            except httpx.HTTPError:
                return  # the server is gone: what it acknowledged before is what must survive
            if r.status_code != 200:
                with lock:
                    problems.append(f"writer {index}: {r.status_code} {r.text[:200]}")
                return
            with lock:
                new = r.json()["id"]
                acked[new] = text
                if "supersedes" in r.json():
                    revised[last] = new
                if len(acked) >= KILL_AFTER:
                    enough.set()
            last = new


def test_kill_9_during_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "ump.sqlite"
    acked: dict[str, str] = {}
    revised: dict[str, str] = {}
    problems: list[str] = []
    lock, enough = threading.Lock(), threading.Event()
    first: ServeProcess = start(tmp_path, "--db", str(db), name="first")
    try:
        writers = [threading.Thread(target=_writer, args=(first.url, i, acked, revised, lock, enough, problems),
                                    daemon=True) for i in range(WRITERS)]
        for w in writers:
            w.start()
        assert enough.wait(300), f"only {len(acked)} writes were acknowledged"
        first.kill9()
        for w in writers:
            w.join(60)
        assert not any(w.is_alive() for w in writers)
    finally:
        first.stop()
    with lock:
        acked, revised = dict(acked), dict(revised)
    assert not problems, "\n".join(problems)
    assert len(acked) >= KILL_AFTER and revised

    second = start(tmp_path, "--db", str(db), name="second")
    try:
        missing = []
        with httpx.Client(base_url=second.url, headers=auth(), timeout=30) as c:
            for rid, text in acked.items():
                r = c.get("/ump/memory/" + urllib.parse.quote(rid, safe=""))
                if r.status_code != 200:
                    missing.append(f"{rid}: {r.status_code} {r.text[:120]}")
                    continue
                rec = r.json()["record"]
                if rec["body"]["text"] != text:
                    missing.append(f"{rid}: holds {rec['body']['text']!r}, acknowledged {text!r}")
                if rid in revised and rec.get("superseded_by") != [revised[rid]]:
                    missing.append(f"{rid}: superseded_by {rec.get('superseded_by')}, acknowledged {revised[rid]}")
            after = c.post("/ump/remember", json={"record": record("written after the restart")})
            assert after.status_code == 200, after.text
        assert not missing, f"{len(missing)} of {len(acked)} acknowledged writes lost:\n" + "\n".join(missing[:20])
    finally:
        second.stop()

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
