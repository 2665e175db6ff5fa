"""The HTML page: complete, filterable, self-contained, and inert against server-chosen text."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from memconform.reports.html import FILTER_OUTCOMES, render_html
from memconform.suite.cli import cli

from . import HOSTILE, make_report


class _Collect(HTMLParser):
    """Tags with their attributes and the text inside <script>, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def _parse(page: str) -> _Collect:
    p = _Collect()
    p.feed(page)
    return p


@pytest.fixture(scope="module")
def report():
    return make_report()


@pytest.fixture(scope="module")
def page(report):
    return render_html(report)


def test_the_hand_made_report_is_a_valid_report(report):
    import jsonschema
    from importlib import resources

    schema = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_every_requirement_and_level_line_is_shown(report, page):
    rows = [attrs for tag, attrs in _parse(page).tags if tag == "tr" and "req" in (attrs.get("class") or "")]
    assert len(rows) == len(report["requirements"]) + 1  # + the requirement only a skipped check touched
    for req in report["requirements"]:
        assert f"<code>{req['id']}</code>" in page
    for level in report["levels"]:
        assert level["summary"] in page
    assert "ump/consent-recommended" in page and 'data-outcome="skipped"' in page


def test_findings_are_shown_with_sent_received_and_where(page):
    assert "/records/0/kind" in page and "received:" in page and "sent:" in page
    assert "timed out &lt;after 5s&gt;" in page  # the error's reason


def test_filter_buttons_for_each_outcome(page):
    buttons = {attrs.get("data-filter") for tag, attrs in _parse(page).tags if tag == "button"}
    assert buttons == {"all", *FILTER_OUTCOMES}
    assert any("data-outcome" in s and "#filters" in s for s in _parse(page).scripts)


def test_coverage_matrix_has_a_column_per_binding(page):
    matrix = page[page.index('<table class="matrix">'):]
    matrix = matrix[:matrix.index("</table>")]
    assert "<th>file</th><th>http</th>" in matrix
    # record-kind: passed on file, failed on http, in one row of the matrix
    assert re.search(r"ump/record-kind</code></td><td class=\"o-passed\">passed</td>"
                     r"<td class=\"o-failed\">failed</td>", matrix)
    assert "n/a" in matrix  # file-only requirements cannot be judged on http


def test_untrusted_text_is_inert(page):
    parsed = _parse(page)
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    # exactly the page's own script, and no element the finding tried to inject
    assert [t for t, _ in parsed.tags if t == "script"] == ["script"]
    assert not any("pwned" in s for s in parsed.scripts)
    assert not any(t == "img" or "onerror" in a for t, a in parsed.tags)
    assert not any(t == "b" for t, _ in parsed.tags)  # from the `sent` text


def test_the_page_is_self_contained(page):
    for tag, attrs in _parse(page).tags:
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not value.lower().startswith(("http:", "https:", "//")), (tag, attrs)
        assert tag not in ("link", "iframe", "img")
    assert "@import" not in page and "url(" not in page


def test_cli_report_html(tmp_path, report):
    src = tmp_path / "memconform-report.json"
    src.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", "html", str(src), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    stdout = CliRunner().invoke(cli, ["report", "html", str(src)], catch_exceptions=False)
    assert stdout.exit_code == 0 and "ump/record-kind" in stdout.output


def test_cli_report_html_refuses_what_is_not_a_report(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "other"}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", "html", str(bad)])
    assert result.exit_code == 2 and "not a memconform report" in result.output


# -- screenshot ------------------------------------------------------------------------------

def _png_pixels_vary(data: bytes) -> bool:
    """Decode a non-interlaced 8-bit PNG with zlib alone; True unless every pixel is the same."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, ctype, _, _, interlace = header
    assert depth == 8 and interlace == 0 and ctype in (2, 6), header
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, pixels = zlib.decompress(idat), width * bpp, bytearray(width * bpp), set()
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the PNG row filters
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp * 7))  # sample
        if len(pixels) > 1:
            return True
        prev = line
    return False


def test_png_decoder_tells_blank_from_drawn():
    def png(rows: list[bytes], width: int) -> bytes:
        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        ihdr = struct.pack(">IIBBBBB", width, len(rows), 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                + chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + r for r in rows))) + chunk(b"IEND", b""))
    white = b"\xff" * 3 * 8
    assert not _png_pixels_vary(png([white] * 4, 8))
    assert _png_pixels_vary(png([white] * 3 + [b"\x00" * 3 * 8], 8))


def test_screenshot_is_not_blank(tmp_path, page):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium not installed (Debian package chromium)")
    html_file, shot = tmp_path / "report.html", tmp_path / "shot.png"
    html_file.write_text(page, encoding="utf-8")
    proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu",
                             f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                             "--window-size=1280,2000", html_file.as_uri()],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:  # ours to stop: never leave a browser behind
            proc.kill()
            proc.wait()
    assert shot.exists(), "chromium wrote no screenshot"
    assert _png_pixels_vary(Path(shot).read_bytes())


def test_renders_a_report_of_a_real_run(pytester):
    from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)

    result, report = run_suite(pytester, "--target=reference", "--spec", "omf", "--memconform-only")
    assert result.ret == 0 and report["requirements"]
    page = render_html(report)
    for req in report["requirements"]:
        assert f"<code>{req['id']}</code>" in page
    assert all(level["summary"] in page for level in report["levels"])
