"""Format round trips A → B → A, judged by the mapping table.

For each source record the table promises (mapped or extension rows of A → B) that the field
comes back equal; each that does not is a `Loss` whose requirement is the row id. What the table
itself drops is not a loss: it is listed in the notes, and `extra["kept_though_lost"]` lists any
field the table calls lost that came back anyway (the table is honest both ways when it is empty).
The records compared are the source's minus those the table drops whole (consent, blank text), in
order; `compared < placed` then, and the round trip did not keep everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from memconform.suite.convert import carry, formats, mapping, umpside
from memconform.suite.convert.common import ConvertOptions
from memconform.suite.convert.dispatch import convert
from memconform.suite.convert.corpora import default_corpora
from memconform.suite.convert.documents import record_id, records_of
from memconform.suite.convert.pointers import MISSING, get, read
from memconform.suite.jsonvalue import json_equal
from memconform.suite.interop.model import Loss, RoundTrip
from memconform.suite.ump import consent


def format_round_trip(document: Any, via: Sequence[str], options: ConvertOptions | None = None) -> RoundTrip:
    """`via` is [A, B, A] (or [A, A]: the identity); `document` is in format A."""
    via = list(via)
    if not (len(via) == 3 and via[0] == via[2] and via[0] != via[1]) and not (len(via) == 2 and via[0] == via[1]):
        raise ValueError(f"a format round trip is [A, B, A] or [A, A], not {via}")
    a, b = via[0], via[1]
    document = formats.get(a).normalize(document)
    there = convert(document, source=a, target=b, options=options)
    back = convert(there.document, source=b, target=a, options=options)
    if a == b:
        return _identity(document, back.document, a)
    return _judge(document, there, back, a, b)


def format_matrix(corpora: dict[str, Any] | None = None, options: ConvertOptions | None = None, *,
                  include_identity: bool = True) -> list[RoundTrip]:
    """Every ordered pair (A → B → A) over the formats, each from corpora[A] (default_corpora())."""
    corpora = corpora or default_corpora()
    return [format_round_trip(corpora[a], [a, b, a] if a != b else [a, a], options)
            for a in formats.names() for b in formats.names()
            if (a, b) in mapping.table() or (include_identity and a == b)]


# -- judging -----------------------------------------------------------------------------------------

def expected_records(document: Any, a: str, b: str) -> list[tuple[int, Any]]:
    """(source index, the record as the table promises it back) for each record that goes."""
    fields = {r.field for r in mapping.rows(a, b)}
    text_field = next((r.field for r in mapping.rows(a, b) if r.to == "/content"), None)
    out = []
    for i, rec in enumerate(records_of(a, document)):
        if "@unexportable" in fields and not consent.is_exportable(rec):
            continue
        if "@redacted" in fields:
            rec = umpside.redacted(rec)
            if rec is None:
                continue
        if "@blank-text" in fields and text_field:
            text = get(rec, text_field)
            if not isinstance(text, str) or not text.strip():
                continue
        out.append((i, rec))
    return out


def _split(siblings: dict[str, set[str]]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    record = {k: v for k, v in siblings.items() if not k.startswith("document:")}
    document = {k.removeprefix("document:"): v for k, v in siblings.items() if k.startswith("document:")}
    return record, document


def _judge(document: Any, there: Any, back: Any, a: str, b: str) -> RoundTrip:
    pair = mapping.pair(a, b)
    rec_sib, doc_sib = _split(mapping.siblings(a))
    expected = expected_records(document, a, b)
    middle, final = records_of(b, there.document), records_of(a, back.document)
    stage_there, stage_back, cycle = f"{a} → {b}", f"{b} → {a}", f"{a} → {b} → {a}"
    losses: list[Loss] = []
    kept_though_lost: list[dict[str, str]] = []
    if len(final) != len(expected):
        losses.append(Loss("", "", pair.row("@record").id, len(expected), len(final), cycle))
    compared = min(len(final), len(expected))
    for k in range(compared):
        index, want_rec = expected[k]
        got_rec, mid = final[k], middle[k] if k < len(middle) else None
        rid = record_id(a, want_rec, index)
        for row in pair.rows:
            if not row.field.startswith("/"):
                continue
            want, got = read(want_rec, row.field, rec_sib), read(got_rec, row.field, rec_sib)
            if row.promised and not json_equal(want, got):
                stage = stage_back if _arrived(mid, row, want, a, b, rec_sib) else stage_there
                losses.append(Loss(rid, row.field, row.id, want, got, stage))
            elif not row.promised and want is not MISSING and json_equal(want, got):
                kept_though_lost.append({"record": rid, "field": row.field, "row": row.id})
    if expected:
        # The envelope travels on the records: an empty document has nothing to carry it.
        for row in pair.rows:
            if not row.is_document:
                continue
            want, got = read(document, row.pointer, doc_sib), read(back.document, row.pointer, doc_sib)
            if row.promised and not json_equal(want, got):
                losses.append(Loss("", row.field, row.id, want, got, cycle))
            elif not row.promised and want is not MISSING and json_equal(want, got):
                kept_though_lost.append({"record": "", "field": row.field, "row": row.id})
    by_design = Counter(lost.row for lost in there.lost)
    notes = tuple(f"{row_id}: lost by design ({n}×)" for row_id, n in sorted(by_design.items()))
    return RoundTrip(spec=a, version=mapping.VERSIONS[a], source=a, destination=b,
                     placed=len(records_of(a, document)), compared=compared, losses=tuple(losses), notes=notes,
                     extra={"via": [a, b, a], "lost_by_design": dict(by_design), "kept_though_lost": kept_though_lost,
                            "warnings": list(there.warnings) + list(back.warnings)})


def _arrived(mid: Any, row: mapping.Row, want: Any, a: str, b: str, siblings: dict[str, set[str]]) -> bool:
    """Whether the intermediate record held the field (natively or carried): then it was lost on
    the way back, otherwise on the way there."""
    if mid is None or want is MISSING:
        return mid is not None
    carried = carry.payload_in(mid, b, a)
    if carried is not None and json_equal(read(carried["fields"], row.field, siblings), want):
        return True
    return row.fate is mapping.Fate.MAPPED and json_equal(get(mid, row.to), want)


def _identity(document: Any, final: Any, fmt: str) -> RoundTrip:
    before, after = records_of(fmt, document), records_of(fmt, final)
    row_id = f"mapping/{fmt}-{fmt}/record"
    losses = [Loss(record_id(fmt, x, i), "", row_id, x, y, f"{fmt} → {fmt}")
              for i, (x, y) in enumerate(zip(before, after)) if not json_equal(x, y)]
    if len(before) != len(after) or not json_equal(_envelope(fmt, document), _envelope(fmt, final)):
        losses.append(Loss("", "", row_id, len(before), len(after), f"{fmt} → {fmt}"))
    return RoundTrip(spec=fmt, version=mapping.VERSIONS[fmt], source=fmt, destination=fmt, placed=len(before),
                     compared=min(len(before), len(after)), losses=tuple(losses),
                     notes=("identity: a format converted into itself is copied",),
                     extra={"via": [fmt, fmt], "lost_by_design": {}, "kept_though_lost": [], "warnings": []})


def _envelope(fmt: str, document: Any) -> Any:
    member = formats.get(fmt).records_member
    if member is None:
        return None
    return {k: v for k, v in document.items() if k != member}
