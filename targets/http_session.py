"""One HTTP connection pool for a driver, shared by every driver that speaks HTTP (UMP, UPP's
JSON-RPC, OMF): httpx underneath, bounded waits, bounded answers, and transport failures as
`TargetError`."""

from __future__ import annotations

import functools
import json
import ssl
import time
import urllib.parse
from typing import Any

import httpx

from memconform.suite.outcomes import TargetError
from memconform.targets import in_process
from memconform.targets.answers import RateLimited

#: The most of one answer's body that is read (docs/live-ump.md, "Broken targets"): a server
#: streaming without end must not fill the judge's memory.
MAX_BODY = 16 * 1024 * 1024
_HEAD = 120  # bytes of an answer quoted in a reason

#: A kept-alive connection the server closed under us: worth one resend on a fresh connection.
_RESENDABLE = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
#: A 429 is waited out (its Retry-After, at most RATE_WAIT_CAP_S; 1 s without one) and sent again,
#: at most RATE_RETRIES times: a rate limit is a server's legitimate answer (UMP §3.7's
#: rate_limited), never a verdict on what was asked.
RATE_RETRIES = 4
RATE_WAIT_CAP_S = 5.0


def retry_after(response: httpx.Response) -> float:
    """How long a 429 asks to wait: Retry-After in seconds or as an HTTP date, capped; 1 s without."""
    value = response.headers.get("retry-after", "").strip()
    try:
        wait = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            wait = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            wait = 1.0
    return min(max(wait, 0.0), RATE_WAIT_CAP_S)


def size_text(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size % (1024 * 1024) == 0 else f"{size} bytes"


def first_bytes(data: bytes, limit: int = _HEAD) -> str:
    """The start of an answer, for a reason: `b'<html>…'` plus how much more there was."""
    shown = repr(bytes(data[:limit]))
    return shown + (f" … ({len(data) - limit} more bytes)" if len(data) > limit else "")


@functools.cache
def path_segment(value: Any) -> str:
    """One path segment, percent-encoded whole (a `/`, `:` or space inside it stays inside it)."""
    return urllib.parse.quote(str(value), safe="")


def json_body(text: str | None) -> tuple[bool, Any]:
    """(True, the value) when `text` is JSON; (False, None) when it is absent, blank or not JSON."""
    if text is None or not text.strip():
        return False, None
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every client: httpx builds a new one per client otherwise
    (loading the CA bundle, ~20 ms), and the drivers make a client per check, per pool renewal and
    per subscription (a context is safe to share between threads once built)."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class _NoCookies(httpx.Cookies):
    """A jar that keeps nothing a server sets."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class Client(httpx.Client):
    """httpx's client without a cookie jar. Each request carries exactly the identity its check names:
    a cookie set on owner-a's answer must not ride along on owner-b's request, where it could pass
    a cross-owner check on the server's session instead of on the credential sent. (httpx also
    builds a urllib request per answer to fill a jar, a measurable part of a state machine's step.)"""

    def __init__(self, **kwargs: Any):
        if kwargs.get("cookies"):
            raise ValueError("memconform's HTTP client sends no cookies")
        super().__init__(**kwargs)

    @property
    def cookies(self) -> httpx.Cookies:
        return _NO_COOKIES

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        if cookies:
            raise ValueError("memconform's HTTP client sends no cookies")


_NO_COOKIES = _NoCookies()


class HttpSession:
    """An httpx.Client that survives a server closing kept-alive connections.

    A server may close a kept-alive connection after an error answer (uvicorn does after an
    exception); the next request can race that close and be reset before the server read it. Such a
    request is sent again once on a fresh connection, and after any 5xx the pool starts afresh. A
    request the server resets twice, a timeout or a refused connection is a `TargetError` whose
    message starts with `what` (what was being sent, for the vendor reading it).

    Answers are read streamed: a body larger than `max_body`, or one still arriving `timeout`
    seconds after its headers, is a `TargetError` too (httpx's own timeout bounds each read, not
    a server trickling bytes)."""

    def __init__(self, *, timeout: float, base_url: str = "", max_body: int = MAX_BODY,
                 follow_redirects: bool = False):
        self.timeout = float(timeout)
        self.base_url = base_url
        self.max_body = int(max_body)
        self.follow_redirects = follow_redirects
        self._client = self._new_client()

    def _new_client(self) -> httpx.Client:
        return Client(base_url=self.base_url, timeout=self.timeout, follow_redirects=self.follow_redirects,
                      headers={"Accept": "application/json"}, verify=tls_context(), mounts=in_process.mounts())

    def _renew(self) -> None:
        old, self._client = self._client, self._new_client()
        old.close()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Request:
        return self._client.build_request(method, url, **kwargs)

    def send(self, request: httpx.Request, what: str | None = None) -> httpx.Response:
        what = what or f"{request.method} {request.url}"
        try:
            try:
                response = self._exchange(request, what)
            except _RESENDABLE:
                self._renew()
                response = self._exchange(request, what)
            for _ in range(RATE_RETRIES):
                if response.status_code != 429:
                    break
                time.sleep(retry_after(response))
                response = self._exchange(request, what)
            if response.status_code == 429:
                raise RateLimited(f"{what}: rate limited (HTTP 429, {first_bytes(response.content)}) after "
                                  f"{RATE_RETRIES} waits of up to {RATE_WAIT_CAP_S:g} s each: the answer to this "
                                  f"request was never given, so nothing is judged on it")
            if response.status_code >= 500:
                self._renew()
            return response
        except httpx.TimeoutException as exc:
            raise TargetError(f"{what}: no answer within {self.timeout:g} s ({type(exc).__name__})") from None
        except httpx.ConnectError as exc:
            raise TargetError(f"{what}: cannot connect ({exc or type(exc).__name__})") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise TargetError(f"{what}: the server closed the connection without a complete answer "
                              f"({type(exc).__name__}: {exc})") from None
        except httpx.TransportError as exc:
            raise TargetError(f"{what}: the connection failed ({type(exc).__name__}: {exc})") from None

    def _exchange(self, request: httpx.Request, what: str) -> httpx.Response:
        """Send, then read the body within the bounds; the answer comes back fully read."""
        response = self._client.send(request, stream=True)
        try:
            data = self._read_body(response, what)
        finally:
            response.close()
        # the body is decoded now: a fresh response without Content-Encoding carries it
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
        return httpx.Response(response.status_code, headers=headers, content=data, request=request,
                              extensions={k: v for k, v in response.extensions.items() if k == "http_version"})

    def _read_body(self, response: httpx.Response, what: str) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            raise self._too_large(response, what, b"", f"Content-Length {declared}")
        deadline = time.monotonic() + self.timeout
        data = bytearray()
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) > self.max_body:
                raise self._too_large(response, what, data, "it kept coming")
            if time.monotonic() > deadline:
                raise TargetError(f"{what}: the answer (HTTP {response.status_code}) was still arriving "
                                  f"{self.timeout:g} s after its headers ({len(data)} bytes so far: "
                                  f"{first_bytes(data)})")
        return bytes(data)

    def _too_large(self, response: httpx.Response, what: str, data: bytes, how: str) -> TargetError:
        head = f"; it began {bytes(data[:_HEAD])!r}…" if data else ""
        return TargetError(f"{what}: answered more than {size_text(self.max_body)} (HTTP {response.status_code}, "
                           f"Content-Type {response.headers.get('content-type')!r}, {how}{head}); memconform "
                           f"reads at most {size_text(self.max_body)} of an answer")

    def close(self) -> None:
        self._client.close()
