"""The checklist report as one self-contained HTML page.

No external assets (styles and script are inline, nothing is fetched), readable on a phone
(the tool table turns into cards on narrow screens), a sortable and filterable tool table
that scrolls sideways inside its frame (tool names stay in view) when the window is too
narrow for it, and the findings grouped by checklist question. The model's texts are Markdown
inline text (names in backticks); only their code spans become markup, the rest is escaped.
"""

from __future__ import annotations

from html import escape
from typing import TextIO

from markdown_it import MarkdownIt

from agentguard.report.model import Cell, Evidence, Report, ToolRow

# Code spans only: any other Markdown, and any HTML, in a scanned project's names stays text.
CODE_SPANS = MarkdownIt("zero").enable("backticks")

VERDICT_CLASS = {
    "pass": "v-pass",
    "partial": "v-partial",
    "fail": "v-fail",
    "not applicable": "v-na",
    "not checked": "v-unknown",
}
COLUMNS = (
    ("name", "Tool"),
    ("framework", "Framework"),
    ("location", "Location"),
    ("risk", "Risk"),
    ("idempotency", "Idempotency"),
    ("replay", "Replay"),
    ("key", "Key"),
    ("ledger", "Ledger"),
    ("timeout", "Timeout"),
    ("observation", "Observation"),
    ("eval", "Eval"),
    ("findings", "Findings"),
)
# The per-question answers; a run of identical "n/a" answers is one cell spanning the run.
CHECK_COLUMNS = (
    ("key", "Key"),
    ("ledger", "Ledger"),
    ("timeout", "Timeout"),
    ("observation", "Observation"),
    ("eval", "Eval"),
)

STYLE = """
:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--line:#d0d7de;--pass:#1a7f37;--fail:#cf222e;
--partial:#9a6700;--na:#6e7781;--unknown:#8250df;--chip:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
main{max-width:1440px;margin:0 auto;padding:16px}
h1{font-size:1.5rem;margin:.2em 0}
h2{font-size:1.2rem;margin:1.6em 0 .6em;border-bottom:1px solid var(--line);padding-bottom:.2em}
.muted{color:var(--muted)}
.badges span{display:inline-block;margin:2px 6px 2px 0;padding:1px 8px;border-radius:12px;
background:var(--chip);border:1px solid var(--line)}
/* One question a row, as wide as the page: a question's open findings then read on long
   lines, and no card stands beside a taller one over blank space. */
.questions{display:flex;flex-direction:column;gap:8px}
.q{border:1px solid var(--line);border-left:6px solid var(--na);border-radius:6px;padding:8px 12px}
.q.v-pass{border-left-color:var(--pass)}.q.v-fail{border-left-color:var(--fail)}
.q.v-partial{border-left-color:var(--partial)}.q.v-unknown{border-left-color:var(--unknown)}
.q h3{margin:0;font-size:1rem;display:inline}
.q h3+p{display:inline;margin:0 0 0 .4em;font-weight:600}
.q p{margin:.3em 0}
.verdict{display:inline-block;font-weight:600;font-size:.8rem;padding:0 8px;border-radius:10px;
color:#fff;background:var(--na);text-transform:uppercase;letter-spacing:.03em}
.v-pass .verdict,.verdict.v-pass{background:var(--pass)}
.v-fail .verdict,.verdict.v-fail{background:var(--fail)}
.v-partial .verdict,.verdict.v-partial{background:var(--partial)}
.v-unknown .verdict,.verdict.v-unknown{background:var(--unknown)}
details{margin:.4em 0}
summary{cursor:pointer}
ul.evidence{margin:.3em 0;padding-left:1.2em}
ul.evidence li{margin:.2em 0;overflow-wrap:anywhere}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--chip);
padding:0 3px;border-radius:3px}
.controls{display:flex;flex-wrap:wrap;gap:8px;margin:.5em 0}
.controls input,.controls select{font:inherit;padding:6px 8px;border:1px solid var(--line);
border-radius:6px;min-width:0}
.controls input{flex:1 1 220px}
/* Too wide for the window: the table scrolls inside this frame. The shadows at the edges
   show there is more to the side (they scroll away with the content at either end). */
.table-wrap{overflow-x:auto;background:
linear-gradient(to right,var(--bg) 30%,rgba(255,255,255,0)) left/40px 100% no-repeat local,
linear-gradient(to left,var(--bg) 30%,rgba(255,255,255,0)) right/40px 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.2),transparent) left/14px 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.2),transparent) right/14px 100% no-repeat
scroll}
.table-wrap:focus-visible{outline:2px solid var(--unknown);outline-offset:2px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{border-bottom:1px solid var(--line);padding:6px;text-align:left;vertical-align:top}
th{white-space:nowrap}
#tools th:first-child,#tools td:first-child{position:sticky;left:0;z-index:1;background:var(--bg);
box-shadow:1px 0 0 var(--line)}
td.na{color:var(--na)}
/* Long snake_case names and paths break after "_" or "/" rather than widen the table past
   the window. */
#tools td[data-col=name]{max-width:14em;overflow-wrap:break-word}
#tools td[data-col=location]{max-width:15em;overflow-wrap:break-word}
#tools td[data-col=location] code{font-size:12px;padding:0}
th button{font:inherit;font-weight:600;border:0;background:none;padding:0;cursor:pointer;
color:inherit}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
td.good{color:var(--pass)}td.bad{color:var(--fail);font-weight:600}td.unknown{color:var(--unknown)}
.inferred::after{content:"*";color:var(--muted)}
.note{display:block;font-size:.85em;color:var(--muted)}
li.sev-error::marker{color:var(--fail)}li.sev-warning::marker{color:var(--partial)}
.sev-error b{color:var(--fail)}.sev-warning b{color:var(--partial)}
.badges .sev-error{color:var(--fail)}.badges .sev-warning{color:var(--partial)}
p.legend .inferred::after{content:""}p.legend .inferred::before{content:"* ";color:var(--muted)}
@media (max-width:720px){
 main{padding:10px}
 .table-wrap{background:none}
 table,thead,tbody,tr,td{display:block;width:100%}
 thead{position:absolute;left:-9999px}
 tr{border:1px solid var(--line);border-radius:6px;margin:0 0 10px;padding:4px 8px}
 td{border:0;padding:3px 0;display:flex;gap:8px;overflow-wrap:anywhere}
 td>*{min-width:0}
 #tools td:first-child{position:static;box-shadow:none}
 #tools td[data-col]{max-width:none}
 td::before{content:attr(data-label);flex:0 0 42%;color:var(--muted);font-weight:600}
}
"""

SCRIPT = """
(function(){
  var table=document.getElementById('tools');if(!table)return;
  var body=table.tBodies[0];
  var filter=document.getElementById('tool-filter');
  var only=document.getElementById('tool-status');
  function apply(){
    var text=(filter.value||'').toLowerCase();var mode=only.value;
    var shown=0;
    Array.prototype.forEach.call(body.rows,function(row){
      var ok=row.textContent.toLowerCase().indexOf(text)>=0;
      if(mode==='findings')ok=ok&&row.dataset.findings!=='0';
      if(mode==='writes')ok=ok&&row.dataset.writes==='1';
      row.hidden=!ok;if(ok)shown++;
    });
    document.getElementById('tool-count').textContent=shown+' of '+body.rows.length+' tools';
  }
  filter.addEventListener('input',apply);only.addEventListener('change',apply);
  // A cell names the columns it fills (data-col), so spanning cells sort with the rest.
  function cellFor(row,key){return row.querySelector('td[data-col~="'+key+'"]');}
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th){
    var button=th.querySelector('button');if(!button)return;var key=th.dataset.key;
    button.addEventListener('click',function(){
      var asc=th.getAttribute('aria-sort')!=='ascending';
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var p=cellFor(a,key),q=cellFor(b,key);
        var x=p.dataset.sort||p.textContent,y=q.dataset.sort||q.textContent;
        var n=x.localeCompare(y,undefined,{numeric:true});return asc?n:-n;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  apply();
})();
"""


def prose(text: str) -> str:
    """The model's Markdown inline text as HTML: `name` becomes <code>name</code>."""
    return CODE_SPANS.renderInline(text)


def _breakable(name: str) -> str:
    """A long path or snake_case name, escaped, that may break after a slash or an
    underscore rather than widen the tool table or break inside a word."""
    return escape(name).replace("/", "/<wbr>").replace("_", "_<wbr>")


def _where(report: Report, path: str | None, line: int | None) -> str:
    if not path:
        return ""
    # Long paths may break after a slash rather than widen the tool table.
    label = _breakable(f"{path}:{line}" if line else path)
    if report.link_base:
        href = f"{report.link_base.rstrip('/')}/{path}" + (f"#L{line}" if line else "")
        return f'<a href="{escape(href)}"><code>{label}</code></a>'
    return f"<code>{label}</code>"


def _evidence(report: Report, item: Evidence) -> str:
    severity = f' class="sev-{escape(item.severity)}"' if item.severity else ""
    text = prose(item.text)
    if item.code and item.text.startswith(item.code):
        text = f"<b>{escape(item.code)}</b>{prose(item.text[len(item.code) :])}"
    return f"<li{severity}>{_where(report, item.path, item.line)} {text}</li>"


def _cell(columns: list[tuple[str, str]], value: Cell) -> str:
    """A table cell filling one column or, for a run of equal n/a answers, several."""
    keys = " ".join(key for key, _ in columns)
    label = columns[0][1] if len(columns) == 1 else f"{columns[0][1]} to {columns[-1][1]}"
    span = f' colspan="{len(columns)}"' if len(columns) > 1 else ""
    css = f"{value.status} na" if _not_applicable(value) else value.status
    title = f' title="{escape(value.source)}"' if value.source else ""
    # The marker sits on an inner span so it stays next to the value in the phone layout.
    inner = (
        f'<span class="inferred">{escape(value.value)}</span>'
        if value.source == "inferred"
        else f"<span>{escape(value.value)}</span>"
    )
    if value.note:
        # One flex item with its value in the phone layout, the note on a line below.
        inner = f'<span>{inner}<span class="note">{escape(value.note)}</span></span>'
    return (
        f'<td data-col="{keys}" data-label="{escape(label)}"{span} class="{css}"{title}>'
        f"{inner}</td>"
    )


def _not_applicable(value: Cell) -> bool:
    return value.value.startswith("n/a")


def _check_cells(tool: ToolRow) -> list[str]:
    """Key to Eval, with each run of equal n/a answers (a read-only tool's five) said once."""
    runs: list[tuple[list[tuple[str, str]], Cell]] = []
    for key, label in CHECK_COLUMNS:
        value: Cell = getattr(tool, key)
        if runs and _not_applicable(value) and runs[-1][1] == value:
            runs[-1][0].append((key, label))
        else:
            runs.append(([(key, label)], value))
    return [_cell(columns, value) for columns, value in runs]


def _tool_row(report: Report, tool: ToolRow) -> str:
    codes = ", ".join(tool.finding_codes)
    cells = [
        f'<td data-col="name" data-label="Tool"><strong>{_breakable(tool.name)}</strong></td>',
        f'<td data-col="framework" data-label="Framework">{escape(tool.framework)}</td>',
        f'<td data-col="location" data-label="Location" '
        f'data-sort="{escape(tool.path)}:{tool.line:06d}">'
        f"{_where(report, tool.path, tool.line)}</td>",
        _cell([("risk", "Risk")], tool.risk),
        _cell([("idempotency", "Idempotency")], tool.idempotency),
        _cell([("replay", "Replay")], tool.replay),
        *_check_cells(tool),
        f'<td data-col="findings" data-label="Findings" class="{"bad" if codes else ""}" '
        f'data-sort="{len(tool.findings):04d}">{escape(codes) or "-"}</td>',
    ]
    writes = "1" if tool.effects and (tool.risk.value != "read" or tool.risk.note) else "0"
    return (
        f'<tr data-findings="{len(tool.findings)}" data-writes="{writes}">'
        + "".join(cells)
        + "</tr>"
    )


def render(report: Report, stream: TextIO) -> None:
    title = f"agentguard checklist: {report.root_name}"
    severities = "".join(
        f'<span class="sev-{escape(s)}">{n} {escape(s)}</span>'
        for s, n in report.by_severity.items()
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Belt and braces: even a tampered report cannot fetch anything.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<main>",
        "<header>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">{len(report.tools)} tools in {report.files} files; '
        f"{report.findings} findings. agentguard {escape(report.version)}.</p>",
        f'<p class="badges">{severities}</p>',
        "</header>",
        '<section id="checklist">',
        "<h2>Checklist</h2>",
        '<div class="questions">',
    ]
    for q in report.questions:
        css = VERDICT_CLASS[q.verdict]
        parts.append(f'<article class="q {css}" id="q-{escape(q.id)}" data-verdict="{q.verdict}">')
        parts.append(f'<h3>{escape(q.id)} <span class="verdict">{escape(q.verdict)}</span></h3>')
        parts.append(f"<p>{prose(q.question)}</p>")
        parts.append(f'<p class="muted">{prose(q.summary)}</p>')
        if q.findings or q.evidence:
            count = len(q.findings)
            label = f"{count} finding{'s' if count != 1 else ''}" if count else "evidence"
            parts.append(f"<details{' open' if q.verdict == 'fail' else ''}>")
            parts.append(f"<summary>{label}</summary>")
            parts.append('<ul class="evidence">')
            parts += [_evidence(report, item) for item in q.findings + q.evidence]
            parts.append("</ul></details>")
        if q.rules:
            parts.append(f'<p class="muted">rules: {escape(", ".join(q.rules))}</p>')
        parts.append("</article>")
    parts += ["</div>", "</section>", '<section id="tools-section">', "<h2>Tools</h2>"]
    if report.tools:
        parts += [
            '<div class="controls">',
            '<input id="tool-filter" type="search" placeholder="Filter tools…" '
            'aria-label="Filter tools">',
            '<select id="tool-status" aria-label="Show">',
            '<option value="all">all tools</option>',
            '<option value="findings">tools with findings</option>',
            '<option value="writes">write tools</option>',
            "</select>",
            f'<span id="tool-count" class="muted">{len(report.tools)} tools</span>',
            "</div>",
            # Focusable so keyboard users can scroll it; labelled for screen readers.
            '<div class="table-wrap" role="region" aria-label="Tools table" tabindex="0">',
            '<table id="tools">',
            "<thead><tr>"
            + "".join(
                f'<th scope="col" data-key="{key}"><button type="button">{label}</button></th>'
                for key, label in COLUMNS
            )
            + "</tr></thead>",
            "<tbody>",
        ]
        parts += [_tool_row(report, tool) for tool in report.tools]
        parts += [
            "</tbody></table></div>",
            '<p class="muted legend"><span class="inferred">inferred from the code, not '
            "declared by the tool</span></p>",
        ]
    else:
        parts.append("<p>No tools found.</p>")
    parts.append("</section>")
    if report.problems:
        parts += ['<section id="problems">', "<h2>Files not analysed</h2>", '<ul class="evidence">']
        parts += [_evidence(report, p) for p in report.problems]
        parts += ["</ul>", "</section>"]
    parts += ["</main>", f"<script>{SCRIPT}</script>", "</body>", "</html>"]
    stream.write("\n".join(parts) + "\n")
