"""What the OMF checks need from an implementation, independent of how it is reached.

OMF 1.0 (`../shared/specs/omf-1.0.md`) is memd's export/import document. An implementation is driven
through three operations — export, import, preview (an import with `--dry-run true`) — over a command
line (a target descriptor's command templates), over HTTP where offered, or judged from a file alone.
The contract is docs/omf.md.

Drivers never raise for an answer they do not like: a run that exits non-zero, prints no JSON or an
unexpected shape comes back as an `OmfRun` carrying what was seen. They raise `TargetError` only when
the implementation could not be run at all (command not found, timeout, connection refused).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Binding = Literal["cli", "http", "file"]


@dataclass(frozen=True)
class OmfRun:
    """One export, import or preview as it happened.

    `sent` is what was asked (the command line, or method + URL + body summary); `ok` says the
    implementation reported success (exit code 0 / HTTP 2xx); `result` is its JSON answer (import:
    {imported, duplicates, skipped}; preview: {total, to_import, duplicates, filtered, unscoped,
    by_project}; export over HTTP: the document) or None when it printed none; `document` is the
    exported OMF document as text (export only: the output file's bytes, or the HTTP body);
    `error` the implementation's error text (stderr tail, or the error body) when not ok.
    """

    operation: Literal["export", "import", "preview"]
    sent: str
    ok: bool
    exit_code: int | None = None
    http_status: int | None = None
    result: Any = None
    document: str | None = None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None

    def parsed_document(self) -> Any:
        """The exported document as JSON, or None when there is none or it is not JSON."""
        if self.document is None:
            return None
        try:
            return json.loads(self.document)
        except ValueError:
            return None

    def describe(self) -> str:
        status = (f"exit {self.exit_code}" if self.exit_code is not None
                  else f"HTTP {self.http_status}" if self.http_status is not None else "no status")
        head = f"{self.operation}: {self.sent} -> {status}"
        if self.result is not None:
            head += f", result {json.dumps(self.result, sort_keys=True)[:300]}"
        if not self.ok and self.error:
            head += f", error {self.error[-300:]!r}"
        return head


class OmfTarget(Protocol):
    """An OMF implementation reached over one binding. Every call is independent; state lives in the
    implementation's store, partitioned by tenant (checks use a fresh tenant each)."""

    binding: Binding

    def export(self, tenant: str, *, project: str | None = None, include_history: bool | None = None,
               include_superseded: bool | None = None, include_expired: bool | None = None) -> OmfRun:
        """Export the tenant's memories; a flag left None is not passed (the implementation's default)."""

    def import_document(self, tenant: str, document: str | bytes, *, include_archived: bool | None = None,
                        fuzzy_threshold: float | None = None, dry_run: bool = False) -> OmfRun:
        """Import (or, with dry_run, preview) `document` exactly as given (bytes/text, so malformed
        documents can be sent)."""

    def close(self) -> None: ...


class OmfFileTarget(Protocol):
    """A vendor's export document judged alone (`file:PATH`): only what a file can show."""

    binding: Binding  # "file"

    def documents(self) -> list[tuple[str, str]]:
        """(path, text) of every OMF document given."""
