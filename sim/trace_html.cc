// The timeline viewer page (sim/trace_html.h). Plain SVG drawn by a small
// hand-written script from the embedded FormatJson object: no library, no
// network, one file. Element classes and ids are what tests/browser/ checks:
//   .lane[data-lane=cpuN|threadN]       one per CPU and per thread
//   .event-marker[data-kind][data-entry] one per injected event (preempt,
//                                        migrate, signal, ipi trace entries)
//   .abort-jump[data-entry]             one per rseq abort
//   .cs-shade                           a step inside a critical section
//   #step-slider                        0 = initial state, k = after entry k-1
//   .mem[data-key="sym[cpu][i]"]        a symbol element's value at the slider
//   .thread-state[data-thread=t] .cpu   a thread's CPU at the slider
#include "sim/trace_html.h"

#include <string>
#include <string_view>
#include <vector>

#include "sim/simulator.h"

#include "sim/trace.h"

namespace rseqmc {
namespace {

// The first lines of kHead, which no later version of the page should change:
// IsTimelineHtml recognises a page by them.
constexpr std::string_view kSignature = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>rseqmc timeline</title>\n";

constexpr std::string_view kHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>rseqmc timeline</title>
<style>
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:17px;margin:0;font-weight:600}
.badge{padding:2px 9px;border-radius:10px;font-weight:600;font-size:12px}
.fail{background:#d7263d;color:#fff}.pass{background:#2e9e5b;color:#fff}
.meta{color:#c8ccd6;font-size:12px}
main{padding:12px 18px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin-bottom:12px;padding:10px 12px}
h2{font-size:13px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.04em;color:#5a6275}
pre{margin:0;font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap}
#broken pre{color:#a4161a}
#timeline-wrap{overflow-x:auto;border:1px solid #eef0f4;border-radius:4px}
svg text{font:11px ui-monospace,Menlo,Consolas,monospace}
.lane-label{font-weight:600;fill:#1d2330}
.lane-bg{fill:#fbfbfd;stroke:#eef0f4}
.cs-shade{fill:#ffd8a8}
.step rect{stroke:#fff;stroke-width:1}
.step rect.store{stroke:#1d2330;stroke-width:2;fill:none}
.event-marker path{stroke:#1d2330;stroke-width:1}
.event-marker text{font-weight:700;font-size:10px}
.abort-jump{fill:none;stroke:#d7263d;stroke-width:2}
#cursor{stroke:#3454d1;stroke-width:2}
#controls{display:flex;gap:12px;align-items:center}
#step-slider{flex:1}
#entry-text{font:12px ui-monospace,Menlo,Consolas,monospace;min-height:1.4em}
.grid{display:flex;gap:12px;flex-wrap:wrap}
.grid>div{flex:1;min-width:260px}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eef0f4;padding:3px 6px;text-align:left;font:12px ui-monospace,Menlo,Consolas,monospace}
th{color:#5a6275;font-weight:600}
td.changed{background:#fff3bf}
td.broken-sym{color:#a4161a;font-weight:700}
.legend span{margin-right:14px;font-size:12px}
.sw{display:inline-block;width:11px;height:11px;vertical-align:middle;margin-right:4px;border:1px solid #999}
</style></head><body>
<script type="application/json" id="trace-data">)HTML";

constexpr std::string_view kBody = R"HTML(</script>
<header><h1 id="title"></h1><span id="verdict" class="badge"></span><span class="meta" id="meta"></span></header>
<main>
<section id="broken"><h2>What broke</h2><pre id="broken-text"></pre></section>
<section><h2>Timeline</h2>
<div class="legend"><span><i class="sw" style="background:#ffd8a8"></i>critical section</span>
<span><i class="sw" style="background:#d7263d"></i>P preempt / M migrate / S signal / I IPI (injected)</span>
<span style="color:#d7263d">&#8631; abort to abort_ip</span><span><i class="sw" style="border:2px solid #1d2330"></i>store to a symbol (value under "writes")</span>
<span>&#9646; thread returned</span><span>one column per trace entry (instruction boundary); hover for the instruction</span></div>
<div id="timeline-wrap"><svg id="timeline" xmlns="http://www.w3.org/2000/svg"></svg></div>
<div id="controls"><label for="step-slider">step</label><input type="range" id="step-slider" min="0" value="0">
<span id="slider-pos"></span></div>
<div id="entry-text"></div>
</section>
<section><h2>Machine state at the slider</h2><div class="grid">
<div><table id="mem-table"><thead><tr><th>symbol</th><th>value</th></tr></thead><tbody></tbody></table></div>
<div><table id="thread-table"><thead><tr><th>thread</th><th>cpu</th><th>last instruction</th><th>section</th><th>state</th></tr></thead><tbody></tbody></table>
<table id="cpu-table"><thead><tr><th>cpu</th><th>running</th></tr></thead><tbody></tbody></table></div>
</div></section>
<section><h2>Replay</h2><pre id="replay"></pre></section>
</main>
<script>
(function () {
"use strict";
const D = JSON.parse(document.getElementById("trace-data").textContent);
const NS = "http://www.w3.org/2000/svg";
const COLORS = ["#3454d1", "#2e9e5b", "#8e44ad", "#e67e22", "#16a085", "#c0392b", "#7f8c8d", "#d35400"];
const EVENTS = {preempt: "P", migrate: "M", signal: "S", ipi: "I"};
const LANE = 30, LEFT = 110, TOP = 22;
const trace = D.trace, T = D.threads.length, C = D.cpus;
// Column width: fill the panel when the trace is short, scroll when it is long.
const avail = document.getElementById("timeline-wrap").clientWidth - LEFT - 30;
const W = Math.max(14, Math.min(34, Math.floor(avail / Math.max(1, trace.length))));
const threadName = t => (t >= 0 && t < T ? D.threads[t].name : "idle");
const color = t => COLORS[((t % COLORS.length) + COLORS.length) % COLORS.length];
function el(tag, attrs, parent, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function sectionOf(pc) {
  for (const s of D.sections) if (pc >= s.start && pc < s.post_commit) return s;
  return null;
}
// Symbol elements: key "name[cpu][i]" (plain symbols use cpu 0) and address.
const elements = [], byAddress = new Map();
for (const L of D.layout) {
  const cpus = L.per_cpu ? C : 1;
  for (let c = 0; c < cpus; c++) for (let i = 0; i < L.count; i++) {
    let key = L.name + (L.per_cpu ? "[" + c + "]" : "") + (L.count > 1 ? "[" + i + "]" : "");
    const v0 = pick(D.initial[L.name], L, c, i);
    const e = {key: key, sym: L.name, address: L.address + L.stride * c + i * L.width, initial: v0};
    elements.push(e); byAddress.set(e.address, e);
  }
}
function pick(v, L, c, i) {
  if (!L.per_cpu) return L.count === 1 ? v : v[i];
  return L.count === 1 ? v[c] : v[c][i];
}
// State after the first k entries.
function stateAt(k) {
  const mem = new Map(elements.map(e => [e.key, e.initial]));
  const th = D.threads.map(t => ({cpu: t.start_cpu, pc: -1, state: "runnable"}));
  const run = new Array(C).fill(-1);
  let changed = null;
  for (let j = 0; j < k; j++) {
    const e = trace[j], t = e.thread;
    changed = null;
    if (e.kind === "step") {
      if (t >= 0) { th[t].pc = e.pc; th[t].cpu = e.cpu; th[t].state = "running"; }
      if (e.cpu >= 0) run[e.cpu] = t;
      const m = e.a !== 0 ? byAddress.get(e.a) : undefined;
      if (m) { mem.set(m.key, e.b); changed = m.key; }
    } else if (e.kind === "switch_in") { if (e.cpu >= 0) run[e.cpu] = t; if (t >= 0) th[t].cpu = e.cpu; }
    else if (e.kind === "migrate") { if (t >= 0) th[t].cpu = e.a; if (run[e.cpu] === t) run[e.cpu] = -1; }
    else if (e.kind === "preempt" || e.kind === "yield") { if (e.cpu >= 0) run[e.cpu] = e.a; if (t >= 0) th[t].state = "preempted"; }
    else if (e.kind === "abort") { if (t >= 0) th[t].pc = e.a; }
    else if (e.kind === "exit") { if (t >= 0) th[t].state = "exited (" + e.a + ")"; if (run[e.cpu] === t) run[e.cpu] = -1; }
    else if (e.kind === "kill" || e.kind === "assert_fail") { for (const x of th) if (!x.state.startsWith("exited")) x.state = e.kind === "kill" ? "killed" : "assert failed"; }
  }
  return {mem: mem, threads: th, running: run, changed: changed};
}
function describe(e) {
  const who = threadName(e.thread) + (e.depth > 0 ? "/h" + e.depth : "");
  const code = i => (i >= 0 && i < D.code.length ? D.code[i].where : "@" + i);
  switch (e.kind) {
    case "step": return who + " cpu" + e.cpu + " " + e.where + ": " + e.instr;
    case "abort": return "ABORT " + who + " at " + code(e.pc) + " -> abort_ip " + code(e.a) + " (" + (D.sections[e.b] ? D.sections[e.b].name : "cs") + ")";
    case "migrate": return "injected MIGRATE " + who + " cpu" + e.cpu + " -> cpu" + e.a;
    case "preempt": return "injected PREEMPT " + who + " on cpu" + e.cpu;
    case "signal": return "injected SIGNAL " + e.a + " -> " + who;
    case "ipi": return "injected membarrier-rseq IPI on cpu" + e.cpu;
    case "exit": return who + " returned " + e.a;
    case "switch_in": return who + " switched in on cpu" + e.cpu;
    default: return e.kind.replace("_", " ") + " " + who + (e.detail ? ": " + e.detail : "");
  }
}
// ---- header, broken values, replay ----
document.getElementById("title").textContent = "rseqmc: " + D.scenario;
const vb = document.getElementById("verdict");
vb.textContent = D.verdict === "pass" ? "PASS" : "FAIL (" + D.verdict + ")";
vb.className = "badge " + (D.verdict === "pass" ? "pass" : "fail");
document.getElementById("meta").textContent = "kernel " + D.kernel + " | " + C + " cpus, " + T + " threads | " +
  D.steps + " steps | events: " + Object.keys(D.events).map(k => k + " " + D.events[k]).join(", ") + " | " + D.schedule;
const brokenText = (D.broken || "") + (D.message ? (D.broken ? "" : D.message + "\n") : "");
document.getElementById("broken-text").textContent = brokenText || "nothing: the execution passed";
document.getElementById("replay").textContent = D.replay || ("schedule " + D.schedule);
// ---- lanes ----
const svg = document.getElementById("timeline");
const lanes = [];
for (let c = 0; c < C; c++) lanes.push({id: "cpu" + c, label: "cpu" + c});
for (let t = 0; t < T; t++) lanes.push({id: "thread" + t, label: D.threads[t].name});
const WRITES = 34;  // the row of memory writes under the lanes
const width = LEFT + trace.length * W + 20, height = TOP + lanes.length * LANE + WRITES + 10;
svg.setAttribute("width", width); svg.setAttribute("height", height);
const laneY = id => TOP + lanes.findIndex(l => l.id === id) * LANE;
for (const l of lanes) {
  const g = el("g", {"class": "lane", "data-lane": l.id}, svg);
  el("rect", {"class": "lane-bg", x: LEFT, y: laneY(l.id) + 2, width: trace.length * W, height: LANE - 4}, g);
  el("text", {"class": "lane-label", x: 8, y: laneY(l.id) + LANE / 2 + 4}, g, l.label);
}
const every = Math.max(1, Math.ceil(40 / W));
for (let j = 0; j < trace.length; j += every) el("text", {x: LEFT + j * W, y: 12, fill: "#8a93a6"}, svg, String(trace[j].step));
const x = j => LEFT + j * W;
const writesY = TOP + lanes.length * LANE;
el("text", {"class": "lane-label", x: 8, y: writesY + 20}, svg, "writes");
let nthWrite = 0;
trace.forEach(function (e, j) {
  if (e.kind === "step" && e.thread >= 0) {
    const g = el("g", {"class": "step", "data-entry": j}, svg);
    const cs = sectionOf(e.pc);
    const ty = laneY("thread" + e.thread);
    if (cs) el("rect", {"class": "cs-shade", x: x(j), y: ty + 2, width: W, height: LANE - 4}, g);
    el("rect", {x: x(j) + 2, y: ty + 8, width: W - 4, height: LANE - 16, fill: color(e.thread), rx: 2}, g);
    if (e.cpu >= 0 && e.cpu < C) el("rect", {x: x(j) + 1, y: laneY("cpu" + e.cpu) + 6, width: W - 2, height: LANE - 12, fill: color(e.thread), opacity: cs ? 1 : 0.55}, g);
    const m = e.a !== 0 ? byAddress.get(e.a) : undefined;
    if (m) {  // a store to a symbol: outlined, and its value in the writes row
      el("rect", {"class": "store", x: x(j) + 1, y: ty + 6, width: W - 2, height: LANE - 12, rx: 2}, g);
      el("line", {x1: x(j) + W / 2, x2: x(j) + W / 2, y1: ty + LANE - 6, y2: writesY + 6, stroke: "#9aa3b5", "stroke-dasharray": "2 2"}, g);
      el("text", {"class": "write", x: x(j) + W / 2, y: writesY + 16 + 12 * (nthWrite++ % 2), "text-anchor": "middle", fill: color(e.thread)}, g, m.key + "=" + e.b);
    }
    el("title", {}, g, describe(e));
  } else if (EVENTS[e.kind]) {
    const lane = e.thread >= 0 ? "thread" + e.thread : "cpu" + e.cpu;
    const y = laneY(lane), cx = x(j) + W / 2;
    const g = el("g", {"class": "event-marker", "data-kind": e.kind, "data-entry": j}, svg);
    el("path", {d: "M" + cx + " " + (y + 3) + "l7 12l-7 12l-7 -12z", fill: "#d7263d"}, g);
    el("text", {x: cx - 3.5, y: y + 19, fill: "#fff"}, g, EVENTS[e.kind]);
    el("title", {}, g, describe(e));
  } else if (e.kind === "exit" && e.thread >= 0) {
    const y = laneY("thread" + e.thread);
    const g = el("g", {"class": "sched-mark", "data-entry": j}, svg);
    el("rect", {x: x(j) + W / 2 - 1.5, y: y + 4, width: 3, height: LANE - 8, fill: "#1d2330"}, g);
    el("title", {}, g, describe(e));
  } else if (e.kind === "abort") {
    let k = j + 1;
    while (k < trace.length && !(trace[k].kind === "step" && trace[k].thread === e.thread)) k++;
    const y = laneY("thread" + e.thread) + 4, x0 = x(j), x1 = x(Math.min(k, trace.length - 1)) + W / 2;
    const g = el("g", {"class": "abort-group", "data-entry": j}, svg);
    el("path", {"class": "abort-jump", "data-entry": j, d: "M" + x0 + " " + (y + 20) + " C" + x0 + " " + (y - 12) + " " + x1 + " " + (y - 12) + " " + x1 + " " + (y + 6), "marker-end": "url(#arrow)"}, g);
    const target = e.a >= 0 && e.a < D.code.length ? D.code[e.a].where : "abort_ip";
    el("text", {x: (x0 + x1) / 2, y: y - 6, "text-anchor": "middle", fill: "#d7263d"}, g, "abort \u2192 " + target);
    el("title", {}, g, describe(e));
  }
});
const defs = el("defs", {}, svg);
const mk = el("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto"}, defs);
el("path", {d: "M0 0L10 5L0 10z", fill: "#d7263d"}, mk);
const cursor = el("line", {id: "cursor", x1: LEFT, x2: LEFT, y1: TOP - 4, y2: height - 4}, svg);
// ---- state tables ----
const failing = new Set();
(D.properties || []).forEach(p => { if (!p.holds) for (const L of D.layout) if (new RegExp("\\b" + L.name + "\\b").test(p.text)) failing.add(L.name); });
const memBody = document.querySelector("#mem-table tbody");
for (const e of elements) {
  const tr = document.createElement("tr");
  tr.innerHTML = "<td></td><td class='mem'></td>";
  tr.firstChild.textContent = e.key;
  tr.lastChild.dataset.key = e.key;
  if (failing.has(e.sym)) tr.firstChild.className = "broken-sym";
  memBody.appendChild(tr);
}
const thBody = document.querySelector("#thread-table tbody");
D.threads.forEach(function (t, i) {
  const tr = document.createElement("tr");
  tr.className = "thread-state"; tr.dataset.thread = i;
  tr.innerHTML = "<td></td><td class='cpu'></td><td class='pc'></td><td class='cs'></td><td class='st'></td>";
  tr.firstChild.textContent = t.name; tr.firstChild.style.color = color(i);
  thBody.appendChild(tr);
});
const cpuBody = document.querySelector("#cpu-table tbody");
for (let c = 0; c < C; c++) {
  const tr = document.createElement("tr");
  tr.className = "cpu-state"; tr.dataset.cpu = c;
  tr.innerHTML = "<td>cpu" + c + "</td><td class='running'></td>";
  cpuBody.appendChild(tr);
}
const slider = document.getElementById("step-slider");
slider.max = trace.length;
function show(k) {
  const s = stateAt(k);
  for (const td of document.querySelectorAll("td.mem")) {
    td.textContent = String(s.mem.get(td.dataset.key));
    td.classList.toggle("changed", td.dataset.key === s.changed);
  }
  for (const tr of document.querySelectorAll("tr.thread-state")) {
    const t = s.threads[Number(tr.dataset.thread)];
    const cs = t.pc >= 0 ? sectionOf(t.pc) : null;
    tr.querySelector(".cpu").textContent = "cpu" + t.cpu;
    tr.querySelector(".pc").textContent = t.pc >= 0 ? D.code[t.pc].where + ": " + D.code[t.pc].instr : "(not started)";
    tr.querySelector(".cs").textContent = cs ? cs.name : "";
    tr.querySelector(".st").textContent = t.state;
  }
  for (const tr of document.querySelectorAll("tr.cpu-state")) {
    tr.querySelector(".running").textContent = threadName(s.running[Number(tr.dataset.cpu)]);
  }
  const cx = LEFT + k * W;
  cursor.setAttribute("x1", cx); cursor.setAttribute("x2", cx);
  document.getElementById("slider-pos").textContent = "entry " + k + " / " + trace.length + (k > 0 ? ", step " + trace[k - 1].step : "");
  document.getElementById("entry-text").textContent = k > 0 ? describe(trace[k - 1]) : "initial state";
}
slider.addEventListener("input", () => show(Number(slider.value)));
slider.value = trace.length;
show(trace.length);
})();
</script></body></html>
)HTML";

// The trace without its long repeated stretches (FindRepeats, sim/trace.h):
// dropped entries repeat kept ones, so the page's state at the slider stays
// right (the same stores again). A 100,000-step livelock's page shrinks from
// 35 MB to a few kB of trace.
Trace ElideRepeats(const Trace& trace, const std::vector<TraceRepeat>& repeats) {
  Trace out;
  auto repeat = repeats.begin();
  for (size_t i = 0; i < trace.size(); ++i) {
    if (repeat != repeats.end() && i == repeat->first) {
      i += repeat->count - 1;
      ++repeat;
      continue;
    }
    out.push_back(trace[i]);
  }
  return out;
}

}  // namespace

static_assert(kHead.starts_with(kSignature), "the page must begin with the signature IsTimelineHtml reads");

bool IsTimelineHtml(std::string_view text) { return text.starts_with(kSignature); }

size_t TimelineHtmlSignatureSize() { return kSignature.size(); }

std::string FormatHtml(const Scenario& s, const ExecutionResult& r, const HtmlNotes& notes) {
  const std::vector<TraceRepeat> elided = FindRepeats(r.trace);
  ExecutionResult shown;
  const ExecutionResult* page_of = &r;
  if (!elided.empty()) {
    shown = r;
    shown.trace = ElideRepeats(r.trace, elided);
    page_of = &shown;
  }
  std::string json =
      FormatJson(s, *page_of, ",\"broken\":" + JsonQuote(notes.broken) + ",\"replay\":" + JsonQuote(notes.replay));
  // Inside <script>, "</" could end the element early; "<\/" is the same JSON string.
  for (size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.insert(at + 1, "\\");
  std::string page(kHead);
  page += json;
  std::string body(kBody);
  if (!elided.empty()) {
    std::string note = "<section id=\"elided\"><h2>Elided</h2><pre>";
    for (const TraceRepeat& e : elided) {
      note += std::to_string(e.count) + " trace entries (steps " + std::to_string(r.trace[e.first].step) + ".." +
              std::to_string(r.trace[e.first + e.count - 1].step) + ") are not shown: they repeat the " +
              std::to_string(e.period) +
              " entries before them, the same instructions and stores again\n";
    }
    note += "</pre></section>\n";
    body.insert(body.find("<main>\n") + 7, note);
  }
  page += body;
  return page;
}

}  // namespace rseqmc
