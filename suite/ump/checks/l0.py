"""UMP L0: the portable record and its file binding (§2, §4.3, §6, §7 L0).

Against `reference` the reference implementation is seeded with the export corpus and its own
export is judged; against `file:` the vendor's files are judged as they are.
"""

from __future__ import annotations

import copy
import json
import os
from collections import defaultdict
from typing import Any

from memconform.suite.jsonvalue import json_equal
from memconform.suite.ump import consent, integrity, markdown, record as ump_record
from memconform.suite.ump.corpus import KINDS
from memconform.suite.ump.did import is_did
from memconform.suite.outcomes import NotApplicable, NotExercised, TargetError
from memconform.suite.registry import Case, check
from memconform.suite.runner import CheckContext
from memconform.suite.ump.files import Located
from memconform.vectors import load as vectors

FILE = ("file",)
SCHEMA_REQUIREMENTS = ("ump/record-required-fields", "ump/record-version", "ump/record-id-format",
                       "ump/record-kind", "ump/record-visibility", "ump/record-time",
                       "ump/record-field-types")


def _where(loc: Located) -> str:
    return f"{loc.source}{' ' + loc.pointer if loc.pointer else ''}"


def _records(ctx: CheckContext, formats: tuple[str, ...] = ("json", "ndjson", "md")) -> list[Located]:
    exported = ctx.client.exported()
    if not exported.records and not exported.problems and ctx.client.seeded() is None:
        # `[]` is an export (nothing was exportable), but a rule about records has nothing to pass on
        raise NotExercised("the export holds no record")
    return [r for r in exported.records if r.format in formats and isinstance(r.record, dict)]


def _by_id(located: list[Located]) -> dict[str, list[Located]]:
    out: dict[str, list[Located]] = defaultdict(list)
    for loc in located:
        rid = loc.record.get("id")
        if isinstance(rid, str):
            out[rid].append(loc)
    return out


def _expected_export(seeded: dict[str, Any], version: str) -> dict[str, Any]:
    """What a faithful exporter emits for a record it was given: redacted, in its own version."""
    rec = consent.apply_redact(seeded)
    if rec.get("ump") != version:
        rec = ump_record.normalize(rec, version)
    return {k: v for k, v in rec.items() if k != "integrity"}


def _diff(expected: Any, actual: Any, path: str = "", ignore: frozenset[str] = frozenset(),
          names: tuple[str, str] = ("expected", "found")) -> list[str]:
    """JSON-pointer paths where two JSON values differ, compared as JSON values: numbers by value
    (JSON has one number type, RFC 8259 §6: 1 and 1.0 are one value, as a Markdown front matter
    and a JSON file may spell it), but true is not 1 and "1" is not 1. `names` say where each
    side was read, for the message ("in x.ump.json", "in x.ump.md")."""
    first, second = names
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual)):
            if f"{path}/{key}" in ignore:
                continue
            p = f"{path}/{key}"
            if key not in actual:
                out.append(f"{p} missing {second}" if names != ("expected", "found") else f"{p} missing")
            elif key not in expected:
                out.append(f"{p} added {second}" if names != ("expected", "found") else f"{p} added")
            else:
                out.extend(_diff(expected[key], actual[key], p, names=names))
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path or '/'} has {len(expected)} items {first}, {len(actual)} {second}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in _diff(e, a, f"{path}/{i}", names=names)]
    if not json_equal(expected, actual):
        how = (f" ({_text_difference(expected, actual, names)})"
               if isinstance(expected, str) and isinstance(actual, str) else "")
        return [f"{path or '/'}: {first} {json.dumps(expected, ensure_ascii=False)[:80]}, "
                f"{second} {json.dumps(actual, ensure_ascii=False)[:80]}{how}"]
    return []


#: What a message adds when a .ump.md record was compared in both readings of its body's end.
_FRAMINGS = ("; the .ump.md body was read both ways §6.3 leaves open (its final newline taken as the one a "
             "writer adds, and as the body's own), and differs in each")


def _md_readings(loc: Located) -> list[dict[str, Any]]:
    """The records a .ump.md file may mean (markdown.body_readings: §6.3 does not say whether the
    body's final newline is the writer's or the body's); the record as loaded alone for other
    formats, or when the file cannot be reread as it was loaded."""
    if loc.format != "md":
        return [loc.record]
    try:
        with open(loc.source, encoding="utf-8", newline="") as fh:
            text = fh.read()
        readings = markdown.body_readings(text, loc.source)
    except (OSError, UnicodeDecodeError, markdown.ProjectionError, RecursionError):
        return [loc.record]
    return readings if readings[0] == loc.record else [loc.record]


def _framed_diff(compare: Any, loc: Located) -> tuple[list[str], dict[str, Any]]:
    """`compare(record)` (a list of differences) for each reading of `loc` (`_md_readings`): none
    when one reading matches; else the first reading's, with a word that both were tried. Also
    the reading that matched (or the first)."""
    readings = _md_readings(loc)
    first = None
    for rec in readings:
        diffs = compare(rec)
        if not diffs:
            return [], rec
        first = first if first is not None else diffs
    if len(readings) > 1 and first:
        first = [*first[:-1], first[-1] + _FRAMINGS]
    return first or [], readings[0]


def _text_difference(first: str, second: str, names: tuple[str, str]) -> str:
    """Exactly how two strings differ: what one has past the end of the other, or where they part
    and what each holds there (escaped, so that a newline or a space shows)."""
    a, b = names
    i = 0
    while i < min(len(first), len(second)) and first[i] == second[i]:
        i += 1
    if i == len(first) or i == len(second):
        longer, shorter = (b, a) if i == len(first) else (a, b)
        more = (second if i == len(first) else first)[i:]
        return (f"the text {longer} is the text {shorter} followed by {len(more)} more character"
                f"{'s' if len(more) != 1 else ''} {json.dumps(more[:40], ensure_ascii=False)}")
    return (f"they part at character {i}: {a} {json.dumps(first[i:i + 20], ensure_ascii=False)}…, {b} "
            f"{json.dumps(second[i:i + 20], ensure_ascii=False)}…")


def _file(loc: Located) -> str:
    return f"in {os.path.basename(loc.source) or loc.source}{' ' + loc.pointer if loc.pointer else ''}"


def _without_integrity(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k != "integrity"}


def _unredacted_view(emitted: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The emitted record with the given record's redact paths stripped: whether redaction
    happened is the export-redact check's to judge, not every comparison's."""
    paths = (given.get("consent") or {}).get("redact")
    out = _without_integrity(emitted)
    if paths and isinstance(out.get("consent", {}), dict):
        probe = dict(out, consent=dict(out.get("consent") or {}, redact=paths))
        try:
            stripped = consent.apply_redact(probe)
        except consent.RedactPathError:
            return out
        out = dict(_without_integrity(stripped), consent=out.get("consent"))
        if "consent" not in emitted:
            out.pop("consent")
    return out


# -- the file formats ------------------------------------------------------------------------

#: The version label is judged once, by emit-version / normalize-0.1, not by every comparison.
_LABEL = frozenset({"/ump"})


def _emitted_faithfully(ctx: CheckContext, requirement: str, formats: tuple[str, ...], what: str) -> None:
    seeded = ctx.client.seeded()
    if seeded is None:
        return
    for fmt in formats:
        emitted = _by_id(_records(ctx, (fmt,)))
        if not emitted and not any(loc.format == fmt for loc in ctx.client.exported().records):
            continue  # the implementation does not emit this format at all
        _compare_emitted(ctx, requirement, seeded, emitted, f"{what} ({fmt})")


def _compare_emitted(ctx: CheckContext, requirement: str, seeded, emitted, what: str) -> None:
    for rec in seeded:
        if not consent.is_exportable(rec):
            continue
        expected = _expected_export(rec, ctx.version)
        found = emitted.get(rec["id"], [])
        if not found:
            ctx.violation(requirement, f"record {rec['id']} was given to the implementation but is "
                          f"missing from its {what} export", sent=rec)
            continue
        for loc in found:
            diffs = _diff(expected, _unredacted_view(loc.record, rec), ignore=_LABEL)
            if diffs:
                ctx.violation(requirement, f"the {what} export changed record {rec['id']}: "
                              + "; ".join(diffs[:8]), sent=rec, received=loc.record, where=_where(loc))


#: Problems of one file shown one by one; past this, the rest of that file's are counted in one finding.
_SHOWN_PER_FILE = 3


def _file_problems(ctx: CheckContext, problems: Any, requirement: str) -> None:
    """The loader's problems for `requirement`, a finding each for the first few of a file and one
    counting the rest (round 19: a pretty-printed NDJSON file gave 569 findings, one per line)."""
    by_file: dict[str, list[Any]] = defaultdict(list)
    for problem in problems:
        if problem.requirement == requirement:
            by_file[problem.source].append(problem)
    for source, found in by_file.items():
        for problem in found[:_SHOWN_PER_FILE]:
            ctx.violation(requirement, problem.message, where=f"{problem.source} {problem.pointer}".strip())
        rest = found[_SHOWN_PER_FILE:]
        if rest:
            ctx.violation(requirement, f"… and {len(rest)} more like them in {os.path.basename(source) or source} "
                          f"(at {', '.join(p.pointer or '/' for p in rest[:5])}{', …' if len(rest) > 5 else ''})",
                          where=source)


@check("ump/l0/file-json", spec="ump", requirements=("ump/file-json",), bindings=FILE,
       title=".ump.json / NDJSON exports parse as records and keep what they were given")
def file_json(ctx: CheckContext) -> None:
    exported = ctx.client.exported()
    _file_problems(ctx, exported.problems, "ump/file-json")
    for loc in exported.records:
        if loc.format in ("json", "ndjson") and not isinstance(loc.record, dict):
            ctx.violation("ump/file-json", "an element of a .ump.json array must be a record object",
                          received=loc.record, where=_where(loc))
    if ctx.client.seeded() is not None and not _records(ctx, ("json", "ndjson")):
        ctx.violation("ump/file-json", "the implementation emitted no readable .ump.json / NDJSON records")
    _emitted_faithfully(ctx, "ump/file-json", ("json", "ndjson"), ".ump.json")


@check("ump/l0/export-id-unique", spec="ump", requirements=("ump/export-id-unique",), bindings=FILE,
       title="one exported file holds at most one record per id")
def export_id_unique(ctx: CheckContext) -> None:
    """Within each .ump.json or NDJSON file, two records under one id are the same record (equal
    as JSON); across files an id may repeat (a .ump.md projection, an older export beside a newer)."""
    by_file: dict[str, dict[str, list[Located]]] = defaultdict(lambda: defaultdict(list))
    for loc in _records(ctx, ("json", "ndjson")):
        rid = loc.record.get("id")
        if isinstance(rid, str):
            by_file[loc.source][rid].append(loc)
    if not by_file:
        raise NotExercised("the export holds no .ump.json or NDJSON record with an id")
    for source, ids in by_file.items():
        for rid, locs in ids.items():
            others = [loc for loc in locs[1:] if not json_equal(loc.record, locs[0].record)]
            if others:
                diffs = _diff(locs[0].record, others[0].record, names=(locs[0].pointer, others[0].pointer))
                ctx.violation("ump/export-id-unique",
                              f"{os.path.basename(source)} holds {len(locs)} records with the id {rid} (at "
                              f"{', '.join(loc.pointer for loc in locs)}), and they are different records: "
                              + "; ".join(diffs[:6]) + "; an id is \u201cstable, globally unique\u201d (\u00a72)",
                              received=[loc.record for loc in locs[:2]], where=_where(others[0]))


@check("ump/l0/file-md", spec="ump", requirements=("ump/file-md",), bindings=FILE,
       title=".ump.md files carry the structured fields in front matter and the body as Markdown")
def file_md(ctx: CheckContext) -> None:
    exported = ctx.client.exported()
    _file_problems(ctx, exported.problems, "ump/file-md")
    if ctx.client.seeded() is None and not ctx.findings and not any(loc.format == "md" for loc in exported.records):
        raise NotExercised("the export holds no .ump.md file")
    if ctx.client.seeded() is not None:
        emitted = _by_id(_records(ctx, ("md",)))
        for rec in ctx.client.seeded():
            if consent.is_exportable(rec) and rec["id"] not in emitted:
                ctx.violation("ump/file-md", f"record {rec['id']} has no readable .ump.md projection in "
                              "the export", sent=rec)


@check("ump/l0/md-roundtrip", spec="ump", requirements=("ump/md-roundtrip-lossless",), bindings=FILE,
       title="a record survives JSON -> Markdown -> JSON with every field intact")
def md_roundtrip(ctx: CheckContext) -> None:
    md = _records(ctx, ("md",))
    compared = 0
    seeded = ctx.client.seeded()
    json_side = _by_id(_records(ctx, ("json", "ndjson")))
    if seeded is not None:
        # The implementation's own projection, read back, must give the record it was given.
        # A Markdown record is lossy only when it differs both from what was given and from the
        # implementation's JSON of the same record: a loss in every format is the export's
        # (file-json), not the projection's.
        by_id = _by_id(md)
        for rec in seeded:
            if not consent.is_exportable(rec):
                continue
            expected = _expected_export(rec, ctx.version)
            for loc in by_id.get(rec["id"], []):
                compared += 1
                diffs, _ = _framed_diff(lambda r: _diff(expected, _unredacted_view(r, rec), ignore=_LABEL,
                                                        names=("given to the implementation", _file(loc))), loc)
                twins = [t.record for t in json_side.get(rec["id"], [])]
                if diffs and not any(not _diff(t, r) for t in twins for r in _md_readings(loc)):
                    ctx.violation("ump/md-roundtrip-lossless",
                                  f"record {rec['id']} read back from its .ump.md differs: " + "; ".join(diffs[:8]),
                                  sent=rec, received=loc.record, where=_where(loc))
        # …and the implementation's own reader must take its Markdown back unchanged.
        for loc in md:
            try:
                text = open(loc.source, encoding="utf-8").read()
            except OSError as exc:
                raise TargetError(f"cannot reread {loc.source}: {exc}") from exc
            outcome = ctx.client.parse(text, "md")
            if outcome.error == "signature_invalid":
                continue  # a broken integrity block is the integrity check's to report
            if outcome.error:
                ctx.violation("ump/md-roundtrip-lossless", f"the implementation refused its own .ump.md "
                              f"({outcome.error}: {outcome.message})", sent=text, where=_where(loc))
                continue
            for got in outcome.accepted:
                diffs, _ = _framed_diff(lambda r: _diff(_without_integrity(r), _without_integrity(got), ignore=_LABEL,
                                                        names=(_file(loc), "as its own reader took it back")), loc)
                if diffs:
                    ctx.violation("ump/md-roundtrip-lossless", "reading its own .ump.md back changed the "
                                  "record: " + "; ".join(diffs[:8]), sent=text, received=got, where=_where(loc))
        return
    # A plain export: both projections of the same record must agree.
    for rid, locs in _by_id(md).items():
        for other in json_side.get(rid, []):
            compared += 1
            diffs, _ = _framed_diff(lambda r: _diff(other.record, r, names=(_file(other), _file(locs[0]))), locs[0])
            if diffs:
                ctx.violation("ump/md-roundtrip-lossless", f"the .ump.md and .ump.json projections of {rid} "
                              "differ: " + "; ".join(diffs[:8]), sent=other.record, received=locs[0].record,
                              where=_where(locs[0]))
    if not compared:
        raise NotExercised("the export holds no record in both .ump.md and .ump.json form, so the round "
                            "trip cannot be judged from files alone")


# -- the record --------------------------------------------------------------------------------

@check("ump/l0/record-schema", spec="ump", requirements=SCHEMA_REQUIREMENTS, bindings=FILE,
       title="every exported record has the shape §2 defines")
def record_schema(ctx: CheckContext) -> None:
    # Every member these rules are about is one a record must carry: one record validated judges
    # them all, and a file of no record judges none.
    ctx.credit_only_observed()
    for loc in _records(ctx):
        ctx.observed(*SCHEMA_REQUIREMENTS)
        for v in ump_record.validate(loc.record):
            requirement = v.requirement if v.requirement in SCHEMA_REQUIREMENTS else "ump/record-version"
            ctx.violation(requirement, f"{v.pointer or '/'}: {v.message}" + (f" ({v.source})" if v.source else ""),
                          received=loc.record, where=f"{_where(loc)} {v.pointer}")


@check("ump/l0/emit-version", spec="ump", requirements=("ump/emit-advertised-version",), bindings=FILE,
       title="an implementation emits records in the version it speaks")
def emit_version(ctx: CheckContext) -> None:
    for loc in _records(ctx):
        if loc.record.get("ump") != ctx.version:
            ctx.violation("ump/emit-advertised-version", f"record says ump {loc.record.get('ump')!r} in a "
                          f"UMP {ctx.version} export", received=loc.record, where=_where(loc))


@check("ump/l0/normalize-0.1", spec="ump", requirements=("ump/normalize-imported-0.1",), bindings=FILE,
       title="0.1 records taken in are re-emitted as 1.0 with nothing else changed")
def normalize_legacy(ctx: CheckContext) -> None:
    seeded = ctx.client.seeded()
    if seeded is None:
        raise NotApplicable("needs a target that can be asked to read a 0.1 record")
    legacy = [r for r in seeded if r.get("ump") == "0.1"] or [dict(seeded[0], ump="0.1")]
    outcome = ctx.client.parse(json.dumps(legacy[:1], ensure_ascii=False), "json")
    if outcome.error:
        return  # taking 0.1 records in at all is a MAY (ump/import-0.1-may)
    for got in outcome.accepted:
        if got.get("ump") != ctx.version:
            ctx.violation("ump/normalize-imported-0.1", f"a 0.1 record was taken in and kept as ump "
                          f"{got.get('ump')!r}; it must be normalised to {ctx.version!r} before it is "
                          "persisted, signed or emitted", sent=outcome.sent, received=got)
        diffs = _diff({k: v for k, v in legacy[0].items() if k != "integrity"},
                      {k: v for k, v in got.items() if k != "integrity"}, ignore=_LABEL)
        if diffs:
            ctx.violation("ump/normalize-imported-0.1", "normalising the 0.1 record changed more than its "
                          "version label: " + "; ".join(diffs[:8]), sent=legacy[0], received=got)


@check("ump/l0/provenance", spec="ump", requirements=("ump/provenance-required",), bindings=FILE,
       title="every record carries provenance (L2)")
def provenance(ctx: CheckContext) -> None:
    for loc in _records(ctx):
        if not isinstance(loc.record.get("provenance"), dict):
            ctx.violation("ump/provenance-required", f"record {loc.record.get('id')} has no provenance",
                          received=loc.record, where=_where(loc))


@check("ump/l0/owner-did", spec="ump", requirements=("ump/owner-did",), bindings=FILE,
       title="scope.owner is a DID (L2)")
def owner_did(ctx: CheckContext) -> None:
    for loc in _records(ctx):
        owner = loc.record.get("scope", {}).get("owner") if isinstance(loc.record.get("scope"), dict) else None
        if not (isinstance(owner, str) and is_did(owner)):
            ctx.violation("ump/owner-did", f"scope.owner {owner!r} is not a DID", received=loc.record,
                          where=_where(loc))


@check("ump/l0/consent-present", spec="ump", requirements=("ump/consent-recommended",), bindings=FILE,
       title="records carry a consent block (RECOMMENDED)")
def consent_present(ctx: CheckContext) -> None:
    for loc in _records(ctx):
        if "consent" not in loc.record:
            ctx.violation("ump/consent-recommended", f"record {loc.record.get('id')} has no consent block",
                          where=_where(loc))


@check("ump/l0/lifecycle-hints", spec="ump", requirements=("ump/lifecycle-hints-set",), bindings=FILE,
       title="producers set lifecycle hints")
def lifecycle_hints(ctx: CheckContext) -> None:
    """One finding per record, naming every file (projection) that carries it without hints."""
    bare: dict[str, list[Located]] = {}
    for loc in _records(ctx):
        if not loc.record.get("lifecycle"):
            bare.setdefault(str(loc.record.get("id")), []).append(loc)
    for rid, locs in bare.items():
        files = ", ".join(_file(loc).removeprefix("in ") for loc in locs)
        ctx.violation("ump/lifecycle-hints-set", f"record {rid} carries no lifecycle hints ({files})",
                      where=_where(locs[0]))


@check("ump/l0/import-provider", spec="ump", requirements=("ump/import-provider",), bindings=FILE,
       title="imported records name their provider")
def import_provider(ctx: CheckContext) -> None:
    imported = [loc for loc in _records(ctx) if isinstance(loc.record.get("provenance"), dict)
                and loc.record["provenance"].get("actor_kind") == "import"]
    if not imported:
        raise NotExercised("no exported record has provenance.actor_kind import")
    for loc in imported:
        prov = loc.record["provenance"]
        source = prov.get("source")
        if not (isinstance(source, dict) and source.get("provider")):
            ctx.violation("ump/import-provider", f"record {loc.record.get('id')} has actor_kind import but "
                          "no provenance.source.provider", received=prov, where=_where(loc))


# -- consent on export -----------------------------------------------------------------------

def _export_rules_apply(ctx: CheckContext) -> None:
    # The user says what a file is: an export (the default) is bound by the export rules, a plain
    # dump of records (file:PATH?as=dump) is not.
    if getattr(ctx.client, "file_as", "export") == "dump":
        raise NotApplicable("a plain record dump (file:…?as=dump): the export rules do not apply")


@check("ump/l0/export-redact", spec="ump", requirements=("ump/export-redact",), bindings=FILE,
       title="consent.redact paths are stripped from exported records")
def export_redact(ctx: CheckContext) -> None:
    _export_rules_apply(ctx)
    exported = _records(ctx)
    seeded = ctx.client.seeded()
    declaring = [loc for loc in exported if (loc.record.get("consent") or {}).get("redact")]
    if not declaring and not (seeded and any((r.get("consent") or {}).get("redact") for r in seeded)):
        raise NotExercised("no exported record declares consent.redact paths, so redaction cannot be judged "
                            "from these files")
    for loc in exported:
        try:
            present = consent.redacted_paths_present(loc.record)
        except consent.RedactPathError as exc:
            ctx.violation("ump/export-redact", f"unreadable consent.redact path: {exc}", received=loc.record,
                          where=_where(loc))
            continue
        if present:
            ctx.violation("ump/export-redact", f"record {loc.record.get('id')} was exported with values at its "
                          f"redact paths {present}", received=loc.record, where=_where(loc))
    if seeded is None:
        return
    # The exporter may drop the redact list itself, so judge with the list it was given.
    by_id = _by_id(exported)
    for rec in seeded:
        paths = rec.get("consent", {}).get("redact")
        if not paths or not consent.is_exportable(rec):
            continue
        for loc in by_id.get(rec["id"], []):
            present = consent.redacted_paths_present(loc.record, paths)
            if present:
                ctx.violation("ump/export-redact", f"record {rec['id']} was exported with values at {present}",
                              sent=rec, received=loc.record, where=_where(loc))


@check("ump/l0/export-exportable", spec="ump", requirements=("ump/export-exportable",), bindings=FILE,
       title="records marked exportable: false stay out of exports")
def export_exportable(ctx: CheckContext) -> None:
    _export_rules_apply(ctx)
    for loc in _records(ctx):
        if not consent.is_exportable(loc.record):
            ctx.violation("ump/export-exportable", f"record {loc.record.get('id')} says consent.exportable "
                          "false but is in the export", received=loc.record, where=_where(loc))
    seeded = ctx.client.seeded()
    if seeded is None:
        return
    emitted = _by_id(_records(ctx))
    for rec in seeded:
        if not consent.is_exportable(rec) and rec["id"] in emitted:
            ctx.violation("ump/export-exportable", f"record {rec['id']} was given with exportable false and "
                          "appears in the export", sent=rec, where=_where(emitted[rec["id"]][0]))


# -- integrity ---------------------------------------------------------------------------------

@check("ump/l0/integrity", spec="ump",
       requirements=("ump/integrity-content-hash", "ump/integrity-signature", "ump/integrity-signer-owner"),
       bindings=FILE, title="integrity blocks in exported records are correct (§2.8, §6.1)")
def record_integrity(ctx: CheckContext) -> None:
    # A lossy Markdown projection also breaks its copied integrity block; that loss is the
    # md-roundtrip check's to report, so Markdown is judged here only when it is all there is.
    # Signer and owner are compared only where the block names a signer (a string).
    ctx.credit_only_observed()
    judged = [loc for loc in (_records(ctx, ("json", "ndjson")) or _records(ctx, ("md",)))
              if "integrity" in loc.record]
    if not judged:
        raise NotExercised("no exported record carries an integrity block")
    for loc in judged:
        report = integrity.verify(loc.record)
        ctx.observed("ump/integrity-content-hash", "ump/integrity-signature")
        if report.signer_is_owner is not None:
            ctx.observed("ump/integrity-signer-owner")
        else:
            ctx.note(f"{_where(loc)}: the integrity block names no signer to compare with scope.owner")
        for problem in report.problems:
            ctx.violation(problem.requirement, problem.message, received=loc.record.get("integrity"),
                          where=f"{_where(loc)} {problem.pointer}")
        _unsigned_by_owner(ctx, loc, report)


def _unsigned_by_owner(ctx: CheckContext, loc: Located, report: integrity.IntegrityReport) -> None:
    """A signature that verifies with the owner's key under none of the readings of "sign the
    hash" (integrity.SIGNATURE_INPUTS) is not the operator's signature under any reading: that
    is the text's own rule (§2.8), not only the public implementation's input
    (ump/integrity-signature, its class), so the file's claim does not hold. Judged where the
    block names the owner as signer (another signer is already reported) and the hash is right
    (a wrong hash is ump/integrity-content-hash's)."""
    integ = loc.record.get("integrity")
    if report.signature_ok or report.signer_is_owner is not True or not report.hash_ok or not isinstance(integ, dict):
        return
    if integrity.signed_over(loc.record) is not None:
        return  # verifies under another reading: only the interop class's input differs
    ctx.violation("ump/integrity-signer-owner", f"the signature of record {loc.record.get('id')} verifies with the "
                  f"owner's key ({integ.get('signer')}) under no reading of \"sign the hash\" (BLAKE3 of the "
                  f"content_hash string, the raw digest, the content_hash string {integ.get('content_hash')!r}): the "
                  "record is not signed by its operator's key, whichever input a reader takes",
                  received=integ, where=f"{_where(loc)} /integrity/signature")


# -- reading records -------------------------------------------------------------------------

@check("ump/l0/kinds-accept-all", spec="ump", requirements=("ump/kinds-accept-all",), bindings=FILE,
       title="a reader accepts records of all five kinds")
def kinds_accept_all(ctx: CheckContext) -> None:
    from memconform.suite.ump.corpus import export_corpus

    samples = {r["kind"]: r for r in export_corpus(ctx.version) if r.get("ump") == ctx.version}
    for kind in KINDS:
        text = json.dumps([samples[kind]], ensure_ascii=False)
        outcome = ctx.client.parse(text, "json")
        if outcome.error:
            ctx.violation("ump/kinds-accept-all", f"a valid {kind} record was refused "
                          f"({outcome.error}: {outcome.message})", sent=samples[kind])


#: Requirements about what a reader must take in (as opposed to what a record must look like).
_ACCEPTANCE = frozenset({"ump/kinds-accept-all", "ump/relations-open-vocabulary", "ump/owner-opaque-l0-l1",
                         "ump/import-0.1-may"})


def _vector_cases(version: str) -> list[Case]:
    out = []
    for c in vectors.cases("ump", version):
        if c.kind not in ("record", "markdown"):
            continue
        reading = ("ump/file-md", "ump/md-roundtrip-lossless") if c.kind == "markdown" else ("ump/file-json",)
        reqs = tuple(dict.fromkeys((*c.requirements, *reading)))
        out.append(Case(c.id, c, reqs))
    return out


def _vector_requirements() -> tuple[str, ...]:
    ids: dict[str, None] = {}
    for version in ump_record.VERSIONS:
        for case in _vector_cases(version):
            ids.update(dict.fromkeys(case.requirements or ()))
    return tuple(ids)


@check("ump/l0/vectors", spec="ump", requirements=_vector_requirements(), bindings=FILE,
       title="the golden vectors get the verdict they expect", cases=lambda subject: _vector_cases(subject.version))
def golden_vectors(ctx: CheckContext) -> None:
    case = ctx.payload
    fmt = "md" if case.kind == "markdown" else "json"
    text = case.input if fmt == "md" else json.dumps(case.input, ensure_ascii=False)
    outcome = ctx.client.parse(text, fmt)
    expect = case.expect
    reqs = ctx.case.requirements
    reading = "ump/file-md" if fmt == "md" else "ump/file-json"
    ctx.credit_only_observed()
    if expect["verdict"] == "valid":
        # Refusing a valid record breaks reading, or the acceptance rule the case is about; the
        # format rules the case lists describe the record, which is fine.
        charged = [r for r in reqs if r in _ACCEPTANCE] or [reading]
        if outcome.error:
            for r in charged:
                ctx.violation(r, f"a valid record was refused with {outcome.error}: {outcome.message}",
                              sent=text, received={"error": {"code": outcome.error, "message": outcome.message}})
            return
        # taken: the rules the record is an example of are not misread; whether it is kept as
        # given (a Markdown round trip) only where the reader shows the record
        ctx.observed(*(r for r in reqs if r != "ump/md-roundtrip-lossless"))
        wanted = expect.get("record", case.input if fmt == "json" else None)
        for got in outcome.accepted[:1]:
            if isinstance(wanted, dict):
                ctx.observed(*reqs)
                diffs = _diff(_normalized(wanted, ctx.version), got)
                if diffs:
                    keeper = "ump/md-roundtrip-lossless" if fmt == "md" else reading
                    ctx.violation(keeper, "the record was accepted but stored changed: " + "; ".join(diffs[:8]),
                                  sent=text, received=got)
    elif expect["verdict"] == "invalid":
        reqs = tuple(case.requirements)  # the rule the record breaks and the refusal it calls for
        ctx.observed(*ctx.case.requirements)  # read, and judged as the vector expects
        code = expect.get("error", "invalid_record")
        if not outcome.error:
            for r in reqs:
                ctx.violation(r, f"an invalid record was accepted; the spec asks for a refusal with {code}"
                              + (f" (the problem is at {expect['pointer']})" if expect.get("pointer") else ""),
                              sent=text, received={"accepted": [r.get("id") for r in outcome.accepted]})
        elif outcome.error != code and outcome.error not in expect.get("also_acceptable_errors", ()):
            for r in reqs:
                ctx.violation(r, f"refused with {outcome.error}, but the spec's code for this is {code}",
                              sent=text, received={"error": {"code": outcome.error, "message": outcome.message}})
        if outcome.error and outcome.stored_after:
            ctx.violation(reqs[-1], f"the record was refused but the store now holds {list(outcome.stored_after)}",
                          sent=text)
        _batch_with_invalid(ctx, case, text, fmt, code)
    elif expect["verdict"] == "acceptable":
        # A reading the text leaves open (the vector's `why`): taking the record and refusing it are
        # both right; what is judged is that a refusal leaves nothing stored and that a record
        # taken is kept as given.
        if outcome.error:
            ctx.observed(case.requirements[0])  # refusing is right; storing nothing of it is judged
            ctx.note(f"refused ({outcome.error}), as {expect.get('why')} allows: how a record taken is kept was not seen")
            if outcome.stored_after:
                ctx.violation(case.requirements[0], f"the record was refused ({outcome.error}) but the store now holds "
                              f"{list(outcome.stored_after)}", sent=text)
            return
        if not outcome.accepted:
            raise NotApplicable(f"taken, but the reader shows no record to compare ({expect.get('why')}: either "
                                "verdict is right)")
        ctx.observed(*case.requirements)
        for got in outcome.accepted[:1]:
            # (a reader that takes an unknown minor labels it with its own version, as for 0.1)
            diffs = (_diff(_with_fills(case.input, got, expect.get("may_fill") or {}), got,
                           ignore=frozenset({"/ump", "/integrity"}))
                     if isinstance(case.input, dict) else [])
            if diffs:
                ctx.violation(reading, "the record was accepted but stored changed: " + "; ".join(diffs[:8]),
                              sent=text, received=got)


def _with_fills(sent: dict[str, Any], got: Any, may_fill: dict[str, Any]) -> dict[str, Any]:
    """`sent` with each member the vector lets a reader fill (`expect.may_fill`: a pointer to the one
    value the reading gives it) set where the reader did fill it so; any other value stays a change."""
    out = copy.deepcopy(sent)
    for pointer, value in may_fill.items():
        *parents, last = pointer.strip("/").split("/")
        src, dst = got, out
        for part in parents:
            src = src.get(part) if isinstance(src, dict) else None
            dst = dst.get(part) if isinstance(dst, dict) else None
        if isinstance(src, dict) and isinstance(dst, dict) and last in src and json_equal(src[last], value):
            dst[last] = value
    return out


def _normalized(rec: dict[str, Any], version: str) -> dict[str, Any]:
    if rec.get("ump") in ump_record.VERSIONS and rec.get("ump") != version:
        return ump_record.normalize(rec, version)
    return rec


def _batch_with_invalid(ctx: CheckContext, case: Any, text: str, fmt: str, code: str) -> None:
    """A JSON array holding a valid record and then the invalid one: the invalid one must be
    refused and reported, and nothing of it stored. Whether the valid one is kept is the reader's
    choice (no text makes an import atomic; variant import-keeps-valid-records)."""
    if fmt != "json" or "ump/reject-invalid-record" not in ctx.case.requirements:
        return
    good = _plain_record(ctx.version)
    batch = json.dumps([good, case.input], ensure_ascii=False)
    outcome = ctx.client.parse(batch, "json")
    if outcome.error is None:
        return  # already reported above as an accepted invalid record
    kept = [i for i in outcome.stored_after if i != good.get("id")]
    if kept:
        ctx.violation("ump/reject-invalid-record", "a batch with one invalid record was refused, but the store "
                      f"kept {kept} besides the valid record: the refused record is not stored",
                      sent=batch, received={"error": outcome.error, "stored_after": list(outcome.stored_after)})


# -- relations and optional members --------------------------------------------------------

def _plain_record(version: str) -> dict[str, Any]:
    """A valid, unsigned corpus record of this version, to build probes from."""
    from memconform.suite.ump.corpus import export_corpus

    return next(r for r in export_corpus(version) if r.get("ump") == version and "integrity" not in r)


def _sample(ctx: CheckContext, **changes: Any) -> dict[str, Any]:
    from memconform.suite.ump import ids

    rec = dict(_plain_record(ctx.version), **changes)
    rec["id"] = ids.content_addressed_id(dict(rec, id=""))
    return rec


@check("ump/l0/relations-open", spec="ump", requirements=("ump/relations-open-vocabulary",), bindings=FILE,
       title="a reader accepts and keeps relation types outside the reserved set")
def relations_open(ctx: CheckContext) -> None:
    relations = [{"type": "about", "target": "entity:pnpm"},
                 {"type": "x-acme-blocks", "target": "entity:release-train"},
                 {"type": "supports", "target": "urn:ump:aaaaaaaaaaaaaaaa"}]
    rec = _sample(ctx, relations=relations)
    outcome = ctx.client.parse(json.dumps([rec], ensure_ascii=False), "json")
    if outcome.error:
        ctx.violation("ump/relations-open-vocabulary", f"a record with relation types outside the reserved "
                      f"set was refused ({outcome.error}: {outcome.message})", sent=rec)
        return
    for got in outcome.accepted:
        if got.get("relations") != relations:
            ctx.violation("ump/relations-open-vocabulary", "the record was accepted but its relations were "
                          "changed", sent=relations, received=got.get("relations"))


@check("ump/l0/relation-targets", spec="ump", requirements=("ump/relation-target-form",), bindings=FILE,
       title="relation targets are record ids or entity nodes")
def relation_targets(ctx: CheckContext) -> None:
    if not any(loc.record.get("relations") for loc in _records(ctx)):
        raise NotExercised("no exported record carries relations")
    for loc in _records(ctx):
        for i, rel in enumerate(loc.record.get("relations") or ()):
            target = rel.get("target") if isinstance(rel, dict) else None
            if not (isinstance(target, str) and (target.startswith("urn:ump:") or target.startswith("entity:"))):
                ctx.violation("ump/relation-target-form", f"relations/{i}/target {target!r} is neither "
                              "urn:ump:… nor entity:…", where=f"{_where(loc)} /relations/{i}/target")


_OPTIONAL_MEMBERS = {
    "ump/optional-body-structured": ("body", "structured"),
    "ump/optional-scope-user": ("scope", "user"),
    "ump/optional-scope-agent": ("scope", "agent"),
    "ump/optional-scope-session": ("scope", "session"),
    "ump/optional-lifecycle": ("lifecycle",),
    "ump/optional-lifecycle-decay": ("lifecycle", "decay"),
    "ump/optional-supersedes": ("supersedes",),
    "ump/optional-relations": ("relations",),
}


def _member(rec: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(rec, dict) or key not in rec:
            return _MISSING
        rec = rec[key]
    return rec


_MISSING = object()


@check("ump/l0/optional-members", spec="ump", requirements=tuple(_OPTIONAL_MEMBERS), bindings=FILE,
       title="optional members given to an implementation are kept")
def optional_members(ctx: CheckContext) -> None:
    # A member no exportable record was given is not exercised by the file: absence is never evidence.
    ctx.credit_only_observed()
    seeded = ctx.client.seeded()
    if seeded is None:
        raise NotApplicable("needs to know what the implementation was given (a seeded target)")
    emitted = _by_id(_records(ctx, ("json", "ndjson")))
    for requirement, path in _OPTIONAL_MEMBERS.items():
        given = [r for r in seeded if consent.is_exportable(r) and _member(r, path) is not _MISSING]
        if given:
            ctx.observed(requirement)  # the file's records were looked up for the member
        kept = [r for r in given for loc in emitted.get(r["id"], [])[:1]
                if _member(loc.record, path) is not _MISSING]
        if given and not kept:
            ctx.violation(requirement, f"the implementation does not keep the optional member "
                          f"{'.'.join(path)} (given in {len(given)} records)", sent=given[0])
