"""One self-contained HTML page rendered from the JSON report (DESIGN.md, idea 8).

The page reads top down as a reader asks: what level each target reached and what blocks the
next (the level table), why (every failure with its requirement, what was sent and what came
back), then the requirement tables and the coverage matrix. Verdict words and colours come from
the report's level rows (`status`, `blocked_by`: reports/verdict.py), never recomputed here.

Everything is inline (CSS, a few lines of JS, no fonts, no URLs) so the file can be mailed,
attached to CI or opened offline. Findings carry text a server under test chose, so every value
taken from the report goes through `_e` (html.escape) — nothing from the report is trusted.
Capability tokens in findings are redacted here, on the page only: the JSON report keeps what the
check recorded, and the page still says whose token it was.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from typing import Any

from memconform.reports.verdict import blocked_by

#: The filter buttons, always shown in this order; other outcomes get a button when present.
FILTER_OUTCOMES = ("passed", "failed", "warning", "info", "skipped", "error")

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#222}
h1{margin:0 0 .3em}h2{border-bottom:2px solid #ccc;margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
.o-passed{background:#e6f4ea}.o-failed{background:#fce8e6}.o-warning{background:#fef7e0}
.o-info{background:#e8f0fe}.o-skipped{background:#f1f3f4}.o-error{background:#f9d6d2}
.o-xfailed{background:#efe6fc}.o-stale{background:#fde2c8}.o-none{color:#999}
.level{font-weight:bold;padding:.3em;background:#f7f7f7;border-left:4px solid #888}
.finding{margin:.2em 0;padding:.2em;border-left:3px solid #c00}
pre{white-space:pre-wrap;word-break:break-all;margin:.1em 0;font-size:.85em;background:#fafafa}
#filters button{margin-right:.3em}#filters button.on{font-weight:bold;outline:2px solid #444}
.s-conformant,.s-claim{background:#e6f4ea}.s-partial{background:#fef7e0}.s-not-conformant{background:#fce8e6}
.s-error{background:#f9d6d2}.s-not-assessed,.s-incomplete,.s-skipped{background:#f1f3f4}
dl.options,.finding dl{display:grid;grid-template-columns:max-content auto;gap:.1em .8em;margin:.3em 0}
dt{font-weight:bold}dd{margin:0}.accepted{color:#555;font-style:italic}
"""

# Plain JS: show only the requirement rows whose outcome matches the pressed button.
_JS = """
document.querySelectorAll('#filters button').forEach(function(b){
  b.addEventListener('click',function(){
    var want=b.getAttribute('data-filter');
    document.querySelectorAll('#filters button').forEach(function(x){x.classList.toggle('on',x===b);});
    document.querySelectorAll('tr.req').forEach(function(r){
      r.style.display=(want==='all'||r.getAttribute('data-outcome')===want)?'':'none';
    });
  });
});
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _catalogue(spec: str) -> Any:
    """The spec's catalogue if this installation knows it (sections, bindings); else None —
    the page must still render a report written by another version of the suite."""
    try:
        from memconform.suite import catalogue

        return catalogue.load(spec)
    except Exception:  # unknown spec, missing file: render from the report alone
        return None


def _requirement(spec: str, rid: str) -> Any:
    cat = _catalogue(spec)
    try:
        return cat.get(rid) if cat is not None else None
    except Exception:
        return None


def _req_meta(spec: str, rid: str, fallback: dict[str, Any]) -> tuple[str, str, str]:
    """(section, level, keyword); a derived requirement's keyword says "derived" (README: a reading,
    not the text's own words)."""
    req = _requirement(spec, rid)
    if req is not None:
        return req.section, req.level, req.keyword.value + (" (derived)" if req.derived else "")
    return "", fallback.get("level", ""), fallback.get("keyword", "")


def _rows_for(report: dict[str, Any], key: tuple[str, str, str, str]) -> list[dict[str, Any]]:
    """Requirement rows of one target/spec/version/binding: the report's judged requirements,
    plus those only skipped checks touched (the report leaves them out; a reader filtering on
    'skipped' wants to see them)."""
    rows = [dict(r) for r in report["requirements"]
            if (r["target"], r["spec"], r["version"], r["binding"]) == key]
    seen = {r["id"] for r in rows}
    for res in report["results"]:
        if (res["target"], res["spec"], res["version"], res["binding"]) != key:
            continue
        unseen = res["requirements"] if res["outcome"] == "skipped" else res.get("not_judged", ())
        for rid in unseen:
            if rid in seen:
                continue
            seen.add(rid)
            section, level, keyword = _req_meta(res["spec"], rid, res)
            rows.append({"id": rid, "section": section, "level": level, "keyword": keyword,
                         "outcome": "skipped", "checks": [res["node_id"]]})
    return sorted(rows, key=lambda r: r["id"])


#: A capability token wherever it appears: after `Bearer` (any scheme a check sent) or in the
#: interoperable `umpcap.<payload>.ed25519:<signature>` form, whole or shortened by a message.
_TOKEN = re.compile(r"(?<=Bearer )[^\s\"'\\,;]+|umpcap\.[A-Za-z0-9_\-.:!%]+…?")
#: How much of a token stays visible: enough to tell two tokens apart, not enough to replay one.
TOKEN_SHOWN = 8
#: The request line a check may put first in `sent` ("POST /ump/recall", a fuzz phase before it).
_REQUEST_LINE = re.compile(r"^(?:\[[^\]\n]*\]\s*)?(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(\S+)")


def redact(text: str) -> str:
    """`text` with every capability token cut to its first characters (the page may be published)."""
    return _TOKEN.sub(lambda m: m.group(0) if len(m.group(0)) <= TOKEN_SHOWN
                      else m.group(0)[:TOKEN_SHOWN] + "…(redacted)", text)


def _test_identities() -> dict[str, str]:
    """did:key -> test key name: the suite's own identities are public (vectors/README.md), so
    naming them tells a reader which owner a request acted as without revealing anything."""
    try:
        from memconform.suite.ump import testkeys

        return {testkeys.test_did(name): name for name in testkeys.TEST_KEY_NAMES}
    except Exception:  # an installation without the key code still renders the page
        return {}


def _identity(text: str, names: dict[str, str]) -> list[str]:
    """Who a request acted as: the owner of each token it carried, then every test identity named."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        try:
            from memconform.suite.ump.captoken import claims_of

            claims = claims_of(token)
        except Exception:  # not a decodable umpcap token (garbage on purpose, or shortened)
            what = "a bearer token that is no decodable umpcap token"
        else:
            iss = str(claims.get("iss", "?"))
            what = f"token of {names.get(iss, iss)}"
            owner = (claims.get("scope") or {}).get("owner") if isinstance(claims.get("scope"), dict) else None
            if owner and owner != iss:
                what += f", scoped to {names.get(str(owner), owner)}'s records"
        if what not in out:
            out.append(what)
    for did, name in names.items():
        if did in text and f"{name} = {did}" not in out:
            out.append(f"{name} = {did}")
    return out


def _sent_html(text: str, names: dict[str, str]) -> str:
    """`sent`: the request line (method, path) when the check recorded one, the identities it
    carries (a token's owner, the test keys' DIDs by name), then the text with tokens redacted."""
    first = text.split("\n", 1)[0]
    parts = []
    m = _REQUEST_LINE.match(first)
    if m:
        parts.append(f"<dt>request</dt><dd><code>{_e(m.group(1))}</code> <code>{_e(redact(m.group(2)))}</code></dd>")
    who = _identity(text, names)
    if who:
        # a token names who the request acted as; a DID in the body names whose records it is about
        parts.append(f"<dt>identity</dt><dd>{'<br>'.join(_e(w) for w in who)}</dd>")
    parts.append(f"<dt>sent</dt><dd><pre>{_e(redact(text))}</pre></dd>")
    return "".join(parts)


def _cite(spec: str, rid: str, res: dict[str, Any]) -> str:
    section, level, keyword = _req_meta(spec, rid, res)
    meta = " · ".join(x for x in (f"§{section}" if section else "", level, keyword) if x)
    return f"<code>{_e(rid)}</code> {_e(meta)}"


def _finding_html(f: dict[str, Any], res: dict[str, Any], names: dict[str, str], *, cite: bool) -> str:
    rows = []
    if cite:
        rows.append(f"<dt>requirement</dt><dd>{_cite(res['spec'], f.get('requirement', ''), res)}</dd>")
    rows.append(f"<dt>message</dt><dd>{_e(redact(str(f.get('message', ''))))}</dd>")
    req = _requirement(res["spec"], f.get("requirement", ""))
    if req is not None and req.derived and req.note:
        rows.append(f"<dt>reading</dt><dd>{_e(req.note)}</dd>")
    if f.get("where"):
        rows.append(f"<dt>where</dt><dd><code>{_e(redact(str(f['where'])))}</code></dd>")
    if f.get("sent"):
        rows.append(_sent_html(str(f["sent"]), names))
    if f.get("received"):
        rows.append(f"<dt>received</dt><dd><pre>{_e(redact(str(f['received'])))}</pre></dd>")
    return f'<div class="finding"><dl>{"".join(rows)}</dl></div>'


def _accepted_note(res: dict[str, Any]) -> str:
    base = res.get("baseline") or {}
    if base.get("status") == "accepted":
        why = f": {base['reason']}" if base.get("reason") else ""
        return f' <span class="accepted">accepted by {_e(base.get("by") or "baseline")}{_e(why)}</span>'
    if base.get("status") == "stale":
        return f' <span class="accepted">listed by {_e(base.get("by") or "baseline")} but passed (stale)</span>'
    return ""


def _result_head(res: dict[str, Any], outcome: str) -> str:
    head = (f'<div><code>{_e(res["check"])}</code>{" [" + _e(res["case"]) + "]" if res.get("case") else ""}'
            f' — <span class="o-{_e(outcome)}">{_e(outcome)}</span>')
    if res.get("reason"):
        head += f": {_e(redact(str(res['reason'])))}"
    return head + _accepted_note(res) + "</div>"


def _findings_html(rid: str, checks: list[str], by_node: dict[str, list[dict[str, Any]]],
                   names: dict[str, str]) -> str:
    from memconform.reports.model import real_outcome

    out = []
    for node in checks:
        for res in by_node.get(node, ()):
            out.append(_result_head(res, _outcome_word(res, real_outcome)))
            for f in res.get("findings", ()):
                if f.get("requirement") != rid:
                    continue  # a finding belongs to the requirement it names
                out.append(_finding_html(f, res, names, cite=False))
    return "".join(out)


def _outcome_word(res: dict[str, Any], real_outcome: Any) -> str:
    try:
        return real_outcome(res).value
    except ValueError:  # an outcome this installation does not know: shown as written
        return str(res.get("outcome"))


def _failures_html(report: dict[str, Any], keys: list[tuple[str, str, str, str]], names: dict[str, str]) -> str:
    """Every failed or errored result, in level-table order: each finding with its requirement."""
    from memconform.reports.model import real_outcome

    order = {k: i for i, k in enumerate(keys)}
    bad = [(res, word) for res in report["results"]
           if (word := _outcome_word(res, real_outcome)) in ("failed", "error")]
    bad.sort(key=lambda x: (order.get((x[0]["target"], x[0]["spec"], x[0]["version"], x[0]["binding"]), len(order)),
                            x[0]["node_id"]))
    if not bad:
        return "<h2>failures</h2><p>No check failed or errored.</p>"
    parts = [f"<h2>failures</h2><p>{len(bad)} check{'s' if len(bad) != 1 else ''} failed or errored.</p>"]
    current = None
    for res, word in bad:
        key = (res["target"], res["spec"], res["version"], res["binding"])
        if key != current:
            current = key
            parts.append(f"<h3>{_e(key[0])} · {_e(key[1].upper())} {_e(key[2])} / {_e(key[3])}</h3>")
        parts.append(_result_head(res, word))
        parts.extend(_finding_html(f, res, names, cite=True) for f in res.get("findings", ()))
    return "".join(parts)


def _level_cell(row: dict[str, Any]) -> str:
    claim = row.get("claim")
    if row.get("level"):
        return _e(row["level"])
    if claim and claim.get("reached"):
        return _e(claim.get("title"))
    return "—"


def _blocks_cell(row: dict[str, Any]) -> str:
    """What blocks the next level, by the row's status: every blocking requirement (the page has
    room for all), or why the next level was not assessed, or what a file's claim left out."""
    status = row.get("status")
    blocked = row.get("blocked_at") or {}
    ids = blocked_by(row)
    if ids:
        return (f"{_e(blocked.get('level', ''))} blocked by "
                + ", ".join(f"<code>{_e(i)}</code>" for i in ids))
    if status in ("error", "skipped"):
        return _e(redact(str(row.get("summary", ""))))
    claim = row.get("claim") or {}
    if status == "not-conformant" and claim.get("failed"):
        return (f"{_e(claim.get('title', ''))} claim blocked by "
                + ", ".join(f"<code>{_e(i)}</code>" for i in claim["failed"]))
    if status == "claim":
        notes = []
        if claim.get("not_exercised"):
            notes.append(f"{len(claim['not_exercised'])} MUST not exercised by this file")
        left = claim.get("left_out") or {}
        if left.get("reader"):
            notes.append(f"{len(left['reader'])} MUST about reading records need a live implementation")
        if left.get("export"):
            notes.append(f"{len(left['export'])} export rules not applied to a dump")
        return _e("; ".join(["claim reached", *notes]))
    if blocked.get("not_assessed"):
        n = len(blocked["not_assessed"])
        return _e(f"{blocked.get('level', '')} not assessed: {n} MUST not assessable on this binding")
    return "—"


def _levels_html(report: dict[str, Any]) -> str:
    rows = []
    for row in report["levels"]:
        status = str(row.get("status") or "—")
        accepted = row.get("accepted") or {}
        acc = (f"{_e(accepted.get('must', 0))} MUST accepted by {_e(' and '.join(accepted.get('by') or ()))}"
               if accepted.get("must") else "—")
        rows.append(f"<tr><td>{_e(row['target'])}</td><td>{_e(row['spec'].upper())}</td><td>{_e(row['version'])}</td>"
                    f"<td>{_e(row['binding'])}</td><td>{_level_cell(row)}</td>"
                    f'<td class="s-{_e(status)}">{_e(status.replace("-", " "))}</td>'
                    f"<td>{_blocks_cell(row)}</td><td>{acc}</td></tr>")
    return ("<h2>levels</h2><table class=\"levels\"><tr><th>target</th><th>spec</th><th>version</th><th>binding</th>"
            "<th>level reached</th><th>status</th><th>what blocks the next level</th><th>accepted failures</th></tr>"
            + "".join(rows) + "</table>")


def _plain(value: Any) -> str:
    """An option value as a reader writes it: lists joined, mappings as `key: value`."""
    if value is None or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    return str(value)


def _entries_text(entries: list[Any]) -> str:
    ids = [e.get("id", "?") if isinstance(e, dict) else str(e) for e in entries]
    return f"{len(ids)} entr{'y' if len(ids) == 1 else 'ies'}" + (f": {', '.join(ids)}" if ids else "")


def _options_html(options: Any) -> str:
    """The run's options as a definition list (a reader should not have to parse JSON)."""
    if not isinstance(options, dict):
        return f'<dl class="options"><dt>options</dt><dd>{_e(_plain(options))}</dd></dl>'
    shown = {
        "targets": _plain(options.get("targets")),
        "specs": _plain(options.get("specs")) if options.get("specs") else "all",
        "level": _plain(options.get("level")) if options.get("level") else "all",
        "bindings": _plain(options.get("bindings")) if options.get("bindings") else "all",
        "strict": _plain(bool(options.get("strict"))),
        "seed": _plain(options.get("seed")),
        "timeout": f"{options['timeout']} s" if options.get("timeout") is not None else "—",
    }
    if options.get("checks"):
        shown["checks"] = _plain(options["checks"])
    if options.get("environment"):
        shown["environment"] = ", ".join(f"{k}={v}" for k, v in options["environment"].items())
    base = options.get("baseline")
    if isinstance(base, dict):
        text = str(base.get("path", "?"))
        if base.get("blake3"):
            text += f" · blake3 {base['blake3']}"
        shown["baseline"] = f"{text} · {_entries_text(base.get('entries') or [])}"
    else:
        shown["baseline"] = _plain(base) if base else "none"
    devs = options.get("known_deviations")
    shown["known deviations"] = ("; ".join(f"{label}: {', '.join(e.get('id', '?') if isinstance(e, dict) else str(e) for e in entries)}"
                                           for label, entries in devs.items())
                                 if isinstance(devs, dict) and devs else "none")
    known = {"targets", "specs", "level", "bindings", "strict", "seed", "timeout", "checks", "environment",
             "baseline", "known_deviations"}
    for key, value in options.items():
        if key not in known:  # options of a newer suite: shown as written, never dropped
            shown[str(key)] = _plain(value)
    return '<dl class="options">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in shown.items()) + "</dl>"


def _requirements_table(rows: list[dict[str, Any]], by_node: dict[str, list[dict[str, Any]]],
                        names: dict[str, str]) -> str:
    body = []
    for r in rows:
        o = _e(r["outcome"])
        body.append(f'<tr class="req o-{o}" data-outcome="{o}"><td><code>{_e(r["id"])}</code></td>'
                    f'<td>{_e(r["section"])}</td><td>{_e(r["level"])}</td><td>{_e(r["keyword"])}</td>'
                    f'<td>{o}</td><td>{_findings_html(r["id"], r["checks"], by_node, names)}</td></tr>')
    return ("<table><tr><th>requirement</th><th>section</th><th>level</th><th>keyword</th><th>outcome</th>"
            f"<th>checks and findings</th></tr>{''.join(body)}</table>")


def _matrix(spec: str, version: str, bindings: list[str], cells: dict[tuple[str, str], str]) -> str:
    """Requirements × bindings. A requirement the catalogue has but this run never judged shows
    as '—', one that cannot be judged on a binding as 'n/a': gaps stay visible."""
    cat = _catalogue(spec)
    ids = {rid for rid, _ in cells}
    applicable: dict[str, set[str]] = {}
    if cat is not None:
        try:
            ids |= {r.id for r in cat.for_version(version)}
            applicable = {b: {r.id for r in cat.for_version(version, b)} for b in bindings}
        except Exception:  # a version this installation does not know
            applicable = {}
    head = "".join(f"<th>{_e(b)}</th>" for b in bindings)
    body = []
    for rid in sorted(ids):
        tds = []
        for b in bindings:
            outcome = cells.get((rid, b))
            if outcome is not None:
                tds.append(f'<td class="o-{_e(outcome)}">{_e(outcome)}</td>')
            elif applicable and rid not in applicable.get(b, ()):
                tds.append('<td class="o-none">n/a</td>')
            else:
                tds.append('<td class="o-none">—</td>')
        body.append(f"<tr><td><code>{_e(rid)}</code></td>{''.join(tds)}</tr>")
    return f"<table class=\"matrix\"><tr><th>requirement</th>{head}</tr>{''.join(body)}</table>"


def render_html(report: dict[str, Any]) -> str:
    by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for res in report["results"]:
        by_node[res["node_id"]].append(res)
    keys = sorted({(r["target"], r["spec"], r["version"], r["binding"])
                   for r in [*report["levels"], *report["results"]]})
    levels = {(r["target"], r["spec"], r["version"], r["binding"]): r for r in report["levels"]}
    names = _test_identities()
    level_order = [(r["target"], r["spec"], r["version"], r["binding"]) for r in report["levels"]]

    run = report.get("run", {})
    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>memconform report</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>memconform report</h1>",
             f"<p>generated {_e(report.get('generated_at'))} · memconform {_e(run.get('memconform'))}"
             f" · pytest {_e(run.get('pytest'))} · python {_e(run.get('python'))}</p>",
             _options_html(run.get("options")),
             _levels_html(report),
             _failures_html(report, level_order + [k for k in keys if k not in levels], names),
             "<h2>requirements</h2>",
             "<table><tr><th>target</th><th>kind</th><th>advertised</th></tr>"]
    for t in report.get("targets", ()):
        adv = ", ".join(f"{s} {lv}" for s, lv in sorted(t.get("advertised", {}).items())) or "—"
        parts.append(f"<tr><td>{_e(t['label'])}</td><td>{_e(t['kind'])}</td><td>{_e(adv)}</td></tr>")
    parts.append("</table>")
    totals = ", ".join(f"{n} {o}" for o, n in report.get("totals", {}).items())
    parts.append(f"<p>totals: {_e(totals) or 'no results'}</p>")

    extra = sorted({r["outcome"] for r in report["requirements"]} - set(FILTER_OUTCOMES))
    buttons = "".join(f'<button type="button" data-filter="{_e(o)}">{_e(o)}</button>'
                      for o in (*FILTER_OUTCOMES, *extra))
    parts.append(f'<div id="filters">show: <button type="button" data-filter="all" class="on">all</button>'
                 f"{buttons}</div>")

    for target in sorted({k[0] for k in keys}):
        parts.append(f"<h3>{_e(target)}</h3>")
        specs = sorted({(k[1], k[2]) for k in keys if k[0] == target})
        for spec, version in specs:
            bindings = sorted(k[3] for k in keys if k[:3] == (target, spec, version))
            parts.append(f"<h4>{_e(spec.upper())} {_e(version)}</h4>")
            cells: dict[tuple[str, str], str] = {}
            for binding in bindings:
                key = (target, spec, version, binding)
                rows = _rows_for(report, key)
                cells.update({(r["id"], binding): r["outcome"] for r in rows})
                parts.append(f"<h5>binding {_e(binding)}</h5>")
                if key in levels:
                    parts.append(f'<div class="level">{_e(levels[key]["summary"])}</div>')
                parts.append(_requirements_table(rows, by_node, names))
            parts.append(f"<h5>coverage: {_e(spec.upper())} {_e(version)}, requirements × bindings</h5>")
            parts.append(_matrix(spec, version, bindings, cells))

    if report.get("interop"):
        parts.append(_interop_html(report))
    parts.append(f"<script>{_JS}</script></body></html>\n")
    return "".join(parts)


def _interop_html(report: dict[str, Any]) -> str:
    """The interop matrices (sources × destinations per spec version, then formats), and every
    lost field with the record, the field and the requirement that promised it."""
    from memconform.reports.interop import cell_text, matrices

    parts = ["<h2>interop</h2>"]
    for m in matrices(report):
        parts.append(f"<h3>{_e(m.title)}</h3><table class=\"matrix\"><tr><th>from \\ to</th>")
        parts.append("".join(f"<th>{_e(x)}</th>" for x in m.labels) + "</tr>")
        for src in m.labels:
            parts.append(f"<tr><th>{_e(src)}</th>")
            for dst in m.labels:
                entry = None if src == dst else m.cells.get((src, dst))
                outcome = entry["outcome"] if entry else "none"
                text = "" if src == dst else cell_text(entry)
                parts.append(f'<td class="o-{_e(outcome)}" data-outcome="{_e(outcome)}">{_e(text)}</td>')
            parts.append("</tr>")
        parts.append("</table>")
    losses = [(e, x) for e in report["interop"] for x in e["losses"]]
    if losses:
        parts.append("<h3>lost fields</h3><table><tr><th>spec</th><th>from → to</th><th>record</th><th>field</th>"
                     "<th>promised by</th><th>seen at</th><th>expected</th><th>got</th></tr>")
        for e, x in losses:
            parts.append(f'<tr class="o-{_e(e["outcome"])}"><td>{_e(e["spec"].upper())} {_e(e["version"])}</td>'
                         f'<td>{_e(e["source"])} → {_e(e["destination"])}</td><td><code>{_e(x["record"])}</code></td>'
                         f'<td><code>{_e(x["field"])}</code></td><td>{_promise(x)}</td>'
                         f'<td>{_e(x["stage"])}</td><td><code>{_e(x["expected"])}</code></td>'
                         f'<td><code>{_e(x["got"])}</code></td></tr>')
        parts.append("</table>")
    notes = [(e, n) for e in report["interop"] for n in e["notes"]]
    if notes:
        parts.append("<h3>not compared</h3><ul>" + "".join(
            f"<li>{_e(e['spec'].upper())} {_e(e['source'])} → {_e(e['destination'])}: {_e(n)}</li>"
            for e, n in notes) + "</ul>")
    return "".join(parts)


def _promise(loss: dict[str, Any]) -> str:
    """A lost field's promise, or why no side is to blame (two legitimate readings disagree)."""
    if loss.get("disagreement"):
        return f'no side: readings disagree — {_e(loss["disagreement"])}'
    return f'<code>{_e(loss["requirement"])}</code>'
