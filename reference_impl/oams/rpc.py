"""OAMS over JSON-RPC 2.0 (§3: `oams.store({ memory })`, `oams.recall({...})`, `oams.list({...})`,
`oams.forget({ namespace, key })`, `oams.batch_store({ memories })`, plus the added
`oams.consolidate({ namespace, strategy? })`). The spec names no endpoint: the lead mounts
`handle_rpc` at `POST /v1/oams/rpc`; `run_stdio` serves one message per line.

`RpcEndpoint.handle(body) -> bytes | None` never raises: not UTF-8/JSON → -32700 (id null); not a
request object → -32600; unknown method → -32601; params not an object → -32602; an operation's
refusal → its reserved code (-32001..-32005) with message and data; anything unexpected → -32603
with a generic message. Notifications run and get no answer; a batch answers an array (an empty
batch: one -32600; more than MAX_BATCH requests: one -32600, nothing run)."""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from memconform.reference_impl.oams.engine import OamsError, OamsService
from memconform.suite.oams.model import VALIDATION_FAILED

log = logging.getLogger("memconform.reference_impl.oams.rpc")

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
#: The request parameters of RECALL, LIST and BATCH_STORE (not a memory's members).
PARAMETERS = frozenset({"query", "k", "tags", "since", "until", "limit", "cursor", "memories"})
MAX_BATCH = 100
MAX_MESSAGE = 8 * 1024 * 1024
_OMIT: Any = object()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is beyond a double")
    return value


def _readable_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))


class RpcEndpoint:
    def __init__(self, service: OamsService):
        self.service = service
        self.methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "oams.store": lambda p: service.store(_need(p, "memory")),
            "oams.recall": service.recall,
            "oams.list": lambda p: service.list(p.get("namespace"), p.get("cursor"), p.get("limit"), p.get("since"),
                                                p.get("tags")),
            "oams.forget": self._forget,
            "oams.batch_store": lambda p: service.batch_store(_need(p, "memories")),
            "oams.consolidate": lambda p: service.consolidate(p.get("namespace"), p.get("strategy")),
        }
        from memconform.reference_impl.oams.policy import configure

        configure(self, getattr(service, "_fault_obj", None) or service.fault, (), part="rpc")

    def _forget(self, params: dict[str, Any]) -> Any:
        self.service.forget(params.get("namespace"), params.get("key"))
        return {"deleted": True} if self.service.policy.rpc_forget_result == "object" else None

    # -- messages -------------------------------------------------------------------------------

    def handle(self, body: bytes | str) -> bytes | None:
        try:
            if isinstance(body, str):
                body = body.encode("utf-8", "surrogatepass")
            if len(body) > MAX_MESSAGE:
                return self.render(self.error(None, INVALID_REQUEST, f"message over {MAX_MESSAGE} bytes"))
            try:
                message = json.loads(body.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
            except (ValueError, UnicodeDecodeError, RecursionError):
                return self.render(self.error(None, PARSE_ERROR, "Parse error"))
            if isinstance(message, list):
                if self.service.policy.rpc_batches == "none":
                    return self.render(self.error(None, INVALID_REQUEST, "Invalid Request: batches are not taken"))
                if not message:
                    return self.render(self.error(None, INVALID_REQUEST, "Invalid Request: empty batch"))
                if len(message) > MAX_BATCH:
                    return self.render(self.error(None, INVALID_REQUEST, f"Invalid Request: more than {MAX_BATCH} "
                                                                         "requests in one batch"))
                answers = [a for a in (self.one(m) for m in message) if a is not None]
                return self.render(answers) if answers else None
            answer = self.one(message)
            return None if answer is None else self.render(answer)
        except Exception:  # never a traceback on the wire
            log.exception("OAMS JSON-RPC: unexpected failure")
            return self.render(self.error(None, INTERNAL_ERROR, "Internal error"))

    def one(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict):
            return self.error(None, INVALID_REQUEST, "Invalid Request: not a request object")
        id_ = message.get("id", _OMIT)
        if id_ is not _OMIT and not _readable_id(id_):
            return self.error(None, INVALID_REQUEST, "Invalid Request: id must be a string, number or null")
        reply_id = None if id_ is _OMIT else id_
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return self.error(reply_id, INVALID_REQUEST, "Invalid Request: needs jsonrpc \"2.0\" and a method")
        try:
            result = self.call(message["method"], message.get("params", {}))
            answer: dict[str, Any] = {"jsonrpc": "2.0", "result": result, "id": reply_id}
        except OamsError as exc:
            answer = self.error(reply_id, self._code(exc), exc.message, exc.data)
        except _RpcError as exc:
            answer = self.error(reply_id, exc.code, exc.message)
        except Exception:
            log.exception("OAMS JSON-RPC: %s failed", message.get("method"))
            answer = self.error(reply_id, INTERNAL_ERROR, "Internal error")
        return None if id_ is _OMIT else answer

    def _code(self, exc: OamsError) -> int:
        """The code a refusal is answered with: the engine's, or JSON-RPC's -32602 for a malformed
        parameter where the policy says so."""
        code = getattr(self.service.policy, "rpc_params_code", None)
        field = (exc.data or {}).get("field") if isinstance(exc.data, dict) else None
        if code is not None and exc.code == VALIDATION_FAILED and field in PARAMETERS:
            return code
        return exc.code

    def call(self, method: str, params: Any) -> Any:
        handler = self.methods.get(method)
        if handler is None:
            raise _RpcError(METHOD_NOT_FOUND, f"Method not found: {method[:100]}")
        if not isinstance(params, dict):
            raise _RpcError(INVALID_PARAMS, "Invalid params: params must be an object (by name)")
        return handler(params)

    def error(self, id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return {"jsonrpc": "2.0", "error": error, "id": id_}

    def render(self, answer: Any) -> bytes:
        return json.dumps(answer, ensure_ascii=False).encode("utf-8")


class _RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def _need(params: dict[str, Any], name: str) -> Any:
    if name not in params:
        from memconform.reference_impl.oams.engine import invalid

        raise invalid(f"params.{name} is required", field=name)
    return params[name]


def endpoint(service: OamsService) -> RpcEndpoint:
    """The service's one endpoint (made on first use, kept on the service)."""
    ep = getattr(service, "_rpc_endpoint", None)
    if ep is None:
        ep = service._rpc_endpoint = RpcEndpoint(service)  # type: ignore[attr-defined]
    return ep


def handle_rpc(service: OamsService, body: bytes) -> bytes | None:
    """One JSON-RPC message (request, notification or batch) → the answer's bytes, or None."""
    return endpoint(service).handle(body)


def run_stdio(service: OamsService, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve JSON-RPC one message per line on stdin, answers one per line on stdout, until EOF."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    ep = endpoint(service)
    while True:
        line = stdin.readline(MAX_MESSAGE + 1)
        if not line:
            return
        if len(line) > MAX_MESSAGE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # drop the rest of an over-long line
                line = stdin.readline(64 * 1024)
            answer = ep.render(ep.error(None, INVALID_REQUEST, f"message over {MAX_MESSAGE} bytes"))
        elif not line.strip():
            continue
        else:
            answer = ep.handle(line.rstrip(b"\r\n"))
        if answer is not None:
            stdout.write(answer + b"\n")
            stdout.flush()


def main(argv: list[str] | None = None) -> None:
    """`python -m memconform.reference_impl.oams.rpc [--db FILE] [--fault NAME] [--variant NAME]…`:
    the reference OAMS over stdio (until the CLI gets `memconform serve --oams-stdio`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="oams-stdio")
    parser.add_argument("--db", default=":memory:")
    parser.add_argument("--fault")
    parser.add_argument("--variant", action="append", default=[])
    args = parser.parse_args(argv)
    service = OamsService(args.db, fault=args.fault, variants=args.variant)
    try:
        run_stdio(service)
    finally:
        service.close()


if __name__ == "__main__":
    main()
