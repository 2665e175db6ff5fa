"""Record ids (UMP §6.2): ``urn:ump:<id>``, random (L1) or content-addressed (L2+).

Follows the public reference implementation: a random id is lowercase unpadded base32 of 16 random
bytes; a content-addressed id is the base32 part of the content hash of the record computed while its
``id`` is ``""`` (and without ``integrity``). The record is signed afterwards with its new id, so the id
differs from ``integrity.content_hash``.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Mapping
from typing import Any

from .canonical import without_integrity
from .integrity import content_hash

__all__ = ["ID_PATTERN", "random_id", "content_addressed_id"]

# Use ``ID_PATTERN.fullmatch(s)``: with ``match``/``search`` Python's ``$`` also accepts a final "\n".
# §6.2 says "a random 128-bit base32 string": either RFC 4648 alphabet (base32, base32hex), either
# case, padded or not. The text's own example ids ("urn:ump:1a…", "urn:ump:9f2c…") hold characters
# only base32hex has, and RFC 4648 writes base32 in upper case (issue 13; docs/catalogue-ump.md). What
# the reference mints stays lowercase unpadded base32, as the public implementation does.
ID_PATTERN = re.compile(r"^urn:ump:[A-Za-z0-9]+=*$")


def random_id() -> str:
    return "urn:ump:" + base64.b32encode(secrets.token_bytes(16)).decode("ascii").rstrip("=").lower()


def content_addressed_id(record: Mapping[str, Any]) -> str:
    draft = without_integrity(record)
    draft["id"] = ""
    return "urn:ump:" + content_hash(draft).split(":", 1)[1]
