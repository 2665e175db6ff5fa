"""Installed, everything lives under `memconform`: a vendor's environment never gains top-level
`suite`, `targets`, `reports`, `vectors` or `reference_impl` modules."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = {"suite": "memconform.suite", "targets": "memconform.targets", "reports": "memconform.reports",
           "vectors": "memconform.vectors", "reference_impl": "memconform.reference_impl"}


def test_only_the_memconform_name_is_importable(tmp_path):
    code = ("import importlib.util, json; "
            f"print(json.dumps({{n: importlib.util.find_spec(n) is not None for n in {sorted(FOLDERS)!r}}})); "
            "import memconform.suite.plugin, memconform.targets, memconform.reports.model, "
            "memconform.vectors.load, memconform.reference_impl.ump.engine")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '{"reference_impl": false, "reports": false, "suite": false, ' \
                                 '"targets": false, "vectors": false}'


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    assert config["package-dir"] == {name: folder for folder, name in FOLDERS.items()}
    found, data = set(), set()
    for folder, name in FOLDERS.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    # data folders are listed too (setuptools takes any importable folder for a package and warns at each
    # install about one the list leaves out): each holds data of the package-data globs, no code
    for extra in listed - found:
        folder = next(f for f, n in FOLDERS.items() if extra.startswith(n + ".") or extra == n)
        path = REPO / folder / Path(*extra[len(FOLDERS[folder]) + 1:].split("."))
        assert path.is_dir() and not list(path.glob("*.py")), extra
        data.add(extra)
    assert found | data == listed


def test_pytest11_entry_point_names_the_plugin():
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="pytest11") if e.name == "memconform"]
    assert ep.value == "memconform.suite.plugin"


def test_pytest_xdist_comes_with_the_plain_install():
    """README's `pip install .` must be enough for `pytest -n 2` and the workflow's `-n auto`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(d.replace(" ", "").startswith("pytest-xdist>=") for d in project["dependencies"])
    # old instructions said memconform[xdist]: the extra stays, as an alias
    assert "xdist" in project["optional-dependencies"]
