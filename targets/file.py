"""`--target=file:PATH`: judge a vendor's export (a .ump.json, NDJSON, a .ump.md, or a folder)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.suite.ump import files, record as ump_record
from memconform.suite.ump.client import FileFormat, ParseOutcome
from memconform.targets.base import Subject
from memconform.targets.target_string import FileTarget


class FileUmpClient:
    def __init__(self, version: str, loaded: files.Loaded):
        self.version = version
        self._loaded = loaded

    def exported(self) -> files.Loaded:
        return self._loaded

    def seeded(self) -> None:
        return None

    def parse(self, text: str, fmt: FileFormat) -> ParseOutcome:
        raise NotApplicable("a file target cannot be asked to read a document; only its own files "
                            "are judged (use a descriptor with an import command to test parsing)")

    def close(self) -> None:
        pass


class FileDriver:
    def __init__(self, target: FileTarget, forced_versions: tuple[str, ...] = ()):
        self.target = target
        self.label = target.label
        self._forced = forced_versions
        self._loaded: files.Loaded | None = None

    def _load(self) -> files.Loaded:
        if self._loaded is None:
            path = Path(self.target.path)
            if not path.exists():
                raise TargetError(f"{path} does not exist")
            loaded = files.load(path)
            if not loaded.records and not loaded.problems:
                raise TargetError(f"{path} holds no UMP files (*.ump.json, *.ump.ndjson, *.ndjson, "
                                  "*.jsonl, *.ump.md)")
            self._loaded = loaded
        return self._loaded

    def versions(self) -> tuple[str, ...]:
        """The versions the export declares; records of unknown versions are judged as the latest."""
        if self._forced:
            return self._forced
        declared = Counter(r.record.get("ump") for r in self._load().records if isinstance(r.record, dict))
        known = tuple(v for v in ump_record.VERSIONS if declared.get(v))
        return known or (ump_record.VERSIONS[-1],)

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "ump", v, "file") for v in self.versions()]

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def client(self, subject: Subject) -> Any:
        loaded = self._load()
        several = len(self.versions()) > 1
        if several:  # a mixed export: each version's records are judged by that version
            loaded = files.Loaded(
                records=tuple(r for r in loaded.records
                              if not isinstance(r.record, dict) or r.record.get("ump") == subject.version
                              or r.record.get("ump") not in ump_record.VERSIONS),
                problems=loaded.problems)
        return FileUmpClient(subject.version, loaded)

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "kind": "file", "path": str(self.target.path), "advertised": {}}

    def close(self) -> None:
        pass
