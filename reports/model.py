"""The one JSON report every output is rendered from (DESIGN.md, idea 8).

`build_report` turns the per-item results into requirement outcomes, computed levels
(idea 4) and coverage per spec and level (idea 1). Pure functions over plain data, so the
report is the same however the run was split (pytest-xdist).
"""

from __future__ import annotations

import datetime as _dt
import platform
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import LEVELS, Keyword, Outcome

REPORT_FORMAT = "memconform-report/1"
#: The highest level a binding can carry: files are the portable record (§7 L0), the operations
#: of L1 and above need a live server.
BINDING_TOP_LEVEL = {"file": "L0"}
#: The check id of the stand-in result for a target that could not be opened at all.
CONNECT_CHECK = "memconform/connect"

# How item outcomes combine into a requirement outcome: the worst wins.
_SEVERITY = {
    Outcome.FAILED: 6, Outcome.ERROR: 5, Outcome.STALE: 4, Outcome.WARNING: 3, Outcome.INFO: 2,
    Outcome.XFAILED: 1, Outcome.PASSED: 0,
}


def requirement_outcomes(results: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Requirement id -> {outcome, checks}. A requirement a finding names takes the finding's
    outcome; the other requirements of a failing check are unaffected by it."""
    acc: dict[str, dict[str, Any]] = {}
    for res in results:
        outcome = Outcome(res["outcome"])
        if outcome is Outcome.SKIPPED:
            continue
        named = {f["requirement"] for f in res.get("findings", ())}
        for rid in res["requirements"]:
            if outcome is Outcome.INFO and not named:
                per_req = Outcome.INFO  # inconclusive: nothing was judged, so nothing passed
            elif outcome in (Outcome.FAILED, Outcome.WARNING, Outcome.INFO, Outcome.XFAILED):
                per_req = outcome if rid in named else Outcome.PASSED
            else:
                per_req = outcome
            entry = acc.setdefault(rid, {"outcome": Outcome.PASSED, "checks": []})
            entry["checks"].append(res["node_id"])
            if _SEVERITY[per_req] > _SEVERITY[entry["outcome"]]:
                entry["outcome"] = per_req
    return acc


def compute_level(spec: str, version: str, outcomes: dict[str, dict[str, Any]],
                  claimed_levels: tuple[str, ...], binding: str | None = None) -> dict[str, Any]:
    """The highest level whose testable MUSTs all passed, counting up from L0. On a binding,
    only the MUSTs that can be judged there count (the file formats are not an HTTP server's)."""
    cat = catalogues.load(spec)
    reached = None
    blocked: dict[str, Any] | None = None
    for level in LEVELS[:LEVELS.index(BINDING_TOP_LEVEL.get(binding, LEVELS[-1])) + 1]:
        if not any(r.level == level for r in cat.for_version(version)):
            continue  # a level the spec does not have (UPP starts at level 1)
        musts = [r for r in cat.for_version(version, binding)
                 if r.level == level and r.keyword is Keyword.MUST and r.testable]
        failed = [r.id for r in musts if outcomes.get(r.id, {}).get("outcome") is Outcome.FAILED]
        errored = [r.id for r in musts if outcomes.get(r.id, {}).get("outcome") in (Outcome.ERROR, Outcome.STALE)]
        unassessed = [r.id for r in musts if r.id not in outcomes]
        if failed or errored or unassessed:
            blocked = {"level": level, "failed": failed, "errors": errored, "not_assessed": unassessed,
                       "suite_claims_level": level in claimed_levels}
            break
        reached = level
    return {"level": reached, "blocked_at": blocked}


def _summary_line(row: dict[str, Any]) -> str:
    head = f"{row['spec'].upper()} {row['version']}"
    counts = []
    if row["must_passed"]:
        counts.append(f"{row['must_passed']} MUST passed")
    if row["must_failed"]:
        counts.append(f"{row['must_failed']} MUST failed")
    if row["errors"]:
        counts.append(f"{row['errors']} error{'s' if row['errors'] != 1 else ''}")
    counts.append(f"{row['should_warnings']} SHOULD warning{'s' if row['should_warnings'] != 1 else ''}")
    if row["may_info"]:
        counts.append(f"{row['may_info']} MAY not offered")
    if row.get("inconclusive"):
        counts.append(f"{row['inconclusive']} MUST/SHOULD inconclusive")
    blocked = row["blocked_at"]
    if row["level"] is not None:
        status = f"{head} / {row['level']} / {row['binding']}: conformant"
        if blocked and not blocked["failed"] and not blocked["errors"]:
            counts.append(f"{blocked['level']} not assessed ({len(blocked['not_assessed'])} MUST without a "
                          f"check on this binding)")
        elif blocked:
            counts.append(f"{blocked['level']} not reached")
    elif blocked and (blocked["failed"] or blocked["errors"]):
        status = f"{head} / {row['binding']}: not conformant"
        counts.append(f"{blocked['level']} blocked by {', '.join((blocked['failed'] + blocked['errors'])[:4])}")
    else:
        status = f"{head} / {row['binding']}: incomplete"
        if blocked:
            counts.append(f"{len(blocked['not_assessed'])} {blocked['level']} MUST not assessable here: "
                          f"{', '.join(blocked['not_assessed'][:4])}")
    if row.get("overclaimed"):
        counts.append(f"advertises {row['advertised']}")
    return f"{status} — {', '.join(counts)}"


def build_report(results: list[dict[str, Any]], targets: list[dict[str, Any]],
                 run: dict[str, Any], interop: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    results = sorted(results, key=lambda r: r["node_id"])
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for res in results:
        groups[(res["target"], res["spec"], res["version"], res["binding"])].append(res)
    advertised = {t["label"]: t.get("advertised", {}) for t in targets}

    levels, requirements = [], []
    for (target, spec, version, binding), group in sorted(groups.items()):
        if group[0]["check"] == CONNECT_CHECK:  # the target never opened: no level to compute
            skipped = group[0]["outcome"] == "skipped"
            levels.append({
                "target": target, "spec": spec, "version": version, "binding": binding, "level": None,
                "blocked_at": None, "must_passed": 0, "must_failed": 0, "errors": 0 if skipped else len(group),
                "should_warnings": 0, "may_info": 0, "inconclusive": 0, "advertised": None, "overclaimed": False,
                "summary": f"{target}: {'skipped' if skipped else 'error'} — {group[0]['reason']}",
            })
            continue
        cat = catalogues.load(spec)
        outcomes = requirement_outcomes(group)
        computed = compute_level(spec, version, outcomes, cat.claimed_levels, binding)
        by_kw: Counter[tuple[str, str]] = Counter()
        for rid, entry in outcomes.items():
            req = cat.get(rid)
            by_kw[(req.keyword.value, entry["outcome"].value)] += 1
            requirements.append({"target": target, "spec": spec, "version": version, "binding": binding,
                                 "id": rid, "section": req.section, "level": req.level,
                                 "keyword": req.keyword.value, "outcome": entry["outcome"].value,
                                 "checks": sorted(entry["checks"])})
        adv = advertised.get(target, {}).get(spec)
        row = {
            "target": target, "spec": spec, "version": version, "binding": binding,
            "level": computed["level"], "blocked_at": computed["blocked_at"],
            "must_passed": by_kw[("MUST", "passed")], "must_failed": by_kw[("MUST", "failed")],
            "errors": sum(v for (k, o), v in by_kw.items() if o in ("error", "stale")),
            "should_warnings": by_kw[("SHOULD", "warning")], "may_info": by_kw[("MAY", "info")],
            "inconclusive": by_kw[("MUST", "info")] + by_kw[("SHOULD", "info")],
            "advertised": adv,
            "overclaimed": bool(adv and computed["blocked_at"] and computed["blocked_at"]["failed"]
                                and LEVELS.index(adv) >= LEVELS.index(computed["blocked_at"]["level"])),
        }
        row["summary"] = _summary_line(row)
        levels.append(row)

    return {
        "format": REPORT_FORMAT,
        "generated_at": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "run": run,
        "targets": targets,
        "levels": levels,
        "results": results,
        "requirements": sorted(requirements, key=lambda r: (r["target"], r["spec"], r["version"],
                                                           r["binding"], r["id"])),
        "coverage": coverage(results),
        "totals": dict(sorted(Counter(r["outcome"] for r in results).items())),
        # round trips between targets and between formats (suite/interop): only runs that made some
        **({"interop": sorted(interop, key=lambda r: (r["spec"], r["version"], r["source"], r["destination"]))}
           if interop else {}),
    }


def coverage(results: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Per spec, version, level and keyword: how many requirements exist, how many the suite has a
    check for, and how many were exercised in this run (the traceability matrix)."""
    from memconform.suite.registry import all_checks

    checked: dict[str, set[str]] = defaultdict(set)
    for chk in all_checks():
        checked[chk.spec].update(chk.requirements)
    exercised = {(r["spec"], r["version"], rid) for r in (results or ())
                 if r["outcome"] != "skipped" for rid in r["requirements"]}
    rows = []
    for spec in catalogues.SPECS:
        cat = catalogues.load(spec)
        for version in cat.versions:
            for level in LEVELS:
                for kw in Keyword:
                    reqs = [r for r in cat.for_version(version) if r.level == level and r.keyword is kw]
                    if not reqs:
                        continue
                    rows.append({
                        "spec": spec, "version": version, "level": level, "keyword": kw.value,
                        "total": len(reqs), "testable": sum(r.testable for r in reqs),
                        "with_checks": sum(r.id in checked[spec] for r in reqs),
                        "exercised": sum((spec, version, r.id) in exercised for r in reqs),
                        "claimed": level in cat.claimed_levels,
                    })
    return rows


def run_info(options: dict[str, Any]) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    def v(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {"memconform": v("memconform"), "pytest": v("pytest"), "python": platform.python_version(),
            "options": options}
