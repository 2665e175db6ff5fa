"""The one JSON report every output is rendered from (DESIGN.md, idea 8).

`build_report` turns the per-item results into requirement outcomes, computed levels
(idea 4) and coverage per spec and level (idea 1). Pure functions over plain data, so the
report is the same however the run was split (pytest-xdist).
"""

from __future__ import annotations

import datetime as _dt
import platform
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.reports.verdict import (
    blocking, compute_claim, compute_classes, compute_level, status_of, summary_line,
)
from memconform.suite.outcomes import LEVELS, OUTCOME_FOR_KEYWORD, Keyword, Outcome

REPORT_FORMAT = "memconform-report/1"
#: The check id of the stand-in result for a target that could not be opened at all.
CONNECT_CHECK = "memconform/connect"

# How item outcomes combine into a requirement outcome: the worst wins. XFAILED and STALE only
# come from reports written before results kept their real outcome beside the baseline's word.
_SEVERITY = {
    Outcome.FAILED: 6, Outcome.ERROR: 5, Outcome.STALE: 4, Outcome.WARNING: 3, Outcome.INFO: 2,
    Outcome.XFAILED: 1, Outcome.PASSED: 0,
}


def real_outcome(res: dict[str, Any]) -> Outcome:
    """What the target got, whatever a baseline said of it (older reports wrote the baseline's
    word in `outcome`: an xfailed item failed, a stale one passed)."""
    outcome = Outcome(res["outcome"])
    if outcome is Outcome.XFAILED:
        return Outcome.WARNING if res.get("keyword") == "SHOULD" else Outcome.FAILED
    if outcome is Outcome.STALE:
        return Outcome.PASSED
    return outcome


def requirement_outcomes(results: Iterable[dict[str, Any]],
                         keyword_of: Callable[[str], Keyword] | None = None) -> dict[str, dict[str, Any]]:
    """Requirement id -> {outcome, checks}, from real outcomes only. A requirement a finding names
    takes the finding's outcome: its own keyword's (`keyword_of`, the catalogue), so a SHOULD named
    beside a failed MUST of the same check is a warning, not a failure; without it, the check's.
    The other requirements of a failing check are unaffected by it."""
    acc: dict[str, dict[str, Any]] = {}
    for res in results:
        outcome = real_outcome(res)
        if outcome is Outcome.SKIPPED:
            continue
        named = {f["requirement"] for f in res.get("findings", ())}
        for rid in judged_requirements(res):
            if outcome is Outcome.INFO and not named:
                per_req = Outcome.INFO  # inconclusive: nothing was judged, so nothing passed
            elif outcome in (Outcome.FAILED, Outcome.WARNING, Outcome.INFO):
                if rid not in named:
                    per_req = Outcome.PASSED
                elif keyword_of is not None:
                    per_req = OUTCOME_FOR_KEYWORD[keyword_of(rid)]
                else:
                    per_req = outcome
            else:
                per_req = outcome
            entry = acc.setdefault(rid, {"outcome": Outcome.PASSED, "checks": []})
            entry["checks"].append(res["node_id"])
            if _SEVERITY[per_req] > _SEVERITY[entry["outcome"]]:
                entry["outcome"] = per_req
    return acc


def judged_requirements(res: dict[str, Any]) -> list[str]:
    """The requirements a result observed: those its check names, but for the ones it says it did
    not judge (a state machine whose sequences never reached them); a finding is an observation."""
    missed = set(res.get("not_judged", ())) - {f["requirement"] for f in res.get("findings", ())}
    return [rid for rid in res["requirements"] if rid not in missed]


def not_exercised(results: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Requirement id -> why, for checks skipped because the subject holds nothing they are about,
    and for the requirements a check names but did not judge (`not_judged`): for a file, what it
    holds nothing about."""
    why: dict[str, str] = {}
    for res in results:
        unseen = res["requirements"] if res.get("not_exercised") else res.get("not_judged", ())
        for rid in unseen:
            why.setdefault(rid, res.get("reason") or "")
    return why


def waived_requirements(results: Iterable[dict[str, Any]], outcomes: dict[str, Any], cat: Any) -> dict[str, str]:
    """MUST id -> why, for the requirements of checks the target waived (an option its spec gives to
    leave out what they judge) that no other result judged."""
    why: dict[str, str] = {}
    for res in results:
        if res.get("waived"):
            for rid in res["requirements"]:
                if rid not in outcomes and cat.get(rid).keyword is Keyword.MUST:
                    why.setdefault(rid, res.get("reason") or "")
    return dict(sorted(why.items()))


def accepted_failures(results: Iterable[dict[str, Any]], cat: Any) -> dict[str, Any]:
    """The MUST failures a baseline or known deviation accepted: they change the exit status only."""
    must, by, ids = 0, set(), set()
    for res in results:
        accepted = res.get("baseline") or {}
        if accepted.get("status") != "accepted":
            continue
        for f in res.get("findings", ()):
            try:
                req = cat.get(f["requirement"])
            except KeyError:
                continue
            if req.keyword is Keyword.MUST and f["requirement"] not in ids:
                ids.add(f["requirement"])
                must += 1
        by.add(accepted.get("by") or "baseline")
    return {"must": must, "requirements": sorted(ids), "by": sorted(by)} if by else {}


def build_report(results: list[dict[str, Any]], targets: list[dict[str, Any]],
                 run: dict[str, Any], interop: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    results = sorted(results, key=lambda r: r["node_id"])
    # a class's failures fail the run only when it is required (--require-class); the line says which
    required = set((run.get("options") or {}).get("require_class") or ())
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for res in results:
        groups[(res["target"], res["spec"], res["version"], res["binding"])].append(res)
    advertised = {t["label"]: t.get("advertised", {}) for t in targets}
    kinds = {t["label"]: t.get("kind") for t in targets}
    file_as = {t["label"]: t.get("as", "export") for t in targets}

    levels, requirements = [], []
    for (target, spec, version, binding), group in sorted(groups.items()):
        if group[0]["check"] == CONNECT_CHECK:  # the target never opened: no level to compute
            skipped = group[0]["outcome"] == "skipped"
            levels.append({
                "target": target, "spec": spec, "version": version, "binding": binding, "level": None,
                "blocked_at": None, "blocked_by": [], "claim": None, "accepted": {}, "profile": None, "classes": [],
                "must_passed": 0, "must_failed": 0, "errors": 0 if skipped else len(group),
                "should_warnings": 0, "may_info": 0, "inconclusive": 0, "advertised": None, "overclaimed": False,
                "status": "skipped" if skipped else "error",
                "summary": f"{target}: {'skipped' if skipped else 'error'} — {group[0]['reason']}",
            })
            continue
        cat = catalogues.load(spec)
        # the profile the target was judged under (OMF: memd or a plain consumer); the catalogue's
        # default when it has profiles and the results predate them
        profile = next((r["profile"] for r in group if r.get("profile")), cat.default_profile)
        outcomes = {rid: e for rid, e in requirement_outcomes(group, lambda rid: cat.get(rid).keyword).items()
                    if cat.get(rid).in_profile(profile)}
        waived = waived_requirements(group, outcomes, cat)
        computed = compute_level(spec, version, outcomes, cat.claimed_levels, binding, profile, waived)
        by_kw: Counter[tuple[str, str]] = Counter()
        for rid, entry in outcomes.items():
            req = cat.get(rid)
            if req.conformance_class is None or entry["outcome"] is Outcome.ERROR:
                # a class's MUSTs are counted beside the level, in its own words ("interoperates …: yes
                # (5 MUST)"), never as the level's: "conformant — 1 MUST failed" would read as a contradiction
                by_kw[(req.keyword.value, entry["outcome"].value)] += 1
            requirements.append({"target": target, "spec": spec, "version": version, "binding": binding,
                                 "id": rid, "section": req.section, "level": req.level,
                                 "keyword": req.keyword.value, "outcome": entry["outcome"].value,
                                 "checks": sorted(entry["checks"])})
        adv = advertised.get(target, {}).get(spec)
        blocked = computed["blocked_at"]
        row = {
            "target": target, "spec": spec, "version": version, "binding": binding,
            "level": computed["level"], "blocked_at": blocked,
            # a spec whose levels are conformance classes names them (catalogue level_names), on the
            # bindings that can show the class (level_names_on)
            **({"level_name": name} if (name := cat.level_name(computed["level"], binding)) else {}),
            "blocked_by": blocking(spec, version, binding, outcomes, blocked, profile),
            **({"waived": waived} if waived else {}),
            "profile": profile,
            "classes": [dict(c, required=c["id"] in required)
                        for c in compute_classes(spec, version, binding, outcomes, profile)],
            "claim": (compute_claim(spec, version, binding, outcomes, not_exercised(group),
                                    file_as.get(target, "export"))
                      if computed["level"] is None and (kinds.get(target) == "file" or binding == "file") else None),
            "accepted": accepted_failures(group, cat),
            "must_passed": by_kw[("MUST", "passed")], "must_failed": by_kw[("MUST", "failed")],
            "errors": sum(v for (k, o), v in by_kw.items() if o == "error"),
            "should_warnings": by_kw[("SHOULD", "warning")], "may_info": by_kw[("MAY", "info")],
            "inconclusive": by_kw[("MUST", "info")] + by_kw[("SHOULD", "info")],
            "advertised": adv,
            "overclaimed": bool(adv and blocked and blocked["failed"]
                                and LEVELS.index(adv) >= LEVELS.index(blocked["level"])),
        }
        if (run.get("options") or {}).get("level"):
            row["judged_up_to"] = run["options"]["level"]  # --level: what was asked, not a verdict
        row["status"] = status_of(row)
        row["summary"] = summary_line(row)
        levels.append(row)

    totals = Counter(real_outcome(r).value for r in results)
    for r in results:
        if (r.get("baseline") or {}).get("status") in ("accepted", "stale"):
            totals[r["baseline"]["status"]] += 1
        # a failure of a conformance class the run does not require (--require-class): counted in
        # "failed" as what the target got, and here, as what does not fail the run (round 19)
        if r.get("class_not_required") and real_outcome(r) is Outcome.FAILED:
            totals["class_not_required"] += 1
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
        "totals": dict(sorted(totals.items())),
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
                 if r["outcome"] != "skipped" for rid in judged_requirements(r)}
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
