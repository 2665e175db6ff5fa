"""Expected-failure baselines (issue 6): known failures a vendor accepts for now.

A baseline is a TOML file::

    format = "memconform-baseline/1"          # optional; the only version there is

    [[expected]]
    id = "omf/omf-version-gated"              # a requirement id, a check id, or check[case]
    reason = "we accept 0.9 files until Q3"   # required: why this failure is accepted
    issue = "https://example.org/issues/12"   # optional http(s) URL of the tracking issue
    target = "http://localhost:8080"          # optional narrowing: only this --target label,
    spec = "omf"                              #   only this spec,
    binding = "http"                          #   only this binding

An entry *matches* a result when its narrowing fits and its id is the result's check id, its
``check[case]``, or one of the requirements the check covers. Then:

* a result that failed (MUST) or warned (SHOULD) only on requirements the matching entries
  accept is *accepted* (pytest: xfailed), with the baseline's reason: the run does not fail;
* a matching result that now passes is *stale*, which fails the run, so that a fixed bug
  leaves the baseline instead of hiding the next regression;
* skipped, errored and inconclusive results are left alone: nothing was judged.

Either way the result keeps its real `outcome` and gains a `baseline` member saying what the
baseline made of it: levels, badges and comparisons are computed from real outcomes only, so a
baseline changes the exit status and nothing else (reports/verdict.py).

A requirement id matches every item whose check covers it, so when several items cover one
requirement and only some fail, use the check id (``write_baseline`` always does).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.suite.outcomes import Outcome

BASELINE_FORMAT = "memconform-baseline/1"
_NARROWING = ("target", "spec", "binding")
_ENTRY_KEYS = {"id", "reason", "issue", *_NARROWING}
# A SHOULD warning is listed too: under --memconform-strict it fails the run like a MUST.
_VIOLATIONS = (Outcome.FAILED, Outcome.WARNING)


class BaselineError(ValueError):
    """The baseline file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Entry:
    id: str
    reason: str
    issue: str | None = None
    target: str | None = None
    spec: str | None = None
    binding: str | None = None

    def matches(self, result: dict[str, Any]) -> bool:
        if any(getattr(self, k) is not None and getattr(self, k) != result.get(k) for k in _NARROWING):
            return False
        return self.id in _names(result)


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: tuple[Entry, ...]
    #: BLAKE3 of the file's bytes: a signed report carries it, so what was accepted is fixed too
    digest: str | None = None

    def merged(self, other: Baseline) -> Baseline:
        return Baseline(f"{self.path} and {other.path}", self.entries + tuple(
            e for e in other.entries if e not in self.entries), self.digest)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, **({"blake3": self.digest} if self.digest else {}),
                "entries": [{k: v for k, v in e.__dict__.items() if v is not None} for e in self.entries]}


def _names(result: dict[str, Any]) -> set[str]:
    names = {result["check"], *result.get("requirements", ())}
    if result.get("case") is not None:
        names.add(f"{result['check']}[{result['case']}]")
    return names


def load_baseline(path: str | Path) -> Baseline:
    import blake3

    try:
        raw = Path(path).read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"baseline {path}: cannot be read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"baseline {path}: not valid TOML: {exc}") from None
    parsed = parse_baseline(data, str(path))
    return Baseline(parsed.path, parsed.entries, blake3.blake3(raw).hexdigest())


def parse_baseline(data: dict[str, Any], path: str = "<baseline>") -> Baseline:
    unknown = sorted(set(data) - {"format", "expected"})
    if unknown:
        raise BaselineError(f"baseline {path}: unknown top-level key(s) {unknown}; entries go in [[expected]]")
    if data.get("format", BASELINE_FORMAT) != BASELINE_FORMAT:
        raise BaselineError(f"baseline {path}: format {data['format']!r} is not {BASELINE_FORMAT!r}")
    raw = data.get("expected", [])
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise BaselineError(f"baseline {path}: 'expected' must be an array of tables ([[expected]])")
    entries: list[Entry] = []
    for n, item in enumerate(raw, 1):
        where = f"baseline {path}, entry {n}"
        extra = sorted(set(item) - _ENTRY_KEYS)
        if extra:
            raise BaselineError(f"{where}: unknown key(s) {extra}; allowed: {sorted(_ENTRY_KEYS)}")
        for key in ("id", "reason"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise BaselineError(f"{where}: '{key}' is required and must be a non-empty string")
        for key in ("issue", *_NARROWING):
            if key in item and (not isinstance(item[key], str) or not item[key]):
                raise BaselineError(f"{where}: '{key}' must be a non-empty string")
        if any(c.isspace() for c in item["id"]):
            raise BaselineError(f"{where}: id {item['id']!r} contains whitespace")
        if "issue" in item and not item["issue"].startswith(("https://", "http://")):
            raise BaselineError(f"{where}: issue {item['issue']!r} is not an http(s) URL")
        entry = Entry(**item)
        if entry in entries:
            raise BaselineError(f"{where}: duplicates entry {entries.index(entry) + 1} ({entry.id})")
        entries.append(entry)
    return Baseline(path, tuple(entries))


def baseline_outcome(result_json: dict[str, Any]) -> Outcome:
    """What pytest makes of a result: XFAILED when accepted, STALE when stale, else its outcome."""
    status = (result_json.get("baseline") or {}).get("status")
    return {"accepted": Outcome.XFAILED, "stale": Outcome.STALE}.get(status) or Outcome(result_json["outcome"])


def apply_baseline(result_json: dict[str, Any], baseline: Baseline | None) -> dict[str, Any]:
    """The result with what the baseline made of it under `baseline`: a new dict, the input
    untouched, its `outcome` always the real one."""
    if baseline is None:
        return result_json
    outcome = Outcome(result_json["outcome"])
    matching = [e for e in baseline.entries if e.matches(result_json)]
    if not matching or outcome not in (*_VIOLATIONS, Outcome.PASSED):
        return result_json
    ids = [e.id for e in matching]
    if outcome is Outcome.PASSED:
        return {**result_json, "baseline": {
            "status": "stale", "by": baseline.path, "entries": ids,
            "reason": f"baseline entry {', '.join(ids)} is stale: this item now passes; remove it from "
                      f"{baseline.path}"}}
    # Only failures the baseline accepts become xfailed: a new finding on another requirement of
    # the same check must still fail the run.
    whole_item = any(e.id not in result_json.get("requirements", ()) for e in matching)  # a check id
    accepted = {e.id for e in matching}
    if not whole_item and any(f["requirement"] not in accepted for f in result_json.get("findings", ())):
        return result_json
    reason = "; ".join(e.reason + (f" ({e.issue})" if e.issue else "") for e in matching)
    return {**result_json, "baseline": {"status": "accepted", "by": baseline.path, "entries": ids,
                                        "reason": f"expected by {baseline.path}: {reason}"}}


def _toml_str(s: str) -> str:
    # A TOML basic string is a JSON string minus a few escapes JSON never emits for str input.
    import json

    return json.dumps(s, ensure_ascii=False)


def write_baseline(report: dict[str, Any]) -> str:
    """A baseline accepting every current failure of the report (warnings too when the run was
    strict), one entry per failing item, keyed by check id and narrowed to its target, spec and
    binding so that it cannot hide the same failure elsewhere."""
    strict = bool(report.get("run", {}).get("options", {}).get("strict"))
    wanted = {"failed", "warning"} if strict else {"failed"}
    lines = [f'format = "{BASELINE_FORMAT}"', ""]
    for r in sorted(report.get("results", ()), key=lambda r: r["node_id"]):
        if r["outcome"] not in wanted:
            continue
        ident = r["check"] + (f"[{r['case']}]" if r.get("case") is not None else "")
        first = r["findings"][0] if r.get("findings") else {"requirement": "?", "message": r.get("reason") or ""}
        reason = f"TODO: why this is accepted — {first['requirement']}: {first['message']}"
        lines += ["[[expected]]", f"id = {_toml_str(ident)}",
                  f"reason = {_toml_str(reason.splitlines()[0][:300])}",
                  f"target = {_toml_str(r['target'])}", f"spec = {_toml_str(r['spec'])}",
                  f"binding = {_toml_str(r['binding'])}", ""]
    return "\n".join(lines)
