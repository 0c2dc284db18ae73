// perflab's charts: one design for the HTML report and perflab serve's run
// page, drawn with uPlot. Each chart's data is written by the report
// (report/plot.go) into a JSON block, <script type="application/json"
// class="perflab-plots">, beside <div class="plot" data-plot="N">
// placeholders: an x column and columns of values, aligned. A series with
// more points than the chart has pixels comes downsampled into buckets:
// each bucket's mean (or median) is the line, its min and max a band
// around it, so that neither a spike nor a dip is lost.
//
// Every chart is as wide as the page, and: drag to zoom in on x,
// shift-drag to pan, double-click to zoom out; the legend says the values
// at the cursor (a tooltip beside it says them too); a click on a legend
// entry hides or shows its series. A partial interval (a stage's last, cut
// short by its end) is a point apart from its line.
//
// A chart over a stage's time has its x in seconds into the stage and the
// stage's start (spec.t0, Unix seconds): its axis reads as clock times,
// in UTC or the viewer's local time (one choice for the page, said on
// every such axis; perflabCharts.setZone), and its legend and tooltip say
// the time into the stage too. A latency chart over time (spec.robustY)
// has three y axes to choose from: "clipped", the default, up to 1.5
// times the greatest of its series' 95th percentiles in view, unless its
// max is near that (a baseline of 2 ms is not a flat line under one
// spike of 500 ms), every point above marked by a triangle at the top
// edge and counted under the chart ("N points above the axis, max X");
// "full range", up to the max; and "log scale" (uPlot's distr 3).
// A band of spec.bands whose kind is "incident" (a change that did not
// last, from the run's drift verdict) is shaded amber over the stretch it
// spans, labelled, named in the legend, and its text said in the tooltip
// when the cursor is inside it; the other bands (the stretches a drift
// verdict compares) are shaded blue beneath.
"use strict";
(function () {
  const HEIGHT = 280;
  const all = [];

  function num(v) {
    if (v == null || isNaN(v)) return "";
    const a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toPrecision(4).replace(/\.?0+$/, "") + "M";
    if (a >= 1e4) return (v / 1e3).toPrecision(4).replace(/\.?0+$/, "") + "k";
    if (a >= 100) return v.toFixed(0);
    if (a >= 1) return v.toPrecision(3);
    return v.toPrecision(2);
  }

  // dur writes seconds into a stage: 12.5s, 3:05, 1:02:03, 3d 01:02.
  function dur(s, step) {
    if (s == null || isNaN(s)) return "";
    const neg = s < 0 ? "-" : "";
    s = Math.abs(s);
    if (s < 60 && (step == null || step < 60)) return neg + (step != null && step < 1 ? s.toFixed(1) : s.toFixed(Number.isInteger(s) ? 0 : 1)) + "s";
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), sec = Math.floor(s % 60);
    const p2 = function (n) { return String(n).padStart(2, "0"); };
    if (d > 0) return neg + d + "d " + p2(h) + ":" + p2(m);
    if (h > 0) return neg + h + ":" + p2(m) + ":" + p2(sec);
    return neg + m + ":" + p2(sec);
  }

  // The zone of clock times: UTC or the viewer's local time, for the
  // page; zoneLabel says which.
  const zone = { utc: true };
  const p2 = function (n) { return String(n).padStart(2, "0"); };

  // offset is the local time's offset east of UTC at Unix time t, in
  // seconds; 0 in UTC.
  function offset(t) {
    return zone.utc ? 0 : -new Date(t * 1000).getTimezoneOffset() * 60;
  }

  function offsetName(t) {
    const o = -new Date(t * 1000).getTimezoneOffset(), a = Math.abs(o);
    return "UTC" + (o < 0 ? "−" : "+") + p2(Math.floor(a / 60)) + ":" + p2(a % 60);
  }

  function zoneLabel(t) {
    return zone.utc ? "UTC" : "local time, " + offsetName(t == null ? Date.now() / 1000 : t);
  }

  // parts are Unix time t's fields in the page's zone.
  function parts(t) {
    const d = new Date(Math.round((t + offset(t)) * 1000));
    return { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds(), ms: d.getUTCMilliseconds() };
  }

  function day(t) {
    const p = parts(t);
    return p.y + "-" + p2(p.mo) + "-" + p2(p.d);
  }

  // clock writes Unix time t as a time of day to the precision of step
  // (seconds between ticks): 14:05, 14:05:30, 14:05:30.5.
  function clock(t, step) {
    const p = parts(t);
    let out = p2(p.h) + ":" + p2(p.mi);
    if (step == null || step < 60) out += ":" + p2(p.s);
    if (step != null && step < 1) out += "." + Math.floor(p.ms / 100);
    return out;
  }

  // clockAxis is an x axis of clock times: x is seconds from Unix time t0
  // (the stage's start; 0 for x in Unix seconds). Ticks fall on round
  // times of day in the page's zone, the date under the first of each
  // day; the cursor's value says the time into the stage too.
  function clockAxis(t0, stage) {
    const incrs = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
    const one = { range: function (u, min, max) { return min === max ? [min - 1, max + 1] : [min, max]; } };
    return {
      clock: true,
      fmt: function (v, u) {
        if (v == null || isNaN(v)) return "";
        const xs = u && u.data[0], t = t0 + v;
        // The date too when the chart's data spans more than a day.
        const days = xs && xs.length > 1 && day(t0 + xs[0]) !== day(t0 + xs[xs.length - 1]);
        return (days ? day(t) + " " : "") + clock(t) + " " + zoneLabel(t) + (stage ? " (" + dur(v) + " into the stage)" : "");
      },
      scale: one,
      axis: {
        space: 64,
        size: 52,
        incrs: incrs,
        label: function (u) {
          const t = u.data[0].length ? t0 + u.data[0][0] : null;
          return "clock time (" + zoneLabel(t) + ")" + (stage ? ", from the stage's start at " + day(t0) + " " + clock(t0) : "");
        },
        splits: function (u, ax, min, max, incr) {
          const off = offset(t0 + min);
          const first = Math.ceil((t0 + min + off) / incr - 1e-9) * incr - off - t0;
          const out = [];
          for (let k = 0; first + k * incr <= max + 1e-9 && k < 1000; k++) out.push(first + k * incr);
          return out;
        },
        values: function (u, vals, ax, space, incr) {
          if (u.data[0].length === 0) return vals.map(function () { return ""; }); // no data: no times
          let prev = null;
          return vals.map(function (v) {
            const t = t0 + v, d = day(t);
            let s = incr >= 86400 ? d : clock(t, incr);
            if (incr < 86400 && d !== prev) s += "\n" + d;
            prev = d;
            return s;
          });
        },
      },
    };
  }

  function nines(x) {
    const p = 100 * (1 - 1 / x);
    return (p <= 0 ? "0" : String(+p.toPrecision(6))) + "%";
  }

  // The x axis: how its values read, where its ticks go.
  function xAxis(spec) {
    const k = spec.x;
    const pow10 = function (mults) {
      return function (u, ax, min, max) {
        const out = [];
        for (let p = Math.floor(Math.log10(min)); Math.pow(10, p) <= max * 1.0001; p++) {
          mults.forEach(function (m) { const v = m * Math.pow(10, p); if (v >= min * 0.9999 && v <= max * 1.0001) out.push(v); });
        }
        return out;
      };
    };
    // A single x value (a stage of one interval) is drawn in the middle.
    const one = { range: function (u, min, max) { return min === max ? [min - 1, max + 1] : [min, max]; } };
    switch (k) {
      case "seconds":
        if (spec.t0 != null) return clockAxis(spec.t0, true);
        return {
          fmt: function (v) { return dur(v); }, scale: one,
          axis: {
            incrs: [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800],
            values: function (u, vals, ax, space, incr) { return vals.map(function (v) { return dur(v, incr); }); },
          },
        };
      case "nines":
        return { fmt: nines, scale: { distr: 3, log: 10 }, axis: { splits: pow10([1]), values: function (u, vals) { return vals.map(nines); } } };
      case "log":
        return { fmt: function (v) { return num(v) + " " + (spec.xUnit || ""); }, scale: { distr: 3, log: 10 },
          axis: { splits: pow10([1, 2, 5]), values: function (u, vals) { return vals.map(num); } } };
      case "stages": {
        const names = spec.names || [];
        const name = function (v) { const i = Math.round(v) - 1; return i >= 0 && i < names.length && Math.abs(v - i - 1) < 1e-9 ? names[i] : ""; };
        return {
          fmt: name, scale: { range: function () { return [0.5, names.length + 0.5]; } },
          axis: { splits: function () { return names.map(function (n, i) { return i + 1; }); }, values: function (u, vals) { return vals.map(name); } },
        };
      }
      case "time": // Unix seconds
        return clockAxis(0, false);
    }
    return { fmt: num, scale: one, axis: { values: function (u, vals) { return vals.map(num); } } };
  }

  function alpha(color, a) {
    const m = /^#(..)(..)(..)$/.exec(color || "");
    if (!m) return color;
    return "rgba(" + parseInt(m[1], 16) + "," + parseInt(m[2], 16) + "," + parseInt(m[3], 16) + "," + a + ")";
  }

  // make draws a chart of spec (its data: spec.data, unless given) in el;
  // it returns the uPlot, whose groups map each legend entry to its
  // uPlot series (the line, its band's max and min, its partial points).
  // el.uplot is the chart (a new uPlot when its y axis is changed).
  function make(el, spec, data) {
    el.yMode = spec.robustY ? (el.id && modes[el.id]) || "clipped" : "linear";
    return build(el, spec, columns(spec, data || spec.data), null);
  }

  // build draws el's chart with the columns cols (in uPlot's order); prev,
  // if not null, is the chart it replaces (another y axis): its x range
  // and the series hidden are kept.
  function build(el, spec, cols, prev) {
    const x = xAxis(spec);
    const series = [{ value: function (u, v) { return x.fmt(v, u); } }];
    const bands = [];
    const groups = [];
    spec.series.forEach(function (s) {
      const g = { spec: s, line: series.length, all: [] };
      const line = { label: s.name, stroke: s.color, width: 1.5, spanGaps: true, points: { show: !!s.points, size: 5, fill: s.color } };
      if (s.dash) line.dash = [6, 4];
      if (s.step) line.paths = uPlot.paths.stepped({ align: 1 });
      g.all.push(series.length);
      series.push(line);
      if (s.min != null && s.max != null) {
        const edge = function (label) { return { label: label, stroke: "rgba(0,0,0,0)", width: 0, spanGaps: true, points: { show: false } }; };
        g.max = series.length;
        g.all.push(series.length);
        series.push(edge(s.name + " max"));
        g.min = series.length;
        g.all.push(series.length);
        series.push(edge(s.name + " min"));
        bands.push({ series: [g.max, g.min], fill: alpha(s.color, 0.2) });
      }
      if (s.partial != null) {
        g.partial = series.length;
        g.all.push(series.length);
        series.push({ label: s.name + ", partial interval", stroke: s.color, width: 1.5,
          paths: function () { return null; }, points: { show: true, space: 0, size: 7, fill: "#fff", stroke: s.color } });
      }
      groups.push(g);
    });
    const at = prev ? all.indexOf(prev) : -1; // its place among the page's charts
    if (prev) {
      prev.series.forEach(function (ps, i) { if (i > 0 && series[i] && !ps.show) series[i].show = false; });
      prev.destroy();
    }
    el.textContent = "";
    el.classList.add("drawn");
    const hint = document.createElement("div");
    hint.className = "plot-hint";
    hint.textContent = "drag to zoom · shift-drag to pan · double-click to zoom out · click a legend entry to hide or show it" +
      (spec.bucketed ? " · " + spec.bucketed : "");
    const tip = document.createElement("div");
    tip.className = "plot-tip";
    const mode = el.yMode || "linear";
    const opts = {
      title: spec.title,
      width: width(el),
      height: HEIGHT,
      series: series,
      bands: bands,
      legend: { show: false },
      cursor: { drag: { x: true, y: false, setScale: true }, sync: spec.sync ? { key: spec.sync } : undefined, points: { size: 6 } },
      scales: { x: Object.assign({ time: false }, x.scale || {}), y: yScale(mode, groups) },
      axes: [
        Object.assign({ label: spec.xLabel, labelSize: 20, size: 44 }, x.axis),
        { label: spec.yLabel + (mode === "log" ? " (log scale)" : ""), labelSize: 20, size: 60, values: function (u, vals) { return vals.map(num); } },
      ],
      hooks: { drawAxes: [drawBands(spec)], draw: [drawMarks(spec)], setCursor: [], setSeries: [] },
    };
    const legend = document.createElement("div");
    legend.className = "plot-legend";
    opts.hooks.setCursor.push(function (u) { showValues(u, legend, tip, x); });
    if (spec.robustY) opts.hooks.draw.push(drawClipped);
    const u = new uPlot(opts, cols, el);
    u.root.insertBefore(hint, u.root.querySelector(".u-wrap"));
    if (spec.robustY) u.root.insertBefore(yModes(el, spec, u), hint);
    u.over.appendChild(tip);
    u.over.addEventListener("mouseenter", function () { u.hovered = true; });
    u.over.addEventListener("mouseleave", function () { u.hovered = false; tip.style.display = "none"; });
    el.appendChild(legend);
    u.groups = groups;
    u.spec = spec;
    u.clock = !!x.clock;
    u.yMode = mode;
    buildLegend(u, legend);
    if (spec.robustY) {
      u.clippedNote = document.createElement("div");
      u.clippedNote.className = "plot-clipped";
      legend.appendChild(u.clippedNote);
      drawClipped(u);
    }
    if (spec.series.length === 0) {
      const none = document.createElement("div");
      none.className = "plot-none";
      none.textContent = "no data";
      u.over.appendChild(none);
    }
    pan(u);
    if (at >= 0) all[at] = u;
    else all.push(u);
    el.uplot = u;
    if (prev && prev.scales.x.min != null) u.setScale("x", { min: prev.scales.x.min, max: prev.scales.x.max });
    return u;
  }

  // The y axis of a chart: linear from 0 (or the least value below it) to
  // the max; "clipped" to a robust max (robustMax); "log", uPlot's log
  // scale, from the least positive value in view.
  function yScale(mode, groups) {
    if (mode === "log") {
      return { distr: 3, log: 10, range: function (u, min, max) {
        const lo = minPositive(u, groups), hi = max > 0 ? max : 1;
        return uPlot.rangeLog(lo == null || lo >= hi ? hi / 10 : lo, hi, 10, true);
      } };
    }
    return { range: function (u, min, max) {
      if (min == null || max == null) return [0, 1];
      const lo = Math.min(0, min);
      let hi = max;
      if (mode === "clipped") {
        const r = robustMax(u, groups);
        if (r != null && r > lo && max > 1.25 * r) hi = r;
      }
      hi = hi > lo ? hi : lo + 1;
      return [lo, hi + (hi - lo) * 0.05];
    } };
  }

  // inView calls f with each value of u's shown series (lines, bands'
  // max, partial points) whose x is in view, by legend entry (groups, u's
  // unless given): f(g, i, v).
  function inView(u, groups, f) {
    const xs = u.data[0], x0 = u.scales.x.min, x1 = u.scales.x.max;
    (groups || u.groups || []).forEach(function (g) {
      const s = u.series[g.line];
      if (s && !s.show) return;
      const cols = [g.line, g.max, g.partial].filter(function (c) { return c != null; });
      // uPlot's indexes in view (set before the y range is asked for:
      // the x scale is then still the one before a zoom), else by x.
      const idxs = s && s.idxs && s.idxs.length === 2 && s.idxs[0] != null ? s.idxs : null;
      for (let i = idxs ? idxs[0] : 0; i <= (idxs ? idxs[1] : xs.length - 1); i++) {
        if (!idxs && x0 != null && (xs[i] < x0 || xs[i] > x1)) continue;
        cols.forEach(function (c) { const v = u.data[c][i]; if (v != null && isFinite(v)) f(g, i, v); });
      }
    });
  }

  // robustMax is 1.5 times the greatest of the shown series' 95th
  // percentiles of their values in view: where a clipped y axis ends.
  function robustMax(u, groups) {
    const by = new Map();
    inView(u, groups, function (g, i, v) {
      if (!by.has(g)) by.set(g, []);
      by.get(g).push(v);
    });
    let hi = null;
    by.forEach(function (vs) {
      vs.sort(function (a, b) { return a - b; });
      const q = quantile(vs, 0.95);
      hi = hi == null ? q : Math.max(hi, q);
    });
    return hi == null ? null : 1.5 * hi;
  }

  // quantile is the q-quantile of sorted values, interpolated (as
  // numpy's default).
  function quantile(vs, q) {
    const h = (vs.length - 1) * q, lo = Math.floor(h);
    return lo + 1 < vs.length ? vs[lo] + (h - lo) * (vs[lo + 1] - vs[lo]) : vs[lo];
  }

  function minPositive(u, groups) {
    let lo = null;
    inView(u, groups, function (g, i, v) { if (v > 0 && (lo == null || v < lo)) lo = v; });
    return lo;
  }

  // drawClipped marks each point above the y axis (a series' value at an
  // x, its line, band or partial point) with a triangle at the top edge,
  // in its series' colour, and says under the chart how many there are
  // and the greatest (u.clipped: {count, max}).
  function drawClipped(u) {
    if (!u.clippedNote) return; // still being made
    const top = u.scales.y.max;
    const above = new Map(); // "entry,x" -> [g, i, v]
    if (u.yMode === "clipped" && top != null) {
      inView(u, null, function (g, i, v) {
        if (v <= top) return;
        const k = g.line + "," + i, a = above.get(k);
        if (!a || v > a[2]) above.set(k, [g, i, v]);
      });
    }
    let max = null;
    const ctx = u.ctx, b = u.bbox, r = 5 * devicePixelRatio;
    ctx.save();
    above.forEach(function (a) {
      max = max == null ? a[2] : Math.max(max, a[2]);
      const px = u.valToPos(u.data[0][a[1]], "x", true);
      ctx.beginPath();
      ctx.moveTo(px, b.top);
      ctx.lineTo(px - r, b.top + 1.6 * r);
      ctx.lineTo(px + r, b.top + 1.6 * r);
      ctx.closePath();
      ctx.fillStyle = a[0].spec.color;
      ctx.fill();
      ctx.lineWidth = devicePixelRatio;
      ctx.strokeStyle = "#000";
      ctx.stroke();
    });
    ctx.restore();
    u.clipped = { count: above.size, max: max };
    const note = above.size === 0 ? "" : "▲ " + above.size + (above.size === 1 ? " point" : " points") + " above the axis, max " +
      num(max) + (u.spec.yUnit ? " " + u.spec.yUnit : "") + ": “full range” or “log scale” shows them";
    if (u.clippedNote.textContent !== note) u.clippedNote.textContent = note;
  }

  // modes are the y axes chosen, by chart placeholder's id: a report
  // drawn anew (perflab serve's, as its run goes) keeps them.
  const modes = {};

  // yModes are the buttons that choose a latency chart's y axis: it is
  // drawn anew with the one chosen.
  function yModes(el, spec, u) {
    const bar = document.createElement("div");
    bar.className = "plot-ymodes";
    bar.appendChild(document.createTextNode("y axis: "));
    [["clipped", "clipped", "up to 1.5 × the greatest of the series' 95th percentiles in view; the points above are marked ▲ at the top edge"],
      ["full", "full range", "up to the greatest value in view"],
      ["log", "log scale", "a log scale: every value, the baseline and the spikes"]].forEach(function (m) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "plot-ymode";
      b.dataset.mode = m[0];
      b.textContent = m[1];
      b.title = m[2];
      b.setAttribute("aria-pressed", String(el.yMode === m[0]));
      b.addEventListener("click", function () { setYMode(el, m[0]); });
      bar.appendChild(b);
    });
    return bar;
  }

  // setYMode draws el's chart with the y axis mode: clipped, full, log.
  function setYMode(el, mode) {
    const u = el.uplot;
    if (!u || el.yMode === mode) return u;
    el.yMode = mode;
    if (el.id) modes[el.id] = mode;
    return build(el, u.spec, u.data, u);
  }

  // columns orders a chart's data (x, then the columns spec's series
  // name) as its uPlot series are: each line, its band's max and min, its
  // partial points.
  function columns(spec, data) {
    const cols = [data[0]];
    spec.series.forEach(function (s) {
      cols.push(data[s.y]);
      if (s.min != null && s.max != null) cols.push(data[s.max], data[s.min]);
      if (s.partial != null) cols.push(data[s.partial]);
    });
    return cols;
  }

  // update gives a chart new data, in its spec's columns; u is the chart
  // or its element (whose chart is drawn anew when its y axis changes).
  function update(u, data) {
    if (u.uplot) u = u.uplot;
    u.setData(columns(u.spec, data));
  }

  function width(el) {
    return Math.max(320, Math.floor(el.getBoundingClientRect().width) || (el.parentElement && el.parentElement.clientWidth) || 900);
  }

  // The legend: an entry per series, a click hides or shows it (its line,
  // band and partial points together); its value at the cursor.
  function buildLegend(u, legend) {
    const head = document.createElement("span");
    head.className = "plot-at";
    legend.appendChild(head);
    u.groups.forEach(function (g) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "plot-entry";
      b.title = "hide or show " + g.spec.name;
      const sw = document.createElement("span");
      sw.className = "plot-swatch" + (g.spec.dash ? " dash" : "");
      sw.style.borderColor = g.spec.color;
      const name = document.createElement("span");
      name.className = "plot-name";
      name.textContent = g.spec.name;
      const val = document.createElement("span");
      val.className = "plot-value";
      b.append(sw, name, val);
      b.addEventListener("click", function () {
        const show = !u.series[g.line].show;
        g.all.forEach(function (i) { u.setSeries(i, { show: show }); });
        b.classList.toggle("off", !show);
      });
      g.value = val;
      legend.appendChild(b);
    });
    if (u.groups.some(function (g) { return g.partial != null && u.data[g.partial].some(function (v) { return v != null; }); })) {
      const p = document.createElement("span");
      p.className = "plot-note";
      p.textContent = "○ a partial interval (cut short by the stage's end), apart from its line";
      legend.appendChild(p);
    }
    const incs = incidents(u.spec);
    if (incs.length > 0) {
      const p = document.createElement("span");
      p.className = "plot-note plot-incidents";
      p.textContent = "amber: " + incs.map(function (band) { return band.label; }).join(", ") +
        " (a change that did not last; hover over the band for what it was)";
      legend.appendChild(p);
    }
    if (u.groups.some(function (g) { return g.max != null; })) {
      const p = document.createElement("span");
      p.className = "plot-note";
      p.textContent = "shaded: min to max of the intervals in each pixel's bucket";
      legend.appendChild(p);
    }
  }

  function valueAt(u, g, i) {
    let v = u.data[g.line][i];
    let partial = false;
    if (v == null && g.partial != null && u.data[g.partial][i] != null) {
      v = u.data[g.partial][i];
      partial = true;
    }
    if (v == null) return null;
    let s = num(v) + (u.spec.yUnit ? " " + u.spec.yUnit : "");
    if (g.max != null && u.data[g.max][i] != null && u.data[g.min][i] !== u.data[g.max][i]) s += " (" + num(u.data[g.min][i]) + "–" + num(u.data[g.max][i]) + ")";
    if (partial) s += ", partial";
    return s;
  }

  function showValues(u, legend, tip, x) {
    if (!u.groups) return; // still being made
    const i = u.cursor.idx;
    const at = legend.querySelector(".plot-at");
    if (i == null) {
      at.textContent = "";
      u.groups.forEach(function (g) { g.value.textContent = ""; });
      tip.style.display = "none";
      return;
    }
    at.textContent = x.fmt(u.data[0][i], u) + ":";
    const rows = [];
    u.groups.forEach(function (g) {
      const s = valueAt(u, g, i);
      g.value.textContent = s == null ? "" : s;
      if (s != null && u.series[g.line].show) rows.push([g.spec.color, g.spec.name, s]);
    });
    const hit = u.hovered ? incidentsAt(u, u.posToVal(u.cursor.left, "x")) : [];
    if (rows.length + hit.length === 0 || !u.hovered) { // a chart whose cursor follows another's has no tooltip
      tip.style.display = "none";
      return;
    }
    tip.textContent = "";
    const h = document.createElement("div");
    h.className = "plot-tip-head";
    h.textContent = (u.spec.xLabel && !u.clock ? u.spec.xLabel + " " : "") + x.fmt(u.data[0][i], u);
    tip.appendChild(h);
    rows.slice(0, 12).forEach(function (r) {
      const d = document.createElement("div");
      const sw = document.createElement("span");
      sw.className = "plot-dot";
      sw.style.background = r[0];
      d.append(sw, document.createTextNode(r[1] + ": " + r[2]));
      tip.appendChild(d);
    });
    if (rows.length > 12) tip.appendChild(document.createTextNode("… " + (rows.length - 12) + " more"));
    hit.forEach(function (band) {
      const d = document.createElement("div");
      d.className = "plot-tip-incident";
      d.textContent = band.text || band.label;
      tip.appendChild(d);
    });
    tip.style.display = "block";
    const left = u.cursor.left, top = u.cursor.top, w = u.over.clientWidth;
    tip.style.left = (left > w / 2 ? left - tip.offsetWidth - 12 : left + 12) + "px";
    tip.style.top = Math.max(0, Math.min(top + 12, u.over.clientHeight - tip.offsetHeight)) + "px";
  }

  // pan moves the x range with the mouse while shift is held (or with the
  // middle button): the plot follows the pointer, and the charts it zooms
  // with follow it.
  function pan(u) {
    u.root.addEventListener("mousedown", function (e) {
      if (!(e.shiftKey || e.button === 1) || !u.over.contains(e.target)) return;
      e.preventDefault();
      e.stopPropagation();
      const x0 = e.clientX;
      const log = u.scales.x.distr === 3;
      const f = log ? Math.log10 : function (v) { return v; }, g = log ? function (v) { return Math.pow(10, v); } : f;
      const min = f(u.scales.x.min), max = f(u.scales.x.max), w = u.over.clientWidth;
      // The charts whose cursors move together (a stage's) zoom together
      // (uPlot's sync); they pan together too.
      const together = all.filter(function (c) { return c === u || u.spec.sync && c.spec.sync === u.spec.sync && c.root.isConnected; });
      function move(ev) {
        const dv = (ev.clientX - x0) / w * (max - min);
        together.forEach(function (c) { c.setScale("x", { min: g(min - dv), max: g(max - dv) }); });
      }
      function up() {
        document.removeEventListener("mousemove", move);
        document.removeEventListener("mouseup", up);
      }
      document.addEventListener("mousemove", move);
      document.addEventListener("mouseup", up);
    }, true);
  }

  // INCIDENT is the amber of an incident's band (a change that did not
  // last: band.kind "incident"), INCIDENT_EDGE its edges and label.
  const INCIDENT = "rgba(255,184,0,0.32)", INCIDENT_EDGE = "#c77f00";

  // incidents are the bands of spec that are incidents.
  function incidents(spec) {
    return (spec.bands || []).filter(function (band) { return band.kind === "incident"; });
  }

  // drawBands shades the stretches a drift verdict compares, then its
  // incidents in amber, each labelled, under the lines; drawMarks draws
  // where a level changed, over them. u.incidentBands says where each
  // incident was painted: its from and to, and its pixels on the canvas
  // (x0 to x1, within the plot).
  function drawBands(spec) {
    return function (u) {
      u.incidentBands = [];
      if (!spec.bands) return;
      const ctx = u.ctx, b = u.bbox, dpr = devicePixelRatio;
      ctx.save();
      ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
      ctx.textAlign = "center";
      const ordered = spec.bands.filter(function (band) { return band.kind !== "incident"; }).concat(incidents(spec));
      ordered.forEach(function (band) {
        const incident = band.kind === "incident";
        const x0 = Math.max(b.left, u.valToPos(band.from, "x", true)), x1 = Math.min(b.left + b.width, u.valToPos(band.to, "x", true));
        if (incident) u.incidentBands.push({ label: band.label, from: band.from, to: band.to, x0: x0, x1: x1, shown: x1 > x0 });
        if (x1 <= x0) return;
        ctx.fillStyle = incident ? INCIDENT : "#e3ecf7";
        ctx.fillRect(x0, b.top, x1 - x0, b.height);
        if (incident) {
          ctx.fillStyle = INCIDENT_EDGE;
          ctx.fillRect(x0, b.top, Math.min(dpr, x1 - x0), b.height);
          ctx.fillRect(Math.max(x0, x1 - dpr), b.top, Math.min(dpr, x1 - x0), b.height);
        }
        ctx.fillStyle = incident ? INCIDENT_EDGE : "#445";
        ctx.fillText(band.label, (x0 + x1) / 2, b.top + (incident ? 26 : 14) * dpr);
      });
      ctx.restore();
    };
  }

  // incidentsAt are the incidents of u's spec whose band holds x.
  function incidentsAt(u, x) {
    if (x == null || isNaN(x)) return [];
    return incidents(u.spec).filter(function (band) { return x >= band.from && x <= band.to; });
  }

  function drawMarks(spec) {
    return function (u) {
      if (!spec.marks) return;
      const ctx = u.ctx, b = u.bbox;
      ctx.save();
      spec.marks.forEach(function (m) {
        const x = u.valToPos(m.x, "x", true);
        if (x < b.left || x > b.left + b.width) return;
        ctx.strokeStyle = "#b00";
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
        ctx.beginPath();
        ctx.moveTo(x, b.top);
        ctx.lineTo(x, b.top + b.height);
        ctx.stroke();
        ctx.fillStyle = "#b00";
        ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
        ctx.fillText(m.label, x + 4 * devicePixelRatio, b.top + 28 * devicePixelRatio);
      });
      ctx.restore();
    };
  }

  // setZone makes the clock times of every chart UTC (utc true) or the
  // viewer's local time, and says so on the page's zone buttons.
  function setZone(utc) {
    zone.utc = !!utc;
    all.forEach(function (u) { if (u.clock && u.root.isConnected) u.redraw(false, true); });
    document.querySelectorAll(".plot-zone button").forEach(function (b) {
      b.setAttribute("aria-pressed", String((b.dataset.zone === "utc") === zone.utc));
    });
  }

  // zoneButtons fills an element of class plot-zone with the choice of
  // the zone of clock times.
  function zoneButtons(el) {
    if (el.childNodes.length) return;
    el.appendChild(document.createTextNode("Clock times on the charts: "));
    [["utc", "UTC"], ["local", "your local time (" + offsetName(Date.now() / 1000) + ")"]].forEach(function (z) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.zone = z[0];
      b.textContent = z[1];
      b.setAttribute("aria-pressed", String((z[0] === "utc") === zone.utc));
      b.addEventListener("click", function () { setZone(z[0] === "utc"); });
      el.appendChild(b);
    });
  }

  // draw makes the charts of root's placeholders from root's data blocks;
  // a placeholder already drawn is left.
  function draw(root) {
    root = root || document;
    root.querySelectorAll(".plot-zone").forEach(zoneButtons);
    const block = root.querySelector("script.perflab-plots");
    if (!block) return;
    const specs = JSON.parse(block.textContent);
    root.querySelectorAll("div.plot[data-plot]").forEach(function (el) {
      if (el.uplot) return;
      const spec = specs[+el.dataset.plot];
      if (spec) el.uplot = make(el, spec);
    });
    window.perflabCharts.drawnAt = performance.now();
  }

  function resize(w) {
    all.forEach(function (u) {
      if (!u.root.isConnected) return;
      u.setSize({ width: w || width(u.root.parentElement), height: HEIGHT });
    });
  }

  let timer = 0;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { resize(); }, 100);
  });
  // Printed, a chart is as wide as the paper's text: about 680 CSS pixels
  // on A4 or Letter with their margins.
  // A printed report shows what a reader could unfold on screen: the
  // suspect incidents, the failures' samples.
  window.addEventListener("beforeprint", function () {
    resize(680); window.perflabCharts.printed = (window.perflabCharts.printed || 0) + 1;
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () { resize(); });

  window.perflabCharts = { draw: draw, make: make, update: update, charts: all, duration: dur, setZone: setZone, setYMode: setYMode, zone: zone };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { draw(document); });
  else draw(document);
})();
