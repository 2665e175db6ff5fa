"""A [stop] command for the descriptor tests: GET URL (the echo server's /shutdown), then write
MARKER, so the test can see that teardown ran it.

    stop_server.py URL MARKER
"""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path


def main() -> None:
    url, marker = sys.argv[1], Path(sys.argv[2])
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
    with direct.open(url, timeout=5) as answer:
        answer.read()
    marker.write_text(f"asked {url}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
