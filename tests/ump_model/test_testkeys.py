import hashlib

import pytest

from memconform.suite.ump.testkeys import TEST_KEY_NAMES, test_did, test_seed, test_signing_key


def test_names():
    assert TEST_KEY_NAMES == ("owner-a", "owner-b", "mallory")


@pytest.mark.parametrize("name", TEST_KEY_NAMES)
def test_seed_formula(name):
    assert test_seed(name) == hashlib.sha256(f"memconform-test-key:{name}".encode()).digest()
    assert bytes(test_signing_key(name)) == test_seed(name)


def test_pinned_dids():
    # Pinned so a change to the derivation (which would invalidate every signed vector) cannot pass unseen.
    assert test_did("owner-a") == "did:key:z6Mku3CYhiwXpDWtS5pRWmEb1TiX8jeyuey8SkaMXkGqy8PR"
    assert test_did("owner-b") == "did:key:z6MktamQPtvms45qiH7TL4ZU356u4gbjoXdQXfpCfPw7aedP"
    assert test_did("mallory") == "did:key:z6Mks3cHqFKtKFwQTDevQXDUgm2VHj4vKCmdvc5Y96ciH8u1"


def test_unknown_name():
    for f in (test_seed, test_signing_key, test_did):
        with pytest.raises(KeyError):
            f("eve")
