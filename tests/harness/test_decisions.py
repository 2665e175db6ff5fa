"""The recorder that lets a variant re-run only the checks that can meet its choice
(tests/harness/decisions.py): what it re-runs, and what makes it re-run everything."""

from __future__ import annotations

import subprocess
import sys

from memconform.reference_impl.consulted import ENV, consulted
from memconform.reference_impl.ump.policy import UmpPolicy

from .decisions import OPENING, Recorder, key


def _recorder(read: dict[str, set[str]]) -> Recorder:
    recorder = Recorder()
    recorder.read.update(read)
    return recorder


def test_only_the_checks_that_read_a_point_are_re_run():
    recorder = _recorder({key("a", "1.0", "http"): {"ump.x"}, key("b", "1.0", "mcp"): {"ump.y"},
                          key("c", "1.0", "mcp"): set(), key(OPENING, "1.0", "http"): {"ump.z"}})
    assert recorder.meeting({"ump.x"}, ("http", "mcp")) == {"a"}
    assert recorder.meeting({"ump.x", "ump.y"}, ("http", "mcp")) == {"a", "b"}
    assert recorder.meeting({"ump.x", "ump.y"}, ("http",)) == {"a"}  # b read it on a binding not judged
    # another spec's point of the same name is another point
    assert recorder.meeting({"upp.x"}, ("http", "mcp")) == set()


def test_a_point_read_while_a_shared_server_opens_or_before_any_check_re_runs_everything():
    checks = {key("a", "1.0", "http"): {"ump.x"}, key("b", "0.1", "mcp"): {"ump.y"}}
    # read while one version of a binding opened, not the other: still read (versions are unioned)
    opened = {key(OPENING, "0.1", "mcp"): {"ump.z"}, key(OPENING, "1.0", "mcp"): set()}
    assert _recorder(checks | opened).meeting({"ump.z"}, ("http", "mcp")) is None
    assert _recorder(checks | {OPENING: {"ump.x"}}).meeting({"ump.x"}, ("http", "mcp")) is None


def test_a_point_read_while_a_file_subject_opens_re_runs_that_binding_only():
    recorder = _recorder({key("f1", "1.0", "file"): {"ump.w"}, key("f2", "0.1", "file"): set(),
                          key("a", "1.0", "http"): {"ump.x"}, key(OPENING, "0.1", "file"): {"ump.md"}})
    assert recorder.meeting({"ump.md"}, ("file", "http")) == {"f1", "f2"}


def test_a_binding_whose_reads_were_not_seen_re_runs_everything():
    recorder = _recorder({key("a", "1.0", "http"): {"ump.x"}, key("s", "1.0", "stdio"): set()})
    assert recorder.meeting({"ump.x"}, ("http", "stdio")) is None
    assert recorder.meeting({"ump.x"}, ("http",)) == {"a"}


def test_a_policy_writes_its_reads_only_while_asked_to(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    plain = UmpPolicy()
    assert consulted(plain, "ump") is plain  # every run but the variant tests': nothing in between
    log = tmp_path / "reads.log"
    monkeypatch.setenv(ENV, str(log))
    policy = consulted(UmpPolicy(), "ump")
    assert policy.token_times == plain.token_times
    # a child process started meanwhile writes to the same log
    subprocess.run([sys.executable, "-c", "from memconform.reference_impl.consulted import consulted\n"
                    "from memconform.reference_impl.ump.policy import UmpPolicy\n"
                    "consulted(UmpPolicy(), 'ump').discovery_auth"], check=True)
    assert log.read_text().split() == ["ump.token_times", "ump.discovery_auth"]
