"""Recall ranking of the reference UMP server (§3.2): the five standard signals and a fixed score.

UMP standardizes the signal names, not the algorithm. This engine reports, per result:

* ``similarity``: BM25 (k1 = 1.2, b = 0.75, FTS5's formula and constants) of ``body.text`` for the
  query's words, normalised per query to 0..1 (the best candidate gets 1.0). SQLite FTS5 finds the
  records that contain a query word; the store keeps each word's document frequency, so BM25 is
  computed over the candidates alone. Candidates: every match when the query's words occur in at
  most ``EXACT_MATCHES`` records together; otherwise the ``NEWEST`` most recent matches plus every
  record holding one of the query's rarer words (those with the highest IDF, up to
  ``EXACT_MATCHES`` records), which is where BM25's weight lies. An empty query (or one with no
  word in it) matches every record with similarity 0; its candidates are the ``EMPTY_WINDOW``
  most recently created records that pass the filters.
* ``recency``: exponential decay on ``time.created``, half-life 30 days (1.0 for a record created
  now, 0.5 after 30 days; a ``created`` in the future counts as now).
* ``salience``: ``lifecycle.salience``, or 0.5 when the record has none.
* ``scope_match``: the fraction of the request's scope members among project, agent, user and
  session whose value equals the record's; 1.0 when the request names none of them.
* ``provenance_depth``: the length of the record's ``supersedes`` chain (0 for an original, 1 for
  its first revision, ...). The score uses ``depth / (depth + 1)``.

``score = 0.50·similarity + 0.20·recency + 0.15·salience + 0.10·scope_match + 0.05·depth/(depth+1)``,
rounded to 6 decimals; results are sorted by score (descending), ties by id (ascending).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

SIGNALS = ("similarity", "recency", "salience", "scope_match", "provenance_depth")

#: The fixed weights of the score (they add up to 1, so the score is in 0..1).
WEIGHTS: Mapping[str, float] = {
    "similarity": 0.50,
    "recency": 0.20,
    "salience": 0.15,
    "scope_match": 0.10,
    "provenance_depth": 0.05,
}

_W_SIM, _W_REC, _W_SAL, _W_SCOPE, _W_PROV = (WEIGHTS[k] for k in SIGNALS)

HALF_LIFE_SECONDS = 30 * 86400.0
_HALF_LIFE_US = HALF_LIFE_SECONDS * 1_000_000  # the store keeps times in epoch microseconds
DEFAULT_SALIENCE = 0.5
#: Request scope members that count for scope_match (owner is who asks, visibility a filter).
SCOPE_MEMBERS = ("project", "agent", "user", "session")
#: A query whose words occur in at most this many records in all is scored over every match.
EXACT_MATCHES = 500
#: Otherwise the newest this many matches are candidates (plus the rare-word matches).
NEWEST = 200
#: An empty query ranks the this many most recently created records that pass the filters.
EMPTY_WINDOW = 1000
BM25_K1 = 1.2
BM25_B = 0.75
#: At most this many words of a query go into the FTS expression.
MAX_QUERY_TERMS = 32

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ASCII_WORDS = str.maketrans({chr(i): (chr(i).lower() if chr(i).isalnum() else " ") for i in range(128)})


def tokens(text: str) -> list[str]:
    """Words as the FTS5 ``unicode61 remove_diacritics 2`` tokenizer sees them (near enough for
    scoring): runs of letters and digits, case-folded, diacritics removed."""
    if not isinstance(text, str):
        return []
    if text.isascii():  # the common case, without the (slower) regex
        return text.translate(_ASCII_WORDS).split()
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    return _WORD.findall(folded)


def query_terms(text: str) -> list[str]:
    """The distinct words of a query, in order, at most MAX_QUERY_TERMS."""
    out: list[str] = []
    for word in tokens(text):
        if word not in out:
            out.append(word)
            if len(out) >= MAX_QUERY_TERMS:
                break
    return out


def fts_query(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression: every word a double-quoted FTS5 string (quotes doubled), joined
    with OR, so nothing the user typed is ever read as FTS syntax (``NEAR(``, ``"``, ``*``, ``-``,
    ``:`` ...). None for no words."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) or None


def bm25_scorer(terms: Sequence[str], df: Mapping[str, int], docs: int, avgdl: float):
    """A function doc text -> BM25 for these query words (FTS5's formula: IDF floored at 1e-6)."""
    idf = [(t, max(math.log((docs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)), 1e-6)) for t in terms]
    k1, b = BM25_K1, BM25_B
    base, per_token = k1 * (1 - b), k1 * b / max(avgdl, 1e-9)

    def score(doc: str) -> float:
        toks = tokens(doc)
        norm = base + per_token * len(toks)
        total = 0.0
        for t, w in idf:
            tf = toks.count(t)
            if tf:
                total += w * tf * (k1 + 1) / (tf + norm)
        return total

    return score


def bm25(doc: str, terms: Sequence[str], df: Mapping[str, int], docs: int, avgdl: float) -> float:
    """BM25 of one document for the query words."""
    return bm25_scorer(terms, df, docs, avgdl)(doc)


def recency(created_us: int, now_us: int) -> float:
    return 0.5 ** (max(0, now_us - created_us) / _HALF_LIFE_US)


def depth_term(depth: int) -> float:
    depth = max(0, int(depth))
    return depth / (depth + 1.0)


def scope_match(request_scope: Mapping[str, Any] | None, record_scope: Mapping[str, Any]) -> float:
    wanted = {k: v for k, v in (request_scope or {}).items() if k in SCOPE_MEMBERS}
    if not wanted:
        return 1.0
    hits = sum(1 for k, v in wanted.items() if record_scope.get(k) == v)
    return hits / len(wanted)


def similarities(scores: Sequence[float]) -> list[float]:
    """BM25 scores (higher = better) normalised to 0..1 for one query."""
    goodness = [max(0.0, r) for r in scores]
    best = max(goodness, default=0.0)
    if best <= 0.0:
        return [0.0 for _ in goodness]
    return [g / best for g in goodness]


def signals(*, similarity: float, created_us: int, now_us: int, salience: float | None,
            scope: float, depth: int) -> dict[str, float | int]:
    return {
        "similarity": round(similarity, 6),
        "recency": round(recency(created_us, now_us), 6),
        "salience": round(DEFAULT_SALIENCE if salience is None else float(salience), 6),
        "scope_match": round(scope, 6),
        "provenance_depth": int(depth),
    }


def fast_score(similarity: float, created_us: int, now_us: int, salience: float | None, scope: float,
               depth: int) -> float:
    """The score straight from the raw values (what `score(signals(...))` gives, up to rounding)."""
    age = now_us - created_us
    rec = 0.5 ** (age / _HALF_LIFE_US) if age > 0 else 1.0
    return round(_W_SIM * similarity + _W_REC * rec + _W_SAL * (DEFAULT_SALIENCE if salience is None else salience)
                 + _W_SCOPE * scope + _W_PROV * (depth / (depth + 1.0) if depth > 0 else 0.0), 6)


def score(sig: Mapping[str, float | int]) -> float:
    return round(WEIGHTS["similarity"] * sig["similarity"] + WEIGHTS["recency"] * sig["recency"]
                 + WEIGHTS["salience"] * sig["salience"] + WEIGHTS["scope_match"] * sig["scope_match"]
                 + WEIGHTS["provenance_depth"] * depth_term(int(sig["provenance_depth"])), 6)


def rank(items: Iterable[tuple[str, float, Any]]) -> list[tuple[str, float, Any]]:
    """(id, score, payload) sorted by score descending, then id."""
    return sorted(items, key=lambda t: (-t[1], t[0]))


def sql_score(now_us: int, request_scope: Mapping[str, Any] | None, alias: str = "r") -> tuple[str, list[Any]]:
    """The score of a record with similarity 0 as an SQL expression over the indexed columns (for
    an empty query, so the store ranks and limits without loading every record)."""
    params: list[Any] = []
    wanted = [(k, v) for k, v in (request_scope or {}).items() if k in SCOPE_MEMBERS]
    if wanted:
        parts = []
        for k, v in wanted:
            parts.append(f"(CASE WHEN {alias}.scope_{k} = ? THEN 1.0 ELSE 0.0 END)")
            params.append(v)
        scope_expr = f"(({' + '.join(parts)}) / {float(len(wanted))})"
    else:
        scope_expr = "1.0"
    ln2 = math.log(2.0)
    expr = (f"({WEIGHTS['recency']} * exp(-{ln2} * max(0, ? - {alias}.created) / {_HALF_LIFE_US})"
            f" + {WEIGHTS['salience']} * coalesce({alias}.salience, {DEFAULT_SALIENCE})"
            f" + {WEIGHTS['scope_match']} * {scope_expr}"
            f" + {WEIGHTS['provenance_depth']} * ({alias}.depth * 1.0 / ({alias}.depth + 1.0)))")
    return expr, [now_us, *params]
