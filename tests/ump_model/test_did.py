import base58
import pytest

from memconform.suite.ump.did import DidError, did_key_from_public_key, is_did, public_key_from_did_key
from memconform.suite.ump.testkeys import TEST_KEY_NAMES, test_did, test_signing_key

EXAMPLE_DID = "did:key:z6MkmNZGTCcVSQG2dp1cBYssQWkNEwFHBvsNmBzJs6iGY9eA"


@pytest.mark.parametrize("name", TEST_KEY_NAMES)
def test_round_trip(name):
    pk = bytes(test_signing_key(name).verify_key)
    did = did_key_from_public_key(pk)
    assert did.startswith("did:key:z6Mk")  # every Ed25519 did:key starts so
    assert public_key_from_did_key(did) == pk


def test_real_did_round_trips():
    pk = public_key_from_did_key(EXAMPLE_DID)
    assert len(pk) == 32
    assert did_key_from_public_key(pk) == EXAMPLE_DID


def _did(raw: bytes) -> str:
    return "did:key:z" + base58.b58encode(raw).decode()


@pytest.mark.parametrize(
    "did, reason",
    [
        ("did:web:example.com", "not-did-key"),
        ("urn:ump:abc", "not-did-key"),
        ("", "not-did-key"),
        (42, "not-did-key"),
        ("did:key:f6Mk", "not-multibase-z"),
        ("did:key:", "not-multibase-z"),
        ("did:key:z", "bad-base58"),
        ("did:key:z0OIl", "bad-base58"),
        ("did:key:z6Mk#key-1", "bad-base58"),
        (_did(b"\xe7\x01" + bytes(33)), "wrong-multicodec"),  # secp256k1-pub
        (_did(b"\x12\x20" + bytes(32)), "wrong-multicodec"),
        (_did(b"\xed"), "wrong-multicodec"),
        (_did(b"\xed\x01" + bytes(31)), "wrong-length"),
        (_did(b"\xed\x01" + bytes(33)), "wrong-length"),
        (_did(b"\xed\x01"), "wrong-length"),
    ],
)
def test_each_did_error_reason(did, reason):
    with pytest.raises(DidError) as info:
        public_key_from_did_key(did)
    assert info.value.reason == reason
    assert isinstance(info.value, ValueError)
    assert str(info.value)


def test_wrong_key_length_cannot_be_encoded():
    with pytest.raises(DidError) as info:
        did_key_from_public_key(bytes(31))
    assert info.value.reason == "wrong-length"


@pytest.mark.parametrize(
    "s",
    [EXAMPLE_DID, "did:web:example.com", "did:web:example.com%3A8443", "did:example:a:b", "did:ion:EiA_x-y.z",
     "did:plc:ewvi7nxzyoun6zhxrhs64oiz"],
)
def test_is_did_accepts(s):
    assert is_did(s)


@pytest.mark.parametrize(
    "s",
    ["did:", "did:key", "did:key:", "did:KEY:x", "did:key:a b", "did:web:example.com/path", "did:key:x#frag",
     "did:key:x?q=1", "did:web:a:", "urn:ump:x", "DID:key:x", "did:web:%zz", 5, None],
)
def test_is_did_rejects(s):
    assert not is_did(s)


def test_test_dids_are_dids():
    for name in TEST_KEY_NAMES:
        assert is_did(test_did(name))
