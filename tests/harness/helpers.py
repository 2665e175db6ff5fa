"""Run the shipped suite in-process through pytest, the way a vendor does, and read its report."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def made_once(path: Path, make: Callable[[], Any]) -> Any:
    """The JSON at `path`, made by `make()` for the first xdist worker that asks (under a lock beside
    it); the others wait for it and read it."""
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            path.write_text(json.dumps(make()), encoding="utf-8")
    return json.loads(path.read_text(encoding="utf-8"))


def run_suite(pytester, *args: str) -> tuple[Any, dict[str, Any]]:
    report = Path(pytester.path) / "memconform-report.json"
    if report.exists():
        report.unlink()
    # memconform's plugin alone, without assertion rewriting: an inner run judges a target and holds
    # no test module, and scanning every installed distribution for plugins and for modules to
    # rewrite cost each of the hundreds of runs 60 ms
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        result = pytester.runpytest_inprocess("-p", "memconform.suite.plugin", "-p", "no:cacheprovider", "--assert=plain",
                                              "-q", "--report", str(report), *args)
    data = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return result, data


def failed_requirements(report: dict[str, Any]) -> set[str]:
    return {f["requirement"] for r in report["results"] if r["outcome"] == "failed"
            for f in r["findings"]
            if _keyword(report, r, f["requirement"]) == "MUST"}


def warned_requirements(report: dict[str, Any]) -> set[str]:
    return {f["requirement"] for r in report["results"] if r["outcome"] == "warning"
            for f in r["findings"]
            if _keyword(report, r, f["requirement"]) == "SHOULD"}


def _keyword(report: dict[str, Any], result: dict[str, Any], requirement: str) -> str:
    from memconform.suite import catalogue

    return catalogue.load(result["spec"]).get(requirement).keyword.value


def outcomes(report: dict[str, Any]) -> dict[str, int]:
    return report["totals"]


def served_reference() -> Any:
    """The reference UMP server in a thread (a context manager yielding its base URL)."""
    import contextlib

    from memconform.reference_impl.ump import serve

    @contextlib.contextmanager
    def running() -> Any:
        service = serve.make_service()
        server = serve.start_in_thread(service)
        try:
            yield server.base_url
        finally:
            server.stop()
            service.close()
    return running()


#: MEMCONFORM_FULL_FAULT_RUNS=1 runs the whole spec suite against every fault: it also proves that
#: no check outside the fault's own requirements fails. By default a fault runs only the checks that
#: can see it, those naming a requirement it breaks, and the clean reference runs are the control
#: for every other check.
FULL_FAULT_RUNS = os.environ.get("MEMCONFORM_FULL_FAULT_RUNS") == "1"


def observing_checks(fault: Any) -> tuple[str, ...] | None:
    """The ids of the checks that can see `fault` (None: every check, MEMCONFORM_FULL_FAULT_RUNS)."""
    if FULL_FAULT_RUNS:
        return None
    from memconform.suite.registry import checks_naming

    chosen = tuple(c.id for c in checks_naming(fault.spec, fault.breaks))
    assert chosen, f"fault {fault.name}: no check names any of {fault.breaks}"
    return chosen


def export_with_markdown(folder: Path, version: str, text: str, md_of: Callable[[dict[str, Any]], str]) -> str:
    """An export in `folder` (the corpus's exportable records of `version`, the first with body.text
    `text`, unsigned) as export.ump.json, and that record's .ump.md as `md_of(record)` writes it."""
    from memconform.suite.ump import consent, files
    from memconform.suite.ump.corpus import export_corpus

    records = consent.export_view([r for r in export_corpus(version) if r["ump"] == version])
    rec = {k: v for k, v in records[0].items() if k != "integrity"}
    rec["body"] = dict(rec["body"], text=text)
    records[0] = rec
    (folder / "export.ump.json").write_text(files.dump_json(records), encoding="utf-8")
    (folder / "md").mkdir()
    (folder / "md" / "one.ump.md").write_text(md_of(rec), encoding="utf-8", newline="")
    return str(folder)


def md_roundtrip_result(pytester, folder: str, version: str) -> dict[str, Any]:
    """The one result of ump/l0/md-roundtrip run on `folder` as a file target."""
    _, report = run_suite(pytester, f"--target=file:{folder}", f"--spec=ump@{version}", "--check=ump/l0/md-roundtrip")
    (res,) = [r for r in report["results"] if r["check"] == "ump/l0/md-roundtrip"]
    return res
