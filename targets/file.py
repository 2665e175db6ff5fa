"""`--target=file:PATH`: judge a vendor's export (a .ump.json, NDJSON, a .ump.md, or a folder), or an
OMF document (a *.omf.json, any JSON object with an "omf" key, or a folder of *.omf.json)."""

from __future__ import annotations

from collections import Counter
import json
from pathlib import Path
from typing import Any

from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.suite.ump import files, record as ump_record
from memconform.suite.ump.client import FileFormat, ParseOutcome
from memconform.targets.base import Subject
from memconform.targets.target_string import FileTarget


class FileUmpClient:
    def __init__(self, version: str, loaded: files.Loaded, file_as: str = "export"):
        self.version = version
        self._loaded = loaded
        self.file_as = file_as

    def exported(self) -> files.Loaded:
        return self._loaded

    def seeded(self) -> None:
        return None

    def parse(self, text: str, fmt: FileFormat) -> ParseOutcome:
        raise NotApplicable("a file target cannot be asked to read a document; only its own files "
                            "are judged (use a descriptor with an import command to test parsing)")

    def close(self) -> None:
        pass


OMF_VERSION = "1.0"


def omf_documents(path: Path) -> list[Path]:
    """The OMF documents at `path`, or [] when it is not OMF (then it is judged as UMP, as before)."""
    if path.is_dir():
        # an OMF folder holds OMF documents only; anything UMP-named keeps it a UMP folder
        named = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                       and files._kind(p.name) is not None)
        omf = [p for p in named if p.name.lower().endswith(".omf.json")]
        return omf if omf and len(omf) == len(named) else []
    if path.name.lower().endswith(".omf.json"):
        return [path]
    if path.suffix == ".json" and not path.name.endswith(".ump.json"):
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []  # not readable JSON: left to the UMP loader, which reports it as it always has
        return [path] if isinstance(value, dict) and "omf" in value else []
    return []


class OmfDocuments:
    """`OmfFileTarget`: a vendor's OMF export judged alone."""

    binding = "file"

    def __init__(self, paths: list[Path]):
        self._paths = paths

    def documents(self) -> list[tuple[str, str]]:
        out = []
        for p in self._paths:
            try:
                out.append((str(p), p.read_bytes().decode("utf-8", "replace")))
            except OSError as exc:
                raise TargetError(f"cannot read {p}: {exc.strerror or exc}") from None
        return out

    def close(self) -> None:
        pass


class FileDriver:
    def __init__(self, target: FileTarget, forced_versions: tuple[str, ...] = ()):
        self.target = target
        self.label = target.label
        self._forced = forced_versions
        self._loaded: files.Loaded | None = None
        self._part: Any = None  # a plugged spec's part, False when none found
        self._omf: list[Path] | None = None

    def _omf_paths(self) -> list[Path]:
        if self._omf is None:
            path = Path(self.target.path)
            self._omf = omf_documents(path) if path.exists() else []
        return self._omf

    def _load(self) -> files.Loaded:
        if self._loaded is None:
            path = Path(self.target.path)
            if not path.exists():
                raise TargetError(f"{path} does not exist")
            loaded = files.load(path)
            if not loaded.records and not loaded.problems and not loaded.sources:
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

    def _plugged(self) -> Any:
        """The part of a spec that declares its own file discovery (suite/specs.py) and finds its
        files here, or None."""
        if self._part is None:
            from memconform.suite.specs import plugged

            self._part = next((part for _, discover in plugged("file_discovery")
                               if (part := discover(self.target.path, label=self.label)) is not None), False)
        return self._part or None

    def subjects(self) -> list[Subject]:
        if not Path(self.target.path).exists():  # one connect error, even when --spec forces the versions
            raise TargetError(f"{self.target.path} does not exist")
        if self._plugged() is not None:
            return self._plugged().subjects()
        if self._omf_paths():
            return [Subject(self.label, "omf", OMF_VERSION, "file")]
        return [Subject(self.label, "ump", v, "file") for v in self.versions()]

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def client(self, subject: Subject) -> Any:
        if self._plugged() is not None and subject.spec not in ("ump", "omf"):
            return self._plugged().client(subject)
        if subject.spec == "omf":
            return OmfDocuments(self._omf_paths())
        loaded = self._load()
        several = len(self.versions()) > 1
        if several:  # a mixed export: each version's records are judged by that version
            loaded = files.Loaded(
                records=tuple(r for r in loaded.records
                              if not isinstance(r.record, dict) or r.record.get("ump") == subject.version
                              or r.record.get("ump") not in ump_record.VERSIONS),
                problems=loaded.problems, sources=loaded.sources)
        return FileUmpClient(subject.version, loaded, self.target.file_as)

    def describe(self) -> dict[str, Any]:
        if self._part:
            return {"label": self.label, "kind": "file", "path": str(self.target.path), "advertised": {},
                    "as": self.target.file_as, **self._part.describe()}
        return {"label": self.label, "kind": "file", "path": str(self.target.path), "advertised": {},
                "as": self.target.file_as,
                **({"format": "omf"} if self._omf_paths() else {})}

    def close(self) -> None:
        pass
