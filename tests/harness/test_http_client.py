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


def _session_answering(answers: list[httpx.Response]):
    from memconform.targets.http_session import HttpSession

    sent: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request.content.decode())
        return answers.pop(0) if len(answers) > 1 else answers[0]

    session = HttpSession(timeout=5.0)
    session._client.close()
    session._client = Client(transport=httpx.MockTransport(server), base_url="http://127.0.0.1:1")
    return session, sent


def test_a_rate_limit_is_waited_out_and_the_request_sent_again():
    # a blind red team's server limited each token to 30 requests/s (UMP §3.7's rate_limited): every
    # 429 was judged as the answer, and 20 unrelated MUSTs failed
    limited = httpx.Response(429, headers={"Retry-After": "0"}, json={"error": {"code": "rate_limited", "message": "slow"}})
    session, sent = _session_answering([limited, limited, httpx.Response(200, json={"ok": True})])
    response = session.send(session.request("POST", "/ump/recall", content=b'{"query": "x"}'), "POST /ump/recall")
    assert response.status_code == 200 and sent == ['{"query": "x"}'] * 3


def test_a_server_that_keeps_answering_429_is_a_target_error_never_a_verdict():
    from memconform.targets.http_session import RATE_RETRIES, RateLimited

    session, sent = _session_answering([httpx.Response(429, headers={"Retry-After": "0"}, text="slow down")])
    with pytest.raises(RateLimited, match=r"POST /ump/recall: rate limited \(HTTP 429"):
        session.send(session.request("POST", "/ump/recall", content=b"{}"), "POST /ump/recall")
    assert len(sent) == RATE_RETRIES + 1 and RateLimited.transport_failure is False
