// kStatusPageHtml (status_page.h): the page alone, so that it reads as HTML. Its script draws
// everything from /status.json with textContent and createElementNS (never innerHTML), so no
// text from a client (a kernel name, a method) can become markup.
#include "server/observability/status_page.h"

namespace onemodel::server {

const char kStatusPageHtml[] = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>onemodeld status</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .2em; } h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
table { border-collapse: collapse; } th, td { padding: .2em .7em; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
dl { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; margin: 0; }
dt { color: #666; } dd { margin: 0; }
.rented { fill: #3b6fb6; } .idle { fill: #a9c4e8; } .legend { font-size: 12px; }
#updated { color: #888; font-size: 12px; } .note { color: #666; font-size: 12px; }
</style>
</head>
<body>
<h1>onemodeld <span id="instance"></span></h1>
<div id="updated">loading /status.json ...</div>
<noscript>This page draws itself with JavaScript; the same figures are at
<a href="status.json">status.json</a> and <a href="metrics">metrics</a>.</noscript>
<h2>Server</h2>
<dl id="identity"></dl>
<h2>Pool size classes</h2>
<svg id="pool-chart" xmlns="http://www.w3.org/2000/svg" width="720" height="40" role="img"
     aria-label="rented and idle bytes per pool size class"></svg>
<div class="note" id="pool-summary"></div>
<h2>Sessions</h2>
<div class="note" id="sessions-summary"></div>
<table id="sessions"><thead><tr><th>session</th><th>kernels</th><th>memory</th>
<th title="what the session memory limit counts: buffers by size class, arena chunks, handles,
backward records, queued requests">charged</th><th>limit</th><th>pool</th><th>arena</th><th>arena chunks</th><th>handles</th><th>requests</th><th>idle</th></tr></thead>
<tbody></tbody></table>
<h2>Requests</h2>
<div class="note">Rates over the last refresh (since start on the first); percentiles since start,
estimated from the latency histogram's buckets.</div>
<table id="rpcs"><thead><tr><th>RPC</th><th>requests</th><th>per second</th><th>errors</th>
<th>mean</th><th>p50</th><th>p90</th><th>p99</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 2000;
let previous = null;  // the last reply and when it came, for rates

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
}
function seconds(s) {
  if (s < 1e-3) return (s * 1e6).toFixed(0) + " us";
  if (s < 1) return (s * 1e3).toFixed(s < 0.01 ? 2 : 1) + " ms";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fillRows(table, rows, rowClass) {
  const body = document.querySelector(table + " tbody");
  body.replaceChildren();
  for (const cells of rows) {
    const tr = el("tr", undefined, rowClass);
    cells.forEach((c, i) => tr.appendChild(el("td", String(c), i === 0 ? "" : "n")));
    body.appendChild(tr);
  }
}

function drawIdentity(s) {
  document.getElementById("instance").textContent = s.instance;
  const dl = document.getElementById("identity");
  dl.replaceChildren();
  for (const [k, v] of [["gRPC", s.grpc], ["version", s.version + " (git " + s.git + ")"],
                        ["kernels", s.kernels], ["BLAS", s.blas],
                        ["uptime", seconds(s.uptime_seconds)],
                        ["started", new Date(s.start_time_seconds * 1000).toISOString()],
                        ["resident memory", bytes(s.resident_memory_bytes)],
                        ["CPU", seconds(s.cpu_seconds)], ["threads", s.threads],
                        ["open files", s.open_fds]]) {
    dl.appendChild(el("dt", k));
    dl.appendChild(el("dd", String(v)));
  }
}

// One group per size class: its label, a rented bar and an idle bar (linear scale).
function drawPool(pool) {
  const chart = document.getElementById("pool-chart");
  chart.replaceChildren();
  const label = 80, width = 480, row = 30, top = 22;
  const max = Math.max(1, ...pool.classes.flatMap(c => [c.rented_bytes, c.idle_bytes]));
  chart.appendChild(svg("rect", {x: label, y: 4, width: 10, height: 10, class: "rented"}));
  chart.appendChild(svg("text", {x: label + 14, y: 13, class: "legend"}, "rented"));
  chart.appendChild(svg("rect", {x: label + 70, y: 4, width: 10, height: 10, class: "idle"}));
  chart.appendChild(svg("text", {x: label + 84, y: 13, class: "legend"}, "idle"));
  pool.classes.forEach((c, i) => {
    const y = top + i * row;
    const g = svg("g", {class: "size-class", "data-size-bytes": c.size_bytes});
    g.appendChild(svg("text", {x: label - 6, y: y + 15, "text-anchor": "end"}, bytes(c.size_bytes)));
    [["rented", c.rented_bytes, c.rented_buffers, 0], ["idle", c.idle_bytes, c.idle_buffers, 13]]
        .forEach(([cls, b, n, dy]) => {
      const w = b > 0 ? Math.max(1, width * b / max) : 0;
      g.appendChild(svg("rect", {x: label, y: y + dy, width: w, height: 12, class: cls}));
      g.appendChild(svg("text", {x: label + w + 4, y: y + dy + 10, class: "legend"},
                        bytes(b) + " (" + n + ")"));
    });
    chart.appendChild(g);
  });
  chart.setAttribute("height", top + Math.max(1, pool.classes.length) * row);
  document.getElementById("pool-summary").textContent =
      "rented " + bytes(pool.rented_bytes) + " (asked for " + bytes(pool.requested_bytes) +
      "), idle " + bytes(pool.idle_bytes) + " of at most " + bytes(pool.max_idle_bytes) +
      ", peak rented " + bytes(pool.peak_rented_bytes) + "; " + pool.hits + " hits, " +
      pool.misses + " misses" + (pool.classes.length ? "" : "; no buffers yet");
}

function drawSessions(s) {
  document.getElementById("sessions-summary").textContent =
      s.open + " open (" + s.rows.length + " shown, most memory first), " + s.created +
      " created, " + s.closed + " closed, " + s.expired + " expired";
  fillRows("#sessions", s.rows.map(r => [r.session, r.kernels, bytes(r.memory_bytes),
      bytes(r.charged_bytes), bytes(r.memory_limit_bytes), bytes(r.pool_bytes),
      bytes(r.arena_bytes), r.arena_chunks, r.handles, r.requests, seconds(r.idle_seconds)]),
      "session-row");
}

function drawRpcs(rpcs, uptime, now) {
  const before = previous ? new Map(previous.rpcs.map(r => [r.method, r.requests])) : null;
  const elapsed = previous ? (now - previous.time) / 1000 : uptime;
  fillRows("#rpcs", rpcs.map(r => {
    const done = before ? r.requests - (before.get(r.method) || 0) : r.requests;
    return [r.method, r.requests, (done / Math.max(elapsed, 1e-3)).toFixed(1), r.errors,
            seconds(r.mean_seconds), seconds(r.p50_seconds), seconds(r.p90_seconds),
            seconds(r.p99_seconds)];
  }), "rpc-row");
}

async function refresh() {
  try {
    const reply = await fetch("status.json", {cache: "no-store"});  // relative: a proxy may add a prefix
    const status = await reply.json();
    const now = Date.now();
    drawIdentity(status.server);
    drawPool(status.pool);
    drawSessions(status.sessions);
    drawRpcs(status.rpcs, status.server.uptime_seconds, now);
    previous = {rpcs: status.rpcs, time: now};
    document.getElementById("updated").textContent =
        "updated " + new Date(now).toLocaleTimeString() + ", every " + POLL_MS / 1000 + " s";
  } catch (e) {
    document.getElementById("updated").textContent = "cannot read /status.json: " + e;
  }
}
refresh();
setInterval(refresh, POLL_MS);
</script>
</body>
</html>
)html";

}  // namespace onemodel::server
