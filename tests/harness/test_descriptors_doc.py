"""docs/descriptors.md and the code that reads descriptors and runs their commands stay in step: every
key the reader accepts is documented in its section's table and every documented key is accepted;
the OMF operation names are the ones the driver fills in; what the doc says an OMF command must print
(keys, exit status, the last JSON object) is what the driver and the checks read."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from memconform.suite.omf.checks._common import counts
from memconform.suite.omf.checks.preview import FIELDS as PREVIEW_FIELDS
from memconform.suite.omf.client import OmfRun
from memconform.targets import descriptor
from memconform.targets.cli import _omf_run, last_json_object

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "descriptors.md").read_text(encoding="utf-8")


def _table_after(heading: str) -> list[list[str]]:
    """The rows (cells, header and rule left out) of the first table after the line starting `heading`."""
    lines = DOC.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows: list[list[str]] = []
    for line in lines[start if heading.startswith("|") else start + 1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:]


def _first_column_keys(heading: str) -> set[str]:
    return {m.group(1) for row in _table_after(heading) for m in [re.fullmatch(r"`([a-z_]+)`", row[0])] if m}


def _keys_the_reader_accepts() -> dict[str, tuple[str, ...]]:
    """section → keys, from each `r.keys(table, (…), "section")` call in targets/descriptor.py."""
    tree = ast.parse(Path(descriptor.__file__).read_text(encoding="utf-8"))
    constants = {name: getattr(descriptor, name) for name in ("TOP_KEYS",)}
    out: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys" \
                and len(node.args) == 3 and isinstance(node.args[2], ast.Constant):
            keys = node.args[1]
            if isinstance(keys, ast.Name):
                out[node.args[2].value] = tuple(constants[keys.id])
            elif isinstance(keys, ast.Tuple):
                out[node.args[2].value] = tuple(k.value for k in keys.elts)
    return out


def test_every_section_table_lists_exactly_the_keys_the_reader_accepts():
    accepted = _keys_the_reader_accepts()
    assert {"", "start", "stop", "omf.cli"} <= set(accepted), sorted(accepted)
    assert _first_column_keys("## Top-level keys") == set(accepted[""]) - {"vars", "start", "stop", "ump", "upp", "omf",
                                                                          *descriptor.PLUGGED}
    assert _first_column_keys("## `[start]`") == set(accepted["start"])
    assert _first_column_keys("## `[stop]`") == set(accepted["stop"])
    assert _first_column_keys("### `[omf.cli]`") == set(accepted["omf.cli"])
    assert "`base_url`" in " ".join(r[1] for r in _table_after("| section | keys |") if r[0] == "`[omf.http]`")


def _plugged_shapes() -> dict[str, dict[str, tuple[str, ...]]]:
    """spec → {binding: keys} of each spec whose Spec entry names a `descriptor` hook."""
    import importlib

    from memconform.suite.specs import SPECS

    return {name: importlib.import_module(SPECS[name].descriptor.partition(":")[0]).DESCRIPTOR_BINDINGS
            for name in descriptor.PLUGGED}


def test_binding_sections_are_those_the_reader_knows():
    documented = {row[0].strip("`[]") for row in _table_after("| section | keys |")}
    builtin = {f"{spec}.{b}" for spec, bindings in descriptor.BINDING_SECTIONS.items() for b in bindings}
    plugged = {f"{spec}.{b}" for spec, shapes in _plugged_shapes().items() for b in shapes}
    assert {"oams.http", "oams.jsonrpc", "oams.stdio", "memoturn.http", "memoturn.mcp"} <= plugged
    assert documented == builtin | plugged


def test_a_plugged_sections_row_lists_the_keys_its_hook_accepts():
    rows = {row[0].strip("`[]"): row[1] for row in _table_after("| section | keys |")}
    for spec, shapes in _plugged_shapes().items():
        for binding, keys in shapes.items():
            assert set(re.findall(r"`([a-z_]+)`", rows[f"{spec}.{binding}"])) == set(keys), (spec, binding)


def test_the_plugged_sections_error_examples_are_what_the_reader_says(tmp_path):
    (example,) = [b for b in re.findall(r"```toml\n(.*?)```", DOC, re.S) if "oams@0.1" in b]
    (messages,) = re.findall(r"```\n(mine\.toml line \d+ \(oams\.stdio.*?)```", DOC, re.S)
    path = tmp_path / "mine.toml"
    path.write_text(example, encoding="utf-8")
    assert descriptor.load_descriptor(path).plugged  # the example itself loads
    changes = [('command = "acme-server --oams-stdio"', 'command = "acme-server --oams-stdio --db {dbb}"'),
               ('command = "acme-server --memoturn-mcp"',
                'command = "acme-server --memoturn-mcp"\nurl = "http://127.0.0.1:{port}/mcp"'),
               ('base_url = "http://127.0.0.1:{port}"\n\n[oams.jsonrpc]',
                'url = "http://127.0.0.1:{port}"\n\n[oams.jsonrpc]')]
    for (old, new), said in zip(changes, messages.strip().splitlines(), strict=True):
        assert old in example
        path.write_text(example.replace(old, new), encoding="utf-8")
        try:
            descriptor.load_descriptor(path)
        except descriptor.DescriptorError as exc:
            assert str(exc) == f"{tmp_path}/{said}"
        else:
            raise AssertionError(f"{new!r} loaded")


def test_omf_operation_names_are_those_the_driver_fills_in():
    rows = {row[0]: row[1] for row in _table_after("### `[omf.cli]`")}
    for op, names in (("`export`", descriptor.EXPORT_NAMES), ("`import`", descriptor.IMPORT_NAMES)):
        assert set(re.findall(r"`\{([a-z_]+)\}`", rows[op])) == set(names), op


def _printed(row_start: str) -> dict:
    """The JSON object the "What each command must print" table gives for a command (N read as 0)."""
    (row,) = [r for r in _table_after("| command | reads |") if r[0].startswith(row_start)]
    (example,) = re.findall(r"`(\{.*\})`", row[2])
    return json.loads(re.sub(r"\bN\b", "0", example))


def test_the_import_result_the_doc_asks_for_is_what_the_checks_read():
    printed = _printed("`[omf.cli] import`, `{dry_run}` false")
    assert counts(OmfRun("import", "cmd", ok=True, result=printed)) == printed
    for key in printed:  # every key listed is one the checks need
        assert counts(OmfRun("import", "cmd", ok=True, result={k: v for k, v in printed.items() if k != key})) is None


def test_the_preview_result_the_doc_asks_for_is_what_the_preview_check_reads():
    printed = _printed("`[omf.cli] import`, `{dry_run}` true")
    assert set(printed) == {*PREVIEW_FIELDS, "by_project"}
    assert isinstance(printed["by_project"], dict)


def test_exit_status_error_member_and_last_object_as_the_doc_says():
    (example,) = re.findall(r"```\n\s*(importing .*?)\s*```", DOC, re.S)
    assert set(last_json_object(example)) == set(_printed("`[omf.cli] import`, `{dry_run}` false"))
    ok = _omf_run("import", ["imp"], 0, example, "", None)
    assert ok.ok and ok.result == last_json_object(example)
    (refusal,) = re.findall(r'`(\{"error": .*?\})`', DOC)
    refused = _omf_run("import", ["imp"], 2, refusal.replace("…", "bad"), "stderr text", None)
    assert not refused.ok and "validation" in refused.error and "stderr" not in refused.error
    for code in (1, 3, 70):
        assert not _omf_run("import", ["imp"], code, "", "it broke", None).ok
    assert _omf_run("import", ["imp"], 1, "", "it broke\n", None).error == "it broke"


def test_the_output_contract_section_names_every_command_template():
    commands = {row[0] for row in _table_after("| command | reads |")}
    assert {"`[omf.cli] export`", "`[ump.mcp] command`", "`[upp.stdio] command`", "`[start] command`",
            "`[stop] command`"} <= commands
    assert "## What each command must do and print" in DOC
