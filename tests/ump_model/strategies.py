"""Hand-written hypothesis strategies for UMP records (reusable: ``from ump_model.strategies import ...``).

``valid_records()`` draws records that are valid under their own ``ump`` version: all five kinds, every
optional block (lifecycle, supersedes, superseded_by, relations, provenance, consent, integrity),
unicode and control characters in text, awkward numbers (−0.0, 1e21, tiny and huge floats, integers up to
±(2**53−1)) in ``body.structured`` and ``evidence.weight``. ``signed_records()`` draws valid records owned
by a test key and signed by it.

hypothesis-jsonschema is deliberately not used (it breaks with this hypothesis and lacks 2020-12).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone

from hypothesis import strategies as st

from memconform.suite.ump.integrity import sign
from memconform.suite.ump.record import KINDS, VERSIONS, VISIBILITIES
from memconform.suite.ump.testkeys import TEST_KEY_NAMES, test_did, test_signing_key

BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
MAX_SAFE = 2**53 - 1

# Any Unicode scalar value except lone surrogates (not encodable as UTF-8, not JSON text).
unicode_chars = st.characters(blacklist_categories=("Cs",))

TRICKY_TEXTS = (
    "",
    " ",
    "\n",
    "\n\n",
    "  leading spaces",
    "trailing spaces   ",
    "trailing newlines\n\n",
    "---",
    "---\n",
    "before\n---\nafter",
    "\n---\n---\n",
    "---\nkey: value\n---\n",
    "```yaml\n---\nx: 1\n...\n```",
    "windows\r\nline\r\nends\r\n",
    "lone \r carriage return",
    "tabs\tand\x0bvertical\x0cfeeds",
    "unicode ✓ 🚀 Ünïcødé 中文 עברית",
    "line separators \u2028 \u2029 \x85 and BOM \ufeff inside",
    "controls \x00\x01\x1f\x7f",
    "'quotes' \"double\" `back` \\ backslash",
    "# heading\n\n- list: item\n- {flow: map}\n",
    "yes",
    "null",
    "1e3",
    "2026-06-04T10:00:00Z",
)

texts = st.one_of(st.sampled_from(TRICKY_TEXTS), st.text(unicode_chars, max_size=40))
short_texts = st.text(unicode_chars, max_size=12)

record_ids = st.text(BASE32, min_size=1, max_size=30).map(lambda s: "urn:ump:" + s)

TEST_DIDS = tuple(test_did(n) for n in TEST_KEY_NAMES)
owners = st.one_of(
    st.sampled_from(TEST_DIDS),
    st.sampled_from(("did:web:example.com", "did:example:123456789abcdefghi", "opaque-owner")),
)

json_finite_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from((-0.0, 0.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, 333333333.33333329)),
)
safe_ints = st.integers(min_value=-MAX_SAFE, max_value=MAX_SAFE)

json_scalars = st.one_of(st.none(), st.booleans(), safe_ints, json_finite_floats, st.text(unicode_chars, max_size=15))
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(unicode_chars, max_size=8), children, max_size=4),
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(unicode_chars, max_size=8), json_values, max_size=5)

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_OFFSETS = (timedelta(0), timedelta(hours=5, minutes=30), timedelta(hours=-8), timedelta(hours=14))


@st.composite
def instants(draw) -> datetime:
    seconds = draw(st.integers(min_value=0, max_value=4_102_444_800))  # 1970 .. 2100
    micro = draw(st.sampled_from((0, 0, 500_000, 123_456)))
    return _EPOCH + timedelta(seconds=seconds, microseconds=micro)


@st.composite
def rfc3339(draw, instant: datetime | None = None) -> str:
    moment = instant if instant is not None else draw(instants())
    offset = draw(st.sampled_from(_OFFSETS))
    local = moment.astimezone(timezone(offset))
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if local.microsecond:
        text += "." + f"{local.microsecond:06d}".rstrip("0")
    if offset == timedelta(0) and draw(st.booleans()):
        return text + "Z"
    sign_ = "+" if offset >= timedelta(0) else "-"
    total = abs(int(offset.total_seconds())) // 60
    return f"{text}{sign_}{total // 60:02d}:{total % 60:02d}"


@st.composite
def time_blocks(draw) -> dict:
    block = {"created": draw(rfc3339())}
    if draw(st.booleans()):
        block["observed"] = draw(rfc3339())
    a, b = sorted(draw(st.lists(instants(), min_size=2, max_size=2)))
    if draw(st.booleans()):
        block["valid_from"] = draw(rfc3339(a))
    choice = draw(st.sampled_from(("absent", "null", "value")))
    if choice == "null":
        block["valid_to"] = None
    elif choice == "value":
        block["valid_to"] = draw(rfc3339(b))
    return block


unit_interval = st.one_of(st.floats(min_value=0, max_value=1), st.sampled_from((0, 1, 0.0, 1.0)))

lifecycles = st.fixed_dictionaries({}, optional={
    "confidence": unit_interval,
    "salience": unit_interval,
    "decay": st.sampled_from(("half_life:P90D", "none", "")) | short_texts,
    "status": st.sampled_from(("active", "candidate", "tombstoned")),
})

relation_types = st.sampled_from(("about", "contradicts", "depends_on", "derived_from", "duplicate_of")) | short_texts
relation_targets = record_ids | short_texts.map(lambda s: "entity:" + s)
relations = st.lists(st.fixed_dictionaries({"type": relation_types, "target": relation_targets}), max_size=3)

provenances = st.fixed_dictionaries(
    {
        "actor": owners | short_texts,
        "actor_kind": st.sampled_from(("user", "agent", "model", "import", "scan")),
        "method": st.sampled_from(("user_correction", "revise", "forget")) | short_texts,
    },
    optional={
        "source": st.fixed_dictionaries({}, optional={"ref": short_texts, "provider": short_texts}),
        "evidence": st.lists(
            st.fixed_dictionaries({"ref": short_texts}, optional={"weight": json_finite_floats | safe_ints}),
            max_size=3,
        ),
    },
)

redact_paths = st.sampled_from((
    "body.structured.token", "$.body.structured.token", "$['body']['structured']['token']",
    "relations[0].target", "relations[*].target", "body.text", "scope.project",
))
consents = st.fixed_dictionaries({}, optional={
    "retention": st.integers(min_value=1, max_value=3650).map(lambda d: f"P{d}D"),
    "exportable": st.booleans(),
    "redact": st.lists(redact_paths, max_size=3, unique=True),
})

scopes = st.fixed_dictionaries(
    {"owner": owners, "visibility": st.sampled_from(VISIBILITIES)},
    optional={"user": owners, "project": short_texts, "agent": short_texts, "session": short_texts},
)

bodies = st.fixed_dictionaries({"text": texts}, optional={"structured": json_objects})

fake_integrity = st.fixed_dictionaries({
    "content_hash": st.text(BASE32, min_size=52, max_size=52).map(lambda s: "blake3:" + s),
    "signature": st.binary(min_size=64, max_size=64).map(
        lambda b: "ed25519:" + base64.b64encode(b).decode()),
    "signer": st.sampled_from(TEST_DIDS),
})


@st.composite
def valid_records(draw, versions=VERSIONS, with_integrity: bool = True) -> dict:
    record = {
        "ump": draw(st.sampled_from(versions)),
        "id": draw(record_ids),
        "kind": draw(st.sampled_from(KINDS)),
        "body": draw(bodies),
        "scope": draw(scopes),
        "time": draw(time_blocks()),
    }
    optional = {
        "lifecycle": lifecycles,
        "supersedes": st.lists(record_ids, max_size=3),
        "superseded_by": st.lists(record_ids, max_size=3),
        "relations": relations,
        "provenance": provenances,
        "consent": consents,
    }
    if with_integrity:
        optional["integrity"] = fake_integrity
    for key, strategy in optional.items():
        if draw(st.booleans()):
            record[key] = draw(strategy)
    return record


@st.composite
def signed_records(draw, versions=VERSIONS) -> dict:
    """A valid record owned by a test key and signed by it (so verify(...).ok)."""
    name = draw(st.sampled_from(TEST_KEY_NAMES))
    record = draw(valid_records(versions=versions, with_integrity=False))
    record["scope"]["owner"] = test_did(name)
    return sign(record, test_signing_key(name))


def strict_json(value) -> str:
    """A serialization that tells 1 from 1.0 from true and -0.0 from 0.0 (``==`` does not)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


__all__ = [
    "valid_records", "signed_records", "json_values", "json_objects", "texts", "TRICKY_TEXTS",
    "record_ids", "rfc3339", "strict_json", "unicode_chars", "TEST_DIDS", "BASE32",
]
