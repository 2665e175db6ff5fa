"""JSON-RPC 2.0 message handling for the reference UPP server (upp/05-transport.md).

`RpcEndpoint.handle_text` takes one whole message (a request object, a notification or a batch)
as text or bytes and returns the response text, or None when JSON-RPC 2.0 says nothing is sent
(a notification, a batch of notifications). It never raises: anything unexpected becomes
`-32603` with a generic message, logged on the server, never a traceback on the wire.

The rules (https://www.jsonrpc.org/specification):

* not UTF-8, not JSON (NaN/Infinity are not JSON), or nested too deeply to read → `-32700`, id null;
* a JSON value that is not a request object → `-32600`, with the request's id when one can be read
  (a string, a number or null), else null;
* `params` is the operation's business: the operations take params by name, so an array, null
  or a scalar reaches the operation and is refused there with `-32602` (suite/upp/catalogue.toml,
  upp/jsonrpc-invalid-request: "a missing or non-object params is not an invalid request here");
* an unknown method → `-32601` (raised by the dispatcher as an `RpcError`);
* a request without `id` is a notification: it runs, and gets no response, even when it fails;
* a batch (§6): an array of responses, one per request that has an id; an empty array → a single
  `-32600` object (not an array); a batch of notifications only → nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("memconform.reference_impl.upp.rpc")

# JSON-RPC 2.0 codes (upp/05 §4).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# UPP codes (upp/05 §4).
USER_NOT_FOUND = -32001
ONTOLOGY_NOT_FOUND = -32002
INGEST_FAILED = -32003
EXTRACTION_FAILED = -32004

#: `params` was not in the message (as opposed to `"params": {}`).
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()


class RpcError(Exception):
    """A JSON-RPC error the operation answers: `code`, `message` and optional `data`."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    def to_object(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_id(value: Any) -> bool:
    """A JSON-RPC id: a string, a number, or null (booleans are not numbers here)."""
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def dumps(message: Any) -> str:
    """One JSON text, no raw newline (JSON escapes control characters inside strings), so it is
    one line on stdio. Unicode stays readable unless it cannot be UTF-8 (a lone surrogate echoed
    from a request id), in which case everything is \\u-escaped: still UTF-8 JSON."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def encode(text: str, fault: str | None = None) -> bytes:
    """The bytes a binding sends for a response text: UTF-8 (upp/05 §5). A binding that holds the
    service calls `service.encode`; `fault` is for one that holds only its service's fault name
    (reference_impl/ump/http_app.py): the encoder is that fault's, looked up in the table."""
    endpoint = RpcEndpoint(_nothing)
    if fault is not None:
        from memconform.reference_impl.faults import FAULTS

        part = FAULTS[fault].wraps.get("_endpoint") if fault in FAULTS else None
        endpoint = part(None, endpoint) if part is not None else endpoint
    return endpoint.encode(text)


def _nothing(method: str, params: Any) -> Any:
    return None


def error_response(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": RpcError(code, message, data).to_object(), "id": id_}


def request_problem(message: Any) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request object, or None when it is one."""
    if not isinstance(message, dict):
        return "a request must be a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'a request must have "jsonrpc": "2.0"'
    if not isinstance(message.get("method"), str):
        return "a request must have a string \"method\""
    if "id" in message and not _is_id(message["id"]):
        return "\"id\" must be a string, a number or null"
    return None


def readable_id(message: Any) -> Any:
    """The id of a (possibly invalid) request, or None when none can be read."""
    if isinstance(message, dict) and _is_id(message.get("id")):
        return message.get("id")
    return None


Dispatch = Callable[[str, Any], Any]


class RpcEndpoint:
    """JSON-RPC 2.0 over a dispatcher `dispatch(method, params) -> result` that raises `RpcError`
    (`params` is `ABSENT` when the message has none)."""

    def __init__(self, dispatch: Dispatch, *, batches: bool = True):
        self._dispatch = dispatch
        # False: a batch is not a JSON object, so it is one invalid request (policy.batches)
        self.batches = batches

    def handle_text(self, text: str | bytes | bytearray) -> str | None:
        try:
            response = self._handle(text)
            return None if response is None else self.render(response)
        except Exception:  # a bug: answer like JSON-RPC says, keep the details in the log
            log.exception("unexpected error handling a JSON-RPC message")
            return dumps(error_response(None, INTERNAL_ERROR, "Internal error"))

    def render(self, response: dict[str, Any] | list[dict[str, Any]]) -> str:
        """The text of a response object or of a batch's array of them."""
        return dumps(response)

    def encode(self, text: str) -> bytes:
        """The bytes a binding sends: UTF-8 (upp/05 §5)."""
        return text.encode("utf-8")

    def line(self, text: str) -> bytes:
        """One response on stdio: one line, as the text never holds a raw newline (`dumps`)."""
        return self.encode(text) + b"\n"

    # -- one message ----------------------------------------------------------------------------

    def _handle(self, text: str | bytes | bytearray) -> Any:
        if isinstance(text, (bytes, bytearray)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                return self._parse_error(f"the message is not UTF-8 ({exc.reason} at byte {exc.start})")
        try:
            message = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            return self._parse_error("the message is nested too deeply to read")
        except ValueError as exc:
            return self._parse_error(f"the message is not JSON: {exc}")
        if isinstance(message, list):
            if not message:
                return self._empty_batch()
            if not self.batches:
                return error_response(None, INVALID_REQUEST, "Invalid Request: a request must be a JSON object "
                                                             "(this server does not take batches)")
            responses = [r for r in (self._handle_request(m, in_batch=True) for m in message) if r is not None]
            return responses or None
        return self._handle_request(message)

    def _parse_error(self, why: str) -> dict[str, Any]:
        # JSON-RPC 2.0 §5: the id is null when it could not be read
        return error_response(None, PARSE_ERROR, f"Parse error: {why}")

    def _empty_batch(self) -> Any:
        # JSON-RPC 2.0 §6: one Invalid Request object, not an empty array
        return error_response(None, INVALID_REQUEST, "Invalid Request: an empty batch")

    def _invalid_request(self, message: Any, problem: str) -> dict[str, Any]:
        return error_response(readable_id(message), INVALID_REQUEST, f"Invalid Request: {problem}")

    def _handle_request(self, message: Any, *, in_batch: bool = False) -> dict[str, Any] | None:
        problem = request_problem(message)
        if problem is not None:
            return self._invalid_request(message, problem)
        id_ = message.get("id")
        try:
            result = self._dispatch(message["method"], message.get("params", ABSENT))
            response = {"jsonrpc": "2.0", "result": result, "id": id_}
        except RpcError as exc:
            response = {"jsonrpc": "2.0", "error": exc.to_object(), "id": id_}
        except Exception:
            log.exception("unexpected error in %r", message["method"][:100])
            response = error_response(id_, INTERNAL_ERROR, "Internal error")
        if "id" not in message:
            return self._answer_notification(response, in_batch=in_batch)
        return response

    def _answer_notification(self, response: dict[str, Any], *, in_batch: bool) -> dict[str, Any] | None:
        # JSON-RPC 2.0 §4.1: a notification is never answered, alone or in a batch, even when it fails
        return None
