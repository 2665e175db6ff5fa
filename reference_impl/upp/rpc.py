"""JSON-RPC 2.0 message handling for the reference UPP server (upp/05-transport.md).

`RpcEndpoint.handle_text` takes one whole message (a request object, a notification or a batch)
as text or bytes and returns the response text, or None when JSON-RPC 2.0 says nothing is sent
(a notification, a batch of notifications). It never raises: anything unexpected becomes
`-32603` with a generic message, logged on the server, never a traceback on the wire.

The rules (https://www.jsonrpc.org/specification):

* not UTF-8, not JSON (NaN/Infinity are not JSON), or nested too deeply to read → `-32700`, id null;
* a JSON value that is not a request object → `-32600`, with the request's id when one can be read
  (a string, a finite number or null), else null. A number no float holds (`1e400` reads as
  infinity) is no JSON-RPC id: echoing it would make the response unwritable (JSON has no
  Infinity), so such a request is invalid (issue 14);
* `params` is the operation's business: the operations take params by name, so an array, null
  or a scalar reaches the operation and is refused there with `-32602` (suite/upp/catalogue.toml,
  upp/jsonrpc-invalid-request: "a missing or non-object params is not an invalid request here");
* an unknown method → `-32601` (raised by the dispatcher as an `RpcError`);
* a request without `id` is a notification: it runs, and gets no response, even when it fails;
* a batch (§6): an array of responses, one per request that has an id; an empty array → a single
  `-32600` object (not an array); a batch of notifications only → nothing.
* bounds (issue 14: one 300 KB batch of 5,000 get_labels once answered 200 MB): a batch of more
  than `max_batch` requests is refused whole, before any of it runs, with one `-32600` object;
  once the responses of a batch reach `max_answer_bytes`, the requests after are not carried out
  and each gets `-32000` (NOT_RUN) with its id, so the answer stays bounded and the client can
  tell exactly which requests ran.
"""

from __future__ import annotations

import json
import logging
import math
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
# An implementation code (upp/05 §4 lets implementations define -32000..-32099): a request of a
# batch left undone because the batch's answer reached its limit.
NOT_RUN = -32000

#: Defaults of the batch bounds (`memconform serve --upp-max-batch / --upp-max-answer`). 100
#: requests is far above what a client batches by hand; 4 MiB holds about a hundred get_labels.
DEFAULT_MAX_BATCH = 100
DEFAULT_MAX_ANSWER_BYTES = 4 << 20

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
    """A JSON-RPC id: a string, a number, or null (booleans are not numbers here). `1e400` and
    `-1e400` parse as infinities: no JSON number can carry them back, so they are no id."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


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


def request_problem(message: Any, is_id: Callable[[Any], bool] = _is_id) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request object, or None when it is one."""
    if not isinstance(message, dict):
        return "a request must be a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'a request must have "jsonrpc": "2.0"'
    if not isinstance(message.get("method"), str):
        return "a request must have a string \"method\""
    if "id" in message and not is_id(message["id"]):
        return "\"id\" must be a string, a finite number or null"
    return None


def readable_id(message: Any, is_id: Callable[[Any], bool] = _is_id) -> Any:
    """The id of a (possibly invalid) request, or None when none can be read."""
    if isinstance(message, dict) and is_id(message.get("id")):
        return message.get("id")
    return None


Dispatch = Callable[[str, Any], Any]


class RpcEndpoint:
    """JSON-RPC 2.0 over a dispatcher `dispatch(method, params) -> result` that raises `RpcError`
    (`params` is `ABSENT` when the message has none)."""

    def __init__(self, dispatch: Dispatch, *, batches: bool = True, max_batch: int = DEFAULT_MAX_BATCH,
                 max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES):
        if max_batch < 1 or max_answer_bytes < 1:
            raise ValueError("max_batch and max_answer_bytes must be at least 1")
        self._dispatch = dispatch
        # False: a batch is not a JSON object, so it is one invalid request (policy.batches)
        self.batches = batches
        self.max_batch = max_batch
        self.max_answer_bytes = max_answer_bytes

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
            return self._handle_batch(message)
        return self._handle_request(message)

    def _valid_id(self, value: Any) -> bool:
        """Whether `value` may be a request's id (the seam of upp/jsonrpc-id-type)."""
        return _is_id(value)

    def _handle_batch(self, messages: list[Any]) -> Any:
        refusal = self._batch_refusal(messages)
        if refusal is not None:
            return refusal
        responses: list[dict[str, Any]] = []
        spent = 0
        for m in messages:
            if self._answer_full(spent):
                response = self._not_run(m)
            else:
                response = self._handle_request(m, in_batch=True)
                if response is not None:
                    spent += len(dumps(response).encode("utf-8")) + 1
            if response is not None:
                responses.append(response)
        return responses or None

    def _batch_refusal(self, messages: list[Any]) -> dict[str, Any] | None:
        """One error object for a batch longer than `max_batch`, or None to run it.

        JSON-RPC 2.0 §6 answers a batch it cannot take as a whole with a single Response object
        (its empty-batch and invalid-JSON cases); refusing before anything runs leaves no partial
        effects and keeps the answer small however long the batch. -32600 rather than a server
        error (-32000..-32099): the batch as sent is what this server does not accept, and
        resending it unchanged fails again, which is what Invalid Request tells a client."""
        if len(messages) <= self.max_batch:
            return None
        return error_response(None, INVALID_REQUEST, f"Invalid Request: a batch of {len(messages)} requests; this "
                                                     f"server takes at most {self.max_batch} per batch",
                              {"max_batch": self.max_batch})

    def _answer_full(self, spent: int) -> bool:
        """Whether a batch's answer, `spent` bytes so far, leaves no room for running more."""
        return spent >= self.max_answer_bytes

    def _not_run(self, message: Any) -> dict[str, Any] | None:
        if request_problem(message, self._valid_id) is not None:
            return self._handle_request(message, in_batch=True)  # refused as invalid: nothing runs anyway
        if "id" not in message:
            return None  # a notification is never answered (§4.1), not even to say it was dropped
        return error_response(message["id"], NOT_RUN, f"Server error: not carried out, the batch's answer reached "
                                                      f"this server's limit of {self.max_answer_bytes} bytes; send "
                                                      "it again in another batch",
                              {"max_answer_bytes": self.max_answer_bytes})

    def _parse_error(self, why: str) -> dict[str, Any]:
        # JSON-RPC 2.0 §5: the id is null when it could not be read
        return error_response(None, PARSE_ERROR, f"Parse error: {why}")

    def _empty_batch(self) -> Any:
        # JSON-RPC 2.0 §6: one Invalid Request object, not an empty array
        return error_response(None, INVALID_REQUEST, "Invalid Request: an empty batch")

    def _invalid_request(self, message: Any, problem: str) -> dict[str, Any]:
        return error_response(readable_id(message, self._valid_id), INVALID_REQUEST, f"Invalid Request: {problem}")

    def _handle_request(self, message: Any, *, in_batch: bool = False) -> dict[str, Any] | None:
        problem = request_problem(message, self._valid_id)
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
