"""`memconform replay REPORT CHECK_ID`: re-run one check of an earlier run exactly as it ran.

A result in the report names its target (by label), spec version, binding, case, and, for a
property-based check, the seed its generator drew with (`--seed`). The run's options add the
per-operation timeout and the environment that bounds a property-based check's effort
(MEMCONFORM_FUZZ_EXAMPLES …). A replay is a fresh `pytest` run with those settings, selecting the
one check (`--check`) on the one subject, so a vendor can fix a server and re-run just the case
that failed; it ends by saying what the outcome was then and what it is now.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ReplayError(ValueError):
    """The report cannot be replayed as asked; the message says why and what would work."""


@dataclass(frozen=True)
class Replay:
    """One subject's run of one check, as the report recorded it."""

    check: str  # the check id, with `[case]` for a case of a parametrized check
    target: str  # the target string to pass to --target
    spec: str
    version: str
    binding: str
    seed: int | None  # None: the check draws nothing at random
    run_seed: int
    timeout: float | None
    environment: dict[str, str]
    outcome: str  # what the report says it was
    effort: str = "default"  # the run's --effort (its figures: `environment` overrides as it did)

    @property
    def title(self) -> str:
        return f"{self.check} on {self.target} ({self.spec.upper()} {self.version} / {self.binding})"

    def pytest_args(self, report_path: str) -> list[str]:
        args = ["--memconform-only", "-p", "no:cacheprovider", f"--target={self.target}",
                f"--spec={self.spec}@{self.version}", f"--binding={self.binding}", f"--check={self.check}",
                f"--seed={self.seed if self.seed is not None else self.run_seed}", f"--report={report_path}"]
        if self.timeout is not None:
            args.append(f"--timeout={self.timeout:g}")
        if self.effort != "default":
            args.append(f"--effort={self.effort}")
        return args


def _target_string(report: dict[str, Any], label: str) -> str:
    options = report.get("run", {}).get("options", {})
    given = list(options.get("targets") or [])
    if label in given:
        return label
    # a target's label may differ from its string (descriptors); the report lists targets in
    # the order they were given
    labels = [t.get("label") for t in report.get("targets", [])]
    if label in labels and len(given) == len(labels):
        return given[labels.index(label)]
    raise ReplayError(f"the report does not say which --target produced {label!r}")


def replays(report: dict[str, Any], check_id: str, *, target: str | None = None, binding: str | None = None,
            version: str | None = None) -> list[Replay]:
    """The results of `check_id` (a check id, `id[case]`, or a node id) narrowed by the filters."""
    options = report.get("run", {}).get("options", {})
    found = []
    for r in report.get("results", []):
        full = r["check"] + (f"[{r['case']}]" if r.get("case") else "")
        if check_id not in (r["check"], full, r.get("node_id")):
            continue
        if r["check"] == "memconform/connect":
            continue
        if (target and r["target"] != target) or (binding and r["binding"] != binding) \
                or (version and r["version"] != version):
            continue
        found.append(Replay(
            check=full, target=_target_string(report, r["target"]), spec=r["spec"], version=r["version"],
            binding=r["binding"], seed=r.get("seed"), run_seed=int(options.get("seed", 0) or 0),
            timeout=options.get("timeout"), environment=dict(options.get("environment") or {}),
            outcome=r["outcome"], effort=(options.get("effort") or {}).get("name", "default")))
    if not found:
        known = sorted({r["check"] for r in report.get("results", []) if r["check"] != "memconform/connect"})
        near = [k for k in known if check_id.split("[")[0] in k] or known[:10]
        raise ReplayError(f"no result of {check_id!r} in the report"
                          + (" with those filters" if (target or binding or version) else "")
                          + f"; checks it has include: {', '.join(near)}")
    return found


@dataclass(frozen=True)
class Replayed:
    replay: Replay
    exit_code: int
    outcome: str | None  # None when the replay produced no result (the target could not be opened …)
    reason: str | None


def run_replay(replay: Replay, *, echo: Any = print, extra_args: tuple[str, ...] = ()) -> Replayed:
    """Runs the replay as its own pytest process, so its settings and environment are exactly the
    recorded ones, and reads the result back from its report."""
    with tempfile.TemporaryDirectory(prefix="memconform-replay-") as tmp:
        report_path = str(Path(tmp) / "replay.json")
        args = [sys.executable, "-m", "pytest", *replay.pytest_args(report_path), *extra_args]
        env = {**os.environ, **replay.environment}
        seed = f"seed {replay.seed}" if replay.seed is not None else "no seed: the check draws nothing at random"
        echo(f"replaying {replay.title}, {seed}")
        code = subprocess.run(args, env=env, check=False).returncode
        try:
            results = json.loads(Path(report_path).read_text(encoding="utf-8"))["results"]
        except (OSError, ValueError, KeyError):
            results = []
    mine = [r for r in results if r["check"] + (f"[{r['case']}]" if r.get("case") else "") == replay.check]
    if not mine:
        return Replayed(replay, code, None, results[0]["reason"] if results else "the replay ran no check")
    return Replayed(replay, code, mine[0]["outcome"], mine[0].get("reason"))
