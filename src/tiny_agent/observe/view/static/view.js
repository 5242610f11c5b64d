// tiny-agent view: the timeline of a session's calls, one call's request beside the previous one,
// and the replay what-ifs. Plain DOM, no framework; every figure comes from /api/session/ID.
"use strict";
(function () {
  const token = document.body.dataset.token;
  const sid = document.body.dataset.session;
  const api = (path) => `/api/session/${sid}${path}?token=${encodeURIComponent(token)}`;
  const $ = (id) => document.getElementById(id);
  const numbers = new Intl.NumberFormat("en-US"); // one formatter: toLocaleString makes one per number
  const n = (v) => (v === null || v === undefined ? "?" : numbers.format(v));
  const usd = (v) => (v === null || v === undefined ? "$?" : "$" + v.toFixed(4));
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  let calls = [];
  const AUTO_WHATIFS = 500; // longer sessions replay on request: seven replays of 2,000 calls take seconds

  function segments(c) {
    const reasoning = c.reasoning_tokens || 0;
    return [
      ["read", c.cache_read_tokens || 0], ["write", c.cache_write_tokens || 0],
      ["uncached", c.uncached_tokens || 0], ["output", Math.max(0, (c.output_tokens || 0) - reasoning)],
      ["reasoning", reasoning],
    ];
  }

  function drawTimeline(data) {
    calls = data.calls;
    const t = data.totals;
    $("summary").textContent = `${data.session.title || data.session.id} · ${t.calls} calls · in ${n(t.input_tokens)} ` +
      `(cache read ${n(t.cache_read_tokens)}, write ${n(t.cache_write_tokens)}, uncached ${n(t.uncached_tokens)}) · ` +
      `out ${n(t.output_tokens)}` + (t.reasoning_tokens ? ` (reasoning ${n(t.reasoning_tokens)})` : "") +
      ` · ${usd(t.cost_usd)}`;
    const most = Math.max(1, ...calls.map((c) => (c.input_tokens || 0) + (c.output_tokens || 0)));
    const marks = {};
    for (const m of data.marks) (marks[m.before] = marks[m.before] || []).push(m);
    const html = [];
    for (const c of calls) {
      for (const m of marks[c.index] || []) html.push(`<div class="mark ${m.kind}" title="${esc(m.text)}"></div>`);
      const title = `call ${c.index} · ${c.purpose} · in ${n(c.input_tokens)} (read ${n(c.cache_read_tokens)}, ` +
        `write ${n(c.cache_write_tokens)}, uncached ${n(c.uncached_tokens)}) · out ${n(c.output_tokens)}` +
        (c.reasoning_tokens ? ` (reasoning ${n(c.reasoning_tokens)})` : "") + ` · ${usd(c.cost_usd)}` +
        (c.miss ? ` · cache miss: ${c.miss}` : "");
      const segs = segments(c).map(([k, v]) => `<div class="seg ${k}" style="height:${(100 * v) / most}%"></div>`);
      html.push(`<div class="bar${c.miss ? " missed" : ""}" id="bar-${c.index}" data-call="${c.index}" ` +
        `title="${esc(title)}">${segs.join("")}</div>`);
    }
    for (const m of marks[calls.length] || []) html.push(`<div class="mark ${m.kind}" title="${esc(m.text)}"></div>`);
    $("timeline").innerHTML = html.join("");
    $("axis").innerHTML = `<span>call 0</span><span>${n(most)} tokens = full height</span>` +
      `<span>call ${calls.length - 1}</span>`;
    $("timeline").addEventListener("click", (ev) => {
      const bar = ev.target.closest(".bar");
      if (bar) location.hash = "call=" + bar.dataset.call;
    });
  }

  function drawRequest(el, req, title) {
    if (!req) { el.innerHTML = `<h3>${title}</h3><p class="note">none: the first turn of the session</p>`; return; }
    const rows = req.blocks.map((b) => {
      const cls = ["block", "layer-" + b.layer, b.shared ? "shared" : "", b.divergence ? "divergence" : ""].join(" ");
      const bp = b.mark ? `<span class="bp" title="cache breakpoint">◆${b.mark}</span>` : "";
      return `<div class="${cls}" data-path="${esc(b.path)}"><span class="tok">${n(b.tokens)}${bp}</span>` +
        `${esc(b.path)} · ${esc(b.label)}</div>`;
    });
    const note = req.note ? `<p class="note">${esc(req.note)}</p>` : "";
    el.innerHTML = `<h3>${title}</h3>${note}${rows.join("")}`;
  }

  let early = null; // the call the URL names, asked for with the timeline rather than after it

  async function select(index) {
    document.querySelectorAll(".bar.selected").forEach((b) => b.classList.remove("selected"));
    const bar = $("bar-" + index);
    if (bar) bar.classList.add("selected");
    const asked = early && early.index === index ? early.answer : fetch(api(`/call/${index}`));
    early = null;
    const res = await asked;
    if (!res.ok) { $("reasons").textContent = await res.text(); return; }
    const d = await res.json();
    const c = calls[index] || {};
    $("detail-title").textContent = `call ${index} (${d.purpose}) beside ` +
      (d.previous === null ? "nothing" : `call ${d.previous}`);
    const div = d.divergence;
    const where = div ? (div.path ? `${esc(div.text)}: now ${esc(div.now)}, was ${esc(div.was)}` : esc(div.text)) : "-";
    let agree = "";
    if (d.agrees !== undefined) agree = d.agrees ? ` <span class="agree">(the same character)</span>` :
      ` <span class="disagree">(another character than the diagnosis)</span>`;
    const between = d.between.length ? `<div class="note">between them: call(s) ${d.between.join(", ")} ` +
      `(not turns: their requests are other prompts)</div>` : "";
    $("reasons").innerHTML =
      `<div><span class="label">figures</span>in ${n(c.input_tokens)} (read ${n(c.cache_read_tokens)}, write ` +
      `${n(c.cache_write_tokens)}, uncached ${n(c.uncached_tokens)}) · out ${n(c.output_tokens)} · ${usd(c.cost_usd)}</div>` +
      `<div id="ours"><span class="label">our diagnosis</span>${esc(d.ours || "no miss diagnosed")}</div>` +
      `<div id="theirs"><span class="label">the provider says</span>${esc(d.provider || "nothing")}</div>` +
      `<div id="first-divergence" data-path="${esc(div && div.path ? div.path : "")}" ` +
      `data-character="${div && div.character !== undefined ? div.character : ""}">` +
      `<span class="label">first divergence</span>${where}${agree}</div>` +
      `<div id="breaks"><span class="label">every cause (lint)</span>` +
      (d.breaks.length ? d.breaks.map((b) => `<code class="break" data-rule="${esc(b.rule)}">${esc(b.rule)}</code> ` +
        `${esc(b.path)}${b.character === null ? "" : " at character " + b.character} (~${n(b.tokens_lost)} tokens)`).join("; ")
        : "none") + `</div>` + between;
    drawRequest($("before"), d.before, d.previous === null ? "previous request" : `previous request (call ${d.previous})`);
    drawRequest($("now"), d.request, `this request (call ${index})`);
    document.body.dataset.selected = String(index);
  }

  function fromHash() {
    const m = /call=(\d+)/.exec(location.hash);
    return m ? select(Number(m[1])) : Promise.resolve();
  }

  async function drawWhatIfs() {
    const res = await fetch(api("/whatif"));
    const rows = res.ok ? (await res.json()).rows : [];
    const known = rows.filter((r) => r.cost_usd !== undefined && r.cost_usd !== null).map((r) => r.cost_usd);
    const cheapest = known.length ? Math.min(...known) : null;
    const head = "<tr><th>policy</th><th>calls</th><th>compactions</th><th>input</th><th>cache read</th>" +
      "<th>cache write</th><th>output</th><th>thinking</th><th>cost</th></tr>";
    const body = rows.map((r) => r.error ? `<tr><td>${esc(r.policy)}</td><td colspan="8" class="note">${esc(r.error)}</td></tr>` :
      `<tr class="${r.cost_usd === cheapest ? "cheapest" : ""}"><td>${esc(r.policy)}</td><td>${n(r.calls)}</td>` +
      `<td>${n(r.compactions)}</td><td>${n(r.input_tokens)}</td><td>${n(r.cache_read_tokens)}</td>` +
      `<td>${n(r.cache_write_tokens)}</td><td>${n(r.output_tokens)}</td><td>${n(r.reasoning_tokens || 0)}</td>` +
      `<td>${usd(r.cost_usd)}${r.estimated ? "*" : ""}</td></tr>`);
    $("whatif").innerHTML = head + body.join("") +
      `<tr><td colspan="9" class="note">the recorded responses replayed under each policy; * = estimated</td></tr>`;
    document.body.dataset.whatifs = String(rows.length);
  }

  async function main() {
    const named = /call=(\d+)/.exec(location.hash);
    if (named) early = { index: Number(named[1]), answer: fetch(api(`/call/${named[1]}`)) };
    const res = await fetch(api(""));
    if (!res.ok) { $("summary").textContent = await res.text(); return; }
    drawTimeline(await res.json());
    document.body.dataset.calls = String(calls.length);
    window.addEventListener("hashchange", fromHash);
    await fromHash();
    document.body.dataset.ready = "1";
    fetch(api("/drawn")).catch(() => {}); // the load's end, as the server sees it (the benchmark's timer)
    if (calls.length <= AUTO_WHATIFS) { drawWhatIfs(); return; }
    $("whatif").innerHTML = `<tbody><tr><td>${calls.length} calls: each replay takes a while. ` +
      `<button id="replay">replay the what-ifs</button></td></tr></tbody>`;
    $("replay").addEventListener("click", () => { $("replay").disabled = true; drawWhatIfs(); });
  }
  main();
})();
