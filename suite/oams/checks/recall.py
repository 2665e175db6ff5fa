"""RECALL (§3, §4): an ordered array, k and its default of 8, the score, the tags/since/until
filters, one namespace by default, and the cross-owner refusal (-32005)."""

from __future__ import annotations

from typing import Any

from memconform.suite.jsonvalue import json_equal
from memconform.suite.oams import model
from memconform.suite.oams.checks._common import (LIVE, judge_error, key, keys_of, listed, namespace, precondition,
                                                  recalled, say, seed_as_given, served)
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check


def seed(ctx: Any, memories: list[dict[str, Any]]) -> None:
    """Place memories with one BATCH_STORE, or one STORE each when the batch is refused."""
    reply = ctx.client.batch_store(memories)
    if reply.ok:
        return
    for m in memories:
        precondition(ctx.client.store(m), f"storing {m['key']!r}")


def _recall(ctx: Any, params: dict[str, Any], rule: str) -> tuple[Any, list[Any] | None]:
    reply = served(ctx.client.recall(params))
    if not reply.ok:
        say(ctx, rule, "RECALL of a well-formed query was refused", reply)
        return reply, None
    items = recalled(reply)
    if items is None:
        say(ctx, rule, f"RECALL answered {reply.memories()[1]}, not an ordered array of memories", reply)
    return reply, items


@check("oams/recall-k-default", spec="oams", bindings=LIVE,
       requirements=("oams/recall-k-default", "oams/recall-ordered-array", "oams/missing-embedding-handled"),
       title="RECALL without k answers 8 of 10 matching memories (stored without embeddings)")
def recall_k_default(ctx: Any) -> None:
    ctx.credit_only_observed()  # a RECALL answering no array, or nothing, shows no k
    ns = namespace(ctx, tag="k8")
    seed(ctx, [model.new_memory(ns, key(f"k8-{i}"), f"quokka sighting number {i}") for i in range(10)])
    reply, items = _recall(ctx, {"namespace": ns, "query": "quokka"}, "oams/recall-ordered-array")
    if items is None:
        ctx.note("RECALL answered no array of memories: how many it found was not judged")
        return
    ctx.observed("oams/recall-ordered-array", "oams/missing-embedding-handled")
    if not items:
        say(ctx, "oams/missing-embedding-handled", "ten memories stored without embeddings, all holding the query "
                                                   "word, and RECALL found none", reply)
        ctx.note("RECALL found none of the ten memories: the default k was not seen")
    elif len(items) != model.RECALL_DEFAULT_K:
        say(ctx, "oams/recall-k-default", f"ten memories match and no k was sent: {len(items)} came back, not 8", reply)
    else:
        ctx.observed("oams/recall-k-default")
    bad = [m for m in items if model.memory_problems(m)]
    if bad:
        say(ctx, "oams/recall-ordered-array", f"RECALL's array holds non-memories: {model.shape_report(bad[0])}", reply)


@check("oams/recall-k", spec="oams", bindings=LIVE, requirements=("oams/recall-k",),
       title="RECALL with k answers at most k memories")
def recall_k(ctx: Any) -> None:
    ns = namespace(ctx, tag="k")
    seed(ctx, [model.new_memory(ns, key(f"k-{i}"), f"numbat note {i}") for i in range(5)])
    for k in (1, 3):
        reply, items = _recall(ctx, {"namespace": ns, "query": "numbat", "k": k}, "oams/recall-k")
        if items is not None and not 1 <= len(items) <= k:
            say(ctx, "oams/recall-k", f"k={k} with five matching memories: {len(items)} came back", reply)
    _k_across_namespaces(ctx)


def _k_across_namespaces(ctx: Any) -> None:
    """k bounds the whole answer of a cross-namespace RECALL, not each namespace's share (round 25: k
    applied per namespace answered 2k). Such a RECALL is a MAY (§4): a refusal is noted, not judged."""
    spaces = [namespace(ctx, tag="k-across"), namespace(ctx, tag="k-across")]
    seed(ctx, [model.new_memory(ns, key(f"kx-{i}"), f"bilby note {i}") for ns in spaces for i in range(2)])
    reply = served(ctx.client.recall({"namespaces": spaces, "query": "bilby", "k": 2}))
    items = recalled(reply) if reply.ok else None
    if items is None:
        ctx.note(f"RECALL over two namespaces of one owner was refused or not an array ({reply.describe()[:200]}): "
                 "k across namespaces was not judged (cross-namespace retrieval is a MAY)")
    elif len(items) > 2:
        say(ctx, "oams/recall-k", f"RECALL over two namespaces of one owner ({spaces}), each holding two matching "
                                  f"memories, with k=2 answered {len(items)} memories: k is the result count of the "
                                  "RECALL, not of each namespace", reply)


@check("oams/recall-score", spec="oams", bindings=LIVE, requirements=("oams/recall-score",),
       title="Recalled memories carry metadata.score")
def recall_score(ctx: Any) -> None:
    ns = namespace(ctx, tag="score")
    seed(ctx, [model.new_memory(ns, key("score"), "pangolin facts"),
               model.new_memory(ns, key("score"), "pangolin and echidna facts", metadata={"language": "en"})])
    reply = ctx.client.recall({"namespace": ns, "query": "pangolin echidna"})
    precondition(reply, "RECALL")
    items = recalled(reply) or []
    if not items:
        raise NotApplicable(f"RECALL found none of the memories holding the query words: no score to judge "
                            f"({reply.describe()})")
    for m in items:
        meta = m.get("metadata") if isinstance(m, dict) else None
        score = meta.get("score") if isinstance(meta, dict) else None
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            say(ctx, "oams/recall-score", f"memory {m.get('key') if isinstance(m, dict) else m!r} has metadata.score "
                                          f"{score!r}", reply)
            return


#: reserved metadata keys (§2) a server may keep up to date as memories are used, RECALL included
USE_KEYS = ("last_used_at", "decay_score")


@check("oams/recall-read-only", spec="oams", bindings=LIVE, requirements=("oams/recall-read-only",),
       title="RECALL writes nothing into the memories it finds: LIST reads their metadata as before it (the score is "
             "the returned objects')")
def recall_read_only(ctx: Any) -> None:
    """STORE, LIST (the baseline), RECALL, LIST again: the metadata of each memory RECALL found is the
    baseline's (found by the blind red team: a RECALL that wrote its score into the stored memory).
    Judged against the baseline, so members a server adds on its own are compared with themselves;
    last_used_at and decay_score, which a server may maintain as memories are used, are left out."""
    ctx.credit_only_observed()  # a RECALL that finds nothing writes nothing to see
    ns = namespace(ctx, tag="readonly")
    memories = [model.new_memory(ns, key("heron"), "heron sighting", metadata={"language": "en", "a": 1}),
                model.new_memory(ns, key("heron"), "heron nest")]
    seed(ctx, memories)
    before = {m.get("key"): m for m in listed(ctx, ns) if isinstance(m, dict)}
    missing = [m["key"] for m in memories if m["key"] not in before]
    if missing:
        raise NotApplicable(f"precondition failed: LIST of {ns!r} does not show {missing}, stored there: no baseline "
                            "to compare a RECALL with (judged by oams/store-returns-stored)")
    reply = served(ctx.client.recall({"namespace": ns, "query": "heron"}))
    precondition(reply, "RECALL")
    found = [k for k in keys_of(recalled(reply)) if k in before]
    if not found:
        raise NotApplicable(f"RECALL found none of the memories holding the query word ({reply.describe()}): nothing "
                            "a read could have written to")
    after = {m.get("key"): m for m in listed(ctx, ns) if isinstance(m, dict)}
    ctx.observed("oams/recall-read-only")
    changed = []
    for k in found:
        was, now = (_kept_metadata(before[k]), _kept_metadata(after.get(k) or {}))
        if not json_equal(was, now):
            changed.append(f"{k!r} from {model.describe(was, 120)} to {model.describe(now, 120)}")
    if changed:
        say(ctx, "oams/recall-read-only", f"RECALL on {ns!r} (query \"heron\") found {found}; LIST of {ns!r} read "
                                          f"their metadata before it and after it, and it changed: "
                                          + "; ".join(changed) + " — the score belongs in the returned objects, not "
                                          "in the stored memory", reply, received={"recalled": reply.received,
                                                                                  "listed_after": list(after.values())})


def _kept_metadata(memory: dict[str, Any]) -> dict[str, Any]:
    meta = memory.get("metadata")
    return {k: v for k, v in meta.items() if k not in USE_KEYS} if isinstance(meta, dict) else {}


@check("oams/recall-filters", spec="oams", bindings=LIVE, requirements=("oams/recall-filters",),
       title="RECALL's tags, since and until narrow the result")
def recall_filters(ctx: Any) -> None:
    ns = namespace(ctx, tag="filters")
    memories = {
        "jan": model.new_memory(ns, key("jan"), "platypus in january", tags=["alpha"],
                                created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z"),
        # "alphabet" holds "alpha": a tag is matched whole, not as a substring (round 18)
        "feb": model.new_memory(ns, key("feb"), "platypus in february", tags=["beta", "alphabet"],
                                created_at="2026-02-01T00:00:00Z", updated_at="2026-02-01T00:00:00Z"),
        "mar": model.new_memory(ns, key("mar"), "platypus in march", tags=["alpha"],
                                created_at="2026-03-01T00:00:00Z", updated_at="2026-03-01T00:00:00Z"),
    }
    # the filters are judged on the times sent: a batch that drops them is placed again with STORE
    # (found by the blind red team: oams/store-keeps-given-timestamps' finding was blamed on the filters)
    seed_as_given(ctx, list(memories.values()))
    cases = (
        ("tags [\"alpha\"]", {"tags": ["alpha"]}, {"jan", "mar"}),
        ("since 2026-01-15", {"since": "2026-01-15T00:00:00Z"}, {"feb", "mar"}),
        ("until 2026-02-15", {"until": "2026-02-15T00:00:00Z"}, {"jan", "feb"}),
        ("since 2026-01-15 and until 2026-02-15", {"since": "2026-01-15T00:00:00Z", "until": "2026-02-15T00:00:00Z"},
         {"feb"}),
    )
    names = {m["key"]: n for n, m in memories.items()}
    for what, params, want in cases:
        reply, items = _recall(ctx, {"namespace": ns, "query": "platypus", **params}, "oams/recall-filters")
        if items is None:
            continue
        items = _own(ctx, ns, items)
        got = set(keys_of(items))
        wanted = {memories[n]["key"] for n in want}
        if got != wanted:
            say(ctx, "oams/recall-filters", f"with {what} RECALL answered {sorted(names.get(k, k) for k in got)}, "
                                            f"expected exactly {sorted(want)} (all three hold the query word)", reply)
    _tags_before_k(ctx)
    # a bound with an offset (RFC 3339) is that instant, not its wall-clock digits read as UTC (found by
    # the blind red team); a server that takes only UTC bounds may refuse it: noted, not judged
    what = "since 2026-01-31T23:00:00-02:00 (2026-02-01T01:00Z, an hour after february's)"
    reply = served(ctx.client.recall({"namespace": ns, "query": "platypus", "since": "2026-01-31T23:00:00-02:00"}))
    items = _own(ctx, ns, recalled(reply)) if reply.ok and recalled(reply) is not None else None
    if items is None:
        ctx.note(f"RECALL with {what} was refused or not an array ({reply.describe()}): a bound with an offset "
                 "was not judged")
    elif set(keys_of(items)) != {memories["mar"]["key"]}:
        say(ctx, "oams/recall-filters", f"with {what} RECALL answered "
                                        f"{sorted(names.get(k, k) for k in keys_of(items))}, expected exactly ['mar']: "
                                        f"the offset was not applied", reply)


def _own(ctx: Any, ns: str, items: list[Any]) -> list[Any]:
    """The answered memories of `ns` (or naming no namespace): memories another namespace holds are a
    scoping defect (oams/recall-single-namespace judges it), noted and left out of the filters' judgement."""
    strays = [m for m in items if isinstance(m, dict) and isinstance(m.get("namespace"), str) and m["namespace"] != ns]
    if strays:
        ctx.note(f"RECALL on {ns!r} answered memories of other namespaces ({sorted({m['namespace'] for m in strays})}): "
                 "a scoping defect, judged by oams/recall-single-namespace; the filters are judged on the namespace's "
                 "own memories")
    return [m for m in items if not any(m is x for x in strays)]


#: the tags-before-k case: more stronger, newer untagged matches than k
OUTRANKING, TAGS_K = 6, 3


def _tags_before_k(ctx: Any) -> None:
    """The tags filter narrows the memories RECALL ranks, not the k it answers (found by the blind red
    team: a filter applied to the top k found nothing): one tagged memory holding the query word once,
    written first, then more than k untagged ones holding it three times, written later (they outrank
    it by count and by recency); RECALL with k and the tag answers the tagged one."""
    ns = namespace(ctx, tag="filters-k")
    tagged = model.new_memory(ns, key("rare"), "otter", tags=["rare"], created_at="2026-01-01T00:00:00Z",
                              updated_at="2026-01-01T00:00:00Z")
    others = [model.new_memory(ns, key("common"), "otter otter otter", created_at=f"2026-02-{i + 1:02d}T00:00:00Z",
                               updated_at=f"2026-02-{i + 1:02d}T00:00:00Z") for i in range(OUTRANKING)]
    seed_as_given(ctx, [tagged, *others])
    params = {"namespace": ns, "query": "otter", "k": TAGS_K, "tags": ["rare"]}
    reply, items = _recall(ctx, params, "oams/recall-filters")
    if items is None:
        return
    got = keys_of(_own(ctx, ns, items))
    if got != [tagged["key"]]:
        say(ctx, "oams/recall-filters", f"{ns!r} holds {tagged['key']!r} (\"otter\", tagged \"rare\", written first) "
                                        f"and {OUTRANKING} untagged memories \"otter otter otter\" written after it; "
                                        f"RECALL with k {TAGS_K} and tags [\"rare\"] answered {got}, expected exactly "
                                        f"[{tagged['key']!r}]: the tags filter narrows the memories ranked, before "
                                        f"the k best are taken", reply)


@check("oams/recall-single-namespace", spec="oams", bindings=LIVE,
       requirements=("oams/recall-single-namespace", "oams/error-codes"),
       title="RECALL on one namespace answers that namespace only; an unknown namespace is empty or -32001")
def recall_single_namespace(ctx: Any) -> None:
    ctx.credit_only_observed()  # error-codes is judged only when the unknown namespace is refused
    ns_a, ns_b = namespace(ctx, tag="one"), namespace(ctx, tag="other")
    a, b = model.new_memory(ns_a, key("a"), "wombat burrow"), model.new_memory(ns_b, key("b"), "wombat burrow")
    seed(ctx, [a, b])
    reply, items = _recall(ctx, {"namespace": ns_a, "query": "wombat"}, "oams/recall-single-namespace")
    if items is not None:
        strays = [m for m in items if isinstance(m, dict) and m.get("namespace") != ns_a]
        if strays or b["key"] in keys_of(items):
            say(ctx, "oams/recall-single-namespace", f"RECALL on {ns_a!r} answered memories of {ns_b!r}", reply)
        if a["key"] not in keys_of(items):
            say(ctx, "oams/recall-single-namespace", f"RECALL on {ns_a!r} did not find its own memory", reply)
    _tagged_stays_scoped(ctx)
    unknown = namespace(ctx, tag="never")
    reply = served(ctx.client.recall({"namespace": unknown, "query": "wombat"}))
    ctx.observed("oams/recall-single-namespace")  # the unknown namespace's answer is compared, whatever it is
    if reply.ok:
        ctx.note("RECALL on a namespace never written was answered, not refused: no error code to judge (an "
                 "empty answer is as right as -32001)")
        if recalled(reply):
            say(ctx, "oams/recall-single-namespace", f"RECALL on {unknown!r}, never written, answered memories", reply)
    else:
        judge_error(ctx, reply, code=model.NAMESPACE_NOT_FOUND, refused_rule=None,
                    what=f"RECALL on a namespace never written ({unknown!r})", shape_rule="oams/error-codes")


def _tagged_stays_scoped(ctx: Any) -> None:
    """A tags filter narrows the namespace's memories, it does not widen the scope (round 25: with tags,
    RECALL searched every namespace, another owner's too): the other owner holds a memory with the tag
    and the query word, and RECALL on the first owner's namespace with that tag answers only its own."""
    mine, theirs = namespace(ctx, tag="one-tagged"), namespace(ctx, owner=1, tag="other-tagged")
    own = model.new_memory(mine, key("mine"), "quoll sighting", tags=["spotted"])
    other = model.new_memory(theirs, key("theirs"), "quoll secret plan", tags=["spotted"])
    seed(ctx, [own])
    precondition(ctx.client.store(other), f"storing {other['key']!r} in {theirs!r}")
    reply, items = _recall(ctx, {"namespace": mine, "query": "quoll", "tags": ["spotted"]},
                           "oams/recall-single-namespace")
    if items is None:
        return
    strays = [m for m in items if isinstance(m, dict) and (m.get("namespace", mine) != mine
                                                            or m.get("key") == other["key"])]
    if strays:
        say(ctx, "oams/recall-single-namespace", f"RECALL on {mine!r} with tags [\"spotted\"] answered "
                                                 + ", ".join(f"({m.get('namespace')!r}, {m.get('key')!r})" for m in strays)
                                                 + f", of another owner's namespace {theirs!r}: RECALL is scoped to "
                                                   "the one namespace asked, with a tags filter too", reply)


@check("oams/cross-owner-refused", spec="oams", bindings=LIVE,
       requirements=("oams/cross-owner-refused", "oams/error-shape"),
       title="RECALL across owners' namespaces (two; three with the other owner's first, second or third) is "
             "refused with -32005 and answers no memory")
def cross_owner_refused(ctx: Any) -> None:
    ctx.credit_only_observed()  # an answered query shows no error shape
    ns_a, ns_c, ns_b = namespace(ctx, 0, "mine"), namespace(ctx, 0, "mine2"), namespace(ctx, 1, "theirs")
    placed = [model.new_memory(ns, key("xo"), "kiwi secret") for ns in (ns_a, ns_c, ns_b)]
    seed(ctx, placed)
    mine, theirs = model.owner_of(ns_a), model.owner_of(ns_b)
    # the §4 example's pair, then three namespaces with the other owner's in each place: a server that
    # compares only some of the namespaces' owners (the first two) lets the others through
    sends = (("two namespaces", [ns_a, ns_b]),
             ("three namespaces, the other owner's first", [ns_b, ns_a, ns_c]),
             ("three namespaces, the other owner's second", [ns_a, ns_b, ns_c]),
             ("three namespaces, the other owner's third", [ns_a, ns_c, ns_b]))
    answered = []
    for what, spaces in sends:
        reply = served(ctx.client.recall({"namespaces": spaces, "query": "kiwi", "k": 8}))
        if reply.ok:
            answered.append(what)
            say(ctx, "oams/cross-owner-refused", f"a query over {what} ({spaces}) spanning owners {mine!r} and "
                                                 f"{theirs!r} without consent was answered", reply)
            continue
        if len(spaces) > 2 and reply.error_code == model.QUOTA_EXCEEDED:
            ctx.note(f"RECALL over {what} was refused with -32004 (quota exceeded): a target may cap the namespaces "
                     "of a query, so that refusal was not judged as the cross-owner one")
            continue
        judge_error(ctx, reply, code=model.CROSS_NAMESPACE_DENIED, refused_rule="oams/cross-owner-refused",
                    what=f"RECALL over {what} ({spaces}) spanning owners {mine!r} and {theirs!r}",
                    code_rule="oams/cross-owner-refused")
        if isinstance(reply.received, dict) and any(isinstance(v, list) and v for v in reply.received.values()):
            say(ctx, "oams/cross-owner-refused", f"the refusal of the query over {what} carries memories", reply)
    if len(answered) == len(sends):
        ctx.note("every query across owners was answered: no refusal's error shape to judge")
    _owner_extending_owner(ctx, placed[0])
    _namespace_beside_namespaces(ctx, placed[0], placed[2])


def _owner_extending_owner(ctx: Any, own: dict[str, Any]) -> None:
    """An owner whose hash extends the other's ("u-a" and "u-ab"): a server comparing owners by prefix
    (a blind red team, round 18) lets the query span them. Judged where the other owner's memory can
    be placed."""
    mine = model.owner_of(own["namespace"])
    longer = f"{mine}b:{own['namespace'].split(':', 1)[1]}-p"
    placed = ctx.client.store(model.new_memory(longer, key("xo"), "kiwi secret"))
    if not placed.ok:
        ctx.note(f"a memory of owner {mine + 'b'!r} could not be placed ({placed.describe()}): owners whose hashes "
                 "extend one another were not tried")
        return
    spaces = [own["namespace"], longer]
    reply = served(ctx.client.recall({"namespaces": spaces, "query": "kiwi", "k": 8}))
    what = f"RECALL over {spaces}, owners {mine!r} and {mine + 'b'!r} (one hash extends the other)"
    if reply.ok:
        ctx.observed("oams/cross-owner-refused")
        say(ctx, "oams/cross-owner-refused", f"{what} without consent was answered: owners are compared whole, and "
                                             "a query that spans two is refused with -32005", reply)
        return
    judge_error(ctx, reply, code=model.CROSS_NAMESPACE_DENIED, refused_rule="oams/cross-owner-refused",
                what=what, code_rule="oams/cross-owner-refused")


def _namespace_beside_namespaces(ctx: Any, own: dict[str, Any], other: dict[str, Any]) -> None:
    """RECALL naming one owner's namespace in `namespace` and the other owner's in `namespaces` (found by
    the blind red team: an owner check over `namespaces` alone, the search over both). §3 gives RECALL
    `namespace?` and §4 `namespaces` without saying how they combine: a refusal (any) and an answer of
    one owner's memories (`namespaces` read as replacing `namespace`) are both readings, not judged.
    Judged on evidence only: a success carrying memories of both owners spans owners without consent."""
    params = {"namespace": own["namespace"], "namespaces": [other["namespace"]], "query": "kiwi", "k": 8}
    reply = served(ctx.client.recall(params))
    what = f"RECALL with namespace {own['namespace']!r} and namespaces [{other['namespace']!r}]"
    if not reply.ok:
        ctx.note(f"{what} was refused ({reply.describe()}): how namespace and namespaces combine is open, so the "
                 "refusal is not judged")
        return
    found = [m for m in recalled(reply) or () if isinstance(m, dict)]
    spans = {m.get("namespace") for m in found} | {m["namespace"] for m in (own, other) if m["key"] in keys_of(found)}
    owners_found = {model.owner_of(ns) for ns in spans if isinstance(ns, str)}
    mine, theirs = model.owner_of(own["namespace"]), model.owner_of(other["namespace"])
    if {mine, theirs} <= owners_found:
        ctx.observed("oams/cross-owner-refused")
        say(ctx, "oams/cross-owner-refused", f"{what} (owners {mine!r} and {theirs!r}, no consent) was answered with "
                                             f"memories of both owners ({sorted(str(n) for n in spans)}): a query "
                                             "that spans owners is refused with -32005", reply)
    else:
        ctx.note(f"{what} was answered with memories of {sorted(owners_found) or 'no owner'} only: namespaces read as "
                 "replacing namespace (or nothing found) spans no owners, not judged")


@check("oams/cross-namespace-same-owner", spec="oams", bindings=LIVE, requirements=("oams/cross-namespace-opt-in",),
       title="RECALL with namespaces of one owner answers memories of each")
def cross_namespace_same_owner(ctx: Any) -> None:
    ns_a, ns_b = namespace(ctx, 0, "left"), namespace(ctx, 0, "right")
    a, b = model.new_memory(ns_a, key("l"), "fedramp lesson"), model.new_memory(ns_b, key("r"), "fedramp lesson")
    seed(ctx, [a, b])
    reply = served(ctx.client.recall({"namespaces": [ns_a, ns_b], "query": "fedramp", "k": 8}))
    if not reply.ok:
        say(ctx, "oams/cross-namespace-opt-in", "cross-namespace RECALL within one owner is not offered", reply)
        return
    got = keys_of(recalled(reply))
    if a["key"] not in got or b["key"] not in got:
        say(ctx, "oams/cross-namespace-opt-in", "cross-namespace RECALL did not find a memory of each namespace", reply)
