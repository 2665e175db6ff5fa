"""Recall (L2): the three channels and what each hit says about them, the filters, `k`, hiding and
exposing superseded rows, and the empty answers (recall.md, the typed-memories page).

Every check writes into a fresh profile, so every hit is a memory the check placed. Words come from
`word()`, so the keyword channel can only find what holds them. A query may also drive the vector
channel (auto-embedding, recall.md), which finds nearest neighbours whatever words they hold: a hit
that lists "vector" is never judged as a keyword match or as padding. Scores are compared only
where they differ; ties (recency in recall.md, channel order in the engine) are not judged."""

from __future__ import annotations

from typing import Any

from memconform.suite.memoturn import model
from memconform.suite.memoturn.checks._common import (LIVE, ids_of, ingest, ingest_carrying, mentions, profile,
                                                      recall, say, served, word)
from memconform.suite.memoturn.client import MemoturnReply, shown
from memconform.suite.outcomes import NotApplicable, Waived
from memconform.suite.registry import check

#: A small fixed dimension: the page lets the first vector fix it, and every check keeps to it.
DIM = 8


def unit(i: int) -> list[float]:
    """The i-th axis: distinct axes are orthogonal, so a stored vector is the nearest neighbour of
    itself under cosine, dot product and L2 alike."""
    return [1.0 if j == i else 0.0 for j in range(DIM)]


def mem(mtype: str, summary: str, **fields: Any) -> dict[str, Any]:
    """A memory of distinct content (its own word in it), so no two a check places share an id."""
    return model.new_memory(mtype, summary, {"note": word("c")}, **fields)


def place(ctx: Any, prof: str, memories: list[dict[str, Any]], what: str = "placing the memories") -> list[str]:
    """Ingest as a precondition; the ids the server gave, in request order."""
    reply = ingest(ctx, prof, memories, what)
    return [str(reply.result(i).get("id")) for i in range(len(memories))]


def judged_recall(ctx: Any, prof: str, params: dict[str, Any], rule: str,
                  what: str) -> tuple[MemoturnReply, list[dict[str, Any]] | None]:
    """A recall the rule itself asks to be answered: a refusal is a finding against `rule`; an answer
    without a `memories` array is recall-answer-shape's to judge (not applicable here)."""
    reply = served(ctx.client.recall(prof, params))
    if not reply.ok:
        say(ctx, rule, f"{what} was refused; it is a well-formed recall", reply)
        return reply, None
    hits = reply.memories()
    if hits is None:
        raise NotApplicable(f"{what}: no `memories` array ({reply.describe()}; judged by memoturn/recall-answer-shape)")
    return reply, [h for h in hits if isinstance(h, dict)]


def by_id(hits: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {h.get("id"): h for h in hits}


def channels(hit: dict[str, Any]) -> list[Any]:
    c = hit.get("channels")
    return c if isinstance(c, list) else []


def score(hit: dict[str, Any]) -> float | None:
    s = hit.get("score")
    return float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else None


def baseline(ctx: Any, prof: str, params: dict[str, Any], want: dict[str, str], what: str) -> None:
    """An unfiltered recall that must find every memory of `want` ({id: name}) before a filter can
    be judged: a filter that drops what the server never found shows nothing."""
    reply, hits = recall(ctx, prof, params, what)
    missing = [name for i, name in want.items() if i not in ids_of(hits)]
    if missing:
        raise NotApplicable(f"the unfiltered recall did not find {', '.join(missing)}, so a filter cannot be judged "
                            f"({reply.describe()}; judged by memoturn/recall-keyword-channel)")


def no_findings(ctx: Any) -> bool:
    return not ctx.findings


# -- the request -----------------------------------------------------------------------------------

@check("memoturn/recall-needs-a-channel", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-needs-a-channel",),
       title="Recall with none of query, embedding, topic_key is refused")
def recall_needs_a_channel(ctx: Any) -> None:
    prof = profile("chan")
    w = word()
    place(ctx, prof, [mem("event", f"{w} something happened")])
    for what, params in (("a recall with no member at all", {}),
                         ("a recall with only filters (types, k) and no channel", {"types": ["event"], "k": 3})):
        reply = served(ctx.client.recall(prof, params))
        if reply.ok:
            say(ctx, "memoturn/recall-needs-a-channel", f"{what} was answered; recall.md requires at least one of "
                                                        f"query, embedding, topic_key", reply)
        elif reply.binding == "http" and reply.status is not None and reply.status >= 500:
            # a crash is no refusal: the page's answer is the client's error, 400 invalid_request
            say(ctx, "memoturn/recall-needs-a-channel", f"{what} was answered HTTP {reply.status}, a server error, "
                                                        f"not a refusal of the request (400 invalid_request)", reply)


@check("memoturn/recall-answer-shape", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-answer-shape",),
       title="Recall answers {memories, txid}; each hit carries the record's fields, a numeric score and channels")
def recall_answer_shape(ctx: Any) -> None:
    rule = "memoturn/recall-answer-shape"
    prof = profile("shape")
    w, topic = word(), f"user.{word('t')}"
    sent = mem("fact", f"{w} prefers dark mode", topic_key=topic, keywords=f"{word('k')} theme",
               session_id=f"s-{word('s')}", source="memconform")
    (mid,) = place(ctx, prof, [sent])
    reply = ctx.client.recall(prof, {"query": w, "topic_key": topic})
    if reply.not_served:
        say(ctx, rule, "the recall operation is not served", reply)
        return
    if not reply.ok:
        say(ctx, rule, "a recall by query and topic_key was refused", reply)
        return
    body = reply.body
    if not isinstance(body, dict):
        say(ctx, rule, "the answer is not an object {\"memories\": [...], \"txid\": n}", reply)
        return
    hits = body.get("memories")
    if not isinstance(hits, list):
        say(ctx, rule, f"`memories` is {shown(hits)}, not an array", reply)
    txid = body.get("txid")
    if not model.is_integer(txid):
        say(ctx, rule, f"`txid` is {shown(txid)}, not an integer (recall.md: every response carries txid)", reply)
    if not isinstance(hits, list):
        return
    for i, h in enumerate(hits):
        problems = model.record_problems(h, where=f"memories[{i}]")
        if isinstance(h, dict):
            if score(h) is None:
                problems.append(f"memories[{i}].score is {shown(h.get('score'))}, not a number")
            c = h.get("channels")
            if not isinstance(c, list) or not all(isinstance(x, str) for x in c):
                problems.append(f"memories[{i}].channels is {shown(c)}, not an array of channel names")
        if problems:
            say(ctx, rule, "a hit is not a memory with score and channels: " + "; ".join(problems), reply)
            return
    hit = by_id([h for h in hits if isinstance(h, dict)]).get(mid)
    if hit is None:
        if no_findings(ctx):
            raise NotApplicable(f"the recall did not find the memory it placed (by its word and its topic_key), so "
                                f"no hit's fields can be judged ({reply.describe()}; judged by "
                                f"memoturn/recall-keyword-channel and memoturn/recall-topic-channel)")
        return
    # the fields recall.md's example shows on every hit, where this memory has a value for each
    for field in ("topic_key", "keywords", "session_id"):
        if hit.get(field) != sent[field]:
            say(ctx, rule, f"the hit's `{field}` is {shown(hit.get(field))}, not {shown(sent[field])} as ingested",
                reply)


# -- the channels ------------------------------------------------------------------------------------

@check("memoturn/recall-keyword-channel", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-keyword-channel",),
       title="A query finds memories by the words of their summary, through channel \"keyword\"")
def recall_keyword_channel(ctx: Any) -> None:
    rule = "memoturn/recall-keyword-channel"
    prof = profile("kw")
    wa, wb = word(), word()
    a, b = place(ctx, prof, [mem("fact", f"likes {wa} tea"), mem("event", f"ordered {wb} coffee")])
    reply, hits = judged_recall(ctx, prof, {"query": wa}, rule, f"a recall by query {wa!r}")
    if hits is None:
        return
    found = by_id(hits)
    if a not in found:
        say(ctx, rule, f"the query {wa!r} did not find the fact whose summary holds it ({a})", reply)
    elif "keyword" not in channels(found[a]):
        say(ctx, rule, f"the fact found by its summary's word lists channels {shown(found[a].get('channels'))}, "
                       f"without \"keyword\"", reply)
    if b in found and "keyword" in channels(found[b]):
        say(ctx, rule, f"the event {b}, whose summary does not hold {wa!r}, was attributed to the keyword channel",
            reply)
    # a full-text index folds case (the summary is "FTS-indexed" natural language): the word in capitals
    # finds it too (a blind red team, round 30: terms matched as written)
    if a in found:
        loud = wa.upper()
        reply, hits = judged_recall(ctx, prof, {"query": loud}, rule, f"a recall by query {loud!r}")
        if hits is not None and a not in ids_of(hits):
            say(ctx, rule, f"the query {loud!r} did not find the fact whose summary holds {wa!r} ({a}), which the "
                           f"query {wa!r} found: a full-text index matches words whatever their case", reply)
    # more rows than a scenario places: one memory among 150 written in one batch, the 130th, holds a word
    # of its own (a blind red team, round 21: the keyword scan read the profile's first 100 rows only)
    u = word()
    crowd = [mem("event", f"{word()} filler note {i}") for i in range(150)]
    crowd[129] = mem("event", f"{u} buried note")
    ids = place(ctx, prof, crowd, "150 memories in one batch, the 130th holding a word of its own")
    reply, hits = judged_recall(ctx, prof, {"query": u}, rule, f"a recall by query {u!r} among 150 memories")
    if hits is not None and ids[129] not in ids_of(hits):
        say(ctx, rule, f"the query {u!r} did not find the one memory of 150 whose summary holds it ({ids[129]}, the "
                       "130th written)", reply)


@check("memoturn/keywords-indexed", spec="memoturn", bindings=LIVE, requirements=("memoturn/keywords-indexed",),
       title="A query matching only a memory's keywords finds it")
def keywords_indexed(ctx: Any) -> None:
    rule = "memoturn/keywords-indexed"
    prof = profile("kwi")
    k, k2 = word("k"), word("k")
    # every space-separated term is indexed, the second as the first (a blind red team, round 26: only the
    # first keyword was)
    (a,) = place(ctx, prof, [mem("fact", "prefers tabs over spaces", keywords=f"{k} {k2}")])
    for which, term in (("first", k), ("second", k2)):
        reply, hits = judged_recall(ctx, prof, {"query": term}, rule, f"a recall by query {term!r}")
        if hits is None:
            continue
        found = by_id(hits)
        if a not in found:
            say(ctx, rule, f"the query {term!r}, the {which} of the memory's keywords {k + ' ' + k2!r} (its summary "
                           f"does not hold it), did not find it ({a})", reply)
        elif "keyword" not in channels(found[a]):
            say(ctx, rule, f"the memory found by its keyword lists channels {shown(found[a].get('channels'))}, without "
                           f"\"keyword\"", reply)


@check("memoturn/recall-topic-channel", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-topic-channel",),
       title="topic_key finds the active memory under that exact key, through channel \"topic\"")
def recall_topic_channel(ctx: Any) -> None:
    rule = "memoturn/recall-topic-channel"
    prof = profile("topic")
    ta, tb = f"user.{word('t')}", f"user.{word('t')}"
    a, b, c = place(ctx, prof, [mem("fact", "vegetarian since 2024", topic_key=ta),
                                mem("fact", "lives in lisbon", topic_key=tb),
                                # a key that merely starts with ta: "exact" lookup must not find it
                                mem("instruction", "answer in portuguese", topic_key=f"{ta}.extra")])
    reply, hits = judged_recall(ctx, prof, {"topic_key": ta}, rule, f"a recall by topic_key {ta!r}")
    if hits is None:
        return
    found = by_id(hits)
    if a not in found:
        say(ctx, rule, f"the recall by topic_key {ta!r} did not find the active fact under that key ({a})", reply)
    elif "topic" not in channels(found[a]):
        say(ctx, rule, f"the fact found by its topic_key lists channels {shown(found[a].get('channels'))}, without "
                       f"\"topic\"", reply)
    # only the topic channel was driven, so anything else found was found under another key
    for other, key in ((b, tb), (c, f"{ta}.extra")):
        if other in found:
            say(ctx, rule, f"the recall by topic_key {ta!r} answered {other}, filed under {key!r}: the lookup is exact",
                reply)


@check("memoturn/recall-vector-channel", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-vector-channel",),
       title="An embedding finds the memory ingested with that vector, through channel \"vector\"")
def recall_vector_channel(ctx: Any) -> None:
    rule = "memoturn/recall-vector-channel"
    prof = profile("vec")
    wa = word()
    memories = [mem("fact", f"{wa} likes jazz", embedding=unit(0)), mem("event", f"{word()} went hiking",
                                                                        embedding=unit(1))]
    placed = ingest_carrying(ctx, prof, memories, "embedding", rule, f"memories with embeddings of dimension {DIM}")
    if placed is None:
        return
    a, b = (str(placed.result(i).get("id")) for i in range(2))
    reply, hits = judged_recall(ctx, prof, {"embedding": unit(0)}, rule,
                                f"a recall by an embedding of dimension {DIM}, equal to a stored one")
    if hits is None:
        return
    found = by_id(hits)
    if a not in found:
        say(ctx, rule, f"the recall by the very embedding a fact was ingested with did not find it ({a})", reply)
        return
    if "vector" not in channels(found[a]):
        say(ctx, rule, f"the fact found by its own embedding lists channels {shown(found[a].get('channels'))}, without "
                       f"\"vector\"", reply)
    sa, sb = score(found[a]), score(found[b]) if b in found else None
    if sa is not None and sb is not None and sb > sa:
        say(ctx, rule, f"the event with an orthogonal embedding scored {sb} above the exact match's {sa}: the nearest "
                       f"neighbour under any metric is the stored vector itself", reply)
    # recall.md: "a dimension mismatch degrades recall to keyword + topic rather than failing the request"
    # (a blind red team, round 21: refused invalid_request)
    other = [0.5] * (DIM + 3)
    reply, hits = judged_recall(ctx, prof, {"embedding": other, "query": wa}, rule,
                                f"a recall by an embedding of dimension {DIM + 3} (the profile's are {DIM}) and the "
                                f"query {wa!r}, which degrades to the keyword channel")
    if hits is not None and a not in ids_of(hits):
        say(ctx, rule, f"a recall by an embedding of another dimension and the query {wa!r} did not find the fact "
                       f"whose summary holds it ({a}): a dimension mismatch degrades recall to keyword + topic", reply)
    # degraded means the vector channel matches nothing: an embedding alone, the first DIM - 1 members of the
    # fact's own, finds no memory (a blind red team, round 26: vectors compared over their common prefix).
    # Refusing it is not judged here (the mismatch with a query, above, is what must be answered).
    prefix = unit(0)[:DIM - 1]
    reply = served(ctx.client.recall(prof, {"embedding": prefix}))
    hits = reply.memories() if reply.ok else None
    if hits:
        say(ctx, rule, f"a recall by the embedding {prefix} alone, of dimension {DIM - 1} (every vector of the profile "
                       f"has {DIM}), answered {shown(ids_of([h for h in hits if isinstance(h, dict)]))}: a vector of "
                       f"another dimension is no match (a dimension mismatch degrades recall to keyword + topic, and "
                       f"this recall drove no other channel)", reply)


@check("memoturn/task-no-vector", spec="memoturn", bindings=LIVE, requirements=("memoturn/task-no-vector",),
       title="A task ingested with an embedding is never found through the vector channel")
def task_no_vector(ctx: Any) -> None:
    rule = "memoturn/task-no-vector"
    prof = profile("tnv")
    w = word()
    fact, task = place(ctx, prof, [mem("fact", f"{word()} prefers email", embedding=unit(2)),
                                   mem("task", f"{w} follow up on refund", embedding=unit(2))])
    reply, hits = recall(ctx, prof, {"embedding": unit(2)}, "a recall by embedding")
    found = by_id(hits)
    if task in found:
        say(ctx, rule, f"a recall by embedding alone answered the task {task}, which holds the same vector as a "
                       f"fact: tasks skip the vector channel", reply)
    elif fact not in found:
        raise NotApplicable(f"the recall by embedding did not find the fact holding that very vector either, so the "
                            f"vector channel was not observed at all ({reply.describe()}; judged by "
                            f"memoturn/recall-vector-channel)")
    # found by its word, the task must still not be attributed to the vector channel
    reply, hits = recall(ctx, prof, {"query": w, "embedding": unit(2)}, "a recall by query and embedding")
    found = by_id(hits)
    if task in found and "vector" in channels(found[task]):
        say(ctx, rule, f"the task {task} lists channels {shown(found[task].get('channels'))}: tasks skip the vector "
                       f"channel", reply)


@check("memoturn/recall-channels-attribution", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-channels-attribution",),
       title="Each hit names the channels that found it, among those the request drove, with a score; "
             "hits are ordered by score")
def recall_channels_attribution(ctx: Any) -> None:
    rule = "memoturn/recall-channels-attribution"
    prof = profile("attr")
    w, x, topic = word(), word(), f"user.{word('t')}"
    # the event, written after the fact, holds both words of a two-word query and the fact one: where
    # the scores tell them apart, the order is seen (a server answering rows in the order written
    # puts the lower score first)
    # and two events a query and an embedding rank apart: the one word alone, which the keyword channel ranks
    # first, and the word among others with an embedding, second by keyword but first by vector, so first
    # fused (a blind red team, round 26: hits emitted channel by channel, each with its fused score)
    y = word()
    a, b, _, _, _ = place(ctx, prof, [mem("fact", f"{w} vegan since 2026", topic_key=topic, embedding=unit(3)),
                                      mem("event", f"{w} {x} ordered the tasting menu", embedding=unit(4)),
                                      mem("event", f"{word()} booked a table", embedding=unit(5)),
                                      mem("event", y),
                                      mem("event", f"{y} {word()} {word()} paid the bill", embedding=unit(6))])
    # (what, the request, the channels it drives, the channels that find the fact by construction: its
    # exact topic_key, a word of its summary, its own embedding)
    requests = (
        ("topic_key only", {"topic_key": topic}, {"topic"}, {"topic"}),
        # auto-embedding (recall.md) lets a bare query drive the vector channel as well
        ("query only", {"query": w}, {"keyword", "vector"}, {"keyword"}),
        ("embedding only", {"embedding": unit(3)}, {"vector"}, {"vector"}),
        ("a two-word query", {"query": f"{w} {x}"}, {"keyword", "vector"}, {"keyword"}),
        ("query, topic_key and embedding", {"query": w, "topic_key": topic, "embedding": unit(3)},
         {"topic", "keyword", "vector"}, {"topic", "keyword", "vector"}),
        ("a query and an embedding that rank two events apart", {"query": y, "embedding": unit(6)},
         {"keyword", "vector"}, set()),
    )
    observed = False
    for what, params, driven, finding_fact in requests:
        reply, hits = judged_recall(ctx, prof, params, rule, f"a recall by {what}")
        if hits is None:
            continue
        observed = observed or bool(hits)
        for h in hits:
            c = h.get("channels")
            if not isinstance(c, list) or not c:
                say(ctx, rule, f"with {what}, hit {h.get('id')} has channels {shown(c)}, not a non-empty array", reply)
                return
            bad = [x for x in c if x not in driven]
            if bad:
                say(ctx, rule, f"with {what} (driving {', '.join(sorted(driven))}), hit {h.get('id')} names "
                               f"{shown(bad)}: a channel the request did not drive, or none of topic, keyword, vector",
                    reply)
            if score(h) is None:
                say(ctx, rule, f"with {what}, hit {h.get('id')} has score {shown(h.get('score'))}, not a number", reply)
                return
        for i in range(len(hits) - 1):
            s1, s2 = score(hits[i]), score(hits[i + 1])
            if s1 is not None and s2 is not None and s1 < s2:
                say(ctx, rule, f"with {what}, hit {i} ({hits[i].get('id')}, score {s1}) comes before hit {i + 1} "
                               f"({hits[i + 1].get('id')}, score {s2}): hits are ordered by score, highest first",
                    reply)
                break
        found = by_id(hits)
        # "Each hit reports which channels found it": the fact is found by every channel whose lookup
        # matches it by construction, so each of those is named (the score sums over them)
        if a in found:
            left_out = sorted(finding_fact - set(channels(found[a])))
            if left_out:
                say(ctx, rule, f"with {what}, the fact {a} (its exact topic_key, a word of its summary and its own "
                               f"embedding) lists channels {shown(found[a].get('channels'))}, without "
                               f"{', '.join(map(repr, left_out))}, which found it", reply)
        # which other driven channels found a hit is not visible from outside, except that the
        # topic channel cannot have found a memory without a topic_key
        if b in found and "topic" in channels(found[b]):
            say(ctx, rule, f"with {what}, the event {b} (no topic_key) is attributed to the topic channel", reply)
    if not observed and no_findings(ctx):
        raise NotApplicable("no recall found anything, so no attribution could be judged (judged by the channel "
                            "checks)")


# -- supersession in recall --------------------------------------------------------------------------

def superseded_pair(ctx: Any, prof: str, w: str, topic: str) -> tuple[str, str]:
    """A fact replaced by a newer one under the same topic_key, both holding `w`: (old, new)."""
    (old,) = place(ctx, prof, [mem("fact", f"{w} vegetarian since 2024", topic_key=topic)], "placing the first fact")
    reply = ingest(ctx, prof, [mem("fact", f"{w} vegan since 2026", topic_key=topic)], "placing the second fact")
    new = str(reply.result(0).get("id"))
    if old not in (reply.result(0).get("superseded") or []):
        raise NotApplicable(f"the second fact under {topic!r} did not report superseding the first "
                            f"({reply.describe()}; judged by memoturn/fact-supersedes)")
    return old, new


@check("memoturn/recall-hides-superseded", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-hides-superseded",),
       title="Recall returns only the active memory of a superseded chain")
def recall_hides_superseded(ctx: Any) -> None:
    rule = "memoturn/recall-hides-superseded"
    prof = profile("hide")
    w, topic = word(), f"user.{word('t')}"
    old, new = superseded_pair(ctx, prof, w, topic)
    seen_new = False
    for what, params in (("topic_key", {"topic_key": topic}), ("query", {"query": w})):
        reply, hits = judged_recall(ctx, prof, params, rule, f"a recall by {what}")
        if hits is None:
            continue
        if old in ids_of(hits):
            say(ctx, rule, f"the recall by {what} answered the superseded fact {old} (superseded by {new})", reply)
        seen_new = seen_new or new in ids_of(hits)
    # every channel hides it: a chain whose facts carry embeddings, recalled by the replaced fact's own
    # embedding alone (a blind red team, round 26: the vector channel did not drop superseded rows)
    vtopic = f"user.{word('t')}"
    first = ctx.client.ingest(prof, [mem("fact", f"{word()} drinks coffee", topic_key=vtopic, embedding=unit(6))])
    second = ctx.client.ingest(prof, [mem("fact", f"{word()} drinks tea", topic_key=vtopic,
                                          embedding=unit(7))]) if first.ok else first
    vold = first.result().get("id") if first.ok else None
    if not second.ok:
        ctx.note(f"a fact with an embedding, or its successor with another, was not taken ({second.describe()}): the "
                 "vector channel's hiding was not judged (embeddings are memoturn/recall-vector-channel's)")
    if second.ok and vold in (second.result().get("superseded") or []):
        reply, hits = judged_recall(ctx, prof, {"embedding": unit(6)}, rule,
                                    "a recall by the replaced fact's own embedding alone")
        if hits is not None:
            seen_new = seen_new or bool(hits)
            if vold in ids_of(hits):
                say(ctx, rule, f"the recall by embedding alone answered the superseded fact {vold} (superseded by "
                               f"{second.result().get('id')}), whose own embedding it was", reply)
    if not seen_new and no_findings(ctx):
        raise NotApplicable("neither recall found the active fact either, so hiding was not observed (judged by "
                            "memoturn/recall-topic-channel and memoturn/recall-keyword-channel)")


@check("memoturn/include-superseded", spec="memoturn", bindings=LIVE, requirements=("memoturn/include-superseded",),
       title="include_superseded: true exposes the superseded row")
def include_superseded(ctx: Any) -> None:
    rule = "memoturn/include-superseded"
    prof = profile("incl")
    w, topic = word(), f"user.{word('t')}"
    old, new = superseded_pair(ctx, prof, w, topic)
    # by query: recall.md's topic channel looks over active memories only, the keyword channel over every row
    reply, hits = judged_recall(ctx, prof, {"query": w, "include_superseded": True}, rule,
                                "a recall by query with include_superseded: true")
    if hits is None:
        return
    found = by_id(hits)
    if old not in found and new not in found:
        raise NotApplicable(f"the query {w!r} found neither fact of the chain, the active one included: the keyword "
                            f"channel shows nothing to judge ({reply.describe()}; judged by memoturn/recall-keyword-channel)")
    if old not in found:
        say(ctx, rule, f"with include_superseded: true, the superseded fact {old}, whose summary holds the query "
                       f"word, was not answered", reply)
    elif "superseded_by" in found[old] and found[old]["superseded_by"] != new:
        say(ctx, rule, f"the superseded fact is answered with superseded_by {shown(found[old]['superseded_by'])}, "
                       f"not {new}, the fact that replaced it", reply)


# -- k and empty answers -------------------------------------------------------------------------------

@check("memoturn/recall-k", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-k",),
       title="k caps the hits (default 8) and recall never pads")
def recall_k(ctx: Any) -> None:
    rule = "memoturn/recall-k"
    prof = profile("k")
    w, v, topic = word(), word(), f"user.{word('t')}"
    memories = [mem("event", f"{w} entry number {i}") for i in range(10)]
    memories += [mem("event", f"{v} rare entry {i}") for i in range(2)]
    memories.append(mem("fact", "works remotely", topic_key=topic))
    ids = place(ctx, prof, memories)
    rare, fact = set(ids[10:12]), ids[12]
    # api-rest.md: "recall `k` and result limits clamp to 1,000": a k above it is clamped, not refused (round 21)
    for what, params, want in (("no k", {"query": w}, model.RECALL_DEFAULT_K), ("k: 3", {"query": w, "k": 3}, 3),
                               ("k: 5000, which clamps to 1,000", {"query": w, "k": 5000}, 10)):
        reply, hits = judged_recall(ctx, prof, params, rule, f"a recall with {what}")
        if hits == []:
            raise NotApplicable(f"the query {w!r} found none of the ten memories holding it: nothing for k to cap "
                                f"({reply.describe()}; judged by memoturn/recall-keyword-channel)")
        if hits is not None and len(hits) != want:
            say(ctx, rule, f"ten memories hold the query word and the recall sent {what}: {len(hits)} hits came back, "
                           f"not {want}", reply)
    # padding: what comes back beyond the matches can only be the vector channel's (auto-embedding)
    reply, hits = judged_recall(ctx, prof, {"query": v}, rule, "a recall of a word two memories hold")
    if hits is not None:
        padded = [h.get("id") for h in hits if h.get("id") not in rare and "vector" not in channels(h)]
        if padded:
            say(ctx, rule, f"two memories hold {v!r}, and the recall also answered {shown(padded)}, which do not hold "
                           f"it and were not found by the vector channel: recall never pads to reach k", reply)
    reply, hits = judged_recall(ctx, prof, {"topic_key": topic, "k": 5}, rule, "a recall by a topic_key one fact holds")
    if hits is not None and [i for i in ids_of(hits) if i != fact]:
        say(ctx, rule, f"one fact is filed under {topic!r} and only the topic channel was driven, yet the recall "
                       f"answered {len(hits)} hits: recall never pads to reach k", reply)


@check("memoturn/recall-empty-valid", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-empty-valid",),
       title="A recall that matches nothing answers memories: []")
def recall_empty_valid(ctx: Any) -> None:
    rule = "memoturn/recall-empty-valid"
    prof = profile("empty")
    place(ctx, prof, [mem("fact", f"{word()} likes cats", topic_key=f"user.{word('t')}")])
    nothing = f"user.{word('none')}"
    reply, hits = judged_recall(ctx, prof, {"topic_key": nothing}, rule, f"a recall by topic_key {nothing!r}, "
                                                                         f"which no memory holds")
    if hits:
        say(ctx, rule, f"no memory is filed under {nothing!r}, yet the recall answered {len(hits)} hits", reply)
    w = word("none")
    reply, hits = judged_recall(ctx, prof, {"query": w}, rule, f"a recall by the word {w!r}, which no memory holds")
    stray = [h.get("id") for h in hits or [] if "vector" not in channels(h)]
    if stray:
        say(ctx, rule, f"no memory holds {w!r}, yet the recall answered {shown(stray)}, not found by the vector "
                       f"channel either", reply)


@check("memoturn/recall-unknown-profile", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-unknown-profile",),
       title="Recall against a profile never written answers {\"memories\": [], \"txid\": 0} and creates nothing")
def recall_unknown_profile(ctx: Any) -> None:
    rule = "memoturn/recall-unknown-profile"
    prof = profile("never")
    for what in ("a recall against a profile never written", "a second recall against that profile"):
        reply = served(ctx.client.recall(prof, {"query": word(), "topic_key": f"user.{word('t')}"}))
        if not reply.ok:
            say(ctx, rule, f"{what} was refused; recall.md answers {{\"memories\": [], \"txid\": 0}}", reply)
            return
        body = reply.body if isinstance(reply.body, dict) else {}
        hits, txid = body.get("memories"), body.get("txid")
        if hits != [] or not model.is_integer(txid) or txid != 0:
            # after a first recall, a txid above 0 or any hit means the first one wrote something
            say(ctx, rule, f"{what} answered memories {shown(hits)} and txid {shown(txid)}, not [] and 0", reply)
            return
    # "without creating anything": where the namespace's profiles can be listed (api-rest.md GET
    # /v1/memory/{ns}, mcp.md memory_profiles_list; a namespace token's route, so it may be refused),
    # the profile recalled is not among them (a blind red team, round 21: recall created it at txid 0)
    # a profile written just before is the listing's control: a listing that leaves it out shows nothing,
    # and a profile missing from it would pass on absence
    written = profile("listed")
    place(ctx, written, [mem("fact", f"{word()} a fact", topic_key=f"user.{word('t')}")],
          "placing a memory in a second profile, the listing's control")
    listing = ctx.client.profiles()
    if not listing.ok:
        ctx.note(f"the namespace's profiles could not be listed ({listing.describe()}): whether the recalls created "
                 "the profile was seen through their txid only")
        return
    if not mentions(listing.body, written):
        ctx.note(f"the namespace's profile listing does not name {written!r}, written just before it, so it cannot "
                 "tell whether the recalls created a profile: that was seen through their txid only")
        return
    if mentions(listing.body, prof):
        say(ctx, rule, f"after two recalls against the profile {prof!r}, never written, the namespace's profile listing "
                       "names it: the recall created it", listing)


# -- filters -----------------------------------------------------------------------------------------

@check("memoturn/recall-types-filter", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-types-filter",),
       title="types restricts recall to those types")
def recall_types_filter(ctx: Any) -> None:
    rule = "memoturn/recall-types-filter"
    prof = profile("types")
    w = word()
    placed = dict(zip(place(ctx, prof, [mem("fact", f"{w} fact", topic_key=f"user.{word('t')}"),
                                        mem("event", f"{w} event"),
                                        mem("instruction", f"{w} instruction", topic_key=f"style.{word('t')}"),
                                        mem("task", f"{w} task")]),
                      model.TYPES))
    baseline(ctx, prof, {"query": w}, {i: f"the {t}" for i, t in placed.items()}, "the unfiltered recall")
    for types in (["fact"], ["event", "task"], ["instruction"]):
        reply, hits = judged_recall(ctx, prof, {"query": w, "types": types}, rule, f"a recall with types {types}")
        if hits is None:
            continue
        # a hit is judged by the type it claims and, for the memories placed here, by the type sent
        outside = [f"{h.get('id')} ({h.get('type')})" for h in hits
                   if h.get("type") not in types or (h.get("id") in placed and placed[h.get("id")] not in types)]
        if outside:
            say(ctx, rule, f"with types {types}, the recall answered {', '.join(outside)}", reply)
        dropped = [t for i, t in placed.items() if t in types and i not in ids_of(hits)]
        if dropped:
            say(ctx, rule, f"with types {types}, the recall left out the {', '.join(dropped)} holding the query word, "
                           f"which the unfiltered recall found", reply)
    # The filter holds on every channel: a fact and an instruction under one topic_key (supersession is
    # keyed by type, so both stay active), found by the topic channel alone (round 21: types applied to
    # the keyword channel only)
    shared = f"user.{word('t')}"
    tfact, tinstr = place(ctx, prof, [mem("fact", "prefers short answers", topic_key=shared),
                                      mem("instruction", "answer briefly", topic_key=shared)],
                          "a fact and an instruction under one topic_key")
    baseline(ctx, prof, {"topic_key": shared}, {tfact: "the fact", tinstr: "the instruction"},
             "the unfiltered recall by topic_key")
    reply, hits = judged_recall(ctx, prof, {"topic_key": shared, "types": ["fact"]}, rule,
                                f"a recall by topic_key {shared!r} with types ['fact']")
    if hits is not None:
        if tinstr in ids_of(hits):
            say(ctx, rule, f"with types ['fact'], the recall by topic_key answered the instruction {tinstr} filed "
                           "under the same key: the filter was not applied to the topic channel", reply)
        if tfact not in ids_of(hits):
            say(ctx, rule, f"with types ['fact'], the recall by topic_key left out the fact {tfact}, which the "
                           "unfiltered recall found", reply)
    # The filter chooses among what matches, before k cuts: a fact between four events that hold the
    # query word three times each (two written before it, two after, so neither a newest-first nor an
    # oldest-first tie order puts it in the first two) is still the one fact a recall with types
    # [fact], k 2 finds. (Four, not more: an engine that over-fetches before it filters reaches it.)
    v = word()
    decoys = [mem("event", f"{v} {v} {v} event {i}") for i in range(4)]
    *early, lone, late1, late2 = place(ctx, prof, decoys[:2] + [mem("fact", f"{v} fact", topic_key=f"user.{word('t')}")]
                                       + decoys[2:], "two events, a fact, two events, the events holding its word "
                                                     "more often")
    decoys = [*early, late1, late2]
    baseline(ctx, prof, {"query": v, "k": 8}, {lone: "the fact", **{d: "an event" for d in decoys}},
             "the unfiltered recall of the five")
    reply, hits = judged_recall(ctx, prof, {"query": v, "types": ["fact"], "k": 2}, rule,
                                "a recall with types ['fact'] and k 2")
    if hits is not None and lone not in ids_of(hits):
        say(ctx, rule, f"with types ['fact'] and k 2, the recall left out the one fact holding the query word "
                       f"({lone}): the filter was applied after k cut the events that outrank it", reply)


@check("memoturn/recall-session-filter", spec="memoturn", bindings=LIVE,
       requirements=("memoturn/recall-session-filter",),
       title="session_id restricts recall to memories ingested with that session")
def recall_session_filter(ctx: Any) -> None:
    rule = "memoturn/recall-session-filter"
    if ctx.binding == "mcp":
        # mcp.md's memory_recall lists no session_id: judged where the server's tool takes one
        listed = getattr(ctx.client, "tool_parameters", lambda op: None)("recall")
        if listed is not None and "session_id" not in listed:
            raise Waived(f"the server's memory_recall lists no session_id among its arguments ({sorted(listed)}); "
                         f"mcp.md's memory_recall takes none, so a server may leave the filter to REST")
    prof = profile("sess")
    w, s1, s2 = word(), f"s-{word('s')}", f"s-{word('s')}"
    # a session id differing from s1 in case only is another session (a blind red team, round 30: the
    # filter compared case-insensitively)
    cased = s1.upper()
    one, two, none, upper = place(ctx, prof, [mem("event", f"{w} deployed v2", session_id=s1),
                                              mem("event", f"{w} rolled back v2", session_id=s2),
                                              mem("fact", f"{w} prefers staging first"),
                                              mem("event", f"{w} paused the deploy", session_id=cased)])
    names = {one: f"the event of session {s1!r}", two: f"the event of session {s2!r}",
             none: "the fact without a session", upper: f"the event of session {cased!r}"}
    baseline(ctx, prof, {"query": w}, names, "the unfiltered recall")
    reply, hits = judged_recall(ctx, prof, {"query": w, "session_id": s1}, rule, f"a recall with session_id {s1!r}")
    if hits is None:
        return
    others = [names.get(i, str(i)) for i in ids_of(hits) if i != one]
    if others:
        say(ctx, rule, f"with session_id {s1!r}, the recall also answered {', '.join(others)}", reply)
    if one not in ids_of(hits):
        say(ctx, rule, f"with session_id {s1!r}, the recall left out {names[one]}, which the unfiltered recall found",
            reply)
    # every channel: two events with one embedding, one per session, found by the vector channel alone
    # (round 21: the filter was missing from the vector channel)
    pair = [mem("event", f"{word()} paged the on-call", session_id=s1, embedding=unit(3)),
            mem("event", f"{word()} silenced the pager", session_id=s2, embedding=unit(3))]
    placed = ingest_carrying(ctx, prof, pair, "embedding", rule, "two events of two sessions with one embedding")
    if placed is None:
        return
    v1, v2 = (str(placed.result(i).get("id")) for i in range(2))
    vnames = {v1: f"the event of session {s1!r} with the embedding", v2: f"the event of session {s2!r} with it"}
    baseline(ctx, prof, {"embedding": unit(3)}, vnames, "the unfiltered recall by embedding")
    reply, hits = judged_recall(ctx, prof, {"embedding": unit(3), "session_id": s1}, rule,
                                f"a recall by embedding with session_id {s1!r}")
    if hits is not None and v2 in ids_of(hits):
        say(ctx, rule, f"with session_id {s1!r}, the recall by embedding answered {vnames[v2]}: the filter was not "
                       "applied to the vector channel", reply)


@check("memoturn/recall-source-filter", spec="memoturn", bindings=LIVE, requirements=("memoturn/recall-source-filter",),
       title="source restricts recall to one agent's memories")
def recall_source_filter(ctx: Any) -> None:
    rule = "memoturn/recall-source-filter"
    prof = profile("src")
    w, a, b = word(), f"agent-{word('a')}", f"agent-{word('b')}"
    # a source whose name begins with a's ("claude" and "claude-code"): matched as written, never by prefix
    longer = f"{a}-code"
    # and a source that differs from a's in case only: free-form, so another agent (a blind red team,
    # round 26: the filter compared case-insensitively)
    cased = a.capitalize()
    mine, theirs, unsourced, prefixed, upper = place(ctx, prof, [mem("fact", f"{w} prefers tabs", source=a),
                                                                 mem("event", f"{w} reformatted the repo", source=b),
                                                                 mem("event", f"{w} opened the project"),
                                                                 mem("event", f"{w} ran the linter", source=longer),
                                                                 mem("event", f"{w} closed the editor", source=cased)])
    names = {mine: f"the memory from {a!r}", theirs: f"the memory from {b!r}", unsourced: "the memory without a source",
             prefixed: f"the memory from {longer!r}", upper: f"the memory from {cased!r}"}
    baseline(ctx, prof, {"query": w}, names, "the unfiltered recall")
    reply, hits = judged_recall(ctx, prof, {"query": w, "source": a}, rule, f"a recall with source {a!r}")
    if hits is None:
        return
    others = [names.get(i, str(i)) for i in ids_of(hits) if i != mine]
    if others:
        say(ctx, rule, f"with source {a!r}, the recall also answered {', '.join(others)}", reply)
    if mine not in ids_of(hits):
        say(ctx, rule, f"with source {a!r}, the recall left out {names[mine]}, which the unfiltered recall found",
            reply)
    # The filter chooses among what matches, before k cuts: one memory from b between four from a that
    # hold the query word three times each (two before, two after: whatever the tie order) is still
    # what a recall with source b and k 2 finds.
    v = word()
    crowd = [mem("event", f"{v} {v} {v} note {i}", source=a) for i in range(4)]
    *early, lone, late1, late2 = place(ctx, prof, crowd[:2] + [mem("event", f"{v} note", source=b)] + crowd[2:],
                                       f"two events from {a!r}, one from {b!r}, two from {a!r}")
    baseline(ctx, prof, {"query": v, "k": 8}, {lone: f"the memory from {b!r}",
                                               **{d: f"a memory from {a!r}" for d in (*early, late1, late2)}},
             "the unfiltered recall of the five")
    reply, hits = judged_recall(ctx, prof, {"query": v, "source": b, "k": 2}, rule,
                                f"a recall with source {b!r} and k 2")
    if hits is not None and lone not in ids_of(hits):
        say(ctx, rule, f"with source {b!r} and k 2, the recall left out the one memory from {b!r} holding the query "
                       f"word ({lone}): the filter was applied after k cut the memories that outrank it", reply)
    # source is a free-form value matched as written: a pattern no memory carries matches none
    # (a filter built as SQL LIKE reads % and _ as wildcards)
    for pattern in (a[:6] + "%", a[:-1] + "_"):
        reply, hits = judged_recall(ctx, prof, {"query": w, "source": pattern}, rule, f"a recall with source {pattern!r}")
        if hits is not None and ids_of(hits):
            say(ctx, rule, f"with source {pattern!r}, which no memory carries, the recall answered "
                           f"{', '.join(names.get(i, str(i)) for i in ids_of(hits))}", reply)
