"""What every converter shares: the options, the result, the errors, and the few derivations
(ids, timestamps) that must be the same in every direction so edges stay consistent."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import blake3
from nacl.signing import SigningKey

from memconform.suite.formats import is_date_time

#: The producer every converted OMF document names (never "memd": see mapping row document.source).
CONVERTER_APP = "memconform-convert"
#: The method of the provenance a new UMP record gets (UMP §2.6, actor_kind import).
CONVERTER_METHOD = "memconform-convert"
UNKNOWN_OWNER = "unknown-owner"
UMP_ID = re.compile(r"urn:ump:[a-z2-7]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class InvalidInput(ValueError):
    """The input is not a valid document of the format it was said to be; `problems` name where."""

    def __init__(self, fmt: str, problems: list[str]) -> None:
        shown = problems[:10] + ([f"… and {len(problems) - 10} more"] if len(problems) > 10 else [])
        super().__init__(f"not a valid {fmt.upper()} document: " + "; ".join(shown))
        self.format = fmt
        self.problems = problems


class ConversionError(RuntimeError):
    """A converter produced an invalid document: a bug here, never the input's fault."""


@dataclass(frozen=True)
class ConvertOptions:
    entity_key: str | None = None      # UPP target: the package's entity_key
    tenant: str | None = None          # OMF source: the tenant it was exported from (owner / entity_key default)
    project: str | None = None         # OMF target: project_id of items whose source names none
    owner: str | None = None           # UMP target: scope.owner of new records
    sign_key: SigningKey | None = None  # UMP target: re-sign records this key owns
    now: datetime | None = None        # the conversion's clock (exported_at, missing timestamps)

    def clock(self) -> datetime:
        return (self.now or datetime.now(timezone.utc)).astimezone(timezone.utc)


@dataclass(frozen=True)
class LostField:
    record: str    # the source record's id ("" for the envelope)
    field: str     # a pointer into the source record ("document:/…" for the envelope; a redact path)
    row: str       # the mapping row that says it is lost
    reason: str


@dataclass(frozen=True)
class ConversionResult:
    source: str
    target: str
    document: Any
    lost: tuple[LostField, ...] = ()
    warnings: tuple[str, ...] = ()
    records_in: int = 0
    records_out: int = 0


@dataclass
class Ctx:
    """One conversion's working state: the options and what it found on the way."""

    source: str
    target: str
    options: ConvertOptions
    lost: list[LostField] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def now(self) -> datetime:
        return self.options.clock()

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


# -- derivations -------------------------------------------------------------------------------------

def utc_seconds(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def derived_ump_id(fmt: str, foreign_id: str) -> str:
    """A UMP id for a record that had another format's id: deterministic, so a supersession edge
    naming that id lands on the record it became."""
    digest = blake3.blake3(f"{fmt}:{foreign_id}".encode("utf-8", "surrogatepass")).digest()
    return "urn:ump:" + base64.b32encode(digest).decode("ascii").rstrip("=").lower()


def ump_id_for(fmt: str, foreign_id: Any) -> str | None:
    """The id a record with this foreign id gets in UMP (itself when already a UMP id)."""
    if not isinstance(foreign_id, str) or not foreign_id:
        return None
    return foreign_id if UMP_ID.fullmatch(foreign_id) else derived_ump_id(fmt, foreign_id)


def as_date_time(value: Any, now: datetime) -> str:
    """An RFC 3339 date-time for a timestamp field that may hold anything: itself, a date's
    midnight UTC, or the conversion's time."""
    if is_date_time(value):
        return value
    if isinstance(value, str) and _DATE.fullmatch(value):
        candidate = value + "T00:00:00Z"
        if is_date_time(candidate):
            return candidate
    return utc_seconds(now)


def parse_instant(value: str) -> datetime | None:
    """An RFC 3339 date-time as an aware datetime (None when it is not one)."""
    try:
        moment = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def signer_did(key: SigningKey | None) -> str | None:
    if key is None:
        return None
    from memconform.suite.ump.did import did_key_from_public_key

    return did_key_from_public_key(bytes(key.verify_key))
