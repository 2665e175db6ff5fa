"""OMF over a command line: a descriptor's `[omf.cli]` export / import templates run as child processes.

Each operation expands its template (targets/descriptor.py), splits it with shlex and runs it
without a shell, with a deadline. `{file}` is a fresh file in the driver's work folder: the import
document is written there before the run, the export is read back from it after. A template
without `{file}` gets the import document on stdin, and its export is taken from stdout.

What the implementation answers is never raised: exit code, stdout, stderr and the last JSON
object printed on stdout go into an `OmfRun`. `TargetError` only when nothing could be run (command
not found, not executable) or it did not finish in time, and `NotTheProtocol` for a run that is
not the protocol at all (`targets/answers.py`): an import or preview that exits 0 without printing
its JSON result.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memconform.suite.omf.client import OmfRun
from memconform.suite.outcomes import TargetError
from memconform.targets.answers import NotTheProtocol
from memconform.targets.descriptor import Descriptor, OmfCli, Template

DEFAULT_TIMEOUT = 30.0
_TAIL = 2000
_KILL_WAIT = 5.0  # after a kill, how long to wait for the pipes to close


def tail(text: str, limit: int = _TAIL) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object printed: objects are looked for where a line starts, and an
    object found is skipped whole, so the items inside a pretty-printed document never count."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
            return value if isinstance(value, dict) else None
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    found = None
    pos = 0
    while pos < len(text):
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end < 0 else line_end
        start = pos + (len(text[pos:line_end]) - len(text[pos:line_end].lstrip()))
        if start < line_end and text[start] == "{":
            try:
                value, end = decoder.raw_decode(text, start)
            except ValueError:
                pass
            else:
                if isinstance(value, dict):
                    found = value
                next_line = text.find("\n", end)
                pos = len(text) if next_line < 0 else next_line + 1
                continue
        pos = line_end + 1
    return found


def run_command(argv: list[str], *, stdin: bytes | None, timeout: float, cwd: Path | None,
                what: str) -> subprocess.CompletedProcess[bytes]:
    """Run `argv` (no shell) to completion within `timeout`; its own session so that a kill also
    ends whatever it started. Raises TargetError when it cannot start or does not finish."""
    shown = shlex.join(argv)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                                start_new_session=os.name == "posix")
    except FileNotFoundError:
        raise TargetError(f"{what}: command not found: {argv[0]!r} (running {shown})") from None
    except PermissionError:
        raise TargetError(f"{what}: {argv[0]!r} is not executable (running {shown})") from None
    except OSError as exc:
        raise TargetError(f"{what}: cannot start {shown}: {exc}") from None
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        try:
            _, err = proc.communicate(timeout=_KILL_WAIT)
        except subprocess.TimeoutExpired:
            err = b""  # a grandchild keeps the pipe open; we still do not wait longer
        stderr = tail((err or b"").decode("utf-8", "replace")).strip()
        raise TargetError(f"{what}: {shown} did not finish within {timeout:g} s"
                          + (f"; stderr: {stderr}" if stderr else "; no stderr")) from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


#: Runs one command to completion: run_command's signature.
Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


class OmfCliTarget:
    """`OmfTarget` over a descriptor's command templates. One work folder per target (removed on close)."""

    binding = "cli"

    def __init__(self, cli: OmfCli, variables: dict[str, str] | None = None, *, workdir: Path | None = None,
                 timeout: float | None = None, runner: Runner | None = None):
        """`variables`: the descriptor's [omf.vars] already expanded (Descriptor.var_values). Without
        `workdir` the target makes its own fresh folder and removes it on close. `runner` runs one
        command (default: a child process, `run_command`)."""
        self.cli = cli
        self.runner: Runner = runner or run_command
        self._tmp = tempfile.TemporaryDirectory(prefix="memconform-omf-") if workdir is None else None
        self.workdir = Path(self._tmp.name) if self._tmp is not None else Path(workdir)
        self.values = {"workdir": str(self.workdir), "python": sys.executable, **(variables or {})}
        self.timeout = float(cli.timeout or timeout or DEFAULT_TIMEOUT)
        self._count = itertools.count(1)

    @classmethod
    def from_descriptor(cls, descriptor: Descriptor, *, workdir: Path | None = None,
                        timeout: float | None = None) -> OmfCliTarget:
        if descriptor.cli is None:
            raise TargetError(f"{descriptor.path} has no [omf.cli] section")
        target = cls(descriptor.cli, workdir=workdir, timeout=timeout)
        target.values.update(descriptor.var_values(target.workdir))
        return target

    def _file(self, operation: str) -> Path:
        return self.workdir / f"{operation}-{next(self._count)}.omf.json"

    def _run(self, operation: str, template: Template, values: dict[str, Any],
             stdin: bytes | None) -> tuple[list[str], subprocess.CompletedProcess[bytes]]:
        argv = template.argv({**self.values, **values})
        if not argv:
            raise TargetError(f"OMF {operation}: {template.where} expands to an empty command")
        done = self.runner(argv, stdin=stdin, timeout=self.timeout, cwd=self.cli.cwd or self.workdir,
                           what=f"OMF {operation}")
        return argv, done

    def export(self, tenant: str, *, project: str | None = None, include_history: bool | None = None,
               include_superseded: bool | None = None, include_expired: bool | None = None) -> OmfRun:
        template = self.cli.export
        out = self._file("export") if "file" in template.names else None
        values = self._offered("export", {"tenant": tenant, "project": project, "include_history": include_history,
                                          "include_superseded": include_superseded, "include_expired": include_expired,
                                          "file": str(out) if out else None})
        argv, done = self._run("export", template, values, None)
        stdout, stderr = _text(done.stdout), _text(done.stderr)
        if out is not None:
            document = out.read_bytes().decode("utf-8", "replace") if out.exists() else None
        else:
            document = stdout if done.returncode == 0 and stdout.strip() else None
        return _omf_run("export", argv, done.returncode, stdout, stderr, document)

    def import_document(self, tenant: str, document: str | bytes, *, include_archived: bool | None = None,
                        fuzzy_threshold: float | None = None, dry_run: bool = False) -> OmfRun:
        template = self.cli.import_
        data = document.encode("utf-8") if isinstance(document, str) else bytes(document)
        operation = "preview" if dry_run else "import"
        path = None
        if "file" in template.names:
            path = self._file(operation)
            path.write_bytes(data)
        values = self._offered(operation, {"tenant": tenant, "include_archived": include_archived,
                                           "fuzzy_threshold": fuzzy_threshold, "dry_run": dry_run,
                                           "file": str(path) if path else None})
        argv, done = self._run(operation, template, values, None if path else data)
        stdout, stderr = _text(done.stdout), _text(done.stderr)
        try:
            return self._mapped(_omf_run(operation, argv, done.returncode, stdout, stderr, None))
        except NotTheProtocol:
            if getattr(self, "profile", None) != "consumer":
                raise
            # A plain OMF consumer promises no result object (memd's counts are memd's): exit 0 is its answer.
            return OmfRun(operation=operation, sent=shlex.join(argv), ok=True, exit_code=0, stdout=stdout,
                          stderr=stderr)

    def _offered(self, operation: str, values: dict[str, Any]) -> dict[str, Any]:
        """`values` without the flags the implementation lacks: one asked at the spec's default is
        simply left out (the implementation's default is the same); any other value cannot be
        asked, so the check that needs it is not offered — NotApplicable, never a failure."""
        from memconform.suite.outcomes import NotApplicable
        from memconform.targets.descriptor import OMF_FLAG_DEFAULTS

        for flag in self.cli.lacks:
            value = values.get(flag)
            if value is None or value == OMF_FLAG_DEFAULTS[flag]:
                values[flag] = None
                continue
            raise NotApplicable(f"not offered: the implementation lacks the OMF {operation} flag {flag} (its "
                                f"descriptor's [omf.cli] lacks), and this check needs {flag}={json.dumps(value)}")
        return values

    def _mapped(self, run: OmfRun) -> OmfRun:
        """The result with the implementation's printed keys renamed to the suite's ([omf.cli.result])."""
        if not self.cli.result_keys or not isinstance(run.result, dict):
            return run
        import dataclasses

        result = dict(run.result)
        for ours, printed in self.cli.result_keys:
            if printed in result and ours not in result:
                result[ours] = result.pop(printed)
        return dataclasses.replace(run, result=result)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def _omf_run(operation: Any, argv: list[str], code: int, stdout: str, stderr: str,
             document: str | None) -> OmfRun:
    result = last_json_object(stdout)
    ok = code == 0
    if ok and operation != "export" and result is None:
        raise NotTheProtocol(f"OMF {operation}: {shlex.join(argv)} exited 0 without printing a JSON result "
                             f"(stdout: {tail(stdout, 300).strip() or 'empty'!r})")
    error = None
    if not ok:
        reported = result.get("error") if isinstance(result, dict) else None
        error = (json.dumps(reported, sort_keys=True) if reported is not None
                 else tail(stderr).strip() or tail(stdout).strip() or f"exit {code}, no output")
    return OmfRun(operation=operation, sent=shlex.join(argv), ok=ok, exit_code=code, result=result,
                  document=document, stdout=stdout, stderr=stderr, error=error)
