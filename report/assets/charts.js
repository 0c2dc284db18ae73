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
      case "time":
        return { fmt: function (v) { return new Date(v * 1000).toLocaleTimeString(); }, scale: { time: true }, axis: {} };
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
  function make(el, spec, data) {
    const x = xAxis(spec);
    const series = [{ value: function (u, v) { return x.fmt(v); } }];
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
    el.textContent = "";
    el.classList.add("drawn");
    const hint = document.createElement("div");
    hint.className = "plot-hint";
    hint.textContent = "drag to zoom · shift-drag to pan · double-click to zoom out · click a legend entry to hide or show it" +
      (spec.bucketed ? " · " + spec.bucketed : "");
    const tip = document.createElement("div");
    tip.className = "plot-tip";
    const yRange = spec.yLog ? undefined : function (u, min, max) {
      if (min == null || max == null) return [0, 1];
      const lo = Math.min(0, min), hi = max > lo ? max : lo + 1;
      return [lo, hi + (hi - lo) * 0.05];
    };
    const opts = {
      title: spec.title,
      width: width(el),
      height: HEIGHT,
      series: series,
      bands: bands,
      legend: { show: false },
      cursor: { drag: { x: true, y: false, setScale: true }, sync: spec.sync ? { key: spec.sync } : undefined, points: { size: 6 } },
      scales: { x: Object.assign({ time: false }, x.scale || {}), y: spec.yLog ? { distr: 3, log: 10 } : { range: yRange } },
      axes: [
        Object.assign({ label: spec.xLabel, labelSize: 20, size: 44 }, x.axis),
        { label: spec.yLabel, labelSize: 20, size: 60, values: function (u, vals) { return vals.map(num); } },
      ],
      hooks: { drawAxes: [drawBands(spec)], draw: [drawMarks(spec)], setCursor: [], setSeries: [] },
    };
    const legend = document.createElement("div");
    legend.className = "plot-legend";
    opts.hooks.setCursor.push(function (u) { showValues(u, legend, tip, x); });
    const u = new uPlot(opts, columns(spec, data || spec.data), el);
    u.root.insertBefore(hint, u.root.querySelector(".u-wrap"));
    u.over.appendChild(tip);
    u.over.addEventListener("mouseenter", function () { u.hovered = true; });
    u.over.addEventListener("mouseleave", function () { u.hovered = false; tip.style.display = "none"; });
    el.appendChild(legend);
    u.groups = groups;
    u.spec = spec;
    buildLegend(u, legend);
    if (spec.series.length === 0) {
      const none = document.createElement("div");
      none.className = "plot-none";
      none.textContent = "no data";
      u.over.appendChild(none);
    }
    pan(u);
    all.push(u);
    return u;
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

  // update gives a chart new data, in its spec's columns.
  function update(u, data) {
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
    at.textContent = x.fmt(u.data[0][i]) + ":";
    const rows = [];
    u.groups.forEach(function (g) {
      const s = valueAt(u, g, i);
      g.value.textContent = s == null ? "" : s;
      if (s != null && u.series[g.line].show) rows.push([g.spec.color, g.spec.name, s]);
    });
    if (rows.length === 0 || !u.hovered) { // a chart whose cursor follows another's has no tooltip
      tip.style.display = "none";
      return;
    }
    tip.textContent = "";
    const h = document.createElement("div");
    h.className = "plot-tip-head";
    h.textContent = (u.spec.xLabel ? u.spec.xLabel + " " : "") + x.fmt(u.data[0][i]);
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

  // drawBands shades the stretches a drift verdict compares, under the
  // lines; drawMarks draws where a level changed, over them.
  function drawBands(spec) {
    return function (u) {
      if (!spec.bands) return;
      const ctx = u.ctx, b = u.bbox;
      ctx.save();
      spec.bands.forEach(function (band) {
        const x0 = Math.max(b.left, u.valToPos(band.from, "x", true)), x1 = Math.min(b.left + b.width, u.valToPos(band.to, "x", true));
        if (x1 <= x0) return;
        ctx.fillStyle = "#e3ecf7";
        ctx.fillRect(x0, b.top, x1 - x0, b.height);
        ctx.fillStyle = "#445";
        ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
        ctx.textAlign = "center";
        ctx.fillText(band.label, (x0 + x1) / 2, b.top + 14 * devicePixelRatio);
      });
      ctx.restore();
    };
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

  // draw makes the charts of root's placeholders from root's data blocks;
  // a placeholder already drawn is left.
  function draw(root) {
    root = root || document;
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
  window.addEventListener("beforeprint", function () { resize(680); window.perflabCharts.printed = (window.perflabCharts.printed || 0) + 1; });
  window.addEventListener("afterprint", function () { resize(); });

  window.perflabCharts = { draw: draw, make: make, update: update, charts: all, duration: dur };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { draw(document); });
  else draw(document);
})();
