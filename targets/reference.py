"""`--target=reference[?fault=NAME]`: the in-process reference implementation."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from memconform.reference_impl.faults import FAULTS
from memconform.reference_impl.ump.engine import UmpEngine, UmpError
from memconform.suite.outcomes import TargetError
from memconform.suite.ump import files
from memconform.suite.ump.client import FileFormat, ParseOutcome
from memconform.suite.ump.corpus import export_corpus
from memconform.targets.base import Subject
from memconform.targets.target_string import ReferenceTarget



class ReferenceUmpFileClient:
    """The reference implementation's file binding: seeded with the export corpus, then exported
    as .ump.json, NDJSON and a folder of .ump.md into a private temporary folder."""

    def __init__(self, version: str, fault: str | None):
        self.version = version
        self.fault = fault if fault is not None and FAULTS[fault].applies_to("ump", version) else None
        self._seeded = export_corpus(version)
        self._tmp = tempfile.TemporaryDirectory(prefix="memconform-ref-")
        engine = self._engine()
        try:
            engine.import_records(self._seeded)
        except UmpError as exc:
            raise TargetError(f"the reference implementation refused the export corpus: {exc}") from exc
        root = Path(self._tmp.name)
        (root / "export.ump.json").write_text(engine.export_json(), encoding="utf-8")
        (root / "export.ump.ndjson").write_text(engine.export_ndjson(), encoding="utf-8")
        md_dir = root / "md"
        md_dir.mkdir()
        for name, text in engine.export_md().items():
            (md_dir / name).write_text(text, encoding="utf-8")
        self._exported = files.load(root)

    def _engine(self) -> UmpEngine:
        return UmpEngine(version=self.version, fault=self.fault)

    def exported(self) -> files.Loaded:
        return self._exported

    def seeded(self) -> tuple[dict[str, Any], ...]:
        return self._seeded

    def parse(self, text: str, fmt: FileFormat) -> ParseOutcome:
        engine = self._engine()  # a fresh store per document: cases never see each other
        try:
            ids = engine.import_text(text, fmt)
        except UmpError as exc:
            return ParseOutcome(sent=text, error=exc.code, message=exc.message, stored_after=engine.ids())
        stored = {r["id"]: r for r in engine.records()}
        return ParseOutcome(sent=text, accepted=tuple(stored[i] for i in ids), stored_after=engine.ids())

    def close(self) -> None:
        self._tmp.cleanup()


class ReferenceDriver:
    def __init__(self, target: ReferenceTarget):
        self.target = target
        self.label = target.label
        self._clients: dict[tuple[str, str, str], Any] = {}

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "ump", v, "file") for v in ("0.1", "1.0")]

    def advertised_level(self, subject: Subject) -> str | None:
        return None  # a file binding has no capabilities document to advertise a level in

    def client(self, subject: Subject) -> Any:
        key = (subject.spec, subject.version, subject.binding)
        if key not in self._clients:
            self._clients[key] = ReferenceUmpFileClient(subject.version, self.target.fault)
        return self._clients[key]

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "kind": "reference", "fault": self.target.fault,
                "advertised": {}}

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self._clients.clear()


