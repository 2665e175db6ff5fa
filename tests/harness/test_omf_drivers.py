"""The OMF drivers: the CLI driver against a fake implementation (a small script run with this
interpreter), the HTTP driver against a tiny starlette app on 127.0.0.1, `file:` for OMF and UMP,
descriptors that start a server, and the reference target's OMF subjects."""

from __future__ import annotations

import json
import socket
import sys
import textwrap
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memconform.suite.outcomes import TargetError
from memconform.targets.cli import OmfCliTarget, last_json_object
from memconform.targets.descriptor import DescriptorDriver, OmfCli, Template
from memconform.targets.omf_http import OmfHttpTarget

DOC = {"omf": "1.0", "exported_at": "2026-01-01T00:00:00Z", "source": {"app": "fake"},
       "memories": [{"id": "m1", "content": "hello"}]}

FAKE = textwrap.dedent('''
    import json, sys, time
    mode, op, *args = sys.argv[1:]
    flags = dict(zip(args[::2], args[1::2]))
    if mode == "hang":
        print("working", flush=True)
        print("stuck here", file=sys.stderr, flush=True)
        time.sleep(60)
    if mode == "crash":
        print("Traceback: boom", file=sys.stderr)
        sys.exit(3)
    if mode == "garbage":
        print("this is not JSON {oops")
        sys.exit(0)
    if op == "export":
        doc = json.dumps(%s, indent=2)
        if "--output" in flags:
            open(flags["--output"], "w").write(doc)
            print("log: exporting")  # log lines before the result must not matter
            print(json.dumps({"exported": 1, "output": flags["--output"], "flags": flags}))
        else:
            print(doc)
    else:
        text = open(flags["--input"]).read() if "--input" in flags else sys.stdin.read()
        try:
            json.loads(text)
        except ValueError:
            print(json.dumps({"error": {"code": "validation", "message": "not JSON"}}))
            sys.exit(2)
        print(json.dumps({"imported": 1, "duplicates": 0, "skipped": 0, "flags": flags, "len": len(text)}))
''' % repr(DOC))


@pytest.fixture()
def fake(tmp_path):
    script = tmp_path / "fake_omf.py"
    script.write_text(FAKE, encoding="utf-8")
    return script


def cli_target(script: Path, mode: str, *, to_file: bool = True, timeout: float = 20.0) -> OmfCliTarget:
    file_out = " --output {file}" if to_file else ""
    file_in = " --input {file}" if to_file else ""
    cli = OmfCli(
        export=Template.parse("{python} {script} {mode} export --tenant-id {tenant} "
                              "{project?--project-id {project}}" + file_out
                              + " {include_history?--include-history {include_history}}"),
        import_=Template.parse("{python} {script} {mode} import --tenant-id {tenant}" + file_in
                               + " {fuzzy_threshold?--fuzzy-threshold {fuzzy_threshold}} --dry-run {dry_run}"))
    return OmfCliTarget(cli, {"script": str(script), "mode": mode}, timeout=timeout)


# -- the CLI driver ------------------------------------------------------------------------------

def test_cli_good_export_reads_the_file_and_the_last_json_object(fake):
    t = cli_target(fake, "good")
    try:
        run = t.export("tenant one", project=None, include_history=False)
        assert run.ok and run.exit_code == 0 and run.operation == "export"
        assert run.parsed_document() == DOC
        assert run.result["exported"] == 1
        assert run.result["flags"]["--tenant-id"] == "tenant one"  # one argument despite the space
        assert run.result["flags"]["--include-history"] == "false"
        assert "--project-id" not in run.result["flags"]
        assert "'tenant one'" in run.sent and "log: exporting" in run.stdout
        assert Path(run.result["output"]).parent == t.workdir
    finally:
        t.close()
    assert not t.workdir.exists()


def test_cli_import_writes_the_document_exactly_and_passes_flags(fake):
    t = cli_target(fake, "good")
    try:
        raw = b'{"omf": "1.0"}\n  '
        run = t.import_document("t", raw, fuzzy_threshold=0.5)
        assert run.ok and run.operation == "import"
        assert run.result["len"] == len(raw) and run.result["flags"]["--dry-run"] == "false"
        assert run.result["flags"]["--fuzzy-threshold"] == "0.5"
        preview = t.import_document("t", json.dumps(DOC), dry_run=True)
        assert preview.operation == "preview" and preview.result["flags"]["--dry-run"] == "true"
    finally:
        t.close()


def test_cli_a_refused_document_is_an_answer_not_an_exception(fake):
    t = cli_target(fake, "good")
    try:
        run = t.import_document("t", "{not json")
        assert not run.ok and run.exit_code == 2
        assert run.result == {"error": {"code": "validation", "message": "not JSON"}}
        assert "validation" in run.error and "exit 2" in run.describe()
    finally:
        t.close()


def test_cli_without_file_uses_stdin_and_stdout(fake):
    t = cli_target(fake, "good", to_file=False)
    try:
        run = t.export("t")
        assert run.ok and run.parsed_document() == DOC and run.result == DOC
        run = t.import_document("t", json.dumps(DOC))
        assert run.ok and run.result["imported"] == 1 and "--input" not in run.result["flags"]
    finally:
        t.close()


def test_cli_crash_keeps_exit_code_and_stderr(fake):
    t = cli_target(fake, "crash")
    try:
        run = t.export("t")
        assert not run.ok and run.exit_code == 3 and run.result is None and run.document is None
        assert "boom" in run.stderr and "boom" in run.error
    finally:
        t.close()


def test_cli_garbage_output_is_no_result(fake):
    t = cli_target(fake, "garbage")
    try:
        # exit 0 without the JSON result: not the protocol at all (targets/answers.py), no verdict
        with pytest.raises(TargetError, match="exited 0 without printing a JSON result.*oops"):
            t.import_document("t", json.dumps(DOC))
    finally:
        t.close()


def test_cli_hang_is_a_target_error_with_what_ran_and_stderr(fake):
    t = cli_target(fake, "hang", timeout=1.5)
    try:
        with pytest.raises(TargetError, match=r"did not finish within 1.5 s.*stuck here") as info:
            t.export("t")
        assert "fake_omf.py hang export" in str(info.value)
    finally:
        t.close()


def test_cli_command_not_found(tmp_path):
    cli = OmfCli(Template.parse("/nonexistent/memd export-omf --tenant-id {tenant}"),
                 Template.parse("/nonexistent/memd import-omf --tenant-id {tenant} --input {file}"))
    t = OmfCliTarget(cli)
    try:
        with pytest.raises(TargetError, match="command not found: '/nonexistent/memd'"):
            t.import_document("t", "{}")
    finally:
        t.close()


@pytest.mark.parametrize("stdout, expected", [
    ('{"a": 1}', {"a": 1}),
    ('log\n{"a": 1}\nmore log\n', {"a": 1}),
    ('{"a": 1}\n{"b": 2}\n', {"b": 2}),
    (json.dumps({"items": [{"x": 1}, {"y": 2}]}, indent=2) + "\n", {"items": [{"x": 1}, {"y": 2}]}),
    ("no json here", None),
    ("[1, 2]", None),
    ('{"broken": \n', None),
])
def test_last_json_object(stdout, expected):
    assert last_json_object(stdout) == expected


# -- the HTTP driver -----------------------------------------------------------------------------

@pytest.fixture()
def omf_app():
    seen: list[dict] = []

    async def export(request: Request):
        body = await request.json()
        seen.append({"path": "export", "body": body})
        return JSONResponse(DOC)

    async def imp(request: Request):
        raw = await request.body()
        seen.append({"path": request.url.path, "query": dict(request.query_params), "raw": raw})
        try:
            json.loads(raw)
        except ValueError:
            return JSONResponse({"error": {"code": "validation", "message": "not JSON"}}, status_code=400)
        return JSONResponse({"imported": 1, "duplicates": 0, "skipped": 0})

    app = Starlette(routes=[Route("/omf/export", export, methods=["POST"]),
                            Route("/omf/import", imp, methods=["POST"]),
                            Route("/omf/preview", imp, methods=["POST"])])
    from memconform.reference_impl.ump.serve import start_in_thread

    server = start_in_thread(None, app=app)
    try:
        yield server.base_url, seen
    finally:
        server.stop()


def test_http_routes_and_answers(omf_app):
    base_url, seen = omf_app
    t = OmfHttpTarget(base_url + "/", timeout=5)
    try:
        run = t.export("t", include_history=True, include_expired=False)
        assert run.ok and run.http_status == 200 and run.parsed_document() == DOC and run.result == DOC
        assert seen[-1]["body"] == {"tenant_id": "t", "include_history": True, "include_expired": False}
        run = t.import_document("t 1", b'{"omf":"1.0"}', include_archived=True, fuzzy_threshold=0.8)
        assert run.ok and run.result["imported"] == 1 and run.document is None
        assert seen[-1]["path"] == "/omf/import" and seen[-1]["raw"] == b'{"omf":"1.0"}'
        assert seen[-1]["query"] == {"tenant_id": "t 1", "include_archived": "true", "fuzzy_threshold": "0.8"}
        run = t.import_document("t", "{bad", dry_run=True)
        assert run.operation == "preview" and not run.ok and run.http_status == 400
        assert seen[-1]["path"] == "/omf/preview" and "validation" in run.error
    finally:
        t.close()


def test_http_connection_refused_is_a_target_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: nothing answers there
        t = OmfHttpTarget(f"http://127.0.0.1:{port}", timeout=2)
        try:
            with pytest.raises(TargetError, match="cannot connect"):
                t.export("t")
        finally:
            t.close()


# -- descriptors that start a server -------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_descriptor_starts_and_stops_its_server(tmp_path):
    port = _free_port()
    path = tmp_path / "served.toml"
    path.write_text(textwrap.dedent(f'''
        name = "served"
        specs = ["omf@1.0"]
        [omf.http]
        base_url = "http://127.0.0.1:{port}"
        [start]
        command = "{{python}} -m http.server {port} --bind 127.0.0.1 --directory {{workdir}}"
        ready_timeout = 20
    '''), encoding="utf-8")
    driver = DescriptorDriver.open(path)
    try:
        [subject] = driver.described_subjects()
        client = driver.client(subject)
        proc = driver._server
        assert proc is not None and proc.poll() is None
        # http.server answers POST with an HTML 501: not OMF at all (targets/answers.py)
        with pytest.raises(TargetError, match="HTTP 501 .* without the spec's error envelope"):
            client.export("t")
    finally:
        driver.close()
    assert proc.poll() is not None


def test_descriptor_server_that_dies_is_a_target_error(tmp_path):
    path = tmp_path / "dies.toml"
    path.write_text(textwrap.dedent(f'''
        name = "dies"
        specs = ["omf@1.0"]
        [omf.http]
        base_url = "http://127.0.0.1:{_free_port()}"
        [start]
        command = "{{python}} -c 'import sys; print(\\"no licence\\"); sys.exit(4)'"
    '''), encoding="utf-8")
    driver = DescriptorDriver.open(path)
    try:
        with pytest.raises(TargetError, match=r"exited with 4 .*no licence"):
            driver.client(driver.subjects()[0])
    finally:
        driver.close()


# -- file: targets -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["vendor.omf.json", "export.json"])
def test_file_target_with_an_omf_document(tmp_path, name):
    from memconform.targets import open_driver

    path = tmp_path / name
    path.write_text(json.dumps(DOC), encoding="utf-8")
    driver = open_driver(f"file:{path}")
    [subject] = driver.subjects()
    assert (subject.spec, subject.version, subject.binding) == ("omf", "1.0", "file")
    client = driver.client(subject)
    assert client.binding == "file" and client.documents() == [(str(path), json.dumps(DOC))]
    driver.close()


def test_file_target_with_a_folder_of_omf_documents(tmp_path):
    from memconform.targets import open_driver

    for n in (1, 2):
        (tmp_path / f"e{n}.omf.json").write_text(json.dumps(DOC), encoding="utf-8")
    driver = open_driver(f"file:{tmp_path}")
    assert [s.spec for s in driver.subjects()] == ["omf"]
    assert len(driver.client(driver.subjects()[0]).documents()) == 2


def test_file_target_with_ump_keeps_working(tmp_path):
    from memconform.suite.ump.corpus import export_corpus
    from memconform.suite.ump import files
    from memconform.targets import open_driver

    path = tmp_path / "export.ump.json"
    path.write_text(files.dump_json(export_corpus("1.0")), encoding="utf-8")
    plain = tmp_path / "plain.json"  # a .json that is not OMF stays UMP
    plain.write_text(files.dump_json(export_corpus("1.0")), encoding="utf-8")
    for p in (path, plain):
        driver = open_driver(f"file:{p}")
        assert {(s.spec, s.binding) for s in driver.subjects()} == {("ump", "file")}
        assert driver.client(driver.subjects()[0]).exported().records


# -- the reference target's OMF subjects ---------------------------------------------------------

def test_reference_offers_omf_over_cli_and_http():
    from memconform.targets import open_driver

    driver = open_driver("reference")
    try:
        subjects = [s for s in driver.subjects() if s.spec == "omf"]
        assert [(s.version, s.binding) for s in subjects] == [("1.0", "cli"), ("1.0", "http")]
        for s in subjects:
            client = driver.client(s)
            run = client.export("fresh-tenant", include_history=True)
            assert run.ok, run.describe()
            assert run.parsed_document()["omf"] == "1.0"
            refused = client.import_document("fresh-tenant", "{not json")
            assert not refused.ok, refused.describe()
    finally:
        driver.close()


def test_reference_omf_fault_goes_to_the_cli_commands():
    from memconform.reference_impl.faults import FAULTS
    from memconform.targets import open_driver

    fault = next((name for name, f in FAULTS.items() if f.spec == "omf"), None)
    if fault is None:
        pytest.skip("no omf-… fault defined yet")
    driver = open_driver(f"reference?fault={fault}")
    try:
        cli = driver.client(next(s for s in driver.subjects() if s.spec == "omf" and s.binding == "cli"))
        assert cli.cli.export.text.endswith(f"--fault {fault}")
        ump = [s for s in driver.subjects() if s.spec == "ump"]
        assert ump  # other specs still offered, without the OMF fault
    finally:
        driver.close()


def test_shipped_reference_descriptor_round_trip():
    from memconform.targets import open_driver

    driver = open_driver("reference.toml")
    try:
        [subject] = driver.subjects()
        client = driver.client(subject)
        run = client.export("t")
        assert run.ok, run.describe()
        assert Path(run.result["output"]).parent == driver.workdir
        again = client.import_document("t2", run.document, dry_run=True)
        assert again.ok, again.describe()
    finally:
        driver.close()


def test_omf_faults_route_to_omf_cli_and_http_only(monkeypatch):
    from memconform.reference_impl.faults import Fault, of_spec
    from memconform.targets import reference

    monkeypatch.setitem(of_spec("omf"), "omf-fake", Fault("omf-fake", "omf", "an OMF engine fault", ("omf/x",),
                                                            since="1.0"))
    every = {(spec, b) for spec in ("ump", "upp", "omf") for b in ("file", "http", "mcp", "stdio", "cli")}
    shows = {(spec, b) for spec, b in every if reference._fault_shows_on("omf-fake", b, spec) == "omf-fake"}
    assert shows == {("omf", "cli"), ("omf", "http")}
    descriptor, cli = reference.omf_cli("omf-fake")
    assert cli.import_.text.endswith("--fault omf-fake") and not descriptor.cli.import_.text.endswith("omf-fake")
