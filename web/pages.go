package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// runRow is a run in the runs list, with its headline figures: its
// verdict as the history keeps it, no summary read.
type runRow struct {
	store.Run
	Status   string // the live one for a distributed run going
	Duration string
	Requests int64
	RPS      float64
	ErrPct   float64
	// Notes say what keeps the run from a clean pass: failed thresholds
	// and drift fail, dropped iterations warn.
	Notes  []store.Note
	Clean  bool // none of the notes fails the run
	Labels string
	Has    bool // has a verdict (a finished run)
}

var statuses = []string{metrics.StatusRunning, metrics.StatusCompleted, metrics.StatusInterrupted, metrics.StatusDegraded, metrics.StatusFailed, metrics.StatusKilled}

// runsPage lists the runs, newest first, filtered by plan, labels and
// status.
func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rows, ok := s.filtered(w, r)
	if !ok {
		return
	}
	plans, err := s.plans()
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page(w, "runs", layout{Title: "Runs", Version: s.o.Version, Nav: "runs"}, struct {
		Rows     []runRow
		Plans    []string
		Statuses []string
		Plan     string
		Label    string
		Status   string
	}{rows, plans, statuses, q.Get("plan"), q.Get("label"), q.Get("status")})
}

// filtered is the runs of the request's filters (the runs list's and
// the API's); false when it has answered with an error.
func (s *Server) filtered(w http.ResponseWriter, r *http.Request) ([]runRow, bool) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return nil, false
	}
	rows, err := s.rows(f, q.Get("status"))
	if err != nil {
		s.storeFailed(w, r, err)
		return nil, false
	}
	return rows, true
}

// filterOf reads the runs list's filters: plan, label (k=v, several by
// comma or repeated), n.
func filterOf(q map[string][]string) (store.Filter, error) {
	f := store.Filter{Limit: 200}
	if p := first(q["plan"]); p != "" {
		f.Plan = p
	}
	for _, l := range q["label"] {
		for _, kv := range strings.Split(l, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return f, fmt.Errorf("label %q: want name=value, such as release=Goldenrod", kv)
			}
			if f.Labels == nil {
				f.Labels = map[string]string{}
			}
			f.Labels[k] = v
		}
	}
	if n := first(q["n"]); n != "" {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return f, fmt.Errorf("n %q: want a number of runs, at least 1", n)
		}
		f.Limit = v
	}
	return f, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// rows reads the runs and their headline figures.
func (s *Server) rows(f store.Filter, status string) ([]runRow, error) {
	runs, err := s.o.Store.Runs(f)
	if err != nil {
		return nil, err
	}
	var out []runRow
	for _, run := range runs {
		row := runRow{Run: run, Status: run.Status, Duration: "-"}
		if status != "" && run.Status != status {
			continue
		}
		if !run.End.IsZero() {
			row.Duration = run.End.Sub(run.Start).Round(100 * time.Millisecond).String()
		}
		var ls []string
		for k, v := range run.Labels {
			ls = append(ls, k+"="+v)
		}
		sort.Strings(ls)
		row.Labels = strings.Join(ls, " ")
		if run.Status == metrics.StatusRunning {
			row.Status = results.LiveStatus(s.o.Store, run.ID)
		} else if v := run.Verdict; v != nil {
			row.Has = true
			row.Requests, row.RPS, row.ErrPct = v.Requests, v.RPS, results.Percent(v.Errors, v.Requests)
			row.Notes = v.Notes()
			row.Clean = !slices.ContainsFunc(row.Notes, func(n store.Note) bool { return n.Fail })
		}
		out = append(out, row)
	}
	return out, nil
}

// plans are the plans of the history, for the filters and the history page.
func (s *Server) plans() ([]string, error) {
	runs, err := s.o.Store.Runs(store.Filter{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range runs {
		if !slices.Contains(out, r.Plan) {
			out = append(out, r.Plan)
		}
	}
	sort.Strings(out)
	return out, nil
}

// chartStyles and chartScripts are the report's charts' (report.Assets):
// a page that shows charts as the report does loads them.
var (
	chartStyles  = []string{"/static/app.css", "/static/uPlot.min.css", "/static/charts.css"}
	chartScripts = []string{"/static/uPlot.iife.min.js", "/static/charts.js"}
)

// runPage shows a run as the HTML report does, with its live charts above;
// a run going is brought up to date by live.js.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.fromCache(w, "page "+id, "text/html; charset=utf-8") {
		return
	}
	rd, err := results.FromStore(s.o.Store, id)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	// The live charts shade the run's incidents, as the report's do.
	incidents, err := json.Marshal(report.IncidentBandsAt(rd.Summary.Drift))
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	var before bytes.Buffer
	if err := pages.ExecuteTemplate(&before, "runtop", struct {
		L         layout
		ID        string
		S         *results.Summary
		Live      bool
		Incidents string
	}{layout{Version: s.o.Version, Nav: "runs"}, id, rd.Summary, rd.Summary.Status == metrics.StatusRunning, string(incidents)}); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	var b bytes.Buffer
	err = report.WriteHTMLPage(&b, rd, report.PageParts{
		Styles:  chartStyles,
		Scripts: append(chartScripts, "/static/live.js"),
		Before:  template.HTML(before.String()), // rendered by html/template above
	})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "drawing run "+id+": "+err.Error())
		return
	}
	if final(rd.Summary.Status) {
		s.cache.add("page "+id, b.Bytes())
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// fromCache answers from the cache of finished runs, if it has key.
func (s *Server) fromCache(w http.ResponseWriter, key, contentType string) bool {
	b, ok := s.cache.get(key)
	if ok {
		w.Header().Set("Content-Type", contentType)
		w.Write(b)
	}
	return ok
}

// final reports whether a run with this status will not change.
func final(status string) bool {
	return status != metrics.StatusRunning && status != metrics.StatusKilled
}

// events tells a run page when its run has stored new intervals
// ("interval"), and when it has ended ("end"), as server-sent events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	status, last, err := s.o.Store.Progress(id)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, "this server cannot stream events")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	send := func(event string, data any) bool {
		b, _ := json.Marshal(data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	type progress struct {
		Status string `json:"status"`
		Last   int64  `json:"last_ms"`
	}
	if !send("hello", progress{status, last.UnixMilli()}) {
		return
	}
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	// A run seen killed may only have looked so for a moment (its process
	// busy finishing, on a loaded machine): the stream ends on a killed
	// run once it has said nothing new for killedGrace.
	heard := time.Now()
	for status == metrics.StatusRunning || status == metrics.StatusKilled && time.Since(heard) < killedGrace {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
			continue
		case <-t.C:
		}
		st, l, err := s.o.Store.Progress(id)
		if errors.Is(err, store.ErrNotFound) {
			send("gone", progress{})
			return
		}
		if err != nil {
			continue // the next look may pass
		}
		if l.After(last) || st != status {
			heard = time.Now()
		}
		if l.After(last) {
			last = l
			if !send("interval", progress{st, l.UnixMilli()}) {
				return
			}
		}
		status = st
	}
	send("end", progress{status, last.UnixMilli()})
}

// killedGrace is how long a run seen killed is watched for a word more.
const killedGrace = 10 * time.Second

// Series is a run's throughput, errors and p95 over time, each interval
// of all its requests together: what a run page's live charts draw. The
// rates are over each interval's own length; Partial marks the intervals
// shorter than the run's (a stage's last, cut short by its end), which
// the charts draw apart from their lines.
type Series struct {
	T       []float64 `json:"t"`       // the interval's start, Unix seconds
	RPS     []float64 `json:"rps"`     // requests per second
	Errors  []float64 `json:"errors"`  // failed requests per second
	P95     []float64 `json:"p95"`     // ms, of the successful requests
	Partial []bool    `json:"partial"` // shorter than the run's interval
	Status  string    `json:"status"`
	// Verdict says what keeps a finished run from a clean pass:
	// "thresholds failed: 2 of 5; drift: degraded" (store.Verdict.Notes).
	Verdict string `json:"verdict,omitempty"`
}

// add appends an interval from startMs to endMs with its counts.
func (s *Series) add(startMs, endMs, count, errs int64, p95 float64, nominal time.Duration) {
	iv := results.IntervalData{StartMs: startMs, EndMs: endMs}
	secs := iv.Seconds()
	if iv.Partial(nominal) && 10*secs < nominal.Seconds() {
		// A sliver of an interval (under a tenth of it): a rate and a p95
		// of chance, left out as the report's charts leave it out.
		return
	}
	s.T = append(s.T, float64(startMs)/1000)
	s.RPS = append(s.RPS, float64(count)/secs)
	s.Errors = append(s.Errors, float64(errs)/secs)
	s.P95 = append(s.P95, p95)
	s.Partial = append(s.Partial, iv.Partial(nominal))
}

func newSeries(status string) *Series {
	return &Series{T: []float64{}, RPS: []float64{}, Errors: []float64{}, P95: []float64{}, Partial: []bool{}, Status: status}
}

// SeriesOf is a run's Series, from its interval histograms: the
// intervals of all its requests at each start, decoded one time step at a
// time into one accumulator (a day of 10 s intervals of 20 operations is
// 172,800 histograms).
func SeriesOf(rd *results.Run) (*Series, error) {
	byStart := map[int64][]*results.IntervalData{}
	for _, ph := range rd.Summary.Stages {
		for _, op := range results.UniqueOps(ph.Operations) {
			if op.Kind != metrics.KindStep {
				continue
			}
			for _, iv := range rd.IntervalsOf(ph.Index, op) {
				byStart[iv.StartMs] = append(byStart[iv.StartMs], iv)
			}
		}
	}
	starts := make([]int64, 0, len(byStart))
	for t := range byStart {
		starts = append(starts, t)
	}
	slices.Sort(starts)
	// The time steps in chunks, a chunk per core, each with its own
	// accumulator.
	type point struct {
		ok                 bool
		end, count, errors int64
		p95                float64
	}
	points := make([]point, len(starts))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(starts)/64))
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc := metrics.NewHistogram()
			for i := w; i < len(starts); i += workers {
				t := starts[i]
				acc.Reset()
				var count, errs, end int64
				for _, iv := range byStart[t] {
					before := acc.TotalCount()
					if err := metrics.DecodeInto(acc, []byte(iv.Encoded())); err != nil {
						errc <- err
						return
					}
					n := iv.Count
					if n < 0 { // unknown: the successful ones
						n = acc.TotalCount() - before
					}
					count += n
					errs += max(iv.Errors, 0)
					end = max(end, iv.EndMs)
				}
				if end <= t {
					continue
				}
				p95 := math.NaN()
				if acc.TotalCount() > 0 {
					p95 = float64(acc.ValueAtQuantile(95)) / 1000
				}
				points[i] = point{true, end, count, errs, p95}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	out := newSeries(rd.Summary.Status)
	for i, p := range points {
		if p.ok {
			out.add(starts[i], p.end, p.count, p.errors, p.p95, rd.Summary.IntervalLength())
		}
	}
	return out, nil
}

// series is a run's Series: from the traffic the history keeps of each
// interval, or, for a run it has none of (a distributed run still going,
// a run stored before), from the run's interval histograms.
func (s *Server) series(id string) (*Series, error) {
	runs, err := s.o.Store.Runs(store.Filter{ID: id})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%w: %s", store.ErrNotFound, id)
	}
	tr, err := s.o.Store.TrafficOf(id)
	if err != nil {
		return nil, err
	}
	var ser *Series
	if len(tr) > 0 {
		ser = SeriesOfTraffic(tr, runs[0].Status, s.interval(id, tr))
	} else {
		rd, err := results.FromStore(s.o.Store, id)
		if err != nil {
			return nil, err
		}
		if ser, err = SeriesOf(rd); err != nil {
			return nil, err
		}
	}
	ser.Verdict = runs[0].Verdict.String()
	return ser, nil
}

// interval is the interval of a run whose traffic is tr: its summary's,
// or for a run that has none (still going, or killed) the one its
// intervals' starts give (results.InferInterval).
func (s *Server) interval(id string, tr []store.Traffic) time.Duration {
	if b, err := s.o.Store.Summary(id); err == nil && len(b) > 0 {
		var sum struct {
			Interval float64 `json:"interval_s"`
		}
		if json.Unmarshal(b, &sum) == nil && sum.Interval > 0 {
			return (&results.Summary{Interval: sum.Interval}).IntervalLength()
		}
	}
	starts := make([]results.IntervalStart, len(tr))
	for i, t := range tr {
		starts[i] = results.IntervalStart{Phase: t.Phase, Index: t.Ivl, StartMs: t.StartMs}
	}
	return results.InferInterval(starts)
}

// SeriesOfTraffic is the Series of a run's traffic, as SeriesOf draws it
// from the intervals' histograms; nominal is the run's interval.
func SeriesOfTraffic(tr []store.Traffic, status string, nominal time.Duration) *Series {
	out := newSeries(status)
	for _, t := range tr {
		if t.EndMs <= t.StartMs {
			continue
		}
		p95 := math.NaN()
		if t.Quantiles.N > 0 {
			p95 = float64(t.Quantiles.P95) / 1000
		}
		out.add(t.StartMs, t.EndMs, t.Count, t.Errors, p95, nominal)
	}
	return out
}

// apiSeries serves a run's Series as JSON (p95 null where an interval had
// no successful request).
func (s *Server) apiSeries(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.fromCache(w, "series "+id, "application/json") {
		return
	}
	ser, err := s.series(id)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	p95 := make([]*float64, len(ser.P95))
	for i, v := range ser.P95 {
		if !math.IsNaN(v) {
			p95[i] = &ser.P95[i]
		}
	}
	b, err := json.Marshal(struct {
		*Series
		P95 []*float64 `json:"p95"`
	}{ser, p95})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	if final(ser.Status) {
		s.cache.add("series "+id, b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

// apiRuns lists the runs as JSON, with the runs list's filters.
func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	rows, ok := s.filtered(w, r)
	if !ok {
		return
	}
	type row struct {
		store.Run
		Live     string  `json:"live_status,omitempty"`
		Requests int64   `json:"requests"`
		RPS      float64 `json:"rps"`
		ErrPct   float64 `json:"error_pct"`
	}
	out := []row{}
	for _, x := range rows {
		rr := row{Run: x.Run, Requests: x.Requests, RPS: x.RPS, ErrPct: x.ErrPct}
		if x.Status != x.Run.Status {
			rr.Live = x.Status
		}
		out = append(out, rr)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// resolve reads the runs an argument names: run ids and label selectors
// (release=A), comma-separated.
func (s *Server) resolve(arg string) ([]*results.Run, error) {
	var out []*results.Run
	for _, item := range strings.Split(arg, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "=") {
			runs, err := results.LabelledRuns(s.o.Store, item, "", "")
			if err != nil {
				return nil, err
			}
			if len(runs) == 0 {
				return nil, fmt.Errorf("%w: no stored run has the label %s", store.ErrNotFound, item)
			}
			out = append(out, runs...)
			continue
		}
		rd, err := results.FromStore(s.o.Store, item)
		if err != nil {
			return nil, err
		}
		out = append(out, rd)
	}
	return out, nil
}

// comparePage compares two runs (or two labels) as perflab compare does.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data := struct {
		Base, Cand string
		Pct        float64
		C          *judge.RunComparison
		Table      string
		Resources  string
	}{Base: q.Get("base"), Cand: q.Get("candidate"), Pct: 95}
	if p := q.Get("percentile"); p != "" {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v <= 0 || v >= 100 {
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("percentile %q: want a number between 0 and 100, such as 95", p))
			return
		}
		data.Pct = v
	}
	if data.Base != "" || data.Cand != "" {
		if data.Base == "" || data.Cand == "" {
			s.fail(w, r, http.StatusBadRequest, "compare needs a base and a candidate: run ids or labels (release=A)")
			return
		}
		base, err := s.resolve(data.Base)
		if err != nil {
			s.storeFailed(w, r, err)
			return
		}
		cand, err := s.resolve(data.Cand)
		if err != nil {
			s.storeFailed(w, r, err)
			return
		}
		c, err := judge.Compare(base, cand, data.Pct, 0.05, 0.05)
		if err != nil {
			s.fail(w, r, http.StatusUnprocessableEntity, err.Error())
			return
		}
		data.C = c
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page(w, "compare", layout{Title: "Compare", Version: s.o.Version, Nav: "compare"}, data)
}

// historyPage follows each operation of a plan across its completed runs,
// with the runs where a level changed marked.
func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	plans, err := s.plans()
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	type series struct {
		H     judge.HistorySeries
		Chart template.HTML
	}
	data := struct {
		Plans  []string
		Plan   string
		Pct    float64
		Series []series
		Runs   int
	}{Plans: plans, Plan: q.Get("plan"), Pct: 95}
	if p := q.Get("percentile"); p != "" {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !judge.HistoryPercentile(v) {
			s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("percentile %q: want one the summaries keep (50, 75, 90, 95, 99, 99.9)", p))
			return
		}
		data.Pct = v
	}
	if data.Plan != "" {
		sums, err := results.Completed(s.o.Store, store.Filter{Plan: data.Plan})
		if err != nil {
			s.storeFailed(w, r, err)
			return
		}
		data.Runs = len(sums)
		for _, h := range judge.History(sums, data.Pct, 3) {
			data.Series = append(data.Series, series{H: h, Chart: template.HTML(historyChart(h, data.Pct).SVG())})
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page(w, "history", layout{Title: "History", Version: s.o.Version, Nav: "history"}, data)
}

// historyChart draws a series over its runs, each change of level marked
// at the run where it began.
func historyChart(h judge.HistorySeries, pct float64) report.Chart {
	var pts []report.XY
	var ticks []report.XY
	for i, p := range h.Points {
		pts = append(pts, report.XY{X: float64(i + 1), Y: p.Value})
		ticks = append(ticks, report.XY{X: float64(i + 1)})
	}
	c := report.Chart{Slug: "history", Title: fmt.Sprintf("%s %s: p%g over its runs", h.Stage, h.Operation, pct),
		XLabel: "run (oldest first)", YLabel: "ms", Series: []report.Series{{Name: fmt.Sprintf("p%g", pct), Points: pts}}}
	if len(ticks) <= 20 {
		c.XTicks = ticks
		c.XTickLabel = func(x float64) string { return strconv.Itoa(int(x)) }
	}
	for _, ch := range h.Changes {
		for i, p := range h.Points {
			if strings.Contains(ch, p.RunID) {
				c.Marks = append(c.Marks, report.Mark{X: float64(i + 1), Label: "changed"})
				break
			}
		}
	}
	return c
}

// driftPage shows a long run's windows and its drift verdict.
func (s *Server) driftPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rd, err := results.FromStore(s.o.Store, id)
	if err != nil {
		s.storeFailed(w, r, err)
		return
	}
	var windows []judge.Window
	for _, spec := range r.URL.Query()["window"] {
		win, err := judge.ParseWindow(spec)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, err.Error())
			return
		}
		windows = append(windows, win)
	}
	drift := rd.Summary.Drift
	if drift == nil {
		drift = judge.Longevity(rd, judge.LongevityOptions{})
	}
	var text bytes.Buffer
	if ows := judge.Windows(rd, windows); len(ows) > 0 {
		report.WriteWindows(&text, ows)
	}
	if drift != nil {
		text.WriteString("\n")
		report.WriteDrift(&text, drift)
	}
	rd.Summary.Drift = drift
	charts, err := report.RunCharts(rd)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	var plots report.Plots
	var places []template.HTML
	for _, c := range charts.Drift {
		places = append(places, plots.Place(c))
	}
	data, err := plots.Data()
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page(w, "drift", layout{Title: "Drift of " + id, Version: s.o.Version, Nav: "runs", Styles: chartStyles, Scripts: chartScripts}, struct {
		ID        string
		S         *results.Summary
		Drift     *results.Drift
		Incidents template.HTML
		Text      string
		Charts    []template.HTML
		Plots     template.JS
	}{id, rd.Summary, drift, report.IncidentBox(drift), text.String(), places, data})
}
