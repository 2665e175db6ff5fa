"""Issue 14, the UPP / JSON-RPC attacks on the reference server: ids no float holds (item 5), batches
that amplify (item 3), and the default export folder in the shared temporary folder (item 7).

Each over the service (`handle_text`), and where the binding matters over stdio (`stdio.run`, in
process) and HTTP (POST /upp, in a thread). No wall-clock assertion: the bounds are on counts and bytes.
"""

from __future__ import annotations

import io
import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memconform.reference_impl.upp import exports, rpc, service as upp_service, stdio
from memconform.reference_impl.upp.service import UppService

from .conftest import serving


@pytest.fixture
def upp(tmp_path: Path) -> Iterator[UppService]:
    s = UppService(export_dir=tmp_path / "exports")
    yield s
    s.close()


def _ask(s: UppService, message: Any) -> Any:
    text = s.handle_text(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return None if text is None else json.loads(text)


def _request(id_: Any, method: str = "upp/info", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})}


# -- item 5: ids that are no JSON-RPC id -------------------------------------------------------------

BAD_IDS = {"1e400": b"1e400", "-1e400": b"-1e400", "1e309": b"1e309", "object": b'{"a": 1}', "array": b"[1]",
           "true": b"true", "false": b"false"}


def _with_id(raw_id: bytes, method: str = "upp/info") -> bytes:
    return b'{"jsonrpc": "2.0", "id": ' + raw_id + b', "method": "' + method.encode() + b'"}'


@pytest.mark.parametrize("raw_id", BAD_IDS.values(), ids=BAD_IDS.keys())
def test_an_id_that_is_no_string_finite_number_or_null_is_an_invalid_request(
        upp: UppService, raw_id: bytes, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        alone = _ask(upp, _with_id(raw_id))
        batch = _ask(upp, b"[" + _with_id(raw_id) + b", " + json.dumps(_request(7)).encode() + b"]")
    assert alone["error"]["code"] == rpc.INVALID_REQUEST and alone["id"] is None, alone
    assert batch[0]["error"]["code"] == rpc.INVALID_REQUEST and batch[0]["id"] is None, batch
    assert batch[1]["id"] == 7 and "result" in batch[1], "the rest of the batch is still answered"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "no traceback logged"


def test_an_id_no_float_holds_runs_nothing(upp: UppService) -> None:
    """The request is refused before it runs: an ingest under id 1e400 stores nothing."""
    body = b'{"jsonrpc": "2.0", "id": 1e400, "method": "upp/ingest", ' \
           b'"params": {"entity_key": "inf-id", "text": "I live in Lisbon."}}'
    assert _ask(upp, body)["error"]["code"] == rpc.INVALID_REQUEST
    assert _ask(upp, _request(1, "upp/get_events", entity_key="inf-id"))["error"]["code"] == rpc.USER_NOT_FOUND


def test_finite_numbers_strings_and_null_stay_ids(upp: UppService) -> None:
    for id_ in (0, -1, 1.5, 1e300, "x", ""):
        assert _ask(upp, _request(id_))["id"] == id_
    assert _ask(upp, _request(None))["id"] is None


def test_over_stdio_an_infinite_id_is_an_invalid_request_and_the_loop_goes_on(tmp_path: Path) -> None:
    s = UppService(export_dir=tmp_path / "exports")
    out = io.BytesIO()
    lines = [_with_id(b"1e400"), _with_id(b"-1e400"), b"[" + _with_id(b"1e400") + b"]", json.dumps(_request(3)).encode()]
    stdio.run(s, io.BytesIO(b"\n".join(lines) + b"\n"), out)
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [a["error"]["code"] for a in answers[:2]] == [rpc.INVALID_REQUEST] * 2, answers
    assert answers[2][0]["error"]["code"] == rpc.INVALID_REQUEST, answers
    assert answers[3]["id"] == 3 and "result" in answers[3]


# -- item 3: batches bounded -------------------------------------------------------------------------

def _ingests(n: int, entity: str) -> list[dict[str, Any]]:
    return [_request(i, "upp/ingest", entity_key=entity, text=f"I live in Lisbon number {i}.") for i in range(n)]


def test_a_batch_over_the_limit_is_refused_whole_and_runs_nothing(tmp_path: Path) -> None:
    s = UppService(export_dir=tmp_path / "exports", max_batch=10)
    try:
        body = json.dumps(_ingests(11, "batch-over"))
        text = s.handle_text(body)
        assert text is not None and len(text) < 1000, "one small error object, not an array"
        answer = json.loads(text)
        assert isinstance(answer, dict) and answer["error"]["code"] == rpc.INVALID_REQUEST and answer["id"] is None
        assert "at most 10" in answer["error"]["message"]
        assert _ask(s, _request(1, "upp/get_events", entity_key="batch-over"))["error"]["code"] == rpc.USER_NOT_FOUND
        under = _ask(s, _ingests(10, "batch-under"))
        assert isinstance(under, list) and len(under) == 10 and all("result" in r for r in under), under
    finally:
        s.close()


def test_the_default_limit_refuses_the_amplifying_batch(upp: UppService) -> None:
    """The issue's attack, scaled down: 1,000 get_labels (about 40 KB of answer each) get one error."""
    body = json.dumps([_request(i, "upp/get_labels") for i in range(1000)])
    text = upp.handle_text(body)
    assert text is not None and len(text) < 1000 and json.loads(text)["error"]["code"] == rpc.INVALID_REQUEST
    full = _ask(upp, [_request(i, "upp/get_labels") for i in range(rpc.DEFAULT_MAX_BATCH)])
    assert len(full) == rpc.DEFAULT_MAX_BATCH and all("result" in r for r in full), "100 get_labels fit the defaults"


def test_once_the_answer_reaches_its_limit_the_rest_is_not_run(tmp_path: Path) -> None:
    one = len((UppService(export_dir=tmp_path / "e").handle_text(json.dumps(_request(0, "upp/get_labels"))) or "")
              .encode("utf-8"))
    s = UppService(export_dir=tmp_path / "exports", max_answer_bytes=2 * one + 10)
    try:
        batch = [_request(i, "upp/get_labels") for i in range(3)] + _ingests(2, "after-limit")
        batch.append({"jsonrpc": "2.0", "method": "upp/ingest", "params": {"entity_key": "note", "text": "I live in Oslo."}})
        text = s.handle_text(json.dumps(batch))
        assert text is not None and len(text) < 4 * one
        answers = json.loads(text)
        assert [("result" in a, a.get("error", {}).get("code")) for a in answers] == \
            [(True, None)] * 3 + [(False, rpc.NOT_RUN)] * 2, "the third crosses the limit; the rest is not run"
        assert [a["id"] for a in answers] == [0, 1, 2, 0, 1]
        for entity in ("after-limit", "note"):
            assert _ask(s, _request(1, "upp/get_events", entity_key=entity))["error"]["code"] == rpc.USER_NOT_FOUND
    finally:
        s.close()


def test_limits_below_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        UppService(export_dir=tmp_path, max_batch=0)


def test_over_http_an_oversized_batch_gets_a_bounded_answer(tmp_path: Path) -> None:
    from memconform.reference_impl.ump.service import UmpService

    with serving(UmpService(), upp=UppService(export_dir=tmp_path / "exports")) as running:
        body = json.dumps([_request(i, "upp/get_labels") for i in range(5000)]).encode()
        with httpx.Client(base_url=running.base_url, timeout=60) as c, \
                c.stream("POST", "/upp", content=body, headers={"Content-Type": "application/json"}) as r:
            received = b"".join(r.iter_bytes())
            assert len(received) < 1000, len(received)
            assert json.loads(received)["error"]["code"] == rpc.INVALID_REQUEST
            assert c.post("/upp", json=_request(1)).json()["result"]["protocol_version"] == "1.0.0"


def test_serve_has_the_flags() -> None:
    from click.testing import CliRunner

    from memconform.suite.cli import serve

    help_text = CliRunner().invoke(serve, ["--help"]).output
    assert "--upp-max-batch" in help_text and "--upp-max-answer" in help_text


def test_make_upp_service_passes_the_limits(tmp_path: Path) -> None:
    s = stdio.make_upp_service(export_dir=tmp_path, max_batch=3, max_answer_bytes=5000)
    try:
        assert json.loads(s.handle_text(json.dumps([_request(i) for i in range(4)])))["error"]["code"] == \
            rpc.INVALID_REQUEST
    finally:
        s.close()


# -- item 7: the default export folder ---------------------------------------------------------------

@pytest.fixture
def default_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shared-tmp" / "memconform-upp-exports-test"
    folder.parent.mkdir()
    monkeypatch.setattr(upp_service, "DEFAULT_EXPORT_DIR", folder)
    return folder


def test_the_default_export_folder_is_made_private(default_dir: Path) -> None:
    s = UppService()
    try:
        assert s.export_dir == default_dir
        assert stat.S_IMODE(os.stat(default_dir).st_mode) == 0o700
    finally:
        s.close()


def test_the_default_export_folder_name_is_per_user() -> None:
    if hasattr(os, "getuid"):
        assert exports.default_export_dir().name == f"memconform-upp-exports-{os.getuid()}"


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o770, 0o701])
def test_a_default_export_folder_others_can_use_is_refused(default_dir: Path, mode: int) -> None:
    default_dir.mkdir()
    os.chmod(default_dir, mode)
    with pytest.raises(exports.UnsafeFolder, match="mode"):
        UppService()
    with pytest.raises(SystemExit, match="refusing to use it"):
        stdio.make_upp_service()


def test_a_default_export_folder_that_is_a_symlink_is_refused(default_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir(mode=0o700)
    default_dir.symlink_to(elsewhere)
    with pytest.raises(exports.UnsafeFolder, match="symbolic link"):
        UppService()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_default_export_folder_of_another_user_is_refused(default_dir: Path) -> None:
    default_dir.mkdir(mode=0o700)
    os.chown(default_dir, 12345, 12345)
    with pytest.raises(exports.UnsafeFolder, match="belongs to uid 12345"):
        UppService()


def test_an_export_folder_the_server_makes_is_private(tmp_path: Path) -> None:
    s = UppService(export_dir=tmp_path / "made" / "exports")
    try:
        _ask(s, _request(1, "upp/ingest", entity_key="u", text="I live in Lisbon."))
        assert "result" in _ask(s, _request(2, "upp/export_events", entity_key="u"))
        assert stat.S_IMODE(os.stat(tmp_path / "made" / "exports").st_mode) == 0o700
    finally:
        s.close()
