"""One self-contained HTML page rendered from the JSON report (DESIGN.md, idea 8).

Everything is inline (CSS, a few lines of JS, no fonts, no URLs) so the file can be mailed,
attached to CI or opened offline. Findings carry text a server under test chose, so every value
taken from the report goes through `_e` (html.escape) — nothing from the report is trusted.
"""

from __future__ import annotations

import html
from collections import defaultdict
from typing import Any

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


def _req_meta(spec: str, rid: str, fallback: dict[str, Any]) -> tuple[str, str, str]:
    cat = _catalogue(spec)
    try:
        req = cat.get(rid) if cat is not None else None
    except Exception:
        req = None
    if req is not None:
        return req.section, req.level, req.keyword.value
    return "", fallback.get("level", ""), fallback.get("keyword", "")


def _rows_for(report: dict[str, Any], key: tuple[str, str, str, str]) -> list[dict[str, Any]]:
    """Requirement rows of one target/spec/version/binding: the report's judged requirements,
    plus those only skipped checks touched (the report leaves them out; a reader filtering on
    'skipped' wants to see them)."""
    rows = [dict(r) for r in report["requirements"]
            if (r["target"], r["spec"], r["version"], r["binding"]) == key]
    seen = {r["id"] for r in rows}
    for res in report["results"]:
        if (res["target"], res["spec"], res["version"], res["binding"]) != key or res["outcome"] != "skipped":
            continue
        for rid in res["requirements"]:
            if rid in seen:
                continue
            seen.add(rid)
            section, level, keyword = _req_meta(res["spec"], rid, res)
            rows.append({"id": rid, "section": section, "level": level, "keyword": keyword,
                         "outcome": "skipped", "checks": [res["node_id"]]})
    return sorted(rows, key=lambda r: r["id"])


def _findings_html(rid: str, checks: list[str], by_node: dict[str, list[dict[str, Any]]]) -> str:
    out = []
    for node in checks:
        for res in by_node.get(node, ()):
            head = f'<div><code>{_e(res["check"])}</code>{" [" + _e(res["case"]) + "]" if res.get("case") else ""}' \
                   f' — <span class="o-{_e(res["outcome"])}">{_e(res["outcome"])}</span>'
            if res.get("reason"):
                head += f": {_e(res['reason'])}"
            out.append(head + "</div>")
            for f in res.get("findings", ()):
                if f.get("requirement") != rid:
                    continue  # a finding belongs to the requirement it names
                parts = [f"<div>{_e(f['message'])}</div>"]
                for field in ("sent", "received", "where"):
                    if f.get(field):
                        parts.append(f"<div>{field}:<pre>{_e(f[field])}</pre></div>")
                out.append(f'<div class="finding">{"".join(parts)}</div>')
    return "".join(out)


def _requirements_table(rows: list[dict[str, Any]], by_node: dict[str, list[dict[str, Any]]]) -> str:
    body = []
    for r in rows:
        o = _e(r["outcome"])
        body.append(f'<tr class="req o-{o}" data-outcome="{o}"><td><code>{_e(r["id"])}</code></td>'
                    f'<td>{_e(r["section"])}</td><td>{_e(r["level"])}</td><td>{_e(r["keyword"])}</td>'
                    f'<td>{o}</td><td>{_findings_html(r["id"], r["checks"], by_node)}</td></tr>')
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

    run = report.get("run", {})
    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>memconform report</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>memconform report</h1>",
             f"<p>generated {_e(report.get('generated_at'))} · memconform {_e(run.get('memconform'))}"
             f" · pytest {_e(run.get('pytest'))} · python {_e(run.get('python'))}</p>",
             f"<p>options: <code>{_e(run.get('options'))}</code></p>",
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
        parts.append(f"<h2>{_e(target)}</h2>")
        specs = sorted({(k[1], k[2]) for k in keys if k[0] == target})
        for spec, version in specs:
            bindings = sorted(k[3] for k in keys if k[:3] == (target, spec, version))
            parts.append(f"<h3>{_e(spec.upper())} {_e(version)}</h3>")
            cells: dict[tuple[str, str], str] = {}
            for binding in bindings:
                key = (target, spec, version, binding)
                rows = _rows_for(report, key)
                cells.update({(r["id"], binding): r["outcome"] for r in rows})
                parts.append(f"<h4>binding {_e(binding)}</h4>")
                if key in levels:
                    parts.append(f'<div class="level">{_e(levels[key]["summary"])}</div>')
                parts.append(_requirements_table(rows, by_node))
            parts.append(f"<h4>coverage: {_e(spec.upper())} {_e(version)}, requirements × bindings</h4>")
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
                         f'<td><code>{_e(x["field"])}</code></td><td><code>{_e(x["requirement"])}</code></td>'
                         f'<td>{_e(x["stage"])}</td><td><code>{_e(x["expected"])}</code></td>'
                         f'<td><code>{_e(x["got"])}</code></td></tr>')
        parts.append("</table>")
    notes = [(e, n) for e in report["interop"] for n in e["notes"]]
    if notes:
        parts.append("<h3>not compared</h3><ul>" + "".join(
            f"<li>{_e(e['spec'].upper())} {_e(e['source'])} → {_e(e['destination'])}: {_e(n)}</li>"
            for e, n in notes) + "</ul>")
    return "".join(parts)
