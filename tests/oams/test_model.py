"""suite/oams/model.py: memories, the JSONL store, bundles, the manifest checksum, Markdown."""

from __future__ import annotations

import json

import pytest

from memconform.reference_impl.oams.bundle import export_bundle
from memconform.reference_impl.oams.engine import OamsService
from memconform.suite.oams import model
from memconform.targets.oams import seed_export

VALID = {"key": "01HX", "namespace": "user-x123ab:personal", "value": "text", "created_at": "2026-04-27T12:00:00Z",
         "updated_at": "2026-04-27T12:00:00Z"}


def rules(memory):
    return {p.requirement for p in model.memory_problems(memory)}


@pytest.mark.parametrize("memory", [
    VALID,
    {**VALID, "created_at": "2026-04-27T12:00:00.123456+00:00", "updated_at": "2026-04-28T00:00:00z"},
    {**VALID, "tags": ["a"], "metadata": {"confidence": 1, "pii": False, "x": {"y": [1]}}, "parent_id": None,
     "source_id": "sha256:ab", "embedding_model": "m", "embedding": [0.1, -2, 3e-5], "unknown_future_field": 1},
    {**VALID, "namespace": "no-colon-convention-only"},
])
def test_valid_memories(memory):
    assert model.memory_problems(memory) == []


@pytest.mark.parametrize("change, rule", [
    ({"key": ""}, "oams/key-required"),
    ({"key": None}, "oams/key-required"),
    ({"namespace": 5}, "oams/namespace-required"),
    ({"value": 42}, "oams/value-string"),
    ({"value": {"a": 1}}, "oams/value-string"),
    ({"created_at": 1767225600000}, "oams/timestamps-utc"),
    ({"updated_at": "2026-04-27T14:00:00+02:00"}, "oams/timestamps-utc"),
    ({"updated_at": "2026-04-27T12:00:00-00:00"}, "oams/timestamps-utc"),
    ({"created_at": "yesterday"}, "oams/timestamps-utc"),
    ({"updated_at": "2026-04-26T12:00:00Z"}, "oams/updated-not-before-created"),
    ({"tags": "research"}, "oams/tags-strings"),
    ({"tags": ["a", 1]}, "oams/tags-strings"),
    ({"metadata": []}, "oams/metadata-object"),
    ({"metadata": {"confidence": 1.5}}, "oams/metadata-object"),
    ({"metadata": {"pii": "yes"}}, "oams/metadata-object"),
    ({"embedding": [0.1]}, "oams/embedding-model-required"),
    ({"embedding": ["x"], "embedding_model": "m"}, "oams/embedding-floats"),
    ({"parent_id": 3}, "oams/provenance-fields"),
    ({"source_id": {"url": "x"}}, "oams/provenance-fields"),
    ({"namespace": "user-x:a/b"}, "oams/scope-no-slash-colon"),
    ({"namespace": "user-x:a:b"}, "oams/scope-no-slash-colon"),
])
def test_invalid_memories(change, rule):
    assert rule in rules({**VALID, **change})


@pytest.mark.parametrize("missing", model.REQUIRED_FIELDS)
def test_each_required_field(missing):
    memory = {k: v for k, v in VALID.items() if k != missing}
    assert model.memory_problems(memory), missing


def test_not_an_object_never_raises():
    for value in (None, [], "x", 3, {"key": float("nan")}):
        model.memory_problems(value)


def test_jsonl_framing():
    line = json.dumps(VALID).encode()
    values, problems = model.parse_jsonl(line + b"\n" + line + b"\n")
    assert len(values) == 2 and problems == []
    assert {p.requirement for p in model.store_problems(values)} == {"oams/ns-key-unique"}
    _, problems = model.parse_jsonl(line)
    assert {p.requirement for p in problems} == {"oams/jsonl-lines"}
    _, problems = model.parse_jsonl(line + b"\r\n")
    assert {p.requirement for p in problems} == {"oams/jsonl-lines"}
    _, problems = model.parse_jsonl(line + b"\n\n" + line + b"\n")
    assert {p.requirement for p in problems} == {"oams/jsonl-lines"}
    values, problems = model.parse_jsonl(b"{not json\n")
    assert {p.requirement for p in problems} == {"oams/jsonl-store"}
    _, problems = model.parse_jsonl(b"\xff\xfe\n")
    assert {p.requirement for p in problems} == {"oams/jsonl-lines"}


def test_sorted_by_created():
    later = {**VALID, "key": "b", "created_at": "2026-05-01T00:00:00Z", "updated_at": "2026-05-01T00:00:00Z"}
    assert model.store_problems([VALID, later], sorted_by_created=True) == []
    assert {p.requirement for p in model.store_problems([later, VALID], sorted_by_created=True)} == {"oams/jsonl-sorted"}
    assert model.render_jsonl([later, VALID]).splitlines()[0] == json.dumps(VALID, separators=(",", ":")).encode()


@pytest.fixture
def bundle(tmp_path):
    service = OamsService()
    seed_export(service)
    folder = export_bundle(service, tmp_path)
    service.close()
    return folder


def test_reference_bundle_is_clean(bundle):
    b = model.read_bundle(bundle)
    assert b.problems == ()
    assert b.manifest["memory_count"] == len(b.values) == 4
    assert b.manifest["checksum_sha256"] == model.checksum((bundle / "memories.jsonl").read_bytes())
    assert b.manifest["namespaces"] == ["mc-export:personal", "mc-export:project-x"]
    assert b.manifest["embedding_model"] == "text-embedding-3-small"
    consolidated = [m for m in b.memories if model.is_consolidated(m)]
    assert len(consolidated) == 1
    inputs = {(m["namespace"], m["key"]): m for m in b.memories}
    assert model.consolidation_problems(consolidated[0], inputs) == []


@pytest.mark.parametrize("change, rule", [
    (lambda m: m.__setitem__("checksum_sha256", "0" * 64), "oams/manifest-checksum"),
    (lambda m: m.__setitem__("memory_count", 99), "oams/manifest-count"),
    (lambda m: m.__setitem__("namespaces", ["other:ns"]), "oams/manifest-namespaces"),
    (lambda m: m.__setitem__("oams_version", "1.0"), "oams/manifest-version"),
    (lambda m: m.__setitem__("oams_version", "v0.1"), "oams/manifest-version"),
    (lambda m: m.pop("exported_at"), "oams/manifest-shape"),
    (lambda m: m.__setitem__("memory_count", "4"), "oams/manifest-shape"),
])
def test_manifest_problems(bundle, change, rule):
    path = bundle / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))
    assert rule in {p.requirement for p in model.read_bundle(bundle).problems}


def test_checksum_accepts_prefix_and_patch_version(bundle):
    path = bundle / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["checksum_sha256"] = "sha256:" + manifest["checksum_sha256"]
    manifest["oams_version"] = "0.2"  # a compatible minor: judged under 0.1's rules
    path.write_text(json.dumps(manifest))
    assert model.read_bundle(bundle).problems == ()


def test_bundle_layout(bundle):
    (bundle / "manifest.json").unlink()
    assert "oams/bundle-layout" in {p.requirement for p in model.read_bundle(bundle).problems}
    renamed = bundle.rename(bundle.with_name("my-export"))
    assert "oams/bundle-folder-name" in {p.requirement for p in model.read_bundle(renamed).problems}


def test_embeddings_bin(bundle):
    """Any layout holding each line's vector as packed float32 is read as one (§7 fixes none); the
    vectors as float64, or missing, are not."""
    import struct

    memories = model.read_bundle(bundle).memories
    vectors = [m["embedding"] for m in memories if isinstance(m.get("embedding"), list)]
    assert vectors
    path = bundle / "embeddings.bin"
    laid_out = {
        "bare": b"".join(struct.pack(f"<{len(v)}f", *v) for v in vectors),
        "keyed": b"".join(struct.pack(f"<II{len(v)}f", i, len(v), *v) for i, v in enumerate(vectors)),
        "big-endian, reversed, with a header": b"OAMSEMB1" + b"".join(struct.pack(f">{len(v)}f", *v)
                                                                   for v in reversed(vectors)),
    }
    for layout, data in laid_out.items():
        path.write_bytes(data)
        assert model.embeddings_problems(path, memories) == [], layout
    for wrong, data in {"float64": b"".join(struct.pack(f"<{len(v)}d", *v) for v in vectors),
                        "one vector left out": laid_out["bare"][: -4 * len(vectors[-1])],
                        "zeros": b"\0" * len(laid_out["bare"])}.items():
        path.write_bytes(data)
        assert {p.requirement for p in model.embeddings_problems(path, memories)} == {"oams/embeddings-bin-layout"}, wrong
    path.write_bytes(b"\0" * 13)
    assert model.embeddings_problems(path, [{k: v for k, v in m.items() if k != "embedding"} for m in memories]) == []


def test_markdown_round_trip():
    memory = {**VALID, "source_id": "https://example.com/article", "tags": ["research", "memory"],
              "value": "The actual `value` text goes here as **Markdown** body.\n\nTwo paragraphs."}
    text = model.render_markdown([memory, {**VALID, "key": "second"}])
    back, problems = model.parse_markdown(text)
    assert problems == []
    assert back[0] == {k: memory[k] for k in ("key", "namespace", "value", "created_at", "updated_at", "source_id",
                                              "tags")}
    assert back[1]["key"] == "second"
    _, problems = model.parse_markdown("stray\n## key: a\n\nno fields\n---\n")
    assert {p.requirement for p in problems} == {"oams/markdown-shape"}


def test_consolidation_problems():
    good = {**VALID, "key": "d", "parent_id": "01HX", "source_id": "dream:compress:6f1c2a8e-2f4b-4e59-9a51-0c7b1f2d3e4a",
            "metadata": {"dream_strategy": "compress", "dream_inputs": [["user-x123ab:personal", "01HX"]],
                         "dream_run_id": "6f1c2a8e-2f4b-4e59-9a51-0c7b1f2d3e4a"}}
    assert model.consolidation_problems(good, {("user-x123ab:personal", "01HX"): VALID}) == []
    bad = {**good, "parent_id": None, "source_id": "elsewhere",
           "metadata": {"dream_strategy": "daydream", "dream_inputs": "01HX", "dream_run_id": "run-1"}}
    assert {p.requirement for p in model.consolidation_problems(bad)} == {
        "oams/consolidated-parent-id", "oams/dream-strategy", "oams/dream-inputs", "oams/dream-run-id"}
    assert model.strategy_known("vendor:acme") and not model.strategy_known("vendor:")


def test_shape_report_names_each_field():
    earlier = {"id": "m1", "content": "x", "created_at": 1767225600000, "namespace": "u:p"}
    text = model.shape_report(earlier)
    assert "`key` expected" in text and "`value` expected" in text and "`updated_at` expected" in text
    assert "`created_at` expected an RFC 3339 UTC string: found 1767225600000" in text
    assert "'id'" in text and "'content'" in text


def test_the_export_class_is_named_only_where_an_export_is_judged():
    """A live server reaching only L1 showed the memory shape; "L1 (export)" there credited an
    export nobody judged (a blind red team)."""
    from memconform.suite import catalogue

    cat = catalogue.load("oams")
    assert cat.level_name("L1", "file") == "export"
    assert cat.level_name("L1", "http") is None and cat.level_name("L1", "jsonrpc") is None
    assert cat.level_name("L2", "http") == "read/write"


def test_markdown_values_may_hold_a_key_header_and_a_rule_of_their_own():
    """§7 gives the Markdown value no escaping (a blind red team, round 18): a `## key:` line that opens
    no field list, and a `---` rule inside the value, are the value's text."""
    inner = "Intro line of a value that quotes a section:\n## key: inside the value\n\n---\n\nafter a rule"
    memory = {**VALID, "value": inner}
    back, problems = model.parse_markdown(model.render_markdown([memory, {**VALID, "key": "second"}]))
    assert problems == [] and [m["key"] for m in back] == [VALID["key"], "second"]
    assert back[0]["value"] == inner
    # a header that does open fields is a section, however the value before it reads
    _, problems = model.parse_markdown(model.render_markdown([memory]) + "## key: k3\n\n**namespace:** `u:p`\n")
    assert [p.requirement for p in problems] == ["oams/markdown-shape"]  # k3 lacks created/updated


def test_a_manifest_may_leave_out_embedding_model_when_the_lines_mix_models():
    lines = [dict(VALID, key="a", embedding=[0.1], embedding_model="m1"),
             dict(VALID, key="b", embedding=[0.2], embedding_model="m2")]
    manifest = {"oams_version": "0.1", "source_vendor": "v", "exported_at": "2026-04-27T12:00:00Z",
                "namespaces": [VALID["namespace"]], "memory_count": 2, "checksum_sha256": "0" * 64}
    assert not [p for p in model.manifest_problems(manifest, lines, model.render_jsonl(lines)) if p.requirement == "oams/manifest-shape"]
    one_model = [lines[0], dict(lines[1], embedding_model="m1")]
    assert [p.message for p in model.manifest_problems(manifest, one_model, model.render_jsonl(one_model)) if p.requirement == "oams/manifest-shape"] \
        == ["lines carry embeddings but embedding_model is missing"]


def test_a_consolidated_memory_may_keep_its_strongest_input_s_null_source():
    """§5: "Synthesized (no single source): null" is a source_id; preserving an input's null is
    preserving it (round 18), and the message shows null as null. A source_id left out is none."""
    run = "6f1c2a8e-2f4b-4e59-9a51-0c7b1f2d3e4a"
    inputs = {("user-x123ab:personal", "a"): {**VALID, "key": "a", "source_id": None},
              ("user-x123ab:personal", "b"): {**VALID, "key": "b", "source_id": "https://example.com/b"}}
    out = {**VALID, "key": "d", "parent_id": "a", "source_id": None,
           "metadata": {"dream_strategy": "compress", "dream_run_id": run,
                        "dream_inputs": [["user-x123ab:personal", "a"], ["user-x123ab:personal", "b"]]}}
    assert model.consolidation_problems(out, inputs) == []
    left_out = {k: v for k, v in out.items() if k != "source_id"}
    (problem,) = model.consolidation_problems(left_out, inputs)
    assert problem.requirement == "oams/consolidated-source-id" and "left out" in problem.message
    assert "null" in problem.message and "None" not in problem.message
