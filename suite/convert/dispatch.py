"""`convert(document, source=, target=)`: one whole document of one format into another.

The input is validated by the suite's model of its format and refused with every problem named
(InvalidInput); the output is validated by the target's model before it is returned (an invalid
output is a ConversionError: a bug of the converter, never passed on). Memory text is data: it is
copied and compared, never evaluated. Converting a format into itself returns a copy of the valid
input (consent and signatures untouched: nothing left the format).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.suite.convert import formats, validate
from memconform.suite.convert.common import ConversionError, ConversionResult, ConvertOptions, Ctx, InvalidInput
from memconform.suite.convert.documents import note_lost_document, records_of
from memconform.suite.convert.pointers import clone

#: Every spec's converters (suite/specs.py `converters`), in one mutable table: a test replaces one
#: direction here to see what a broken converter does.
DIRECTIONS: dict[tuple[str, str], Callable[[Any, Ctx], Any]] = formats.converters()

#: Which option speaks to which side (an option the direction does not use is said in a warning).
OPTION_SIDES = {"entity_key": ("to", "upp"), "project": ("to", "omf"), "owner": ("to", "ump"),
                "sign_key": ("to", "ump"), "tenant": ("from", "omf")}


def convert(document: Any, *, source: str, target: str, options: ConvertOptions | None = None) -> ConversionResult:
    for fmt in (source, target):
        formats.get(fmt)   # an unknown format is a ValueError naming the known ones
    options = options or ConvertOptions()
    ctx = Ctx(source, target, options)
    _unused_options(ctx)
    if source != target and (source, target) not in DIRECTIONS:
        raise ValueError(f"no conversion from {source} to {target} (directions: "
                         + ", ".join(f"{a}→{b}" for a, b in DIRECTIONS) + ")")
    document = formats.get(source).normalize(document)   # one record object is a document too
    try:
        problems = validate.problems(source, document)
        if problems:
            raise InvalidInput(source, problems)
        if source == target:
            out = clone(document)
        else:
            note_lost_document(ctx, document)
            out = DIRECTIONS[(source, target)](clone(document), ctx)
        bad = validate.problems(target, out, output=True)
    except RecursionError:
        raise InvalidInput(source, ["/: nested too deeply to convert"]) from None
    if bad:
        raise ConversionError(f"{source} → {target} produced an invalid {target.upper()} document: "
                              + "; ".join(bad[:5]))
    return ConversionResult(source, target, out, tuple(ctx.lost), tuple(ctx.warnings),
                            records_in=len(records_of(source, document)), records_out=len(records_of(target, out)))


def _unused_options(ctx: Ctx) -> None:
    for name, (side, fmt) in OPTION_SIDES.items():
        given = getattr(ctx.options, name)
        used = (ctx.target if side == "to" else ctx.source) == fmt and ctx.source != ctx.target
        if given is not None and not used:
            ctx.warn(f"{name} applies only when converting {side} {fmt.upper()}: ignored")
