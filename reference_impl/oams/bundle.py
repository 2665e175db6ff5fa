"""OAMS export bundles (§7) of the reference: `export_bundle(service, folder) -> Path` writes
`oams-export-<timestamp>/` (manifest.json, memories.jsonl sorted by created_at asc, README.md, and
embeddings.bin when the policy asks and lines carry vectors); `import_bundle(service, path)` reads
a bundle folder or a plain JSONL store and writes every memory with one atomic batch, keeping
source_id and every other member as given (§5). A manifest of a compatible version (same major;
0.x: any 0.y, §8 "backward-compatible additions") is accepted; another major is refused."""

from __future__ import annotations

import json
import struct
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memconform.reference_impl.oams.engine import OamsError, OamsService, invalid
from memconform.suite.oams import model

SOURCE_VENDOR = "memconform-reference"


class Exporter:
    """The export of one service; its seams (`lines`, `manifest`, `write_jsonl`) are what a file
    fault wraps (keys `file.<method>`)."""

    def __init__(self, service: OamsService):
        self.service = service
        from memconform.reference_impl.oams.policy import configure

        configure(self, getattr(service, "_fault_obj", None) or service.fault, (), part="file")

    def lines(self, memories: list[dict[str, Any]]) -> bytes:
        return model.render_jsonl(memories)

    def manifest(self, memories: list[dict[str, Any]], jsonl: bytes, exported_at: str) -> dict[str, Any]:
        manifest: dict[str, Any] = {
            "oams_version": model.VERSION, "source_vendor": SOURCE_VENDOR, "exported_at": exported_at,
            "namespaces": sorted({m["namespace"] for m in memories}), "memory_count": len(memories),
        }
        models = sorted({m["embedding_model"] for m in memories if "embedding" in m and "embedding_model" in m})
        if models:
            manifest["embedding_model"] = models[0] if len(models) == 1 else models[0]
        manifest["checksum_sha256"] = model.checksum(jsonl)
        return manifest

    def export(self, folder: Path) -> Path:
        now = datetime.now(timezone.utc)
        target = Path(folder) / f"oams-export-{now.strftime('%Y%m%dT%H%M%S%fZ')}"
        target.mkdir(parents=True, exist_ok=False)
        memories = self.service.all_memories()
        jsonl = self.lines(memories)
        (target / "memories.jsonl").write_bytes(jsonl)
        manifest = self.manifest(memories, jsonl, now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        (target / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
        written, _ = model.parse_jsonl(jsonl)
        # the vectors as stored, at the lines written: a fault that changes how a line writes its embedding
        # (file-embedding-strings) changes memories.jsonl alone, never the binary floats beside it
        stored = {(m["namespace"], m["key"]): m.get("embedding") for m in memories}
        vectors = [(line, stored.get((m.get("namespace"), m.get("key")), m["embedding"]))
                   for line, m in enumerate(model.memories_of(written)) if isinstance(m.get("embedding"), list)]
        if self.service.policy.export_embeddings_bin and vectors:
            keyed = self.service.policy.embeddings_bin_layout == "keyed"
            (target / "embeddings.bin").write_bytes(b"".join(
                (struct.pack("<II", line, len(v)) if keyed else b"") + struct.pack(f"<{len(v)}f", *v)
                for line, v in vectors))
        (target / "README.md").write_text(
            f"# OAMS export\n\n{len(memories)} memories in {len(manifest['namespaces'])} namespace(s), exported "
            f"{manifest['exported_at']} by {SOURCE_VENDOR} (OAMS {model.VERSION}).\n", "utf-8")
        return target


def exporter(service: OamsService) -> Exporter:
    e = getattr(service, "_exporter", None)
    if e is None:
        e = service._exporter = Exporter(service)  # type: ignore[attr-defined]
    return e


def export_bundle(service: OamsService, folder: str | Path) -> Path:
    """Write the service's live memories as a bundle inside `folder`; the bundle's path."""
    return exporter(service).export(Path(folder))


def _compatible(version: Any) -> bool:
    if not isinstance(version, str):
        return False
    want = model.VERSION.split(".")
    got = version.split(".")
    if not got or not got[0].isdigit():
        return False
    return got[0] == want[0]


def import_bundle(service: OamsService, path: str | Path) -> dict[str, Any]:
    """Import a bundle folder (or its memories.jsonl, or any JSONL store): every memory written in
    one batch, as given. Returns {"imported": n, "oams_version": v | None}. Raises OamsError
    (-32003) for a store that is not readable or an incompatible major version."""
    path = Path(path)
    version = None
    if path.is_dir():
        manifest_path = path / "manifest.json"
        if manifest_path.is_file():
            try:
                manifest = json.loads(manifest_path.read_text("utf-8"))
            except (ValueError, UnicodeDecodeError):
                raise invalid("manifest.json is not JSON") from None
            version = manifest.get("oams_version") if isinstance(manifest, dict) else None
            if not _compatible(version):
                raise invalid(f"oams_version {version!r} is not compatible with {model.VERSION}")
        path = path / "memories.jsonl"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise invalid(f"cannot read {path}: {exc}") from None
    values, problems = model.parse_jsonl(data)
    hard = [p for p in problems if p.requirement == "oams/jsonl-store"]
    if hard:
        raise invalid("; ".join(str(p) for p in hard[:5]))
    stored = service.batch_store(values)
    return {"imported": len(stored), "oams_version": version}


__all__ = ["export_bundle", "import_bundle", "Exporter", "OamsError"]


def main(argv: list[str] | None = None) -> int:
    """`python -m memconform.reference_impl.oams.bundle export --db FILE --out DIR` /
    `… import --db FILE PATH`: the reference store's bundles (until `memconform oams export|import`)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="oams-bundle")
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser("export")
    exp.add_argument("--db", required=True)
    exp.add_argument("--out", required=True)
    imp = sub.add_parser("import")
    imp.add_argument("--db", required=True)
    imp.add_argument("path")
    args = parser.parse_args(argv)
    service = OamsService(args.db)
    try:
        if args.command == "export":
            print(export_bundle(service, args.out))
        else:
            print(json.dumps(import_bundle(service, args.path)))
    except OamsError as exc:
        print(json.dumps(exc.body()), file=sys.stderr)
        return 1
    finally:
        service.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
