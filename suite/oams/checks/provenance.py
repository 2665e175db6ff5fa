"""Provenance (§5), versions and enums (§6, §8), and consolidation (§5, §6) on live bindings."""

from __future__ import annotations

from typing import Any

from memconform.suite.oams import model
from memconform.suite.oams.checks._common import (LIVE, find, key, listed, namespace, precondition, recalled, say,
                                                  served, unjudged)
from memconform.suite.oams.checks.recall import seed
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

# a URL as a person writes it, capitals and no path: "treat as opaque" (found by the blind red team: a
# server normalizing URLs wrote https://example.com/)
SOURCES = ("https://example.com/article?a=1&b=%20#frag", "HTTPS://Example.COM", "sha256:" + "0f" * 32,
           "imap:msgid:<a.b@example.org>", "slack:CH123:1700000000.123456", "transcript:call-42:317.5")
UNRESOLVABLE = ("x-unknown:opaque/ü/🙂 1", "urn:nowhere:" + "z" * 200)
# a URL a normalizer rewrites (RFC 3986 §6: case of scheme and host, an unreserved character
# percent-encoded, a trailing slash): imported, it stays as written (found by the blind red team: a
# server canonicalizing URLs on write was blamed on the export rule only)
UNNORMALIZED_URL = "HTTPS://Archive.Example.ORG/Item%7eA/"


@check("oams/source-id-kept", spec="oams", bindings=LIVE, requirements=("oams/export-keeps-source-id",),
       title="LIST and RECALL answer each memory's source_id unchanged")
def source_id_kept(ctx: Any) -> None:
    ns = namespace(ctx, tag="prov")
    memories = [model.new_memory(ns, key("src"), f"okapi provenance {i}", source_id=s) for i, s in enumerate(SOURCES)]
    memories.append(model.new_memory(ns, key("src"), "okapi synthesized", source_id=None))
    for m in memories:
        precondition(ctx.client.store(m), "STORE with a source_id")
    items = listed(ctx, ns)
    rec = ctx.client.recall({"namespace": ns, "query": "okapi", "k": len(memories)})
    precondition(rec, "RECALL")
    compared = 0
    for where, got in (("LIST", items), ("RECALL", recalled(rec) or [])):
        for m in memories:
            back = find(got, m["key"])
            compared += back is not None
            if back is not None and back.get("source_id", "<missing>") != m["source_id"]:
                say(ctx, "oams/export-keeps-source-id", f"{where} answers {m['key']!r} with source_id "
                                                        f"{back.get('source_id', '<missing>')!r}; it was stored with "
                                                        f"{m['source_id']!r}", sent=m, received=back)
    if not compared:
        # absence is no evidence: a store that keeps nothing has no source_id to keep
        raise NotApplicable(f"none of the {len(memories)} stored memories came back from LIST or RECALL of {ns!r}: "
                            "no source_id to compare (judged by oams/store-returns-stored)")


@check("oams/import-source-id", spec="oams", bindings=LIVE, requirements=("oams/import-preserves-source-id",),
       title="Memories imported with BATCH_STORE keep their source_ids as-is: unresolvable ones, and a URL a "
             "normalizer would rewrite")
def import_source_id(ctx: Any) -> None:
    ns = namespace(ctx, tag="import")
    memories = [model.new_memory(ns, key("imp"), f"imported {i}", source_id=s, created_at="2026-04-27T12:00:00Z",
                                 updated_at="2026-04-27T12:00:00Z")
                for i, s in enumerate((*UNRESOLVABLE, UNNORMALIZED_URL))]
    reply = ctx.client.batch_store(memories)
    precondition(reply, "BATCH_STORE of an export's memories")
    items = listed(ctx, ns)
    for m in memories:
        back = find(items, m["key"])
        if back is None or back.get("source_id", "<missing>") != m["source_id"]:
            read = (f"source_id {back.get('source_id', '<missing>')!r}" if back is not None
                    else "no memory with that key")
            say(ctx, "oams/import-preserves-source-id",
                f"{m['key']!r} was imported into {ns!r} by BATCH_STORE ({reply.request}) with source_id "
                f"{m['source_id']!r}; LIST of {ns!r} reads {read}: an import preserves source_id as-is", sent=m,
                received=back, where=reply.request)


@check("oams/accept-minor", spec="oams", bindings=LIVE, requirements=("oams/accept-compatible-minor",),
       title="A memory with an optional member of a later minor version is accepted")
def accept_minor(ctx: Any) -> None:
    ns = namespace(ctx, tag="minor")
    memory = model.new_memory(ns, key("minor"), "from a 0.2 producer", x_oams_0_2_importance=0.4,
                              metadata={"future_reserved_key": "kept?"})
    reply = served(ctx.client.store(memory))
    if not reply.ok:
        say(ctx, "oams/accept-compatible-minor", "a memory with a member 0.1 does not name was refused", reply)


@check("oams/unknown-enum", spec="oams", bindings=LIVE, requirements=("oams/unknown-enum-accepted",),
       title="A memory with an unknown dream_strategy is accepted")
def unknown_enum(ctx: Any) -> None:
    ns = namespace(ctx, tag="enum")
    base = model.new_memory(ns, key("base"), "input")
    precondition(ctx.client.store(base), "STORE")
    memory = model.new_memory(ns, key("enum"), "a newer strategy's output", parent_id=base["key"],
                              metadata={"dream_strategy": "daydream", "dream_inputs": [[ns, base["key"]]],
                                        "dream_run_id": "6f1c2a8e-2f4b-4e59-9a51-0c7b1f2d3e4a"})
    reply = ctx.client.store(memory)
    if not reply.ok:
        say(ctx, "oams/unknown-enum-accepted", "a memory whose dream_strategy is not (yet) in the enum was refused",
            reply)


@check("oams/vendor-strategy", spec="oams", bindings=LIVE, requirements=("oams/vendor-strategy-passthrough",),
       title="dream_strategy \"vendor:<name>\" is stored and read back unchanged")
def vendor_strategy(ctx: Any) -> None:
    ns = namespace(ctx, tag="vendor")
    base = model.new_memory(ns, key("base"), "input")
    meta = {"dream_strategy": "vendor:acme-merge", "dream_inputs": [[ns, base["key"]]],
            "dream_run_id": "0d9b8f8e-1b7a-4c1e-8f3e-5a2b9c7d6e10", "acme_weight": 3}
    memory = model.new_memory(ns, key("vendor"), "acme's merge", parent_id=base["key"], metadata=meta)
    precondition(ctx.client.store(base), "STORE")
    reply = ctx.client.store(memory)
    if not reply.ok:
        say(ctx, "oams/vendor-strategy-passthrough", "a memory labelled vendor:acme-merge was refused", reply)
        return
    back = find(listed(ctx, ns), memory["key"])
    got = (back or {}).get("metadata")
    if not isinstance(got, dict) or {k: got.get(k) for k in meta} != meta:
        say(ctx, "oams/vendor-strategy-passthrough", f"metadata {meta} came back {got!r}", sent=memory, received=back)


CONSOLIDATION_RULES = ("oams/consolidated-parent-id", "oams/consolidated-source-id", "oams/dream-strategy",
                       "oams/dream-inputs", "oams/dream-run-id")
FORGOTTEN_RULE = "oams/forget-gone-from-consolidation"


def judge_consolidated(ctx: Any, made: list[Any], inputs: dict[tuple[str, str], dict[str, Any]] | None,
                       where: str, reply: Any = None) -> None:
    for m in made:
        if not isinstance(m, dict):
            continue
        # parent_id and the dream_* metadata are judged on every consolidated memory; source_id only
        # against known inputs, once dream_run_id is a UUID (model.consolidation_problems)
        ctx.observed("oams/consolidated-parent-id", "oams/dream-strategy", "oams/dream-inputs", "oams/dream-run-id")
        meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
        if inputs is not None and isinstance(meta.get("dream_inputs"), list) and model._is_uuid(meta.get("dream_run_id")):
            ctx.observed("oams/consolidated-source-id")
        at = f"{where} {m.get('namespace')!r}/{m.get('key')!r}"
        for p in model.consolidation_problems(m, inputs, at):
            say(ctx, p.requirement, f"{at}: {p.message}", reply, sent=None if reply is None else reply.sent,
                received=m, where=at)
        parent = m.get("parent_id")
        if inputs is not None and isinstance(parent, str) and parent:
            names = {k for (_ns, k) in inputs} | {f"{ns}/{k}" for (ns, k) in inputs} | {f"{ns}:{k}" for (ns, k) in inputs}
            if parent not in names:
                say(ctx, "oams/consolidated-parent-id", f"{at}: parent_id {parent!r} names none of the inputs "
                                                        f"{sorted(k for (_n, k) in inputs)}", reply, received=m, where=at)


@check("oams/consolidation", spec="oams", bindings=LIVE, requirements=(*CONSOLIDATION_RULES, FORGOTTEN_RULE),
       title="The consolidation hook's outputs carry parent_id, source_id and the dream_* metadata")
def consolidation(ctx: Any) -> None:
    """Needs a consolidation hook (an operation §3 allows a server to add: the reference's
    POST /v1/oams/consolidate / oams.consolidate). Without one, L3 cannot be shown: skipped."""
    ctx.credit_only_observed()  # judge_consolidated says what each output showed
    ns = namespace(ctx, tag="dream")
    inputs = [model.new_memory(ns, key("in"), f"dream input {i}", source_id=f"https://example.com/{i}",
                               metadata={"confidence": 0.3 + 0.2 * i}) for i in range(3)]
    seed(ctx, inputs)
    reply = ctx.client.consolidate(ns)
    if reply.not_served or not reply.ok:
        raise NotApplicable(f"the target offers no consolidation hook the suite can call ({reply.describe()}): "
                            "§6's fields cannot be observed on memories it makes, so L3 is not shown. OAMS names no "
                            "consolidation operation; the suite calls memconform's convention, POST "
                            "/v1/oams/consolidate {namespace, strategy?} over REST and oams.consolidate over "
                            "JSON-RPC, answering the memories made (docs/oams.md); an adapter route of that name "
                            "in front of your own hook lets L3 be judged")
    made, _how = reply.memories()
    if not made:
        made = [m for m in listed(ctx, ns) if model.is_consolidated(m)]
    if not made:
        raise NotApplicable(f"the consolidation pass made no memory from three inputs ({reply.describe()})")
    judge_consolidated(ctx, made, {(m["namespace"], m["key"]): m for m in inputs}, "consolidated", reply)
    _single_input(ctx)
    _forgotten_not_read(ctx)
    unjudged(ctx, "the consolidation's outputs", {
        "oams/consolidated-source-id": "output with a UUID dream_run_id and a dream_inputs array (its source_id is "
                                       "compared with those inputs')",
        FORGOTTEN_RULE: "consolidation after a FORGET that was taken"})


def _made(ctx: Any, ns: str, reply: Any) -> list[Any]:
    """The memories a consolidation of `ns` made: its answer, or the consolidated memories LIST shows."""
    made, _how = reply.memories()
    return made or [m for m in listed(ctx, ns) if model.is_consolidated(m)]


def _single_input(ctx: Any) -> None:
    """A consolidation of one memory sets parent_id to it too: §5's "MUST set parent_id to the input
    memory key" names no number of inputs (round 25: parent_id was set only where a strongest of several
    was picked). A hook that makes nothing of one memory is noted."""
    ns = namespace(ctx, tag="dream1")
    only = model.new_memory(ns, key("in"), "the one dream input", source_id="https://example.com/only")
    stored = ctx.client.store(only)
    if not stored.ok:
        ctx.note(f"STORE of ({ns!r}, {only['key']!r}) was refused ({stored.describe()[:200]}): a consolidation of one "
                 "memory was not tried")
        return
    reply, made = _consolidated(ctx, ns, "holding one memory", "a single input's parent_id was not judged")
    if not made:
        return
    judge_consolidated(ctx, made, {(ns, only["key"]): only}, "consolidated from one input", reply)


def _consolidated(ctx: Any, ns: str, which: str, unjudged: str) -> tuple[Any, list[Any]]:
    """A consolidation of `ns` and the memories it made; when it made none, a note saying what was
    therefore not judged."""
    reply = ctx.client.consolidate(ns)
    made = _made(ctx, ns, reply) if reply.ok else []
    if not made:
        ctx.note(f"the consolidation of {ns!r} {which} made nothing ({reply.describe()[:200]}): {unjudged}")
    return reply, made


def _forgotten_not_read(ctx: Any) -> None:
    """A memory FORGET deleted is no input of a later consolidation: neither its (namespace, key) in an
    output's dream_inputs or parent_id nor its value in the output, which LIST then shows (round 25: a
    consolidation read the soft-deleted rows)."""
    ns = namespace(ctx, tag="dream-forget")
    token = f"narwhal-{key('gone')}"
    kept = model.new_memory(ns, key("kept"), "a dream input that stays")
    gone = model.new_memory(ns, key("gone"), f"a dream input forgotten before the pass: {token}")
    seed(ctx, [kept, gone])
    forgot = ctx.client.forget(ns, gone["key"])
    if not (forgot.ok or forgot.status == 204):
        ctx.note(f"FORGET of ({ns!r}, {gone['key']!r}) was refused ({forgot.describe()[:200]}): a consolidation "
                 "after it was not tried (oams/forget judges FORGET)")
        return
    reply, made = _consolidated(ctx, ns, "after a FORGET", "whether it read the forgotten memory was not judged")
    if not made:
        return
    ctx.observed(FORGOTTEN_RULE)
    names = {gone["key"], f"{ns}/{gone['key']}", f"{ns}:{gone['key']}"}
    for m in made:
        if not isinstance(m, dict):
            continue
        meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
        pairs = meta.get("dream_inputs") if isinstance(meta.get("dream_inputs"), list) else []
        shows = ([f"metadata.dream_inputs {model.describe(pairs)} names it"] if (ns, gone["key"]) in
                 {model._pair(p) for p in pairs} else []) \
            + ([f"parent_id is {m.get('parent_id')!r}"] if isinstance(m.get("parent_id"), str)
               and m["parent_id"] in names else []) \
            + (["its value holds the forgotten value's text"] if isinstance(m.get("value"), str)
               and token in m["value"] else [])
        if shows:
            say(ctx, FORGOTTEN_RULE, f"({ns!r}, {gone['key']!r}) was forgotten (FORGET answered success), then a "
                                     f"consolidation of {ns!r} made {m.get('key')!r}, and " + "; ".join(shows)
                + ": the forgotten memory was read as an input, and LIST shows it again through the output",
                reply, received=m)
