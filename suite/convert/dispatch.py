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

from memconform.suite.convert import mapping, memoturnside, validate
from memconform.suite.convert.common import ConversionError, ConversionResult, ConvertOptions, Ctx, InvalidInput
from memconform.suite.convert.documents import note_lost_document, records_of
from memconform.suite.convert.oams_memoturn import memoturn_to_oams, oams_to_memoturn
from memconform.suite.convert.omf_memoturn import memoturn_to_omf, omf_to_memoturn
from memconform.suite.convert.omf_oams import oams_to_omf, omf_to_oams
from memconform.suite.convert.omf_upp import omf_to_upp, upp_to_omf
from memconform.suite.convert.pointers import clone
from memconform.suite.convert.ump_memoturn import memoturn_to_ump, ump_to_memoturn
from memconform.suite.convert.ump_oams import oams_to_ump, ump_to_oams
from memconform.suite.convert.ump_omf import omf_to_ump, ump_to_omf
from memconform.suite.convert.ump_upp import ump_to_upp, upp_to_ump
from memconform.suite.convert.upp_memoturn import memoturn_to_upp, upp_to_memoturn
from memconform.suite.convert.upp_oams import oams_to_upp, upp_to_oams

DIRECTIONS: dict[tuple[str, str], Callable[[Any, Ctx], Any]] = {
    ("ump", "omf"): ump_to_omf, ("omf", "ump"): omf_to_ump,
    ("ump", "upp"): ump_to_upp, ("upp", "ump"): upp_to_ump,
    ("omf", "upp"): omf_to_upp, ("upp", "omf"): upp_to_omf,
    ("ump", "oams"): ump_to_oams, ("oams", "ump"): oams_to_ump,
    ("omf", "oams"): omf_to_oams, ("oams", "omf"): oams_to_omf,
    ("upp", "oams"): upp_to_oams, ("oams", "upp"): oams_to_upp,
    ("ump", "memoturn"): ump_to_memoturn, ("memoturn", "ump"): memoturn_to_ump,
    ("oams", "memoturn"): oams_to_memoturn, ("memoturn", "oams"): memoturn_to_oams,
    ("omf", "memoturn"): omf_to_memoturn, ("memoturn", "omf"): memoturn_to_omf,
    ("upp", "memoturn"): upp_to_memoturn, ("memoturn", "upp"): memoturn_to_upp,
}
#: Formats whose document may be given as one record object (UMP's file binding reads one; an OAMS
#: STORE body is one memory).
ONE_RECORD = ("ump", "oams")

#: Which option speaks to which side (an option the direction does not use is said in a warning).
OPTION_SIDES = {"entity_key": ("to", "upp"), "project": ("to", "omf"), "owner": ("to", "ump"),
                "sign_key": ("to", "ump"), "tenant": ("from", "omf")}


def convert(document: Any, *, source: str, target: str, options: ConvertOptions | None = None) -> ConversionResult:
    for fmt in (source, target):
        if fmt not in mapping.FORMATS:
            raise ValueError(f"unknown format {fmt!r} (formats: {', '.join(mapping.FORMATS)})")
    options = options or ConvertOptions()
    ctx = Ctx(source, target, options)
    _unused_options(ctx)
    if source != target and (source, target) not in DIRECTIONS:
        raise ValueError(f"no conversion from {source} to {target} (directions: "
                         + ", ".join(f"{a}→{b}" for a, b in DIRECTIONS) + ")")
    if source in ONE_RECORD and isinstance(document, dict):
        document = [document]   # one record object is a document too (the file binding reads it)
    if source == "memoturn":
        document = memoturnside.normalized(document)   # a list of memories, or one memory
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
