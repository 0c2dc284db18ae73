package results_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// splitRun records one set of samples twice: into one run, as a single
// load generator would, and spread over n partial runs, as n load
// generators sharing the load would. Its two stages each have a closed
// scenario, whose step is called from two transactions (one histogram in
// the log, two operations in the summary), and an open one with service
// time, start delay and the server's own time; failures of several kinds,
// requests never sent; five intervals of 1 s a stage, the last a sliver.
func splitRun(n int) (whole *recorded, parts []*recorded) {
	r := rand.New(rand.NewPCG(7, 11))
	ops := []metrics.Op{
		{Name: "GET item", Kind: metrics.KindStep, Scenario: "flow", Transaction: "checkout"},
		{Name: "GET item", Kind: metrics.KindStep, Scenario: "flow", Transaction: "checkin"},
		{Name: "checkout", Kind: metrics.KindTransaction, Scenario: "flow"},
		{Name: "checkin", Kind: metrics.KindTransaction, Scenario: "flow"},
		{Name: "flow", Kind: metrics.KindScenario, Scenario: "flow"},
		{Name: "POST order", Kind: metrics.KindStep, Scenario: "api"},
		{Name: "api", Kind: metrics.KindScenario, Scenario: "api"},
	}
	open := func(j int) bool { return ops[j].Scenario == "api" }
	newRun := func(id string) *recorded {
		return &recorded{Run: &metrics.Run{ID: id, PlanName: "split", PlanSource: []byte("name: split\n"), Interval: time.Second,
			Start: runtest.T0, End: runtest.T0.Add(9 * time.Second), Status: metrics.StatusCompleted}}
	}
	whole = newRun("whole")
	for i := 0; i < n; i++ {
		parts = append(parts, newRun(fmt.Sprintf("part-%d", i+1)))
	}
	kinds := []metrics.ErrKind{metrics.Timeout, metrics.HTTP5xx, metrics.ConnRefused, metrics.NotSent}
	// What the failures say: two messages of a kind, one whose words vary.
	details := map[metrics.ErrKind][]string{
		metrics.Timeout: {"timeout"}, metrics.HTTP5xx: {"status 503", "status 502"},
		metrics.ConnRefused: {"connect: dial tcp 127.0.0.1:%d: connect: connection refused"},
		metrics.NotSent:     {"${token} is not set", "URL \"/a b\": invalid"},
	}
	for si, vus := range []int{3, 6} {
		start := runtest.T0.Add(time.Duration(si) * 5 * time.Second)
		name := fmt.Sprintf("users=%d", vus)
		phase := func(flowSpan, apiSpan time.Duration, vus int, rate float64) *metrics.Phase {
			ph := &metrics.Phase{Index: si + 1, Name: name, Start: start, End: start.Add(4200 * time.Millisecond), Ops: ops,
				Load:  []metrics.Load{{Scenario: "flow", VUs: vus, Iterations: 10}, {Scenario: "api", Open: true, Rate: rate, MaxVUs: vus}},
				Spans: map[string]time.Duration{"flow": flowSpan, "api": apiSpan}}
			for j := range ops {
				ph.Totals = append(ph.Totals, newStats(open(j)))
			}
			return ph
		}
		wph := phase(4200*time.Millisecond, 3100*time.Millisecond, vus, 30)
		whole.Stages = append(whole.Stages, wph)
		whole.intervals = append(whole.intervals, nil)
		var pph []*metrics.Phase
		for i, p := range parts {
			// The parts' scenarios end at their own times; the latest is
			// the whole's.
			span := func(d time.Duration) time.Duration { return d - time.Duration(i)*130*time.Millisecond }
			ph := phase(span(4200*time.Millisecond), span(3100*time.Millisecond), vus/n, 30/float64(n))
			p.Stages = append(p.Stages, ph)
			p.intervals = append(p.intervals, nil)
			pph = append(pph, ph)
		}
		for k := 0; k < 5; k++ {
			ivStart := start.Add(time.Duration(k) * time.Second)
			ivEnd := ivStart.Add(time.Second)
			if k == 4 {
				ivEnd = ivStart.Add(200 * time.Millisecond)
			}
			interval := func() *metrics.Interval {
				iv := &metrics.Interval{Index: k, Start: ivStart, End: ivEnd}
				for j := range ops {
					iv.Ops = append(iv.Ops, newStats(open(j)))
				}
				return iv
			}
			wiv := interval()
			var pivs []*metrics.Interval
			for range parts {
				pivs = append(pivs, interval())
			}
			for j := range ops {
				for range 20 + r.IntN(40) {
					svc := time.Duration(100_000+r.ExpFloat64()*8e6) * time.Nanosecond
					if r.IntN(50) == 0 {
						svc = time.Duration(1+r.IntN(3)) * time.Second
					}
					delay := time.Duration(0)
					if open(j) {
						delay = time.Duration(r.IntN(300_000))
					}
					ek := metrics.OK
					if r.IntN(20) == 0 {
						ek = kinds[r.IntN(len(kinds))]
					}
					srv := time.Duration(r.Int64N(int64(svc) + 1))
					bytes := r.IntN(4096)
					p := r.IntN(len(parts))
					detail := ""
					if ek != metrics.OK {
						detail = details[ek][r.IntN(len(details[ek]))]
					}
					if ek == metrics.ConnRefused { // a port each, one message
						detail = fmt.Sprintf(detail, 30000+r.IntN(30000))
					}
					for _, st := range []*metrics.Stats{wiv.Ops[j], pivs[p].Ops[j]} {
						if ops[j].Kind == metrics.KindStep {
							st.AddResult(svc+delay, svc, ek, bytes, detail)
						} else {
							st.Add(svc+delay, svc, ek, bytes)
						}
						if ek == metrics.OK && j == 5 {
							st.AddServer(srv, svc)
						}
					}
				}
				if open(j) && ops[j].Kind == metrics.KindScenario && k == 2 {
					wiv.Ops[j].Dropped += 3
					pivs[0].Ops[j].Dropped += 1
					pivs[len(pivs)-1].Ops[j].Dropped += 2
				}
			}
			whole.intervals[si] = append(whole.intervals[si], wiv)
			for i, p := range parts {
				p.intervals[si] = append(p.intervals[si], pivs[i])
			}
		}
	}
	for _, rec := range append([]*recorded{whole}, parts...) {
		for si, ph := range rec.Stages {
			for _, iv := range rec.intervals[si] {
				for j, st := range iv.Ops {
					ph.Totals[j].Merge(st)
				}
			}
		}
	}
	return whole, parts
}

// recorded is a run and its intervals, stage by stage.
type recorded struct {
	*metrics.Run
	intervals [][]*metrics.Interval
}

func newStats(open bool) *metrics.Stats {
	if open {
		return metrics.NewOpenStats()
	}
	return metrics.NewStats()
}

// writeRun writes a run as its run directory, interval by interval, as a
// run does.
func writeRun(t *testing.T, run *recorded, host string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), run.ID)
	w, err := results.CreateDir(dir, run.ID, run.PlanName, run.Start, run.PlanSource, nil)
	if err != nil {
		t.Fatal(err)
	}
	for si, ph := range run.Stages {
		sink := w.Sink(ph)
		for _, iv := range run.intervals[si] {
			if err := sink.Interval(iv); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := runtest.Host
	h.Hostname = host
	if err := w.Finish(results.Summarize(run.Run, h), run.Run); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The samples of one load spread over three load generators merge into
// the figures one generator recording them all gives, exactly: every
// operation's summary (counts, errors by kind, percentiles, exact mean,
// minimum and maximum, rates, service time, start delay, server time),
// the run's total, the scaling of its sweep, and each interval's
// histogram bit for bit.
func TestMergeIsExact(t *testing.T) {
	whole, parts := splitRun(3)
	want, err := results.ReadDir(writeRun(t, whole, "h"))
	if err != nil {
		t.Fatal(err)
	}
	var in []*results.Run
	for i, p := range parts {
		rd, err := results.ReadDir(writeRun(t, p, "h"+string(rune('1'+i))))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, rd)
	}
	got, err := results.Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, got, want)
	// Written as a run directory and read back, it is the same run.
	dir := filepath.Join(t.TempDir(), "merged")
	if err := results.WriteDir(got, dir); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, back, want)
	if h := got.Summary.Host; h.Hostname != "h1, h2, h3" || h.CPUs != 3*runtest.Host.CPUs {
		t.Errorf("host %+v: want the three generators", h)
	}

	// The same runs read back from the history merge the same.
	st, err := store.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stored []*results.Run
	for _, p := range in {
		id, err := results.Import(st, p.Source, nil)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := results.FromStore(st, id)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, rd)
	}
	got, err = results.Merge(stored)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, got, want)
}

// sameRun compares a merged run with the run of the same samples.
func sameRun(t *testing.T, got, want *results.Run) {
	t.Helper()
	if len(got.Summary.Stages) != len(want.Summary.Stages) {
		t.Fatalf("%d stages, want %d", len(got.Summary.Stages), len(want.Summary.Stages))
	}
	for i, ph := range want.Summary.Stages {
		g := got.Summary.Stages[i]
		if g.Name != ph.Name || !g.Start.Equal(ph.Start) || !g.End.Equal(ph.End) || !reflect.DeepEqual(g.Load, ph.Load) {
			t.Errorf("stage %d: %s %v..%v %+v, want %s %v..%v %+v", i+1, g.Name, g.Start, g.End, g.Load, ph.Name, ph.Start, ph.End, ph.Load)
		}
		if len(g.Operations) != len(ph.Operations) {
			t.Fatalf("stage %d: %d operations, want %d", i+1, len(g.Operations), len(ph.Operations))
		}
		for j, op := range ph.Operations {
			// Details are one failure's words, the first of its kind that
			// each part met, not necessarily the whole's: the messages,
			// counted, are compared.
			g := g.Operations[j]
			g.Errors.Details, op.Errors.Details = nil, nil
			if op.Kind == metrics.KindStep && op.Errors.Total > 0 && len(op.Errors.Messages) < 2 {
				t.Errorf("stage %d, %s: messages %v", i+1, op.Name, op.Errors.Messages)
			}
			if !reflect.DeepEqual(g, op) {
				t.Errorf("stage %d, %s %q:\n got %+v\nwant %+v", i+1, op.Kind, op.Name, g, op)
			}
		}
	}
	if got.Summary.Total != want.Summary.Total {
		t.Errorf("total %+v, want %+v", got.Summary.Total, want.Summary.Total)
	}
	if !reflect.DeepEqual(got.Summary.Scaling, want.Summary.Scaling) {
		t.Errorf("scaling %+v, want %+v", got.Summary.Scaling, want.Summary.Scaling)
	}
	if len(got.Intervals) != len(want.Intervals) {
		t.Errorf("%d log tags, want %d", len(got.Intervals), len(want.Intervals))
	}
	for tag, ivs := range want.Intervals {
		g := got.Intervals[tag]
		if len(g) != len(ivs) {
			t.Errorf("%s: %d intervals, want %d", tag, len(g), len(ivs))
			continue
		}
		for k, iv := range ivs {
			if g[k].StartMs != iv.StartMs || g[k].EndMs != iv.EndMs || g[k].Count != iv.Count || g[k].Errors != iv.Errors || g[k].Encoded() != iv.Encoded() {
				t.Errorf("%s interval %d: %d..%d ms, %d (%d errors), want %d..%d, %d (%d), histogram same: %v", tag, k,
					g[k].StartMs, g[k].EndMs, g[k].Count, g[k].Errors, iv.StartMs, iv.EndMs, iv.Count, iv.Errors, g[k].Encoded() == iv.Encoded())
			}
		}
	}
	for i, ph := range want.Totals.Stages {
		g := got.Totals.Stages[i]
		for j, st := range ph.Totals {
			gr, wr := g.Totals[j].Record(), st.Record()
			gr.Details, wr.Details = nil, nil // as above
			if !reflect.DeepEqual(gr, wr) {
				t.Errorf("stage %d, %q: merged totals differ from the whole's", i+1, ph.Ops[j].Name)
			}
		}
	}
}

// Only finished runs of one plan with the same stages merge; the error
// names the part.
func TestMergeRefuses(t *testing.T) {
	_, parts := splitRun(2)
	a, err := results.ReadDir(writeRun(t, parts[0], "h1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.ReadDir(writeRun(t, parts[1], "h2"))
	if err != nil {
		t.Fatal(err)
	}
	killed := *b
	killed.Totals = nil
	other := *b
	other.Totals = &results.Totals{Stages: b.Totals.Stages[:1]}
	renamed := *b
	s := *b.Summary
	s.Plan.Name = "other"
	renamed.Summary = &s
	for _, c := range []struct {
		parts []*results.Run
		want  string
	}{
		{nil, "no runs"},
		{[]*results.Run{a, &killed}, "part 2 (" + b.Source + "): no exact totals"},
		{[]*results.Run{a, &other}, "2 stages and 1"},
		{[]*results.Run{a, &renamed}, `plans "split" and "other" differ`},
	} {
		if _, err := results.Merge(c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merge: %v, want %q", err, c.want)
		}
	}
}
