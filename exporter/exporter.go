// Package exporter gives a run's live figures to Prometheus: per stage,
// scenario and operation, the requests and errors by kind as counters, the
// latency of successful operations (OK) and of failed ones (KO) and an
// open model's start delay as histograms, the VUs and the
// dropped iterations, each labelled with the plan, the run id and the
// run's own labels. It is a prometheus.Collector: the engine's progress
// ticks (lab) leave a snapshot, and a scrape turns it into metrics.
package exporter

import (
	"regexp"
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/perflab/perflab/metrics"
)

// Buckets are the latency histograms' upper bounds, in seconds.
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Exporter is a run's live figures.
type Exporter struct {
	plan   string
	labels map[string]string // the run's own, as label_NAME

	mu     sync.Mutex
	runID  string
	stages []*stage
	// every is how often a tick makes a snapshot; last when it did.
	every time.Duration
	last  time.Time
}

// stage is a stage's snapshot: cumulative over the stage, so counters only
// grow within their stage label.
type stage struct {
	index int
	name  string
	ops   []opSnap
	vus   map[string]int   // scenario's VUs (most, in an open model)
	drops map[string]int64 // scenario's dropped iterations
}

type opSnap struct {
	op      metrics.Op
	count   int64
	errs    [metrics.NumErrKinds]int64
	latency histo
	failed  *histo // the failed operations' latency, once one failed
	delay   *histo
}

// histo is a Prometheus histogram's cumulative bucket counts, count and
// sum (seconds).
type histo struct {
	buckets []uint64
	count   uint64
	sum     float64
}

// New makes the exporter of a run of plan, with the run's labels.
func New(plan string, labels map[string]string) *Exporter {
	out := map[string]string{}
	for k, v := range labels {
		out["label_"+labelName.ReplaceAllString(k, "_")] = v
	}
	return &Exporter{plan: plan, labels: out, every: time.Second}
}

var labelName = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// SetRun names the run, once it has an id.
func (e *Exporter) SetRun(id string) {
	e.mu.Lock()
	e.runID = id
	e.mu.Unlock()
}

// Tick takes a snapshot of a stage's figures so far, at most every second
// (and always a stage's last tick). It has the engine's tick signature.
func (e *Exporter) Tick(ph *metrics.Phase, tk *metrics.Tick) {
	if ph.Index == 0 {
		return // setup and teardown
	}
	now := time.Now()
	e.mu.Lock()
	due := tk.Final || now.Sub(e.last) >= e.every
	e.mu.Unlock()
	if !due {
		return
	}
	st := &stage{index: ph.Index, name: ph.Name, vus: map[string]int{}, drops: map[string]int64{}}
	for _, l := range ph.Load {
		st.vus[l.Scenario] = max(l.VUs, l.MaxVUs)
	}
	for i, op := range tk.Ops {
		tot, cur := tk.Total[i], tk.Cur[i]
		s := opSnap{op: op, count: tot.Count + cur.Count}
		for k := range s.errs {
			s.errs[k] = tot.Errors[k] + cur.Errors[k]
		}
		s.latency = histogramOf(float64(tot.OK.Sum+cur.OK.Sum)/1e9, tot.Hist, cur.Hist)
		if tot.FailHist != nil || cur.FailHist != nil {
			f := histogramOf(float64(tot.Failed.Sum+cur.Failed.Sum)/1e9, tot.FailHist, cur.FailHist)
			s.failed = &f
		}
		if tot.Delay != nil || cur.Delay != nil {
			d := histogramOf(float64(tot.DelayAll.Sum+cur.DelayAll.Sum)/1e9, tot.Delay, cur.Delay)
			s.delay = &d
		}
		if op.Kind == metrics.KindScenario {
			st.drops[op.Scenario] += tot.Dropped + cur.Dropped
		}
		st.ops = append(st.ops, s)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = now
	for i, old := range e.stages {
		if old.index == st.index {
			e.stages[i] = st
			return
		}
	}
	e.stages = append(e.stages, st)
}

// histogramOf adds HDR histograms (µs) into Prometheus buckets: each of
// their values counts in the first bucket whose bound it does not exceed.
// The values are those of HdrHistogram's buckets (3 significant digits).
func histogramOf(sum float64, hs ...*hdr.Histogram) histo {
	out := histo{buckets: make([]uint64, len(Buckets)), sum: sum}
	for _, h := range hs {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		for _, bar := range h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			s := float64(bar.To) / 1e6           // the highest value of its HDR bucket
			i := sort.SearchFloat64s(Buckets, s) // the first bound >= s
			if i < len(Buckets) {
				out.buckets[i] += uint64(bar.Count)
			}
			out.count += uint64(bar.Count)
		}
	}
	for i := 1; i < len(out.buckets); i++ { // cumulative, as Prometheus has them
		out.buckets[i] += out.buckets[i-1]
	}
	return out
}

var (
	opLabels    = []string{"plan", "run_id", "stage", "scenario", "operation", "kind"}
	scenLabels  = []string{"plan", "run_id", "stage", "scenario"}
	descsByKeys = map[string]*prometheus.Desc{}
)

// Describe sends nothing: the exporter is an unchecked collector (its
// label names include the run's own labels).
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect makes the metrics of every stage's snapshot.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var extraNames, extraValues []string
	for k := range e.labels {
		extraNames = append(extraNames, k)
	}
	sort.Strings(extraNames)
	for _, k := range extraNames {
		extraValues = append(extraValues, e.labels[k])
	}
	desc := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(append([]string(nil), labels...), extraNames...), nil)
	}
	var (
		requests = desc("perflab_requests_total", "Operations made (requests, transactions, iterations), failed ones included.", opLabels)
		errs     = desc("perflab_errors_total", "Failed operations, by error kind.", append(append([]string(nil), opLabels...), "error"))
		latency  = desc("perflab_latency_seconds", "Latency of the successful operations (from the due time in open models).", opLabels)
		failed   = desc("perflab_failed_latency_seconds", "Latency of the failed operations that were sent (from the due time in open models).", opLabels)
		delay    = desc("perflab_start_delay_seconds", "Open models: from an iteration's due time to its start.", opLabels)
		dropped  = desc("perflab_dropped_iterations_total", "Open models: iterations not started, every VU busy.", scenLabels)
		vus      = desc("perflab_vus", "VUs of the scenario in the stage (the most, in an open model).", scenLabels)
		info     = desc("perflab_run_info", "The run: 1 while it is exported.", []string{"plan", "run_id"})
	)
	ch <- prometheus.MustNewConstMetric(info, prometheus.GaugeValue, 1, append([]string{e.plan, e.runID}, extraValues...)...)
	for _, st := range e.stages {
		stageName := st.name
		for _, s := range st.ops {
			lv := append([]string{e.plan, e.runID, stageName, s.op.Scenario, s.op.Name, string(s.op.Kind)}, extraValues...)
			ch <- prometheus.MustNewConstMetric(requests, prometheus.CounterValue, float64(s.count), lv...)
			for k := metrics.ErrKind(1); int(k) < metrics.NumErrKinds; k++ {
				if n := s.errs[k]; n > 0 {
					ch <- prometheus.MustNewConstMetric(errs, prometheus.CounterValue, float64(n), append(lv[:6:6], append([]string{k.String()}, extraValues...)...)...)
				}
			}
			ch <- constHistogram(latency, s.latency, lv)
			if s.failed != nil {
				ch <- constHistogram(failed, *s.failed, lv)
			}
			if s.delay != nil {
				ch <- constHistogram(delay, *s.delay, lv)
			}
		}
		for scen, n := range st.vus {
			lv := append([]string{e.plan, e.runID, stageName, scen}, extraValues...)
			ch <- prometheus.MustNewConstMetric(vus, prometheus.GaugeValue, float64(n), lv...)
			ch <- prometheus.MustNewConstMetric(dropped, prometheus.CounterValue, float64(st.drops[scen]), lv...)
		}
	}
}

func constHistogram(d *prometheus.Desc, h histo, lv []string) prometheus.Metric {
	b := make(map[float64]uint64, len(Buckets))
	for i, le := range Buckets {
		b[le] = h.buckets[i]
	}
	return prometheus.MustNewConstHistogram(d, h.count, h.sum, b, lv...)
}
