"""Deterministic, deliberately public test keys.

seed = SHA-256(UTF-8 ``memconform-test-key:<name>``). Anyone can rebuild every signature in the vectors
from these; never use them for anything real.
"""

from __future__ import annotations

import hashlib

from nacl.signing import SigningKey

from .did import did_key_from_public_key

__all__ = ["TEST_KEY_NAMES", "test_seed", "test_signing_key", "test_did"]

TEST_KEY_NAMES = ("owner-a", "owner-b", "mallory")


def test_seed(name: str) -> bytes:
    """32-byte Ed25519 seed of a test key; KeyError for an unknown name."""
    if name not in TEST_KEY_NAMES:
        raise KeyError(name)
    return hashlib.sha256(b"memconform-test-key:" + name.encode("utf-8")).digest()


def test_signing_key(name: str) -> SigningKey:
    return SigningKey(test_seed(name))


def test_did(name: str) -> str:
    return did_key_from_public_key(bytes(test_signing_key(name).verify_key))


# These are helpers, not tests: keep pytest from collecting them when imported into a test module.
test_seed.__test__ = False  # type: ignore[attr-defined]
test_signing_key.__test__ = False  # type: ignore[attr-defined]
test_did.__test__ = False  # type: ignore[attr-defined]
