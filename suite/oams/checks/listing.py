"""LIST, FORGET and BATCH_STORE (§3), and the error shape: order by updated_at desc, complete
paging by cursor, the since/tags filters, forget (hard, or soft and hidden) with REST's 204, the
atomic batch, and §3's error shape on every binding."""

from __future__ import annotations

import json
from typing import Any, NoReturn

from memconform.suite.oams import model
from memconform.suite.oams.checks._common import (LIVE, error_shape_problem, judge_error, key, keys_of, listed,
                                                  find, namespace, precondition, recalled, say,
                                                  seed_as_given, served)
from memconform.suite.oams.checks.recall import seed
from memconform.suite.oams.client import list_every, shown
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check


def _dated(ns: str, n: int, tag: str, **extra: Any) -> list[dict[str, Any]]:
    """n memories with distinct updated_at (stored out of order): day 1..n of March 2026."""
    order = list(range(1, n + 1))
    order = order[1::2] + order[0::2]
    return [model.new_memory(ns, f"{tag}-{d:02d}", f"{tag} memory of day {d}", created_at=f"2026-03-{d:02d}T10:00:00Z",
                             updated_at=f"2026-03-{d:02d}T10:00:00Z", **extra) for d in order]


def _order_problem(items: list[Any]) -> str | None:
    times = [model.parse_time(m.get("updated_at")) if isinstance(m, dict) else None for m in items]
    for i in range(1, len(times)):
        if times[i - 1] is None or times[i] is None:
            return f"item {i - 1 if times[i - 1] is None else i} has no RFC 3339 updated_at"
        if times[i] > times[i - 1]:
            return (f"{items[i].get('key')!r} (updated {items[i].get('updated_at')}) comes after "
                    f"{items[i - 1].get('key')!r} (updated {items[i - 1].get('updated_at')})")
    return None


@check("oams/list-order", spec="oams", bindings=LIVE, requirements=("oams/list-sorted", "oams/list-endpoint"),
       title="LIST answers memories sorted by updated_at descending")
def list_order(ctx: Any) -> None:
    ctx.credit_only_observed()  # a LIST refused, or of fewer than two memories, shows no order
    ns = namespace(ctx, tag="order")
    seed(ctx, _dated(ns, 5, "order"))
    paged = _every_page(ctx, ns, "oams/list-endpoint", "LIST of a namespace holding five memories")
    if paged is None:
        return
    items, reply = paged
    ctx.observed("oams/list-endpoint")  # the keys it answered are compared below
    if len(items) >= 2:
        ctx.observed("oams/list-sorted")
    else:
        ctx.note(f"LIST answered {len(items)} memory: no order to judge")
    problem = _order_problem(items)
    if problem:
        say(ctx, "oams/list-sorted", f"not sorted by updated_at desc: {problem}", reply)
    if sorted(keys_of(items)) != sorted(f"order-{d:02d}" for d in range(1, 6)):
        say(ctx, "oams/list-endpoint", f"LIST answered keys {keys_of(items)}, not the five stored", reply)
    _order_of_spellings(ctx)


#: One second's memories, each updated_at spelled its own way (no fraction, fraction digits of different
#: lengths, +00:00), newest first. As text they sort otherwise ("…00Z" after "…00.750+00:00"): a LIST
#: ordered by the column as written is found by the blind red team.
SPELLINGS = (("at-0.75", "2026-03-01T10:00:00.75+00:00"), ("at-0.5", "2026-03-01T10:00:00.5Z"),
             ("at-0.25", "2026-03-01T10:00:00.250Z"), ("at-0", "2026-03-01T10:00:00Z"))


def _order_of_spellings(ctx: Any) -> None:
    """LIST orders by the instant, not by the text: four memories within one second, their updated_at
    given in four spellings. A server may store a time in its own spelling (the same instant): the
    order is judged on the instants LIST answers, and against the order of the instants given."""
    ns = namespace(ctx, tag="order-spelt")
    memories = [model.new_memory(ns, k, f"spelt memory {k}", created_at=t, updated_at=t)
                for k, t in reversed(SPELLINGS)]
    seed_as_given(ctx, memories)  # not applicable when the given instants are not kept
    paged = _every_page(ctx, ns, "oams/list-endpoint", "LIST of a namespace holding four memories of one second")
    if paged is None:
        return
    items, reply = paged
    want = [k for k, _t in SPELLINGS]
    got = keys_of(items)
    if sorted(got, key=str) != sorted(want):
        ctx.note(f"LIST of {ns!r} answered keys {got}, not the four stored: the order of spellings is judged on "
                 "what it listed")
    problem = _order_problem(items)
    if problem or (sorted(got, key=str) == sorted(want) and got != want):
        given = ", ".join(f"{k!r} {t}" for k, t in SPELLINGS)
        say(ctx, "oams/list-sorted", f"four memories given updated_at within one second ({given}) are listed "
                                     f"{got}" + (f": {problem}" if problem else "") + f"; by instant, newest first, "
                                     f"they are {want} (a time's spelling is not its order)", reply)


class _Refused(Exception):
    """A page was refused or was no page: said already, the walk ends."""


def _every_page(ctx: Any, ns: str, rule: str, what: str, *, unserved_skips: bool = False,
                replies: list[Any] | None = None, **filters: Any) -> tuple[list[Any], Any] | None:
    """Every memory LIST shows for `ns` without a limit (client.list_every: §3 fixes no page size,
    so a server may answer fewer than all with a cursor), and the last reply; None when a page was
    refused or was no page (said under `rule`; with `unserved_skips` a LIST that is not served at all
    makes the check not applicable instead). `replies`, when given, receives each page's reply."""
    replies = [] if replies is None else replies

    def refused(reply: Any, how: str | None) -> NoReturn:
        if unserved_skips:
            served(reply)
        page_of = f"{what}, page {len(replies)}" if len(replies) > 1 else what
        say(ctx, rule, f"{page_of} was refused" if how is None else f"{page_of} answered {how}, not a page of memories",
            reply)
        raise _Refused

    try:
        items = list_every(ctx.client, ns, refused, replies, **filters)
    except _Refused:
        return None
    return items, replies[-1]


def _walked_in_order(ctx: Any, ns: str, limit: int, want: list[str], replies: list[Any]) -> bool:
    """Follow the cursor of `ns` with `limit`; say oams/list-paging when the keys are not `want`, each
    once, newest first. False when the walk could not be made."""
    walked = _walk(ctx, ns, limit, replies=replies)
    if walked is None:
        return False
    _items, pages, last = walked
    got = [k for page in pages for k in page]
    if got != want:
        say(ctx, "oams/list-paging", f"following the cursor of {ns!r} with limit {limit} yielded {got} over "
                                     f"{len(pages)} page(s) {pages}; expected each of the seven once, newest "
                                     f"first: {want}", last)
    return True


def _walk(ctx: Any, ns: str, limit: int, max_pages: int = 10,
          replies: list[Any] | None = None) -> tuple[list[Any], list[list[Any]], Any] | None:
    """Follow LIST's cursor over `ns` with `limit`: every item, the keys page by page, and the last
    reply; None when a page was refused or broke the limit (said). `replies`, when given, receives
    each page's reply."""
    items: list[Any] = []
    pages: list[list[Any]] = []
    cursor, seen, reply = None, set(), None
    while len(pages) < max_pages:
        reply = served(ctx.client.list(ns, cursor=cursor, limit=limit))
        if replies is not None:
            replies.append(reply)
        n = len(pages) + 1
        if not reply.ok:
            say(ctx, "oams/list-paging", f"page {n} of {ns!r} (limit {limit}, cursor {cursor!r}) was refused", reply)
            return None
        page, how = reply.memories()
        if page is None:
            say(ctx, "oams/list-paging", f"page {n} of {ns!r} holds {how}", reply)
            return None
        if len(page) > limit:
            say(ctx, "oams/list-paging", f"page {n} of {ns!r} holds {len(page)} memories with limit {limit}", reply)
            return None
        items.extend(page)
        pages.append(keys_of(page))
        cursor = reply.cursor()
        if not cursor:
            break
        if str(cursor) in seen:
            say(ctx, "oams/list-paging", f"the cursor {cursor!r} came back twice", reply)
            return None
        seen.add(str(cursor))
    return items, pages, reply


#: the instant the ties case's memories share (given, as §3's STORE lets a client give it)
TIE = "2026-03-15T10:00:00Z"
#: the bulk case: more memories than a server's page cap is likely to be (20 is a common one), walked
#: with a limit above them all
BULK, BULK_LIMIT = 25, 50
#: the members a listed memory is compared on with what was stored (the times are the order's)
COMPARED = ("namespace", "value", "tags", "metadata", "parent_id", "embedding", "embedding_model")


def _with_provenance(memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The memories, each with a source_id of its own, tags and metadata (what an export carries)."""
    for i, m in enumerate(memories):
        m.update(source_id=f"https://example.com/export/{m['key']}", tags=["paged", f"n{i}"],
                 metadata={"language": "en", "confidence": 0.5})
    return memories


def _compare_listed(ctx: Any, stored: dict[str, Any], replies: list[Any], what: str) -> None:
    """Each listed memory, page by page, against what STORE/BATCH_STORE answered for it: source_id
    under oams/export-keeps-source-id (§5 "MUST NOT strip"), the other members under oams/list-paging
    (a walk of LIST, "used for export and audit", yields the memories stored, not others). One
    finding a page and rule, with that page's request and answer."""
    for n, reply in enumerate(replies, 1):
        stripped, changed = [], []
        for got in reply.memories()[0] or ():
            want = stored.get(got.get("key")) if isinstance(got, dict) else None
            if want is None:
                continue
            if "source_id" in want and got.get("source_id", "<missing>") != want["source_id"]:
                stripped.append(f"{got['key']!r} with source_id {got.get('source_id', '<missing>')!r} (stored with "
                                f"{want['source_id']!r})")
            diffs = model.same_memory_fields(want, got, tuple(f for f in COMPARED if f in want), read=True)
            if diffs:
                changed.append(f"{got['key']!r}: " + "; ".join(diffs))
        page = f"{what}, page {n}" + (" (fetched with the cursor the page before gave)" if n > 1 else "")
        if stripped:
            say(ctx, "oams/export-keeps-source-id", f"{page} lists " + ", ".join(stripped[:5])
                + (f" and {len(stripped) - 5} more" if len(stripped) > 5 else "")
                + ": LIST is \"used for export and audit\", every page of it", reply)
        if changed:
            say(ctx, "oams/list-paging", f"{page} lists memories other than they were stored (as STORE/BATCH_STORE "
                                         "answered them): " + " | ".join(changed[:3])
                + (f" and {len(changed) - 3} more" if len(changed) > 3 else ""), reply)


@check("oams/list-paging", spec="oams", bindings=LIVE, requirements=("oams/list-paging", "oams/export-keeps-source-id"),
       title="LIST honours limit, and following the cursor yields every memory exactly once, in order and as stored "
             "(source_id kept) on every page: memories sharing an updated_at across a page boundary, and more "
             "memories than a page cap, too")
def list_paging(ctx: Any) -> None:
    # every fixture is placed (and its given times checked) before anything is judged
    ns = namespace(ctx, tag="pages")
    stored = seed_as_given(ctx, _with_provenance(_dated(ns, 7, "page")))
    # ties: five memories with one updated_at, pages of two, so both page boundaries fall among them. A
    # cursor that is the last row's updated_at alone (the next page "strictly older") loses the rest.
    ns_ties = namespace(ctx, tag="ties")
    ties = [model.new_memory(ns_ties, f"tie-{i}", f"tied memory {i}", created_at=TIE, updated_at=TIE)
            for i in (3, 0, 4, 1, 2)]
    stored_ties = seed_as_given(ctx, ties)
    # bulk: more memories than a page cap, one BATCH_STORE, a limit above them all. A server may answer
    # fewer than asked, but then its cursor must lead to the rest.
    ns_bulk = namespace(ctx, tag="bulk")
    stored_bulk = seed_as_given(ctx, _with_provenance(_dated(ns_bulk, BULK, "bulk")))

    # a namespace that begins with ns's name: LIST of ns lists ns's memories only (round 25: a LIKE 'ns%')
    sibling = model.new_memory(ns + "2", "page-sibling", "a memory of the namespace one character longer")
    precondition(ctx.client.store(sibling), f"storing {sibling['key']!r} in {sibling['namespace']!r}")
    want = [f"page-{d:02d}" for d in range(7, 0, -1)]
    replies: list[Any] = []
    if _walked_in_order(ctx, ns, 3, want, replies):
        _compare_listed(ctx, stored, replies, f"{ns!r} listed with limit 3, the cursor followed")
    _listed_alone(ctx, ns, sibling)
    _negative_limit(ctx, ns, want)
    # limit 1, the smallest: a server whose own pages are short (two a page, whatever the limit) honours a
    # limit of 3 by itself; only a limit below its page size shows whether the limit is read at all
    _walked_in_order(ctx, ns, 1, want, [])
    replies = []
    walked = _walk(ctx, ns_ties, 2, replies=replies)
    if walked is not None:
        _items, pages, last = walked
        got = [k for page in pages for k in page]
        want = sorted(m["key"] for m in ties)
        if sorted(got, key=str) != want:
            say(ctx, "oams/list-paging", f"five memories sharing updated_at {TIE}, listed from {ns_ties!r} with "
                                         f"limit 2 and the cursor followed: pages {pages}"
                                         + _not_each_once(got, want)
                                         + f"; expected each of {want} exactly once (an export or audit walks every "
                                           "memory)", last)
        _compare_listed(ctx, stored_ties, replies, f"{ns_ties!r} listed with limit 2, the cursor followed")
    replies = []
    walked = _walk(ctx, ns_bulk, BULK_LIMIT, max_pages=40, replies=replies)
    if walked is not None:
        _items, pages, last = walked
        got = [k for page in pages for k in page]
        want = sorted(stored_bulk)
        if sorted(got, key=str) != want:
            say(ctx, "oams/list-paging", f"{BULK} memories stored in {ns_bulk!r} with one BATCH_STORE, listed with "
                                         f"limit {BULK_LIMIT} and the cursor followed: {len(pages)} page(s) of "
                                         f"{[len(p) for p in pages]} memories, the last answering cursor "
                                         f"{shown(last.cursor())}"
                                         + _not_each_once(got, want, "never reachable")
                                         + f"; expected each of the {BULK} exactly once (a server may answer fewer "
                                           "than the limit asks, but then its cursor must lead to the rest: an "
                                           "export or audit walks every memory)", last)
        _compare_listed(ctx, stored_bulk, replies, f"{ns_bulk!r} listed with limit {BULK_LIMIT}, the cursor followed")
        fullest = max((len(p) for p in pages), default=0)
        if 0 < fullest < BULK and sorted(got, key=str) == want:
            ctx.note(f"with limit {BULK_LIMIT}, LIST of {ns_bulk!r} answered pages of at most {fullest} memories (its own "
                     f"page size): how a page fuller than that would keep its cursor to the rest (a page cut after "
                     f"its cursor was made) was not seen")


def _negative_limit(ctx: Any, ns: str, want: list[str], max_pages: int = 10) -> None:
    """LIST with limit -1 is no page size: a server refuses it (-32003, "validation failed", the honest
    answer), or reads it some way of its own, but a listing it takes still leads, by its cursor, to every
    memory (round 25: a negative limit sliced the list from the end, `[:-1]`, and the last memory was lost)."""
    got: list[Any] = []
    cursor, seen, reply = None, set(), None
    for n in range(1, max_pages + 1):
        reply = served(ctx.client.list(ns, cursor=cursor, limit=-1))
        page = reply.memories()[0] if reply.ok else None
        if page is None:
            if n == 1:
                ctx.note(f"LIST of {ns!r} with limit -1 was refused or no page ({reply.describe()[:200]}): a limit "
                         "below 1 refused is the text's -32003 (validation failed)")
            else:
                ctx.note(f"LIST of {ns!r} with limit -1 was taken, but page {n} (with the cursor given) was refused "
                         f"({reply.describe()[:200]}): not judged")
            return
        got.extend(keys_of(page))
        cursor = reply.cursor()
        if not cursor or str(cursor) in seen:
            break
        seen.add(str(cursor))
    else:
        ctx.note(f"LIST of {ns!r} with limit -1, the cursor followed, had not ended after {max_pages} pages: not judged")
        return
    missing = [k for k in want if k not in got]
    if missing:
        say(ctx, "oams/list-paging", f"LIST of {ns!r} (seven memories) with limit -1 was taken, and following its "
                                     f"cursor yielded {got}; never listed: {missing}. A limit below 1 is refused "
                                     "(-32003, validation failed), or, taken, its listing still leads to every "
                                     "memory", reply)


def _listed_alone(ctx: Any, ns: str, sibling: dict[str, Any]) -> None:
    """LIST of `ns` answers none of the memories of `ns` + "2", a namespace its name begins."""
    paged = _every_page(ctx, ns, "oams/list-paging", f"LIST of {ns!r}")
    if paged is None:
        return
    items, reply = paged
    strays = [m for m in items if isinstance(m, dict) and (m.get("namespace", ns) != ns or m.get("key") == sibling["key"])]
    if strays:
        say(ctx, "oams/list-paging", f"LIST of {ns!r} answered " + ", ".join(
            f"({m.get('namespace')!r}, {m.get('key')!r})" for m in strays[:3]) + f", of {sibling['namespace']!r}, a "
            "namespace whose name begins with the one listed: LIST of a namespace lists that namespace's memories "
            "only (a namespace is matched whole)", reply)


def _not_each_once(got: list[Any], want: list[Any], lost: str = "never listed") -> str:
    """What a walk that should yield each of `want` once got wrong: the keys it lost, those it repeated."""
    missing = [k for k in want if k not in got]
    twice = sorted({k for k in got if got.count(k) > 1}, key=str)
    return (f"; {lost}: {missing}" if missing else "") + (f"; listed more than once: {twice}" if twice else "")


def _filter_problem(m: Any, filters: dict[str, Any]) -> str | None:
    """Why a listed memory does not meet LIST's since/tags filters (since inclusive, tags any-of,
    case-folded), or None."""
    if not isinstance(m, dict):
        return f"{shown(m)} is no memory"
    since = filters.get("since")
    if since is not None:
        t = model.parse_time(m.get("updated_at"))
        if t is None or t < model.parse_time(since):  # type: ignore[operator]
            return f"{m.get('key')!r} has updated_at {m.get('updated_at')!r}, before since {since}"
    tags = filters.get("tags")
    if tags is not None and not {str(t).lower() for t in tags} & {str(t).lower() for t in m.get("tags") or ()}:
        return f"{m.get('key')!r} has tags {shown(m.get('tags'))}, none of {tags}"
    return None


@check("oams/list-filters", spec="oams", bindings=LIVE, requirements=("oams/list-filters",),
       title="LIST's since and tags narrow the page, on every page a cursor leads to")
def list_filters(ctx: Any) -> None:
    ns = namespace(ctx, tag="lfilter")
    memories = _dated(ns, 4, "lf")
    for m in memories:
        # "uneven" holds "even": a tag is matched whole, not as a substring (a blind red team, round 18)
        m["tags"] = ["even"] if int(m["key"][-2:]) % 2 == 0 else ["odd", "uneven"]
    seed_as_given(ctx, memories)
    for what, filters, want in (("since 2026-03-03", {"since": "2026-03-03T00:00:00Z"}, {"lf-03", "lf-04"}),
                                ("tags even", {"tags": ["even"]}, {"lf-02", "lf-04"})):
        paged = _every_page(ctx, ns, "oams/list-filters", f"LIST with {what}", unserved_skips=True, **filters)
        if paged is None:
            continue
        items, reply = paged
        got = set(keys_of(items))
        if got != want:
            say(ctx, "oams/list-filters", f"LIST with {what} answered {sorted(got)}, expected {sorted(want)}", reply)
            continue
        # the same filter walked one memory a page: the filters bind every page a cursor leads to
        replies: list[Any] = []
        paged = _every_page(ctx, ns, "oams/list-filters", f"LIST with {what} and limit 1", unserved_skips=True,
                            replies=replies, limit=1, **filters)
        if paged is None:
            continue
        items, reply = paged
        for n, page_reply in enumerate(replies, 1):
            bad = [p for p in (_filter_problem(m, filters) for m in page_reply.memories()[0] or []) if p]
            if bad:
                say(ctx, "oams/list-filters", f"LIST with {what} and limit 1, page {n}"
                                              + (" (with the cursor the page before gave)" if n > 1 else "")
                                              + f": {bad[0]}; the filters bind every page of the listing, so "
                                                f"only {sorted(want)} may be listed over all pages", page_reply)
                break
        else:
            got = set(keys_of(items))
            if got != want:
                say(ctx, "oams/list-filters", f"LIST with {what} and limit 1, the cursor followed over "
                                              f"{len(replies)} page(s), answered {sorted(got, key=str)}, expected "
                                              f"{sorted(want)}", reply)
    _since_with_offset(ctx, ns)
    _two_tags(ctx)


#: A since bound with an offset: 2026-03-02T07:00Z, three hours before lf-02's updated_at (10:00Z). As text
#: it sorts after "2026-03-02T10:00:00Z", and its wall clock read as UTC (12:00Z) is after it too.
SINCE_OFFSET = "2026-03-02T12:00:00+05:00"


def _since_with_offset(ctx: Any, ns: str) -> None:
    """since is a time, compared as the instant it names (round 25: LIST compared it with updated_at as
    text). §2 asks times in UTC, so a server may refuse a bound with an offset: noted, not judged."""
    what = f"since {SINCE_OFFSET} (2026-03-02T07:00:00Z, before lf-02's updated_at 2026-03-02T10:00:00Z)"
    replies: list[Any] = []
    reply = served(ctx.client.list(ns, since=SINCE_OFFSET))
    if not reply.ok or reply.memories()[0] is None:
        ctx.note(f"LIST with {what} was refused or no page ({reply.describe()[:200]}): a bound with an offset was not "
                 "judged (§2 asks times in UTC)")
        return
    paged = _every_page(ctx, ns, "oams/list-filters", f"LIST with {what}", replies=replies, since=SINCE_OFFSET)
    if paged is None:
        return
    items, last = paged
    got, want = set(keys_of(items)), {"lf-02", "lf-03", "lf-04"}
    if got != want:
        say(ctx, "oams/list-filters", f"LIST with {what} answered {sorted(got, key=str)}, expected {sorted(want)}: "
                                      "since is the instant it names, its offset applied (not compared as text, "
                                      "nor its wall clock read as UTC)", last)


def _two_tags(ctx: Any) -> None:
    """LIST with two tags uses both (round 25: only the first was read). §3 does not say whether several
    tags are all-of or any-of: with memories tagged [a], [b] and [a, b], both readings are accepted
    (only [a, b]; or all three), anything else fails."""
    ns = namespace(ctx, tag="lfilter2")
    tagged = {"ta": ["ta"], "tb": ["tb"], "tab": ["ta", "tb"]}
    seed_as_given(ctx, [model.new_memory(ns, k, f"tagged {t}", tags=t) for k, t in tagged.items()])
    paged = _every_page(ctx, ns, "oams/list-filters", "LIST with tags ta,tb", unserved_skips=True, tags=["ta", "tb"])
    if paged is None:
        return
    items, reply = paged
    got = set(keys_of(items))
    if not got and ctx.binding == "http":
        ctx.note(f"LIST of {ns!r} with tags=ta,tb (comma-joined in the query) answered nothing: a server reading the "
                 "parameter as one tag 'ta,tb' (§3 does not say how REST spells several) was not judged")
    elif got not in ({"tab"}, {"ta", "tb", "tab"}):
        say(ctx, "oams/list-filters", f"{ns!r} holds 'ta' tagged ['ta'], 'tb' tagged ['tb'] and 'tab' tagged "
                                      f"['ta', 'tb']; LIST with tags ta,tb answered {sorted(got, key=str)}: expected "
                                      "['tab'] (every tag) or ['ta', 'tab', 'tb'] (any tag), a filter using both tags",
            reply)


@check("oams/forget", spec="oams", bindings=LIVE,
       requirements=("oams/forget-endpoint", "oams/forget-204", "oams/forget-gone", "oams/soft-deleted-hidden",
                     "oams/recall-single-namespace"),
       title="FORGET answers success (REST: 204, no body); the memory is then in neither RECALL nor LIST, and the "
             "others stay (the same key in another namespace of the owner too); a RECALL answering that namespace's "
             "memory is charged to the scoping")
def forget(ctx: Any) -> None:
    ctx.credit_only_observed()  # a refused FORGET forgot nothing to look for
    ns = namespace(ctx, tag="forget")
    gone = model.new_memory(ns, key("gone"), "axolotl to forget", tags=[FORGET_TAG])
    kept = model.new_memory(ns, key("kept"), "axolotl kept", tags=[FORGET_TAG])
    # the same key in a sibling namespace of the same owner: (namespace, key) is the memory, not the key
    sibling_ns = namespace(ctx, tag="forget-sibling")
    sibling = model.new_memory(sibling_ns, gone["key"], "axolotl of the sibling namespace")
    seed(ctx, [gone, kept])
    precondition(ctx.client.store(sibling), f"storing {sibling['key']!r} in the sibling namespace {sibling_ns!r}")
    reply = ctx.client.forget(ns, gone["key"])
    success = reply.ok or (reply.status is not None and 200 <= reply.status < 300 and reply.error is None)
    if not success:
        say(ctx, "oams/forget-endpoint", f"FORGET of the stored memory {gone['key']!r} was refused", reply)
        ctx.note("FORGET was refused: its 204 and whether the memory is gone were not judged")
        return
    ctx.observed("oams/forget-endpoint", "oams/forget-gone", "oams/soft-deleted-hidden")  # LIST, RECALL below
    if ctx.binding == "http":
        ctx.observed("oams/forget-204")
    else:
        ctx.note(f"over {ctx.binding} there is no HTTP status: oams/forget-204 binds REST")
    if ctx.binding == "http" and (reply.status != 204 or (reply.received_text or "").strip()):
        say(ctx, "oams/forget-204", f"FORGET answered HTTP {reply.status} with body "
                                    f"{(reply.received_text or '')[:120]!r}, not 204 No Content", reply)
    items = listed(ctx, ns)
    if gone["key"] in keys_of(items):
        for rule in ("oams/forget-gone", "oams/soft-deleted-hidden"):
            say(ctx, rule, f"after FORGET, LIST of {ns!r} still shows {gone['key']!r}", sent=gone, received=items)
    if kept["key"] not in keys_of(items):
        say(ctx, "oams/forget-gone", f"FORGET of {gone['key']!r} also removed {kept['key']!r}", sent=gone, received=items)
    if gone["key"] not in keys_of(items):  # else said above
        _tagged_listing_after_forget(ctx, ns, gone, kept)
    beside = listed(ctx, sibling_ns)
    if sibling["key"] not in keys_of(beside):
        say(ctx, "oams/forget-gone", f"FORGET of ({ns!r}, {gone['key']!r}) also removed ({sibling_ns!r}, "
                                     f"{sibling['key']!r}), the same key in another namespace of the same owner: LIST "
                                     f"of {sibling_ns!r} now answers {keys_of(beside)}. FORGET deletes a memory, and "
                                     "a memory is its (namespace, key) pair (§2: \"The pair (namespace, key) is "
                                     "unique\")", reply, sent={"forgot": [ns, gone["key"]], "stored": sibling},
            received=beside)
    rec = ctx.client.recall({"namespace": ns, "query": "axolotl"})
    precondition(rec, "RECALL after FORGET")
    found = [m for m in recalled(rec) or () if isinstance(m, dict)]
    # a memory of another namespace (the sibling's, with the forgotten key) is a scoping defect, not a
    # forgotten memory found (found by the blind red team: it was blamed on FORGET)
    strays = [m for m in found if isinstance(m.get("namespace"), str) and m["namespace"] != ns]
    if found:
        ctx.observed("oams/recall-single-namespace")  # each answered memory's namespace is compared
    else:
        ctx.note(f"RECALL on {ns!r} after FORGET answered no memory (the one kept holds the query word): what it "
                 "searches was not seen")
    if strays:
        sibling_found = any(m["namespace"] == sibling_ns and m.get("key") == gone["key"] for m in strays)
        say(ctx, "oams/recall-single-namespace",
            f"after FORGET of ({ns!r}, {gone['key']!r}), RECALL on {ns!r} answered memories of other namespaces: "
            + ", ".join(f"({m['namespace']!r}, {m.get('key')!r})" for m in strays)
            + (f" — ({sibling_ns!r}, {gone['key']!r}) is the sibling namespace's memory with the forgotten key, "
               "not the forgotten one" if sibling_found else "")
            + ": RECALL on one namespace answers memories of that namespace only", rec)
    if any(m.get("key") == gone["key"] for m in found if m not in strays):
        for rule in ("oams/forget-gone", "oams/soft-deleted-hidden"):
            say(ctx, rule, f"after FORGET of ({ns!r}, {gone['key']!r}), RECALL on {ns!r} still finds it", rec)
    _stored_again_after_forget(ctx, ns)


def _stored_again_after_forget(ctx: Any, ns: str) -> None:
    """A STORE of a forgotten pair makes a new memory holding what it sent, nothing of the forgotten
    one (round 25: a soft delete whose re-STORE merged the deleted row's tags, metadata and source_id
    back in). Whether its created_at is the old one is left open (docs/catalogue-oams.md)."""
    k = key("again")
    old = model.new_memory(ns, k, "axolotl forgotten for good", tags=["forgotten"], metadata={"forgotten": True},
                           source_id="https://a.example/forgotten")
    forgot = ctx.client.forget(ns, k) if ctx.client.store(old).ok else None
    if forgot is None or not (forgot.ok or (forgot.status is not None and 200 <= forgot.status < 300
                                            and forgot.error is None)):
        ctx.note(f"STORE then FORGET of ({ns!r}, {k!r}) was refused: a STORE after FORGET was not tried")
        return
    memory = model.new_memory(ns, k, "axolotl written anew")
    reply = ctx.client.store(memory)
    if not reply.ok:
        ctx.note(f"STORE of the forgotten pair ({ns!r}, {k!r}) was refused ({reply.describe()[:200]}): not judged")
        return
    for where, got in (("STORE's answer", reply.result), (f"LIST of {ns!r}", find(listed(ctx, ns), k))):
        if not isinstance(got, dict):
            continue
        meta = got.get("metadata")
        back = []
        if isinstance(got.get("tags"), list) and "forgotten" in got["tags"]:
            back.append(f"tags {got['tags']!r}")
        if isinstance(meta, dict) and "forgotten" in meta:
            back.append(f"metadata {meta!r}")
        if got.get("source_id") == old["source_id"]:
            back.append(f"source_id {got['source_id']!r}")
        if back:
            say(ctx, "oams/forget-gone", f"({ns!r}, {k!r}) was stored with tags ['forgotten'], metadata "
                                         "{'forgotten': true} and a source_id, then forgotten, then stored again with "
                                         f"a value alone; {where} holds " + ", ".join(back) + ": the forgotten memory "
                                         "came back into the new one, which holds only what was sent", reply,
                received=got)
            return


#: the tag both memories of the forget check carry: LIST filtered by it is a listing of its own
FORGET_TAG = "axo"


def _tagged_listing_after_forget(ctx: Any, ns: str, gone: dict[str, Any], kept: dict[str, Any]) -> None:
    """A forgotten memory is in no LIST result, a filtered one too (found by the blind red team: a soft
    delete whose tags query did not skip the deleted rows). Judged where the filtered LIST answers
    the memory kept: a listing that shows nothing shows nothing forgotten either."""
    replies: list[Any] = []

    def refused(reply: Any, how: str | None) -> NoReturn:
        raise _Refused

    try:
        items = list_every(ctx.client, ns, refused, replies, tags=[FORGET_TAG])
    except _Refused:
        ctx.note(f"LIST of {ns!r} with tags [{FORGET_TAG!r}] was refused or no page ({replies[-1].describe()}): "
                 "a filtered listing after FORGET was not judged (LIST's filters are oams/list-filters')")
        return
    if gone["key"] in keys_of(items):
        for rule in ("oams/forget-gone", "oams/soft-deleted-hidden"):
            say(ctx, rule, f"after FORGET of ({ns!r}, {gone['key']!r}), LIST of {ns!r} with tags [{FORGET_TAG!r}] "
                           f"still shows it, though LIST without the filter does not (both memories carry that tag): "
                           f"deleted memories appear in no LIST result", replies[-1])
    elif kept["key"] not in keys_of(items):
        ctx.note(f"LIST of {ns!r} with tags [{FORGET_TAG!r}] answered {keys_of(items)}, not the memory kept: the "
                 "filtered listing shows nothing, so nothing forgotten either (not judged)")


@check("oams/forget-unknown", spec="oams", bindings=LIVE,
       requirements=("oams/error-codes", "oams/error-shape", "oams/forget-204", "oams/forget-gone"),
       title="FORGET of a memory never stored: success, or -32002 in §3's error shape; FORGET of a key stored only "
             "in another namespace of the owner leaves that memory")
def forget_unknown(ctx: Any) -> None:
    ctx.credit_only_observed()  # success shows no error; a refusal no 204
    ns = namespace(ctx, tag="nokey")
    precondition(ctx.client.store(model.new_memory(ns, key("other"), "something else")), "STORE")
    reply = ctx.client.forget(ns, key("never"))
    if reply.not_served:
        raise NotApplicable(f"FORGET is not served ({reply.describe()}; judged by oams/operations-served)")
    if reply.ok or (reply.status is not None and 200 <= reply.status < 300 and reply.error is None):
        if ctx.binding == "http":
            ctx.observed("oams/forget-204")
        ctx.note("FORGET of a memory never stored answered success (as right as -32002): no error shape or code "
                 "to judge")
        if ctx.binding == "http" and reply.status != 204:
            say(ctx, "oams/forget-204", f"FORGET answered success with HTTP {reply.status}, not 204", reply)
    else:
        ctx.note("FORGET of a memory never stored was refused (as right as success): no 204 to judge")
        judge_error(ctx, reply, code=model.MEMORY_NOT_FOUND, refused_rule=None,
                    what="FORGET of a memory never stored")
    _forget_leaves_sibling(ctx, ns)


def _forget_leaves_sibling(ctx: Any, ns: str) -> None:
    """FORGET of (ns, k) where ns never held k, while another namespace of the owner does: that memory
    stays (found by the blind red team: a FORGET that fell back to the owner's other namespaces). The
    answer is open, success or -32002 (judged above on a key stored nowhere): only the sibling's
    survival is judged, where LIST showed it before the FORGET."""
    sibling_ns = namespace(ctx, tag="nokey-sibling")
    sibling = model.new_memory(sibling_ns, key("elsewhere"), "a memory of the sibling namespace")
    precondition(ctx.client.store(sibling), f"storing {sibling['key']!r} in the sibling namespace {sibling_ns!r}")
    if sibling["key"] not in keys_of(listed(ctx, sibling_ns)):
        ctx.note(f"LIST of {sibling_ns!r} does not show {sibling['key']!r} stored there: whether a FORGET in {ns!r} "
                 "removed it cannot be seen (not judged)")
        return
    reply = ctx.client.forget(ns, sibling["key"])
    ctx.observed("oams/forget-gone")  # the sibling's LIST is compared below, whatever FORGET answered
    after = listed(ctx, sibling_ns)
    if sibling["key"] not in keys_of(after):
        say(ctx, "oams/forget-gone", f"FORGET of ({ns!r}, {sibling['key']!r}), a key {ns!r} never held, removed "
                                     f"({sibling_ns!r}, {sibling['key']!r}), the memory with that key in another "
                                     f"namespace of the same owner: LIST of {sibling_ns!r} now answers "
                                     f"{keys_of(after)}. FORGET deletes the memory (namespace, key) names, and none "
                                     "is in that namespace (§2: \"The pair (namespace, key) is unique\"; success "
                                     "or -32002 are both open answers, deleting another memory is not)", reply,
            received={"forget": reply.received if reply.received is not None else reply.received_text,
                      "listed": after})


@check("oams/batch-returns", spec="oams", bindings=LIVE, requirements=("oams/batch-returns-array", "oams/batch-endpoint"),
       title="BATCH_STORE answers an array of the stored memories and stores them all")
def batch_returns(ctx: Any) -> None:
    ctx.credit_only_observed()  # a refused batch answers no array
    ns = namespace(ctx, tag="batch")
    memories = [model.new_memory(ns, key(f"b{i}"), f"batch member {i}") for i in range(3)]
    reply = ctx.client.batch_store(memories)
    if not reply.ok:
        say(ctx, "oams/batch-endpoint", "BATCH_STORE of three valid memories was refused", reply)
        ctx.note("BATCH_STORE was refused: no array of stored memories to judge")
        return
    ctx.observed("oams/batch-endpoint", "oams/batch-returns-array")  # the answer and LIST compared below
    items = reply.result if isinstance(reply.result, list) else reply.memories()[0]
    if items is None:
        say(ctx, "oams/batch-returns-array", f"BATCH_STORE answered {shown(reply.result)}, not an array of memories", reply)
    elif sorted(keys_of(items)) != sorted(m["key"] for m in memories) or any(model.memory_problems(m) for m in items):
        say(ctx, "oams/batch-returns-array", f"BATCH_STORE answered keys {keys_of(items)}, not the three stored memories "
                                             "(each a valid memory)", reply)
    held = keys_of(listed(ctx, ns))
    missing = [m["key"] for m in memories if m["key"] not in held]
    if missing:
        say(ctx, "oams/batch-endpoint", f"after BATCH_STORE, LIST lacks {missing}", reply)


@check("oams/batch-atomic", spec="oams", bindings=LIVE,
       requirements=("oams/batch-atomic", "oams/invalid-memory-refused", "oams/error-codes", "oams/error-shape"),
       title="A BATCH_STORE holding one invalid memory is refused and stores none of the others")
def batch_atomic(ctx: Any) -> None:
    ctx.credit_only_observed()  # a batch taken whole is invalid-memory-refused's failure: atomicity is then not seen
    ns = namespace(ctx, tag="atomic")
    good = [model.new_memory(ns, key("ok"), "fine one"), model.new_memory(ns, key("ok"), "fine two")]
    batch = [good[0], {"key": key("bad"), "namespace": ns, "value": 42}, good[1]]
    reply = ctx.client.batch_store(batch)
    if reply.not_served:
        raise NotApplicable(f"BATCH_STORE is not served ({reply.describe()}; judged by oams/operations-served)")
    if not judge_error(ctx, reply, code=model.VALIDATION_FAILED, refused_rule="oams/invalid-memory-refused",
                       what="BATCH_STORE whose second memory has a number as value"):
        ctx.note("the batch holding an invalid memory was accepted: whether a refused batch writes nothing was not seen")
    held = keys_of(listed(ctx, ns))
    written = [m["key"] for m in good if m["key"] in held]
    if written and not reply.ok:
        say(ctx, "oams/batch-atomic", f"the batch was refused, yet LIST holds its valid members {written}: either all "
                                      "writes succeed or none do", reply)
    elif not reply.ok:
        # that LIST shows none of them means something only if LIST shows what a STORE keeps
        control = model.new_memory(ns, key("control"), "stored alone after the refused batch")
        if not ctx.client.store(control).ok or control["key"] not in keys_of(listed(ctx, ns)):
            raise NotApplicable(f"a memory stored alone after the refused batch is not listed in {ns!r} either: "
                                "LIST cannot show whether the batch wrote anything (judged by oams/store-returns-stored)")
        ctx.observed("oams/batch-atomic")
    if not reply.ok:
        _long_batch_atomic(ctx)


#: the long batch: more valid memories than a server is likely to write in one chunk, then an invalid one
LONG_BATCH = 12


def _long_batch_atomic(ctx: Any) -> None:
    """A batch of LONG_BATCH valid memories followed by one invalid one: a server that writes a batch
    in chunks (each its own transaction) refuses it only when it meets the invalid memory, after
    writing the chunks before it."""
    ns = namespace(ctx, tag="atomic-long")
    good = [model.new_memory(ns, key(f"long{i:02d}"), f"long batch member {i}") for i in range(LONG_BATCH)]
    batch = [*good, {"key": key("bad"), "namespace": ns, "value": 42}]
    reply = ctx.client.batch_store(batch)
    if reply.ok:
        say(ctx, "oams/invalid-memory-refused", f"a BATCH_STORE of {LONG_BATCH} valid memories and, last, one whose "
                                                "value is a number was accepted; it must be refused", reply)
        return
    written = [m["key"] for m in good if m["key"] in keys_of(listed(ctx, ns))]
    if written:
        say(ctx, "oams/batch-atomic", f"a BATCH_STORE of {LONG_BATCH} valid memories and, last, one whose value is a "
                                      f"number was refused, yet LIST of {ns!r} holds {len(written)} of its valid "
                                      f"members {written}: either all writes succeed or none do", reply)


#: JSON-RPC 2.0's code for invalid method parameters.
INVALID_PARAMS = -32602


@check("oams/error-shape", spec="oams", bindings=LIVE, requirements=("oams/error-shape", "oams/error-codes"),
       title="Malformed requests get errors in §3's shape; an invalid query -32003 (over JSON-RPC, or -32602)")
def error_shape(ctx: Any) -> None:
    ctx.credit_only_observed()  # an operation not served, or a request accepted, shows no error
    ns = namespace(ctx, tag="errors")
    c = ctx.client
    # the namespace holds a memory first: a RECALL into a namespace nothing was stored in may be
    # -32001 "namespace not found" as well as -32003, and §3 gives neither precedence (round 18)
    precondition(c.store(model.new_memory(ns, key("held"), "a memory so that the namespace exists")), "STORE")
    sends = [
        (c.send_raw("store", '{"key": "x", "namespace": ', namespace=ns, key="x"), "a STORE whose body is cut-off JSON", None),
        (c.send_raw("recall", "[1, 2", namespace=ns), "a RECALL whose body is cut-off JSON", None),
        (c.recall({"namespace": ns}), "a RECALL without query", model.VALIDATION_FAILED),
        (c.recall({"namespace": ns, "query": 5}), "a RECALL whose query is a number", model.VALIDATION_FAILED),
        (c.recall({"namespace": ns, "query": "q", "k": "eight"}), "a RECALL whose k is a string",
         model.VALIDATION_FAILED),
        (c.batch_store("not an array"), "a BATCH_STORE whose memories is a string", model.VALIDATION_FAILED),
        # a bare NaN is no JSON (RFC 8259 §6): a parser that takes it stores what no client can read back
        # (round 25: stored, and echoed with a bare NaN); refused with any code, as a cut-off body
        (c.send_raw("store", _as_store_params(ctx, '{"key": "nan", "namespace": ' + json.dumps(ns)
                                              + ', "value": "v", "metadata": {"x": NaN}}'), namespace=ns, key="nan"),
         "a STORE whose body holds a bare NaN (not JSON)", None),
    ]
    for reply, what, code in sends:
        if reply.not_served:
            ctx.note(f"{reply.request} is not served (oams/operations-served's): {what} was not sent")
            continue  # an operation that is not there: oams/operations-served
        if reply.ok:
            say(ctx, "oams/error-shape", f"{what} was accepted", reply)
            continue
        problem = error_shape_problem(reply)
        if problem is None:
            ctx.observed("oams/error-shape", *(("oams/error-codes",) if code is not None else ()))
        # Over JSON-RPC a malformed parameter is also JSON-RPC 2.0's own -32602 "Invalid params"; the
        # reserved list adds -32003 without taking that code away (a blind red team's reading)
        allowed = (code, INVALID_PARAMS) if ctx.binding != "http" else (code,)
        if problem is not None:
            say(ctx, "oams/error-shape", f"{what} was refused, but {problem}", reply)
        elif code is not None and reply.error_code not in allowed:
            say(ctx, "oams/error-codes", f"{what} was refused with {reply.error_code}, not {code} "
                                         f"({model.RESERVED_CODES[code]})"
                                         + (f" or JSON-RPC's {INVALID_PARAMS} (Invalid params)" if len(allowed) > 1 else ""),
                reply)
    _taken_or_refused(ctx, ns)


INTERNAL_ERROR = -32603


def _as_store_params(ctx: Any, memory_text: str) -> str:
    """A memory written as text, as STORE's body (REST) or its params (JSON-RPC: {"memory": …})."""
    return memory_text if ctx.binding == "http" else '{"memory": ' + memory_text + "}"


def _taken_or_refused(ctx: Any, ns: str) -> None:
    """Well-formed JSON a careless server breaks on (round 25: each answered HTTP 500, -32603): tags
    holding a null, a cursor the server never gave, a value holding a lone surrogate (the escape
    \\ud800: valid JSON text, not a Unicode string), metadata nested 100 levels deep. Each may be taken,
    or refused (-32003, a quota's -32004, a parser's -32700 for the surrogate, JSON-RPC's -32602): only
    an internal error (-32603, or a 5xx status) fails, for §3 names what a refused input is (-32003
    validation failed), and a 5xx says the server broke, not that it refused."""
    c = ctx.client
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(99):
        inner["n"] = {}
        inner = inner["n"]
    surrogate = key("surrogate")
    cases = (
        (c.store(model.new_memory(ns, key("tagnull"), "tags with a null", tags=["ok", None])),
         'a STORE whose tags hold a null (["ok", null])'),
        (c.list(ns, cursor="!!not-a-cursor"), "a LIST with the cursor '!!not-a-cursor', one the server never gave"),
        (c.send_raw("store", _as_store_params(ctx, json.dumps({"key": surrogate, "namespace": ns})[:-1]
                                              + ', "value": "a\\ud800b"}'), namespace=ns, key=surrogate),
         'a STORE whose value holds a lone surrogate ("a\\ud800b", sent as the escape)'),
        (c.store(model.new_memory(ns, key("deep"), "deep metadata", metadata={"n": deep})),
         "a STORE whose metadata nests 100 levels deep"),
    )
    for reply, what in cases:
        if reply.not_served:
            ctx.note(f"{reply.request} is not served (oams/operations-served's): {what} was not sent")
            continue
        if reply.ok:
            continue  # taken: what it stored is the other checks' (a refusal was as right)
        problem = error_shape_problem(reply)
        if problem is not None:
            say(ctx, "oams/error-shape", f"{what} was refused, but {problem}", reply)
        elif reply.error_code == INTERNAL_ERROR:
            say(ctx, "oams/error-codes", f"{what} was answered {INTERNAL_ERROR} (internal error)"
                                         + (f" with HTTP {reply.status}" if reply.status else "")
                                         + ": the input is well-formed JSON, to be taken or refused as "
                                           f"{model.VALIDATION_FAILED} (validation failed), not break the server",
                reply)
        elif reply.status is not None and reply.status >= 500:
            say(ctx, "oams/error-shape", f"{what} was answered HTTP {reply.status} (a server error): a refusal of "
                                         "the input is a 4xx with §3's error body", reply)
        else:
            ctx.observed("oams/error-shape", "oams/error-codes")
