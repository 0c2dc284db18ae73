// perflab serve: a run page's live part. The charts of the whole run over
// time (requests and errors per second, p95 of the requests) are drawn
// with uPlot from /api/runs/ID/series; while the run goes, the server's
// events (/runs/ID/events) say when new intervals are stored, and the
// charts and the report's tables are brought up to date without a reload.
// A partial interval (a stage's last, cut short by its end) is drawn
// apart from the lines, as an open point: its rate is over its own
// length, but its few requests are those still in flight as the load
// stopped, and in a line it would look like a drop or a spike.
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live) return;
  const id = live.dataset.run;
  const base = "/runs/" + encodeURIComponent(id);
  const charts = [];

  function chart(el, title, series) {
    const opts = {
      title: title,
      width: Math.max(320, el.clientWidth || 900),
      height: 220,
      scales: { x: { time: true } },
      series: [{}].concat(series.map(function (s) {
        if (!s[2]) return { label: s[0], stroke: s[1], width: 1.5 };
        return { label: s[0], stroke: s[1], width: 1.5, paths: function () { return null; }, points: { show: true, space: 0, size: 7, fill: "#fff" } };
      })),
      axes: [{}, { size: 60 }],
    };
    const empty = [[]].concat(series.map(function () { return []; }));
    const u = new uPlot(opts, empty, el);
    charts.push(u);
    return u;
  }

  const rate = chart(document.getElementById("live-rate"), "requests/s and errors/s", [["requests/s", "#1f77b4"], ["errors/s", "#d62728"],
    ["requests/s, partial interval", "#1f77b4", true], ["errors/s, partial interval", "#d62728", true]]);
  const p95 = chart(document.getElementById("live-p95"), "p95 of the requests (ms)", [["p95 ms", "#2ca02c"], ["p95 ms, partial interval", "#2ca02c", true]]);
  // The charts, for a test to read what they were given.
  live.charts = { rate: rate, p95: p95 };

  // whole and partial split a series: its values at the whole intervals
  // (null at the partial ones: the line stops there), and at the partial
  // ones.
  function whole(v, partial) { return v.map(function (x, i) { return partial[i] ? null : x; }); }
  function apart(v, partial) { return v.map(function (x, i) { return partial[i] ? x : null; }); }

  async function refresh() {
    const r = await fetch("/api" + base + "/series", { credentials: "same-origin", cache: "no-store" });
    if (!r.ok) throw new Error("series: " + r.status);
    const s = await r.json();
    const partial = s.partial || [];
    rate.setData([s.t, whole(s.rps, partial), whole(s.errors, partial), apart(s.rps, partial), apart(s.errors, partial)]);
    p95.setData([s.t, whole(s.p95, partial), apart(s.p95, partial)]);
    live.dataset.points = String(s.t.length);
    live.dataset.status = s.status;
    const st = document.getElementById("live-status");
    if (st) st.textContent = s.status === "running" ? "running: " + s.t.length + " intervals so far" : s.status + (s.verdict ? "; " + s.verdict : "");
  }

  // The report is drawn anew by the server each time: for a long run that
  // takes a while, so while the run goes it is reloaded at most every 5 s
  // and at most a twentieth of the time (the charts above follow every
  // interval); at the end, always.
  let reloaded = 0, cost = 0;
  async function reloadReport(always) {
    const t0 = Date.now();
    if (always !== true && t0 - reloaded < Math.max(5000, 20 * cost)) return;
    reloaded = t0;
    const r = await fetch(base, { credentials: "same-origin", cache: "no-store" });
    cost = Date.now() - t0;
    if (!r.ok) return;
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    const fresh = doc.getElementById("report");
    const old = document.getElementById("report");
    if (fresh && old) old.replaceWith(document.adoptNode(fresh));
  }

  function failed(e) {
    live.dataset.error = String(e);
    const st = document.getElementById("live-status");
    if (st) st.textContent = "live updates stopped: " + e;
  }

  refresh().catch(failed);
  window.addEventListener("resize", function () {
    charts.forEach(function (u) { u.setSize({ width: Math.max(320, u.root.parentElement.clientWidth || 900), height: 220 }); });
  });
  if (live.dataset.status !== "running") return;
  const es = new EventSource(base + "/events");
  es.addEventListener("interval", function () {
    refresh().then(reloadReport).catch(failed);
  });
  es.addEventListener("end", function () {
    es.close();
    refresh().then(function () { return reloadReport(true); }).catch(failed);
  });
  es.addEventListener("gone", function () {
    es.close();
    failed("the run is no longer in the history");
  });
})();
