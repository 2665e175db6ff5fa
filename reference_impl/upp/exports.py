"""ExportPackage files (upp/02 §4) for `upp/export_events` and `upp/import_events`.

Writing: `<export dir>/<entity_key made safe>-<UTC time>-<random>.json`, created exclusively and
atomically (a temporary name, then a rename), so a reader never sees half a file and no existing
file is replaced. The entity_key only contributes letters, digits, `-` and `_` to the file
*name*; it never chooses the folder.

Reading (docs/live-upp.md): only a regular file inside the export folder or one of the configured
import folders, after resolving symbolic links and `..`; anything else, an unreadable file, a file
over `MAX_PACKAGE_BYTES`, or a file that is not an ExportPackage is `-32602`. A package of another
ontology is `-32002`. Events are checked one by one later (`event_problem`): a bad event is
skipped, not a reason to refuse the file.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Collection, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memconform.reference_impl.upp.params import utf8_text
from memconform.reference_impl.upp.rpc import INVALID_PARAMS, ONTOLOGY_NOT_FOUND, RpcError
from memconform.suite.upp.isotime import is_date_or_date_time
from memconform.suite.upp.ontology import SOURCE_TYPES

MAX_PACKAGE_BYTES = 64 << 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_export_dir() -> Path:
    """The export folder when none is configured: one per user in the shared temporary folder.
    The uid in the name keeps users apart; `private_folder` makes sure nobody else made it."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    return Path(tempfile.gettempdir()) / (f"memconform-upp-exports-{uid}" if uid is not None
                                          else "memconform-upp-exports")


class UnsafeFolder(Exception):
    """A folder in a shared place that another user made or can read or write (issue 14)."""


def private_folder(folder: Path) -> Path:
    """`folder`, created mode 0700 if missing, after checking that only this user can use it.

    A fixed name in the shared temporary folder can be made first by anyone: another user who owns
    it, or can read or write it, reads every export and plants packages for import. So the folder
    must be a real directory (not a symbolic link to one), owned by this user, with no group or
    other permission bits; else `UnsafeFolder` says why, and the server does not start."""
    try:
        folder.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"the export folder {str(folder)!r} is not a directory of its own (a symbolic link or a "
                           "file): refusing to use it; give --upp-export-dir")
    if hasattr(os, "getuid"):
        if info.st_uid != os.getuid():
            raise UnsafeFolder(f"the export folder {str(folder)!r} belongs to uid {info.st_uid}, not to this user "
                               f"(uid {os.getuid()}): another user could read the exports and plant packages; "
                               "refusing to use it (remove it, or give --upp-export-dir)")
        if info.st_mode & 0o077:
            raise UnsafeFolder(f"the export folder {str(folder)!r} has mode {stat.S_IMODE(info.st_mode):04o}: other "
                               f"users can read or write it; refusing to use it (chmod 700 it, or give "
                               "--upp-export-dir)")
    return folder


def safe_stem(entity_key: str) -> str:
    """A file-name fragment from an entity_key: never a separator, never `..`, never empty."""
    stem = _UNSAFE.sub("_", entity_key)[:64].strip("_")
    return stem or "user"


def write_package(folder: Path, package: dict[str, Any], entity_key: str, now: datetime) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # exports are personal data: the owner's only
    folder = folder.resolve()
    name = f"{safe_stem(entity_key)}-{now.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}.json"
    target = folder / name
    temporary = folder / f".{name}.part"
    data = json.dumps(package, ensure_ascii=False, indent=1, allow_nan=False).encode("utf-8")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if target.exists():  # a random suffix collided: never replace someone's file
            raise FileExistsError(target)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target


def _invalid(message: str, **data: Any) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {message}", {"invalid_params": ["file"], **data})


def resolve_import(file: str, export_dir: Path, import_dirs: Sequence[Path]) -> Path:
    """The real path of `file` when it is a regular file inside one of the allowed folders.
    A relative path is taken relative to the export folder."""
    try:
        candidate = Path(file)
        if not candidate.is_absolute():
            candidate = export_dir / candidate
        real = candidate.resolve(strict=True)
    except (OSError, ValueError, RuntimeError):  # missing, a NUL byte, a symlink loop
        raise _invalid(f"cannot read {file!r}: no such file") from None
    allowed = [d.resolve() for d in (export_dir, *import_dirs)]
    if not any(real.is_relative_to(d) for d in allowed):
        raise _invalid(f"{file!r} is outside the folders this server imports from "
                       f"(its export folder and --upp-import-dir folders)")
    if not real.is_file():
        raise _invalid(f"{file!r} is not a regular file")
    return real


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_package(path: Path) -> dict[str, Any]:
    """The ExportPackage at `path` (its events still unchecked)."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_PACKAGE_BYTES + 1)
    except OSError as exc:
        raise _invalid(f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > MAX_PACKAGE_BYTES:
        raise _invalid(f"the file is larger than {MAX_PACKAGE_BYTES} bytes")
    try:
        package = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, too deep
        raise _invalid("the file is not a JSON ExportPackage") from None
    problem = package_problem(package)
    if problem is not None:
        raise _invalid(f"the file is not an ExportPackage: {problem}")
    return package


def check_ontology(package: dict[str, Any], ontology_id: str) -> None:
    """A package of another ontology cannot be imported here: -32002 (upp/05 §4)."""
    if package["ontology"] != ontology_id:
        raise RpcError(ONTOLOGY_NOT_FOUND, f"Ontology not found: {package['ontology'][:100]!r} "
                                           f"(this server's ontology is {ontology_id})",
                       {"ontology": package["ontology"]})


def package_problem(package: Any) -> str | None:
    if not isinstance(package, dict):
        return "not a JSON object"
    for name, kind in (("entity_key", str), ("ontology", str), ("events", list), ("exported_at", str)):
        if name not in package:
            return f"{name!r} is missing"
        if not isinstance(package[name], kind):
            return f"{name!r} must be {'an array' if kind is list else 'a string'}"
    return None




def event_problem(event: Any, label_names: Collection[str], *, check_labels: bool = True) -> str | None:
    """Why an imported event is skipped (upp/03: "events with invalid labels are skipped"; and
    what is not an Event at all, upp/02 §1), or None to import it."""
    if not isinstance(event, dict):
        return "not an object"
    value = event.get("value")
    if not utf8_text(value) or not value.strip():
        return "no value"
    labels = event.get("labels")
    if not isinstance(labels, list) or not labels or not all(utf8_text(x) for x in labels):
        return "labels must be a non-empty array of strings"
    if check_labels and any(x not in label_names for x in labels):
        return "a label is not in the server's ontology"
    confidence = event.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not math.isfinite(confidence) \
            or not 0 <= confidence <= 1:
        return "confidence must be a number from 0 to 1"
    if event.get("source_type") not in SOURCE_TYPES:
        return "unknown source_type"
    for name in ("valid_from", "valid_until"):
        if event.get(name) is not None and not (utf8_text(event[name]) and is_date_or_date_time(event[name])):
            return f"{name} must be an ISO-8601 date or date-time, or null"
    return None


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 timestamp (naive ones read as UTC), or None."""
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value)
        return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # not ISO-8601, or out of range once in UTC
        return None


def storage_order(events: list[Any]) -> list[Any]:
    """Oldest first by `created_at`, package order for ties; events without a readable
    created_at keep their package order ahead of the dated ones."""
    oldest = datetime.min.replace(tzinfo=timezone.utc)

    def key(pair: tuple[int, Any]) -> tuple[datetime, int]:
        i, event = pair
        when = parse_time(event.get("created_at")) if isinstance(event, dict) else None
        return (when or oldest, i)

    return [e for _, e in sorted(enumerate(events), key=key)]
