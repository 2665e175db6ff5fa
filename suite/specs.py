"""The specs memconform knows, each declared once (issue 17).

A spec lives in its own folders (`suite/<spec>/`: catalogue, model, client protocol, checks;
`reference_impl/<spec>/`: its reference implementation, faults and variants; its drivers under
`targets/`) and plugs in here: one `Spec` entry naming where each of its parts is. Everything that
lists specs (the catalogues, the checks collected, the fault and variant tables, the bindings the
reference serves, the all-spec reference server) reads this table instead of naming specs itself.

Parts are named as "module" or "module:attribute" strings and imported only when used: a run
that judges one spec never imports another's reference implementation.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Spec:
    name: str
    #: the module whose import registers the spec's checks (suite/registry.py)
    checks: str
    #: "module:TABLE" tuples of reference faults and variants (reference_impl/faults.py, variants.py)
    faults: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    #: the live bindings the reference implementation serves the spec over; a fault or variant
    #: with `bindings=None` shows on each of them
    reference_bindings: tuple[str, ...] = ()
    #: "module:function" -> function(base_url, *, label, timeout) -> a `SpecPart` (below), or a str
    #: saying why the spec is not there (what its probe saw): how a plain http:// target discovers
    #: the spec beside the others, without side effects.
    #: None for the specs targets/http.py finds itself (UMP, UPP, OMF).
    http_discovery: str | None = None
    #: "module:function" -> function(*, label, fault, variants, timeout) -> a `ReferencePart`:
    #: the spec's piece of the reference target and of `memconform serve`. None for the specs the
    #: reference driver and server build themselves (UMP, UPP, OMF).
    reference: str | None = None
    #: "module:command": the spec's `memconform <name> …` click command or group, imported only
    #: when named (suite/cli.py)
    cli: str | None = None
    #: the module whose `round_trip(source, destination, *, version, source_label,
    #: destination_label)` moves the spec's records between two targets (suite/interop), and the
    #: bindings it tries on each side, in order
    interop: str | None = None
    interop_bindings: tuple[str, ...] = ()
    #: "module:function" -> function(path, *, label) -> a part, or None when the file or folder is
    #: not the spec's: how a `file:` target finds the spec (targets/file.py)
    file_discovery: str | None = None
    #: target-string prefixes of the spec's own (e.g. "oams+jsonrpc+http://") -> "module:function"
    #: -> function(text, *, label, timeout) -> a driver (subjects, client, advertised_level,
    #: describe, close): where a spec's binding lives at a place only the target can name
    targets: tuple[tuple[str, str], ...] = ()
    #: "module:FORMAT" -> a `Format` (suite/convert/formats.py): how `memconform convert` reads,
    #: validates, names and writes the spec's documents
    format: str | None = None
    #: "module:TABLE" -> {(source, destination): function(document, ctx) -> document}: the
    #: converters between the spec's format and earlier ones (a pair lives with the later spec)
    converters: tuple[str, ...] = ()
    #: "module:function" -> function(table, *, names, reader) -> a `PluggedSection`
    #: (targets/descriptor.py): the spec's `[<name>]` table of a descriptor, validated with the
    #: reader's line-precise errors (`read_bindings` does the usual shapes), and the function giving
    #: each described binding's part once the server is up. None for the specs targets/descriptor.py
    #: reads itself (UMP, UPP, OMF).
    descriptor: str | None = None

    def load(self, part: str) -> Any:
        module, _, attribute = part.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded


#: In collection order (pytest-xdist needs it identical on every worker): UPP after UMP, OMF last,
#: as the reports have always listed them.
SPECS: dict[str, Spec] = {spec.name: spec for spec in (
    Spec("ump", checks="memconform.suite.ump.checks",
         faults=("memconform.reference_impl.ump.faults:UMP_FAULTS",
                 "memconform.reference_impl.ump.binding_faults:BINDING_FAULTS"),
         variants=("memconform.reference_impl.ump.variants:UMP_VARIANTS",),
         reference_bindings=("http", "mcp"),
         interop="memconform.suite.interop.ump", interop_bindings=("http", "mcp"),
         format="memconform.suite.convert.umpside:FORMAT"),
    Spec("upp", checks="memconform.suite.upp.checks",
         faults=("memconform.reference_impl.upp.faults:UPP_FAULTS",),
         variants=("memconform.reference_impl.upp.variants:UPP_VARIANTS",),
         reference_bindings=("http", "stdio"),
         interop="memconform.suite.interop.upp", interop_bindings=("http", "stdio"),
         format="memconform.suite.convert.uppside:FORMAT",
         converters=("memconform.suite.convert.ump_upp:CONVERTERS",)),
    Spec("omf", checks="memconform.suite.omf.checks",
         faults=("memconform.reference_impl.omf.faults:OMF_FAULTS",),
         variants=("memconform.reference_impl.omf.variants:OMF_VARIANTS",),
         reference_bindings=("cli", "http"),
         interop="memconform.suite.interop.omf", interop_bindings=("http", "cli"),
         format="memconform.suite.convert.omfside:FORMAT",
         converters=("memconform.suite.convert.ump_omf:CONVERTERS", "memconform.suite.convert.omf_upp:CONVERTERS")),
    Spec("oams", checks="memconform.suite.oams.checks",
         faults=("memconform.reference_impl.oams.faults:OAMS_FAULTS",),
         variants=("memconform.reference_impl.oams.variants:OAMS_VARIANTS",),
         reference_bindings=("http", "jsonrpc", "stdio"),
         http_discovery="memconform.targets.oams:discover_http",
         reference="memconform.targets.oams:reference_part",
         cli="memconform.suite.oams.cli:oams",
         interop="memconform.suite.oams.interop", interop_bindings=("http", "jsonrpc", "stdio"),
         file_discovery="memconform.targets.oams:discover_file",
         format="memconform.suite.oams.convert.side:FORMAT",
         converters=("memconform.suite.oams.convert.ump_oams:CONVERTERS",
                     "memconform.suite.oams.convert.omf_oams:CONVERTERS",
                     "memconform.suite.oams.convert.upp_oams:CONVERTERS"),
         descriptor="memconform.targets.oams:descriptor_section",
         targets=(("oams+jsonrpc+http://", "memconform.targets.oams:open_rpc_target"),
                  ("oams+jsonrpc+https://", "memconform.targets.oams:open_rpc_target"),
                  ("oams+jsonrpc+stdio:", "memconform.targets.oams:open_rpc_target"))),
    Spec("memoturn", checks="memconform.suite.memoturn.checks",
         faults=("memconform.reference_impl.memoturn.faults:MEMOTURN_FAULTS",),
         variants=("memconform.reference_impl.memoturn.variants:MEMOTURN_VARIANTS",),
         reference_bindings=("http", "mcp"),
         http_discovery="memconform.targets.memoturn:discover_http",
         reference="memconform.targets.memoturn:reference_part",
         cli="memconform.suite.memoturn.cli:memoturn",
         format="memconform.suite.memoturn.convert.side:FORMAT",
         converters=("memconform.suite.memoturn.convert.ump_memoturn:CONVERTERS",
                     "memconform.suite.memoturn.convert.omf_memoturn:CONVERTERS",
                     "memconform.suite.memoturn.convert.upp_memoturn:CONVERTERS",
                     "memconform.suite.memoturn.convert.oams_memoturn:CONVERTERS"),
         interop="memconform.suite.memoturn.interop", interop_bindings=("http", "mcp"),
         descriptor="memconform.targets.memoturn:descriptor_section",
         targets=(("memoturn+mcp+stdio:", "memconform.targets.memoturn:open_mcp_target"),
                  ("memoturn+mcp+http://", "memconform.targets.memoturn:open_mcp_target"),
                  ("memoturn+mcp+https://", "memconform.targets.memoturn:open_mcp_target"))),
)}

NAMES: tuple[str, ...] = tuple(SPECS)


class SpecPart:
    """What a spec found on a target gives the driver holding it (duck-typed; documented here)."""

    def subjects(self) -> list[Any]:  # targets.base.Subject values, labelled by the driver
        raise NotImplementedError

    def client(self, subject: Any) -> Any:
        raise NotImplementedError

    def advertised_level(self, subject: Any) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


class ReferencePart(SpecPart):
    """A spec's piece of the reference: `routes()` are mounted on the all-spec server before it
    starts, `attach(base_url)` tells where it listens, `announce(base_url)` is its line in
    `memconform serve`'s banner."""

    _base: str | None = None
    _server: Any = None

    def routes(self) -> list[Any]:
        return []

    def attach(self, base_url: str) -> None:
        self._base = base_url.rstrip("/")

    def base_url(self) -> str:
        """Where the routes answer: the all-spec server's that attached them, or (a part judged on
        its own) a server of their own started in a thread, stopped by `stop_server`."""
        if self._base is None:
            from starlette.applications import Starlette

            from memconform.reference_impl.serve import start_in_thread

            self._server = start_in_thread(None, app=Starlette(routes=self.routes()))
            self._base = self._server.base_url.rstrip("/")
        return self._base

    def stop_server(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def announce(self, base_url: str) -> str:
        return ""


def plugged(kind: str) -> list[tuple[Spec, Any]]:
    """(spec, factory) for every spec declaring `kind` ("http_discovery" or "reference")."""
    return [(spec, spec.load(getattr(spec, kind))) for spec in SPECS.values() if getattr(spec, kind)]


def get(name: str) -> Spec:
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"unknown spec {name!r} (known: {', '.join(NAMES)})") from None
