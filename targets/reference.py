"""`--target=reference[?fault=NAME]`: the in-process reference implementation."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from memconform.reference_impl.faults import FAULTS
from memconform.reference_impl.ump.engine import UmpEngine, UmpError
from memconform.suite.outcomes import TargetError
from memconform.suite.specs import SPECS
from memconform.suite.ump import files
from memconform.suite.ump.client import FileFormat, ParseOutcome
from memconform.suite.ump.corpus import export_corpus
from memconform.targets import in_process
from memconform.targets.base import Subject
from memconform.targets.target_string import ReferenceTarget



class ReferenceUmpFileClient:
    """The reference implementation's file binding: seeded with the export corpus, then exported
    as .ump.json, NDJSON and a folder of .ump.md into a private temporary folder."""

    def __init__(self, version: str, fault: str | None, variants: tuple[str, ...] = ()):
        self.version = version
        self.fault = fault if fault is not None and FAULTS[fault].applies_to("ump", version) else None
        self.variants = variants
        self._seeded = export_corpus(version)
        self._tmp = tempfile.TemporaryDirectory(prefix="memconform-ref-")
        engine = self._engine()
        try:
            engine.import_records(self._seeded)
        except UmpError as exc:
            raise TargetError(f"the reference implementation refused the export corpus: {exc}") from exc
        root = Path(self._tmp.name)
        (root / "export.ump.json").write_text(engine.export_json(), encoding="utf-8")
        (root / "export.ump.ndjson").write_text(engine.export_ndjson(), encoding="utf-8")
        md_dir = root / "md"
        md_dir.mkdir()
        for name, text in engine.export_md().items():
            (md_dir / name).write_text(text, encoding="utf-8")
        self._exported = files.load(root)

    def _engine(self) -> UmpEngine:
        return UmpEngine(version=self.version, fault=self.fault, variants=self.variants)

    def exported(self) -> files.Loaded:
        return self._exported

    def seeded(self) -> tuple[dict[str, Any], ...]:
        return self._seeded

    def parse(self, text: str, fmt: FileFormat) -> ParseOutcome:
        engine = self._engine()  # a fresh store per document: cases never see each other
        try:
            ids = engine.import_text(text, fmt)
        except UmpError as exc:
            return ParseOutcome(sent=text, error=exc.code, message=exc.message, stored_after=engine.ids())
        stored = {r["id"]: r for r in engine.records()}
        return ParseOutcome(sent=text, accepted=tuple(stored[i] for i in ids), stored_after=engine.ids())

    def close(self) -> None:
        self._tmp.cleanup()


LIVE_BINDINGS = ("http", "mcp")  # UMP's live bindings
UPP_BINDINGS = ("http", "stdio")
UPP_VERSION = "1.0.0"
OMF_BINDINGS = ("cli", "http")
OMF_VERSION = "1.0"
#: The reference CLI is a fresh interpreter per command (imports included): give it room on a busy machine.
OMF_CLI_TIMEOUT = 60.0
#: The live bindings the reference serves each spec over (suite/specs.py)
_LIVE_BY_SPEC = {name: spec.reference_bindings for name, spec in SPECS.items()}


def _fault_shows_on(fault: str | None, binding: str, spec: str = "ump") -> str | None:
    """The fault to give the piece serving `spec` over `binding`, or None. A fault goes only to
    its own spec's engine; within it, a file-format fault never reaches the live server and a
    server fault never reaches the file exporter. `bindings=None` means every live binding of
    the spec: http and mcp for UMP, http and stdio for UPP, cli and http for OMF."""
    if fault is None:
        return None
    f = FAULTS[fault]
    if f.spec != spec:
        return None
    bindings = f.bindings if f.bindings is not None else _LIVE_BY_SPEC[spec]
    return fault if binding in bindings else None


def _variant_args(variants: tuple[str, ...]) -> list[str]:
    return [arg for v in variants for arg in ("--variant", v)]


def upp_stdio_command(fault: str | None, variants: tuple[str, ...] = (), export_dir: Path | None = None) -> list[str]:
    """The reference UPP server over stdio, as a child of this interpreter."""
    return [sys.executable, "-m", "memconform.suite.cli", "serve", "--upp-stdio",
            *(["--upp-export-dir", str(export_dir)] if export_dir is not None else []),
            *(["--fault", fault] if fault else []), *_variant_args(variants)]


def omf_cli(fault: str | None, variants: tuple[str, ...] = ()) -> Any:
    """The reference OMF CLI's command templates: the shipped targets/descriptors/reference.toml
    (child processes of this interpreter, `--db` in the work folder), plus `--fault NAME`."""
    import shlex

    from memconform.targets.descriptor import SHIPPED, Template, load_descriptor

    descriptor = load_descriptor(SHIPPED / "reference.toml")
    cli = descriptor.cli
    if fault or variants:
        extra = "".join(" " + shlex.quote(a) for a in [*(["--fault", fault] if fault else []), *_variant_args(variants)])
        cli = dataclasses.replace(cli, export=Template.parse(cli.export.text + extra, cli.export.where),
                                  import_=Template.parse(cli.import_.text + extra, cli.import_.where))
    return descriptor, cli


def memconform_in_process(argv: list[str], *, stdin: bytes | None, timeout: float, cwd: Any,
                          what: str) -> subprocess.CompletedProcess[bytes]:
    """The reference's own `memconform omf …` commands, run in this interpreter: the same argv,
    stdout, stderr and exit code as the child the descriptor describes, without the interpreter
    start that cost more than the command (issue 15). The shipped descriptor
    (targets/descriptors/reference.toml) and the project tests still run them as children, so the
    process boundary stays proven. Any other command runs as a child."""
    from memconform.targets.cli import run_command

    if argv[:3] != [sys.executable, "-m", "memconform.suite.cli"]:
        return run_command(argv, stdin=stdin, timeout=timeout, cwd=cwd, what=what)
    from click.testing import CliRunner

    from memconform.suite.cli import cli

    result = CliRunner().invoke(cli, argv[3:], input=stdin, prog_name="memconform")
    stderr = result.stderr_bytes
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        shown = "".join(traceback.format_exception(result.exception)).encode()
        stderr, code = stderr + shown, 1  # what the interpreter would have printed and exited with
    else:
        code = result.exit_code
    return subprocess.CompletedProcess(argv, code, result.stdout_bytes, stderr)


class ReferenceDriver:
    """The reference implementation in-process: its file binding directly, its HTTP and MCP
    (streamable HTTP) bindings through a real server on 127.0.0.1, started on first use; UPP over
    HTTP at that server's `/upp`, and over stdio through a child `memconform serve --upp-stdio`."""

    def __init__(self, target: ReferenceTarget, timeout: float = 10.0, mcp_protocol: str = "2025-11-25"):
        self.target = target
        self.label = target.label
        self.timeout = timeout
        self.mcp_protocol = mcp_protocol
        self._clients: dict[tuple[str, str, str], Any] = {}
        self._server = None
        self._ump_service: Any = None
        self._upp_service: Any = None
        self._upp_missing: str | None = None  # why the in-thread server has no /upp
        self._omf_engine: Any = None
        self._omf_missing: str | None = None  # why the in-thread server has no /omf
        self._live: dict[str, Any] = {}
        self._parts: dict[str, Any] | None = None  # the specs that plug in their own piece (suite/specs.py)
        # UPP's exports go to a folder of this run's, removed on close: the server's default folder
        # is kept across runs (it is the user's), and a run of the suite writes thousands of files
        self._upp_exports: tempfile.TemporaryDirectory[str] | None = None

    def subjects(self) -> list[Subject]:
        # UPP stays last: its subjects were listed last before OMF came, and callers rely on it
        from memconform.reference_impl import variants as switches
        from memconform.reference_impl.ump.policy import UmpPolicy

        # the live server speaks what its policy says (variant runtime-1.0-only: 1.0 alone); the
        # file binding reads and writes both versions whatever the server speaks
        spoken = switches.apply(UmpPolicy(), "ump", self.target.variants).runtime_versions
        return [Subject(self.label, "ump", v, b) for b in ("file", *LIVE_BINDINGS) for v in ("0.1", "1.0")
                if b == "file" or v in spoken] \
            + [Subject(self.label, "omf", OMF_VERSION, b) for b in OMF_BINDINGS] \
            + [s for part in self._plugged().values() for s in part.subjects()] \
            + [Subject(self.label, "upp", UPP_VERSION, b) for b in UPP_BINDINGS]

    def _plugged(self) -> dict[str, Any]:
        """The pieces of the specs that declare a `reference` (suite/specs.py), made on first use;
        each gets the target's fault only when it is a fault of its own spec."""
        if self._parts is None:
            from memconform.suite.specs import plugged

            self._parts = {}
            for spec, make in plugged("reference"):
                fault = self.target.fault if self.target.fault and FAULTS[self.target.fault].spec == spec.name else None
                self._parts[spec.name] = make(label=self.label, fault=fault, variants=self.target.variants,
                                              timeout=self.timeout)
        return self._parts

    def advertised_level(self, subject: Subject) -> str | None:
        if subject.spec in self._plugged():
            return self._plugged()[subject.spec].advertised_level(subject)
        if subject.binding == "file" or subject.spec == "omf":
            return None  # no capabilities document to advertise a level in (OMF has no levels)
        inner = self._live_driver(subject.spec, subject.binding)
        return inner.advertised_level(self._inner_subject(inner, subject))

    def _new_upp_service(self) -> Any:
        """The UPP engine behind the in-thread server's /upp; None (and the reason kept) when it
        cannot be made: UMP must still be judged then."""
        try:
            from memconform.reference_impl.upp.service import UppService

            return UppService(fault=_fault_shows_on(self.target.fault, "http", "upp"), variants=self.target.variants,
                              export_dir=self._upp_export_dir())
        except Exception as exc:  # noqa: BLE001 - reported to the UPP subjects, not raised
            self._upp_missing = f"{type(exc).__name__}: {exc}"
            return None

    def _upp_export_dir(self) -> Path:
        """One folder for both UPP bindings, as one server's default folder was: a package
        exported over one is importable over the other."""
        if self._upp_exports is None:
            self._upp_exports = tempfile.TemporaryDirectory(prefix="memconform-ref-upp-")
        return Path(self._upp_exports.name)

    def _new_omf_engine(self) -> Any:
        """The OMF engine behind the in-thread server's /omf (in memory); None, with the reason
        kept, when it cannot be made: UMP and UPP must still be judged then."""
        try:
            from memconform.reference_impl.omf import make_engine

            return make_engine(None, fault=_fault_shows_on(self.target.fault, "http", "omf"),
                               variants=self.target.variants)
        except Exception as exc:  # noqa: BLE001 - reported to the OMF subjects, not raised
            self._omf_missing = f"{type(exc).__name__}: {exc}"
            return None

    def _start(self) -> None:
        if self._server is not None:
            return
        from memconform.reference_impl.serve import start_in_thread
        from memconform.reference_impl.ump.service import UmpService

        fault = _fault_shows_on(self.target.fault, "http") or _fault_shows_on(self.target.fault, "mcp")
        upp = self._new_upp_service()
        if upp is not None and "upp" not in inspect.signature(start_in_thread).parameters:
            self._upp_missing = "this reference server cannot serve /upp (start_in_thread takes no `upp`)"
            upp.close()
            upp = None
        omf = self._new_omf_engine()
        if omf is not None and "omf" not in inspect.signature(start_in_thread).parameters:
            self._omf_missing = "this reference server cannot serve /omf (start_in_thread takes no `omf`)"
            omf.close()
            omf = None
        extra = {k: v for k, v in (("upp", upp), ("omf", omf)) if v is not None}
        parts = self._plugged()
        try:
            service = UmpService(fault=fault, variants=self.target.variants)
            self._server = start_in_thread(service, routes=[r for p in parts.values() for r in p.routes()], **extra)
            loop = getattr(self._server, "loop", None)  # a server without one is reached over TCP
            if loop is not None:
                # the judge's HTTP clients reach the app in process (targets/in_process.py)
                in_process.route(self._server.base_url, self._server.app, loop)
            self._ump_service = service
            for part in parts.values():
                part.attach(self._server.base_url)
        except Exception as exc:  # noqa: BLE001 - any failure to start is the target's error
            for service in extra.values():
                service.close()
            raise TargetError(f"the reference server did not start: {exc}") from exc
        self._upp_service = upp
        self._omf_engine = omf

    def _live_driver(self, spec: str, binding: str) -> Any:
        key = (spec, binding)
        if key not in self._live:
            if spec == "upp" and binding == "stdio":
                from memconform.targets.jsonrpc import JsonRpcDriver

                command = upp_stdio_command(_fault_shows_on(self.target.fault, "stdio", "upp"), self.target.variants,
                                            self._upp_export_dir())
                self._live[key] = JsonRpcDriver("stdio", command, label=self.label, timeout=self.timeout)
                return self._live[key]
            self._start()
            if spec == "upp":
                if self._upp_service is None:
                    raise TargetError(f"the reference server offers no UPP over HTTP: {self._upp_missing}")
                from memconform.targets.jsonrpc import JsonRpcDriver

                self._live[key] = JsonRpcDriver("http", self._server.base_url + "/upp", label=self.label,
                                                timeout=self.timeout)
            elif binding == "http":
                from memconform.targets.http import HttpDriver

                self._live[key] = HttpDriver(self._server.base_url, timeout=self.timeout)
                self._live[key].owners = self._owners()
            else:
                from memconform.reference_impl.ump.mcp_app import build_mcp_server
                from memconform.targets.mcp import McpDriver

                # the served app's own MCP server object over the SDK's in-memory streams: the
                # same tools, faults and session machinery without the HTTP round trip (serve's
                # /mcp is judged as a plain http:// target)
                server = build_mcp_server(self._ump_service)
                self._live[key] = McpDriver(f"mcp+memory:{self.label}", timeout=self.timeout,
                                            protocol=self.mcp_protocol, server=server)
                self._live[key].owners = self._owners()
        return self._live[key]

    def _owners(self) -> Any:
        """The test keys, and the token time format the variants make the server read: the
        reference says which, as a vendor's descriptor does (docs/vendor-keys.md)."""
        from memconform.reference_impl.ump.policy import UmpPolicy
        from memconform.reference_impl.variants import apply
        from memconform.suite.ump.owners import Owners

        times = apply(UmpPolicy(), "ump", self.target.variants).token_times
        return Owners(times="iso" if times == "either" else times)  # a server reading both: the default

    @staticmethod
    def _inner_subject(inner: Any, subject: Subject) -> Subject:
        return Subject(inner.label, subject.spec, subject.version, subject.binding)

    def client(self, subject: Subject) -> Any:
        if subject.spec in self._plugged():
            self._start()  # a plugged spec's routes are on the one server; cheap once it runs
            return self._plugged()[subject.spec].client(subject)
        key = (subject.spec, subject.version, subject.binding)
        if key not in self._clients:
            if subject.spec == "omf":
                self._clients[key] = self._omf_client(subject.binding)
            elif subject.binding == "file":
                self._clients[key] = ReferenceUmpFileClient(subject.version,
                                                            _fault_shows_on(self.target.fault, "file"),
                                                            self.target.variants)
            elif subject.spec == "upp":
                # not cached here: the JSON-RPC driver hands out a fresh child should the last one die
                inner = self._live_driver(subject.spec, subject.binding)
                return inner.client(self._inner_subject(inner, subject))
            else:
                inner = self._live_driver(subject.spec, subject.binding)
                self._clients[key] = inner.client(self._inner_subject(inner, subject))
        return self._clients[key]

    def _omf_client(self, binding: str) -> Any:
        if binding == "cli":
            from memconform.targets.cli import OmfCliTarget

            descriptor, cli = omf_cli(_fault_shows_on(self.target.fault, "cli", "omf"), self.target.variants)
            target = OmfCliTarget(cli, timeout=max(self.timeout, OMF_CLI_TIMEOUT), runner=memconform_in_process)
            target.values.update(descriptor.var_values(target.workdir))
            return target
        self._start()
        if self._omf_engine is None:
            raise TargetError(f"the reference server offers no OMF over HTTP: {self._omf_missing}")
        from memconform.targets.omf_http import OmfHttpTarget

        return OmfHttpTarget(self._server.base_url, timeout=self.timeout)

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "kind": "reference", "fault": self.target.fault,
                **({"variants": list(self.target.variants)} if self.target.variants else {}), "advertised": {}}

    def close(self) -> None:
        for key, c in self._clients.items():
            if key[2] == "file" or key[0] == "omf":
                c.close()
        self._clients.clear()
        for inner in self._live.values():
            inner.close()
        self._live.clear()
        for part in (self._parts or {}).values():
            part.close()
        self._parts = None
        if self._server is not None:
            in_process.unroute(self._server.base_url)
            self._server.stop()
            self._server = None
        if self._upp_service is not None:
            self._upp_service.close()
            self._upp_service = None
        if self._omf_engine is not None:
            self._omf_engine.close()
            self._omf_engine = None
        if self._upp_exports is not None:  # after the servers writing into it have stopped
            self._upp_exports.cleanup()
            self._upp_exports = None
