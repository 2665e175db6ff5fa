"""The vectors are exactly what the generator makes, and the generator is deterministic and
independent of the project's own UMP model."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from memconform.vectors import build_ump, load, manifest


def test_generator_is_deterministic():
    assert build_ump.build() == build_ump.build()


def test_committed_vectors_equal_a_fresh_generation():
    fresh = build_ump.build()
    stale = [p for p, data in fresh.items() if (manifest.PACKAGE_DIR / p).read_bytes() != data]
    assert stale == [], "vector files differ from the generator: run python -m memconform.vectors.build_ump"
    # UMP's generated cases; OAMS's are written by hand from its text (tests/oams/test_vectors.py)
    case_files = {p for p in load.files() if p.count("/") == 2 and p.startswith("ump/")}
    assert case_files == set(fresh), "a case file exists that the generator does not make"


def test_generator_check_mode_passes():
    proc = subprocess.run(
        [sys.executable, "-m", "memconform.vectors.build_ump", "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_generator_does_not_import_the_project_model():
    tree = ast.parse(Path(build_ump.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert not {m for m in imported if m.startswith(("memconform", "suite", "reference_impl", "targets"))}


def test_test_key_dids_are_documented():
    readme = (manifest.PACKAGE_DIR / "README.md").read_text(encoding="utf-8")
    for name in build_ump.TEST_KEY_NAMES:
        assert build_ump.did_for(name) in readme, name
    assert manifest.release_did() in readme
