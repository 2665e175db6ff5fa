"""An OMF command line that is not memd's (issue 13): a descriptor maps the result keys it prints
(`[omf.cli.result]`) and declares the flags it lacks (`[omf.cli] lacks`). A check that needs a lacked
flag is not offered — skipped with the reason — never failed; a flag asked at the spec's default is
left out; renamed counts are read as the suite's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memconform.suite.omf.checks._common import counts
from memconform.suite.outcomes import NotApplicable, Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check
from memconform.targets.cli import OmfCliTarget
from memconform.targets.descriptor import DescriptorError, load_descriptor

CHECKS = {c.id: c for c in all_checks("omf")}
REFERENCE = "{python} -m memconform.suite.cli omf"

#: An importer printing its own keys: a thin wrapper around the reference CLI, renaming the counts.
RENAMING = textwrap.dedent("""
    import json, subprocess, sys
    done = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "omf", *sys.argv[1:]],
                          capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    names = {"imported": "added", "duplicates": "dupes"}
    print(json.dumps({names.get(k, k): v for k, v in result.items()}))
    sys.exit(done.returncode)
""")


def _descriptor(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "target.toml"
    path.write_text(textwrap.dedent(f"""
        name = "a plain OMF command line"
        specs = ["omf@1.0"]
        [omf.vars]
        db = "{{workdir}}/store.sqlite"
    """) + textwrap.dedent(body), encoding="utf-8")
    return path


LACKING = f"""
    [omf.cli]
    export = "{REFERENCE} export --db {{db}} --tenant-id {{tenant}} --output {{file}} {{include_superseded?--include-superseded {{include_superseded}}}} {{include_expired?--include-expired {{include_expired}}}}"
    import = "{REFERENCE} import --db {{db}} --tenant-id {{tenant}} --input {{file}} --dry-run {{dry_run}}"
    lacks = ["project", "include_history", "include_archived", "fuzzy_threshold"]
"""


@pytest.fixture
def lacking(tmp_path):
    target = OmfCliTarget.from_descriptor(load_descriptor(_descriptor(tmp_path, LACKING)))
    yield target
    target.close()


def test_a_lacked_flag_at_its_default_is_left_out_and_any_other_value_is_not_offered(lacking):
    doc = '{"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": [{"content": "x"}]}'
    assert counts(lacking.import_document("t", doc, include_archived=True)) == {
        "imported": 1, "duplicates": 0, "skipped": 0}
    with pytest.raises(NotApplicable, match="lacks the OMF import flag include_archived.*include_archived=false"):
        lacking.import_document("t", doc, include_archived=False)
    with pytest.raises(NotApplicable, match="fuzzy_threshold=0.5"):
        lacking.import_document("t", doc, fuzzy_threshold=0.5)
    assert lacking.export("t", include_history=False).ok
    with pytest.raises(NotApplicable, match="include_history=true"):
        lacking.export("t", include_history=True)


@pytest.mark.parametrize("check_id", ["omf/import/fuzzy", "omf/import/include-archived", "omf/export/project-filter"])
def test_a_check_needing_a_lacked_flag_is_not_offered_not_failed(lacking, check_id):
    result = run_check(CHECKS[check_id], "1.0", "cli", lambda: lacking, None)
    assert result.outcome is Outcome.SKIPPED, (result.outcome, result.reason, [f.message for f in result.findings])
    assert "not offered" in result.reason and "lacks" in result.reason


def test_renamed_result_keys_are_read_as_the_suites(tmp_path):
    script = tmp_path / "renaming.py"
    script.write_text(RENAMING, encoding="utf-8")
    body = f"""
        [omf.cli]
        export = "{REFERENCE} export --db {{db}} --tenant-id {{tenant}} --output {{file}}"
        import = "{{python}} {script} import --db {{db}} --tenant-id {{tenant}} --input {{file}} --dry-run {{dry_run}}"
        [omf.cli.result]
        imported = "added"
        duplicates = "dupes"
    """
    target = OmfCliTarget.from_descriptor(load_descriptor(_descriptor(tmp_path, body)))
    try:
        doc = '{"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": [{"content": "x"}, {"content": "x"}]}'
        run = target.import_document("t", doc)
        assert counts(run) == {"imported": 1, "duplicates": 1, "skipped": 0}, run.result
        assert run.result.get("added") is None
        for check_id in ("omf/validation/exported-at-not-interpreted", "omf/import/dedup-scopes"):
            result = run_check(CHECKS[check_id], "1.0", "cli", lambda: target, None)
            assert result.outcome is Outcome.PASSED, [f.message for f in result.findings]
    finally:
        target.close()


@pytest.mark.parametrize("body,message", [
    ('lacks = ["verbose"]', "the flags are"),
    ('lacks = "dry_run"', "list of flag names"),
    ('lacks = ["dry_run"]', "yet the command templates use {dry_run}"),
    ('[omf.cli.result]\nimported = 3', "must name the key"),
    ('[omf.cli.result]\nadded = "imported"', "unknown key"),
])
def test_bad_lacks_and_result_tables_are_refused_with_the_line(tmp_path, body, message):
    path = _descriptor(tmp_path, f"""
        [omf.cli]
        export = "{REFERENCE} export --db {{db}} --tenant-id {{tenant}} --output {{file}}"
        import = "{REFERENCE} import --db {{db}} --tenant-id {{tenant}} --input {{file}} --dry-run {{dry_run}}"
    """ + body + "\n")
    with pytest.raises(DescriptorError, match=message):
        load_descriptor(path)


def test_a_consumer_import_that_prints_nothing_is_an_answer_a_memd_one_is_not(tmp_path):
    from memconform.targets.answers import NotTheProtocol

    body = """
        [omf.cli]
        export = "{python} -c 'print(1)' {tenant}"
        import = "{python} -c 'pass' {tenant} {file}"
        lacks = ["project", "include_history", "include_superseded", "include_expired", "include_archived",
                 "fuzzy_threshold", "dry_run"]
    """
    target = OmfCliTarget.from_descriptor(load_descriptor(_descriptor(tmp_path, body)))
    try:
        doc = '{"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": []}'
        with pytest.raises(NotTheProtocol):
            target.import_document("t", doc)
        target.profile = "consumer"
        run = target.import_document("t", doc)
        assert run.ok and run.result is None and counts(run) is None
    finally:
        target.close()


def test_the_consumer_example_of_docs_omf_md_loads(tmp_path):
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "omf.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```toml\n(name = \"nanomem.*?)```", text, re.S)
    path = tmp_path / "nanomem.toml"
    path.write_text(block, encoding="utf-8")
    loaded = load_descriptor(path)
    assert loaded.profile == "consumer" and set(loaded.cli.lacks) == {
        "project", "include_history", "include_superseded", "include_expired", "include_archived",
        "fuzzy_threshold", "dry_run"}
