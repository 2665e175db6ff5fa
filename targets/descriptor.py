"""Target descriptors: a TOML file saying how to reach an implementation (docs/omf.md, "Descriptor").

```toml
name = "memd (CLI)"
specs = ["omf@1.0"]
known_deviations = [{ requirement = "OMF-…", reason = "…" }]   # optional; strings allowed too
[omf.cli]
export = "memd export-omf --tenant-id {tenant} {project?--project-id {project}} --output {file}"
import = "memd import-omf --tenant-id {tenant} --input {file} --dry-run {dry_run}"
cwd = "."                 # optional; relative to this file. Default: the work folder
timeout = 60              # optional, seconds per command
[omf.vars]
db = "{workdir}/store.sqlite"
[omf.http]                # optional
base_url = "http://127.0.0.1:8700"
[start]                   # optional: a server the driver starts before use and stops after
command = "memd serve --port 8700"
ready_url = "http://127.0.0.1:8700/health"   # default: [omf.http] base_url; any HTTP answer = ready
ready_timeout = 30
```

Templates: `{name}` is the value, shell-quoted (commands are split with shlex and run without a
shell, so a value with spaces stays one argument); `{name?TEXT}` is TEXT (itself a template) only
when the value is set; booleans are `true`/`false`; `{{` and `}}` are literal braces. A name the
command cannot know is a descriptor error naming the line, found when the file is loaded, not in
the middle of a run.
"""

from __future__ import annotations

import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from memconform.targets.target_string import TargetStringError, shipped_descriptors

#: Names every command may use: `{workdir}` the driver's fresh work folder, `{python}` this
#: interpreter (so a descriptor can run `{python} -m memconform.suite.cli` without an activated venv).
COMMON_NAMES = ("workdir", "python")
#: Names each OMF operation supplies (memd's flags, docs/omf.md).
EXPORT_NAMES = ("tenant", "project", "include_history", "include_superseded", "include_expired", "file")
IMPORT_NAMES = ("tenant", "file", "include_archived", "fuzzy_threshold", "dry_run")
KNOWN_SPECS = {"omf": ("1.0",)}


class DescriptorError(TargetStringError):
    """A descriptor that cannot be used as written: the message names the file, and the line where known."""


# -- templates -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Value:
    name: str


@dataclass(frozen=True)
class _Optional:
    name: str
    parts: tuple[Any, ...]


def _parse(text: str, pos: int = 0, nested: bool = False) -> tuple[tuple[Any, ...], int]:
    """Parts of `text` from `pos` up to the end (or the `}` closing an optional part when nested)."""
    parts: list[Any] = []
    buf: list[str] = []
    i = pos
    while i < len(text):
        c = text[i]
        if c == "{" and text.startswith("{{", i):
            buf.append("{")
            i += 2
            continue
        if c == "}" and nested:
            if buf:
                parts.append(_Text("".join(buf)))
            return tuple(parts), i + 1
        if c == "}":
            if text.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            raise ValueError(f"a lone '}}' at column {i + 1} (write '}}}}' for a literal brace)")
        if c == "{":
            if buf:
                parts.append(_Text("".join(buf)))
                buf = []
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            name = text[i + 1:j]
            if not name:
                raise ValueError(f"'{{' at column {i + 1} is not followed by a name")
            if j < len(text) and text[j] == "}":
                parts.append(_Value(name))
                i = j + 1
            elif j < len(text) and text[j] == "?":
                inner, i = _parse(text, j + 1, nested=True)  # raises when never closed
                parts.append(_Optional(name, inner))
            else:
                raise ValueError(f"{{{name} at column {i + 1} is not closed with '}}' or '?TEXT}}'")
            continue
        buf.append(c)
        i += 1
    if nested:
        raise ValueError(f"an optional part opened before column {pos} is never closed with '}}'")
    if buf:
        parts.append(_Text("".join(buf)))
    return tuple(parts), i


def _names(parts: tuple[Any, ...]) -> set[str]:
    found: set[str] = set()
    for p in parts:
        if isinstance(p, _Value):
            found.add(p.name)
        elif isinstance(p, _Optional):
            found.add(p.name)
            found |= _names(p.parts)
    return found


def render_value(value: Any) -> str:
    """A value as command-line text (before quoting): booleans as true/false, as memd's flags take them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def is_set(value: Any) -> bool:
    return value is not None and value != ""


def _expand(parts: tuple[Any, ...], values: Mapping[str, Any], quote: bool) -> str:
    out: list[str] = []
    for p in parts:
        if isinstance(p, _Text):
            out.append(p.text)
        elif isinstance(p, _Value):
            value = values.get(p.name)
            if value is None:
                raise _Unset(p.name)
            text = render_value(value)
            out.append(shlex.quote(text) if quote else text)
        elif is_set(values.get(p.name)):
            out.append(_expand(p.parts, values, quote))
    return "".join(out)


class _Unset(Exception):
    pass


@dataclass(frozen=True)
class Template:
    """One command template; `where` says where it was written (file, line, key) for messages."""

    text: str
    where: str = "<template>"
    parts: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def parse(cls, text: str, where: str = "<template>") -> Template:
        try:
            parts, _ = _parse(text)
        except ValueError as exc:
            raise DescriptorError(f"{where}: bad template {text!r}: {exc}") from None
        return cls(text, where, parts)

    @property
    def names(self) -> set[str]:
        return _names(self.parts)

    def check_names(self, known: set[str] | tuple[str, ...]) -> None:
        unknown = sorted(self.names - set(known))
        if unknown:
            raise DescriptorError(f"{self.where}: unknown name(s) {', '.join('{' + n + '}' for n in unknown)} "
                                  f"in {self.text!r}; known here: {', '.join(sorted(known))}")

    def expand(self, values: Mapping[str, Any]) -> str:
        """The command line, every value shell-quoted. A `{name}` outside an optional part with no
        value in this call (a flag the check leaves to the default) cannot be run as written."""
        try:
            return _expand(self.parts, values, quote=True)
        except _Unset as unset:
            from memconform.suite.outcomes import TargetError

            name = unset.args[0]
            raise TargetError(f"{self.where}: {{{name}}} has no value in this call; write it as an optional "
                              f"part, e.g. {{{name}?--flag {{{name}}}}}, in {self.text!r}") from None

    def expand_raw(self, values: Mapping[str, Any]) -> str:
        """The text with values as they are (for [omf.vars], quoted later where they are used)."""
        try:
            return _expand(self.parts, values, quote=False)
        except _Unset as unset:
            raise DescriptorError(f"{self.where}: {{{unset.args[0]}}} has no value") from None

    def argv(self, values: Mapping[str, Any]) -> list[str]:
        line = self.expand(values)
        try:
            return shlex.split(line)
        except ValueError as exc:
            raise DescriptorError(f"{self.where}: {line!r} cannot be split into arguments: {exc}") from None


# -- the descriptor ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Deviation:
    """A difference from the spec the implementer knows of and declares (reported, not hidden)."""

    requirement: str
    reason: str = ""


@dataclass(frozen=True)
class OmfCli:
    export: Template
    import_: Template
    cwd: Path | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class StartCommand:
    command: Template
    ready_url: str
    ready_timeout: float = 30.0


@dataclass(frozen=True)
class Descriptor:
    path: Path
    name: str
    specs: tuple[tuple[str, str], ...]
    cli: OmfCli | None = None
    vars: Mapping[str, Template] = field(default_factory=dict)
    http_base_url: str | None = None
    start: StartCommand | None = None
    known_deviations: tuple[Deviation, ...] = ()

    def var_values(self, workdir: Path) -> dict[str, str]:
        """[omf.vars] with {workdir} and {python} filled in; plus those two themselves."""
        base = {"workdir": str(workdir), "python": sys.executable}
        return {**base, **{k: t.expand_raw(base) for k, t in self.vars.items()}}


def _line_of(lines: list[str], needle: str, fallback: str | None = None) -> int | None:
    for probe in (needle, fallback):
        if probe:
            for n, line in enumerate(lines, 1):
                if probe in line:
                    return n
    return None


def load_descriptor(path: str | Path) -> Descriptor:
    """Read and validate a descriptor. Raises DescriptorError saying what is wrong and where."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DescriptorError(f"cannot read descriptor {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise DescriptorError(f"{path}: not valid TOML: {exc}") from None
    lines = raw.splitlines()

    def where(key: str, text: str | None = None) -> str:
        line = _line_of(lines, text or "", key.rsplit(".", 1)[-1] + " ") if text else _line_of(lines, key)
        return f"{path}" + (f" line {line}" if line else "") + f" ({key})"

    def fail(key: str, message: str, text: str | None = None) -> DescriptorError:
        return DescriptorError(f"{where(key, text)}: {message}")

    known_top = {"name", "specs", "omf", "start", "known_deviations"}
    unknown = sorted(set(data) - known_top)
    if unknown:
        raise fail(unknown[0], f"unknown key(s) {unknown}; a descriptor has {sorted(known_top)}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise fail("name", "name must be a non-empty string")
    specs = _specs(data.get("specs"), fail)
    omf = data.get("omf", {})
    if not isinstance(omf, dict):
        raise fail("omf", "[omf] must be a table")
    if ("omf", "1.0") in specs and not omf:
        raise fail("specs", "specs names omf@1.0 but there is no [omf.cli] or [omf.http] section")
    bad = sorted(set(omf) - {"cli", "vars", "http"})
    if bad:
        raise fail(f"omf.{bad[0]}", f"unknown [omf] section(s) {bad}; known: cli, vars, http")

    vars_ = omf.get("vars", {})
    if not isinstance(vars_, dict) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                              for v in vars_.values()):
        raise fail("omf.vars", "[omf.vars] must map names to strings or numbers")
    clash = sorted(set(vars_) & (set(COMMON_NAMES) | set(EXPORT_NAMES) | set(IMPORT_NAMES)))
    if clash:
        raise fail("omf.vars", f"[omf.vars] may not redefine {clash}: the driver supplies them")
    var_templates: dict[str, Template] = {}
    for key, value in vars_.items():
        text = str(value)
        t = Template.parse(text, where(f"omf.vars.{key}", text))
        t.check_names(COMMON_NAMES)
        var_templates[key] = t
    var_names = set(COMMON_NAMES) | set(var_templates)

    cli = None
    if "cli" in omf:
        section = omf["cli"]
        if not isinstance(section, dict):
            raise fail("omf.cli", "[omf.cli] must be a table")
        bad = sorted(set(section) - {"export", "import", "cwd", "timeout"})
        if bad:
            raise fail(f"omf.cli.{bad[0]}", f"unknown key(s) {bad} in [omf.cli]; known: export, import, cwd, timeout")
        templates = {}
        for op, names in (("export", EXPORT_NAMES), ("import", IMPORT_NAMES)):
            text = section.get(op)
            if not isinstance(text, str) or not text.strip():
                raise fail(f"omf.cli.{op}" if op in section else "omf.cli",
                           f"[omf.cli] needs `{op}`, a command template string")
            t = Template.parse(text, where(f"omf.cli.{op}", text))
            t.check_names(var_names | set(names))
            templates[op] = t
        cwd = section.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise fail("omf.cli.cwd", "cwd must be a path string")
        timeout = section.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
            raise fail("omf.cli.timeout", "timeout must be a positive number of seconds")
        cli = OmfCli(templates["export"], templates["import"],
                     cwd=(path.parent / cwd).resolve() if cwd is not None else None,
                     timeout=float(timeout) if timeout is not None else None)

    base_url = None
    if "http" in omf:
        section = omf["http"]
        base_url = section.get("base_url") if isinstance(section, dict) else None
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise fail("omf.http", "[omf.http] needs base_url = \"http://HOST:PORT\"")
        base_url = base_url.rstrip("/")

    start = None
    if "start" in data:
        section = data["start"]
        if not isinstance(section, dict) or not isinstance(section.get("command"), str):
            raise fail("start", "[start] needs command = \"…\" (the server to start)")
        bad = sorted(set(section) - {"command", "ready_url", "ready_timeout"})
        if bad:
            raise fail(f"start.{bad[0]}", f"unknown key(s) {bad} in [start]; known: command, ready_url, ready_timeout")
        t = Template.parse(section["command"], where("start.command", section["command"]))
        t.check_names(var_names)
        ready_url = section.get("ready_url", base_url)
        if not isinstance(ready_url, str) or not ready_url.startswith(("http://", "https://")):
            raise fail("start", "[start] needs ready_url (or an [omf.http] base_url) to know when the server is up")
        ready_timeout = section.get("ready_timeout", 30.0)
        if isinstance(ready_timeout, bool) or not isinstance(ready_timeout, (int, float)) or ready_timeout <= 0:
            raise fail("start.ready_timeout", "ready_timeout must be a positive number of seconds")
        start = StartCommand(t, ready_url, float(ready_timeout))

    if ("omf", "1.0") in specs and cli is None and base_url is None:
        raise fail("omf", "an omf@1.0 descriptor needs [omf.cli] (export and import) or [omf.http] base_url")
    return Descriptor(path=path, name=name.strip(), specs=specs, cli=cli, vars=var_templates,
                      http_base_url=base_url, start=start,
                      known_deviations=_deviations(data.get("known_deviations", []), fail))


def _specs(value: Any, fail: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise fail("specs", 'specs must be a list like ["omf@1.0"]')
    out = []
    for text in value:
        spec, _, version = text.partition("@")
        if spec not in KNOWN_SPECS:
            raise fail("specs", f"{text!r}: descriptors can drive {', '.join(KNOWN_SPECS)} in this version",
                       text)
        if version not in KNOWN_SPECS[spec]:
            raise fail("specs", f"{text!r}: known versions of {spec}: {', '.join(KNOWN_SPECS[spec])}", text)
        out.append((spec, version))
    return tuple(dict.fromkeys(out))


def _deviations(value: Any, fail: Any) -> tuple[Deviation, ...]:
    if not isinstance(value, list):
        raise fail("known_deviations", "known_deviations must be a list")
    out = []
    for item in value:
        if isinstance(item, str) and item.strip():
            out.append(Deviation(item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("requirement"), str):
            out.append(Deviation(item["requirement"], str(item.get("reason", ""))))
        else:
            raise fail("known_deviations", f"{item!r}: each entry is a requirement id or "
                       "{ requirement = \"…\", reason = \"…\" }")
    return tuple(out)


# -- the driver ----------------------------------------------------------------------------------

#: Where the shipped descriptors live (`--target=reference.toml` finds them here).
SHIPPED = shipped_descriptors()
_STOP_GRACE = 3.0


class DescriptorDriver:
    """`--target=path/to/target.toml`: the subjects the descriptor describes. A `[start]` server is
    started before the first client is handed out and stopped on close; every command sees one
    fresh work folder for the whole run."""

    def __init__(self, descriptor: Descriptor, label: str | None = None, timeout: float = 10.0):
        self.descriptor = descriptor
        self.label = label or str(descriptor.path)
        self.timeout = timeout
        self._tmp: Any = None
        self._server: Any = None
        self._server_log: Path | None = None
        self._clients: dict[str, Any] = {}

    @classmethod
    def open(cls, path: str | Path, label: str | None = None, timeout: float = 10.0) -> DescriptorDriver:
        return cls(load_descriptor(path), label=label, timeout=timeout)

    @property
    def workdir(self) -> Path:
        if self._tmp is None:
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="memconform-desc-")
        return Path(self._tmp.name)

    def subjects(self) -> list[Any]:
        from memconform.targets.base import Subject

        out = []
        if ("omf", "1.0") in self.descriptor.specs:
            if self.descriptor.cli is not None:
                out.append(Subject(self.label, "omf", "1.0", "cli"))
            if self.descriptor.http_base_url is not None:
                out.append(Subject(self.label, "omf", "1.0", "http"))
        return out

    def advertised_level(self, subject: Any) -> str | None:
        return None  # OMF has no levels (docs/omf.md)

    def client(self, subject: Any) -> Any:
        from memconform.suite.outcomes import NotApplicable

        if subject.binding not in self._clients:
            self._ensure_server()
            if subject.spec == "omf" and subject.binding == "cli" and self.descriptor.cli is not None:
                from memconform.targets.cli import OmfCliTarget

                self._clients["cli"] = OmfCliTarget.from_descriptor(self.descriptor, workdir=self.workdir,
                                                                   timeout=None)
            elif subject.spec == "omf" and subject.binding == "http" and self.descriptor.http_base_url:
                from memconform.targets.omf_http import OmfHttpTarget

                self._clients["http"] = OmfHttpTarget(self.descriptor.http_base_url, timeout=self.timeout)
            else:
                raise NotApplicable(f"{self.descriptor.path} describes no {subject.title}")
        return self._clients[subject.binding]

    def _ensure_server(self) -> None:
        start = self.descriptor.start
        if start is None or self._server is not None:
            return
        import subprocess
        import time

        import httpx

        from memconform.suite.outcomes import TargetError

        argv = start.command.argv(self.descriptor.var_values(self.workdir))
        shown = shlex.join(argv)
        self._server_log = self.workdir / "server.log"
        # output to a file, not a pipe: a chatty server must never block on a pipe nobody reads
        log = self._server_log.open("wb")
        try:
            self._server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            cwd=self.workdir, start_new_session=True)
        except OSError as exc:
            raise TargetError(f"{self.descriptor.path} [start]: cannot start {shown}: {exc}") from None
        finally:
            log.close()
        deadline = time.monotonic() + start.ready_timeout
        while True:
            if self._server.poll() is not None:
                code, self._server = self._server.returncode, None
                raise TargetError(f"{self.descriptor.path} [start]: {shown} exited with {code} before "
                                  f"{start.ready_url} answered; output: {self._log_tail() or '(none)'}")
            try:
                httpx.get(start.ready_url, timeout=1.0)
                return  # any HTTP answer means it is listening
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self._stop_server()
                raise TargetError(f"{self.descriptor.path} [start]: {start.ready_url} did not answer within "
                                  f"{start.ready_timeout:g} s of starting {shown}; output: "
                                  f"{self._log_tail() or '(none)'}")
            time.sleep(0.2)

    def _log_tail(self) -> str:
        try:
            return self._server_log.read_bytes()[-2000:].decode("utf-8", "replace").strip() if self._server_log else ""
        except OSError:
            return ""

    def _stop_server(self) -> None:
        import os
        import signal
        import subprocess

        proc, self._server = self._server, None
        if proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)  # its own session: whatever it started stops too
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(_STOP_GRACE)
                return
            except subprocess.TimeoutExpired:
                continue

    def describe(self) -> dict[str, Any]:
        d = self.descriptor
        return {"label": self.label, "kind": "descriptor", "path": str(d.path), "name": d.name,
                "specs": [f"{s}@{v}" for s, v in d.specs], "advertised": {},
                "known_deviations": [{"requirement": x.requirement, "reason": x.reason} for x in d.known_deviations]}

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self._clients.clear()
        self._stop_server()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
