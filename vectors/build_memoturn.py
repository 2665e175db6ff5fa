"""Generate memconform's memoturn golden vectors (``vectors/memoturn/2026.06/ids.json``).

Run ``python -m memconform.vectors.build_memoturn`` to rewrite the file, ``--check`` to only compare a
fresh generation with it; then re-sign the manifest (``memconform vectors sign``).

The vectors fix the content-addressed memory id, read from the engine's code (the reading
../shared/specs/readings/oams-memoturn-outlines.md, B.4 Q1 and D.1)::

    id = "mem_" + hex(SHA-256(type ‖ 0x00 ‖ (topic_key or "") ‖ 0x00 ‖ canonical(content))[:16])
    canonical(content) = compact JSON, object keys sorted by code point, non-ASCII written raw,
                         escaping only '"', '\\' and U+0000..U+001F (\\b \\f \\n \\r \\t, else \\u00xx)

Independence: the vectors are the oracle for ``memconform.suite.memoturn.model``, so the id is computed
here with hashlib and json alone and this module never imports the project's model (a shared bug
would otherwise pass unnoticed); ``tests/vectors/node/crosscheck.mjs`` re-derives every id with its
own JSON writer and @noble/hashes. Only content the reading calls byte-identical across languages is
used: no floats, no integer beyond 2^53, no lone surrogate (those are implementation-defined).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VERSION = "2026.06"
PATH = f"memoturn/{VERSION}/ids.json"
TYPES = ("fact", "event", "instruction", "task")
R_ADDRESSED = "memoturn/id-content-addressed"
R_CONSTRUCTION = "memoturn/id-construction"
R_KEY_ORDER = "memoturn/id-key-order-insensitive"
REQUIREMENT_IDS = frozenset({R_ADDRESSED, R_CONSTRUCTION, R_KEY_ORDER})

#: The four ids the reading (D.1) states by hand; the generator refuses to write if it disagrees,
#: so a drift in either the reading or this code is caught before any file changes.
READING_D1 = {
    ("fact", "user.diet", '{"diet":"vegetarian"}'): "mem_6b71bce8b8f80e570dc5c4b37b5dd782",
    ("fact", "user.diet", '{"diet":"vegan"}'): "mem_9ba542e1e57fea3f1d1f1a052ebef27f",
    ("event", None, '{"version":"v2"}'): "mem_afee44f1da2e68829ec282b8df20e52a",
    ("task", None, "{}"): "mem_693d25b4c0b65deb35e7349addebf65a",
}

DESCRIPTION = (
    "memoturn typed memories (docs page of June 2026): the content-addressed memory id. Each case gives "
    "the three inputs of the hash (type, topic_key when present, content) and expects the id, the full "
    "SHA-256 digest, the content's canonical text and the exact text hashed (UTF-8, U+0000 as separator). "
    "Everything else a memory carries is outside the hash: summary, keywords, source, session_id, "
    "embedding and ttl (a memory ingested with any of these has the id of its case). Construction as read "
    "from the engine (crates/docstore/src/memories.rs memory_id): 'mem_' + lowercase hex of the first 16 "
    "bytes of SHA-256(type, 0x00, topic_key or '', 0x00, content as compact JSON with keys sorted by code "
    "point and non-ASCII raw). Content with floats, integers beyond 2^53 or lone surrogates has "
    "implementation-defined ids and is not covered; an absent and an empty topic_key collide and are not "
    "covered either. expect.same_id_as and expect.differs_from name another case of this file."
)


# --------------------------------------------------------------------------- the construction

def canonical(content: Any) -> str:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def preimage(mtype: str, topic_key: str | None, content: Any) -> str:
    return mtype + "\0" + (topic_key or "") + "\0" + canonical(content)


def digest(mtype: str, topic_key: str | None, content: Any) -> bytes:
    return hashlib.sha256(preimage(mtype, topic_key, content).encode("utf-8")).digest()


def memory_id(mtype: str, topic_key: str | None, content: Any) -> str:
    return "mem_" + digest(mtype, topic_key, content)[:16].hex()


# --------------------------------------------------------------------------- the cases

def _case(slug: str, title: str, mtype: str, topic_key: str | None, content: Any, *,
          key_order: bool = False, same_as: str | None = None, differs_from: str | None = None) -> dict:
    reqs = [R_ADDRESSED, R_CONSTRUCTION] + ([R_KEY_ORDER] if key_order else [])
    given: dict[str, Any] = {"type": mtype}
    if topic_key is not None:
        given["topic_key"] = topic_key
    given["content"] = content
    expect: dict[str, Any] = {
        "id": memory_id(mtype, topic_key, content),
        "sha256": digest(mtype, topic_key, content).hex(),
        "canonical": canonical(content),
        "hashed": preimage(mtype, topic_key, content),
    }
    if same_as is not None:
        expect["same_id_as"] = f"memoturn/{VERSION}/ids/{same_as}"
    if differs_from is not None:
        expect["differs_from"] = f"memoturn/{VERSION}/ids/{differs_from}"
    return {
        "id": f"memoturn/{VERSION}/ids/{slug}",
        "title": title,
        "requirements": reqs,
        "kind": "memoturn-id",
        "versions": {"since": VERSION, "until": VERSION},
        "input": given,
        "expect": expect,
        "source": "memconform",
    }


NFC_CAFE = unicodedata.normalize("NFC", "café crème")
NFD_CAFE = unicodedata.normalize("NFD", "café crème")


def id_cases() -> list[dict]:
    out: list[dict] = []

    def add(*args: Any, **kwargs: Any) -> None:
        out.append(_case(*args, **kwargs))

    # The page's own examples (its mem_a1…/mem_b2… are placeholders; these are the ids by the reading).
    add("doc-diet-vegetarian", "the page's first fact: user.diet, vegetarian (reading D.1)",
        "fact", "user.diet", {"diet": "vegetarian"})
    add("doc-diet-vegan", "the page's superseding fact: user.diet, vegan (reading D.1)",
        "fact", "user.diet", {"diet": "vegan"}, differs_from="doc-diet-vegetarian")
    add("doc-event-deploy", "the page's batch event (session_id s-417 is outside the hash; reading D.1)",
        "event", None, {"version": "v2"})
    add("doc-task-refund", "the page's batch task with empty content (ttl 86400 is outside the hash; reading D.1)",
        "task", None, {})
    add("doc-provenance-tabs",
        "the page's provenance example: summary 'prefers tabs' and source 'claude-code' are outside the hash, "
        "so every agent's copy has this id",
        "fact", "user.indentation", {"indent": "tabs"})

    # The type is hashed: one content under each of the four types gives four ids.
    for mtype in TYPES:
        add(f"type-{mtype}", f"type {mtype}, no topic_key, the same content as the other type-* cases",
            mtype, None, {"note": "same content, another type"},
            differs_from=None if mtype == "fact" else "type-fact")
    add("instruction-with-topic", "an instruction with a topic_key",
        "instruction", "agent.tone", {"tone": "concise", "emoji": False})

    # The topic_key is hashed.
    add("fact-without-topic", "the vegan fact without a topic_key: another id",
        "fact", None, {"diet": "vegan"}, differs_from="doc-diet-vegan")
    add("topic-key-unicode", "a topic_key outside ASCII, hashed as UTF-8",
        "fact", "user.名前", {"name": "Ünal"})

    # Member order never matters; the canonical form sorts by code point.
    add("key-order-flat-a", "two members in sorted order",
        "fact", "user.pair", {"a": 1, "b": 2})
    add("key-order-flat-b", "the same two members in reverse order: the same id",
        "fact", "user.pair", {"b": 2, "a": 1}, key_order=True, same_as="key-order-flat-a")
    add("key-order-nested-a", "nested objects inside arrays, members out of order at every level",
        "event", None, {"z": {"y": [{"d": 1, "c": [{"f": None, "e": True}]}], "x": "x"}, "a": []})
    add("key-order-nested-b", "the same nested content written in sorted order: the same id",
        "event", None, {"a": [], "z": {"x": "x", "y": [{"c": [{"e": True, "f": None}], "d": 1}]}},
        key_order=True, same_as="key-order-nested-a")
    # JavaScript's default sort compares UTF-16 code units, putting U+1F600 (D83D DE00) before U+FF61;
    # by code point (serde_json's BTreeMap, Python) U+FF61 comes first.
    add("key-order-astral-a", "keys U+FF61 and U+1F600, astral first: code-point order puts U+FF61 first",
        "fact", "user.keys", {"\U0001f600": "grinning", "\uff61": "halfwidth stop"})
    add("key-order-astral-b", "the same keys, U+FF61 first: the same id",
        "fact", "user.keys", {"\uff61": "halfwidth stop", "\U0001f600": "grinning"},
        key_order=True, same_as="key-order-astral-a")
    # JavaScript objects enumerate array-index-like keys first, in numeric order ("2" before "10").
    add("key-order-integer-like", "integer-like keys sort as strings: \"10\" before \"2\" before \"b\"",
        "fact", "user.numbers", {"b": 0, "2": "two", "10": "ten"})
    add("key-order-non-ascii", "ASCII, Latin-1 and CJK keys: sorted by code point, not by locale",
        "event", None, {"é": 2, "z": 1, "中": 3, "E": 0, "É": 4})
    add("key-escaped", "keys needing escapes (quote, backslash, newline) and the empty key",
        "event", None, {"": "empty", "a\"b": 1, "a\\b": 2, "a\nb": 3})
    add("key-proto", "a member named __proto__ is an ordinary member",
        "event", None, {"__proto__": {"polluted": True}, "constructor": "x"})

    # Arrays keep their order.
    add("array-order", "an array's order is content: [3, 1, 2]",
        "event", None, {"list": [3, 1, 2]})
    add("array-order-sorted", "the array sorted: another id",
        "event", None, {"list": [1, 2, 3]}, differs_from="array-order")
    add("array-nested", "nested empty arrays and objects",
        "event", None, [[], [[]], {}, [{}], ""])

    # Strings: raw UTF-8 outside ASCII, JSON escapes only for '"', '\\' and the C0 controls.
    add("unicode-nfc", "precomposed text (NFC): é as U+00E9",
        "fact", "user.drink", {"drink": NFC_CAFE})
    add("unicode-nfd", "the same text decomposed (NFD): e + U+0301, no normalization, another id",
        "fact", "user.drink", {"drink": NFD_CAFE}, differs_from="unicode-nfc")
    add("unicode-astral", "astral characters in a value and a key (UTF-8 four bytes, no surrogate escapes)",
        "event", None, {"🦀": "ferris 🦀 𝄞"})
    add("unicode-rtl", "right-to-left text with bidi controls U+200F and U+202E, written raw",
        "event", None, {"he": "שלום עולם", "ar": "مرحبا بالعالم", "marks": "\u200fa\u202eb"})
    add("unicode-line-separators", "U+2028 and U+2029 are written raw, not escaped",
        "event", None, {"text": "line\u2028separator\u2029paragraph"})
    add("control-characters", "C0 controls: \\b \\f \\n \\r \\t short forms, others \\u00xx lowercase; DEL raw",
        "event", None, {"text": "\b\f\n\r\t|\u0000\u0001\u001b\u001f|\u007f"})
    add("quotes-backslashes", "quotes and backslashes escaped; '/' and '<' are not",
        "event", None, {"text": "say \"hi\" C:\\path\\ </script> a/b"})

    # Numbers without floats: integers within 2^53 are exact everywhere.
    add("integers", "integers up to ±2^53, zero and -1",
        "event", None, {"max": 2 ** 53, "max_safe": 2 ** 53 - 1, "min": -(2 ** 53), "zero": 0, "minus_one": -1})
    add("booleans-null", "true, false and null as member values",
        "fact", "user.flags", {"t": True, "f": False, "n": None})

    # Content that is not an object.
    add("content-null", "content null", "task", None, None)
    add("content-empty-array", "content []", "task", None, [], differs_from="doc-task-refund")
    add("content-empty-string", "content \"\"", "task", None, "")
    add("content-string", "content a bare string", "fact", "user.diet", "vegan", differs_from="doc-diet-vegan")
    add("content-integer", "content a bare integer", "event", None, 42)
    add("content-true", "content a bare boolean", "event", None, True)
    return out


# --------------------------------------------------------------------------- self-check, build

def _self_check(cases: list[dict]) -> None:
    for (mtype, topic, text), want in READING_D1.items():
        got = memory_id(mtype, topic, json.loads(text))
        if got != want:
            raise AssertionError(f"reading D.1 says {want} for {mtype}/{topic}/{text}, computed {got}")
    by_id = {c["id"]: c for c in cases}
    if len(by_id) != len(cases):
        raise AssertionError("duplicate case id")
    seen: dict[str, str] = {}
    for c in cases:
        e = c["expect"]
        same, other = e.get("same_id_as"), e.get("differs_from")
        if same is not None and by_id[same]["expect"]["id"] != e["id"]:
            raise AssertionError(f"{c['id']}: not the id of {same}")
        if other is not None and by_id[other]["expect"]["id"] == e["id"]:
            raise AssertionError(f"{c['id']}: the id of {other}")
        if same is None and e["id"] in seen:
            raise AssertionError(f"{c['id']}: the same id as {seen[e['id']]} but no same_id_as")
        seen.setdefault(e["id"], c["id"])
        if not set(c["requirements"]) <= REQUIREMENT_IDS:
            raise AssertionError(f"{c['id']}: unknown requirement")
        if _has_float(c["input"]["content"]) or c["input"].get("topic_key") == "":
            raise AssertionError(f"{c['id']}: implementation-defined input")
        e_bytes = e["hashed"].encode("utf-8")
        if e_bytes.count(b"\0") < 2 or hashlib.sha256(e_bytes).hexdigest() != e["sha256"]:
            raise AssertionError(f"{c['id']}: hashed text and digest disagree")


def _has_float(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return True
    if isinstance(value, int):
        return abs(value) > 2 ** 53
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    return False


def build() -> dict[str, bytes]:
    """Every generated memoturn vector file: relative path (under vectors/) -> bytes."""
    cases = id_cases()
    _self_check(cases)
    doc = {
        "spec": "memoturn",
        "version": VERSION,
        "description": DESCRIPTION,
        "generator": "python -m memconform.vectors.build_memoturn",
        "cases": cases,
    }
    return {PATH: (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the vectors/ folder to write (default: this package)")
    parser.add_argument("--check", action="store_true", help="only compare a fresh generation with the files")
    args = parser.parse_args(argv)
    files = build()
    stale = [p for p, data in files.items() if not (args.root / p).is_file() or (args.root / p).read_bytes() != data]
    if args.check:
        for p in stale:
            print(f"stale: {p}")
        return 1 if stale else 0
    for p, data in files.items():
        target = args.root / p
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    print(f"wrote {len(files)} files ({len(stale)} changed) under {args.root}")
    if stale:
        print("vector files changed: re-sign the manifest (memconform vectors sign)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
