"""The JSON-RPC 2.0 wire judge (docs/live-upp.md, "Wire rules").

Pure functions over one exchange: what was sent (a parsed message or its raw text) and what came
back (raw bytes or text). They return `WireProblem`s, each filed under one of the fixed
requirement ids of the contract, and never raise for anything a server sends.

Two kinds of rules:
* judged on every exchange the drivers make (`judge_exchange`, `read_message`, `read_line`):
  `upp/jsonrpc-version`, `-id-echo`, `-result-xor-error`, `-error-object`, `-utf8-json`,
  `upp/http-content-type`, `upp/stdio-line-framing`, and `-notification-no-reply` when an answer
  arrives for a notification;
* provoked by the wire checks with a deliberately odd message (`expect_error`,
  `expect_parse_error`, `expect_invalid_request`, `expect_method_not_found`, `expect_no_reply`,
  `expect_batch_empty`, `expect_batch`).

JSON has a single number type, so ids `1` and `1.0` are the same value; `"1"` is not `1`, and
`true` is never a number.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memconform.suite.jsonvalue import json_type

VERSION = "upp/jsonrpc-version"
ID_ECHO = "upp/jsonrpc-id-echo"
RESULT_XOR_ERROR = "upp/jsonrpc-result-xor-error"
ERROR_OBJECT = "upp/jsonrpc-error-object"
PARSE_ERROR = "upp/jsonrpc-parse-error"
INVALID_REQUEST = "upp/jsonrpc-invalid-request"
METHOD_NOT_FOUND = "upp/jsonrpc-method-not-found"
NOTIFICATION_NO_REPLY = "upp/jsonrpc-notification-no-reply"
BATCH_EMPTY = "upp/jsonrpc-batch-empty"
BATCH = "upp/jsonrpc-batch"
BATCH_NOTIFICATIONS = "upp/jsonrpc-batch-notifications"
UTF8_JSON = "upp/jsonrpc-utf8-json"
HTTP_CONTENT_TYPE = "upp/http-content-type"
STDIO_LINE_FRAMING = "upp/stdio-line-framing"

#: Every wire requirement id of the contract's table.
REQUIREMENTS = (VERSION, ID_ECHO, RESULT_XOR_ERROR, ERROR_OBJECT, PARSE_ERROR, INVALID_REQUEST,
                METHOD_NOT_FOUND, NOTIFICATION_NO_REPLY, BATCH_EMPTY, BATCH, BATCH_NOTIFICATIONS, UTF8_JSON,
                HTTP_CONTENT_TYPE, STDIO_LINE_FRAMING)

PARSE_ERROR_CODE = -32700
INVALID_REQUEST_CODE = -32600
METHOD_NOT_FOUND_CODE = -32601
INVALID_PARAMS_CODE = -32602
INTERNAL_ERROR_CODE = -32603

#: The requirement an error code answers when a wire check provokes it.
REQUIREMENT_FOR_CODE = {PARSE_ERROR_CODE: PARSE_ERROR, INVALID_REQUEST_CODE: INVALID_REQUEST,
                        METHOD_NOT_FOUND_CODE: METHOD_NOT_FOUND}

_EXCERPT = 200


@dataclass(frozen=True)
class WireProblem:
    """One JSON-RPC 2.0 violation seen on the wire: the requirement id and a sentence saying what
    was seen. `str()` gives `requirement: message`."""

    requirement: str
    message: str

    def __str__(self) -> str:
        return f"{self.requirement}: {self.message}"


class _NotJson:
    """The value of a message that is not JSON (distinct from a JSON `null`)."""

    def __repr__(self) -> str:
        return "NOT_JSON"

    def __bool__(self) -> bool:
        return False


NOT_JSON: Any = _NotJson()
#: "Any id is fine" for `expect_error`.
ANY_ID: Any = type("AnyId", (), {"__repr__": lambda self: "ANY_ID"})()


def excerpt(value: Any, limit: int = _EXCERPT) -> str:
    """A bounded rendering of a value or text for messages."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return repr(text if len(text) <= limit else text[:limit] + "…")




def same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids compare by JSON type and value (1 == 1.0, "1" != 1, true is not 1)."""
    ka, kb = json_type(a), json_type(b)
    return ka == kb and a == b


def _is_id(value: Any) -> bool:
    return json_type(value) in ("string", "number", "null")


# -- reading messages ----------------------------------------------------------------------

@dataclass(frozen=True)
class Message:
    """One message as received: its text (undecodable bytes replaced), its JSON value (NOT_JSON
    when it is not JSON) and the problems of reading it."""

    text: str
    value: Any
    problems: tuple[WireProblem, ...] = ()

    @property
    def is_json(self) -> bool:
        return self.value is not NOT_JSON


def _decode(raw: bytes | str, what: str) -> tuple[str, list[WireProblem]]:
    problems: list[WireProblem] = []
    if isinstance(raw, str):
        text = raw
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", "replace")
            problems.append(WireProblem(UTF8_JSON, f"{what} is not UTF-8 (byte {exc.start}: "
                                                   f"{raw[exc.start:exc.start + 4]!r}): {excerpt(text)}"))
    if text.startswith("\ufeff"):
        # RFC 8259 §8.1: no byte order mark in JSON texts that are sent; read past it anyway
        problems.append(WireProblem(UTF8_JSON, f"{what} starts with a byte order mark (U+FEFF)"))
        text = text[1:]
    return text, problems


#: Words in the problem of a message holding NaN or Infinity (checks look for it: `non_finite`).
NON_FINITE = "which JSON has no number for"


def non_finite(problems: Iterable[WireProblem]) -> list[str]:
    """The problems saying a message held NaN or Infinity (not JSON, RFC 8259 §6)."""
    return [p.message for p in problems if NON_FINITE in p.message]


def _loads(text: str, what: str, problems: list[WireProblem]) -> Any:
    """json.loads, but NaN, Infinity and -Infinity (which Python's reader takes, and JSON has not:
    RFC 8259 §6 "Numeric values that cannot be represented … such as Infinity and NaN are not
    permitted") are each a problem of the message: read as the float they name, so the message is
    still judged for what it says (round 16: an id 1e400 echoed as Infinity passed)."""
    seen: list[str] = []

    def constant(name: str) -> float:
        seen.append(name)
        return float(name)

    value = json.loads(text, parse_constant=constant)
    if seen:
        problems.append(WireProblem(UTF8_JSON, f"{what} is not JSON: it holds {', '.join(sorted(set(seen)))}, "
                                               f"{NON_FINITE} (RFC 8259 §6): {excerpt(text)}"))
    return value


def read_message(raw: bytes | str, what: str = "the answer") -> Message:
    """Read one whole message (an HTTP body): UTF-8, then one JSON text."""
    text, problems = _decode(raw, what)
    try:
        value = _loads(text, what, problems)
    except ValueError as exc:
        value = NOT_JSON
        if not problems:  # undecodable bytes already explain why it is not JSON
            problems.append(WireProblem(UTF8_JSON, f"{what} is not JSON ({exc}): {excerpt(text)}"))
    except RecursionError:
        value = NOT_JSON
        problems.append(WireProblem(UTF8_JSON, f"{what} nests too deeply to read: {excerpt(text)}"))
    return Message(text, value, tuple(problems))


def read_line(raw: bytes | str) -> list[Message]:
    """Read one stdio line (without its newline). Usually one message; several JSON texts on one
    line come back as one message each, with a framing problem on the first; a blank line is no
    message at all. A line that is not JSON is one message with value NOT_JSON (it may be a piece
    of a message spread over several lines: see `join_lines`)."""
    if isinstance(raw, bytes):
        raw = raw.rstrip(b"\r")
    else:
        raw = raw.rstrip("\r")
    text, problems = _decode(raw, "a line on stdout")
    if not text.strip():
        return []
    try:
        return [Message(text, _loads(text, "a line on stdout", problems), tuple(problems))]
    except (ValueError, RecursionError):
        pass
    values = _several(text)
    if values is not None:
        framing = WireProblem(STDIO_LINE_FRAMING, f"{len(values)} JSON texts on one line, not one "
                                                  f"message per line: {excerpt(text)}")
        return [Message(json.dumps(v, ensure_ascii=False), v, tuple(problems) + (framing,) if i == 0 else ())
                for i, v in enumerate(values)]
    return [Message(text, NOT_JSON, tuple(problems))]


def _several(text: str) -> list[Any] | None:
    """The JSON texts of a line holding more than one (separated by whitespace or not), or None."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos, end = 0, len(text)
    try:
        while True:
            while pos < end and text[pos] in " \t\r\n":
                pos += 1
            if pos == end:
                break
            value, pos = decoder.raw_decode(text, pos)
            values.append(value)
    except (ValueError, RecursionError):
        return None
    return values if len(values) > 1 else None


def join_lines(lines: list[str]) -> Any:
    """A message pretty-printed over several lines, read back as one JSON value (NOT_JSON when
    they do not make one): the driver keeps the value and reports the broken framing."""
    try:
        return json.loads("\n".join(lines))
    except (ValueError, RecursionError):
        return NOT_JSON


def framing_problem(lines: list[str]) -> WireProblem:
    return WireProblem(STDIO_LINE_FRAMING, f"one message spread over {len(lines)} lines (a raw newline "
                                           f"inside it): {excerpt(chr(10).join(lines))}")


def stray_problem(message: Message, why: str) -> WireProblem:
    """A line on stdout that answers nothing the driver sent. Not JSON: a utf8-json problem (every
    message the server sends is JSON); JSON: filed under id-echo (it correlates with no request)."""
    if not message.is_json:
        return WireProblem(UTF8_JSON, f"a line on stdout that is not JSON ({why}): {excerpt(message.text)}")
    value = message.value
    carried = f" with \"id\": {json.dumps(value['id'])}" if isinstance(value, dict) and "id" in value else ""
    return WireProblem(ID_ECHO, f"a message{carried} on stdout that answers no request in flight ({why}): "
                                f"{excerpt(message.text)}")


# -- what was sent ------------------------------------------------------------------------

def parse_sent(sent: Any) -> Any:
    """What was sent, as a JSON value; raw text that is not JSON stays NOT_JSON."""
    if isinstance(sent, (bytes, bytearray)):
        try:
            sent = bytes(sent).decode("utf-8")
        except UnicodeDecodeError:
            return NOT_JSON
    if isinstance(sent, str):
        try:
            return json.loads(sent)
        except (ValueError, RecursionError):
            return NOT_JSON
    return sent


def is_request(obj: Any) -> bool:
    """A well-formed Request object (a call or a notification)."""
    return (isinstance(obj, dict) and obj.get("jsonrpc") == "2.0" and isinstance(obj.get("method"), str)
            and ("params" not in obj or isinstance(obj["params"], (dict, list)))
            and ("id" not in obj or _is_id(obj["id"])))


def is_notification(obj: Any) -> bool:
    return is_request(obj) and "id" not in obj


def readable_id(obj: Any) -> tuple[bool, Any]:
    """(True, id) when an id of a valid type can be read from a message, else (False, None)."""
    if isinstance(obj, dict) and "id" in obj and _is_id(obj["id"]):
        return True, obj["id"]
    return False, None


def expects_reply(sent: Any) -> bool:
    """Whether JSON-RPC 2.0 asks the server to answer this message: everything does except a
    notification and a batch made only of notifications."""
    value = parse_sent(sent)
    if isinstance(value, list):
        return not value or any(not is_notification(v) for v in value)
    return not is_notification(value)


# -- judging answers ----------------------------------------------------------------------

def judge_response(response: Any, sent: Any = NOT_JSON, *, where: str = "the response") -> list[WireProblem]:
    """The rules every response object obeys, and its id against the request `sent` (a parsed
    request object; for anything else the id is not judged here: provoked errors with `id: null`
    are the business of `expect_error`)."""
    if not isinstance(response, dict):
        return [WireProblem(VERSION, f"{where} is a JSON {json_type(response)}, not a response object with "
                                     f"\"jsonrpc\": \"2.0\": {excerpt(response)}"),
                WireProblem(RESULT_XOR_ERROR, f"{where} is a JSON {json_type(response)}, not a response object "
                                              f"with `result` or `error`: {excerpt(response)}")]
    problems: list[WireProblem] = []
    if "jsonrpc" not in response:
        problems.append(WireProblem(VERSION, f"{where} has no `jsonrpc` member: {excerpt(response)}"))
    elif response["jsonrpc"] != "2.0" or not isinstance(response["jsonrpc"], str):
        problems.append(WireProblem(VERSION, f"{where} has \"jsonrpc\": {json.dumps(response['jsonrpc'])}, "
                                             "not \"2.0\""))
    has_result, has_error = "result" in response, "error" in response
    if has_result and has_error:
        problems.append(WireProblem(RESULT_XOR_ERROR, f"{where} has both `result` and `error`: {excerpt(response)}"))
    elif not has_result and not has_error:
        problems.append(WireProblem(RESULT_XOR_ERROR, f"{where} has neither `result` nor `error`: "
                                                      f"{excerpt(response)}"))
    if has_error:
        problems.extend(judge_error_object(response["error"], where=where))
    problems.extend(_judge_id(response, sent, where))
    return problems


def judge_error_object(error: Any, *, where: str = "the response") -> list[WireProblem]:
    if not isinstance(error, dict):
        return [WireProblem(ERROR_OBJECT, f"{where}'s `error` is a JSON {json_type(error)}, not an object with "
                                          f"`code` and `message`: {excerpt(error)}")]
    wrong = []
    code = error.get("code")
    if "code" not in error:
        wrong.append("no `code`")
    elif json_type(code) != "number" or not float(code).is_integer():
        wrong.append(f"`code` {json.dumps(code)} is not an integer")
    if "message" not in error:
        wrong.append("no `message`")
    elif not isinstance(error["message"], str):
        wrong.append(f"`message` is a JSON {json_type(error['message'])}, not a string")
    if not wrong:
        return []
    return [WireProblem(ERROR_OBJECT, f"{where}'s `error` has {' and '.join(wrong)}: {excerpt(error)}")]


def _judge_id(response: dict[str, Any], sent: Any, where: str) -> list[WireProblem]:
    if "id" not in response:
        return [WireProblem(ID_ECHO, f"{where} has no `id` member: {excerpt(response)}")]
    got = response["id"]
    if not isinstance(sent, dict) or "id" not in sent or not _is_id(sent["id"]):
        return []  # nothing to echo (not JSON, a notification, no readable id): see expect_error
    expected = sent["id"]
    if same_id(got, expected):
        return []
    if got is None and not is_request(sent):
        return []  # an invalid request may be answered with `id: null` (JSON-RPC 2.0 §5)
    return [WireProblem(ID_ECHO, f"the request had \"id\": {json.dumps(expected)}, {where} has "
                                 f"\"id\": {json.dumps(got)}"
                                 + (" (same value, another JSON type)" if str(got) == str(expected) else ""))]


def judge_answer(sent: Any, answer: Any) -> list[WireProblem]:
    """The JSON value of an answer against what was sent: one response, or for a batch each
    member of the array (its id must name a request of the batch, or be null)."""
    value = parse_sent(sent)
    if isinstance(value, list) and isinstance(answer, list):
        problems: list[WireProblem] = []
        ids = [readable_id(r)[1] for r in value if readable_id(r)[0]]
        for i, member in enumerate(answer):
            where = f"member {i} of the batch answer"
            problems.extend(judge_response(member, where=where))
            if isinstance(member, dict) and "id" in member and member["id"] is not None \
                    and not any(same_id(member["id"], x) for x in ids):
                problems.append(WireProblem(ID_ECHO, f"{where} has \"id\": {json.dumps(member['id'])}, which no "
                                                     f"request of the batch carries"))
        return problems
    request = value if isinstance(value, dict) else NOT_JSON
    return judge_response(answer, request)


def judge_content_type(content_type: str | None) -> list[WireProblem]:
    """Over HTTP a response body is `application/json` (upp/05 §5, SHOULD)."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime == "application/json":
        return []
    return [WireProblem(HTTP_CONTENT_TYPE, f"an HTTP response body with Content-Type "
                                           f"{content_type!r}, not application/json")]


def judge_received(sent: Any, message: Message | None, *, content_type: str | None = None,
                   http: bool = False) -> list[WireProblem]:
    """Every rule that applies to one exchange whose answer has been read (`message` None when
    nothing came back); `http` adds the Content-Type rule."""
    if message is None:
        return []
    problems = list(message.problems)
    if http:
        problems.extend(judge_content_type(content_type))
    if not expects_reply(sent):
        problems.append(WireProblem(NOTIFICATION_NO_REPLY, f"an answer to a notification: {excerpt(message.text)}"))
    if message.is_json:
        problems.extend(judge_answer(sent, message.value))
    return problems


def judge_exchange(sent: Any, received: bytes | str | None, *, content_type: str | None = None,
                   http: bool = False) -> list[WireProblem]:
    """Every rule that applies to one exchange: `received` is the raw answer (an HTTP body, or a
    stdio message), None or empty when nothing came back; `http` adds the Content-Type rule."""
    if received is None or not received.strip():
        return []
    return judge_received(sent, read_message(received), content_type=content_type, http=http)


# -- provoked rules (the wire checks) -------------------------------------------------------

def answer_of(exchange: Any) -> Any:
    """An exchange's answer as the `expect_*` rules read it: None when nothing came back, NOT_JSON
    when the text is not JSON, else its JSON value."""
    text = exchange.received_text
    if text is None or not text.strip():
        return None
    if exchange.received is None and text.strip() != "null":
        return read_message(text).value
    return exchange.received


def expect_error(response: Any, code: int, id: Any = ANY_ID, *, requirement: str | None = None,
                 null_id_ok: bool = False) -> list[WireProblem]:
    """`response` (a parsed answer, NOT_JSON or None when nothing came) must be an error response
    with `error.code == code` and, unless `id` is ANY_ID, `id` equal to `id` (or null when
    `null_id_ok`). Problems go under `requirement` (by default the one the code answers)."""
    req = requirement or REQUIREMENT_FOR_CODE.get(code)
    if req is None:
        raise ValueError(f"expect_error: say which requirement error {code} answers")
    want = f"an error response with code {code}" + ("" if id is ANY_ID else f" and \"id\": {json.dumps(id)}"
                                                       + (" (or null)" if null_id_ok else ""))
    if response is None:
        return [WireProblem(req, f"expected {want}; nothing came back")]
    if response is NOT_JSON:
        return [WireProblem(req, f"expected {want}; the answer is not JSON")]
    if not isinstance(response, dict):
        return [WireProblem(req, f"expected {want}; got a JSON {json_type(response)}: {excerpt(response)}")]
    error = response.get("error")
    if not isinstance(error, dict):
        got = "a result" if "result" in response else "no error object"
        return [WireProblem(req, f"expected {want}; got {got}: {excerpt(response)}")]
    problems = []
    if not same_id(error.get("code"), code):
        problems.append(WireProblem(req, f"expected {want}; got code {json.dumps(error.get('code'))} "
                                         f"({excerpt(error.get('message'))})"))
    if id is not ANY_ID:
        got_id = response.get("id", NOT_JSON)
        if got_id is NOT_JSON:
            problems.append(WireProblem(req, f"expected {want}; the response has no `id`"))
        elif not same_id(got_id, id) and not (null_id_ok and got_id is None):
            problems.append(WireProblem(req, f"expected {want}; the response has \"id\": {json.dumps(got_id)}"))
    return problems


def expect_parse_error(response: Any) -> list[WireProblem]:
    """A message that is not JSON gets -32700 with `id: null`."""
    return expect_error(response, PARSE_ERROR_CODE, None)


def expect_invalid_request(response: Any, sent: Any) -> list[WireProblem]:
    """A JSON value that is not a request object gets -32600; `id: null` when no id can be read
    from it, its id or null when one can."""
    readable, request_id = readable_id(parse_sent(sent))
    if readable:
        return expect_error(response, INVALID_REQUEST_CODE, request_id, null_id_ok=True)
    return expect_error(response, INVALID_REQUEST_CODE, None)


def expect_method_not_found(response: Any, id: Any) -> list[WireProblem]:
    return expect_error(response, METHOD_NOT_FOUND_CODE, id)


def expect_no_reply(received_text: str | bytes | None) -> list[WireProblem]:
    """A notification gets no response (an HTTP 204 or empty body; nothing on stdout)."""
    if received_text is None or not received_text.strip():
        return []
    return [WireProblem(NOTIFICATION_NO_REPLY, f"the server answered a notification: {excerpt(received_text)}")]


def expect_batch_empty(response: Any) -> list[WireProblem]:
    """An empty array gets one -32600 response object with `id: null`, not an array."""
    if isinstance(response, list):
        return [WireProblem(BATCH_EMPTY, f"an empty batch was answered with an array, not one error response "
                                         f"object: {excerpt(response)}")]
    return expect_error(response, INVALID_REQUEST_CODE, None, requirement=BATCH_EMPTY)


def expect_batch(sent: Iterable[Any], response: Any, *, takes_batches: bool = True) -> list[WireProblem]:
    """A batch gets an array with one response per member that is not a notification (a request
    with an id gets one carrying that id; an invalid member gets one -32600 error): upp/jsonrpc-batch,
    a SHOULD. No response answers a notification, and a batch of notifications only gets nothing
    at all: JSON-RPC 2.0 §4.1 and §6, a MUST NOT (upp/jsonrpc-batch-notifications) for a server that
    takes batches (`takes_batches`: it answered a batch with an array). A server that answers a
    batch with one -32600 object takes none: that is the SHOULD's business only."""
    members = list(sent)
    calls = [m for m in members if is_request(m) and "id" in m]
    invalid = [m for m in members if not is_request(m)]
    wanted = len(calls) + len(invalid)
    if wanted == 0:
        if response is None:
            return []
        if isinstance(response, list) or takes_batches:
            return [WireProblem(BATCH_NOTIFICATIONS, f"a batch of notifications only was answered (expected "
                                                     f"nothing): {excerpt(response)}")]
        return []
    if response is None:
        return [WireProblem(BATCH, f"a batch of {len(members)} was not answered (expected {wanted} responses)")]
    if not isinstance(response, list):
        return [WireProblem(BATCH, f"a batch was answered with a JSON {json_type(response)}, not an array: "
                                   f"{excerpt(response)}")]
    problems = []
    # responses with `id: null` answer invalid members (and calls that used a null id themselves);
    # more of them than that answer the notifications
    nulls = sum(1 for r in response if isinstance(r, dict) and r.get("id", 0) is None) \
        - sum(1 for c in calls if c["id"] is None)
    replied = min(max(0, nulls - len(invalid)), len(members) - wanted)
    if replied:
        problems.append(WireProblem(BATCH_NOTIFICATIONS, f"the batch holds {len(members) - wanted} notification(s) "
                                                         f"and {len(invalid)} invalid member(s), and the answer "
                                                         f"{nulls} response(s) with \"id\": null: {replied} "
                                                         "notification(s) were answered"))
    if len(response) - replied != wanted:
        problems.append(WireProblem(BATCH, f"a batch of {len(members)} ({len(calls)} call(s), {len(invalid)} "
                                           f"invalid, {len(members) - wanted} notification(s)) was answered "
                                           f"with {len(response)} response(s), expected {wanted}"))
    got = Counter(json.dumps(r.get("id")) for r in response if isinstance(r, dict))
    for call in calls:
        if call["id"] is None:
            continue  # indistinguishable from the answers to invalid members: counted below
        key = json.dumps(call["id"])
        matches = sum(n for k, n in got.items() if same_id(json.loads(k), call["id"]))
        if matches != 1:
            problems.append(WireProblem(BATCH, f"the batch answer holds {matches} response(s) with \"id\": {key}, "
                                               "expected exactly one"))
    nulls -= replied
    readable_invalid = sum(1 for m in invalid if readable_id(m)[0])
    if not (len(invalid) - readable_invalid <= nulls <= len(invalid)):
        problems.append(WireProblem(BATCH, f"{len(invalid)} invalid member(s) in the batch, {nulls} response(s) "
                                           "with \"id\": null in the answer"))
    return problems
