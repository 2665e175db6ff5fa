import copy

from memconform.suite.ump.ids import ID_PATTERN, content_addressed_id, random_id
from memconform.suite.ump.integrity import content_hash, sign
from memconform.suite.ump.testkeys import test_signing_key

from ._data import example, minimal


def test_pattern():
    # §6.2 "base32": either RFC 4648 alphabet, either case, padded or not; the text's own example ids
    # ("urn:ump:9f2c…", "urn:ump:1a…") hold base32hex digits (issue 13: the published [a-z2-7] refused them)
    assert ID_PATTERN.pattern == r"^urn:ump:[A-Za-z0-9]+=*$"
    for good in ("urn:ump:jbswy3dpehpk3pxp", "urn:ump:JBSWY3DPEHPK3PXP", "urn:ump:9f2c01a8b3e4",
                 "urn:ump:1a", "urn:ump:JBSWY3DPEHPK3PXPJBSWY3DPEE======"):
        assert ID_PATTERN.fullmatch(good), good
    for bad in ("urn:ump:", "urn:ump:3dbd6376-aa", "urn:amp:abc", "urn:ump:abc\n", "urn:ump:=", "urn:ump:ab=c",
                "urn:ump:a/b", "jbswy3dpehpk3pxp"):
        assert not ID_PATTERN.fullmatch(bad), bad


def test_random_id():
    ids = {random_id() for _ in range(200)}
    assert len(ids) == 200
    for rid in ids:
        assert ID_PATTERN.fullmatch(rid)
        assert len(rid) == len("urn:ump:") + 26  # ceil(128 / 5) base32 characters, no padding


def test_content_addressed_id_is_the_hash_with_empty_id():
    record = minimal()
    expected = content_hash({**record, "id": ""}).split(":", 1)[1]
    assert content_addressed_id(record) == "urn:ump:" + expected
    assert ID_PATTERN.fullmatch(content_addressed_id(record))


def test_content_addressed_id_ignores_id_and_integrity():
    a = minimal(id="urn:ump:aaaa")
    b = sign(minimal(id="urn:ump:bbbb"), test_signing_key("owner-a"))
    assert content_addressed_id(a) == content_addressed_id(b)
    assert "integrity" in b and b["id"] == "urn:ump:bbbb"  # not mutated


def test_content_addressed_id_depends_on_content():
    a = minimal()
    b = copy.deepcopy(a)
    b["body"]["text"] += "."
    assert content_addressed_id(a) != content_addressed_id(b)


def test_reference_flow_id_differs_from_final_hash():
    # The reference mints the id with id="" and signs afterwards, so id != integrity.content_hash.
    record = minimal()
    record["id"] = content_addressed_id(record)
    signed = sign(record, test_signing_key("owner-a"))
    assert signed["integrity"]["content_hash"] != "blake3:" + record["id"][len("urn:ump:"):]
    assert content_addressed_id(example()) != example()["id"]
