"""UMP faults of the reference implementation.

The first group breaks the file binding (L0, `engine.UmpEngine`; bindings=("file",)). The second
group (SERVER_FAULTS) breaks the live server (`service.UmpService`, L1-L3) and shows over both
live bindings (bindings=None: http and mcp). Each server fault's `breaks` are the requirements the
live checks (suite/ump/checks/l1.py, l2.py, l3.py) report as failed against it; the notes say why
where a fault shows in more than one check.

Each server entry says how the fault is made, apart from the right implementation (service.py
holds no branch on a fault's name): `wraps` replace a method of `UmpService` on the one instance
— an operation (`_op_revise`, …) or one of the small methods it is built from (`_recall`,
`_present`, `_complete`, `_superseded`, `_tombstone`, …). One-line wrongs sit beside their entry;
longer ones are named in `faulty.py`. The file faults (engine.py) are still branches on the name.
"""

import copy
import json
import re
from typing import Any

from memconform.reference_impl.faults import Fault
from memconform.reference_impl.ump import faulty as w
from memconform.reference_impl.ump.engine import _SERVICE_KEY, UmpError
from memconform.reference_impl.ump.faulty import (after, before, called_with, completed, drop, each, every_result,
                                                  instead, keep, served, skipped)
from memconform.reference_impl.wraps import within
from memconform.reference_impl.ump.service import MAX_RECALL
from memconform.suite.ump import integrity
from memconform.suite.ump import record as ump_record
from memconform.suite.ump.canonical import without_integrity


def _validated_as(change: Any) -> dict[str, Any]:
    """remember validates a changed copy of the record (and stores the record as sent): what the change
    hides from the §2 rules gets through."""
    def wrap(service: Any, original: Any) -> Any:
        def validate(rec: dict[str, Any], version: str) -> None:
            return original(change(copy.deepcopy(rec)), version)
        return validate
    return {"_validate": wrap}


def _surrogates_replaced(service: Any, original: Any) -> Any:
    """remember "repairs" text that is not valid Unicode: each lone surrogate becomes U+FFFD and the
    record is stored, instead of refused (round 20)."""
    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return value.encode("utf-8", "replace").decode("utf-8") if re.search("[\ud800-\udfff]", value) else value
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    def handle(operation: Any, request: Any, **kwargs: Any) -> Any:
        return original(operation, fix(request) if operation == "remember" else request, **kwargs)
    return handle


def _principal_from_scope(service: Any, original: Any) -> Any:
    """A token signed by an owner this store knows is taken as acting for the owner its scope names,
    not for its issuer (an unknown issuer's token still acts for the issuer alone; round 20)."""
    def who(grant: Any, asserted: Any) -> Any:
        found = original(grant, asserted)
        owner = (grant.scope or {}).get("owner") if grant is not None else None
        if isinstance(owner, str) and service.keyring.for_owner(grant.issuer) is not None:
            return type(found)(grant, owner, owner)
        return found
    return who


def _shared_as_public_when_scoped() -> dict[str, Any]:
    """A recall naming another owner's scope treats that owner's shared records as public ones (the
    visibility predicate reads `shared` as `public` once the scope names an owner who is not the
    requester; round 20)."""
    def op_recall(service: Any, original: Any) -> Any:
        def run(request: Any, version: str, grant: Any) -> Any:
            scope = request.get("scope") if isinstance(request, dict) else None
            named = scope.get("owner") if isinstance(scope, dict) else None
            service._fault_wider = isinstance(named, str) and (grant is None or named != grant.issuer)
            try:
                return original(request, version, grant)
            finally:
                service._fault_wider = False
        return run

    def recall_visible(service: Any, original: Any) -> Any:
        def visible(who: Any) -> Any:
            sql, params = original(who)
            if getattr(service, "_fault_wider", False):
                return f"(({sql}) OR r.visibility = 'shared')", params
            return sql, params
        return visible
    def request_scope(service: Any, original: Any) -> Any:
        # recall may name another owner's scope (what it serves is then what the requester may see)
        def check(who: Any, scope: Any, operation: str, foreign_owner: bool = False) -> None:
            return original(who, scope, operation, foreign_owner=foreign_owner or operation == "recall")
        return check
    return {"_op_recall": op_recall, "_recall_visible": recall_visible, "_check_request_scope": request_scope}


def _visibility_lowered(rec: Any) -> Any:
    scope = rec.get("scope") if isinstance(rec, dict) else None
    if isinstance(scope, dict) and isinstance(scope.get("visibility"), str):
        scope["visibility"] = scope["visibility"].lower()
    return rec


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _valid_range_as_text(rec: Any) -> Any:
    """valid_to before valid_from judged by comparing the two strings: an offset or a fraction makes
    text order differ from time order."""
    time = rec.get("time") if isinstance(rec, dict) else None
    if isinstance(time, dict) and all(isinstance(time.get(k), str) and _RFC3339.fullmatch(time[k])
                                      for k in ("valid_from", "valid_to")):
        if time["valid_to"] >= time["valid_from"]:
            time["valid_to"] = time["valid_from"]
    return rec


def _lifecycle_bools_as_numbers(rec: Any) -> Any:
    """isinstance(x, (int, float)) takes a boolean for a number (Python's bool is an int)."""
    life = rec.get("lifecycle") if isinstance(rec, dict) else None
    if isinstance(life, dict):
        for k in ("confidence", "salience"):
            if isinstance(life.get(k), bool):
                life[k] = int(life[k])
    return rec



def _structured_unchecked(rec: Any) -> Any:
    """body.structured's type is never looked at: any JSON value is taken."""
    body = rec.get("body") if isinstance(rec, dict) else None
    if isinstance(body, dict) and "structured" in body and not isinstance(body["structured"], dict):
        body["structured"] = {}
    return rec


def _relation_target_optional(rec: Any) -> Any:
    """A relation is checked for its type only."""
    for rel in rec.get("relations") or [] if isinstance(rec, dict) else []:
        if isinstance(rel, dict) and "target" not in rel:
            rel["target"] = "entity:unnamed"
    return rec


def _major_by_prefix(service: Any, original: Any) -> Any:
    """The version test is `declared.startswith("1")`: "10.0" is read as 1.0."""
    def complete(raw: Any, version: str, now: Any) -> Any:
        declared = raw.get("ump") if isinstance(raw, dict) else None
        if isinstance(declared, str) and declared.startswith("1") and declared.split(".")[0] != "1":
            raw = {**raw, "ump": "1.0"}
        return original(raw, version, now)
    return complete


def _unknown_minor_as_known(rec: Any) -> Any:
    """An unknown minor of a known major ("1.7") is validated as the version known of that major
    (minors are additive, §8); the record is then stored with the label it arrived with."""
    declared = rec.get("ump") if isinstance(rec, dict) else None
    known = ump_record.known_minor(declared) if isinstance(declared, str) else None
    if known is not None:
        rec["ump"] = known
    return rec


def _merge_into_tombstones(service: Any, original: Any) -> Any:
    """§3.3's dedup query leaves out superseded records but not forgotten ones: a memory remembered
    again after its forget is answered merged into its tombstone (round 28)."""
    def target(version: str, owner: str, kind: str, text: str) -> Any:
        from memconform.reference_impl.ump.store import Stored, text_hash

        found = original(version, owner, kind, text)
        if found is not None:
            return found
        for row in service._store.db.execute(
                "SELECT rowid, version, json FROM records WHERE version = ? AND owner = ? AND kind = ? "
                "AND text_hash = ? AND superseded = 0 ORDER BY rowid", (version, owner, kind, text_hash(text))):
            rec = json.loads(row["json"])
            if (rec.get("body") or {}).get("text") == text:
                return Stored(row["rowid"], row["version"], rec, row["json"])
        return None
    return target


def _filtered_after_limit(service: Any, original: Any) -> Any:
    """Recall ranks every record that matches and cuts the page to `limit` first; the requester's
    visibility filter then runs on that page, so records the requester may see are crowded out by
    ones it may not (round 28). Rehydration (which passes no `visible`) is left as it is."""
    def wrong(*a: Any, limit: int, visible: Any = None, **k: Any) -> Any:
        if visible is None:
            return original(*a, limit=limit, visible=visible, **k)
        where, params = visible
        page = original(*a, limit=limit, visible=("1", []), **k)
        return [hit for hit in page if service._store.visible(hit[0].rowid, where, params)]
    return wrong


_DATE_MONTHS = re.compile(r"P(?:\d+Y)?(\d+)M")


def _months_as_minutes(store: Any, original: Any) -> Any:
    """The duration reader reads M with one table, minutes, whether it stands in the date part or
    after the T: P1M keeps a record one minute (round 28)."""
    def columns(rec: Any, depth: int) -> dict[str, Any]:
        cols = original(rec, depth)
        cons = rec.get("consent") if isinstance(rec.get("consent"), dict) else {}
        text = cons.get("retention")
        found = _DATE_MONTHS.match(text.strip()) if isinstance(text, str) else None
        if found and cols.get("expires") is not None:
            months = int(found.group(1)) * 30 * 86_400_000_000
            return dict(cols, expires=cols["expires"] - months + int(found.group(1)) * 60_000_000)
        return cols
    return columns


def _weeks_unread(service: Any, original: Any) -> Any:
    """The consent check's duration pattern has no W designator: P2W is refused as no ISO-8601
    duration (round 28)."""
    def check(rec: dict[str, Any]) -> None:
        cons = rec.get("consent")
        text = cons.get("retention") if isinstance(cons, dict) else None
        if isinstance(text, str) and "W" in text.upper():
            raise UmpError("consent_violation", f"/consent/retention is {text!r}, not an ISO-8601 duration")
        return original(rec)
    return check


def _grants_by_claims(service: Any, original: Any) -> Any:
    """Verified tokens are cached by their claims segment, not by the whole token: a token whose
    claims were verified once is granted from the cache whatever its signature (round 28)."""
    cache: dict[str, Any] = {}

    def verify(token: str) -> Any:
        head = token.rpartition(".")[0]
        now = service._now().timestamp()
        grant = cache.get(head)
        if grant is not None and (grant.not_before is None or now >= grant.not_before) and now < grant.expires:
            return grant
        grant = original(token)
        cache[head] = grant
        return grant
    return verify


FILE = ("file",)


def _time_without_observed(record: dict[str, Any]) -> None:
    if isinstance(record.get("time"), dict):
        record["time"] = {k: v for k, v in record["time"].items() if k != "observed"}


def _file(name: str, description: str, breaks: tuple[str, ...], *, wraps: dict[str, Any], since: str = "0.1") -> Fault:
    """A fault of the file binding: its wraps replace methods of the file engine (engine.py), which
    installs the `file.` part; the live service installs none of them."""
    return Fault(name, "ump", description, breaks, since=since, bindings=FILE,
                 wraps={f"file.{method}": wrap for method, wrap in wraps.items()})

UMP_FAULTS = (
    _file("md-drops-relations", "the .ump.md projection leaves out `relations`",
          ("ump/md-roundtrip-lossless",), wraps={"_markdown": w.markdown_without_relations}),
    _file("md-unterminated-front-matter", ".ump.md files never close their front matter",
          ("ump/file-md",), wraps=after("_markdown", w.front_matter_unclosed)),
    _file("json-export-trailing-comma", "the .ump.json array ends with a trailing comma (not JSON)",
          ("ump/file-json",), wraps=after("export_json", w.trailing_comma)),
    _file("json-export-drops-structured", "the JSON export loses `body.structured`",
          ("ump/file-json",), wraps={"_as_exported": w.drops_structured_in_json}),
    _file("export-ignores-redact", "export emits values named by `consent.redact`",
          ("ump/export-redact",), wraps=instead("_as_exported", lambda rec, fmt: rec)),
    _file("exports-unexportable", "export includes records with `consent.exportable: false`",
          ("ump/export-exportable",), wraps=instead("_exportable", lambda rec: True)),
    _file("hash-over-wrong-bytes",
          "content_hash is BLAKE3 of the record with integrity included (not JCS minus integrity)",
          ("ump/integrity-content-hash",), wraps=instead("_sign", w.hash_over_wrong_bytes)),
    _file("signature-over-raw-hash",
          "the signature covers the raw BLAKE3 digest instead of BLAKE3(content_hash string)",
          ("ump/integrity-signature",), wraps=instead("_sign", w.signature_over_raw_hash)),
    # found by a blind red team (round 14): a signature that verifies under no reading of "sign the
    # hash" is no signature by the owner's key (the file claim's signer-owner), whatever the input
    _file("export-rehash-keeps-signature", "export recomputes a redacted record's content_hash but keeps the "
          "signature of the unredacted record", ("ump/integrity-signature", "ump/integrity-signer-owner"),
          wraps={"_sign": w.stale_signature_after_redact}),
    _file("export-successor-under-prior-id", "export writes a revise successor under the id of the record it "
          "supersedes (both in one file)", ("ump/file-json", "ump/file-md", "ump/export-id-unique"), wraps={"export_records": w.successor_under_prior_id}),
    _file("signs-with-service-key", "records are signed with the server's key, not the owner's",
          ("ump/integrity-signer-owner",),
          wraps=instead("_sign", lambda rec, key: integrity.sign(rec, _SERVICE_KEY))),
    _file("accepts-bad-signatures", "import does not verify integrity (hash, signature or signer)",
          ("ump/integrity-verify-on-read", "ump/integrity-content-hash", "ump/integrity-signature",
           "ump/integrity-signer-owner"), wraps=instead("_verify", lambda rec: None)),
    _file("accepts-missing-fields", "import does not check REQUIRED members",
          ("ump/record-required-fields", "ump/reject-invalid-record"),
          wraps=w.validation_ignores("ump/record-required-fields")),
    # The Markdown vector with an unquoted `ump: 1.0` (a number) is refused for its version too.
    _file("accepts-unknown-version", "import takes any `ump` value of a known major",
          ("ump/record-version", "ump/reject-invalid-record", "ump/file-md"),
          wraps={"_violations": w.any_version_of_a_known_major}),
    _file("accepts-unknown-major", "import takes records of an unknown major version",
          ("ump/reject-unknown-major", "ump/record-version", "ump/reject-invalid-record"), since="1.0",
          wraps=w.validation_ignores("ump/reject-unknown-major")),
    _file("accepts-bad-ids", "import does not check the id pattern",
          ("ump/record-id-format", "ump/reject-invalid-record"), wraps=w.validation_ignores("ump/record-id-format")),
    _file("accepts-unknown-kind", "import takes any `kind`",
          ("ump/record-kind", "ump/reject-invalid-record"), wraps=w.validation_ignores("ump/record-kind")),
    _file("accepts-unknown-visibility", "import takes any `scope.visibility`",
          ("ump/record-visibility", "ump/reject-invalid-record"), wraps=w.validation_ignores("ump/record-visibility")),
    _file("accepts-bad-time", "import does not check timestamps or valid time order",
          ("ump/record-time", "ump/reject-invalid-record"), wraps=w.validation_ignores("ump/record-time")),
    _file("accepts-bad-field-types", "import does not check member types and ranges",
          ("ump/record-field-types", "ump/reject-invalid-record"),
          wraps=w.validation_ignores("ump/record-field-types")),
    # A reader that refuses `working` records also fails to read valid files holding them, and
    # so cannot take its own Markdown of such a record back.
    _file("refuses-working-kind", "the file reader refuses records of kind `working`",
          ("ump/kinds-accept-all", "ump/file-json", "ump/file-md", "ump/md-roundtrip-lossless"),
          wraps={"read_text": w.refuses_working_kind}),
    _file("refuses-unknown-relation-type", "the file reader refuses relation types outside the "
          "reserved set (and so valid files that use one)",
          ("ump/relations-open-vocabulary", "ump/file-json", "ump/file-md"),
          wraps={"read_text": w.refuses_unknown_relation_type}),
    # Both also make the JSON export lose what it was given, which file-json reports.
    _file("export-drops-provenance", "export leaves out `provenance`",
          ("ump/provenance-required", "ump/file-json"), wraps=after("_as_exported", w.without("provenance"))),
    _file("export-opaque-owner", "export writes the owner as an opaque account name, not a DID",
          ("ump/owner-did", "ump/file-json"), wraps=after("_as_exported", w.opaque_owner)),
    _file("exports-other-version", "a 1.0 store exports records labelled 0.1",
          ("ump/emit-advertised-version",), since="1.0", wraps={"_as_exported": w.labelled_other_version}),
    _file("keeps-0.1-on-import", "imported 0.1 records are kept and re-emitted as 0.1",
          ("ump/normalize-imported-0.1", "ump/emit-advertised-version"), since="1.0",
          wraps=instead("_normalized", lambda rec: rec)),
)

# -- the live server (L1-L3) -------------------------------------------------------------------

SERVER_FAULTS = (
    # capabilities (§3.1)
    # The snapshot repeats the newest record's text, so a recall for it finds one record more.
    # a subscription is a read too (found by a blind red team: its stream leaked what get and recall withheld)
    Fault("subscribe-trusts-owner-param", "ump", "subscribe serves any owner's scope the request names, every "
          "change in it to every subscriber, private records included", ("ump/visibility-private",),
          overrides={"subscribe_foreign_owner": "visible"}, wraps=instead("_may_see", lambda who, rowid: True)),
    Fault("subscribe-unredacted", "ump", "subscribe serves another owner's public records as stored: consent.redact "
          "is applied by get and recall only", ("ump/consent-redact-boundary",),
          overrides={"subscribe_foreign_owner": "visible"}, wraps=instead("_streamed", lambda rec, who: rec)),
    Fault("visibility-by-project-only", "ump", "a private record in no project is served to every owner (the "
          "visibility filter is written against the project)", ("ump/visibility-private",),
          wraps={"_visible_sql": w.visibility_by_project_only}),
    Fault("revise-scope-escape", "ump", "revise checks the token's scope against the prior only: a patch of "
          "scope.project writes the successor outside it", ("ump/cap-token-scope",),
          wraps=instead("_check_successor_writable", lambda who, succ, grant: None)),
    # found by a blind red team (round 14): the patch may name an owner, and the successor is held
    # to the token's scope members only, not to the issuer's ownership, so a token naming no owner
    # lets a patch give the record away (one that names the owner still stops it)
    Fault("revise-owner-escape", "ump", "revise lets a patch set scope.owner and checks the successor against the "
          "token's scope members only: with a token naming no owner, the successor is written as another owner's "
          "record", ("ump/cap-token-issuer-owner",),
          wraps={**skipped("_check_patch_keeps_owner"),
                 "_check_successor_writable": w.successor_in_token_scope_only}),
    Fault("token-scope-ignores-agent", "ump", "a token's scope.agent is not enforced (project, owner and visibility "
          "are)", ("ump/cap-token-scope",),
          wraps={"_token_scope": lambda service, original: lambda who: {
              k: v for k, v in original(who).items() if k != "agent"}}),
    Fault("subscribe-ignores-token-project", "ump", "a subscription's stream is filtered by the subscription's own "
          "scope and the owner's visibility, not by the token's project: a token for one project that subscribes "
          "naming none is sent the owner's writes in every project", ("ump/cap-token-scope",),
          wraps={"_may_see": w.stream_ignores_token_project}),
    Fault("merge-across-owners", "ump", "remember merges a record into another owner's public record of the same text "
          "(answered merged with that record's id: the writer's memory is stored as someone else's)",
          ("ump/remember-persists",), wraps={"_merge_target": w.merge_across_owners}),
    # A blind red team's server (round 28): its dedup matched tombstoned records too.
    Fault("merge-into-tombstoned", "ump", "remember merges a record into a tombstoned one of the same owner, kind "
          "and text: a memory remembered again after its forget is answered merged with the tombstone's id, and "
          "nothing of it is recallable", ("ump/remember-persists",), wraps={"_merge_target": _merge_into_tombstones}),
    Fault("capabilities-side-effect", "ump", "every capabilities call snapshots the newest memory into a new "
          "working memory", ("ump/capabilities-no-side-effects",),
          wraps={"_capabilities": w.capabilities_side_effect}),
    # A wrong value rather than none (the route and tool checks recognise the §3.1 response by its
    # `ump`), of the shape the OpenAPI document gives (the fuzz check validates against it).
    Fault("capabilities-wrong-version", "ump", "capabilities answers the server's release number (\"1.4\") as "
          "`ump` instead of the spec version", ("ump/capabilities-version",),
          wraps=each("_capabilities", keep(ump="1.4"))),
    Fault("capabilities-bad-conformance", "ump", "capabilities answers conformance \"Level 3\" (not L0-L3)",
          ("ump/capabilities-conformance",),
          wraps=each("_capabilities", keep(conformance="Level 3"))),
    Fault("capabilities-missing-kind", "ump", "capabilities lists four kinds (working left out)",
          ("ump/capabilities-kinds",),
          wraps=each("_capabilities", keep(kinds=lambda kinds: [k for k in kinds if k != "working"]))),
    Fault("capabilities-no-live-bindings", "ump", "capabilities.bindings lists only \"file\", not the binding in use",
          ("ump/capabilities-bindings",),
          wraps=each("_capabilities", keep(bindings=["file"]))),
    # The bindings still negotiate 0.1 (capabilities echoes the client's version) but every
    # operation is 1.0's and capabilities claims 1.0 only: a 1.0 server answering ump "0.1" that
    # takes a 0.1 record as an import and serves it normalized to 1.0.
    Fault("negotiates-down-to-0.1", "ump", "a client announcing 0.1 is answered ump \"0.1\", but every operation "
          "runs as 1.0 (a 0.1 record is stored and served as 1.0) and capabilities.versions says 1.0 only",
          ("ump/capabilities-no-0.1-runtime",), since="1.0",
          wraps={**each("_capabilities", keep(versions=lambda versions: versions[:1])),
                 **w.spoken_as_1_0("_op_remember", "_op_get", "_op_recall", "_op_revise", "_op_forget",
                                   "_op_feedback", "_op_rehydrate")}),
    # recall (§3.2)
    Fault("recall-omits-signals", "ump", "recall results carry record and score but no signals",
          ("ump/recall-result-shape",),
          wraps=every_result(lambda item: item.pop("signals"))),
    Fault("recall-renames-signal", "ump", "recall reports similarity as \"relevance\" (not advertised)",
          ("ump/recall-signal-names",),
          wraps=every_result(w.renamed_signal)),
    Fault("recall-unranked", "ump", "recall returns the best results in ascending score order",
          ("ump/recall-ranked",),
          wraps=each("_recall", lambda answer: answer["results"].reverse())),
    # The checks of recall-finds-remembered query a record's whole body text; the others recall a
    # marker word or two.
    Fault("recall-drops-long-queries", "ump", "recall answers no results for a query of more than five words",
          ("ump/recall-finds-remembered",),
          wraps={"_recall": w.drops_long_queries}),
    Fault("ignores-kind-filter", "ump", "recall ignores filter.kind", ("ump/recall-filter-kind",),
          wraps=called_with("_recall", kinds=None)),
    # found by a blind red team (round 14): the page is cut before the kind filter runs
    Fault("kind-filter-after-limit", "ump", "recall ranks every kind, cuts the ranking to `limit`, and only then "
          "drops the records of unlisted kinds: with limit 1 and a best match of another kind it answers nothing",
          ("ump/recall-filter-kind",), wraps={"_recall": w.kind_filter_after_limit}),
    Fault("ignores-limit", "ump", "recall ignores limit and returns up to max_recall results",
          ("ump/recall-limit",),
          wraps=called_with("_recall", limit=MAX_RECALL)),
    Fault("limit-unclamped", "ump", "recall honours a limit past max_recall: with limit 60 and 51 matches it answers "
          "51 results though capabilities advertises max_recall 50", ("ump/recall-limit",),
          wraps=instead("_clamped", lambda limit: limit)),
    # filter.valid_at is dropped, so recall always looks at now: a probe in the past misses what
    # was valid then (honors-valid-at), and the prior of a revise is not found in its past.
    Fault("ignores-valid-at", "ump", "recall ignores filter.valid_at (always filters at now)",
          ("ump/recall-honors-valid-at", "ump/revise-prior-queryable"),
          wraps={"_recall_time": lambda service, original: lambda valid_at: original(None)}),
    Fault("recall-default-all-time", "ump", "recall without filter.valid_at returns records of every valid time",
          ("ump/recall-default-valid-at-now",),
          wraps=instead("_recall_time", lambda valid_at: valid_at)),
    # Default recall (no include_tombstoned) returns tombstones, forgotten or retention-expired.
    Fault("recall-returns-tombstoned", "ump", "default recall includes tombstoned records",
          ("ump/forget-excluded-from-recall", "ump/consent-retention-tombstone"),
          wraps=called_with("_recall", include_tombstoned=True)),
    Fault("forget-visible-multi-kind-recall", "ump", "a recall whose filter.kind names two or more kinds returns "
          "tombstoned records (one kind, or none, leaves them out)", ("ump/forget-excluded-from-recall",),
          wraps={"_recall": w.multi_kind_recall_keeps_tombstones}),
    # Recall is the only place: other owners' records of any visibility, mallory's forged grant
    # included (the issuer-owner check recalls with it too).
    Fault("cross-owner-leak", "ump", "recall returns other owners' private and shared records",
          ("ump/visibility-private", "ump/visibility-shared-grant", "ump/cap-token-issuer-owner"),
          wraps={"_recall_visible": w.cross_owner_leak}),
    # remember (§3.3)
    # The second identical remember answers "created" with the first one's id: the report is
    # wrong (reports-result) and, as the client sees it, two records were created under one id
    # (id-unique: a repeated id is reported as merged, the catalogue note says).
    Fault("merge-not-reported", "ump", "a remember merged into an existing record answers result \"created\"",
          ("ump/remember-reports-result", "ump/id-unique"),
          wraps=each("_merged", keep(result="created"))),
    Fault("merge-returns-new-id", "ump", "a merged remember answers a fresh id that names no record",
          ("ump/remember-merge-returns-existing-id",),
          wraps=each("_merged", w.merged_under_new_id)),
    Fault("merge-answers-no-id", "ump", "a merged remember answers {result: merged} without the id",
          ("ump/remember-returns-id", "ump/remember-merge-returns-existing-id"),
          wraps=each("_merged", drop("id"))),
    # The golden vectors without body (record-required-fields, reject-invalid-record) are taken too.
    Fault("accepts-bodyless-record", "ump", "remember of a record without body stores it with an empty body",
          ("ump/remember-invalid-record", "ump/record-required-fields", "ump/reject-invalid-record"),
          wraps=completed(w.empty_body)),
    # round 20: a record breaking a §2 rule the validation reads loosely
    Fault("visibility-case-folded", "ump", "scope.visibility is lower-cased before the enum check: \"Public\" is taken",
          ("ump/reject-invalid-record",), wraps=_validated_as(_visibility_lowered)),
    Fault("valid-range-compared-as-text", "ump", "valid_to before valid_from is judged by comparing the strings: "
          "valid_to 11:00+02:00 after valid_from 10:00Z is taken", ("ump/reject-invalid-record",),
          wraps=_validated_as(_valid_range_as_text)),
    Fault("token-principal-from-scope", "ump", "a token signed by a known owner acts for the owner its scope "
          "names: owner-b's token scoped to owner-a reads owner-a's private records", ("ump/cap-token-issuer-owner",),
          wraps={"_who": _principal_from_scope}),
    Fault("recall-shared-when-scoped", "ump", "a recall naming another owner's scope returns that owner's shared "
          "records without a grant", ("ump/visibility-shared-grant",), wraps=_shared_as_public_when_scoped()),
    Fault("lone-surrogates-replaced", "ump", "remember replaces each lone surrogate of a record's text with U+FFFD "
          "and stores it, instead of refusing text that is not Unicode", ("ump/remember-invalid-record",),
          wraps={"handle": _surrogates_replaced}),
    Fault("id-collision-overwrite", "ump", "remember is an upsert by id: a record sent under an id the store holds "
          "for another record replaces it", ("ump/id-unique",), wraps={"_op_remember": w.id_collision_overwrite}),
    Fault("recall-query-ascii", "ump", "recall encodes its query as ASCII (a cache key): a query with an accent "
          "or an emoji fails inside the server", ("ump/recall-finds-remembered",),
          wraps={"_op_recall": w.recall_query_ascii}),
    Fault("successor-indexed-as-prior", "ump", "revise gives the successor the prior's search-index entry: a "
          "recall for a word only the successor holds misses it", ("ump/recall-finds-remembered",),
          wraps={"_op_revise": w.successor_indexed_as_prior}),
    Fault("structured-type-unchecked", "ump", "body.structured of any JSON type is taken (an array, a string)",
          ("ump/reject-invalid-record",), wraps=_validated_as(_structured_unchecked)),
    Fault("relation-target-optional", "ump", "a relation naming no target is taken", ("ump/reject-invalid-record",),
          wraps=_validated_as(_relation_target_optional)),
    Fault("major-by-prefix", "ump", "the version test is a prefix test: a record declaring ump \"10.0\" is taken "
          "as 1.0", ("ump/reject-unknown-major",), since="1.0", wraps={"_complete": _major_by_prefix}),
    # A blind red team's server (round 28): a record sent as "1.3" was served as "1.3" by a 1.0 server.
    Fault("minor-version-echoed", "ump", "a record declaring an unknown minor of a known major (\"1.7\") is "
          "validated as the known version but stored and served with the label it arrived with",
          ("ump/emit-advertised-version",), since="1.0", wraps=_validated_as(_unknown_minor_as_known)),
    Fault("lifecycle-bools-as-numbers", "ump", "lifecycle.confidence true is taken for the number 1",
          ("ump/reject-invalid-record",), wraps=_validated_as(_lifecycle_bools_as_numbers)),
    Fault("accepts-bad-consent", "ump", "remember takes a consent block the store cannot honour (a retention "
          "that is no ISO-8601 duration, a redact entry that is no JSON-path)", ("ump/remember-reject-policy",),
          wraps=skipped("_check_consent")),
    Fault("accepts-missing-provenance", "ump", "remember takes records without provenance",
          ("ump/provenance-required",),
          wraps=skipped("_check_provenance")),
    Fault("provenance-filled-anonymous", "ump", "remember of a record without provenance fills one naming "
          "nobody (actor \"anonymous\") instead of the writer the token names", ("ump/provenance-required",),
          overrides={"fill_provenance": "placeholder"}),
    # The opaque owner is taken as a local account and stored unsigned (no key can sign for it).
    Fault("accepts-opaque-owner", "ump", "remember takes a scope.owner that is not a DID",
          ("ump/owner-did",), wraps={**skipped("_check_owner"), "_check_may_remember": w.opaque_owner_taken}),
    # The suite's own remember of a tampered record is the observable read (catalogue note of
    # integrity-verify-on-read); the golden vectors with bad integrity are taken too (their
    # requirements: content hash, signature, signer = owner), as with the file fault.
    Fault("remember-accepts-bad-signature", "ump", "remember does not verify the integrity of a signed record "
          "(the name accepts-bad-signatures is the file binding's)",
          ("ump/remember-reject-bad-signature", "ump/integrity-verify-on-read", "ump/integrity-content-hash",
           "ump/integrity-signature", "ump/integrity-signer-owner"),
          wraps=skipped("_check_integrity")),
    # A record labelled 0.1 served in a 1.0 exchange is not a valid 1.0 record (served-records-valid).
    Fault("live-keeps-0.1-records", "ump", "a 0.1 record remembered under 1.0 is stored and served as 0.1",
          ("ump/normalize-imported-0.1", "ump/emit-advertised-version", "ump/served-records-valid"), since="1.0",
          wraps=instead("_read_0_1", lambda raw: (copy.deepcopy(raw), "0.1"))),
    # get (§3.4) and served records
    Fault("get-unknown-null", "ump", "get of an unknown content-addressed (52-character) id answers "
          "{record: null} instead of not_found", ("ump/get-not-found",),
          wraps={"_op_get": w.get_unknown_null}),
    Fault("get-prefix-match", "ump", "get of an id the store does not hold that begins a stored id (a \"short "
          "id\") answers that record instead of not_found", ("ump/get-not-found",),
          wraps={"_op_get": w.get_prefix_match}),
    # The served-records check names the §2 rule with served-records-valid.
    # 1.0 only: the 0.1 text never closes the record (a blind red team, round 17: record-extension),
    # the 1.0 record schema does
    Fault("serves-extra-member", "ump", "served records carry an extra top-level member `stored` (re-signed)",
          ("ump/served-records-valid", "ump/record-field-types"), since="1.0",
          wraps=served(lambda rec, key: integrity.sign(dict(without_integrity(rec), stored=True), key))),
    # integrity (§2.8, §6.1, §7 L3); the stored records stay correct, the faults act when serving.
    # sign-on-write judges content hash and signature; canonical-jcs any hash that is not the JCS one.
    Fault("serves-hash-over-wrong-bytes", "ump", "served records' content_hash covers the record with integrity "
          "included (re-signed over that hash)",
          ("ump/integrity-content-hash", "ump/integrity-sign-on-write", "ump/canonical-jcs"),
          wraps=served(w.hash_over_wrong_bytes)),
    # json.dumps(sort_keys, ensure_ascii) equals JCS on ASCII-only records without fractions, so
    # only the JCS check's record (non-ASCII text, UTF-16 key order, 1e21) shows it.
    Fault("serves-python-json-hash", "ump", "served records are hashed over Python's json.dumps(sort_keys, "
          "ensure_ascii) instead of RFC 8785", ("ump/canonical-jcs",),
          wraps=served(w.python_json_hash)),
    Fault("serves-signature-over-raw-hash", "ump", "served records are signed over the raw BLAKE3 digest instead "
          "of BLAKE3(content_hash string)", ("ump/integrity-signature",),
          wraps=served(w.signature_over_raw_hash)),
    Fault("serves-service-key-signature", "ump", "served records are signed with the server's key, not the owner's",
          ("ump/integrity-signer-owner",),
          wraps=served(lambda rec, key: integrity.sign(without_integrity(rec), _SERVICE_KEY), keyless=True)),
    # issue 13: an operator that loaded one owner's seed signed every owner's records with it, and
    # a check that judged only owner-a's records never saw it
    Fault("signs-all-owners-with-one-key", "ump", "every record is signed with owner-a's key, whoever owns it",
          ("ump/integrity-signer-owner",), wraps=w.one_key_for_all()),
    # round 17: the same key signing for every owner while signer names the owner (the red team's own
    # verify-on-read then refused owner-b's records, and only the failed reads were charged);
    # sign-on-write judged owner-a's records only
    Fault("signs-all-owners-with-one-key-as-owner", "ump", "every record is signed with owner-a's key, while "
          "integrity.signer names the record's owner", ("ump/integrity-signature", "ump/integrity-sign-on-write"),
          wraps=w.one_key_signer_named_owner()),
    Fault("serves-unsigned", "ump", "records are served without integrity",
          ("ump/integrity-required", "ump/integrity-sign-on-write"),
          wraps=served(lambda rec, key: without_integrity(rec), keyless=True)),
    # revise (§3.5)
    # The prior keeps valid_to null: the revise check sees it, and a default recall still returns
    # the prior of a revise (the valid-at-now check revises one).
    Fault("revise-keeps-valid-to", "ump", "revise leaves the prior's time.valid_to unset (null)",
          ("ump/revise-sets-valid-to", "ump/recall-default-valid-at-now"),
          wraps=w.prior_keeps("time")),
    Fault("revise-skips-superseded-by", "ump", "revise does not set the prior's superseded_by",
          ("ump/revise-sets-superseded-by",),
          wraps=w.prior_keeps("superseded_by")),
    Fault("revise-answers-no-supersedes", "ump", "revise answers {id} without supersedes",
          ("ump/revise-creates-successor",),
          wraps=each("_op_revise", drop("supersedes"))),
    # Under either patch reading (merge, or replace what the patch names) the members the patch
    # does not name carry over.
    Fault("revise-drops-unpatched-members", "ump", "the successor of a revise loses `relations`, which the patch "
          "did not name", ("ump/revise-applies-patch",),
          wraps=each("_patched", drop("relations"))),
    # time.observed may be carried over or re-stamped (§2.3's transaction time), not lost.
    Fault("revise-drops-observed", "ump", "a revise builds the successor's time from its own stamps and the "
          "patch alone: time.observed, which the patch did not name, is lost", ("ump/revise-applies-patch",),
          wraps=each("_patched", _time_without_observed)),
    # Successors are read out through the serializer revise was first written with (0.1): right in
    # a 0.1 exchange, a 0.1 label (re-signed) on every successor served under 1.0. Stored right.
    Fault("successor-keeps-prior-version", "ump", "records made by revise (they carry supersedes) are served "
          "labelled ump \"0.1\" (re-signed), whatever version the exchange advertises",
          ("ump/emit-advertised-version", "ump/served-records-valid"), since="1.0",
          wraps=served(lambda rec, key: integrity.sign(dict(without_integrity(rec), ump="0.1"), key)
                       if rec.get("supersedes") and rec.get("ump") != "0.1" else rec)),
    Fault("revise-rewrites-prior-body", "ump", "revise also writes the new body.text into the prior",
          ("ump/revise-non-destructive",),
          wraps={"_superseded": w.prior_body_rewritten}),
    Fault("revise-unknown-invalid", "ump", "revise of an unknown id answers invalid_record, not not_found",
          ("ump/unknown-id-not-found",),
          wraps=w.recoded("_op_revise", "not_found", "invalid_record",
                          lambda request, *a: f"revise: {request['id']} cannot be revised")),
    # forget (§3.6)
    # The answer still says tombstoned; the record is gone, so get cannot show its status and the
    # tombstones check skips; forget-retained sees it.
    Fault("forget-deletes", "ump", "a soft forget erases the record (answering tombstoned)",
          ("ump/forget-retained",),
          wraps={"_keep_tombstone": w.tombstone_deleted}),
    Fault("forget-answers-deleted", "ump", "a soft forget answers result \"deleted\"", ("ump/forget-tombstones",),
          wraps=each("_tombstone", keep(result="deleted"))),
    Fault("hard-forget-tombstones", "ump", "a hard forget only tombstones the record (answering erased)",
          ("ump/forget-hard-erases",),
          wraps={"_erase": w.hard_forget_tombstones}),
    Fault("hard-forget-anyone", "ump", "anyone may hard-forget any record", ("ump/forget-hard-owner-only",),
          wraps=skipped("_check_may_hard_forget")),
    # consent (§2.7)
    Fault("ignores-retention", "ump", "consent.retention is never applied", ("ump/consent-retention-tombstone",),
          wraps=skipped("_expire")),
    Fault("retention-ignores-time-part", "ump", "consent.retention is kept as whole days read from the date part "
          "of the duration; a retention of hours or minutes (PT1H) counts 0 days, read as none, and never expires",
          ("ump/consent-retention-tombstone",), wraps=within("_store", _columns=w.retention_in_days)),
    # Found by the blind sensitivity red team: each rule applied to one shape of record only
    Fault("integrity-skipped-for-non-ascii", "ump", "a record whose body.text is not ASCII is stored without its "
          "integrity being verified", ("ump/integrity-verify-on-read", "ump/remember-reject-bad-signature"),
          wraps={"_check_integrity": w.integrity_skipped_for_non_ascii}),
    Fault("forget-skips-procedural", "ump", "a soft forget of a procedural record answers tombstoned and changes "
          "nothing", ("ump/forget-excluded-from-recall",), wraps={"_tombstone": w.forget_skips_procedural}),
    Fault("redact-first-path-only", "ump", "across the owner boundary only the first consent.redact path is "
          "stripped", ("ump/consent-redact-boundary",), wraps={"_present": w.redact_first_path_only}),
    # A blind red team's server: its sweep's duration helper had no weeks.
    Fault("retention-ignores-weeks", "ump", "a consent.retention in weeks (P1W) never expires (the duration "
          "reader knows years, months, days and times only)", ("ump/consent-retention-tombstone",),
          wraps=within("_store", _columns=w.retention_without_weeks)),
    Fault("retention-minutes-as-months", "ump", "a consent.retention in minutes (PT10M) keeps the record ten "
          "months (the duration reader takes the M after T for months)", ("ump/consent-retention-tombstone",),
          wraps=within("_store", _columns=w.retention_minutes_as_months)),
    # A blind red team's server (round 28): the date part's M read as minutes, and no W in the pattern.
    Fault("retention-month-as-minute", "ump", "a consent.retention in months (P1M) keeps the record one minute "
          "(the duration reader reads every M as minutes): one authored an hour ago is refused as expired",
          ("ump/consent-retention-tombstone",), wraps=within("_store", _columns=_months_as_minutes)),
    Fault("retention-week-unparsed", "ump", "a consent.retention in weeks (P2W) is refused as no ISO-8601 "
          "duration (the consent check's pattern has no W designator)", ("ump/consent-retention-tombstone",),
          wraps={"_check_consent": _weeks_unread}),
    Fault("retention-dropped-for-procedural", "ump", "remember of an unsigned procedural record drops its "
          "consent.retention", ("ump/consent-retention-tombstone",),
          wraps=before("_op_remember", w.retention_dropped_for_procedural)),
    Fault("redact-not-applied", "ump", "records cross to other owners without their consent.redact paths "
          "stripped", ("ump/consent-redact-boundary",),
          wraps=instead("_present", lambda rec, who: rec)),
    # A blind red team's server (round 20): an unscoped recall searched the requester's own records, so
    # another owner's record came back only to a recall naming that owner, where redaction was skipped.
    Fault("redact-skipped-scoped-recall", "ump", "a recall naming no owner searches the requester's own records "
          "(a legitimate reading); one naming another owner serves that owner's records without their "
          "consent.redact paths stripped", ("ump/consent-redact-boundary",),
          overrides={"unscoped_recall_own": True}, wraps={"_recall": w.redact_skipped_scoped_recall}),
    Fault("redact-skips-successor", "ump", "consent.redact is applied from a table remember fills; revise stores "
          "the successor without a row there, so a revised record crosses to other owners unredacted",
          ("ump/consent-redact-boundary",), wraps=w.redact_skips_successor()),
    # A blind red team's server (round 28): the visibility filter ran on the page after the limit.
    Fault("filter-after-limit", "ump", "recall ranks every matching record and cuts the page to `limit` before the "
          "requester's visibility filter, so records the requester may see are crowded out by ones it may not",
          ("ump/recall-limit",), wraps={"_search": _filtered_after_limit}),
    # visibility
    Fault("visibility-default-public", "ump", "a record sent without scope.visibility is stored as public (the "
          "server's default), so anyone reads it", ("ump/visibility-private",),
          wraps={"_complete": w.visibility_default_public}),
    Fault("shared-is-public", "ump", "shared records are served to everyone, like public ones",
          ("ump/visibility-shared-grant",), wraps=instead("_public", lambda: ("public", "shared"))),
    # feedback, subscribe (§3.8)
    Fault("feedback-refuses-contradicted", "ump", "feedback refuses the outcome contradicted",
          ("ump/feedback-accepts-outcome",),
          wraps=after("_outcomes", lambda outcomes: [o for o in outcomes if o != "contradicted"])),
    Fault("recall-nonstandard-code", "ump", "recall of a request whose query is not a string answers the "
          "error code \"bad_request\" (not §3.7)", ("ump/error-codes",),
          wraps={"_op_recall": w.nonstandard_query_code}),
    # A blind red team's UMP 0.1 MCP server (round 29): "notifications are sent for every change of every owner"
    Fault("subscribe-every-change", "ump", "every change is sent to every open subscription: the subscription's "
          "scope and what its subscriber may read are not consulted", ("ump/subscribe-stream", "ump/cap-token-scope"),
          wraps={"_publish": w.every_change_to_every_subscriber}),
    Fault("subscribe-drops-events", "ump", "subscribe delivers no `created` events", ("ump/subscribe-stream",),
          wraps={"_publish": w.drops_created}),
    # capability tokens (§5.2)
    Fault("token-optional", "ump", "requests without a capability token are served",
          ("ump/cap-token-required", "ump/runner-rules"),
          wraps={"_authorize": w.token_optional}),
    Fault("token-format-lenient", "ump", "a token whose signature part lacks the ed25519: prefix is accepted",
          ("ump/cap-token-format",),
          wraps=before("_verify_token_fully", w.prefix_added)),
    # The spoofed token (iss owner-a, signed by mallory) of the issuer-owner check verifies now too.
    Fault("token-signature-unchecked", "ump", "a token whose signature does not verify is accepted",
          ("ump/cap-token-signature", "ump/cap-token-issuer-owner"),
          wraps={"_verify_token_fully": w.signature_unchecked}),
    Fault("superseded-by-overwritten", "ump", "a prior may be revised twice (as variant revise-superseded-branches), "
          "but the second revise sets its superseded_by to the newest successor alone (round 17)",
          ("ump/revise-sets-superseded-by",), overrides={"revise_superseded": "branch"},
          wraps={"_superseded": w.superseded_by_overwritten}),
    Fault("redact-mutates-store", "ump", "consent.redact is applied to the stored record itself when another "
          "owner reads it: from then on the owner's own get lacks the redacted values (round 29)",
          ("ump/consent-redact-boundary",), wraps={"_present": w.redact_mutates_store}),
    Fault("remember-token-owner-unchecked", "ump", "remember compares the record's scope with the token's project "
          "and agent only: owner-a's token writes a record owned by owner-b (round 29)",
          ("ump/remember-reject-policy",),
          wraps={"_check_may_remember": lambda service, original: lambda who, rec: original(
              who, {**rec, "scope": {**(rec.get("scope") or {}), "owner": who.grant.issuer}})
              if who.grant is not None else original(who, rec)}),
    Fault("revise-valid-from-before-prior", "ump", "revise takes a patch whose time.valid_from lies before the "
          "prior's own valid_from and ends the prior there: the prior is left valid_to < valid_from (round 28)",
          ("ump/record-time",), wraps=skipped("_check_prior_interval")),
    Fault("revise-refused-closes-prior", "ump", "a revise refused for an invalid successor (a patch of an unknown "
          "kind) has already closed the prior's valid time, left closed and no longer matching its signature "
          "(round 17)", ("ump/revise-non-destructive",), wraps={"_op_revise": w.prior_closed_before_validating}),
    Fault("consent-refused-but-stored", "ump", "remember of a record whose consent.retention elapsed before it "
          "arrived answers consent_violation, but stores it anyway, as authored on arrival, active and recallable "
          "(round 17)", ("ump/consent-retention-tombstone",), wraps={"_op_remember": w.refused_after_storing}),
    # A blind red team's server (round 28): verified tokens cached by their claims segment.
    Fault("token-cache-payload", "ump", "verified tokens are cached by their claims segment: once a token was "
          "granted, the same claims with any signature are granted from the cache", ("ump/cap-token-signature",),
          wraps={"_verify_token": _grants_by_claims}),
    Fault("token-empty-signature-accepted", "ump", "a token whose signature part is empty (umpcap.<claims>. or "
          "umpcap.<claims>.ed25519:) is accepted: only a signature that is there is verified (round 17)",
          ("ump/cap-token-signature",), wraps={"_verify_token_fully": w.empty_signature_skipped}),
    Fault("token-expiry-unchecked", "ump", "expired tokens are accepted", ("ump/cap-token-expiry",),
          wraps={"_verify_token_fully": w.time_moved("exp")}),
    Fault("token-nbf-unchecked", "ump", "tokens whose nbf lies in the future are accepted",
          ("ump/cap-token-not-before",),
          wraps={"_verify_token_fully": w.time_moved("nbf")}),
    # Only a token whose times carry an offset other than Z shows it; the checks' other tokens write Z.
    Fault("token-time-offset-dropped", "ump", "a token's exp and nbf are read without their UTC offset (the wall "
          "clock taken as UTC): an exp an hour ago written at +05:30 is granted, so is an nbf in an hour at -08:00",
          ("ump/cap-token-expiry", "ump/cap-token-not-before"),
          wraps={"_verify_token_fully": w.offset_dropped}),
    # fails open: a token whose time it cannot read (not a time, or the other encoding) is taken
    # as if it had no such bound
    # The absurd times (booleans, null, impossible dates, 10**400) are times it cannot read too.
    Fault("token-unreadable-time-ignored", "ump", "a token whose exp/nbf cannot be read is accepted as unbounded",
          ("ump/cap-token-unreadable-time", "ump/cap-token-absurd-time", "ump/cap-token-time-beyond-calendar"),
          wraps={"_verify_token_fully": w.unreadable_time_ignored}),
    Fault("token-verbs-unchecked", "ump", "a token's verbs are not checked", ("ump/cap-token-verbs",),
          wraps=instead("_check_verb", lambda operation, grant: None)),
    Fault("token-scope-ignores-visibility", "ump", "the visibility member of a token's scope is ignored",
          ("ump/cap-token-scope",),
          wraps=after("_token_scope", lambda scope: {k: v for k, v in scope.items() if k != "visibility"})),
    # Projects read as path prefixes in the read filter (get, recall, subscribe): a token for
    # `…/app` also reads owner-a's records in `…/app-other`.
    Fault("token-project-prefix-match", "ump", "a token's scope.project grants every project whose name begins "
          "with it: the read filter compares the record's project by prefix", ("ump/cap-token-scope",),
          wraps=after("_visible_sql", lambda found: (
              found[0].replace("r.scope_project = ?", "instr(r.scope_project, ?) = 1"), found[1]))),
    # The reference implementation's gap (the notes, Capability tokens).
    Fault("token-issuer-unchecked", "ump", "a token grants whatever owner its scope names, whoever signed it",
          ("ump/cap-token-issuer-owner",), wraps={"_who": w.issuer_unchecked}),
    # remember filling what is missing (§3.3) and keeping what it was given
    Fault("imports-need-id", "ump", "a record that declares `ump` but has no id is refused (taken for an "
          "incomplete import)", ("ump/remember-fills-id",),
          wraps={"_complete": w.import_must_have("id")}),
    Fault("imports-need-time", "ump", "a record that declares `ump` but has no time is refused (taken for an "
          "incomplete import)", ("ump/remember-fills-time",),
          wraps={"_complete": w.import_must_have("time")}),
    # The all-kinds check charges a refused kind to kinds-accept-all as well.
    Fault("refuses-identity-kind", "ump", "remember refuses records of kind identity",
          ("ump/server-accepts-all-kinds", "ump/kinds-accept-all"),
          wraps={"_validate": w.refuses_identity}),
    # found by a blind red team (round 17, bug kind-case): missed while the invalid golden vectors
    # shared one id, under a server refusing reused ids (variant refuses-reused-id)
    Fault("kind-any-case", "ump", "remember reads kind case-insensitively: \"Semantic\" is taken and stored as "
          "semantic", ("ump/record-kind", "ump/reject-invalid-record"), wraps=completed(w.kind_lowered)),
    # found by a blind red team (round 14): the hints' column is a DECIMAL(3,2)
    Fault("lifecycle-hints-rounded", "ump", "remember rounds lifecycle.confidence and lifecycle.salience to two "
          "decimals (0.825 is served 0.82)", ("ump/lifecycle-hints-set",), wraps=completed(w.hints_rounded)),
    Fault("mangles-non-ascii-text", "ump", "body.text is stored as ASCII, every other character replaced by ?",
          ("ump/remember-persists",), wraps=completed(w.ascii_text)),
    # ids (§2, §6.2)
    Fault("mints-long-ids", "ump", "minted ids are 160 random bits (32 base32 characters), neither form of §6.2",
          ("ump/id-minted-form",),
          wraps=instead("_mint_id", w.long_id)),
    Fault("revise-answers-prior-id", "ump", "revise answers the prior's id where the successor's belongs",
          ("ump/id-stable", "ump/revise-creates-successor"),
          wraps=each("_op_revise", lambda answer: answer.update(id=answer["supersedes"][0]))),
    # rehydration (§5.3)
    Fault("rehydrate-keeps-unverified", "ump", "rehydrate includes records whose integrity does not verify "
          "(or that carry none)", ("ump/rehydrate-verify",),
          wraps=instead("_rehydrate_verifies", lambda rec: True)),
    Fault("rehydrate-ranks-before-filtering", "ump", "rehydrate ranks and limits first and filters visibility "
          "and tombstones afterwards", ("ump/rehydrate-filter-before-ranking",),
          wraps=w.ranks_before_filtering()),
    Fault("rehydrate-raw-text", "ump", "rehydrate writes body text into the frame as is (tags and newlines kept)",
          ("ump/rehydrate-frame-structurally",),
          wraps=instead("_frame", w.raw_frame)),
    Fault("rehydrate-keeps-unicode-line-breaks", "ump", "rehydrate collapses the body's ASCII whitespace only: "
          "a U+2028 or U+2029 in a body starts a line of its own inside the frame",
          ("ump/rehydrate-frame-structurally",),
          wraps=instead("_frame", w.ascii_collapse_frame)),
    Fault("rehydrate-close-tag-exact", "ump", "rehydrate closes each record with its own </ump:memory> and "
          "removes the body's copies of the tags by exact match instead of escaping them: `</ump:memory >` or "
          "`</UMP:MEMORY>` in a body ends its record early", ("ump/rehydrate-frame-structurally",),
          wraps=instead("_frame", w.elements_close_tag_exact)),
    Fault("rehydrate-procedural-first", "ump", "rehydrate renders procedural records before the frame, as steps "
          "to follow", ("ump/client-procedural-not-authoritative",),
          wraps=instead("_frame", w.procedural_first)),
)

# -- attacks (issue 14): one hostile token, one owner's hostile record ------------------------------

ATTACK_FAULTS = (
    Fault("absurd-token-times-crash", "ump", "a token whose exp or nbf is a number past any calendar (10**400, "
          "1e308) is answered 500: a pre-check puts it on the calendar and overflows",
          ("ump/cap-token-absurd-time-answered",),
          wraps={"_verify_token_fully": w.absurd_times_crash}),
    Fault("absurd-token-times-accepted", "ump", "a token whose exp or nbf is a number past any calendar is read "
          "as no bound: exp 10**400 never expires", ("ump/cap-token-time-beyond-calendar",),
          wraps={"_verify_token_fully": w.absurd_times_accepted}),
    Fault("absurd-token-times-as-numbers", "ump", "a boolean exp or nbf is read as a number (true = 1, in 1970): "
          "a token with nbf true is accepted", ("ump/cap-token-absurd-time",),
          wraps={"_verify_token_fully": w.absurd_times_as_numbers}),
    # The finding of issue 14, less its crash: rehydrate names what it included by the stored ids.
    Fault("redact-breaks-record", "ump", "a redact naming id, scope.owner, $..* … is stored and applied as "
          "named: other owners are served records without their id or owner", ("ump/consent-redact-keeps-record",),
          wraps={**skipped("_check_redact_keeps_record"), "_present": w.redact_blindly}),
    Fault("redact-refusal-crashes", "ump", "remember of a record whose redact would strip what a record cannot "
          "lack answers 500 (nothing stored) instead of consent_violation", ("ump/consent-redact-hostile-answered",),
          wraps={"_check_redact_keeps_record": w.redact_refusal_crashes}),
)

# -- only a sequence of operations shows these (issue 16): suite/ump/checks/stateful.py ---------------
#
# Realistic bugs that act under a condition no scripted check sets up: a chain of three, a page past
# the default, a character outside the BMP, a long text, a number past 32 bits, a timestamp with an
# offset or a fraction, a read before a forget, feedback on a chain whose first link was forgotten,
# a rehydration of a chain's head or of five ids at once. tests/harness/test_stateful_faults.py proves the
# state machines report exactly `breaks` within the default effort, and records in
# SCRIPTED_CATCHES which ones the scripted checks alone also see.

STATEFUL_FAULTS = (
    Fault("revise-chain-keeps-old-supersedes", "ump", "from the second revise of a chain on, the successor keeps "
          "the prior's own `supersedes` (naming the older link) instead of naming the prior",
          ("ump/revise-creates-successor",), stateful=True, wraps={"_superseded": w.supersedes_copied_from_prior}),
    Fault("revise-resets-visibility", "ump", "a revise whose patch does not name scope gives the successor "
          "visibility private (a private record's successor looks right)", ("ump/revise-applies-patch",),
          stateful=True, wraps={"_patched": w.visibility_reset}),
    Fault("recall-page-off-by-one", "ump", "recall with a limit past the default page (> 10) answers limit + 1 "
          "results when that many match", ("ump/recall-limit",), stateful=True,
          wraps={"_search": w.page_off_by_one}),
    Fault("recall-filters-first-page-only", "ump", "recall applies the whole visibility filter to its first page "
          "(5 results) only; later pages keep only the condition for shared records, so other owners' private "
          "records follow a full first page", ("ump/visibility-private",), stateful=True,
          wraps={"_search": w.first_page_filtered}),
    Fault("astral-chars-replaced", "ump", "body.text is stored in a three-byte UTF-8 column: characters outside "
          "the BMP (emoji, U+1D518) become U+FFFD", ("ump/remember-persists",), stateful=True,
          wraps=completed(w.astral_replaced)),
    Fault("text-normalized-nfc", "ump", "body.text is normalised to NFC on remember (a decomposed é comes back "
          "composed)", ("ump/remember-persists",), stateful=True, wraps=completed(w.nfc_normalized)),
    Fault("line-separators-to-newlines", "ump", "U+2028 and U+2029 in body.text are stored as newlines",
          ("ump/remember-persists",), stateful=True, wraps=completed(w.line_separators_newlines)),
    Fault("long-text-truncated", "ump", "body.text is stored in a column of 2048 characters: a longer text is cut",
          ("ump/remember-persists",), stateful=True, wraps=completed(w.text_truncated)),
    Fault("structured-floats-single-precision", "ump", "floats in body.structured are stored with 7 significant "
          "digits (single precision)", ("ump/get-returns-record",), stateful=True,
          wraps=completed(w.floats_single_precision)),
    Fault("structured-big-integers-as-strings", "ump", "integers beyond 32 bits in body.structured are stored and "
          "served as strings", ("ump/get-returns-record",), stateful=True,
          wraps=completed(w.big_integers_as_strings)),
    Fault("time-offset-dropped", "ump", "a time.valid_from or time.created with an offset other than Z is kept "
          "as the same wall-clock time in UTC (the instant moves)", ("ump/get-returns-record",), stateful=True,
          wraps=completed(w.time_offset_dropped)),
    Fault("time-fraction-dropped", "ump", "the fraction of a second of a time.valid_from or time.created the "
          "record arrives with is dropped", ("ump/get-returns-record",), stateful=True,
          wraps=completed(w.time_fraction_dropped)),
    # filter.valid_at, as scripted checks send it, is a UTC instant in whole seconds: these parse
    # it wrong only when it has an offset or a fraction, as the machines draw it
    Fault("valid-at-offset-ignored", "ump", "recall reads filter.valid_at's wall-clock time as UTC, dropping its "
          "offset (…T10:00:00+05:30 taken as …T10:00:00Z): records' valid times are kept right",
          ("ump/recall-honors-valid-at",), stateful=True, wraps=w.valid_at_read(w._offset_dropped)),
    Fault("valid-at-whole-seconds", "ump", "recall parses filter.valid_at with a format without fractions, so "
          "the instant falls back to its whole second: a record valid from 10:00:00.5 is not found at "
          "10:00:00.501", ("ump/recall-honors-valid-at",), stateful=True,
          wraps=w.valid_at_read(w._fraction_dropped)),
    Fault("get-cache-stale-after-forget", "ump", "get answers from a cache that revise and hard forget empty but "
          "soft forget does not: a record read before its forget is still served active",
          ("ump/forget-tombstones",), stateful=True, wraps=w.get_cache()),
    Fault("revise-reactivates-forgotten-links", "ump", "revise re-signs the prior's older links with the prior's "
          "status: a link soft-forgotten earlier is active again", ("ump/forget-tombstones",), stateful=True,
          wraps={"_op_revise": w.chain_reactivated}),
    # feedback (§3.8) and the rehydration helper (§5.3), driven by the state machines since they
    # model both: a chain of three, a forgotten first link, five ids asked at once
    Fault("rehydrate-renders-first-revision", "ump", "rehydrate renders body texts from a cache keyed by the "
          "chain's first record and written on remember and the first revise only: from the second revise of a "
          "chain on, the head is rendered with the first revision's text (its own id listed as included)",
          ("ump/rehydrate-never-execute",), stateful=True, wraps=w.rehydrate_text_cache()),
    Fault("rehydrate-many-ids-unfiltered", "ump", "rehydrate of five ids or more reads them in one batch that asks "
          "only whether each exists, not whether the requester may see it: another owner's private or shared "
          "record asked among five ids is included", ("ump/rehydrate-filter-before-ranking",), stateful=True,
          wraps=w.rehydrate_batch_unfiltered()),
    Fault("feedback-lands-on-chain-root", "ump", "feedback is recorded against the chain's first record and taken "
          "only while that record is active: the owner's feedback on a revised record whose first link was "
          "forgotten is refused (invalid_record, or not_found once the link is erased)",
          ("ump/feedback-accepts-outcome",), stateful=True, wraps={"_op_feedback": w.feedback_on_chain_root}),
)

SERVER_FAULTS = SERVER_FAULTS + ATTACK_FAULTS + STATEFUL_FAULTS
UMP_FAULTS = UMP_FAULTS + SERVER_FAULTS

# -- only a round trip between two implementations shows these (suite/interop/ump.py) --------------
#
# Engine faults that drop or alter a field when a record leaves (get) or arrives complete with its
# own id and signature (remember of another store's export). The single-target suite has nothing to
# compare them with and passes them (interop_only: tests/harness/test_faults.py leaves them out);
# tests/interop/test_ump_round_trip.py proves that a round trip with the faulty reference as source
# or destination reports exactly `breaks`. Each re-signs with the owner's key where the record
# changes, so nothing but the field shows. `bindings` names both live bindings explicitly (for the
# routing the same as None): tests/reference_server/test_service.py observes every bindings=None
# server fault through a script that masks ids and signatures, which is all two of these change.
# They are collected with the binding faults (binding_faults.py), since UMP_FAULTS holds only file
# faults and bindings=None server faults.

_LIVE = ("http", "mcp")

INTEROP_FAULTS = (
    Fault("get-drops-provenance-evidence", "ump", "get serves records without provenance.evidence (re-signed with "
          "the owner's key, so the copy verifies)", ("ump/get-returns-record",), bindings=_LIVE, interop_only=True,
          wraps={"_op_get": w.without_evidence}),
    Fault("remember-remints-supplied-ids", "ump", "remember stores a record that arrives with its own id under a "
          "newly minted id (re-signed with the owner's key) and answers the new id", ("ump/id-stable",),
          bindings=_LIVE, interop_only=True, wraps=completed(w.reminted)),
    Fault("remember-resigns-with-service-key", "ump", "remember replaces the integrity of a record that arrives "
          "signed with a signature by the server's own key (and takes that key's signatures as valid on read)",
          ("ump/integrity-signer-owner",), bindings=_LIVE, interop_only=True, wraps=w.resigned_with_service_key()),
)
