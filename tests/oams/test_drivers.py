"""targets/oams.py: discovery without side effects, the file client's kinds, and what a server of an
earlier draft is told (field by field, path by path)."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from memconform.reference_impl.oams.engine import OamsService
from memconform.reference_impl.oams.http import app
from memconform.reference_impl.ump.serve import start_in_thread
from memconform.suite.oams import model
from memconform.suite.outcomes import Outcome
from memconform.suite.registry import _REGISTRY
from memconform.suite.runner import run_check
from memconform.targets.oams import (OamsFileClient, OamsRestClient, discover_http, discover_rest, reference_part)


@pytest.fixture
def served():
    service = OamsService()
    server = start_in_thread(None, app=app(service))
    yield server.base_url.rstrip("/"), service
    server.stop()
    service.close()


def test_discovery_finds_the_reference_without_writing(served):
    base, service = served
    assert discover_rest(base) is None
    assert service.all_memories() == []
    part = discover_http(base, label="x", timeout=5)
    assert part is not None and [s.binding for s in part.subjects()] == ["http"]


def _server(routes):
    return start_in_thread(None, app=Starlette(routes=routes))


def test_discovery_says_why_not():
    server = _server([Route("/{p:path}", lambda r: PlainTextResponse("hello", status_code=404))])
    try:
        reason = discover_rest(server.base_url)
        assert reason is not None and "without JSON" in reason
    finally:
        server.stop()
    assert "cannot connect" in discover_rest("http://127.0.0.1:9")


def test_file_client_kinds(tmp_path):
    line = json.dumps({"key": "a", "namespace": "u:p", "value": "v", "created_at": "2026-01-01T00:00:00Z",
                       "updated_at": "2026-01-01T00:00:00Z"})
    (tmp_path / "store.jsonl").write_text(line + "\n")
    view = OamsFileClient(tmp_path / "store.jsonl").read()
    assert view.kind == "jsonl" and len(view.memories) == 1 and view.problems == ()
    (tmp_path / "m.md").write_text(model.render_markdown(view.memories))
    md = OamsFileClient(tmp_path / "m.md").read()
    assert md.kind == "markdown" and md.memories[0]["key"] == "a"


def test_reference_part_serves_every_binding():
    part = reference_part(label="reference", fault=None, variants=())
    try:
        assert [s.binding for s in part.subjects()] == ["http", "jsonrpc", "stdio", "file"]
        for s in part.subjects():
            client = part.client(s)
            if s.binding == "file":
                assert client.read().problems == ()
            else:
                assert client.store({"key": "k", "namespace": "a:b", "value": "v"}).ok, s.binding
        assert any("/v1/oams" in str(getattr(r, "path", "")) for r in part.routes())
    finally:
        part.close()


def _earlier_draft_app():
    """A server of an earlier draft: no route of 0.1 but a PUT that answers other field names and
    integer-millisecond times."""
    async def put(request):
        return JSONResponse({"id": request.path_params["key"], "content": "x", "created_at": 1767225600000,
                             "updated_at": 1767225600000})

    async def nothing(request):
        return JSONResponse({"detail": "Not Found"}, status_code=404)

    return Starlette(routes=[Route("/v1/oams/memories/{ns}/{key}", put, methods=["PUT"]),
                             Route("/{p:path}", nothing, methods=["GET", "POST", "DELETE", "PUT"])])


def test_an_earlier_draft_is_told_so_field_by_field():
    server = start_in_thread(None, app=_earlier_draft_app())
    try:
        check = _REGISTRY["oams/operations-served"]
        result = run_check(check, "0.1", "http", lambda: OamsRestClient(server.base_url), None)
        assert result.outcome is Outcome.FAILED
        text = " ".join(f.message for f in result.findings)
        assert "`key` expected (string): missing" in text
        assert "`created_at` expected an RFC 3339 UTC string: found 1767225600000" in text
        assert "POST /v1/oams/recall is not served" in text
        assert {f.requirement for f in result.findings} >= {"oams/five-operations", "oams/store-endpoint",
                                                             "oams/recall-endpoint", "oams/list-endpoint",
                                                             "oams/forget-endpoint", "oams/batch-endpoint"}
        assert discover_rest(server.base_url) is not None
    finally:
        server.stop()


def test_markdown_check_can_fail(tmp_path):
    check = _REGISTRY["oams/file-markdown"]
    memory = {"key": "a", "namespace": "u:p", "value": "v", "created_at": "2026-01-01T00:00:00Z",
              "updated_at": "2026-01-01T00:00:00Z"}
    good, bad = tmp_path / "good.md", tmp_path / "bad.md"
    good.write_text(model.render_markdown([memory]))
    bad.write_text("## key: a\n\n**namespace:** `u:p`\n**created:** yesterday\n\nv\n\n---\n")
    assert run_check(check, "0.1", "file", lambda: OamsFileClient(good), None).outcome is Outcome.PASSED
    result = run_check(check, "0.1", "file", lambda: OamsFileClient(bad), None)
    assert result.outcome is Outcome.FAILED and {f.requirement for f in result.findings} == {"oams/markdown-shape"}


def test_a_file_without_optional_members_leaves_their_rules_not_judged(tmp_path):
    """Absence is never evidence: a JSONL store whose one memory carries no tags, metadata, embedding
    or provenance passes the rules it shows, and leaves those about the members it lacks (and the
    (namespace, key) uniqueness one memory cannot break) not judged, never passed."""
    from memconform.reports.model import requirement_outcomes

    check = _REGISTRY["oams/file-memories"]
    bare = {"key": "a", "namespace": "u:p", "value": "v", "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z"}
    store = tmp_path / "bare.jsonl"
    store.write_bytes(model.render_jsonl([bare]))
    result = run_check(check, "0.1", "file", lambda: OamsFileClient(store), None)
    lacking = ["oams/tags-strings", "oams/metadata-object", "oams/embedding-model-required", "oams/embedding-floats",
               "oams/provenance-fields", "oams/ns-key-unique"]
    assert result.outcome is Outcome.PASSED and result.extra["not_judged"] == lacking, result.reason
    assert "holds no memory with tags (oams/tags-strings)" in result.reason
    reported = {"node_id": "n", "requirements": list(check.requirements), "outcome": "passed", "findings": [],
                "not_judged": result.extra["not_judged"]}
    assert set(requirement_outcomes([reported])) == set(check.requirements) - set(lacking)

    # the same store with the members: every rule judged; a bad one still fails
    full = dict(bare, key="b", tags=["x"], metadata={"confidence": 0.5}, embedding_model="m", embedding=[0.1],
                source_id=None)
    store.write_bytes(model.render_jsonl([bare, full]))
    result = run_check(check, "0.1", "file", lambda: OamsFileClient(store), None)
    assert result.outcome is Outcome.PASSED and not result.extra.get("not_judged"), result.extra
    store.write_bytes(model.render_jsonl([bare, dict(full, tags="x")]))
    result = run_check(check, "0.1", "file", lambda: OamsFileClient(store), None)
    assert {f.requirement for f in result.findings} == {"oams/tags-strings"}
    assert "oams/tags-strings" not in result.extra.get("not_judged", [])


def test_an_imported_summary_is_not_judged_as_a_consolidation_run(tmp_path):
    """§7 maps Zep summaries to memories with dream_strategy "compress" and no parent: a file keeping
    one as imported is not failed on §5's parent_id (a blind red team's was); a memory showing the run
    that made it (dream_inputs, dream_run_id) and no parent still is."""
    check = _REGISTRY["oams/file-consolidated"]
    base = {"namespace": "u:p", "value": "v", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
    zep = dict(base, key="zep-summary", metadata={"dream_strategy": "compress", "zep_role": "summary"})
    store = tmp_path / "imported.jsonl"
    store.write_bytes(model.render_jsonl([zep]))
    result = run_check(check, "0.1", "file", lambda: OamsFileClient(store), None)
    assert result.outcome is Outcome.SKIPPED and "dream_run_id" in result.reason, result.reason
    run = dict(base, key="made", metadata={"dream_strategy": "compress", "dream_inputs": [["u:p", "zep-summary"]],
                                           "dream_run_id": "7b1e3c2a-5d4f-4a6b-8c9d-0e1f2a3b4c5d"})
    store.write_bytes(model.render_jsonl([zep, run]))
    result = run_check(check, "0.1", "file", lambda: OamsFileClient(store), None)
    assert "oams/consolidated-parent-id" in {f.requirement for f in result.findings}, result.reason


def test_rpc_part_probe_and_sniffing(served, tmp_path):
    import sys

    from memconform.reference_impl.oams.bundle import main as bundle_main
    from memconform.targets.oams import OamsFilePart, OamsRpcPart, sniff_file

    base, _service = served
    part = OamsRpcPart("jsonrpc", base + "/v1/oams/rpc", label="x")
    try:
        assert part.probe() is None
        assert part.client(part.subjects()[0]).store({"key": "k", "namespace": "a:b", "value": "v"}).ok
    finally:
        part.close()
    stdio = OamsRpcPart("stdio", [sys.executable, "-m", "memconform.reference_impl.oams.rpc"], label="x")
    try:
        assert stdio.probe() is None
    finally:
        stdio.close()
    db = tmp_path / "store.db"
    assert bundle_main(["import", "--db", str(db), str(_jsonl(tmp_path))]) == 0
    assert bundle_main(["export", "--db", str(db), "--out", str(tmp_path / "out")]) == 0
    (folder,) = (tmp_path / "out").iterdir()
    assert sniff_file(folder) and sniff_file(tmp_path / "out") and sniff_file(_jsonl(tmp_path))
    file_part = OamsFilePart(folder, label="f")
    assert file_part.client(file_part.subjects()[0]).read().problems == ()
    (tmp_path / "ump.jsonl").write_text('{"ump": "1.0", "id": "x"}\n')
    assert not sniff_file(tmp_path / "ump.jsonl")


def _jsonl(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"key": "a", "namespace": "u:p", "value": "v", "source_id": "x-unknown:1",
                                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}) + "\n")
    return path


def test_cli_export_import_validate(tmp_path):
    from click.testing import CliRunner

    from memconform.suite.oams.cli import oams

    runner = CliRunner()
    db = tmp_path / "a.db"
    result = runner.invoke(oams, ["import", "--db", str(db), str(_jsonl(tmp_path))])
    assert result.exit_code == 0 and json.loads(result.output)["imported"] == 1
    result = runner.invoke(oams, ["export", "--db", str(db), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    folder = result.output.strip()
    result = runner.invoke(oams, ["validate", folder])
    assert result.exit_code == 0 and "0 problem(s)" in result.output, result.output
    (tmp_path / "bad.jsonl").write_text('{"key": 1}\n')
    result = runner.invoke(oams, ["validate", str(tmp_path / "bad.jsonl")])
    assert result.exit_code == 1 and "oams/key-required" in result.output


@pytest.mark.parametrize("answer, link, cursor", [
    ({"memories": [], "next_cursor": "c1"}, None, "c1"),
    ({"items": [], "cursor": None}, None, None),
    ({"memories": [], "nextCursor": "c2"}, None, "c2"),
    ({"items": [], "next_page_token": "c3"}, None, "c3"),
    ({"data": [], "continuationToken": "c4"}, None, "c4"),
    ({"memories": [], "next": "/v1/oams/memories/ns?limit=2&cursor=c%2F5"}, None, "c/5"),
    ({"memories": [], "token_count": 7}, None, None),  # a number named "token…" is no cursor
    ([], "/v1/oams/memories/a%3Ab?limit=2&cursor=c6", "c6"),
    ([], None, None),
])
def test_list_cursor_is_read_under_any_usual_name_and_from_a_link_header(answer, link, cursor):
    """§3 names the request's `cursor=` and no answer member: a server's own spelling, or a Link
    rel="next" header, must not read as "last page"."""
    from memconform.suite.oams.client import OamsReply

    reply = OamsReply("list", "http", "GET", None, 200, None, answer, True, answer, link_next=link)
    assert reply.cursor() == cursor
