"""`--target=jsonrpc+http://HOST:PORT/PATH` and `--target=jsonrpc+stdio:COMMAND ARGS`: a UPP 1.0.0
server, JSON-RPC 2.0 over HTTP or over stdio (upp/05-transport.md, docs/live-upp.md).

`UppRpcClient` implements `suite.upp.client.UppClient` over a transport:
* `HttpTransport` — one `POST` per message (httpx), the answer in the response body; a 204 or an
  empty body is "no answer".
* `StdioTransport` — a child process: one message per line on its stdin, its answers one per line
  on its stdout, its stderr kept (bounded) for error reasons.

Every exchange is judged by `suite.upp.jsonrpc`, and what it finds goes to
`RpcExchange.wire_problems`: an answer the driver does not like is never raised. `TargetError` only
when nothing usable came back (no answer in time, the process died, the connection failed, an
answer over 16 MiB) and, with `garbage_raises` (what `JsonRpcDriver` asks for: the suite's runs),
`NotTheProtocol` when a message (a deliberately malformed one too) got an answer that is not the
protocol at all (`targets/answers.py`: not JSON, a 5xx without a JSON-RPC error; over stdio a line
that cannot begin a message fails the request at once, not at the timeout). Answers that are JSON
with flaws (Latin-1 bytes, a message split over lines, a wrong id) stay wire problems the checks
judge. With `forgive_late` (the suite's runs too), an answer that comes after its request timed out
is passed over, not charged as a stray: the timeout was the error already. Nothing waits forever:
every wait has a deadline, and `close()` ends the child. `JsonRpcDriver` restarts a stdio child
that died once, never twice.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import itertools
import json
import logging
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
import urllib.parse
from collections import deque
from typing import Any

import httpx

from memconform.suite.outcomes import TargetError
from memconform.suite.upp.client import OMIT, RpcExchange, RpcReply
from memconform.suite.upp.jsonrpc import (
    NOT_JSON, PARSE_ERROR, STDIO_LINE_FRAMING, UTF8_JSON, Message, WireProblem, excerpt, expects_reply,
    framing_problem, join_lines, judge_received, parse_sent, read_line, read_message, readable_id, same_id,
    stray_problem,
)
from memconform.targets.answers import NotTheProtocol, http_answer
from memconform.targets.base import Subject
from memconform.targets.http_session import MAX_BODY, HttpSession, size_text

log = logging.getLogger(__name__)

UPP_VERSION = "1.0.0"
#: Whom the discovery probe asks about (read-only: upp/retrieve; meant to be unknown).
PROBE_USER = "memconform-discovery"
#: JSON-RPC errors any server gives for a method it does not have (or a request it cannot read).
NOT_SERVED = frozenset({-32601, -32600, -32700})
#: How long a notification waits for a stray answer (a server must send none), at most: over stdio
#: the wait ends when the server answers the FENCE_METHOD request sent right after it.
NOTIFY_WAIT = 0.3
FENCE_METHOD = "upp/info"
#: terminate, then kill after this long (docs/live-upp.md)
STOP_GRACE = 3.0
_STDERR_KEEP = 64 * 1024
_STDERR_TAIL = 2000
#: The longest line read from a child's stdout: a longer one is no message but a TargetError
#: (the same bound as an HTTP answer; the reference server takes no longer line either).
_MAX_LINE = MAX_BODY
_SKIP = 64 * 1024  # how much of an over-long line's rest is read at a time (and dropped)
_LOOSE_LINES = 200   # lines that are not JSON kept for piecing a message together
_PROBLEMS_KEPT = 20  # stray-line problems kept per exchange
_EOF: Any = type("Eof", (), {"__repr__": lambda self: "EOF"})()
#: A request or notification of the server's own on stdout. JSON-RPC 2.0 lets either peer send
#: them and no UPP rule forbids it; a UPP client serves none, so they are passed over, not charged.
SERVER_MESSAGE = "a request or notification from the server"
#: The answer to a request the driver gave up on (no answer in time), come after all. The server
#: echoed the id; that the driver stopped waiting is no wire violation (with `forgive_late`).
LATE_ANSWER = "a late answer to a request that timed out"
_PASSED_OVER = (SERVER_MESSAGE, LATE_ANSWER)
#: After a line that cannot begin a message (a log line on stdout), how long the answer may still
#: come: a server that logs to stdout writes its answer right after (round 16's did), and that
#: answer read is a framing verdict on the stray line; with none by then the line is taken as the
#: answer (NotTheProtocol). Only an error's wording and a framing failure's differ by it, never a pass.
GARBAGE_GRACE = 1.0


def _encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8")


@dataclasses.dataclass(frozen=True)
class _TooLong:
    """What stands on the line queue for a line longer than `_MAX_LINE`: its first bytes and size."""

    head: bytes
    size: int

    def problem(self, why: str) -> WireProblem:
        return WireProblem(UTF8_JSON, f"a line of more than {size_text(_MAX_LINE)} on stdout ({why}): it "
                                      f"began {self.head!r}…")


def _error_response(message: Message) -> bool:
    """Whether a message is JSON-RPC's error answer: a response object with `error` (or a batch
    of responses holding one)."""
    value = message.value if message.is_json else None
    members = value if isinstance(value, list) else [value]
    return any(isinstance(m, dict) and isinstance(m.get("error"), dict) for m in members)


def _garbage(name: str, sent_text: str, answer: Message) -> TargetError:
    return NotTheProtocol(f"{name}: the answer is not JSON at all (to {excerpt(sent_text)}; it came back as "
                          f"{excerpt(answer.text, 200)})")


def _stray_lines(messages: list[Message], why: str) -> list[WireProblem]:
    """Lines on stdout that answer nothing. A line that is no JSON at all (a log line) is no message
    the server sent but a break of the line framing (stdout carries the messages and nothing else):
    upp/stdio-line-framing, the class beside the level, since UPP itself does not frame stdio; a
    JSON one answers no request (stray_problem)."""
    return [stray_problem(m, why) if m.is_json else
            WireProblem(STDIO_LINE_FRAMING, f"a line on stdout that is no JSON-RPC message ({why}): {excerpt(m.text)}")
            for m in messages]


def _may_continue(loose: list[Message]) -> bool:
    """Whether lines that make no JSON yet could be the start of one JSON text spread over lines
    (a pretty-printed answer: judged for its framing), rather than garbage: JSON read up to their
    end broke off only because the text ended."""
    text = "\n".join(m.text for m in loose)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(text.rstrip())
    except (ValueError, RecursionError):
        return False
    return True


def level_from_info(result: Any) -> str | None:
    """`conformance_level` of an upp/info result (an integer 1..3) as the suite's "L1".."L3"."""
    if not isinstance(result, dict):
        return None
    level = result.get("conformance_level")
    if isinstance(level, str):  # lenient: "2" or "L2" still says what the server claims
        digits = level.strip().upper().removeprefix("L")
        level = int(digits) if digits.isdigit() else None
    if isinstance(level, float) and level.is_integer():
        level = int(level)
    if isinstance(level, int) and not isinstance(level, bool) and 1 <= level <= 3:
        return f"L{level}"
    return None


def is_loopback(host: str | None) -> bool:
    host = (host or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _id_key(value: Any) -> str:
    """An id as a set key, numbers by value (1 and 1.0 are one JSON number)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value)


def _bounded(problems: list[WireProblem]) -> tuple[WireProblem, ...]:
    """At most `_PROBLEMS_KEPT` problems per requirement: a server spewing log lines on stdout
    must not make every exchange carry thousands of them."""
    kept: list[WireProblem] = []
    dropped: dict[str, int] = {}
    seen: dict[str, int] = {}
    for p in problems:
        seen[p.requirement] = seen.get(p.requirement, 0) + 1
        if seen[p.requirement] <= _PROBLEMS_KEPT:
            kept.append(p)
        else:
            dropped[p.requirement] = dropped.get(p.requirement, 0) + 1
    kept.extend(WireProblem(req, f"… and {n} more like these") for req, n in dropped.items())
    return tuple(kept)


# -- transports ----------------------------------------------------------------------------------

class HttpTransport:
    """One JSON-RPC message per `POST` to `url` (`Content-Type: application/json`)."""

    binding = "http"

    def __init__(self, url: str, *, timeout: float = 10.0, garbage_raises: bool = False):
        self.url = url
        self.timeout = float(timeout)
        self.garbage_raises = garbage_raises
        self._http = HttpSession(timeout=self.timeout)
        self._closed = False

    def _post(self, data: bytes) -> httpx.Response:
        return self.post_raw(data, f"POST {self.url} of {excerpt(data)}")

    def post_raw(self, content: bytes | list[bytes], what: str) -> httpx.Response:
        """POST `content` to the URL as it is, through this transport's bounded session: a list of
        parts goes out with Transfer-Encoding: chunked (upp/wire/http-chunked-body). No judging."""
        request = self._http.request("POST", self.url, content=content, headers={"Content-Type": "application/json"})
        return self._http.send(request, what)

    def exchange(self, data: bytes, sent: Any) -> RpcExchange:
        if self._closed:
            raise TargetError(f"POST {self.url}: the client is closed")
        response = self._post(data)
        status, content_type = response.status_code, response.headers.get("content-type")
        sent_text = data.decode("utf-8", "replace")
        body = response.content
        if status == 204 or not body.strip():
            return RpcExchange(sent_text, None, None, status, content_type)
        message = read_message(body, f"the HTTP {status} response body")
        if self.garbage_raises:  # a deliberately broken message too: garbage is never judged
            http_answer(f"POST {self.url} of {excerpt(sent_text)}", status, content_type, body,
                        body_ok=message.is_json, envelope=_error_response(message), expected="JSON at all")
        problems = judge_received(sent, message, content_type=content_type, http=True)
        return RpcExchange(sent_text, message.text, message.value if message.is_json else None, status,
                           content_type, tuple(problems))

    def shares_files(self) -> bool:
        return is_loopback(urllib.parse.urlsplit(self.url).hostname)

    @property
    def alive(self) -> bool:
        return not self._closed

    def close(self) -> None:
        self._closed = True
        self._http.close()


class StdioTransport:
    """A child process speaking JSON-RPC one message per line. One exchange at a time: the
    request is written, then lines are read until its answer (matched by id) arrives; lines that
    answer nothing in flight are kept as wire problems of the exchange."""

    binding = "stdio"

    def __init__(self, argv: list[str], *, timeout: float = 10.0, name: str | None = None,
                 notify_wait: float = NOTIFY_WAIT, env: dict[str, str] | None = None,
                 garbage_raises: bool = False, forgive_late: bool = False):
        if not argv:
            raise TargetError("jsonrpc+stdio: no command to start")
        self.argv = list(argv)
        self.env = env  # kept so that a client may start the same command again
        self.name = name or f"jsonrpc+stdio:{shlex.join(self.argv)}"
        self.timeout = float(timeout)
        self.notify_wait = float(notify_wait)
        self.garbage_raises = garbage_raises
        self.forgive_late = forgive_late
        self._given_up: set[str] = set()  # ids of requests that got no answer in time
        self._lock = threading.Lock()
        # bounded: a server flooding stdout between requests waits on its pipe, not on our memory
        self._lines: queue.Queue[Any] = queue.Queue(maxsize=10_000)
        self._backlog: deque[Any] = deque()
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._earlier: set[str] = set()  # ids of requests sent before (late answers are strays)
        self._fences = 0
        self._fence_ids: set[str] = set()
        self._exited = False
        self._closed = False
        self._writes: queue.Queue[Any] = queue.Queue()
        self.ended_on_malformed = False  # set by the client: it ended on a line not JSON sent on purpose
        # what is wrong with the stream itself, told with every exchange: a byte order mark before the
        # first message (its answer is the driver's probe, which no check judges; round 16)
        self.stream_problems: list[WireProblem] = []
        self._first_line = True
        try:
            # a session of its own, so that stopping it also stops whatever it started
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=env, start_new_session=os.name == "posix")
        except (OSError, ValueError) as exc:
            raise TargetError(f"{self.name}: cannot start {self.argv[0]!r}: {exc}") from None
        self._threads = [threading.Thread(target=fn, name=f"upp-stdio-{what}-{self._proc.pid}", daemon=True)
                         for fn, what in ((self._read_stdout, "out"), (self._read_stderr, "err"),
                                          (self._write_loop, "in"))]
        for t in self._threads:
            t.start()

    # -- threads --

    def _read_stdout(self) -> None:
        stream = self._proc.stdout
        try:
            while True:
                line = stream.readline(_MAX_LINE + 1)
                if not line:
                    break
                if len(line) > _MAX_LINE and not line.endswith(b"\n"):
                    line = self._skip_rest(stream, line)
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(_EOF)

    @staticmethod
    def _skip_rest(stream: Any, start: bytes) -> _TooLong:
        """A line longer than we read: its rest, up to its newline, is read in small pieces and
        dropped, so the next line starts cleanly and the whole never sits in memory."""
        size, rest = len(start), start
        while rest and not rest.endswith(b"\n"):
            rest = stream.readline(_SKIP)
            size += len(rest)
        return _TooLong(bytes(start[:120]), size)

    def _read_stderr(self) -> None:
        stream = self._proc.stderr
        try:
            while True:
                chunk = stream.read1(4096)
                if not chunk:
                    break
                with self._stderr_lock:
                    self._stderr += chunk
                    if len(self._stderr) > _STDERR_KEEP:
                        del self._stderr[:len(self._stderr) - _STDERR_KEEP]
        except (OSError, ValueError):
            pass

    def _write_loop(self) -> None:
        stdin = self._proc.stdin
        while True:
            item = self._writes.get()
            if item is None:
                return
            data, done, failure = item
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError) as exc:
                failure.append(exc)
            finally:
                done.set()

    # -- reasons --

    def stderr_tail(self) -> str:
        if self._proc.poll() is not None and len(self._threads) > 1:
            # gone: its last words are still in the pipe until the reader reaches end of file
            # (on a loaded machine that can be after the exit is seen)
            self._threads[1].join(timeout=2.0)
        with self._stderr_lock:
            text = self._stderr.decode("utf-8", "replace").strip()
        if len(text) > _STDERR_TAIL:
            text = "…" + text[-_STDERR_TAIL:]
        return text

    def _notes(self, problems: list[WireProblem]) -> str:
        text = ""
        strays = [p.message for p in problems][-3:]
        if strays:
            text += " (on stdout instead: " + "; ".join(strays) + ")"
        tail = self.stderr_tail()
        return text + (f" (stderr: {tail})" if tail else "")

    def _exit_status(self, closed: str = "its stdout") -> str:
        try:
            code = self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return f"closed {closed} but is still running"
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def death(self) -> tuple[str, int | None]:
        """(how the process ended, with the last of its stderr; its exit code) once it is gone."""
        tail = self.stderr_tail()
        return (f"the server process {self._exit_status()}" + (f" (stderr: …{tail[-300:]})" if tail else ""),
                self._proc.returncode)

    def _died(self, sent_text: str, problems: list[WireProblem], closed: str = "its stdout") -> TargetError:
        return TargetError(f"{self.name}: the server process {self._exit_status(closed)} (sent "
                           f"{excerpt(sent_text)}){self._notes(problems)}")

    # -- reading --

    def _next(self, deadline: float) -> Any:
        """The next message on stdout, _EOF once stdout ended, None when none came by `deadline`,
        a `_TooLong` for a line too long to read."""
        while True:
            if self._backlog:
                return self._backlog.popleft()
            if self._exited:
                return _EOF
            try:
                raw = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if raw is _EOF:
                self._exited = True
                return _EOF
            if isinstance(raw, _TooLong):
                return raw
            if self._first_line and raw.startswith(b"\xef\xbb\xbf"):
                self.stream_problems.append(WireProblem(UTF8_JSON, "the server's stdout began with a byte order mark "
                                                                   "(EF BB BF) before its first message (RFC 8259 §8.1: "
                                                                   "implementations MUST NOT add one)"))
            self._first_line = False
            messages = read_line(raw[:-1] if raw.endswith(b"\n") else raw)
            if not messages:
                continue  # a blank line: no message
            if not raw.endswith(b"\n"):  # only the last bytes before stdout closed lack one
                messages[0] = dataclasses.replace(messages[0], problems=messages[0].problems + (WireProblem(
                    STDIO_LINE_FRAMING, f"the last message was not ended by a newline: {excerpt(raw)}"),))
            self._backlog.extend(messages[1:])
            return messages[0]

    def _drain(self) -> list[WireProblem]:
        """Lines that came since the last exchange: they answer nothing in flight."""
        problems = []
        while True:
            item = self._next(time.monotonic())
            if item is None or item is _EOF:
                return problems
            if isinstance(item, _TooLong):
                problems.append(item.problem("it came before this request was sent"))
                continue
            if not (item.is_json and self._role(item.value, NOT_JSON) in _PASSED_OVER):
                problems.extend(_stray_lines([item], "it came before this request was sent"))

    def _role(self, value: Any, sent: Any) -> str | None:
        """None when a JSON message answers the request in flight, SERVER_MESSAGE for a request or
        notification of the server's own, LATE_ANSWER for one forgiven, else why it is a stray. Only one request is ever in
        flight, so a response with another id is taken as its answer (and judged for the id)
        unless that id is one of an earlier request: a late answer (but for an error answer to a
        message with no id of its own, under the id of a request answered already)."""
        if isinstance(value, dict) and "method" in value and "result" not in value and "error" not in value:
            return SERVER_MESSAGE
        if not isinstance(value, dict) or "id" not in value:
            return None
        mine = [r["id"] for r in sent if readable_id(r)[0]] if isinstance(sent, list) else \
            [readable_id(sent)[1]] if readable_id(sent)[0] else []
        if any(same_id(value["id"], x) for x in mine):
            return None
        key = _id_key(value["id"])
        if self.forgive_late and key in self._given_up or key in self._fence_ids:
            return LATE_ANSWER
        # An error answer to what carries no id of its own (text that is no JSON, a batch, a request
        # whose id is unreadable) is that message's answer even under the id of an earlier request
        # that was answered already (a request gets one answer): a server answering such errors with
        # "id": 0 instead of null is judged for that id, not waited out (the public UPP TypeScript
        # server did: three waits of the timeout declared its binding dead, 48 checks unjudged)
        takes_any_id = isinstance(value.get("error"), dict) and not (isinstance(sent, dict) and readable_id(sent)[0])
        if key in self._earlier and (key in self._given_up or not takes_any_id):
            return f"it carries \"id\": {json.dumps(value['id'])} of an earlier request"
        return None

    @staticmethod
    def _joined(loose: list[Message]) -> tuple[int, Message] | None:
        """(i, message) when loose[i:] (two lines or more) are one JSON text spread over lines."""
        for i in range(len(loose) - 1):
            lines = [m.text for m in loose[i:]]
            value = join_lines(lines)
            if value is not NOT_JSON:
                carried = tuple(p for m in loose[i:] for p in m.problems)
                return i, Message("\n".join(lines), value, carried + (framing_problem(lines),))
        return None

    @staticmethod
    def _as_answer(loose: list[Message]) -> Message:
        """Lines that make no JSON, taken as the answer (what the server said instead)."""
        message = read_message("\n".join(m.text for m in loose))
        return dataclasses.replace(message, problems=tuple(p for m in loose for p in m.problems) + message.problems)

    def _await_answer(self, sent: Any, sent_text: str, deadline: float, problems: list[WireProblem]) -> Message:
        """Lines until the answer. Lines that are not JSON may be pieces of a message spread over
        lines, or log lines before a slow answer (an extractor may take seconds): only when no
        answer has come by the deadline (or stdout ends) are they taken as the answer."""
        loose: list[Message] = []  # lines that are not (yet) a message
        junk: list[Message] = []   # lines that cannot begin a message (garbage_raises)
        while True:
            item = self._next(deadline)
            if isinstance(item, _TooLong):
                raise TargetError(f"{self.name}: answered more than {size_text(_MAX_LINE)} on one line "
                                  f"(a line of {item.size} bytes, to {excerpt(sent_text)}; it began "
                                  f"{item.head!r}…); memconform reads at most "
                                  f"{size_text(_MAX_LINE)} of a message{self._notes(problems)}")
            if item is None or item is _EOF:
                loose = junk + loose
                if loose and self.garbage_raises:
                    if item is _EOF:  # garbage, then gone: the death is the news
                        raise self._died(sent_text, problems + _stray_lines(loose, "before it ended"))
                    raise _garbage(self.name, sent_text, self._as_answer(loose))
                if loose:
                    return self._as_answer(loose)
                if item is _EOF:
                    raise self._died(sent_text, problems)
                raise TargetError(f"{self.name}: no answer within {self.timeout:g} s to {excerpt(sent_text)}"
                                  f"{self._notes(problems)}")
            # a bare JSON scalar after a loose line is likely the last member of a pretty-printed array
            if not item.is_json or (loose and not isinstance(item.value, (dict, list))):
                loose.append(item)
                if len(loose) > _LOOSE_LINES:
                    problems.extend(_stray_lines([loose.pop(0)], "not part of any message"))
                joined = self._joined(loose)
                if joined is None:
                    if self.garbage_raises and not _may_continue(loose):
                        # no message can start like this: the answer may still follow it (a log
                        # line on stdout) within GARBAGE_GRACE; waiting out the timeout would only
                        # delay the error
                        junk += loose
                        loose = []
                        if len(junk) > _LOOSE_LINES:
                            raise _garbage(self.name, sent_text, self._as_answer(junk))
                        deadline = min(deadline, time.monotonic() + GARBAGE_GRACE)
                    continue
                i, item = joined
                problems.extend(_stray_lines(loose[:i], "before the answer"))
            else:
                problems.extend(_stray_lines(loose, "before the answer"))
            loose = []
            why = self._role(item.value, sent)
            if why is None:
                problems.extend(_stray_lines(junk, "before the answer"))
                return item
            if why not in _PASSED_OVER:
                problems.append(stray_problem(item, why))

    def _await_stray(self, sent: Any, sent_text: str, problems: list[WireProblem],
                     fence: str | None = None) -> Message | None:
        """After a notification: whatever comes before the answer to the `fence` request sent
        right after it, or within `notify_wait` (nothing, for a conforming server). A server reads
        its stdin in order, so the fence's answer says it has done with the notification: the
        wait ends there instead of always lasting `notify_wait`."""
        deadline = time.monotonic() + self.notify_wait
        got: list[Message] = []
        while True:
            item = self._next(deadline)
            if item is None:
                break
            if fence is not None and isinstance(item, Message) and item.is_json and isinstance(item.value, dict) \
                    and item.value.get("id") == fence and ("result" in item.value or "error" in item.value):
                break
            if item is _EOF:
                if got:
                    break
                raise self._died(sent_text, problems)
            if isinstance(item, _TooLong):
                problems.append(item.problem("after a notification"))
                continue
            why = self._role(item.value, sent) if item.is_json else None
            if why is None:
                got.append(item)
            elif why not in _PASSED_OVER:
                problems.append(stray_problem(item, why))
        if len(got) > 1 and fence is not None:
            joined = self._joined(got)
            if joined is not None and isinstance(joined[1].value, dict) and joined[1].value.get("id") == fence:
                # the fence's own answer spread over lines: a framing fault (filed as one), not a reply
                # to the notification (round 18's server pretty-printed every error)
                problems.extend(joined[1].problems)
                got = got[:joined[0]]
        if not got:
            return None
        if len(got) > 1:
            joined = self._joined(got)
            if joined is not None and joined[0] == 0:
                return joined[1]
            problems.extend(_stray_lines(got[1:], "a further answer to a notification"))
        return got[0] if got[0].is_json else self._as_answer(got[:1])

    # -- the exchange --

    def _write(self, data: bytes, deadline: float, sent_text: str, problems: list[WireProblem]) -> None:
        done, failure = threading.Event(), []
        self._writes.put((data, done, failure))
        if not done.wait(max(0.0, deadline - time.monotonic())):
            raise TargetError(f"{self.name}: the server does not read its stdin: {excerpt(sent_text)} could not "
                              f"be written within {self.timeout:g} s{self._notes(problems)}")
        if failure:  # a broken pipe: the process ended, or closed its stdin
            raise self._died(sent_text, problems, closed="its stdin")

    def exchange(self, data: bytes, sent: Any) -> RpcExchange:
        # One message is one line; CR and LF are JSON whitespace, so as spaces the message means the same.
        data = data.replace(b"\r", b" ").replace(b"\n", b" ")
        sent_text = data.decode("utf-8", "replace")
        with self._lock:
            if self._closed:
                raise TargetError(f"{self.name}: the driver is closed")
            problems = self._drain()
            if self._exited:
                raise self._died(sent_text, problems)
            try:
                self._write(data + b"\n", time.monotonic() + self.timeout, sent_text, problems)
                if expects_reply(sent):
                    answer = self._await_answer(sent, sent_text, time.monotonic() + self.timeout, problems)
                else:
                    self._fences += 1
                    fence = f"memconform-fence-{self._fences}"
                    self._fence_ids.add(_id_key(fence))  # a fence answered late is no stray
                    self._write(_encode({"jsonrpc": "2.0", "method": FENCE_METHOD, "params": {}, "id": fence})
                                + b"\n", time.monotonic() + self.timeout, sent_text, problems)
                    answer = self._await_stray(sent, sent_text, problems, fence)
            except TargetError:
                self._given_up.update(self._ids(sent))
                raise
            finally:
                # a late answer to this request must not be taken for the next one's
                self._earlier.update(self._ids(sent))
        problems.extend(judge_received(sent, answer))
        problems.extend(self.stream_problems)
        return RpcExchange(sent_text, answer.text if answer else None,
                           answer.value if answer is not None and answer.is_json else None,
                           wire_problems=_bounded(problems))

    @staticmethod
    def _ids(sent: Any) -> list[str]:
        """The ids (as set keys) of what was sent: a request's, or each of a batch's."""
        out = []
        for member in (sent if isinstance(sent, list) else [sent]):
            readable, rid = readable_id(member)
            if readable:
                out.append(_id_key(rid))
        return out

    def shares_files(self) -> bool:
        return True  # a child process runs on this machine

    @property
    def alive(self) -> bool:
        return not self._closed and not self._exited and self._proc.poll() is None

    def ended(self) -> bool:
        """Whether the process has ended (waits a moment for an exit seen as stdout closing)."""
        try:
            self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return False
        return True

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _signal(self, sig: int) -> None:
        try:
            if os.name == "posix":
                os.killpg(self._proc.pid, sig)  # its own session: the child and what it started
            elif sig == getattr(signal, "SIGKILL", None):
                self._proc.kill()
            else:
                self._proc.terminate()
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._writes.put(None)
        self._threads[2].join(0.2)
        if not self._threads[2].is_alive():  # a writer blocked on a full pipe holds stdin's lock
            try:
                self._proc.stdin.close()  # a well-behaved server ends at the end of its input
            except (OSError, ValueError):
                pass
        try:
            self._proc.wait(0.5)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGTERM)
            try:
                self._proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))
                try:
                    self._proc.wait(STOP_GRACE)
                except subprocess.TimeoutExpired:
                    pass
        for t in self._threads:
            t.join(1.0)
        if os.name == "posix" and self._proc.returncode is not None and self._threads[0].is_alive():
            # the server is gone but something it started still holds its stdout: its group goes too
            self._signal(signal.SIGKILL)
            self._threads[0].join(1.0)
        for stream, reader in ((self._proc.stdout, self._threads[0]), (self._proc.stderr, self._threads[1]),
                               (self._proc.stdin, self._threads[2])):
            if not reader.is_alive():  # closing under a blocked reader would wait for its lock
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass


# -- the client ----------------------------------------------------------------------------------

def reply_from(method: str, params: Any, exchange: RpcExchange, request_id: Any) -> RpcReply:
    """The RpcReply of a call: the response object matched to the request (in an array answer,
    the member carrying its id)."""
    value = exchange.received
    response = value if isinstance(value, dict) else None
    if isinstance(value, list):
        response = next((m for m in value if isinstance(m, dict) and "id" in m and same_id(m["id"], request_id)),
                        None)
    if response is None:
        return RpcReply(method, params, exchange)
    has_result = "result" in response
    return RpcReply(method, params, exchange, response=response, has_result=has_result,
                    result=response.get("result"), error=response.get("error"))


class UppRpcClient:
    """`UppClient` over one transport. Ids are integers from a counter (1, 2, …) unless a call
    gives its own."""

    def __init__(self, transport: HttpTransport | StdioTransport, methods: dict[str, str] | None = None):
        self.transport = transport
        self.binding = transport.binding
        #: spec name -> the target's own name (a descriptor's [upp.methods]); `call` never uses it
        self.methods = dict(methods or {})
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()

    def fresh_id(self) -> int:
        with self._ids_lock:
            return next(self._ids)

    def call(self, method: str, params: Any = OMIT, *, id: Any = OMIT) -> RpcReply:
        request_id = self.fresh_id() if id is OMIT else id
        request: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not OMIT:
            request["params"] = params
        request["id"] = request_id
        return reply_from(method, params, self.transport.exchange(_encode(request), request), request_id)

    def notify(self, method: str, params: Any = OMIT) -> RpcExchange:
        request: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not OMIT:
            request["params"] = params
        return self.transport.exchange(_encode(request), request)

    def send_raw(self, text: str | bytes) -> RpcExchange:
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        sent = parse_sent(data)
        try:
            return self.transport.exchange(data, sent)
        except TargetError as exc:
            if not (sent is NOT_JSON and isinstance(self.transport, StdioTransport) and self.transport.ended()):
                raise
            # The suite sent a line that is not JSON on purpose and the process ended on it: a
            # verdict on the rule for such a line (-32700, JSON-RPC 2.0 §5.1), not a target gone
            # (round 16: a server calling exit(1) on a line it could not parse ended the run in
            # "error"). The driver starts it again (OneRestart, `malformed`).
            self.transport.ended_on_malformed = True
            return RpcExchange(data.decode("utf-8", "replace"), None, None, wire_problems=(WireProblem(
                PARSE_ERROR, f"the server process ended on this line, which is not JSON, instead of answering "
                             f"-32700 Parse error: {str(exc).split(': ', 1)[-1]}"),))

    def call_op(self, op: str, params: Any = OMIT) -> RpcReply:
        name = self.methods.get(op, op)
        reply = self.call(name, params)
        return reply if name == op else dataclasses.replace(reply, method=op, called_as=name)

    def _op(self, method: str, **members: Any) -> RpcReply:
        return self.call_op(method, {k: v for k, v in members.items() if v is not OMIT})

    def info(self) -> RpcReply:
        return self.call_op("upp/info", {})

    def ingest(self, entity_key: Any, text: Any, **extra: Any) -> RpcReply:
        return self._op("upp/ingest", entity_key=entity_key, text=text, **extra)

    def retrieve(self, entity_key: Any, query: Any, **extra: Any) -> RpcReply:
        return self._op("upp/retrieve", entity_key=entity_key, query=query, **extra)

    def contextualize(self, entity_key: Any, text: Any, **extra: Any) -> RpcReply:
        return self._op("upp/contextualize", entity_key=entity_key, text=text, **extra)

    def get_events(self, entity_key: Any, **extra: Any) -> RpcReply:
        return self._op("upp/get_events", entity_key=entity_key, **extra)

    def delete_events(self, entity_key: Any, event_ids: Any = OMIT, **extra: Any) -> RpcReply:
        return self._op("upp/delete_events", entity_key=entity_key, event_ids=event_ids, **extra)

    def get_labels(self) -> RpcReply:
        return self.call_op("upp/get_labels", {})

    def get_tasks(self, task_ids: Any) -> RpcReply:
        return self._op("upp/get_tasks", task_ids=task_ids)

    def export_events(self, entity_key: Any, **extra: Any) -> RpcReply:
        return self._op("upp/export_events", entity_key=entity_key, **extra)

    def import_events(self, entity_key: Any, file: Any, **extra: Any) -> RpcReply:
        return self._op("upp/import_events", entity_key=entity_key, file=file, **extra)

    def shares_files(self) -> bool:
        return self.transport.shares_files()

    def close(self) -> None:
        self.transport.close()


def probe_upp(url: str, timeout: float) -> tuple[bool, str]:
    """POST upp/info to `url`: (True, …) when a JSON-RPC response carrying `result` comes back,
    else (False, what came instead). Raises TargetError when nothing comes back."""
    client = UppRpcClient(HttpTransport(url, timeout=timeout))
    try:
        reply = client.info()
    finally:
        client.close()
    status = reply.exchange.http_status
    if reply.has_result:
        return True, f"answered HTTP {status} with a result"
    if reply.error_code is not None:
        return False, f"answered HTTP {status} with JSON-RPC error {reply.error_code} {reply.error_message!r}"
    if reply.exchange.received_text is None:
        return False, f"answered HTTP {status} with no body"
    return False, (f"answered HTTP {status}, not a JSON-RPC response with `result`: "
                   f"{excerpt(reply.exchange.received_text, 120)}")


# -- the driver ----------------------------------------------------------------------------------

#: How many deaths on lines that are not JSON, sent on purpose, the driver survives (OneRestart).
MAX_MALFORMED = 8


class OneRestart:
    """The rule for a child process that dies (docs/live-ump.md, "Broken targets"): the first
    death is survived (the driver starts a fresh process, says so in the log and in `describe()`),
    the second is final: from then on every call is a quick TargetError, not a wait for timeouts.
    A server that dies once may have hit one bad input; one that dies again would die all run."""

    def __init__(self, name: str, logger: logging.Logger = log):
        self.name = name
        self.log = logger
        self.deaths: list[dict[str, Any]] = []

    @property
    def restarts(self) -> int:
        return sum(1 for d in self.deaths if d["restarted"])

    def died(self, reason: str, exit_code: int | None, *, malformed: bool = False) -> None:
        """Note a death; returns when the process is to be started again, else raises. A death
        on a line that is not JSON the suite sent on purpose (`malformed`) is that line's verdict
        and does not count, up to MAX_MALFORMED of them: a server that exits on every such line
        is still judged on the rest."""
        again = not self._counted() or (malformed and len(self._malformed()) < MAX_MALFORMED)
        self.deaths.append({"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                            "reason": reason, "exit_code": exit_code, "restarted": again,
                            **({"on_malformed_line": True} if malformed and again else {})})
        if again:
            self.log.warning("%s: %s; starting it again (once)", self.name, reason)
        else:
            self.log.warning("%s: %s; it died twice: not restarted again", self.name, reason)
        self.check()

    def _counted(self) -> list[dict[str, Any]]:
        return [d for d in self.deaths if not d.get("on_malformed_line")]

    def _malformed(self) -> list[dict[str, Any]]:
        return [d for d in self.deaths if d.get("on_malformed_line")]

    def check(self) -> None:
        counted = self._counted()
        if len(counted) > 1:
            first, then = (d["reason"].split(" (stderr:")[0] for d in counted[:2])
            raise TargetError(f"{self.name}: the target died twice; not restarted again (first {first}, "
                              f"then {then})")

    def describe(self) -> dict[str, Any]:
        return {"restarts": self.restarts, "deaths": [dict(d) for d in self.deaths]} if self.deaths else {}


class JsonRpcDriver:
    """A UPP 1.0.0 server over one binding: `http` (a URL) or `stdio` (a command). One subject,
    ("upp", "1.0.0", binding); the level it advertises is upp/info's `conformance_level`. Over
    stdio the child starts on first use and, should it die, a fresh one starts for the next
    client (the check that saw it die has its TargetError) — once: a second death ends it
    (`OneRestart`; both in `describe()["deaths"]`)."""

    def __init__(self, binding: str, where: str | list[str], *, label: str | None = None, timeout: float = 10.0,
                 notify_wait: float = NOTIFY_WAIT, env: dict[str, str] | None = None):
        if binding == "http":
            assert isinstance(where, str)
            self.url: str | None = where
            self.argv: list[str] | None = None
            label = label or f"jsonrpc+{where}"
        elif binding == "stdio":
            self.url, self.argv = None, list(where)
            label = label or f"jsonrpc+stdio:{shlex.join(self.argv)}"
        else:
            raise ValueError(f"binding is 'http' or 'stdio', not {binding!r}")
        self.binding = binding
        self.label = label
        #: the label as messages quote it (a long inline command shortened)
        self.name = label if len(label) <= 100 else label[:99] + "…"
        self.timeout = float(timeout)
        self.notify_wait = notify_wait
        self.env = env
        self._lock = threading.RLock()
        self._client: UppRpcClient | None = None
        self._starts = 0
        self._deaths = OneRestart(self.name)
        self._info: RpcReply | None = None
        self._info_error: str | None = None
        self._closed = False
        #: spec name -> the server's name for the operation (a descriptor's [upp.methods]): the
        #: semantic checks call through it, the naming checks never (docs/descriptors.md)
        self.methods: dict[str, str] = {}

    @classmethod
    def from_target(cls, text: str, timeout: float = 10.0) -> JsonRpcDriver:
        text = text.strip()
        if text.startswith("jsonrpc+stdio:"):
            try:
                argv = shlex.split(text[len("jsonrpc+stdio:"):])
            except ValueError as exc:
                raise TargetError(f"cannot split the command of {text!r}: {exc}") from None
            if not argv:
                raise TargetError(f"{text!r} names no command (jsonrpc+stdio:COMMAND ARGS)")
            return cls("stdio", argv, label=text, timeout=timeout)
        if text.startswith(("jsonrpc+http://", "jsonrpc+https://")):
            return cls("http", text[len("jsonrpc+"):], label=text, timeout=timeout)
        raise TargetError(f"not a JSON-RPC target: {text!r} (jsonrpc+http://HOST:PORT/PATH or jsonrpc+stdio:COMMAND)")

    def _transport(self) -> HttpTransport | StdioTransport:
        # the suite's runs: an answer that is not JSON at all is garbage, an error (see the module doc)
        if self.binding == "http":
            return HttpTransport(self.url, timeout=self.timeout, garbage_raises=True)
        return StdioTransport(self.argv, timeout=self.timeout, name=self.name, notify_wait=self.notify_wait,
                              env=self.env, garbage_raises=True, forgive_late=True)

    def live_client(self) -> UppRpcClient:
        """The client of the running process; a dead one is replaced once (`OneRestart`)."""
        with self._lock:
            if self._closed:
                raise TargetError(f"{self.name}: the driver is closed")
            self._deaths.check()
            if self._client is not None and not self._client.transport.alive:
                dead, self._client = self._client, None
                reason, code = dead.transport.death()
                dead.close()
                self._deaths.died(reason, code, malformed=getattr(dead.transport, "ended_on_malformed", False))
            if self._client is None:
                self._client = UppRpcClient(self._transport(), self.methods)
                self._starts += 1
            return self._client

    # -- Driver --

    def subjects(self) -> list[Subject]:
        """The one subject, once the server was shown to be there and to speak UPP (`probe`): an
        absent server, or one that is not UPP, is one target error, not a verdict."""
        try:
            self.probe()
        except TargetError:
            self.close()  # a child started for the probe must not outlive it
            raise
        return [Subject(self.label, "upp", UPP_VERSION, self.binding)]

    def probe(self) -> None:
        """Raises TargetError unless the server answers as UPP: upp/info with a result, or else
        (a server that does not serve upp/info is judged for that) upp/retrieve of a user nobody
        has with a result or an error only a server of that method gives. A method-not-found
        (or invalid-request, parse-error) answer to both is another JSON-RPC server, not UPP."""
        info = self.info()
        if info is None:
            raise TargetError(self._info_error or f"{self.name}: upp/info could not be asked")
        if info.has_result:
            return
        retrieve = self.live_client().retrieve(PROBE_USER, "memconform discovery")
        if retrieve.has_result or (retrieve.error_code is not None and retrieve.error_code not in NOT_SERVED):
            return
        raise TargetError(f"{self.name} is not a UPP server: {self._probe_said(info)}; "
                          f"{self._probe_said(retrieve)}")

    @staticmethod
    def _probe_said(reply: RpcReply) -> str:
        said, status = reply.describe(), reply.exchange.http_status
        return said if status is None or "HTTP" in said else f"{said} (HTTP {status})"

    def info(self) -> RpcReply | None:
        """upp/info, asked once; None when the server could not be asked."""
        with self._lock:
            if self._info is None and self._info_error is None:
                try:
                    self._info = self.live_client().info()
                except TargetError as exc:
                    self._info_error = str(exc)
            return self._info

    def advertised_level(self, subject: Subject) -> str | None:
        reply = self.info()
        return level_from_info(reply.result) if reply is not None and reply.ok else None

    def client(self, subject: Subject) -> UppRpcClient:
        if subject.spec != "upp":
            raise TargetError(f"{self.name} speaks UPP, not {subject.spec.upper()}")
        return self.live_client()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "kind": f"jsonrpc+{self.binding}", "advertised": {}}
        if self.url is not None:
            out["url"] = self.url
        else:
            out["command"] = list(self.argv or [])
        if self._info is not None and self._info.ok and isinstance(self._info.result, dict):
            level = level_from_info(self._info.result)
            if level is not None:
                out["advertised"] = {"upp": level}
            out["server"] = {k: self._info.result[k] for k in
                             ("protocol_version", "ontology", "conformance_level", "operations")
                             if k in self._info.result}
        elif self._info_error is not None:
            out["info_error"] = self._info_error
        if self.methods:
            out["methods"] = dict(self.methods)  # the aliases the semantic checks called through
        out.update(self._deaths.describe())
        return out

    def close(self) -> None:
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> JsonRpcDriver:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["HttpTransport", "JsonRpcDriver", "OneRestart", "StdioTransport", "UppRpcClient", "level_from_info", "probe_upp",
           "reply_from", "UPP_VERSION"]
