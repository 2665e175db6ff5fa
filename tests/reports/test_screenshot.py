"""The HTML report and a badge, rendered in headless Chromium (Debian's `chromium`; `.ci/run`
installs it): the screenshots must show a drawn page, which a blank page of the same size does not.

The screenshots are kept for people to look at: `build/screenshots/` in the checkout, or the folder
in $MEMCONFORM_SCREENSHOTS.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from memconform.reports.html import render_html
from memconform.suite.cli import cli

from .pixels import distinct_colours, drawn_fraction

ROOT = Path(__file__).resolve().parents[2]
#: What the machine notes ask for a headless start here: no sandbox as root, and none of the
#: background connections a closed network refuses.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1")


@pytest.fixture(scope="module")
def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (Debian package `chromium`; .ci/run installs it)")
    return found


@pytest.fixture(scope="module")
def shots() -> Path:
    out = Path(os.environ.get("MEMCONFORM_SCREENSHOTS") or ROOT / "build" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def screenshot(browser: str, page: Path, shot: Path, size: tuple[int, int], profile: Path) -> bytes:
    shot.unlink(missing_ok=True)
    proc = subprocess.Popen([browser, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
                             f"--window-size={size[0]},{size[1]}", page.as_uri()],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:  # ours to stop: never leave a browser behind
            proc.kill()
            proc.wait()
    assert shot.exists(), f"chromium wrote no screenshot; it said: {err.decode('utf-8', 'replace')[-800:]}"
    return shot.read_bytes()


def _png(rows: list[bytes], width: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, len(rows), 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + r for r in rows))) + chunk(b"IEND", b""))


def test_the_pixel_reader_tells_blank_from_drawn():
    white, black = b"\xff" * 3 * 8, b"\x00" * 3 * 8
    assert drawn_fraction(_png([white] * 4, 8)) == 0
    assert drawn_fraction(_png([white] * 3 + [black], 8)) == 0.25
    assert distinct_colours(_png([white] * 3 + [black], 8)) == 2


@pytest.fixture(scope="module")
def run_report(tmp_path_factory) -> dict:
    """A real run with something to show: the reference and one of its OMF faults, side by side."""
    import json

    folder = tmp_path_factory.mktemp("run")
    done = subprocess.run(["pytest", "-p", "no:cacheprovider", "--memconform-only", "-q", "--spec=omf",
                           "--target=reference", "--target=reference?fault=omf-tags-lowercased"],
                          cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]  # the fault fails checks
    return json.loads((folder / "memconform-report.json").read_text())


def test_the_html_report_of_a_real_run_renders_in_chromium(browser, shots, run_report, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(run_report), encoding="utf-8")
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><title>blank</title><body style='background:#fff'></body>", encoding="utf-8")

    drawn = screenshot(browser, page, shots / "report.png", (1280, 2000), tmp_path / "profile")
    empty = screenshot(browser, blank, tmp_path / "blank.png", (1280, 2000), tmp_path / "profile")

    assert drawn_fraction(empty) == 0, "the control page should render blank"
    assert drawn_fraction(drawn) > 0.02, f"the report rendered (almost) blank: {shots / 'report.png'}"
    assert distinct_colours(drawn) > 16, "the report rendered without text or colour"


def test_a_badge_renders_in_chromium(browser, shots, run_report, tmp_path):
    import json

    report_file = tmp_path / "report.json"
    report_file.write_text(json.dumps(run_report), encoding="utf-8")
    out = tmp_path / "badges"
    result = CliRunner().invoke(cli, ["report", "badge", str(report_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    badges = sorted(out.glob("reference-omf-*.svg"))
    assert badges, result.output
    drawn = screenshot(browser, badges[0], shots / "badge.png", (240, 40), tmp_path / "profile")
    assert drawn_fraction(drawn) > 0.3, f"the badge rendered (almost) blank: {shots / 'badge.png'}"
    assert distinct_colours(drawn) > 4
