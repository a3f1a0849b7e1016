"""The workbench report as one self-contained HTML page (:func:`write_html`): the table, a chart
per measure and budget, and, for the replays that kept their prompts, each model call's prompt
under every strategy side by side with the whole history. Everything the page needs is inline
(its data as JSON, its script and style written here): it opens without a network."""

from __future__ import annotations

import json
import os
from typing import IO, Any, Dict, List, Sequence, Union

from .._checks import check_calls, type_name, utf8_text
from ..errors import MessageError, MessageTypeError
from ..model.message import Message
from .report import MEASURES, SentPrompt, WorkbenchReport, measure_value, opened

__all__ = ["write_html", "HTML_TEXT_CHARS"]

#: Each message's text is shown up to this many characters in the page (the rest is counted):
#: the page stays small for a hundred long transcripts.
HTML_TEXT_CHARS = 1500

def _cut(text: str) -> List[Any]:
    text = utf8_text(text)
    return [text[:HTML_TEXT_CHARS], max(0, len(text) - HTML_TEXT_CHARS)]


def _message_data(message: Message) -> List[Any]:
    calls = ", ".join(f"{c.name}({json.dumps(c.input, ensure_ascii=False)[:200]})" for c in message.tool_calls)
    text, more = _cut(message.text)
    return [message.role.value, text, more, utf8_text(calls)]


def _calls(prompts: Sequence[SentPrompt], history: List[Message], texts: Dict[str, int]) -> List[Any]:
    """Each call as [answered, tokens, cached, items, dropped, summarized]: items are runs
    [first, last] of intact history messages, ["m", origin, text, now] for a masked one (now: 1
    when masked since the previous call) and ["s", text, now] for a summary (text: an index
    into the transcript's changed texts)."""
    out = []
    for prompt in prompts:
        items: List[Any] = []
        for message, status, origin in zip(prompt.messages, prompt.status, prompt.origin):
            own = None if origin is None else history[origin]
            intact = origin is not None and own is not None and (message is own or message == own)
            if intact and origin is not None and items and isinstance(items[-1][0], int) and items[-1][1] == origin - 1:
                items[-1][1] = origin
            elif intact:
                items.append([origin, origin])
            else:
                key = json.dumps(_message_data(message), ensure_ascii=False)
                index = texts.setdefault(key, len(texts))
                now = int(status != "kept")
                items.append(["s", index, now] if origin is None else ["m", origin, index, now])
        dropped = [o for o in prompt.dropped_origins if o is not None]
        out.append([prompt.answered, prompt.tokens, prompt.cached, items, dropped, int(prompt.summarized)])
    return out


def page_data(report: WorkbenchReport) -> Dict[str, Any]:
    """What the page shows, as JSON data (see the script for its use)."""
    strategies = list(dict.fromkeys(r.strategy for r in report.overall))
    budgets = sorted(dict.fromkeys(r.budget for r in report.overall))
    overall = {f"{r.strategy}@{r.budget}": {key: measure_value(r, key) for key, _, _ in MEASURES} for r in report.overall}
    table = [r.to_dict() for r in report.overall]
    for line in table:
        del line["seconds"], line["seconds_per_turn"], line["outcome"], line["usage"]
    transcripts: Dict[str, Any] = {}
    for row in report.rows:
        history = report.histories.get(row.transcript)
        if row.prompts is None or history is None:
            continue
        entry = transcripts.setdefault(row.transcript, {
            "messages": [_message_data(m) for m in history], "texts": {}, "replays": {}, "outcome": row.outcome})
        entry["replays"][f"{row.strategy}@{row.budget}"] = _calls(row.prompts, history, entry["texts"])
    for entry in transcripts.values():
        entry["texts"] = [json.loads(key) for key in entry["texts"]]
    return {"encoding": report.encoding, "prices": None if report.prices is None else report.prices.name,
            "strategies": strategies, "budgets": budgets, "measures": [list(m) for m in MEASURES],
            "overall": overall, "table": table, "transcripts": transcripts}


def write_html(report: WorkbenchReport, path: Union[str, "os.PathLike[str]", IO[str]]) -> None:
    """Writes ``report`` as one self-contained HTML page to ``path`` (a file path, ``"-"`` or a
    text file open for writing): the table, a chart per measure and budget, and the per-call
    view of the transcripts whose prompts the run kept (``run_workbench(keep_prompts=...)``).

    >>> import os, tempfile
    >>> chat = [Message.user("Hi"), Message.assistant("Hello")]
    >>> report = run_workbench([chat], ["trim"], [100], keep_prompts=True)
    >>> path = os.path.join(tempfile.mkdtemp(), "wb.html")
    >>> write_html(report, path)
    >>> open(path).read().startswith("<!DOCTYPE html>")
    True
    """
    if not isinstance(report, WorkbenchReport):
        raise MessageTypeError(f"report must be a WorkbenchReport (from run_workbench), not {type_name(report)}")
    if isinstance(path, str) and not path:
        raise MessageError("path must be a file path, '-' for stdout, or a text file open for writing, not ''")
    data = json.dumps(page_data(report), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    data = data.replace("</", "<\\/")  # no text in the data can end the script element
    with opened(path, "path") as handle:
        handle.write(_PAGE.replace("/*DATA*/", data, 1))


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>agentmsg workbench</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
.panels{display:flex;flex-wrap:wrap;gap:12px}.panel{border:1px solid #ddd;padding:6px}
.panel h3{font-size:1em;margin:0 0 4px}
.bar{fill:#4a7fb5}.bar:hover{fill:#e07b39}.axis{stroke:#999}.lbl{font-size:11px;fill:#333}
.calls{display:flex;gap:10px;align-items:flex-start;overflow-x:auto}
.col{min-width:260px;max-width:420px;border:1px solid #ccc;padding:4px;font-size:12px}
.col h4{margin:0 0 4px;font-size:12px}
.msg{border-left:4px solid #bbb;margin:2px 0;padding:1px 4px;white-space:pre-wrap;max-height:6em;overflow:hidden}
.msg.new{border-color:#2e9d4e}.msg.masked{border-color:#d9a400;background:#fff8e0}
.msg.summary{border-color:#8a4fd1;background:#f4edfc}.msg.dropped{border-color:#d13f3f;color:#999;text-decoration:line-through}
.msg.absent{color:#aaa}.role{font-weight:600;margin-right:4px}
</style></head><body>
<h1>agentmsg pruning workbench</h1>
<p id="about"></p>
<h2>Every strategy and budget, all transcripts pooled</h2>
<table id="table"></table>
<h2>Measures by budget</h2>
<label>measure <select id="measure"></select></label>
<div class="panels" id="charts"></div>
<h2>What each strategy sent</h2>
<div id="view-controls"></div>
<div class="calls" id="calls"></div>
<script type="application/json" id="data">/*DATA*/</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const SVG = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}
function shown(value, kind) {
  if (value === null || value === undefined) return "-";
  if (kind === "share") return (100 * value).toFixed(0) + "%";
  if (kind === "dollars") return "$" + value.toFixed(4);
  return value.toFixed(value < 10 ? 1 : 0);
}
document.getElementById("about").textContent = "Tokens counted with " + D.encoding + "; costs at the prices of " +
  D.prices + ". " + D.strategies.length + " strategies x " + D.budgets.length + " budgets.";
function table() {
  const cols = ["strategy", "budget", "turns", "tokens_mean", "tokens_max", "over_budget", "kept_mean", "prefix_stability",
                "recall", "cost", "cost_uncached", "cached_share"];
  const t = document.getElementById("table");
  const head = el("tr");
  for (const c of cols) head.appendChild(el("th", {}, c));
  for (const p of ["openai", "anthropic", "bedrock"]) head.appendChild(el("th", {}, "valid " + p));
  t.appendChild(head);
  for (const row of D.table) {
    const tr = el("tr", {"data-key": row.strategy + "@" + row.budget});
    for (const c of cols) {
      const v = row[c];
      const kind = ["prefix_stability", "recall", "cached_share"].includes(c) ? "share" : c.startsWith("cost") ? "dollars" : "number";
      tr.appendChild(el("td", {}, typeof v === "string" ? v : c === "budget" || c === "turns" ? String(v) : shown(v, kind)));
    }
    for (const p of ["openai", "anthropic", "bedrock"]) tr.appendChild(el("td", {}, shown(row.valid[p], "share")));
    t.appendChild(tr);
  }
}
function charts(measure) {
  const [key, label, kind] = D.measures.find(m => m[0] === measure);
  const box = document.getElementById("charts");
  box.replaceChildren();
  const values = [];
  for (const s of D.strategies) for (const b of D.budgets) {
    const v = (D.overall[s + "@" + b] || {})[key];
    if (v !== null && v !== undefined) values.push(v);
  }
  const top = kind === "share" ? 1 : Math.max(1e-12, ...values);
  const rowH = 18, left = 170, width = 230;
  for (const b of D.budgets) {
    const panel = el("div", {class: "panel", "data-budget": b});
    panel.appendChild(el("h3", {}, label + " at " + b + " tokens"));
    const svg = el("svg:svg", {width: left + width + 70, height: rowH * D.strategies.length + 6, class: "chart"});
    D.strategies.forEach((s, i) => {
      const v = (D.overall[s + "@" + b] || {})[key];
      const y = 3 + i * rowH;
      svg.appendChild(el("svg:text", {x: left - 6, y: y + 12, "text-anchor": "end", class: "lbl"}, s));
      const w = v === null || v === undefined ? 0 : Math.max(1, width * v / top);
      const bar = el("svg:rect", {x: left, y: y + 2, width: w, height: rowH - 5, class: "bar", "data-strategy": s});
      bar.appendChild(el("svg:title", {}, s + " at " + b + ": " + shown(v, kind)));
      svg.appendChild(bar);
      svg.appendChild(el("svg:text", {x: left + w + 4, y: y + 12, class: "lbl"}, shown(v, kind)));
    });
    svg.appendChild(el("svg:line", {x1: left, x2: left, y1: 0, y2: rowH * D.strategies.length + 6, class: "axis"}));
    panel.appendChild(svg);
    box.appendChild(panel);
  }
}
const select = document.getElementById("measure");
for (const [key, label] of D.measures) select.appendChild(el("option", {value: key}, label));
select.addEventListener("change", () => charts(select.value));
table();
charts(D.measures[0][0]);

// -- per-call view --------------------------------------------------------------------------------
const names = Object.keys(D.transcripts);
const controls = document.getElementById("view-controls");
const state = {transcript: names[0], budget: D.budgets[0], call: 1};
function option(parent, label, id, choices, onchange) {
  const s = el("select", {id: id});
  for (const c of choices) s.appendChild(el("option", {value: c}, String(c)));
  s.addEventListener("change", () => onchange(s.value));
  const l = el("label", {}, " " + label + " ");
  l.appendChild(s);
  parent.appendChild(l);
  return s;
}
function messageBox(message, cls, origin, extra) {
  const [role, text, more, calls] = message;
  const box = el("div", {class: "msg " + cls, "data-origin": origin === null ? "" : String(origin), "data-status": cls});
  box.appendChild(el("span", {class: "role"}, (origin === null ? "[-]" : "[" + origin + "]") + " " + role));
  box.appendChild(document.createTextNode(text + (calls ? "\\n" + calls : "") + (more ? " ... (" + more + " more characters)" : "") + (extra || "")));
  return box;
}
function render() {
  const out = document.getElementById("calls");
  out.replaceChildren();
  const t = D.transcripts[state.transcript];
  if (!t) { out.textContent = "No prompts were kept in this run (keep_prompts, or agentmsg workbench --html)."; return; }
  const first = t.replays[Object.keys(t.replays)[0]];
  const call = Math.min(Math.max(1, state.call), first.length);
  const answered = first[call - 1][0];
  const previous = call > 1 ? first[call - 2][0] : 0;
  const history = el("div", {class: "col", id: "history"});
  history.appendChild(el("h4", {}, "history before message " + answered + (t.outcome && Object.keys(t.outcome).length ? " (" + JSON.stringify(t.outcome) + ")" : "")));
  for (let i = 0; i < answered; i++) history.appendChild(messageBox(t.messages[i], i >= previous ? "new" : "kept", i));
  out.appendChild(history);
  for (const s of D.strategies) {
    const calls = t.replays[s + "@" + state.budget];
    if (!calls) continue;
    const [ans, tokens, cached, items, dropped, summarized] = calls[call - 1];
    const col = el("div", {class: "col strategy", "data-strategy": s});
    col.appendChild(el("h4", {}, s + ": " + tokens + " tokens, " + cached + " from the previous prompt"));
    for (const item of items) {
      if (item[0] === "s") col.appendChild(messageBox(t.texts[item[1]], item[2] ? "summary" : "summary kept", null));
      else if (item[0] === "m") col.appendChild(messageBox(t.texts[item[2]], item[3] ? "masked" : "masked kept", item[1]));
      else for (let i = item[0]; i <= item[1]; i++) col.appendChild(messageBox(t.messages[i], i >= previous ? "new" : "kept", i));
    }
    for (const i of dropped) col.appendChild(messageBox(t.messages[i], "dropped", i, summarized ? " (summarized)" : " (dropped)"));
    out.appendChild(col);
  }
}
if (names.length) {
  option(controls, "transcript", "transcript", names, v => { state.transcript = v; render(); });
  option(controls, "budget", "budget", D.budgets, v => { state.budget = Number(v); render(); });
  const l = el("label", {}, " model call ");
  const n = el("input", {id: "call", type: "number", min: 1, value: 1});
  n.addEventListener("input", () => { state.call = Number(n.value) || 1; render(); });
  l.appendChild(n);
  controls.appendChild(l);
}
render();
</script></body></html>
"""


# Bad calls of this module's public functions and classes raise typed errors (see _checks).
check_calls(globals())
