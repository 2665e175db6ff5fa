"""The edges of the `memconform` command a user touches first (issue 12, items 11–13): the fault
list the docs point at, `run --help` showing the suite's options, empty reports, exit codes, and
`convert` guessing its input format and naming where its input went wrong."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memconform.reference_impl.faults import FAULTS
from memconform.suite.cli import cli
from memconform.suite.convert import default_corpora
from memconform.suite.exit_codes import NOT_JUDGED


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


# -- faults ------------------------------------------------------------------------------------------

def test_faults_lists_every_fault_with_the_requirements_it_breaks():
    result = invoke("faults")
    assert result.exit_code == 0, result.output
    # a block per fault, its name first (one regex: a pattern per fault name overflowed re's cache,
    # 9 s of recompiling)
    blocks = {}
    for block in result.output.split("\n\n"):
        for name in re.findall(r"^([a-z0-9][a-z0-9.-]*)\b", block, re.M):
            blocks.setdefault(name, block)
    assert set(blocks) == set(FAULTS)
    for name, fault in FAULTS.items():
        for requirement in fault.breaks:
            assert requirement in blocks[name], (name, requirement)


def test_faults_narrowed_to_one_spec_and_an_unknown_spec():
    result = invoke("faults", "--spec", "upp")
    assert result.exit_code == 0
    upp = [f for f in FAULTS.values() if f.spec == "upp"]
    assert upp and all(f.name in result.output for f in upp)
    assert not any(re.search(rf"^{re.escape(f.name)}\b", result.output, re.M) for f in FAULTS.values()
                   if f.spec != "upp")
    result = invoke("faults", "--spec", "nonsense")
    assert result.exit_code == 2 and "ump" in result.output


def test_serve_help_points_at_the_fault_list():
    assert "memconform faults" in invoke("serve", "--help").output


# -- run --help ------------------------------------------------------------------------------------

def test_run_help_shows_the_suites_own_options():
    out = invoke("run", "--help").output
    for option in ("--target", "--spec", "--level", "--binding", "--memconform-strict", "--report",
                   "--timeout", "--mcp-protocol", "--seed", "--check", "--baseline", "--no-progress"):
        assert re.search(rf"^\s+{re.escape(option)}\b", out, re.M), (option, out)
    assert "only these specs" in out  # the plugin's own help text, not a list of names
    assert "--memconform-only" not in out  # run always sets it


# -- empty reports ---------------------------------------------------------------------------------

@pytest.fixture
def empty_report(tmp_path: Path) -> Path:
    from memconform.reports.model import build_report, run_info

    path = tmp_path / "empty.json"
    path.write_text(json.dumps(build_report([], [], run_info({}))), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["badge", "html"])
def test_an_empty_report_is_said_and_exits_2(empty_report, tmp_path, command):
    out = tmp_path / ("badges" if command == "badge" else "page.html")
    result = invoke("report", command, str(empty_report), "-o", str(out))
    assert result.exit_code == 2, result.output
    assert "no results" in result.output and str(empty_report) in result.output
    assert not out.exists() or not any(out.iterdir())


# -- exit codes ------------------------------------------------------------------------------------

def test_run_against_an_unreachable_target_is_not_judged(tmp_path):
    done = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "run", "--no-progress", "-q", "-n", "0",
                           "--target=http://127.0.0.1:1", "--report=-"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == NOT_JUDGED, done.stdout[-2000:] + done.stderr[-2000:]


def test_run_with_an_unknown_spec_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "run", "--no-progress", "-n", "0",
                           "--spec", "nonsense"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4 and "accepted: ump, upp, omf" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "memconform-report.json").exists()


# -- convert ---------------------------------------------------------------------------------------

@pytest.fixture
def documents(tmp_path: Path) -> dict[str, Path]:
    corpora = default_corpora()
    paths = {"ump": tmp_path / "in.ump.json", "omf": tmp_path / "in.omf.json", "upp": tmp_path / "in.upp.json"}
    for fmt, path in paths.items():
        path.write_text(json.dumps(corpora[fmt], ensure_ascii=False), "utf-8")
    ndjson = tmp_path / "in.ndjson"
    ndjson.write_text("".join(json.dumps(r) + "\n" for r in corpora["ump"]), "utf-8")
    paths["ndjson"] = ndjson
    return paths


@pytest.mark.parametrize("given", ["ump", "omf", "upp", "ndjson"])
def test_convert_infers_from_from_the_extension(documents, given):
    target = "omf" if given != "omf" else "ump"
    result = invoke("convert", "--to", target, str(documents[given]))
    assert result.exit_code == 0, result.output
    source = "ump" if given == "ndjson" else given
    assert f"{source} → {target}:" in result.output


def test_convert_without_from_and_no_telling_extension_is_a_usage_error(tmp_path):
    plain = tmp_path / "memories.json"
    plain.write_text("[]", "utf-8")
    result = invoke("convert", "--to", "omf", str(plain))
    assert result.exit_code == 2
    assert "--from" in result.output and "memories.json" in result.output and ".omf.json" in result.output
    assert invoke("convert", "--to", "omf", "-", input="[]").exit_code == 2


def test_convert_errors_name_file_and_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.omf.json"
    bad.write_text('{"omf": "1.0",\n "memories": }\n', "utf-8")
    result = invoke("convert", "--to", "ump", str(bad))
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(str(bad))}: not a valid OMF document: line 2, column \d+: not JSON \(Expecting value\)",
                     result.output), result.output
    lines = tmp_path / "bad.ndjson"
    lines.write_text(json.dumps(default_corpora()["ump"][0]) + "\n{bad\n", "utf-8")
    result = invoke("convert", "--to", "omf", str(lines))
    assert result.exit_code == 2, result.output
    assert f"{lines} line 2" in result.output and "ndjsonline" not in result.output, result.output
    result = invoke("convert", "--from", "ump", "--to", "omf", "-", input='{"a": 1}\n{bad\n')
    assert result.exit_code == 2 and "stdin: not a valid UMP document: line 2, column 2: not JSON" in result.output, result.output
