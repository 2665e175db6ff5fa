"""Target descriptors: a TOML file saying how to reach an implementation, and how to start and stop
it for the run (every key, with examples: docs/descriptors.md).

```toml
name = "my server"
specs = ["ump@1.0", "upp@1.0.0", "omf@1.0"]     # ump@0.1, ump@1.0, upp@1.0.0, omf@1.0
known_deviations = [{ requirement = "UMP-…", reason = "…" }]   # optional; strings allowed too
[vars]                    # values of your own, {name} in commands, env and cwd ([omf.vars] too)
db = "{workdir}/store.sqlite"
[start]                   # optional: a server started once for the run, stopped at the end
command = "my-server --port {port} --db {db}"
cwd = "."                 # optional; relative to this file. Default: the work folder
env = { MY_LOG = "debug" }                      # merged into the environment
ready_url = "http://127.0.0.1:{port}/health"   # any HTTP answer = ready; and/or
ready_line = "listening on .*:{port}"           # a regex, searched in each stdout/stderr line
ready_timeout = 30
[stop]                    # optional teardown
command = "my-server shutdown --port {port}"    # run first; then SIGTERM, then SIGKILL
timeout = 30              # seconds the stop command may take
grace = 5                 # seconds the server gets to exit before each next step
[ump.http]
base_url = "http://127.0.0.1:{port}"
[ump.mcp]                 # url = streamable HTTP, or command = "…" (stdio); one of the two
url = "http://127.0.0.1:{port}/mcp"
[upp.http]
url = "http://127.0.0.1:{port}/upp"
[upp.stdio]
command = "my-server --upp-stdio"
[omf.cli]
export = "memd export-omf --tenant-id {tenant} {project?--project-id {project}} --output {file}"
import = "memd import-omf --tenant-id {tenant} --input {file} --dry-run {dry_run}"
[omf.http]
base_url = "http://127.0.0.1:{port}"
[oams.http]               # a plugged spec's sections are read by its own hook (suite/specs.py
base_url = "http://127.0.0.1:{port}"            # `descriptor`): oams@0.1 has http, jsonrpc (url),
[memoturn.mcp]            # stdio (command); memoturn@2026.06 http, mcp (url or command)
command = "my-server --memoturn-mcp"
```

Templates: `{name}` is the value, shell-quoted (commands are split with shlex and run without a
shell, so a value with spaces stays one argument); `{name?TEXT}` is TEXT (itself a template) only
when the value is set; booleans are `true`/`false`; `{{` and `}}` are literal braces. Everywhere:
`{workdir}` (one fresh folder for the run), `{python}` (this interpreter), `{port}` (a free
127.0.0.1 port picked when the file is loaded); URLs and ready_line may use `{port}` only. A name a template
cannot know, an unknown key, a value of the wrong type: a DescriptorError naming the file, the line
and the key, found when the file is loaded, not in the middle of a run.

The server of `[start]` starts when the first client is asked for (never while collecting, nor to
describe the target), once for the run; `close()` tears it down (idempotent), and an atexit hook
does so for any server still running when the interpreter exits.
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from memconform.suite.specs import SPECS
from memconform.targets.target_string import TargetStringError, shipped_descriptors

#: Names every template may use: `{workdir}` the driver's fresh work folder, `{python}` this
#: interpreter (so a descriptor can run `{python} -m memconform.suite.cli` without an activated
#: venv), `{port}` a free 127.0.0.1 port chosen at load.
COMMON_NAMES = ("workdir", "python", "port")
#: URLs are expanded at load, before any work folder exists: only the port can be in them.
URL_NAMES = ("port",)
#: Names each OMF operation supplies (memd's flags, docs/omf.md).
EXPORT_NAMES = ("tenant", "project", "include_history", "include_superseded", "include_expired", "file")
IMPORT_NAMES = ("tenant", "file", "include_archived", "fuzzy_threshold", "dry_run")
#: The flags an OMF command line may declare it lacks (`[omf.cli] lacks`), each with the spec's default:
#: a check asking the default runs without the flag, any other value is not offered.
OMF_FLAG_DEFAULTS = {"project": None, "include_history": False, "include_superseded": True, "include_expired": True,
                     "include_archived": True, "fuzzy_threshold": None, "dry_run": False}
#: What a descriptor can drive (tests/harness/test_descriptor.py keeps this in step with the suite).
KNOWN_SPECS = {"ump": ("0.1", "1.0"), "upp": ("1.0.0",), "omf": ("1.0",)}
#: The sections reaching each spec, and the binding (subject) each one is.
BINDING_SECTIONS = {"ump": ("http", "mcp"), "upp": ("http", "stdio"), "omf": ("cli", "http")}
#: `[ump]` keys saying who the UMP checks act as (suite/ump/owners.py, docs/vendor-keys.md)
UMP_OWNER_KEYS = ("token_times", "owners")
#: [upp.methods]: spec operation name -> the name the server serves it under (docs/descriptors.md)
UPP_METHOD_KEYS = ("methods",)
#: Specs whose section is read by their own hook (suite/specs.py `descriptor`), in the table's order.
PLUGGED = tuple(name for name, spec in SPECS.items() if spec.descriptor and name not in KNOWN_SPECS)
TOP_KEYS = ("name", "specs", "profile", "known_deviations", "vars", "start", "stop", "ump", "upp", "omf") + PLUGGED


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
    #: flags the implementation does not have (`lacks`)
    lacks: tuple[str, ...] = ()
    #: (the suite's result key, the key the implementation prints) for each renamed member (`[omf.cli.result]`)
    result_keys: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Binding:
    """How one UMP or UPP binding is reached: a URL (expanded at load) or a command (a template,
    expanded when the work folder exists). `binding` is the subject's binding name."""

    spec: str
    binding: str
    url: str | None = None
    command: Template | None = None

    @property
    def shown(self) -> str:
        return self.url if self.url is not None else self.command.text if self.command else ""


@dataclass(frozen=True)
class PluggedSection:
    """What a plugged spec's hook (suite/specs.py `descriptor`) makes of its `[spec]` table:
    `sections` every binding section it can have (for messages), `bindings` those described, in
    subject order, and `part(binding, *, url, argv, label, timeout)` -> a `SpecPart` reaching one
    of them once the server is up (`url` as loaded, `argv` the command with every name filled in).
    A part with `probe()` -> None or why not is asked it before any check runs."""

    spec: str
    sections: tuple[str, ...]
    bindings: tuple[Binding, ...]
    part: Callable[..., Any]


@dataclass(frozen=True)
class Readiness:
    """When a started server counts as up: `url` answers (any HTTP status) and/or a line of its
    output matches `line`; both, when both are given (the line first)."""

    url: str | None = None
    line: str | None = None
    timeout: float = 30.0

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in (("url", self.url), ("line", self.line), ("timeout", self.timeout)) if v is not None}


@dataclass(frozen=True)
class StartCommand:
    command: Template
    ready: Readiness
    cwd: Template | None = None
    env: Mapping[str, Template] = field(default_factory=dict)

    @property
    def ready_url(self) -> str | None:  # the v1 attribute
        return self.ready.url

    @property
    def ready_timeout(self) -> float:  # the v1 attribute
        return self.ready.timeout


@dataclass(frozen=True)
class StopCommand:
    """Teardown: `command` (if any) runs first, bounded by `timeout`; the server then gets `grace`
    seconds to exit, then SIGTERM to its process group and `grace` more, then SIGKILL."""

    command: Template | None = None
    timeout: float = 30.0
    grace: float = 5.0


@dataclass(frozen=True)
class Descriptor:
    path: Path
    name: str
    specs: tuple[tuple[str, str], ...]
    cli: OmfCli | None = None
    vars: Mapping[str, Template] = field(default_factory=dict)
    http_base_url: str | None = None  # [omf.http]
    start: StartCommand | None = None
    known_deviations: tuple[Deviation, ...] = ()
    #: the spec profile the implementation claims (OMF: "memd" or "consumer"), for the specs that have it
    profile: str | None = None
    bindings: tuple[Binding, ...] = ()  # [ump.*] and [upp.*]
    stop: StopCommand = StopCommand()
    port: int | None = None  # the value of {port}; None when no template names it
    plugged: Mapping[str, PluggedSection] = field(default_factory=dict)  # the plugged specs' sections

    def var_values(self, workdir: Path) -> dict[str, str]:
        """[vars] with {workdir}, {python} and {port} filled in; plus those three themselves."""
        base = {"workdir": str(workdir), "python": sys.executable}
        if self.port is not None:
            base["port"] = str(self.port)
        return {**base, **{k: t.expand_raw(base) for k, t in self.vars.items()}}

    def versions(self, spec: str) -> tuple[str, ...]:
        return tuple(v for s, v in self.specs if s == spec)

    def binding(self, spec: str, name: str) -> Binding | None:
        return next((b for b in self.all_bindings if (b.spec, b.binding) == (spec, name)), None)

    @property
    def all_bindings(self) -> tuple[Binding, ...]:
        """[ump.*] and [upp.*], then each plugged spec's."""
        return self.bindings + tuple(b for section in self.plugged.values() for b in section.bindings)

    @property
    def upp_methods(self) -> dict[str, str]:
        """[upp.methods]: spec operation -> the server's name for it (validated when loaded)."""
        section = tomllib.loads(self.path.read_text(encoding="utf-8")).get("upp") or {}
        methods = section.get("methods") if isinstance(section, dict) else None
        return {k: v for k, v in methods.items() if isinstance(v, str)} if isinstance(methods, dict) else {}

    @property
    def ump_owners(self) -> Any:
        """Who the UMP checks act as: `[ump] token_times` and `[ump.owners.<name>]` (docs/vendor-keys.md;
        validated when the file was loaded); None when the file names neither."""
        section = tomllib.loads(self.path.read_text(encoding="utf-8")).get("ump") or {}
        if not any(k in section for k in UMP_OWNER_KEYS):
            return None
        from memconform.suite.ump.owners import owners_from_table

        return owners_from_table(section, base_dir=str(self.path.parent), where=f"{self.path} [ump]")


def free_port() -> int:
    """A port nobody listens on at 127.0.0.1 right now (the kernel's pick; taken again only by luck)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- loading -------------------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _header_name(line: str) -> str | None:
    m = _HEADER.match(line)
    return re.sub(r"\s*\.\s*", ".", m.group(1)).replace('"', "") if m else None


def locate(lines: list[str], key: str) -> int | None:
    """The line (1-based) where the dotted `key` is written: its own `[table]` header, or `name =`
    inside the table of its longest prefix that has a header (inline tables sit on one line)."""
    parts = key.split(".")
    headers = [(n, _header_name(line)) for n, line in enumerate(lines)]
    headers = [(n, h) for n, h in headers if h is not None]
    for cut in range(len(parts), -1, -1):
        table = ".".join(parts[:cut])
        if cut:
            opening = next((n for n, h in headers if h == table), None)
            if opening is None and cut == len(parts):  # [ump.http] stands for a missing [ump]
                opening = next((n for n, h in headers if h.startswith(table + ".")), None)
            if opening is None:
                continue
        else:
            opening = -1
        if cut == len(parts):
            return opening + 1
        closing = next((n for n, _ in headers if n > opening), len(lines))
        name = re.escape(parts[cut])
        pattern = re.compile(rf'^\s*(?:{name}|"{name}"|\'{name}\')\s*[=.]')
        for n in range(opening + 1, closing):
            if pattern.match(lines[n]):
                return n + 1
        return opening + 1 if cut else None
    return None


class _Reader:
    """Typed reads of a parsed descriptor; every failure names the file, line and key."""

    def __init__(self, path: Path, raw: str):
        self.path = path
        self.lines = raw.splitlines()
        self._port: int | None = None

    def where(self, key: str) -> str:
        line = locate(self.lines, key) if key else None
        return f"{self.path}" + (f" line {line}" if line else "") + (f" ({key})" if key else "")

    def fail(self, key: str, message: str) -> DescriptorError:
        return DescriptorError(f"{self.where(key)}: {message}")

    def port(self) -> int:
        if self._port is None:
            self._port = free_port()
        return self._port

    @property
    def port_value(self) -> int | None:
        return self._port

    def table(self, parent: Mapping[str, Any], key: str, dotted: str) -> dict[str, Any] | None:
        value = parent.get(key)
        if value is not None and not isinstance(value, dict):
            raise self.fail(dotted, f"[{dotted}] must be a table")
        return value

    def keys(self, table: Mapping[str, Any], known: tuple[str, ...], prefix: str) -> None:
        unknown = sorted(set(table) - set(known))
        if unknown:
            inside = f" in [{prefix}]" if prefix else ""
            raise self.fail(f"{prefix}.{unknown[0]}" if prefix else unknown[0],
                            f"unknown key(s) {unknown}{inside}; known: {', '.join(known)}")

    def string(self, table: Mapping[str, Any], key: str, dotted: str, *, required: bool = False) -> str | None:
        value = table.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(dotted if key in table else dotted.rsplit(".", 1)[0],
                            f"`{key}` must be a non-empty string")
        return value

    def seconds(self, table: Mapping[str, Any], key: str, dotted: str, default: float) -> float:
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise self.fail(dotted, f"`{key}` must be a positive number of seconds")
        return float(value)

    def template(self, text: str, dotted: str, names: set[str] | tuple[str, ...]) -> Template:
        t = Template.parse(text, self.where(dotted))
        t.check_names(names)
        if "port" in t.names:
            self.port()  # picked now, so that every template of this file sees the same port
        return t

    def url(self, table: Mapping[str, Any], key: str, dotted: str, *, required: bool = False) -> str | None:
        """An http(s) URL with {port} filled in; a `base_url` loses its trailing slash (routes are
        appended to it), any other URL is used exactly as written."""
        text = self.string(table, key, dotted, required=required)
        if text is None:
            return None
        t = self.template(text, dotted, URL_NAMES)
        url = t.expand_raw({"port": self.port()} if "port" in t.names else {})
        if not url.startswith(("http://", "https://")):
            raise self.fail(dotted, f"`{key}` must be an http:// or https:// URL, not {text!r}")
        return url.rstrip("/") if key == "base_url" else url


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
    r = _Reader(path, raw)
    r.keys(data, TOP_KEYS, "")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise r.fail("name", "name must be a non-empty string")
    specs = _specs(r, data.get("specs"))
    var_templates = _vars(r, data)
    names = set(COMMON_NAMES) | set(var_templates)
    omf = r.table(data, "omf", "omf") or {}
    r.keys(omf, ("cli", "vars", "http"), "omf")
    cli = _omf_cli(r, omf, names)
    omf_http = r.table(omf, "http", "omf.http")
    omf_url = None
    if omf_http is not None:
        r.keys(omf_http, ("base_url",), "omf.http")
        omf_url = r.url(omf_http, "base_url", "omf.http.base_url", required=True)
    bindings = _bindings(r, data, names)
    plugged = _plugged(r, data, specs, names)
    _match_specs_and_sections(r, specs, bindings, cli is not None or omf_url is not None, plugged)
    start = _start(r, data, names, _default_ready_url(bindings, omf_url, plugged))
    stop = _stop(r, data, names, start)
    return Descriptor(path=path, name=name.strip(), specs=specs, cli=cli, vars=var_templates,
                      http_base_url=omf_url, start=start, bindings=bindings, stop=stop, port=r.port_value,
                      plugged=plugged,
                      known_deviations=_deviations(r, data.get("known_deviations", [])),
                      profile=_profile(r, data.get("profile")))


def _profile(r: _Reader, value: Any) -> str | None:
    if value is None:
        return None
    from memconform.suite import catalogue as catalogues

    known = sorted({p for spec in catalogues.SPECS for p in catalogues.load(spec).profiles})
    if not isinstance(value, str) or value not in known:
        raise r.fail("profile", f"profile {value!r}: one of {', '.join(known) or '(no spec has profiles)'}")
    return value


def spec_versions(spec: str) -> tuple[str, ...]:
    """The versions a descriptor may claim: a plugged spec's are its catalogue's (read only when named)."""
    if spec in KNOWN_SPECS:
        return KNOWN_SPECS[spec]
    from memconform.suite import catalogue as catalogues

    return tuple(catalogues.load(spec).versions)


def _specs(r: _Reader, value: Any) -> tuple[tuple[str, str], ...]:
    example = '["ump@1.0", "upp@1.0.0", "omf@1.0"]'
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise r.fail("specs", f"specs must be a list like {example}")
    out = []
    for text in value:
        spec, _, version = text.partition("@")
        if spec not in KNOWN_SPECS and spec not in PLUGGED:
            raise r.fail("specs", f"{text!r}: descriptors can drive {', '.join((*KNOWN_SPECS, *PLUGGED))}, "
                                  f"e.g. {example}")
        if version not in spec_versions(spec):
            raise r.fail("specs", f"{text!r}: known versions of {spec}: {', '.join(spec_versions(spec))}")
        out.append((spec, version))
    return tuple(dict.fromkeys(out))


def _vars(r: _Reader, data: Mapping[str, Any]) -> dict[str, Template]:
    """[vars] and, as descriptors written for OMF alone have it, [omf.vars]: one namespace."""
    omf = data.get("omf") if isinstance(data.get("omf"), dict) else {}
    out: dict[str, Template] = {}
    reserved = set(COMMON_NAMES) | set(EXPORT_NAMES) | set(IMPORT_NAMES)
    for dotted, table in (("vars", r.table(data, "vars", "vars")), ("omf.vars", r.table(omf, "vars", "omf.vars"))):
        for key, value in (table or {}).items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise r.fail(f"{dotted}.{key}", f"[{dotted}] maps names to strings or numbers")
            if key in reserved:
                raise r.fail(f"{dotted}.{key}", f"[{dotted}] may not redefine {key!r}: the driver supplies it")
            if key in out:
                raise r.fail(f"{dotted}.{key}", f"{key!r} is defined in both [vars] and [omf.vars]")
            out[key] = r.template(str(value), f"{dotted}.{key}", COMMON_NAMES)
    return out


def _omf_cli(r: _Reader, omf: Mapping[str, Any], names: set[str]) -> OmfCli | None:
    section = r.table(omf, "cli", "omf.cli")
    if section is None:
        return None
    r.keys(section, ("export", "import", "cwd", "timeout", "lacks", "result"), "omf.cli")
    templates = {}
    for op, op_names in (("export", EXPORT_NAMES), ("import", IMPORT_NAMES)):
        text = section.get(op)
        if not isinstance(text, str) or not text.strip():
            raise r.fail(f"omf.cli.{op}" if op in section else "omf.cli",
                         f"[omf.cli] needs `{op}`, a command template string")
        templates[op] = r.template(text, f"omf.cli.{op}", names | set(op_names))
    cwd = section.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise r.fail("omf.cli.cwd", "cwd must be a path string")
    timeout = r.seconds(section, "timeout", "omf.cli.timeout", 1.0) if "timeout" in section else None
    return OmfCli(templates["export"], templates["import"],
                  cwd=(r.path.parent / cwd).resolve() if cwd is not None else None, timeout=timeout,
                  lacks=_omf_lacks(r, section, templates), result_keys=_omf_result_keys(r, section))


def _omf_lacks(r: _Reader, section: Mapping[str, Any], templates: Mapping[str, Template]) -> tuple[str, ...]:
    value = section.get("lacks", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise r.fail("omf.cli.lacks", "lacks must be a list of flag names")
    unknown = [v for v in value if v not in OMF_FLAG_DEFAULTS]
    if unknown:
        raise r.fail("omf.cli.lacks", f"lacks {unknown}: the flags are {', '.join(OMF_FLAG_DEFAULTS)}")
    used = [v for v in value if any(v in t.names for t in templates.values())]
    if used:  # a flag both lacked and passed: one of the two is wrong
        raise r.fail("omf.cli.lacks", f"lacks {used}, yet the command templates use {{{used[0]}}}")
    return tuple(dict.fromkeys(value))


def _omf_result_keys(r: _Reader, section: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    table = r.table(section, "result", "omf.cli.result") or {}
    r.keys(table, ("imported", "duplicates", "skipped", "total", "to_import", "filtered", "unscoped", "by_project"),
           "omf.cli.result")
    out = []
    for key, printed in table.items():
        if not isinstance(printed, str) or not printed.strip():
            raise r.fail(f"omf.cli.result.{key}", f"`{key}` must name the key the command prints (a string)")
        out.append((key, printed))
    return tuple(out)


def _bindings(r: _Reader, data: Mapping[str, Any], names: set[str]) -> tuple[Binding, ...]:
    out: list[Binding] = []
    for spec in ("ump", "upp"):
        table = r.table(data, spec, spec) or {}
        r.keys(table, BINDING_SECTIONS[spec] + (UMP_OWNER_KEYS if spec == "ump" else UPP_METHOD_KEYS), spec)
        if spec == "upp" and "methods" in table:
            _upp_methods(r, table)
        if spec == "ump" and any(k in table for k in UMP_OWNER_KEYS):
            from memconform.suite.ump.owners import OwnerError, owners_from_table

            try:  # the vendor's owners are checked now (a seed that is not its DID's), not mid-run
                owners_from_table(table, base_dir=str(r.path.parent), where="[ump]")
            except OwnerError as exc:
                raise r.fail("ump.owners" if "owners" in table else "ump.token_times", str(exc)) from None
        for binding in BINDING_SECTIONS[spec]:
            section = r.table(table, binding, f"{spec}.{binding}")
            if section is not None:
                out.append(_binding(r, spec, binding, section, names))
    return tuple(out)


def _upp_methods(r: _Reader, table: Mapping[str, Any]) -> dict[str, str]:
    """[upp.methods]: each key a UPP operation, each value the server's own method name for it."""
    from memconform.suite.upp.client import OPERATIONS

    methods = r.table(table, "methods", "upp.methods") or {}
    out: dict[str, str] = {}
    for op, name in methods.items():
        if op not in OPERATIONS:
            raise r.fail(f"upp.methods.{op}", f"{op!r} is no UPP operation (known: {', '.join(OPERATIONS)}); "
                                              'quote the key: "upp/get_events" = "upp/events"')
        if not isinstance(name, str) or not name.strip():
            raise r.fail(f"upp.methods.{op}", f"the server's name for {op} must be a non-empty string")
        out[op] = name
    doubled = sorted(n for n in set(out.values()) if list(out.values()).count(n) > 1)
    if doubled:
        raise r.fail("upp.methods", f"{doubled[0]!r} is named for more than one operation")
    return out


def _binding(r: _Reader, spec: str, binding: str, section: Mapping[str, Any], names: set[str]) -> Binding:
    dotted = f"{spec}.{binding}"
    if binding == "stdio":
        r.keys(section, ("command",), dotted)
        text = r.string(section, "command", f"{dotted}.command", required=True)
        return Binding(spec, binding, command=r.template(text, f"{dotted}.command", names))
    if binding == "mcp":  # streamable HTTP or stdio: the subject is "mcp" either way
        r.keys(section, ("url", "command"), dotted)
        if ("url" in section) == ("command" in section):
            raise r.fail(dotted, '[ump.mcp] needs one of url = "http://HOST:PORT/mcp" (streamable HTTP) '
                                 'or command = "…" (stdio)')
        if "url" in section:
            return Binding(spec, binding, url=r.url(section, "url", f"{dotted}.url", required=True))
        text = r.string(section, "command", f"{dotted}.command", required=True)
        return Binding(spec, binding, command=r.template(text, f"{dotted}.command", names))
    key = "base_url" if spec == "ump" else "url"  # UMP's routes hang under a base; UPP posts to one URL
    r.keys(section, (key,), dotted)
    return Binding(spec, binding, url=r.url(section, key, f"{dotted}.{key}", required=True))


def read_bindings(r: _Reader, spec: str, table: Mapping[str, Any], names: set[str] | frozenset[str],
                  shapes: Mapping[str, tuple[str, ...]]) -> tuple[Binding, ...]:
    """A plugged spec's `[spec.<binding>]` sections, for its hook: `shapes` maps each binding to
    the keys reaching it, exactly one of which is given; `command` is a template of `names` (split
    and run when the work folder exists), any other key an http(s) URL filled in now ({port} only).
    Bindings come out in the order of `shapes`, whatever order the file writes them in."""
    r.keys(table, tuple(shapes), spec)
    out = []
    for binding, keys in shapes.items():
        dotted = f"{spec}.{binding}"
        section = r.table(table, binding, dotted)
        if section is None:
            continue
        r.keys(section, keys, dotted)
        given = [k for k in keys if k in section]
        if len(given) != 1:
            raise r.fail(dotted, f"[{dotted}] needs " + (f"`{keys[0]}`" if len(keys) == 1 else
                                                         "exactly one of " + " or ".join(f"`{k}`" for k in keys)))
        key = given[0]
        if key == "command":
            text = r.string(section, key, f"{dotted}.{key}", required=True)
            out.append(Binding(spec, binding, command=r.template(text, f"{dotted}.{key}", names)))
        else:
            out.append(Binding(spec, binding, url=r.url(section, key, f"{dotted}.{key}", required=True)))
    return tuple(out)


def _plugged(r: _Reader, data: Mapping[str, Any], specs: tuple[tuple[str, str], ...],
             names: set[str]) -> dict[str, PluggedSection]:
    """Each plugged spec's section, read by its own hook; a spec neither named nor written is not
    imported (a run for one spec never loads another's driver)."""
    named = {s for s, _ in specs}
    out: dict[str, PluggedSection] = {}
    for name in PLUGGED:
        table = r.table(data, name, name)
        if table is None and name not in named:
            continue
        spec = SPECS[name]
        out[name] = spec.load(spec.descriptor)(table or {}, names=frozenset(names), reader=r)
    return out


def _match_specs_and_sections(r: _Reader, specs: tuple[tuple[str, str], ...], bindings: tuple[Binding, ...],
                              has_omf: bool, plugged: Mapping[str, PluggedSection] | None = None) -> None:
    """Every spec named is reachable, and every section reaches a spec named."""
    plugged = plugged or {}
    reached = ({b.spec for b in bindings} | ({"omf"} if has_omf else set())
               | {name for name, section in plugged.items() if section.bindings})
    named = {s for s, _ in specs}
    for spec in sorted(named - reached):
        kinds = plugged[spec].sections if spec in plugged else BINDING_SECTIONS[spec]
        sections = " or ".join(f"[{spec}.{b}]" for b in kinds)
        raise r.fail("specs", f"specs names {spec}@… but there is no {sections} section")
    for spec in sorted(reached - named):
        raise r.fail(spec, f"[{spec}.…] describes {spec.upper()}, but specs names no {spec}@VERSION "
                           f"(known: {', '.join(f'{spec}@{v}' for v in spec_versions(spec))})")


def _default_ready_url(bindings: tuple[Binding, ...], omf_url: str | None,
                       plugged: Mapping[str, PluggedSection] | None = None) -> str | None:
    """Without ready_url or ready_line, the server is up when its first HTTP URL answers."""
    later = [b for section in (plugged or {}).values() for b in section.bindings]
    urls = ([b.url for b in bindings if b.url is not None] + ([omf_url] if omf_url else [])
            + [b.url for b in later if b.url is not None])
    return urls[0] if urls else None


def _start(r: _Reader, data: Mapping[str, Any], names: set[str], default_url: str | None) -> StartCommand | None:
    section = r.table(data, "start", "start")
    if section is None:
        return None
    r.keys(section, ("command", "cwd", "env", "ready_url", "ready_line", "ready_timeout"), "start")
    text = r.string(section, "command", "start.command", required=True)
    command = r.template(text, "start.command", names)
    cwd_text = r.string(section, "cwd", "start.cwd")
    cwd = r.template(cwd_text, "start.cwd", names) if cwd_text is not None else None
    env = _env(r, section, names)
    url = r.url(section, "ready_url", "start.ready_url")
    line = _ready_line(r, section)
    if url is None and line is None:
        url = default_url
    if url is None and line is None:
        raise r.fail("start", "[start] needs ready_url or ready_line (or an HTTP URL of a binding) to know "
                              "when the server is up")
    timeout = r.seconds(section, "ready_timeout", "start.ready_timeout", 30.0)
    return StartCommand(command, Readiness(url, line, timeout), cwd=cwd, env=env)


def _ready_line(r: _Reader, section: Mapping[str, Any]) -> str | None:
    """The regex, with {port} filled in like a URL (so `{{`/`}}` are a regex's literal braces)."""
    text = r.string(section, "ready_line", "start.ready_line")
    if text is None:
        return None
    t = r.template(text, "start.ready_line", URL_NAMES)
    line = t.expand_raw({"port": r.port()} if "port" in t.names else {})
    try:
        re.compile(line)
    except re.error as exc:
        raise r.fail("start.ready_line", f"ready_line {line!r} is not a regular expression: {exc}") from None
    return line


def _env(r: _Reader, section: Mapping[str, Any], names: set[str]) -> dict[str, Template]:
    table = r.table(section, "env", "start.env") or {}
    out = {}
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise r.fail(f"start.env.{key}", f"env values are strings (templates) or numbers, not {value!r}")
        if not key or "=" in key or "\0" in key:
            raise r.fail(f"start.env.{key}", f"{key!r} cannot be an environment variable name")
        out[key] = r.template(str(value), f"start.env.{key}", names)
    return out


def _stop(r: _Reader, data: Mapping[str, Any], names: set[str], start: StartCommand | None) -> StopCommand:
    section = r.table(data, "stop", "stop")
    if section is None:
        return StopCommand()
    if start is None:
        raise r.fail("stop", "[stop] tears down the server of [start], and there is no [start]")
    r.keys(section, ("command", "timeout", "grace"), "stop")
    text = r.string(section, "command", "stop.command")
    return StopCommand(command=r.template(text, "stop.command", names) if text is not None else None,
                       timeout=r.seconds(section, "timeout", "stop.timeout", 30.0),
                       grace=r.seconds(section, "grace", "stop.grace", 5.0))


def _deviations(r: _Reader, value: Any) -> tuple[Deviation, ...]:
    if not isinstance(value, list):
        raise r.fail("known_deviations", "known_deviations must be a list")
    out = []
    for item in value:
        if isinstance(item, str) and item.strip():
            out.append(Deviation(item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("requirement"), str):
            out.append(Deviation(item["requirement"], str(item.get("reason", ""))))
        else:
            raise r.fail("known_deviations", f"{item!r}: each entry is a requirement id or "
                         "{ requirement = \"…\", reason = \"…\" }")
    return tuple(out)


# -- a started server ----------------------------------------------------------------------------

_TAIL = 4000  # bytes of a server's output kept for messages
_LINE_LIMIT = 64 * 1024  # a "line" without a newline is searched up to this length
_LIVE: set[ServerProcess] = set()
_LIVE_LOCK = threading.Lock()


def _stop_all_at_exit() -> None:
    """The safety net: a run that ends without close() (an interrupted session, a crash in the
    harness) still tears down every server it started."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for server in live:
        server.stop()


atexit.register(_stop_all_at_exit)


def exit_text(code: int) -> str:
    """How a process ended, in words: a negative return code is the signal that killed it."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with {code}"


def http_answers(url: str) -> bool:
    """Whether anything answers HTTP at `url`: any status means it is listening."""
    import httpx

    try:
        # readiness only: a self-signed certificate still means the server is up
        httpx.get(url, timeout=1.0, verify=False)
        return True
    except httpx.HTTPError:
        return False


def _target_error(message: str) -> Exception:
    from memconform.suite.outcomes import TargetError

    return TargetError(message)


class ServerProcess:
    """One started server: its own process group (so its children stop with it), a thread
    tee-ing its merged stdout/stderr to a log file (the server never blocks on a full pipe, and a
    ready_line can be seen as it comes), and its teardown. `stop()` is idempotent."""

    def __init__(self, argv: list[str], *, cwd: Path, env: Mapping[str, str], log: Path,
                 stop: StopCommand = StopCommand(), stop_argv: list[str] | None = None, name: str = "[start]"):
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env)
        self.log = log
        self.stop_spec = stop
        self.stop_argv = stop_argv
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        #: what teardown did, in words (None until stop() ran)
        self.teardown: str | None = None
        self._reader: threading.Thread | None = None
        self._tail = bytearray()
        self._tail_lock = threading.Lock()
        self._pending = b""
        self._line: re.Pattern[str] | None = None
        self._line_seen = threading.Event()
        self._stop_lock = threading.RLock()

    @property
    def shown(self) -> str:
        return shlex.join(self.argv)

    def poll(self) -> int | None:
        """Its exit code (negative: the signal that ended it); None while it runs, as Popen.poll()."""
        return self.proc.poll() if self.proc is not None else None

    def start(self, ready_line: str | None = None) -> None:
        self._line = re.compile(ready_line) if ready_line else None
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, cwd=self.cwd, env=self.env,
                                         start_new_session=True)
        except OSError as exc:
            raise _target_error(f"{self.name}: cannot start {self.shown}: {exc.strerror or exc}") from None
        with _LIVE_LOCK:
            _LIVE.add(self)
        self._reader = threading.Thread(target=self._pump, name=f"memconform server {self.proc.pid} output",
                                        daemon=True)
        self._reader.start()

    # -- output --

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stream = self.proc.stdout
        with self.log.open("ab") as log:
            while True:
                try:
                    chunk = stream.read1(65536)
                except (OSError, ValueError):
                    break
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                self._feed(chunk)
        stream.close()

    def _feed(self, chunk: bytes) -> None:
        with self._tail_lock:
            self._tail += chunk
            del self._tail[:-_TAIL]
        if self._line is None or self._line_seen.is_set():
            return
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines[-1][-_LINE_LIMIT:]  # a prompt without a newline is searched too
        for line in lines:
            if self._line.search(line.decode("utf-8", "replace").rstrip("\r")):
                self._line_seen.set()
                return

    def output_tail(self, limit: int = 2000) -> str:
        with self._tail_lock:
            return bytes(self._tail[-limit:]).decode("utf-8", "replace").strip()

    # -- readiness --

    def _missing(self, ready: Readiness) -> str:
        if self._line is not None and not self._line_seen.is_set():
            return f"no output line matched {ready.line!r}"
        return f"{ready.url} did not answer"

    def _ready(self, ready: Readiness) -> bool:
        if self._line is not None and not self._line_seen.wait(0.2):
            return False
        return ready.url is None or http_answers(ready.url)

    def wait_ready(self, ready: Readiness) -> None:
        """Return once the server is up; a TargetError with its last output when it exits first
        or is not up within ready.timeout (the caller tears it down)."""
        assert self.proc is not None
        deadline = time.monotonic() + ready.timeout
        while True:
            if self.proc.poll() is not None:
                if self._reader is not None:
                    self._reader.join(1.0)  # its last words, before quoting them
                raise _target_error(f"{self.name}: {self.shown} {exit_text(self.proc.returncode)} before it was "
                                    f"ready ({self._missing(ready)}); its output ends: "
                                    f"{self.output_tail() or '(nothing)'}")
            if self._ready(ready):
                return
            if time.monotonic() > deadline:
                raise _target_error(f"{self.name}: {self.shown} was not ready within {ready.timeout:g} s "
                                    f"({self._missing(ready)}); its output ends: {self.output_tail() or '(nothing)'}")
            if self._line is None:
                time.sleep(0.1)

    # -- teardown --

    def stop(self) -> str:
        """Tear the server down (StopCommand says how); what happened, in words. Idempotent."""
        with self._stop_lock:
            if self.teardown is not None or self.proc is None:
                return self.teardown or ""
            notes: list[str] = []
            try:
                self._teardown(self.proc, notes)
            finally:
                with _LIVE_LOCK:
                    _LIVE.discard(self)
                if self._reader is not None:
                    self._reader.join(2.0)
                self.teardown = "; ".join(notes)
            return self.teardown

    def _teardown(self, proc: subprocess.Popen[bytes], notes: list[str]) -> None:
        grace = self.stop_spec.grace
        running = proc.poll() is None
        if not running:
            notes.append(f"the server {exit_text(proc.returncode)} before teardown")
        if self.stop_argv:  # the server's own way down first: it may have state to flush
            notes.append(self._run_stop_command())
            # it may be gone already: it can exit while the stop command is still finishing
            if running and _wait(proc, grace):
                notes.append("the server exited after the stop command")
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            if proc.poll() is not None:
                break
            self._signal(sig)
            if _wait(proc, wait):
                notes.append(f"the server stopped on {sig.name}")
        if proc.poll() is None:
            notes.append(f"the server (pid {proc.pid}) did not exit even on SIGKILL")
        self._signal(signal.SIGKILL)  # whatever it left behind in its process group

    def _signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass  # nothing left in the group

    def _run_stop_command(self) -> str:
        assert self.stop_argv is not None
        shown, limit = shlex.join(self.stop_argv), self.stop_spec.timeout
        try:
            # at interpreter exit the work folder may be removed before this runs: run it anyway
            done = subprocess.run(self.stop_argv, stdin=subprocess.DEVNULL, capture_output=True,
                                  cwd=self.cwd if self.cwd.is_dir() else None, env=self.env, timeout=limit)
        except subprocess.TimeoutExpired:
            return f"the stop command {shown} did not finish within {limit:g} s"
        except OSError as exc:
            return f"the stop command {shown} could not run: {exc.strerror or exc}"
        if done.returncode != 0:
            said = (done.stdout + done.stderr).decode("utf-8", "replace").strip()[-500:]
            return f"the stop command {shown} {exit_text(done.returncode)}: {said or '(no output)'}"
        return f"the stop command {shown} ran"


def _wait(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        proc.wait(seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


# -- the driver ----------------------------------------------------------------------------------

#: Where the shipped descriptors live (`--target=reference.toml` finds them here).
SHIPPED = shipped_descriptors()


class DescriptorDriver:
    """`--target=path/to/target.toml`: the subjects the descriptor describes, one per spec version
    and binding. Subjects come from the file alone (collecting starts nothing); the `[start]`
    server starts before the first client is handed out, and UMP/UPP clients come from the
    drivers of the plain target strings (HttpDriver, McpDriver, JsonRpcDriver) at the described
    URLs or commands, a plugged spec's from the parts its section gives (`PluggedSection.part`).
    Every command sees one fresh work folder for the whole run."""

    def __init__(self, descriptor: Descriptor, label: str | None = None, timeout: float = 10.0,
                 mcp_protocol: str = "2025-11-25"):
        self.descriptor = descriptor
        self.label = label or str(descriptor.path)
        self.timeout = timeout
        self.mcp_protocol = mcp_protocol
        self._lock = threading.RLock()
        self._tmp: Any = None
        self._server: ServerProcess | None = None
        self._start_error: str | None = None
        self._omf_clients: dict[str, Any] = {}
        self._inner: dict[tuple[str, str], Any] = {}  # (spec, binding) → the plain target's driver
        self._advertised: dict[str, str] = {}
        self._closed = False

    @classmethod
    def open(cls, path: str | Path, label: str | None = None, timeout: float = 10.0,
             mcp_protocol: str = "2025-11-25") -> DescriptorDriver:
        return cls(load_descriptor(path), label=label, timeout=timeout, mcp_protocol=mcp_protocol)

    @property
    def workdir(self) -> Path:
        if self._tmp is None:
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="memconform-desc-")
        return Path(self._tmp.name)

    @property
    def server(self) -> ServerProcess | None:
        """The started server (None before start() or without [start])."""
        return self._server

    def subjects(self) -> list[Any]:
        """The described subjects, once the server was started and each described UMP and UPP
        binding (and OMF's HTTP) was shown to answer in its protocol (`probe`): a server that is
        absent or speaks something else is one target error with the reason, not a verdict."""
        from memconform.suite.outcomes import TargetError

        subjects = self.described_subjects()
        try:
            self.probe(subjects)
        except TargetError:
            self.close()  # the server started for the probe must not outlive it
            raise
        return subjects

    def probe(self, subjects: list[Any]) -> None:
        """Raise TargetError naming every described binding that cannot be reached or is not its
        protocol. OMF's command line is not run here: each operation is a run of its own."""
        from memconform.suite.outcomes import TargetError
        from memconform.targets.http import OMF_PROBE_TENANT, HttpDriver

        failures = []
        for spec, binding in dict.fromkeys((s.spec, s.binding) for s in subjects):
            if (spec, binding) == ("omf", "cli"):
                continue
            subject = next(s for s in subjects if (s.spec, s.binding) == (spec, binding))
            try:
                if spec == "omf":
                    self._omf_client(subject).export(OMF_PROBE_TENANT)
                elif spec in self.descriptor.plugged:
                    part = self._inner_driver(subject)
                    why = part.probe() if hasattr(part, "probe") else None
                    if why is not None:
                        raise TargetError(why)
                elif isinstance(inner := self._inner_driver(subject), HttpDriver):
                    inner.discover()
                else:
                    inner.subjects()
            except TargetError as exc:
                if self._start_error is not None:  # every binding would say the same
                    raise
                failures.append(f"{subject.spec.upper()} over {binding}: {exc}")
        if failures:
            raise TargetError(f"{self.label}: " + "; ".join(failures))

    def described_subjects(self) -> list[Any]:
        """The subjects the file describes, one per spec version and binding; starts nothing."""
        from memconform.targets.base import Subject

        out = []
        for spec, version in self.descriptor.specs:
            plugged = self.descriptor.plugged.get(spec)
            for binding in plugged.sections if plugged is not None else BINDING_SECTIONS[spec]:
                if self._reaches(spec, binding):
                    out.append(Subject(self.label, spec, version, binding))
        return out

    def _reaches(self, spec: str, binding: str) -> bool:
        d = self.descriptor
        if spec == "omf":
            return d.cli is not None if binding == "cli" else d.http_base_url is not None
        return d.binding(spec, binding) is not None

    def advertised_level(self, subject: Any) -> str | None:
        if subject.spec == "omf":
            return None  # OMF has no levels (docs/omf.md)
        level = self._inner_driver(subject).advertised_level(subject)
        if isinstance(level, str):
            self._advertised.setdefault(subject.spec, level)
        return level

    def client(self, subject: Any) -> Any:
        if subject.spec == "omf":
            with self._lock:
                return self._omf_client(subject)
        # not cached here: each plain driver keeps its clients (the JSON-RPC one restarts a dead child)
        return self._inner_driver(subject).client(subject)

    # -- the server --

    def start(self) -> None:
        """Start the `[start]` server and wait until it is ready; once for the run: later calls
        return at once, or repeat why it could not start (without waiting again)."""
        with self._lock:
            self._check_open()
            start = self.descriptor.start
            if self._start_error is not None:
                raise _target_error(self._start_error)
            if start is None or self._server is not None:
                return
            server = self._new_server(start)
            self._server = server
            try:
                server.start(start.ready.line)
                server.wait_ready(start.ready)
            except BaseException as exc:  # a Ctrl-C while waiting must not leave it running either
                self._start_error = str(exc) or f"{self.descriptor.path} [start]: {type(exc).__name__} while starting"
                server.stop()
                raise

    def _check_open(self) -> None:
        if self._closed:
            raise _target_error(f"{self.label}: the descriptor's driver is closed")

    def _new_server(self, start: StartCommand) -> ServerProcess:
        where = f"{self.descriptor.path} [start]"
        values = self.descriptor.var_values(self.workdir)
        argv = start.command.argv(values)
        if not argv:
            raise _target_error(f"{where}: the command {start.command.text!r} is empty")
        stop = self.descriptor.stop
        return ServerProcess(argv, cwd=self._cwd(start, values, where), env=self._env(start, values),
                             log=self.workdir / "server.log", stop=stop,
                             stop_argv=stop.command.argv(values) if stop.command is not None else None, name=where)

    def _cwd(self, start: StartCommand, values: Mapping[str, Any], where: str) -> Path:
        if start.cwd is None:
            return self.workdir
        cwd = (self.descriptor.path.parent / start.cwd.expand_raw(values)).resolve()
        if not cwd.is_dir():
            raise _target_error(f"{where}: cwd {cwd} is not a folder")
        return cwd

    @staticmethod
    def _env(start: StartCommand, values: Mapping[str, Any]) -> dict[str, str]:
        env = dict(os.environ)
        # a Python server writing to a pipe buffers its output: a ready_line would come late or never
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.update({name: t.expand_raw(values) for name, t in start.env.items()})
        return env

    # -- clients --

    def _omf_client(self, subject: Any) -> Any:
        from memconform.suite.outcomes import NotApplicable

        if subject.binding not in self._omf_clients:
            if not self._reaches("omf", subject.binding) or ("omf", subject.version) not in self.descriptor.specs:
                raise NotApplicable(f"{self.descriptor.path} describes no {subject.title}")
            self.start()
            if subject.binding == "cli":
                from memconform.targets.cli import OmfCliTarget

                self._omf_clients["cli"] = OmfCliTarget.from_descriptor(self.descriptor, workdir=self.workdir,
                                                                       timeout=None)
            else:
                from memconform.targets.omf_http import OmfHttpTarget

                self._omf_clients["http"] = OmfHttpTarget(self.descriptor.http_base_url, timeout=self.timeout)
        return self._omf_clients[subject.binding]

    def _inner_driver(self, subject: Any) -> Any:
        """The plain target's driver for a UMP or UPP binding, or a plugged spec's part, made once
        the server is up."""
        from memconform.suite.outcomes import NotApplicable

        with self._lock:
            key = (subject.spec, subject.binding)
            if key not in self._inner:
                binding = self.descriptor.binding(*key)
                if binding is None or (subject.spec, subject.version) not in self.descriptor.specs:
                    raise NotApplicable(f"{self.descriptor.path} describes no {subject.title}")
                self.start()
                self._inner[key] = self._new_inner(binding)
            return self._inner[key]

    def _new_inner(self, b: Binding) -> Any:
        plugged = self.descriptor.plugged.get(b.spec)
        if plugged is not None:
            return plugged.part(b.binding, url=b.url, argv=self._argv(b) if b.command is not None else None,
                                label=self.label, timeout=self.timeout)
        if b.spec == "ump" and b.binding == "http":
            from memconform.targets.http import HttpDriver

            driver = HttpDriver(b.url, self.descriptor.versions("ump"), timeout=self.timeout)
            driver.owners = self.descriptor.ump_owners
            return driver
        if b.spec == "ump":
            from memconform.targets.mcp import McpDriver

            text = f"mcp+{b.url}" if b.url is not None else f"mcp+stdio:{shlex.join(self._argv(b))}"
            driver = McpDriver(text, self.descriptor.versions("ump"), timeout=self.timeout, protocol=self.mcp_protocol)
            driver.owners = self.descriptor.ump_owners
            return driver
        from memconform.targets.jsonrpc import JsonRpcDriver

        if b.binding == "http":
            driver = JsonRpcDriver("http", b.url, label=self.label, timeout=self.timeout)
        else:
            driver = JsonRpcDriver("stdio", self._argv(b), label=self.label, timeout=self.timeout)
        driver.methods = self.descriptor.upp_methods
        return driver

    def _argv(self, b: Binding) -> list[str]:
        assert b.command is not None
        argv = b.command.argv(self.descriptor.var_values(self.workdir))
        if not argv:
            raise _target_error(f"{b.command.where}: the command {b.command.text!r} is empty")
        return argv

    # -- the report --

    def describe(self) -> dict[str, Any]:
        """What the report says of this target; starts nothing (it is also asked of a target never run)."""
        d = self.descriptor
        bindings = [{"spec": b.spec, "binding": b.binding, **({"url": b.url} if b.url is not None
                                                              else {"command": b.command.text})}
                    for b in d.all_bindings]
        if d.cli is not None:
            bindings.append({"spec": "omf", "binding": "cli", "command": d.cli.export.text})
        if d.http_base_url is not None:
            bindings.append({"spec": "omf", "binding": "http", "url": d.http_base_url})
        out: dict[str, Any] = {
            "label": self.label, "kind": "descriptor", "path": str(d.path), "name": d.name,
            "specs": [f"{s}@{v}" for s, v in d.specs], "advertised": dict(self._advertised), "bindings": bindings,
            "known_deviations": [{"requirement": x.requirement, "reason": x.reason} for x in d.known_deviations],
            **({"profile": d.profile} if d.profile else {}),
            # the UPP checks of semantics call these operations by the server's names (docs/descriptors.md)
            **({"upp_methods": d.upp_methods} if d.upp_methods else {})}
        if d.start is not None:
            out["start"] = self._describe_start(d.start)
        return out

    def _describe_start(self, start: StartCommand) -> dict[str, Any]:
        server = self._server
        out: dict[str, Any] = {"command": server.shown if server else start.command.text,
                               "readiness": start.ready.describe(), "env": sorted(start.env)}
        if self.descriptor.port is not None:
            out["port"] = self.descriptor.port
        stop = self.descriptor.stop
        out["stop"] = {"grace": stop.grace, **({"command": stop.command.text, "timeout": stop.timeout}
                                               if stop.command is not None else {})}
        if server is not None and server.proc is not None:
            out["pid"] = server.proc.pid
            if server.poll() is not None:
                out["exit_code"] = server.poll()
            if server.teardown is not None:
                out["teardown"] = server.teardown
        if self._start_error is not None:
            out["error"] = self._start_error
        return out

    def _keep_advertised(self, spec: str, inner: Any) -> None:
        """The levels a plain driver learned (keyed by spec or, HttpDriver's way, by version), kept
        by spec: the report is built after close."""
        try:
            advertised = inner.describe().get("advertised", {})
        except Exception:  # noqa: BLE001 - describing is best effort; the run's verdicts stand
            return
        for key, level in advertised.items():
            if isinstance(level, str):
                self._advertised.setdefault(key if key in KNOWN_SPECS else spec, level)

    def close(self) -> None:
        """Close every client and plain driver, tear the server down, remove the work folder.
        Idempotent; a failure to close one part never keeps the others running."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for (spec, _), inner in self._inner.items():
                self._keep_advertised(spec, inner)
            parts = list(self._omf_clients.values()) + list(self._inner.values())
            self._omf_clients.clear()
            self._inner.clear()
        for part in parts:
            try:
                part.close()
            except Exception:  # noqa: BLE001 - the server must still stop
                pass
        if self._server is not None:
            self._server.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
