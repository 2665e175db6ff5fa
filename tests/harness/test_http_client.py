"""The drivers' HTTP client: no cookie carries one check's identity into another request, and one
TLS context serves every client."""

from __future__ import annotations

import httpx
import pytest

from memconform.targets.http_session import Client, tls_context


def test_a_cookie_a_server_sets_is_never_sent_back():
    seen: list[str | None] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("cookie"))
        return httpx.Response(200, headers={"set-cookie": "session=owner-a; Path=/"}, json={})

    with Client(transport=httpx.MockTransport(server), base_url="http://127.0.0.1:1") as client:
        client.get("/ump/get", headers={"Authorization": "Bearer owner-a"})
        client.get("/ump/get", headers={"Authorization": "Bearer owner-b"})
        assert not client.cookies
    assert seen == [None, None]


def test_cookies_cannot_be_given_to_the_client():
    with pytest.raises(ValueError, match="no cookies"):
        Client(cookies={"session": "x"})


def test_every_client_shares_one_tls_context():
    assert tls_context() is tls_context()
