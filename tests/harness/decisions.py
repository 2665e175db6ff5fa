"""Which checks meet which decision points of the reference implementation, so that a variant's
whole-suite run re-runs only the checks that can meet its choice (tests/harness/test_variants.py).

Each spec's reference reads its open choices from one policy object, made by
`reference_impl.faults.deviate`. While recording, that object writes every read of a decision point
to a log (reference_impl/consulted.py), also in the child processes a binding starts, and each read
is put down against the check running when it was written. A variant overrides some
points; a check that read none of them in a clean run took the same path as it would under the
variant (the reference is deterministic given the same reads, and every check places its own data),
so its clean result is its result under the variant. Reads made while a subject is opened (a
service built, its versions fixed, a child process started) or before the first check count for every
check of the spec; a binding with no recorded read at all is re-run whole.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Reads made outside a check: before the first, or (with the subject's version and binding after it)
#: while a subject is opened
OPENING = "(opening a subject)"
#: Bindings whose subject the reference makes from an engine of its own when it is opened, shared
#: with no other binding (UMP's and OAMS's file: an export written for that subject,
#: targets/reference.py and targets/oams.py): a point read while opening one re-runs that binding's
#: checks. Every other binding's opening may build what all share (the one server), so a point read
#: there re-runs everything.
OWN_OPENING = ("file",)


def key(check: str, version: str, binding: str) -> str:
    return f"{check}|{version}|{binding}"


@dataclass
class Recorder:
    read: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def meeting(self, points: set[str], bindings: tuple[str, ...]) -> set[str] | None:
        """The check ids that read one of `points` (any version, one of `bindings`), and every check of a
        binding of OWN_OPENING whose opening read one; None when every check must run (a point read
        while opening a subject of a shared server or before the first check, or a binding whose reads
        were not seen)."""
        checks = {k: names for k, names in self.read.items()
                  if not k.startswith(OPENING) and k.rsplit("|", 1)[1] in bindings}
        opened: dict[str, set[str]] = defaultdict(set)  # binding -> read while opening any version of it
        for k, names in self.read.items():
            if k.startswith(f"{OPENING}|"):
                opened[k.rsplit("|", 1)[1]] |= names
        if self.read.get(OPENING, set()) & points or any(
                names & points for b, names in opened.items() if b not in OWN_OPENING):
            return None
        if set(bindings) - {k.rsplit("|", 1)[1] for k, names in checks.items() if names}:
            return None
        whole = {b for b, names in opened.items() if names & points}
        return {k.split("|", 1)[0] for k, names in checks.items()
                if names & points or k.rsplit("|", 1)[1] in whole}


def record(monkeypatch: Any, folder: Path) -> Recorder:
    """Record, for the in-process runs that follow (until the test ends), which checks read which
    decision points: the reference's policies write each read to a log in `folder`
    (reference_impl/consulted.py), in this process and in every child it starts, and each check
    takes the lines written while it ran, and those written after it, before the next began."""
    from memconform.reference_impl.consulted import ENV
    from memconform.suite import plugin

    log = folder / "decisions.log"
    log.write_bytes(b"")
    monkeypatch.setenv(ENV, str(log))
    recorder = Recorder()
    offset = 0

    def take(label: str) -> None:
        nonlocal offset
        with log.open("rb") as f:
            f.seek(offset)
            new = f.read()
        # a child may be writing its line right now: leave a partial last line for the next take
        whole = new[:new.rfind(b"\n") + 1]
        offset += len(whole)
        recorder.read[label].update(whole.decode().split())

    run_check = plugin.run_check
    # what a check set going in the background reads after it ended (a task it started) cannot have
    # changed its result, nor another check's, which places its own data: it is put down against
    # that check, not against the opening, which would re-run everything
    previous = [OPENING]

    def recorded(check: Any, version: str, binding: str, client_factory: Any, *a: Any, **k: Any) -> Any:
        label = key(check.id, version, binding)

        def opening() -> Any:
            take(label)
            try:
                return client_factory()
            finally:
                take(key(OPENING, version, binding))

        take(previous[0])
        try:
            return run_check(check, version, binding, opening, *a, **k)
        finally:
            take(label)
            previous[0] = label

    monkeypatch.setattr(plugin, "run_check", recorded)
    return recorder
