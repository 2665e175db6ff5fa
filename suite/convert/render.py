"""docs/mapping.md, rendered from the mapping table (mapping.py): the doc is this function's output,
and a test fails when the file and the data differ. Regenerate with

    python -c "from memconform.suite.convert import mapping_markdown as m; print(m(), end='')" > docs/mapping.md
"""

from __future__ import annotations

from memconform.suite.convert import mapping
from memconform.suite.convert.mapping import Fate, Row

_INTRO = """\
# Mapping between UMP, OMF, UPP, OAMS and memoturn

Generated from `suite/convert/mapping.py` by `mapping_markdown()` (`suite/convert/render.py` says how
to regenerate it); a test fails when this file and the table differ. The same table drives what the
converters carry and drop and what the round-trip checks hold them to.

```sh
memconform convert --from ump|upp|omf|oams|memoturn --to ump|upp|omf|oams|memoturn INPUT [-o OUTPUT] [--report-losses]
                   [--entity-key K]            # to UPP: the package's user (default from memoturn: "memoturn")
                   [--tenant T]                # from OMF: whose memories these are (owner default)
                   [--project P]               # to OMF: project_id of items whose source names none
                   [--owner DID] [--sign-key SEED.hex | --test-key owner-a]   # to UMP
```

Exit 0 on success (warnings and, with `--report-losses`, every lost field on stderr), 2 when the input
is not a valid document of its format (each problem named with its JSON pointer) and for usage errors, 1
only for a conversion that went wrong inside memconform (`suite/convert/cli.py`).
In Python: `memconform.suite.convert.convert(document, source=, target=, options=ConvertOptions(...))`
returns the document, every lost field (record id, field, row) and the warnings.

## Documents

| format | a document | one record |
|---|---|---|
| UMP 1.0 (0.1 read too) | a record list: `.ump.json` array or one object, NDJSON, `.ump.md`, a folder | a record |
| OMF 1.0 | the envelope `{omf, exported_at, source?, memories}` | an item |
| UPP 1.0.0 | an ExportPackage `{entity_key, ontology, events, exported_at}`: one user | a StoredEvent |
| OAMS 0.1 | the memories: a JSON array (or one memory object), a JSONL store (`.oams.jsonl`, §7), or an export bundle folder (its `memories.jsonl`, the bundle judged first); `(namespace, key)` unique | a memory |
| memoturn 2026.06 | `{"memories": [...]}`, each memory as GET shows it (the shape of an ingest body and of a recall answer, whose `txid` is lost); read also from a JSON array, one memory, or JSONL (`.memoturn.jsonl`, one memory a line); written as `{"memories": [...]}`, or JSONL when the output ends `.jsonl` | a typed memory |

The OAMS directions built: {oams_pairs}. {oams_unbuilt}An OAMS output ending `.jsonl` is one memory a line,
in document order. memoturn converts to and from every other format.

Every input is validated by the suite's model of its format (`suite/ump/record.py`, `suite/omf/model.py`,
`suite/upp/model.py`, `suite/oams/model.py`) and refused when invalid; every output is validated the same
way before it is written: a conversion never emits an invalid document. Memory text is data: copied and compared, never
evaluated, whatever it looks like.

## How to read the tables

* **mapped**: written into a native field of the target and read back from there (a value the native
  field cannot hold exactly stays in the extension instead, as the note says).
* **extension**: carried verbatim in the target's extension place and restored on the way back:
  * OMF: `extensions.<format>` on each item (OMF's own mechanism: "keys under extensions.<appname> are
    reserved for that app");
  * UPP: `extensions.<format>` on each StoredEvent. UPP 02 defines no extension member; its data models
    do not forbid members, the suite's schemas allow them, and upp/08 §5 lets implementations extend
    freely, so a file keeps them. A UPP server's `upp/import_events` may ignore them (it assigns new ids
    anyway).
  * UMP: `body.structured["x-extensions"].<format>`: the record schema is closed
    (`additionalProperties: false`) everywhere but `body.structured`, the open machine-readable payload.
  * OAMS: `metadata["x-extensions"].<format>`: `metadata` is "an arbitrary JSON-serializable map"
    (OAMS §2), and `x-extensions` is none of its reserved keys (value_type, confidence, last_used_at,
    decay_score, language, pii). A vendor's OAMS import keeps metadata as it is.
  * memoturn: `content["x-extensions"].<format>`: every other member of a typed memory is typed, and the
    content ("JSON payload — the full memory") is what an ingest keeps. A new memory's content is
    `{"x-extensions": {…}}`.
* **lost**: not carried, with the reason.

Every extension is `{"fields": …, "absent": […], "document": {…}}`: the source record minus what was
mapped or lost, the source fields the target had to invent a value for (so they are not invented on the
way back), and the source envelope's members. A record converted back into the format it came from
is *going home*: the carried original is restored, its mapped fields are read back from the native
fields (so an edit made there comes home), and what the intermediate format added (its defaults and
hints) stays behind. Hints are native values derived from carried fields (e.g. OMF `status`
"archived" from a tombstoned UMP record): written for the target's own consumers, never read back.

Decisions:

* **Consent.** A conversion out of UMP is an export into a format whose consumers do not enforce UMP
  consent: records with `consent.exportable: false` are not converted and `consent.redact` paths are
  stripped first (UMP §2.7), each reported as lost.
* **Signatures.** A UMP signature covers that record's canonical bytes; another format is new bytes, so
  integrity never travels. Converting to UMP with `--sign-key SEED.hex` / `--test-key NAME` signs every
  record whose `scope.owner` is that key's DID (new records get that owner unless `--owner` says
  otherwise); records owned by someone else, or converted without a key, come back unsigned.
* **Trust.** A converted OMF document names `source.app` "memconform-convert", never the source's
  producer: memd honours lifecycle only from memd, and a converter that passed `source.app: "memd"`
  through would let any UMP or UPP file set memd's tier, status and expiry.
* **Time.** A conversion is a new export: `exported_at` is the conversion's time.
* **Content-addressed ids.** A new memoturn memory's id is the engine's: `mem_` + the first 16 bytes, hex,
  of SHA-256(type, 0x00, topic_key or "", 0x00, the content as compact JSON with sorted keys; golden
  vectors in `vectors/memoturn/`). The content holds the carried record, so the same record converts to
  the same id every time (a store answers a re-ingest with `duplicate`), and any change to it is another
  memory. A memoturn id never becomes another format's id where that format has its own id rules (UMP
  derives `urn:ump:` + base32 BLAKE3 of `memoturn:<id>`); it is the key, chunk_id or event id elsewhere.
* **Typed memories.** Types and UMP kinds map nearest first (fact ↔ semantic, instruction ↔ procedural,
  event ↔ episodic, task ↔ working; identity → fact); the other formats' records become facts. No
  new memory gets a `topic_key`: it is a supersession key only memoturn has, so a converted fact never
  supersedes another on ingest. Supersession chains become the other format's (UMP `supersedes` /
  `superseded_by`, UPP status and `superseded_by`, OMF status) and come back from them as the ids the
  records became. A task's `expires_at` is UMP `consent.retention` (its lifetime, `PTnS`) and OMF
  `expires_at`; a task from UMP expires `consent.retention` after `time.created` (24 h without one).
  `source` (which agent wrote it) is UMP `scope.agent` and OAMS `source_id`; `session_id` is UMP
  `scope.session`.
* **Namespaces.** An OAMS namespace is `<owner-hash>:<scope>` (OAMS §4), and its owner-hash SHOULD be a
  hash: a UMP owner DID is hashed into it (`ump-…`), never written out; a scope holds no slash or colon,
  so a UMP project's become `-`. The record's own scope travels in the extension.
"""

_ROUND_TRIPS = """\
## Round trips

`format_round_trip(document, via=[A, B, A])` converts there and back and compares, record by record, each
field the A → B table promises (mapped and extension rows) with the source; each difference is a `Loss`
(`suite/interop/model.py`) whose requirement is the row id (`mapping/ump-omf/body.text`) and whose stage
says which conversion dropped it. Lost rows are listed in the notes (`lost by design`), and a field the
table calls lost that came back anyway is listed in `extra["kept_though_lost"]`: the table is honest both
ways. `format_matrix(default_corpora())` runs every ordered pair (and the identity A → A) over a rich
document of each format.
"""


def _field(row: Row) -> str:
    if row.field == "@record":
        return f"(each {mapping.RECORD[row.source]})"
    if row.is_policy:
        return {"@unexportable": "(records with consent.exportable false)",
                "@redacted": "(values at consent.redact paths)",
                "@blank-text": f"({mapping.RECORD[row.source]}s with blank text)"}[row.field]
    return f"`{row.field}`"


def _to(row: Row) -> str:
    if row.fate is Fate.LOST:
        return "—"
    if row.field == "@record":
        return f"one {mapping.RECORD[row.target]}"
    return f"`{row.to}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _pair_section(pair: mapping.Pair) -> list[str]:
    name = f"{mapping.NAMES[pair.source]} → {mapping.NAMES[pair.target]}"
    lines = [f"## {name}", ""]
    lines += [f"Besides the rows: {d}." for d in pair.defaults]
    lines += ["", "| field | fate | to | note | row |", "|---|---|---|---|---|"]
    for row in pair.rows:
        lines.append(f"| {_field(row)} | {row.fate.value} | {_to(row)} | {_cell(row.note)} | `{row.id}` |")
    lines.append("")
    return lines


def _losses() -> list[str]:
    lines = ["## Losses per pair", ""]
    for pair in mapping.table().values():
        name = f"{mapping.NAMES[pair.source]} → {mapping.NAMES[pair.target]}"
        lines.append(f"* **{name}**")
        lost = [f"  * {_field(r)}: {r.note}" for r in pair.rows if r.fate is Fate.LOST]
        lines += lost or ["  * nothing: every field is mapped or carried"]
    lines.append("")
    return lines


def _summary() -> list[str]:
    lines = ["## Summary", "", "| pair | mapped | in extensions | lost |", "|---|---|---|---|"]
    for pair in mapping.table().values():
        counts = {fate: [r for r in pair.rows if r.fate is fate and r.field != "@record"] for fate in Fate}
        lines.append(f"| {mapping.NAMES[pair.source]} → {mapping.NAMES[pair.target]} | "
                     + " | ".join(", ".join(_field(r).strip("`") for r in counts[fate]) or "—" for fate in Fate)
                     + " |")
    lines.append("")
    return lines


def mapping_markdown() -> str:
    def named(pairs: list[tuple[str, str]]) -> str:
        return ", ".join(f"{mapping.NAMES[a]} → {mapping.NAMES[b]}" for a, b in pairs)

    built = [p for p in mapping.table() if "oams" in p]
    unbuilt = [(a, b) for a in mapping.FORMATS for b in mapping.FORMATS
               if a != b and "oams" in (a, b) and (a, b) not in mapping.table()]
    not_yet = f"Not built yet: {named(unbuilt)} (the command says so, as a usage error). " if unbuilt else ""
    intro = _INTRO.replace("{oams_pairs}", named(built)).replace("{oams_unbuilt}", not_yet)
    lines = [intro, *_summary()]
    for pair in mapping.table().values():
        lines += _pair_section(pair)
    lines += _losses()
    lines.append(_ROUND_TRIPS)
    return "\n".join(lines).rstrip("\n") + "\n"

