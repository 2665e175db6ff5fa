"""Run the shipped suite in-process through pytest, the way a vendor does, and read its report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def run_suite(pytester, *args: str) -> tuple[Any, dict[str, Any]]:
    report = Path(pytester.path) / "memconform-report.json"
    if report.exists():
        report.unlink()
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--report", str(report), *args)
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
