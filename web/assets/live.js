// perflab serve: a run page's live part. The charts of the whole run over
// clock time (requests and errors per second, p95 of the requests) are drawn as
// the report's are (charts.js, with uPlot) from /api/runs/ID/series; while
// the run goes, the server's events (/runs/ID/events) say when new
// intervals are stored, and the charts and the report (its tables and
// charts) are brought up to date without a reload.
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

  // The live charts are the report's (charts.js): each series' column in
  // data is y, its partial intervals' points the column partial.
  // x is clock time (Unix seconds); a latency chart's y axis is clipped,
  // full or log, as the report's (robust).
  // The run's incidents (changes that did not last, from its drift
  // verdict) are shaded amber on them, as on the report's charts: bands
  // in Unix seconds (data-incidents).
  function incidents(el) {
    try { return JSON.parse(el.dataset.incidents || "[]") || []; } catch (e) { return []; }
  }
  const bands = incidents(live);

  function chart(id, slug, title, yLabel, yUnit, series, robust) {
    const el = document.getElementById(id);
    const spec = { slug: slug, title: title, x: "time", xLabel: "clock time", yLabel: yLabel, yUnit: yUnit, series: series, robustY: robust, bands: bands };
    const empty = [[]].concat(series.map(function () { return []; }), series.map(function () { return []; }));
    perflabCharts.make(el, spec, empty);
    return el; // its chart, el.uplot, is drawn anew when its y axis changes
  }

  const rate = chart("live-rate", "live-rate", "requests/s and errors/s, all requests", "per second", "/s",
    [{ name: "requests/s", color: "#1f77b4", y: 1, partial: 3 }, { name: "errors/s", color: "#d62728", y: 2, partial: 4 }], false);
  const p95 = chart("live-p95", "live-p95", "p95 of the requests (ms)", "ms", "ms", [{ name: "p95 ms", color: "#2ca02c", y: 1, partial: 2 }], true);
  // The charts, for a test to read what they were given.
  live.charts = { get rate() { return rate.uplot; }, get p95() { return p95.uplot; } };

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
    perflabCharts.update(rate, [s.t, whole(s.rps, partial), whole(s.errors, partial), apart(s.rps, partial), apart(s.errors, partial)]);
    perflabCharts.update(p95, [s.t, whole(s.p95, partial), apart(s.p95, partial)]);
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
    if (fresh && old) {
      old.replaceWith(document.adoptNode(fresh));
      perflabCharts.draw(fresh);
    }
    // The verdict judged at the run's end brings its incidents.
    const top = doc.getElementById("live");
    if (top && top.dataset.incidents !== live.dataset.incidents) {
      live.dataset.incidents = top.dataset.incidents;
      bands.splice(0, bands.length, ...incidents(top));
      [rate, p95].forEach(function (el) { if (el.uplot) el.uplot.redraw(false, false); });
    }
  }

  function failed(e) {
    live.dataset.error = String(e);
    const st = document.getElementById("live-status");
    if (st) st.textContent = "live updates stopped: " + e;
  }

  refresh().catch(failed);
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
