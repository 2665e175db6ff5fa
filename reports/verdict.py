"""What a run concluded, per target / spec / version / binding: the one model the terminal, the JSON
report, HTML, badges and `compare` all render (DESIGN.md ideas 4 and 9).

* The level is computed from the outcomes the target really got: a baseline or a descriptor's
  `known_deviations` accepts failures for the exit status and never raises a level or a badge.
* Every row says what blocks the next level, naming every requirement (or "+N more" in a line).
* A subject that is not an implementation (a file) cannot reach an implementation's level: it
  reaches the catalogue's claim for it ("L0 (emitted file)"), and what it could not show is said.
* `status` is one word a renderer can colour by:

  ``conformant``      the binding's top level reached, nothing failed
  ``partial``         a level reached (or none), the next one blocked by failed or errored MUSTs
  ``not-assessed``    a level reached, the next one not assessable on this binding; nothing failed
  ``claim``           a file reached its claim (`claim.title`); nothing failed
  ``incomplete``      no level and no claim, nothing failed: not assessable here (never red)
  ``not-conformant``  no level reached, MUSTs of the lowest level failed (or a file's claim blocked by a failed MUST)
  ``error``           the target could not be judged
  ``skipped``         the target cannot run here (no container engine …)
"""

from __future__ import annotations

from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import LEVELS, Keyword, Outcome

#: The highest level a binding can carry: files are the portable record (§7 L0), the operations
#: of L1 and above need a live server.
BINDING_TOP_LEVEL = {"file": "L0"}
#: How many requirement ids a one-line summary names before "+N more" (the report keeps them all).
LINE_IDS = 3
STATUSES = ("conformant", "partial", "not-assessed", "claim", "incomplete", "not-conformant", "error", "skipped")


def _musts(cat: catalogues.Catalogue, version: str, binding: str | None, level: str,
           profile: str | None = None) -> list[Any]:
    """The testable MUSTs of `level` that count toward it: not those of a conformance class of their
    own, nor those the target's profile is not bound by."""
    return [r for r in cat.for_version(version, binding)
            if r.level == level and r.keyword is Keyword.MUST and r.testable and r.counts_for_level(profile)]


def compute_level(spec: str, version: str, outcomes: dict[str, dict[str, Any]],
                  claimed_levels: tuple[str, ...], binding: str | None = None,
                  profile: str | None = None, waived: Any = ()) -> dict[str, Any]:
    """The highest level whose testable MUSTs all passed, counting up from L0. On a binding,
    only the MUSTs that can be judged there count (the file formats are not an HTTP server's),
    and not those `waived`: what the spec lets this target leave out, and it did."""
    cat = catalogues.load(spec)
    reached = None
    blocked: dict[str, Any] | None = None
    for level in LEVELS[:LEVELS.index(BINDING_TOP_LEVEL.get(binding or "", LEVELS[-1])) + 1]:
        if not any(r.level == level for r in cat.for_version(version)):
            continue  # a level the spec does not have (UPP starts at level 1)
        musts = _musts(cat, version, binding, level, profile)
        failed = [r.id for r in musts if outcomes.get(r.id, {}).get("outcome") is Outcome.FAILED]
        errored = [r.id for r in musts if outcomes.get(r.id, {}).get("outcome") is Outcome.ERROR]
        unassessed = [r.id for r in musts if r.id not in outcomes and r.id not in waived]
        if failed or errored or unassessed:
            blocked = {"level": level, "failed": failed, "errors": errored, "not_assessed": unassessed,
                       "suite_claims_level": level in claimed_levels}
            break
        reached = level
    return {"level": reached, "blocked_at": blocked}


def compute_claim(spec: str, version: str, binding: str, outcomes: dict[str, dict[str, Any]],
                  not_exercised: dict[str, str], file_as: str) -> dict[str, Any] | None:
    """The catalogue's claim for a file: reached when every MUST it covers passed or was not
    exercised because the file holds nothing it is about (`not_exercised`: id -> reason)."""
    cat = catalogues.load(spec)
    claim = cat.claim_for(binding, file_as)
    if claim is None:
        return None
    covered = [r for r in _musts(cat, version, binding, claim.level) if r.role not in claim.excludes_roles]
    failed = [r.id for r in covered if outcomes.get(r.id, {}).get("outcome") is Outcome.FAILED]
    errored = [r.id for r in covered if outcomes.get(r.id, {}).get("outcome") is Outcome.ERROR]
    passed = [r.id for r in covered if outcomes.get(r.id, {}).get("outcome") is Outcome.PASSED]
    vacuous = {r.id: not_exercised[r.id] for r in covered if r.id not in outcomes and r.id in not_exercised}
    unassessed = [r.id for r in covered if r.id not in outcomes and r.id not in not_exercised]
    excluded: dict[str, list[str]] = {}
    for r in _musts(cat, version, binding, claim.level):
        if r.role in claim.excludes_roles:
            excluded.setdefault(r.role, []).append(r.id)
    return {"id": claim.id, "title": claim.title, "as": file_as, "summary": claim.summary,
            "reached": bool(passed) and not (failed or errored or unassessed),
            "passed": len(passed), "failed": failed, "errors": errored, "not_assessed": unassessed,
            "not_exercised": vacuous, "left_out": excluded}


def compute_classes(spec: str, version: str, binding: str, outcomes: dict[str, dict[str, Any]],
                    profile: str | None = None) -> list[dict[str, Any]]:
    """Each conformance class of the catalogue with MUSTs on this binding: reached when every one of
    them that applies passed (reported beside the level, never blocking it)."""
    cat = catalogues.load(spec)
    rows = []
    for cls in cat.conformance_classes:
        musts = [r for r in cat.for_version(version, binding) if r.conformance_class == cls.id
                 and r.keyword is Keyword.MUST and r.testable and r.in_profile(profile)]
        if not musts:
            continue
        state = {r.id: outcomes.get(r.id, {}).get("outcome") for r in musts}
        failed = [i for i, o in state.items() if o is Outcome.FAILED]
        errored = [i for i, o in state.items() if o is Outcome.ERROR]
        unassessed = [i for i, o in state.items() if o is None]
        passed = [i for i, o in state.items() if o is Outcome.PASSED]
        # a class's SHOULDs never decide it, but a warning on one is said beside it (the level's own
        # count leaves class requirements out)
        warned = [r.id for r in cat.for_version(version, binding) if r.conformance_class == cls.id
                  and r.keyword is Keyword.SHOULD and r.in_profile(profile)
                  and outcomes.get(r.id, {}).get("outcome") is Outcome.WARNING]
        rows.append({"id": cls.id, "title": cls.title, "reached": bool(passed) and not (failed or errored or unassessed),
                     "passed": len(passed), "failed": failed, "errors": errored, "not_assessed": unassessed,
                     "warnings": warned})
    return rows


def next_level(spec: str, version: str, level: str | None) -> str | None:
    """The level above `level` that the spec version has (its lowest when `level` is None)."""
    have = {r.level for r in catalogues.load(spec).for_version(version)}
    start = 0 if level is None else LEVELS.index(level) + 1
    return next((lv for lv in LEVELS[start:] if lv in have), None)


def blocked_by(row: dict[str, Any]) -> list[str]:
    """Every requirement that blocks the next level, or one above it (row["blocked_by"] when the
    report has it); the blocked level's own first, failed before errored."""
    if "blocked_by" in row:
        return list(row["blocked_by"])
    blocked = row.get("blocked_at") or {}
    return [*blocked.get("failed", ()), *blocked.get("errors", ())]


def blocking(spec: str, version: str, binding: str, outcomes: dict[str, dict[str, Any]],
             blocked: dict[str, Any] | None, profile: str | None = None) -> list[str]:
    """The MUSTs that failed or errored at the blocked level and every level above it."""
    if not blocked:
        return []
    cat = catalogues.load(spec)
    first = [*blocked["failed"], *blocked["errors"]]
    above = []
    for level in LEVELS[LEVELS.index(blocked["level"]) + 1:]:
        musts = _musts(cat, version, binding, level, profile)
        above += [r.id for r in musts if outcomes.get(r.id, {}).get("outcome") is Outcome.FAILED]
        above += [r.id for r in musts if outcomes.get(r.id, {}).get("outcome") is Outcome.ERROR]
    return first + above


def errored_only(row: dict[str, Any]) -> bool:
    """What blocks the next level is target errors alone, no MUST failed: the level above was not
    judged, and "not conformant" would be a verdict on what was never observed."""
    return bool(blocked_by(row)) and not row.get("must_failed") and bool(row.get("errors"))


def status_of(row: dict[str, Any]) -> str:
    blocked = row.get("blocked_at")
    claim = row.get("claim")
    if errored_only(row):
        return "not-assessed" if row["level"] is not None else "error"
    if blocked_by(row):
        return "partial" if row["level"] is not None else "not-conformant"
    if row["level"] is not None:
        return "not-assessed" if blocked else "conformant"
    if claim and claim["reached"]:
        return "claim"
    if claim and claim["failed"]:  # a file whose claim a failed MUST blocks: a verdict, not "incomplete"
        return "not-conformant"
    if row.get("errors") and not row.get("must_passed"):
        return "error"
    return "incomplete"


def ids_text(ids: list[str], limit: int = LINE_IDS) -> str:
    more = len(ids) - limit
    return ", ".join(ids[:limit]) + (f" (+{more} more)" if more > 0 else "")


def verdict_words(row: dict[str, Any], *, ids: int = 1, with_level: bool = False) -> str:
    """The verdict of a level row in a few words, for a table cell (the level table, compare):
    what blocks the next level naming `ids` requirements then "+N more" (0: how many), a file's
    claim, or why nothing was judged; `with_level` puts the level reached first."""
    status = row.get("status")
    claim = row.get("claim") or {}
    shown = row.get("level") or (claim.get("title") if claim.get("reached") else None)
    if status is None:  # a report written before level rows had a status: the level alone
        return shown or "no level"
    blocked = row.get("blocked_at") or {}
    blocking = blocked_by(row)
    which = ids_text(blocking, ids) if ids else f"{len(blocking)} MUST"
    lead = f"{shown} " if with_level and shown else ""
    if status == "partial":
        word = f"{lead}partial ({blocked.get('level')} blocked by {which})" if with_level \
            else f"{blocked.get('level')} blocked by {which}"
    elif status == "not-conformant" and not blocked:
        word = f"not conformant: {claim.get('title')} claim blocked by " + \
            (ids_text(claim.get("failed") or [], ids) if ids else f"{len(claim.get('failed') or [])} MUST")
    elif status == "not-conformant":
        word = f"not conformant: {blocked.get('level')} blocked by {which}"
    elif status == "not-assessed" or (status == "error" and errored_only(row)):
        word = f"{lead}({blocked.get('level')} not assessed)" if with_level else f"{blocked.get('level')} not assessed"
    elif status == "claim":
        word = f"{shown} (claim)" if with_level else str(claim.get("title") or "claim reached")
    elif status == "incomplete":
        word = "not assessed"
    elif status == "conformant":
        word = f"{lead}conformant"
    else:  # error, skipped: the word itself
        word = str(status)
    accepted = row.get("accepted") or {}
    if accepted.get("must"):
        word += f"; {accepted['must']} MUST accepted by {' and '.join(accepted.get('by') or ('baseline',))}"
    return word


def _blocked_text(row: dict[str, Any]) -> str:
    """What blocks the next level, in the line: that level's own MUSTs, then those of the levels
    above it apart (a vendor read "L1 blocked by" an L2 rule as an L1 one)."""
    blocked = row.get("blocked_at") or {}
    every = blocked_by(row)
    own = [rid for rid in every if rid in {*blocked.get("failed", ()), *blocked.get("errors", ())}]
    above = [rid for rid in every if rid not in own]
    if not own or not above:
        return ids_text(every)
    return f"{ids_text(own)}; above it, also {ids_text(above)}"


def summary_line(row: dict[str, Any]) -> str:
    """One line: who, where, what was reached, what blocks the next level, and the counts."""
    level = row["level"]
    claim = row.get("claim")
    shown = level or (claim["title"] if claim and claim["reached"] else "—")
    if level and row.get("level_name"):
        shown = f"{level} ({row['level_name']})"
    profile = f" ({row['profile']})" if row.get("profile") else ""
    head = f"{row['target']} · {row['spec'].upper()} {row['version']}{profile} / {shown} / {row['binding']}"
    blocked = row.get("blocked_at")
    status = row["status"]
    if status == "conformant":
        words = "conformant"
    elif status == "partial":
        words = f"{blocked['level']} blocked by {_blocked_text(row)}"
    elif status == "not-conformant" and not blocked:
        words = f"not conformant: the {claim['title']} claim blocked by {ids_text(claim['failed'])}"
    elif status == "not-conformant":
        words = f"not conformant: {blocked['level']} blocked by {_blocked_text(row)}"
    elif status in ("not-assessed", "error") and errored_only(row):
        words = (f"conformant up to {level}; " if level else "error: ") + \
                f"{blocked['level']} not assessed, the target failed on {ids_text(blocked_by(row))}"
    elif status == "not-assessed" and row.get("judged_up_to") and \
            LEVELS.index(blocked["level"]) > LEVELS.index(row["judged_up_to"]):
        words = f"conformant up to {level}; {blocked['level']} and above not judged (--level {row['judged_up_to']})"
    elif status == "not-assessed":
        words = (f"conformant up to {level}; {blocked['level']} not assessed "
                 f"({len(blocked['not_assessed'])} MUST not judged here: {ids_text(blocked['not_assessed'], 3)})")
    elif status == "claim":
        words = "claim reached"
    elif status == "error":
        words = "error: could not be judged"
    else:
        words = "incomplete"
    counts = []
    if row["must_passed"]:
        counts.append(f"{row['must_passed']} MUST passed")
    if row["must_failed"]:
        counts.append(f"{row['must_failed']} MUST failed")
    accepted = row.get("accepted") or {}
    if accepted.get("must"):
        counts.append(f"{accepted['must']} accepted by {' and '.join(accepted['by'])}")
    if row["errors"]:
        counts.append(f"{row['errors']} error{'s' if row['errors'] != 1 else ''}")
    counts.append(f"{row['should_warnings']} SHOULD warning{'s' if row['should_warnings'] != 1 else ''}")
    if row["may_info"]:
        counts.append(f"{row['may_info']} MAY not offered")
    if row.get("inconclusive"):
        counts.append(f"{row['inconclusive']} MUST/SHOULD inconclusive")
    if claim and level is None:
        if claim["not_exercised"]:
            counts.append(f"{len(claim['not_exercised'])} not exercised by this file "
                          f"({ids_text(sorted(claim['not_exercised']))})")
        if not claim["reached"] and claim["not_assessed"]:
            counts.append(f"{len(claim['not_assessed'])} {claim['title']} MUST not assessable here: "
                          f"{ids_text(claim['not_assessed'])}")
        left_out = claim["left_out"]
        if left_out.get("reader"):
            counts.append(f"{len(left_out['reader'])} MUST about reading records need a live implementation")
        if left_out.get("export"):
            counts.append(f"{len(left_out['export'])} export rules not applied to a dump")
    elif status == "incomplete" and blocked:
        counts.append(f"{len(blocked['not_assessed'])} {blocked['level']} MUST not assessable here: "
                      f"{ids_text(blocked['not_assessed'])}")
    if row.get("waived"):
        counts.append(f"{len(row['waived'])} MUST waived as the spec allows ({ids_text(sorted(row['waived']))})")
    if row.get("overclaimed"):
        counts.append(f"advertises {row['advertised']}")
    beside = []
    for cls in row.get("classes") or ():
        if cls["reached"]:
            warned = cls.get("warnings") or ()
            beside.append(f"{cls['title']}: yes ({cls['passed']} MUST"
                          + (f"; {len(warned)} SHOULD warning{'s' if len(warned) > 1 else ''}: {ids_text(warned)}"
                             if warned else "") + ")")
        elif cls["failed"] or cls["errors"]:
            beside.append(f"{cls['title']}: no, {ids_text([*cls['failed'], *cls['errors']])}"
                          + ("" if cls.get("required", True) or not cls["failed"]
                             else f" (not required: xfailed; --require-class {cls['id']} fails the run)"))
        else:
            beside.append(f"{cls['title']}: not assessed ({len(cls['not_assessed'])} MUST)")
    return f"{head}: {words} — {', '.join(counts)}" + "".join(f"; {b}" for b in beside)


def badge_status(rows: list[dict[str, Any]]) -> str:
    """The status of a badge's group of rows (one target / spec / version, every binding)."""
    statuses = {r["status"] for r in rows}
    for s in ("conformant", "partial", "not-assessed", "claim", "not-conformant", "error", "incomplete"):
        if s in statuses:
            return s
    return "incomplete"
