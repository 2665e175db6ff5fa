"""Target descriptors: template expansion (quoting, optional parts, errors) and loading."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memconform.suite.outcomes import TargetError

from memconform.targets.descriptor import (
    SHIPPED, DescriptorDriver, DescriptorError, Template, load_descriptor,
)


def expand(text: str, **values) -> str:
    return Template.parse(text).expand(values)


@pytest.mark.parametrize("text, values, expected", [
    ("run {tenant}", {"tenant": "t1"}, "run t1"),
    ("run {tenant}", {"tenant": "a b"}, "run 'a b'"),
    ("run {tenant}", {"tenant": "x'; rm -rf /"}, "run 'x'\"'\"'; rm -rf /'"),
    ("run {flag}", {"flag": True}, "run true"),
    ("run {flag}", {"flag": False}, "run false"),
    ("run {f}", {"f": 0.85}, "run 0.85"),
    ("run {project?--project-id {project}} end", {"project": "p 1"}, "run --project-id 'p 1' end"),
    ("run {project?--project-id {project}} end", {"project": None}, "run  end"),
    ("run {project?--project-id {project}} end", {"project": ""}, "run  end"),
    ("run {flag?--flag {flag}}", {"flag": False}, "run --flag false"),  # False is set: only None is not
    ("literal {{braces}}", {}, "literal {braces}"),
])
def test_expansion(text, values, expected):
    assert expand(text, **values) == expected


def test_a_value_with_spaces_and_quotes_stays_one_argument():
    nasty = "it's a \"tenant\" with $HOME and ;"
    assert Template.parse("cmd --tenant-id {tenant} --x").argv({"tenant": nasty}) == ["cmd", "--tenant-id", nasty, "--x"]


def test_names_include_those_inside_optional_parts():
    assert Template.parse("a {x?--x {y}} {z}").names == {"x", "y", "z"}


@pytest.mark.parametrize("text, match", [
    ("run {tenant", "not closed"),
    ("run {}", "not followed by a name"),
    ("run {project?--p {project}", "never closed"),
    ("run }", "lone"),
    ("run {a-b}", "not closed"),
])
def test_bad_templates(text, match):
    with pytest.raises(DescriptorError, match=match):
        Template.parse(text, "here")


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """\
name = "fake"
specs = ["omf@1.0"]
known_deviations = ["OMF-X", { requirement = "OMF-Y", reason = "because" }]
[omf.cli]
export = "tool export --db {db} --tenant-id {tenant} {project?--project-id {project}} --output {file}"
import = "tool import --db {db} --tenant-id {tenant} --input {file} --dry-run {dry_run}"
[omf.vars]
db = "{workdir}/s.sqlite"
[omf.http]
base_url = "http://127.0.0.1:8700/"
"""


def test_a_good_descriptor_loads(tmp_path):
    d = load_descriptor(write(tmp_path, GOOD))
    assert d.name == "fake" and d.specs == (("omf", "1.0"),)
    assert d.http_base_url == "http://127.0.0.1:8700"
    assert [x.requirement for x in d.known_deviations] == ["OMF-X", "OMF-Y"]
    values = d.var_values(tmp_path / "w d")
    assert values["db"] == f"{tmp_path}/w d/s.sqlite" and values["python"] == sys.executable
    argv = d.cli.export.argv({**values, "tenant": "t", "project": None, "file": "/f"})
    assert argv == ["tool", "export", "--db", f"{tmp_path}/w d/s.sqlite", "--tenant-id", "t", "--output", "/f"]


def test_an_unknown_name_is_an_error_naming_the_line(tmp_path):
    text = GOOD.replace("--input {file}", "--input {fiel}")
    with pytest.raises(DescriptorError, match=r"line 6 \(omf.cli.import\).*\{fiel\}.*known here"):
        load_descriptor(write(tmp_path, text))


def test_an_export_only_name_is_unknown_in_import(tmp_path):
    text = GOOD.replace("--dry-run {dry_run}", "{project?--project-id {project}}")
    with pytest.raises(DescriptorError, match=r"omf.cli.import.*\{project\}"):
        load_descriptor(write(tmp_path, text))


@pytest.mark.parametrize("change, match", [
    (("specs = [\"omf@1.0\"]", "specs = [\"omf@2.0\"]"), "known versions of omf"),
    (("specs = [\"omf@1.0\"]", "specs = [\"ump@1.0\"]"), r"no \[ump.http\] or \[ump.mcp\] section"),
    (("specs = [\"omf@1.0\"]", "specs = [\"xmp@1.0\"]"), "descriptors can drive ump, upp, omf"),
    (("specs = [\"omf@1.0\"]", "specs = []"), "specs must be a list"),
    (("import = ", "importt = "), r"unknown key\(s\) \['importt'\]"),
    (("base_url = \"http://127.0.0.1:8700/\"", "base_url = \"127.0.0.1:8700\""), r"line 10 \(omf.http.base_url\).*http:// or https:// URL"),
    (("db = ", "tenant = "), "may not redefine"),
    (("name = \"fake\"", "name = \"fake\"\ncolour = 1"), "unknown key"),
    (("[omf.vars]", "[omf.vars]\nx = \"{nope}\""), r"omf.vars.x.*\{nope\}"),
    (("name = \"fake\"", "name = \"fake"), "not valid TOML"),
])
def test_bad_descriptors(tmp_path, change, match):
    with pytest.raises(DescriptorError, match=match):
        load_descriptor(write(tmp_path, GOOD.replace(*change)))


def test_a_missing_descriptor(tmp_path):
    with pytest.raises(DescriptorError, match="cannot read descriptor"):
        load_descriptor(tmp_path / "nope.toml")


def test_omf_needs_a_way_to_reach_it(tmp_path):
    with pytest.raises(DescriptorError, match=r"no \[omf.cli\] or \[omf.http\]"):
        load_descriptor(write(tmp_path, 'name = "x"\nspecs = ["omf@1.0"]\n'))


def test_the_shipped_descriptors_load_and_use_memds_flags():
    ref = load_descriptor(SHIPPED / "reference.toml")
    memd = load_descriptor(SHIPPED / "memd.example.toml")
    assert ref.cli and memd.cli
    values = {"tenant": "t", "project": "p", "include_history": True, "include_superseded": None,
              "include_expired": False, "file": "/out", "workdir": "/w", "python": "py"}
    assert shlex.join(memd.cli.export.argv(values)) == (
        "memd export-omf --tenant-id t --project-id p --output /out --include-history true --include-expired false")
    imp = memd.cli.import_.argv({**values, "include_archived": None, "fuzzy_threshold": 0.9, "dry_run": True})
    assert shlex.join(imp) == "memd import-omf --tenant-id t --input /out --fuzzy-threshold 0.9 --dry-run true"


def test_driver_subjects_follow_the_sections(tmp_path):
    both = DescriptorDriver.open(write(tmp_path, GOOD), label="t.toml")
    assert [(s.spec, s.version, s.binding) for s in both.described_subjects()] == [("omf", "1.0", "cli"),
                                                                                  ("omf", "1.0", "http")]
    assert both.describe()["known_deviations"][1] == {"requirement": "OMF-Y", "reason": "because"}
    both.close()
    cli_only = GOOD.split("[omf.http]")[0]
    only = DescriptorDriver.open(write(tmp_path, cli_only, "c.toml"))
    assert [s.binding for s in only.subjects()] == ["cli"]  # the command line is not run to probe it
    only.close()


def test_a_mandatory_name_without_a_value_is_a_target_error_saying_how_to_fix_it():
    with pytest.raises(TargetError, match=r"\{project\} has no value.*\{project\?--flag \{project\}\}"):
        Template.parse("x --project-id {project}", "t.toml line 3").argv({"project": None})


# -- format v2: UMP/UPP bindings, {port}, [start] and [stop] -----------------------------------------

SERVERS = Path(__file__).parent / "descriptor_servers"
ECHO = SERVERS / "echo_server.py"
STOP = SERVERS / "stop_server.py"

V2 = """\
name = "v2"
specs = ["ump@0.1", "ump@1.0", "upp@1.0.0", "omf@1.0"]
[vars]
db = "{workdir}/store.sqlite"
[start]
command = "srv --port {port} --db {db}"
cwd = "{workdir}"
env = { SRV_DB = "{db}", SRV_LEVEL = 3 }
ready_line = "listening on .*{port}"
ready_timeout = 12
[stop]
command = "srv stop --port {port}"
timeout = 7
grace = 2
[ump.http]
base_url = "http://127.0.0.1:{port}/"
[ump.mcp]
url = "http://127.0.0.1:{port}/mcp"
[upp.http]
url = "http://127.0.0.1:{port}/upp"
[upp.stdio]
command = "srv --upp-stdio --db {db}"
[omf.http]
base_url = "http://127.0.0.1:{port}"
"""


def test_a_v2_descriptor_loads_with_one_port_everywhere(tmp_path):
    d = load_descriptor(write(tmp_path, V2))
    port = d.port
    assert isinstance(port, int) and 0 < port < 65536
    assert d.specs == (("ump", "0.1"), ("ump", "1.0"), ("upp", "1.0.0"), ("omf", "1.0"))
    assert [(b.spec, b.binding, b.shown) for b in d.bindings] == [
        ("ump", "http", f"http://127.0.0.1:{port}"), ("ump", "mcp", f"http://127.0.0.1:{port}/mcp"),
        ("upp", "http", f"http://127.0.0.1:{port}/upp"), ("upp", "stdio", "srv --upp-stdio --db {db}")]
    assert d.http_base_url == f"http://127.0.0.1:{port}"
    values = d.var_values(tmp_path)
    assert d.start.command.argv(values) == ["srv", "--port", str(port), "--db", f"{tmp_path}/store.sqlite"]
    assert {k: t.expand_raw(values) for k, t in d.start.env.items()} == {
        "SRV_DB": f"{tmp_path}/store.sqlite", "SRV_LEVEL": "3"}
    assert d.start.ready.line == f"listening on .*{port}" and d.start.ready.url is None
    assert d.start.ready.timeout == 12.0
    assert d.stop.command.argv(values) == ["srv", "stop", "--port", str(port)] and d.stop.timeout == 7.0
    assert d.stop.grace == 2.0


def test_the_port_is_free_and_only_chosen_when_named(tmp_path):
    import socket

    d = load_descriptor(write(tmp_path, V2))
    with socket.socket() as s:
        s.bind(("127.0.0.1", d.port))  # nobody listens there
    assert load_descriptor(write(tmp_path, GOOD, "g.toml")).port is None
    assert "port" not in load_descriptor(write(tmp_path, GOOD, "g.toml")).var_values(tmp_path)


def test_v2_subjects_follow_specs_and_sections_without_starting_anything(tmp_path):
    driver = DescriptorDriver.open(write(tmp_path, V2), label="v2.toml")
    titles = [s.title for s in driver.described_subjects()]  # subjects() starts the server to probe it
    assert titles == ["UMP 0.1 / http", "UMP 0.1 / mcp", "UMP 1.0 / http", "UMP 1.0 / mcp",
                      "UPP 1.0.0 / http", "UPP 1.0.0 / stdio", "OMF 1.0 / http"]
    info = driver.describe()
    assert info["start"]["command"].startswith("srv --port {port}") and "pid" not in info["start"]
    assert info["start"]["readiness"] == {"line": f"listening on .*{driver.descriptor.port}", "timeout": 12.0}
    assert info["start"]["env"] == ["SRV_DB", "SRV_LEVEL"] and info["start"]["port"] == driver.descriptor.port
    assert driver.server is None and driver._tmp is None  # noqa: SLF001 - describing made no folder either
    driver.close()


def test_the_ready_url_defaults_to_the_first_http_binding(tmp_path):
    text = V2.replace('ready_line = "listening on .*{port}"\n', "")
    d = load_descriptor(write(tmp_path, text))
    assert d.start.ready.url == f"http://127.0.0.1:{d.port}" and d.start.ready.line is None


V2_BAD = [
    # (what to change, the key the message must name)
    (("ready_timeout = 12", "ready_timeout = 12\nready_urll = \"http://x\""), "start.ready_urll"),
    (("grace = 2", "grace = 2\nsignal = \"INT\""), "stop.signal"),
    (("grace = 2", "grace = 0"), "stop.grace"),
    (("timeout = 7", "timeout = \"7\""), "stop.timeout"),
    (("ready_timeout = 12", "ready_timeout = -1"), "start.ready_timeout"),
    (('ready_line = "listening on .*{port}"', 'ready_line = "listening on ("'), "start.ready_line"),
    (('ready_line = "listening on .*{port}"', 'ready_line = "listening in {workdir}"'), "start.ready_line"),
    (('ready_line = "listening on .*{port}"', "ready_line = 'port \\d{4}'"), "start.ready_line"),  # {{4}} in a template
    (("SRV_LEVEL = 3", "SRV_LEVEL = [3]"), "start.env.SRV_LEVEL"),
    (("SRV_LEVEL = 3", "SRV_LEVEL = \"{tenant}\""), "start.env.SRV_LEVEL"),
    (('cwd = "{workdir}"', 'cwd = "{nowhere}"'), "start.cwd"),
    (('command = "srv --port {port} --db {db}"', 'command = ""'), "start.command"),
    (('command = "srv stop --port {port}"', 'command = "srv stop {file}"'), "stop.command"),
    (('base_url = "http://127.0.0.1:{port}/"', 'url = "http://127.0.0.1:{port}/"'), "ump.http.url"),
    (('base_url = "http://127.0.0.1:{port}/"', 'base_url = "127.0.0.1:{port}"'), "ump.http.base_url"),
    (('url = "http://127.0.0.1:{port}/upp"', 'url = "http://127.0.0.1:{port}/{db}"'), "upp.http.url"),
    (('url = "http://127.0.0.1:{port}/mcp"', 'url = "http://127.0.0.1:{port}/mcp"\ncommand = "srv --stdio"'),
     "ump.mcp"),
    (("[upp.stdio]", "[ump.grpc]\nurl = \"x\"\n[upp.stdio]"), "ump.grpc"),
    (('command = "srv --upp-stdio --db {db}"', 'command = "srv --upp-stdio --db {dbb}"'), "upp.stdio.command"),
    (('"upp@1.0.0", ', ""), "upp"),
    (('"omf@1.0"', '"omf@1.0", "upp@2.0"'), "specs"),
    (('db = "{workdir}/store.sqlite"', 'db = "{workdir}/store.sqlite"\npython = "/usr/bin/python3"'), "vars.python"),
    (('db = "{workdir}/store.sqlite"', 'db = true'), "vars.db"),
    (("[omf.http]", "[omf.vars]\ndb = \"x\"\n[omf.http]"), "omf.vars.db"),
]


@pytest.mark.parametrize("change, key", V2_BAD, ids=[k for _, k in V2_BAD])
def test_each_bad_key_is_named_with_file_and_line(tmp_path, change, key):
    assert change[0] in V2
    path = write(tmp_path, V2.replace(*change))
    with pytest.raises(DescriptorError) as caught:
        load_descriptor(path)
    assert re.match(rf"{re.escape(str(path))} line \d+ \({re.escape(key)}\): ", str(caught.value)), str(caught.value)


def test_the_line_named_is_the_line_of_the_key(tmp_path):
    path = write(tmp_path, V2.replace("grace = 2", "grace = 0"))
    with pytest.raises(DescriptorError, match=r" line 14 \(stop.grace\): `grace` must be a positive number"):
        load_descriptor(path)
    path = write(tmp_path, V2.replace("SRV_LEVEL = 3", "SRV_LEVEL = [3]"))
    with pytest.raises(DescriptorError, match=r" line 8 \(start.env.SRV_LEVEL\)"):
        load_descriptor(path)


def test_stop_without_start_and_start_without_readiness_are_errors(tmp_path):
    no_start = 'name = "x"\nspecs = ["upp@1.0.0"]\n[upp.stdio]\ncommand = "srv"\n[stop]\ncommand = "srv stop"\n'
    with pytest.raises(DescriptorError, match=r"line 5 \(stop\): \[stop\] tears down the server of \[start\]"):
        load_descriptor(write(tmp_path, no_start))
    blind = 'name = "x"\nspecs = ["upp@1.0.0"]\n[upp.stdio]\ncommand = "srv"\n[start]\ncommand = "srv serve"\n'
    with pytest.raises(DescriptorError, match=r"line 5 \(start\): \[start\] needs ready_url or ready_line"):
        load_descriptor(write(tmp_path, blind))


def test_the_known_specs_are_the_suites():
    from memconform.suite.ump.record import VERSIONS
    from memconform.targets.descriptor import KNOWN_SPECS
    from memconform.targets.jsonrpc import UPP_VERSION

    assert KNOWN_SPECS["ump"] == tuple(VERSIONS) and KNOWN_SPECS["upp"] == (UPP_VERSION,)


def test_the_shipped_server_descriptors_load():
    server = load_descriptor(SHIPPED / "reference-server.toml")
    assert {b.binding for b in server.bindings} == {"http", "mcp"} and server.http_base_url
    assert server.start.ready.url == f"http://127.0.0.1:{server.port}/ump/capabilities"
    assert [(b.spec, b.binding) for b in server.all_bindings[len(server.bindings):]] == [
        ("oams", "http"), ("oams", "jsonrpc"), ("oams", "stdio"), ("memoturn", "http"), ("memoturn", "mcp")]
    assert server.binding("oams", "jsonrpc").url == f"http://127.0.0.1:{server.port}/v1/oams/rpc"
    stdio = load_descriptor(SHIPPED / "reference-stdio.toml")
    assert stdio.start is None and stdio.cli is not None
    assert [(b.spec, b.binding, b.url) for b in stdio.bindings] == [("ump", "mcp", None), ("upp", "stdio", None)]
    assert [(b.spec, b.binding, b.url) for b in stdio.all_bindings[2:]] == [("oams", "stdio", None),
                                                                           ("memoturn", "mcp", None)]


# -- the started server (tests/harness/descriptor_servers/echo_server.py) ----------------------------

def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def echo_descriptor(tmp_path: Path, *, args: str = "", start: str = "", stop: str = "", name: str = "echo.toml",
                    vars_: str = "") -> Path:
    """A descriptor starting the echo server on {port}; `start` adds keys to [start] (readiness)."""
    text = f"""\
name = "echo"
specs = ["upp@1.0.0"]
[vars]
echo = {json.dumps(str(ECHO))}
{vars_}
[start]
command = "{{python}} {{echo}} --port {{port}} {args}"
env = {{ ECHO_VALUE = "{{workdir}}/a b" }}
{start}
{stop}
[upp.http]
url = "http://127.0.0.1:{{port}}/"
"""
    return write(tmp_path, text, name)


def _get(driver: DescriptorDriver, path: str = "/") -> dict:
    return httpx.get(f"http://127.0.0.1:{driver.descriptor.port}{path}", timeout=5).json()


def test_ready_line_env_port_and_work_folder_reach_the_server_and_close_stops_it(tmp_path):
    driver = DescriptorDriver.open(echo_descriptor(tmp_path, start='ready_line = "^echo server ready on port {port}$"'))
    try:
        driver.start()
        answer = _get(driver)
        assert answer["echo"] == f"{driver.workdir}/a b"  # env, a template, one value with its space
        assert Path(answer["cwd"]).resolve() == driver.workdir.resolve()  # default cwd: the work folder
        assert f"--port {driver.descriptor.port}" in " ".join(answer["argv"])
        pid = answer["pid"]
        assert driver.server.proc.pid == pid
        driver.start()  # once for the run
        assert _get(driver)["pid"] == pid
        info = driver.describe()["start"]
        assert info["pid"] == pid and str(driver.descriptor.port) in info["command"]
        assert "echo server ready" in (driver.workdir / "server.log").read_text()  # the output is kept
    finally:
        driver.close()
    assert _gone(pid)
    assert driver.describe()["start"]["teardown"] == "the server stopped on SIGTERM"
    driver.close()  # idempotent
    with pytest.raises(TargetError, match="closed"):
        driver.start()


def test_ready_url_waits_for_an_http_answer(tmp_path):
    driver = DescriptorDriver.open(echo_descriptor(tmp_path, start='ready_url = "http://127.0.0.1:{port}/"'))
    try:
        driver.start()
        pid = _get(driver)["pid"]  # answers at once: start() returned only once it did
    finally:
        driver.close()
    assert _gone(pid)


def test_a_server_never_ready_is_a_target_error_with_its_output_and_is_stopped(tmp_path):
    path = echo_descriptor(tmp_path, args="--never-ready", start='ready_line = "never"\nready_timeout = 1')
    driver = DescriptorDriver.open(path)
    try:
        with pytest.raises(TargetError, match=r"\[start\]: .*echo_server.py --port \d+ --never-ready was not ready "
                                              r"within 1 s \(no output line matched 'never'\); its output ends: "
                                              r"echo server: booting, forever"):
            driver.start()
        pid = driver.server.proc.pid
        assert _gone(pid)
        again = time.monotonic()
        with pytest.raises(TargetError, match="was not ready within 1 s"):
            driver.start()  # the same verdict, without waiting again
        assert time.monotonic() - again < 0.5
        assert "was not ready" in driver.describe()["start"]["error"]
    finally:
        driver.close()


def test_a_server_dying_before_ready_is_a_target_error_with_its_exit_code(tmp_path):
    path = echo_descriptor(tmp_path, args="--exit-before-ready 3", start='ready_url = "http://127.0.0.1:{port}/"')
    driver = DescriptorDriver.open(path)
    try:
        with pytest.raises(TargetError, match=r"exited with 3 before it was ready \(http://127.0.0.1:\d+/ did "
                                              r"not answer\); its output ends: echo server: fatal: no configuration"):
            driver.start()
        assert driver.describe()["start"]["exit_code"] == 3
    finally:
        driver.close()


def test_a_start_command_that_cannot_run_is_a_target_error(tmp_path):
    path = write(tmp_path, 'name = "x"\nspecs = ["upp@1.0.0"]\n[start]\ncommand = "/nonexistent/srv {port}"\n'
                           '[upp.http]\nurl = "http://127.0.0.1:{port}/"\n')
    driver = DescriptorDriver.open(path)
    with pytest.raises(TargetError, match=r"cannot start /nonexistent/srv \d+: No such file"):
        driver.start()
    driver.close()


def test_the_stop_command_runs_first_and_the_server_exits_by_itself(tmp_path):
    marker = tmp_path / "stopped"
    path = echo_descriptor(tmp_path, start='ready_line = "ready"',
                           vars_=f"stopper = {json.dumps(str(STOP))}\nmarker = {json.dumps(str(marker))}",
                           stop='[stop]\ncommand = "{python} {stopper} http://127.0.0.1:{port}/shutdown {marker}"\n'
                                'grace = 5')
    driver = DescriptorDriver.open(path)
    try:
        driver.start()
        pid = _get(driver)["pid"]
    finally:
        driver.close()
    assert marker.read_text().startswith("asked http://127.0.0.1:")
    assert _gone(pid)
    teardown = driver.describe()["start"]["teardown"]
    assert re.fullmatch(r"the stop command .*stop_server.py .* ran; the server exited after the stop command", teardown)
    assert driver.describe()["start"]["exit_code"] == 0  # it went its own way down: no signal


def test_a_failing_stop_command_is_reported_and_the_server_still_stops(tmp_path):
    path = echo_descriptor(tmp_path, start='ready_line = "ready"',
                           stop='[stop]\ncommand = "{python} -c \'import sys; sys.exit(\\"no such server\\")\'"\n'
                                'grace = 0.5')
    driver = DescriptorDriver.open(path)
    driver.start()
    pid = _get(driver)["pid"]
    driver.close()
    assert _gone(pid)
    assert re.fullmatch(r"the stop command .* exited with 1: no such server; the server stopped on SIGTERM",
                        driver.describe()["start"]["teardown"])


def test_a_server_ignoring_sigterm_is_killed_with_its_children(tmp_path):
    path = echo_descriptor(tmp_path, args="--ignore-term --child", start='ready_line = "ready"',
                           stop="[stop]\ngrace = 0.5")
    driver = DescriptorDriver.open(path)
    driver.start()
    answer = _get(driver)
    driver.close()
    assert _gone(answer["pid"]) and _gone(answer["child"])  # the whole process group
    assert driver.describe()["start"]["teardown"] == "the server stopped on SIGKILL"


def test_a_run_that_never_closes_still_stops_its_server_at_exit(tmp_path):
    path = echo_descriptor(tmp_path, start='ready_line = "ready"')
    script = ("import sys, httpx\n"
              "from memconform.targets.descriptor import DescriptorDriver\n"
              f"d = DescriptorDriver.open({str(path)!r})\n"
              "d.start()\n"
              "print(d.server.proc.pid, flush=True)\n"
              "sys.exit(0)  # no close(): the atexit hook must tear the server down\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _gone(int(done.stdout.strip()))


def test_cwd_is_relative_to_the_descriptor(tmp_path):
    (tmp_path / "srv").mkdir()
    path = echo_descriptor(tmp_path, start='ready_line = "ready"\ncwd = "srv"')
    driver = DescriptorDriver.open(path)
    try:
        driver.start()
        assert Path(_get(driver)["cwd"]) == (tmp_path / "srv").resolve()
    finally:
        driver.close()


def test_clients_of_a_binding_not_described_are_not_applicable(tmp_path):
    from memconform.suite.outcomes import NotApplicable
    from memconform.targets.base import Subject

    driver = DescriptorDriver.open(echo_descriptor(tmp_path, start='ready_line = "ready"'))
    with pytest.raises(NotApplicable, match="describes no UMP 1.0 / http"):
        driver.client(Subject(driver.label, "ump", "1.0", "http"))
    assert driver.server is None  # nothing started for it
    driver.close()


# -- end to end: pytest --target=<descriptor> against the reference server ---------------------------

def test_a_descriptor_run_judges_the_reference_server_over_ump_and_upp(pytester, tmp_path):
    from .helpers import run_suite

    path = write(tmp_path, """\
name = "reference server, two subjects"
specs = ["ump@1.0", "upp@1.0.0"]
[start]
command = "{python} -m memconform.suite.cli serve --host 127.0.0.1 --port {port} --db {workdir}/s.sqlite --upp-export-dir {workdir}/exports"
ready_line = "listening on http://127.0.0.1:{port}"
ready_timeout = 60
[ump.http]
base_url = "http://127.0.0.1:{port}"
[upp.http]
url = "http://127.0.0.1:{port}/upp"
""", "ref.toml")
    result, report = run_suite(pytester, f"--target={path}", "--level", "L1")
    out = result.stdout.str()
    # --level L1: what lies above was not asked for, and the line says so rather than "not assessed"
    assert re.search(r"UMP 1\.0 / L1 / http: conformant up to L1; L2 and above not judged \(--level L1\) — \d+ MUST "
                     r"passed", out), out[-3000:]
    assert re.search(r"UPP 1\.0\.0 / L1 / http: conformant up to L1; L2 and above not judged \(--level L1\) — \d+ "
                     r"MUST passed", out), out[-3000:]
    assert report["totals"].get("failed", 0) == 0 and report["totals"].get("error", 0) == 0, report["totals"]
    (target,) = report["targets"]
    assert target["kind"] == "descriptor" and target["specs"] == ["ump@1.0", "upp@1.0.0"]
    assert target["start"]["teardown"] == "the server stopped on SIGTERM"
    assert _gone(target["start"]["pid"])


# -- plugged sections (suite/specs.py `descriptor`): [oams.*] and [memoturn.*] --------------------------

PLUGGED = """\
name = "plugged"
specs = ["oams@0.1", "memoturn@2026.06"]
[vars]
db = "{workdir}/s.sqlite"
[start]
command = "srv --port {port} --db {db}"
ready_line = "up"
[oams.stdio]
command = "srv --oams-stdio --db {db}"
[oams.http]
base_url = "http://127.0.0.1:{port}/"
[oams.jsonrpc]
url = "http://127.0.0.1:{port}/v1/oams/rpc"
[memoturn.http]
base_url = "http://127.0.0.1:{port}"
[memoturn.mcp]
command = "srv --memoturn-mcp --db {db}"
"""


def test_a_descriptor_with_oams_and_memoturn_sections_loads(tmp_path):
    from memconform.suite.specs import SPECS
    from memconform.targets.memoturn import DescribedMcpPart, DescribedRestPart
    from memconform.targets.oams import OamsDescribedHttpPart, OamsRpcPart

    assert SPECS["oams"].descriptor and SPECS["memoturn"].descriptor
    d = load_descriptor(write(tmp_path, PLUGGED))
    port = d.port
    assert d.specs == (("oams", "0.1"), ("memoturn", "2026.06")) and d.bindings == ()
    # in the order of the spec's sections, whatever order the file writes them in
    assert [(b.spec, b.binding, b.shown) for b in d.all_bindings] == [
        ("oams", "http", f"http://127.0.0.1:{port}"), ("oams", "jsonrpc", f"http://127.0.0.1:{port}/v1/oams/rpc"),
        ("oams", "stdio", "srv --oams-stdio --db {db}"), ("memoturn", "http", f"http://127.0.0.1:{port}"),
        ("memoturn", "mcp", "srv --memoturn-mcp --db {db}")]
    driver = DescriptorDriver(d, label="p.toml")
    assert [s.title for s in driver.described_subjects()] == [
        "OAMS 0.1 / http", "OAMS 0.1 / jsonrpc", "OAMS 0.1 / stdio", "MEMOTURN 2026.06 / http",
        "MEMOTURN 2026.06 / mcp"]
    assert {"spec": "memoturn", "binding": "mcp", "command": "srv --memoturn-mcp --db {db}"} in \
        driver.describe()["bindings"]
    stdio = d.binding("oams", "stdio")
    assert driver._argv(stdio) == ["srv", "--oams-stdio", "--db", f"{driver.workdir}/s.sqlite"]  # noqa: SLF001
    parts = {(b.spec, b.binding): d.plugged[b.spec].part(b.binding, url=b.url, label="p", timeout=3.0,
                                                          argv=["srv"] if b.command else None)
             for b in d.all_bindings}
    assert isinstance(parts["oams", "http"], OamsDescribedHttpPart)
    assert isinstance(parts["oams", "jsonrpc"], OamsRpcPart) and parts["oams", "jsonrpc"].binding == "jsonrpc"
    assert parts["oams", "stdio"].where == ["srv"]
    assert isinstance(parts["memoturn", "http"], DescribedRestPart)
    assert isinstance(parts["memoturn", "mcp"], DescribedMcpPart)
    assert parts["memoturn", "mcp"].driver.argv == ["srv"]
    for part in parts.values():
        part.close()
    driver.close()
    assert d.start.ready.line == "up"
    no_ready = load_descriptor(write(tmp_path, PLUGGED.replace('ready_line = "up"\n', ""), "n.toml"))
    assert no_ready.start.ready.url == f"http://127.0.0.1:{no_ready.port}"  # the first HTTP URL, OAMS's
    mcp_url = PLUGGED.replace('command = "srv --memoturn-mcp --db {db}"', 'url = "http://127.0.0.1:{port}/mcp"')
    assert load_descriptor(write(tmp_path, mcp_url, "u.toml")).binding("memoturn", "mcp").url.endswith("/mcp")


PLUGGED_BAD = [
    # (what to change, the key the message must name, what it says)
    (('base_url = "http://127.0.0.1:{port}/"', 'url = "http://127.0.0.1:{port}/"'), "oams.http.url",
     r"unknown key\(s\) \['url'\] in \[oams.http\]; known: base_url"),
    (("[oams.jsonrpc]", "[oams.grpc]\nurl = \"x\"\n[oams.jsonrpc]"), "oams.grpc",
     r"unknown key\(s\) \['grpc'\] in \[oams\]; known: http, jsonrpc, stdio"),
    (('base_url = "http://127.0.0.1:{port}/"', "base_url = 8700"), "oams.http.base_url",
     "`base_url` must be a non-empty string"),
    (('url = "http://127.0.0.1:{port}/v1/oams/rpc"', 'url = "127.0.0.1:{port}/rpc"'), "oams.jsonrpc.url",
     "must be an http:// or https:// URL"),
    (('url = "http://127.0.0.1:{port}/v1/oams/rpc"', 'url = "http://127.0.0.1:{port}/{db}"'), "oams.jsonrpc.url",
     r"unknown name\(s\) \{db\}.*known here: port"),
    (('command = "srv --oams-stdio --db {db}"', 'command = ["srv"]'), "oams.stdio.command",
     "`command` must be a non-empty string"),
    (('command = "srv --oams-stdio --db {db}"', 'command = "srv --oams-stdio --db {dbb}"'), "oams.stdio.command",
     r"unknown name\(s\) \{dbb\}.*known here: db, port, python, workdir"),
    (('command = "srv --memoturn-mcp --db {db}"', 'cmd = "srv"'), "memoturn.mcp.cmd",
     r"unknown key\(s\) \['cmd'\] in \[memoturn.mcp\]; known: command, url"),
    (('command = "srv --memoturn-mcp --db {db}"', 'command = "srv"\nurl = "http://127.0.0.1:{port}/mcp"'),
     "memoturn.mcp", r"\[memoturn.mcp\] needs exactly one of `command` or `url`"),
    (('base_url = "http://127.0.0.1:{port}"', "base_url = true"), "memoturn.http.base_url",
     "`base_url` must be a non-empty string"),
    (('command = "srv --memoturn-mcp --db {db}"', 'command = "srv --tenant {tenant}"'), "memoturn.mcp.command",
     r"unknown name\(s\) \{tenant\}"),
    (('[memoturn.http]\nbase_url = "http://127.0.0.1:{port}"', "[memoturn.http]\nbase_url = \"http://x\"\n"
                                                                "[memoturn.mcp.more]\nx = 1"), "memoturn.mcp.more",
     r"unknown key\(s\) \['more'\] in \[memoturn.mcp\]"),
    (('"oams@0.1"', '"oams@0.2"'), "specs", "known versions of oams: 0.1"),
    (('"memoturn@2026.06"', '"memoturn@2026.07"'), "specs", "known versions of memoturn: 2026.06"),
    ((', "memoturn@2026.06"', ""), "memoturn", r"\[memoturn.…\] describes MEMOTURN, but specs names no "
                                                      r"memoturn@VERSION \(known: memoturn@2026.06\)"),
]


@pytest.mark.parametrize("change, key, says", PLUGGED_BAD, ids=[k for _, k, _ in PLUGGED_BAD])
def test_each_bad_plugged_key_is_named_with_file_and_line(tmp_path, change, key, says):
    assert change[0] in PLUGGED
    path = write(tmp_path, PLUGGED.replace(*change))
    with pytest.raises(DescriptorError) as caught:
        load_descriptor(path)
    message = str(caught.value)
    assert re.match(rf"{re.escape(str(path))} line \d+ \({re.escape(key)}\): ", message), message
    assert re.search(says, message), message


def test_the_line_named_in_a_plugged_section_is_the_keys(tmp_path):
    path = write(tmp_path, PLUGGED.replace("--db {db}\"\n[oams.http]", "--db {dbb}\"\n[oams.http]"))
    with pytest.raises(DescriptorError, match=r" line 9 \(oams.stdio.command\): unknown name\(s\) \{dbb\} in "
                                              r"'srv --oams-stdio --db \{dbb\}'; "
                                              r"known here: db, port, python, workdir"):
        load_descriptor(path)
    path = write(tmp_path, PLUGGED.replace("[memoturn.http]\nbase_url = \"http://127.0.0.1:{port}\"",
                                           "[memoturn.http]\nbase_url = 8700"))
    with pytest.raises(DescriptorError, match=r" line 15 \(memoturn.http.base_url\): `base_url` must be"):
        load_descriptor(path)


def test_a_plugged_spec_named_without_its_section_says_which_sections_reach_it(tmp_path):
    text = PLUGGED.split("[memoturn.http]")[0]
    with pytest.raises(DescriptorError, match=r"line 2 \(specs\): specs names memoturn@… but there is no "
                                              r"\[memoturn.http\] or \[memoturn.mcp\] section"):
        load_descriptor(write(tmp_path, text))
    without = load_descriptor(write(tmp_path, text.replace(', "memoturn@2026.06"', ""), "o.toml"))
    assert set(without.plugged) == {"oams"}  # memoturn's hook was never asked


def test_a_described_plugged_binding_that_is_not_its_protocol_is_one_target_error(tmp_path):
    path = write(tmp_path, f"""\
name = "echo as memoturn"
specs = ["memoturn@2026.06"]
[vars]
echo = {json.dumps(str(ECHO))}
[start]
command = "{{python}} {{echo}} --port {{port}}"
ready_line = "ready"
[memoturn.http]
base_url = "http://127.0.0.1:{{port}}"
""")
    driver = DescriptorDriver.open(path)
    with pytest.raises(TargetError, match=r"MEMOTURN over http: POST /v1/memory/.*/recall did not answer as "
                                              r"memoturn"):
        driver.subjects()
    pid = driver.server.proc.pid
    assert _gone(pid)  # the server started for the probe does not outlive it
    driver.close()


def test_the_shipped_server_descriptor_judges_oams_and_memoturn_at_l3(pytester):
    from .helpers import run_suite

    result, report = run_suite(pytester, f"--target={SHIPPED / 'reference-server.toml'}",
                               "--spec", "oams", "--spec", "memoturn")
    out = result.stdout.str()
    for title in ("OAMS 0.1 / L3 (read/write + consolidation) / http", "OAMS 0.1 / L3 (read/write + "
                  "consolidation) / jsonrpc", "OAMS 0.1 / L3 (read/write + consolidation) / stdio",
                  "MEMOTURN 2026.06 / L3 (Lifecycle) / http", "MEMOTURN 2026.06 / L3 (Lifecycle) / mcp"):
        assert re.search(rf"{re.escape(title)}: conformant — \d+ MUST passed", out), out[-3000:]
    assert report["totals"].get("failed", 0) == 0 and report["totals"].get("error", 0) == 0, report["totals"]
    (target,) = report["targets"]
    assert {(b["spec"], b["binding"]) for b in target["bindings"]} >= {
        ("oams", "http"), ("oams", "jsonrpc"), ("oams", "stdio"), ("memoturn", "http"), ("memoturn", "mcp")}
    assert target["start"]["teardown"] == "the server stopped on SIGTERM"
    assert _gone(target["start"]["pid"])
