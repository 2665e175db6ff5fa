"""One HTTP connection pool for a driver, shared by every driver that speaks HTTP (UMP, UPP's
JSON-RPC, OMF): httpx underneath, bounded waits, and transport failures as `TargetError`."""

from __future__ import annotations

from typing import Any

import httpx

from memconform.suite.outcomes import TargetError


class HttpSession:
    """An httpx.Client that survives a server closing kept-alive connections.

    A server may close a kept-alive connection after an error answer (uvicorn does after an
    exception); the next request can race that close and be reset before the server read it. Such a
    request is sent again once on a fresh connection, and after any 5xx the pool starts afresh. A
    request the server resets twice, a timeout or a refused connection is a `TargetError` whose
    message starts with `what` (what was being sent, for the vendor reading it)."""

    def __init__(self, *, timeout: float, base_url: str = ""):
        self.timeout = float(timeout)
        self.base_url = base_url
        self._client = self._new_client()

    def _new_client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=self.timeout, follow_redirects=False,
                            headers={"Accept": "application/json"})

    def _renew(self) -> None:
        old, self._client = self._client, self._new_client()
        old.close()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Request:
        return self._client.build_request(method, url, **kwargs)

    def send(self, request: httpx.Request, what: str | None = None) -> httpx.Response:
        what = what or f"{request.method} {request.url}"
        try:
            try:
                response = self._client.send(request)
            except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
                self._renew()
                response = self._client.send(request)
            if response.status_code >= 500:
                self._renew()
            return response
        except httpx.TimeoutException as exc:
            raise TargetError(f"{what}: no answer within {self.timeout:g} s ({type(exc).__name__})") from None
        except httpx.ConnectError as exc:
            raise TargetError(f"{what}: cannot connect ({exc or type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise TargetError(f"{what}: the connection failed ({type(exc).__name__}: {exc})") from None

    def close(self) -> None:
        self._client.close()
