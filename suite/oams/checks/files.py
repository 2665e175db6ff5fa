"""What a file shows alone (§2, §4, §5, §6, §7, §8): a JSONL store, a Markdown serialization, or an
export bundle (manifest, memories.jsonl order, checksum, counts, embeddings.bin)."""

from __future__ import annotations

from typing import Any

from memconform.suite.oams import model
from memconform.suite.oams.checks._common import FILE, MEMORY_ABOUT, cite, memory_rules_held, unjudged
from memconform.suite.oams.checks.provenance import CONSOLIDATION_RULES, judge_consolidated
from memconform.suite.outcomes import NotExercised
from memconform.suite.registry import check

SHOWN = 8
MEMORY_RULES = ("oams/jsonl-store", "oams/jsonl-lines", "oams/key-required", "oams/namespace-required",
                "oams/value-string", "oams/timestamps-utc", "oams/updated-not-before-created", "oams/tags-strings",
                "oams/metadata-object", "oams/embedding-model-required", "oams/embedding-floats",
                "oams/provenance-fields", "oams/ns-key-unique", "oams/scope-no-slash-colon")
BUNDLE_RULES = ("oams/bundle-layout", "oams/bundle-folder-name", "oams/jsonl-sorted", "oams/manifest-shape",
                "oams/manifest-count", "oams/manifest-namespaces", "oams/manifest-checksum", "oams/manifest-version",
                "oams/embeddings-bin-layout")
#: What each bundle rule is about, for saying what a bundle held none of.
BUNDLE_ABOUT = {
    "oams/manifest-shape": "manifest.json that parses", "oams/manifest-count": "integer memory_count in its manifest",
    "oams/manifest-namespaces": "namespaces array in its manifest",
    "oams/manifest-checksum": "checksum_sha256 string in its manifest",
    "oams/manifest-version": "oams_version string in its manifest",
    "oams/jsonl-sorted": "two lines with a valid created_at to be in order",
    "oams/embeddings-bin-layout": "embeddings.bin (optional)",
}


def report(ctx: Any, problems: Any, rules: tuple[str, ...], what: str) -> None:
    found: dict[str, list[str]] = {}
    for p in problems:
        if p.requirement in rules:
            found.setdefault(p.requirement, []).append(str(p))
    for rid, lines in found.items():
        more = f" … and {len(lines) - SHOWN} more" if len(lines) > SHOWN else ""
        ctx.violation(rid, f"{what} breaks {rid}: {'; '.join(lines[:SHOWN])}{more}. The spec: {cite(rid)}",
                      where=what)


def view(ctx: Any) -> Any:
    return ctx.client.read()


@check("oams/file-memories", spec="oams", bindings=FILE, requirements=MEMORY_RULES,
       title="Every line of the store is a valid memory; (namespace, key) unique; scopes without / or :")
def file_memories(ctx: Any) -> None:
    ctx.credit_only_observed()  # a rule about a member no memory of the file holds is not exercised by the file
    v = view(ctx)
    if v.kind == "markdown":
        # the optional human-readable form carries no metadata, so the memory rules are not its (round 18)
        raise NotExercised("a Markdown serialization: judged by oams/file-markdown")
    if not v.values and not v.problems:
        raise NotExercised(f"{v.path} holds no memory")
    report(ctx, v.problems, MEMORY_RULES, f"{v.path}")
    if v.values:  # the lines were read: their framing and each one's being a JSON object were judged
        ctx.observed("oams/jsonl-store", "oams/jsonl-lines")
    ctx.observed(*(memory_rules_held(v.values) & set(MEMORY_RULES)))
    pairs = [m for m in v.memories if isinstance(m.get("namespace"), str) and isinstance(m.get("key"), str)]
    if len(pairs) > 1:
        ctx.observed("oams/ns-key-unique")
    unjudged(ctx, str(v.path), {**MEMORY_ABOUT, "oams/jsonl-store": "line", "oams/jsonl-lines": "line"})


@check("oams/file-bundle", spec="oams", bindings=FILE, requirements=BUNDLE_RULES,
       title="The bundle: manifest.json + memories.jsonl sorted by created_at, counts, namespaces, checksum, version")
def file_bundle(ctx: Any) -> None:
    ctx.credit_only_observed()  # a rule about a part the bundle lacks (embeddings.bin, a manifest member) is not judged
    v = view(ctx)
    if v.kind != "bundle":
        # "a single JSONL file on disk is a valid OAMS store" (§1): a store alone has no manifest to judge
        raise NotExercised(f"{v.path} is a {v.kind} file, not an export bundle (a folder with manifest.json)")
    report(ctx, v.problems, BUNDLE_RULES, f"bundle {v.path}")
    b = v.bundle
    ctx.observed("oams/bundle-layout", "oams/bundle-folder-name")
    manifest = b.manifest
    if manifest is not None:
        ctx.observed("oams/manifest-shape")
    if isinstance(manifest, dict):
        count = manifest.get("memory_count")
        if isinstance(count, int) and not isinstance(count, bool):
            ctx.observed("oams/manifest-count")
        if isinstance(manifest.get("namespaces"), list):
            ctx.observed("oams/manifest-namespaces")
        if isinstance(manifest.get("checksum_sha256"), str):
            ctx.observed("oams/manifest-checksum")
        if isinstance(manifest.get("oams_version"), str):
            ctx.observed("oams/manifest-version")
    if sum(model.parse_time(m.get("created_at")) is not None for m in b.memories) > 1:
        ctx.observed("oams/jsonl-sorted")
    if (b.path / "embeddings.bin").is_file():
        if any(isinstance(m.get("embedding"), list) and m["embedding"] for m in b.memories):
            ctx.observed("oams/embeddings-bin-layout")
        else:
            ctx.note("embeddings.bin is there, but no line carries an embedding to look for in it: its vectors were "
                     "not judged (§7 fixes no layout a file could be read by alone)")
    unjudged(ctx, f"bundle {b.path}", BUNDLE_ABOUT)


@check("oams/file-provenance", spec="oams", bindings=FILE, requirements=("oams/source-id-present", "oams/ns-convention"),
       title="Exported memories carry source_id; namespaces follow <owner-hash>:<scope>")
def file_provenance(ctx: Any) -> None:
    ctx.credit_only_observed()  # the namespace convention only where a memory has a namespace
    v = view(ctx)
    memories = v.memories
    if not memories:
        raise NotExercised(f"{v.path} holds no memory")
    without = [f"{m.get('namespace')}/{m.get('key')}" for m in memories if "source_id" not in m]
    if v.kind == "markdown" and without:
        # §7's Markdown form has no way to write a null source_id (§5's "Synthesized (no single source):
        # null"), so a section without a **source:** line may be one (a blind red team's was)
        ctx.note(f"{len(without)} Markdown section(s) carry no **source:** line, which is how that form writes a null "
                 "source_id too: not warned")
        without = []
    else:
        ctx.observed("oams/source-id-present")  # every memory is looked at for source_id
    if without:
        ctx.violation("oams/source-id-present", f"{len(without)} of {len(memories)} memories carry no source_id: "
                                                f"{', '.join(map(str, without[:SHOWN]))}. The spec: "
                                                f"{cite('oams/source-id-present')}", where=str(v.path))
    spaces = sorted({m.get("namespace") for m in memories if isinstance(m.get("namespace"), str)})
    if spaces:
        ctx.observed("oams/ns-convention")
    else:
        ctx.note(f"{v.path} holds no memory with a namespace string (oams/ns-convention)")
    off = [p.message for ns in spaces for p in model.convention_problems(ns)]
    if off:
        ctx.violation("oams/ns-convention", f"{'; '.join(off[:SHOWN])}. The spec: {cite('oams/ns-convention')}",
                      where=str(v.path))


@check("oams/file-consolidated", spec="oams", bindings=FILE, requirements=CONSOLIDATION_RULES,
       title="Consolidated memories in the file carry parent_id, source_id and the dream_* metadata")
def file_consolidated(ctx: Any) -> None:
    ctx.credit_only_observed()  # source_id is judged only where the file holds a consolidated memory's inputs
    v = view(ctx)
    labelled = [m for m in v.memories if model.is_consolidated(m)]
    made = [m for m in labelled if model.made_by_a_run(m)]
    if len(made) < len(labelled):
        ctx.note(f"{len(labelled) - len(made)} memory(ies) carry metadata.dream_strategy but neither dream_inputs nor "
                 "dream_run_id (e.g. another product's summary brought in as §7 maps it: Zep summaries become "
                 "dream_strategy \"compress\"): not judged as consolidations this producer ran")
    if not made:
        raise NotExercised(f"{v.path} holds no memory made by a consolidation run (none with metadata.dream_strategy "
                           "and dream_inputs or dream_run_id)")
    everything = {(m.get("namespace"), m.get("key")): m for m in v.memories
                  if isinstance(m.get("namespace"), str) and isinstance(m.get("key"), str)}
    for m in made:
        pairs = (m.get("metadata") or {}).get("dream_inputs")
        known = all(model._pair(p) in everything for p in pairs) if isinstance(pairs, list) and pairs else False
        judge_consolidated(ctx, [m], {model._pair(p): everything[model._pair(p)] for p in pairs} if known else None,
                           str(v.path))
    unjudged(ctx, str(v.path), {"oams/consolidated-source-id": "consolidated memory with a UUID dream_run_id whose "
                                                               "dream_inputs are all in the file (their source_ids "
                                                               "are what its source_id is compared with)"})


@check("oams/file-markdown", spec="oams", bindings=FILE, requirements=("oams/markdown-shape",),
       title="The Markdown serialization: `## key:` sections with namespace, created, updated, value, ---")
def file_markdown(ctx: Any) -> None:
    v = view(ctx)
    if v.kind != "markdown":
        raise NotExercised(f"{v.path} is not a Markdown serialization (the optional form of §7)")
    if not v.values and not v.problems:
        raise NotExercised(f"{v.path} holds no `## key:` section")
    report(ctx, v.problems, ("oams/markdown-shape",), str(v.path))
