"""The `--target` language (DESIGN.md, "Target strings"), parsed into small frozen values."""

from __future__ import annotations

import shlex
import urllib.parse
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ReferenceTarget:
    fault: str | None = None
    #: legitimate readings made the other way (reference_impl/variants.py); several combine
    variants: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        query = ([f"fault={self.fault}"] if self.fault else []) + [f"variant={v}" for v in self.variants]
        return "reference" + ("?" + "&".join(query) if query else "")


@dataclass(frozen=True)
class FileTarget:
    path: Path
    #: what the user says the file is: an export (export rules such as redact and exportable
    #: apply) or a plain dump of records (`file:PATH?as=dump`: they do not)
    file_as: str = "export"

    @property
    def label(self) -> str:
        return f"file:{self.path}" + ("?as=dump" if self.file_as == "dump" else "")


@dataclass(frozen=True)
class HttpTarget:
    """`http://host:port`: discovery of the UMP HTTP binding (§4.2, through /ump/capabilities) and
    of UPP (`POST /upp`, then `POST /`, with upp/info)."""

    base_url: str

    @property
    def label(self) -> str:
        return self.base_url


@dataclass(frozen=True)
class McpTarget:
    """`mcp+stdio:COMMAND ARGS` or `mcp+http://host:port/mcp`: the UMP MCP profile (§4.1)."""

    text: str
    transport: str  # "stdio" | "http"

    @property
    def label(self) -> str:
        return self.text


@dataclass(frozen=True)
class JsonRpcTarget:
    """`jsonrpc+http://host:port/path` (UPP exactly at that URL) or `jsonrpc+stdio:COMMAND ARGS`
    (a child process, one JSON-RPC message per line): a UPP server (docs/live-upp.md)."""

    text: str
    transport: str  # "http" | "stdio"

    @property
    def label(self) -> str:
        return self.text


@dataclass(frozen=True)
class DescriptorTarget:
    """`path/to/target.toml`: a target descriptor (targets/descriptor.py, docs/omf.md). A bare name
    that is no file here, such as `reference.toml`, is looked up among the shipped descriptors."""

    text: str
    path: Path

    @property
    def label(self) -> str:
        return self.text


@dataclass(frozen=True)
class DockerTarget:
    """`docker:IMAGE[?port=PORT&ready=PATH&timeout=SECONDS&env=NAME=VALUE…]`: a container of IMAGE,
    started with testcontainers, serving its HTTP bindings on container port PORT (default 8700,
    as `memconform serve`); judged like `http://HOST:PORT` at the mapped port (targets/docker.py,
    docs/descriptors.md "Containers")."""

    text: str
    image: str
    port: int = 8700
    ready_path: str = "/"  # any HTTP answer there means the server is up
    ready_timeout: float = 60.0
    env: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return self.text


@dataclass(frozen=True)
class PluggedTarget:
    """A target string of a spec's own prefix (suite/specs.py `targets`), opened by its `opener`."""

    text: str
    spec: str
    opener: str

    @property
    def label(self) -> str:
        return self.text


@dataclass(frozen=True)
class UnsupportedTarget:
    """A target kind the language knows but this version of memconform cannot drive yet."""

    text: str
    kind: str

    @property
    def label(self) -> str:
        return self.text


TargetString = (ReferenceTarget | FileTarget | HttpTarget | McpTarget | JsonRpcTarget | DescriptorTarget
                | DockerTarget | PluggedTarget | UnsupportedTarget)

#: Prefixes of target kinds the language reserves before their driver exists (none at present).
_LATER_KINDS: dict[str, str] = {}
_DOCKER_OPTIONS = ("port", "ready", "timeout", "env")


class TargetStringError(ValueError):
    pass


def parse_target(text: str) -> TargetString:
    """Parse one `--target` value. Raises TargetStringError with a hint for anything unknown."""
    text = text.strip()
    if not text:
        raise TargetStringError("empty --target")
    if text == "reference" or text.startswith("reference?"):
        query = urllib.parse.parse_qs(text.partition("?")[2], keep_blank_values=True)
        unknown = set(query) - {"fault", "variant"}
        if unknown:
            raise TargetStringError(f"unknown reference option(s) {sorted(unknown)} in {text!r}; "
                                    "?fault=NAME and ?variant=NAME (repeatable) are understood")
        from memconform.reference_impl.variants import VariantError, check_names

        try:
            variants = check_names(v.strip() for value in query.get("variant", []) for v in value.split(","))
        except VariantError as exc:
            raise TargetStringError(str(exc)) from None
        faults = query.get("fault", [])
        if len(faults) > 1:
            raise TargetStringError("a reference target takes one fault at a time")
        fault = faults[0] if faults else None
        if fault is not None:
            from memconform.reference_impl.faults import FAULTS

            if fault not in FAULTS:
                raise TargetStringError(f"unknown fault {fault!r}; known faults: {', '.join(sorted(FAULTS))}")
        return ReferenceTarget(fault=fault, variants=variants)
    if text.startswith("file:"):
        path = text[len("file:"):]
        file_as = "export"
        head, sep, query = path.rpartition("?")
        if sep and query.startswith("as="):
            path, file_as = head, query[len("as="):]
            if file_as not in ("export", "dump"):
                raise TargetStringError(f"{text!r}: as={file_as!r}; a file is read as an export "
                                        "(?as=export, the default) or as a plain record dump (?as=dump)")
        if not path:
            raise TargetStringError("file: needs a path, e.g. file:export.ump.json")
        return FileTarget(Path(path), file_as)
    if text.startswith(("http://", "https://")):
        parsed = urllib.parse.urlsplit(text)
        if not parsed.hostname:
            raise TargetStringError(f"{text!r} has no host, e.g. http://127.0.0.1:8700")
        if parsed.query or parsed.fragment:
            raise TargetStringError(f"{text!r}: an HTTP target is a base URL without query or fragment")
        return HttpTarget(text.rstrip("/"))
    if text.startswith("mcp+stdio:"):
        if not text[len("mcp+stdio:"):].strip():
            raise TargetStringError('mcp+stdio: needs a command, e.g. "mcp+stdio:memconform serve --stdio"')
        return McpTarget(text, "stdio")
    if text.startswith(("mcp+http://", "mcp+https://")):
        if not urllib.parse.urlsplit(text[len("mcp+"):]).hostname:
            raise TargetStringError(f"{text!r} has no host, e.g. mcp+http://127.0.0.1:8700/mcp")
        return McpTarget(text, "http")
    if text.startswith("jsonrpc+stdio:"):
        command = text[len("jsonrpc+stdio:"):]
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise TargetStringError(f"cannot split the command of {text!r}: {exc}") from None
        if not argv:
            raise TargetStringError('jsonrpc+stdio: needs a command, e.g. "jsonrpc+stdio:memconform serve --upp-stdio"')
        return JsonRpcTarget(text, "stdio")
    if text.startswith(("jsonrpc+http://", "jsonrpc+https://")):
        parsed = urllib.parse.urlsplit(text[len("jsonrpc+"):])
        if not parsed.hostname:
            raise TargetStringError(f"{text!r} has no host, e.g. jsonrpc+http://127.0.0.1:8700/upp")
        if parsed.fragment:
            raise TargetStringError(f"{text!r}: a JSON-RPC URL has no fragment")
        return JsonRpcTarget(text, "http")
    if text.startswith("docker:"):
        return _docker(text)
    from memconform.suite.specs import SPECS

    for spec in SPECS.values():
        for prefix, opener in spec.targets:
            if text.startswith(prefix):
                return PluggedTarget(text, spec.name, opener)
    for prefix, kind in _LATER_KINDS.items():
        if text.startswith(prefix):
            return UnsupportedTarget(text, kind)
    if text.endswith(".toml"):
        return DescriptorTarget(text, _descriptor_path(text))
    raise TargetStringError(
        f"cannot read target {text!r}: expected reference, reference?fault=NAME, file:PATH, "
        "http://HOST:PORT, mcp+stdio:COMMAND, mcp+http://HOST:PORT/mcp, jsonrpc+stdio:COMMAND, "
        "jsonrpc+http://HOST:PORT/PATH, a descriptor path ending in .toml, or docker:IMAGE")


def _docker(text: str) -> DockerTarget:
    image, _, query = text[len("docker:"):].partition("?")
    if not image or any(c.isspace() for c in image):
        raise TargetStringError(f"{text!r}: docker: needs an image, e.g. docker:ghcr.io/acme/ump-server:1.2?port=8700")
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    unknown = sorted({k for k, _ in pairs} - set(_DOCKER_OPTIONS))
    if unknown:
        raise TargetStringError(f"unknown docker option(s) {unknown} in {text!r}; known: {', '.join(_DOCKER_OPTIONS)}")
    single = {k: [v for key, v in pairs if key == k] for k in ("port", "ready", "timeout")}
    for key, values in single.items():
        if len(values) > 1:
            raise TargetStringError(f"{text!r}: {key}= given {len(values)} times")
    return DockerTarget(text, image, port=_docker_port(text, single["port"]),
                        ready_path=_docker_ready(text, single["ready"]),
                        ready_timeout=_docker_timeout(text, single["timeout"]),
                        env=tuple(_docker_env(text, v) for k, v in pairs if k == "env"))


def _docker_port(text: str, values: list[str]) -> int:
    if not values:
        return DockerTarget.port
    if not values[0].isdigit() or not 0 < int(values[0]) < 65536:
        raise TargetStringError(f"{text!r}: port= is the container's port, 1-65535, not {values[0]!r}")
    return int(values[0])


def _docker_ready(text: str, values: list[str]) -> str:
    if values and not values[0].startswith("/"):
        raise TargetStringError(f"{text!r}: ready= is a path on the server, starting with '/', not {values[0]!r}")
    return values[0] if values else DockerTarget.ready_path


def _docker_timeout(text: str, values: list[str]) -> float:
    if not values:
        return DockerTarget.ready_timeout
    try:
        seconds = float(values[0])
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise TargetStringError(f"{text!r}: timeout= is a positive number of seconds, not {values[0]!r}")
    return seconds


def _docker_env(text: str, value: str) -> tuple[str, str]:
    name, sep, val = value.partition("=")
    if not sep or not name:
        raise TargetStringError(f"{text!r}: env= takes NAME=VALUE, not {value!r}")
    return name, val


def shipped_descriptors() -> Path:
    return Path(__file__).resolve().parent / "descriptors"


def _descriptor_path(text: str) -> Path:
    path = Path(text).expanduser()
    if path.is_file():
        return path
    shipped = shipped_descriptors() / text
    if path.parent == Path(".") and shipped.is_file():
        return shipped
    names = sorted(p.name for p in shipped_descriptors().glob("*.toml"))
    raise TargetStringError(f"no descriptor file {text!r} (looked in {Path.cwd()}"
                            + (f" and among the shipped descriptors: {', '.join(names)})" if names else ")"))
