package results

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/logcorr"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
)

// Format identifies summary.json documents.
const Format = "perflab.summary/v1"

// Version is perflab's version, set by the CLI.
var Version = "dev"

// Summary is the document written as summary.json.
type Summary struct {
	Format string   `json:"format"`
	RunID  string   `json:"run_id"`
	Status string   `json:"status"`
	Error  string   `json:"error,omitempty"`
	Plan   PlanInfo `json:"plan"`
	// Variables maps a name to its value, or to the list of values of a swept variable.
	Variables map[string]any    `json:"variables"`
	Overrides map[string]string `json:"overrides"`
	// Labels are the run's labels in the history (release=Goldenrod).
	Labels   map[string]string `json:"labels,omitempty"`
	Start    time.Time         `json:"start"`
	End      time.Time         `json:"end"`
	Duration float64           `json:"duration_s"`
	Interval float64           `json:"interval_s"`
	Host     Host              `json:"host"`
	Setup    []PhaseSummary    `json:"setup"`
	Stages   []PhaseSummary    `json:"stages"`
	Teardown []PhaseSummary    `json:"teardown"`
	Total    Total             `json:"total"`
	// Scaling is present when the stages sweep the number of VUs.
	Scaling *Scaling `json:"scaling,omitempty"`
	// Thresholds are the plan's thresholds checked in every stage.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Simulators are what the plan's simulators saw: what the system under
	// test asked of its dependencies.
	Simulators []metrics.SimulatorStats `json:"simulators,omitempty"`
	// Logs is the correlation of the requests of the steps marked correlate
	// with the service's logs: time inside the service from its own logs.
	Logs *logcorr.Result `json:"logs,omitempty"`
	// Resources is what the monitors saw, per stage: CPU (per transaction),
	// memory and its trend, garbage collection, the generator's host, slow
	// queries.
	Resources *monitor.Analysis `json:"resources,omitempty"`
	// Drift is the longevity verdict: whether the system degraded over
	// the run's stages; present when a stage had enough intervals to
	// judge.
	Drift *Drift `json:"drift,omitempty"`
	// Warnings say what makes the results suspect or incomplete: a
	// saturated load generator, a monitor that could not sample.
	Warnings []string `json:"warnings,omitempty"`
	// AnalysisErrors are the analyses of the finished run that failed:
	// each fails alone, and the run is whole and stored without it.
	AnalysisErrors []AnalysisError `json:"analysis_errors,omitempty"`
	// Workers are a distributed run's load generators, each with its
	// part (a run of its own in the history) and how it ended.
	Workers []WorkerInfo `json:"workers,omitempty"`
	// Origin says where a run made by another tool and imported came
	// from, and what of it was not carried over.
	Origin *Origin `json:"origin,omitempty"`
}

// AnalysisError is an analysis of a finished run that failed: its drift,
// its regressions, its logs' correlation, a report.
type AnalysisError struct {
	Analysis string `json:"analysis"`
	Error    string `json:"error"`
}

// Analyses of a finished run, as AnalysisError names them.
const (
	AnalysisDrift       = "drift"
	AnalysisRegressions = "regressions"
	AnalysisThresholds  = "thresholds"
	AnalysisLogs        = "logs"
	AnalysisReport      = "report"
	AnalysisResources   = "resources"
	AnalysisScaling     = "scaling"
)

// SetAnalysisError records that an analysis failed, or, with err nil, that
// it ran (an earlier failure of it is forgotten).
func (s *Summary) SetAnalysisError(analysis string, err error) {
	s.AnalysisErrors = slices.DeleteFunc(s.AnalysisErrors, func(e AnalysisError) bool { return e.Analysis == analysis })
	if err != nil {
		s.AnalysisErrors = append(s.AnalysisErrors, AnalysisError{Analysis: analysis, Error: err.Error()})
	}
	if len(s.AnalysisErrors) == 0 {
		s.AnalysisErrors = nil
	}
}

// Sentence says where an imported run came from: "Imported from jmeter
// results: FILE (N samples); not carried over: ...". "" for a run of
// perflab's own (o nil).
func (o *Origin) Sentence() string {
	if o == nil {
		return ""
	}
	s := fmt.Sprintf("Imported from %s results: %s (%d samples)", o.Tool, o.File, o.Samples)
	if len(o.NotCarried) > 0 {
		s += "; not carried over: " + strings.Join(o.NotCarried, "; ")
	}
	return s + "."
}

// Origin is the source of an imported run: another tool's results.
type Origin struct {
	Tool string `json:"tool"` // jmeter, k6
	File string `json:"file"`
	// Samples is how many of the file's samples became the run's
	// operations.
	Samples int64 `json:"samples"`
	// NotCarried says what the file had that the run does not.
	NotCarried []string `json:"not_carried,omitempty"`
}

// WorkerInfo is a worker of a distributed run.
type WorkerInfo struct {
	Index int    `json:"index"`
	Part  string `json:"part"`
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
	// Status is how its part ended, or killed: it stopped without
	// recording its part, and its share is missing from the run.
	Status string    `json:"status"`
	End    time.Time `json:"end"`
}

// Scaling is throughput against parallelism over a sweep of VU counts:
// speedup and efficiency against the first stage, and the saturation point.
type Scaling struct {
	By     string         `json:"by"`
	Points []ScalingPoint `json:"points"`
	// SaturationVUs is the fewest VUs whose throughput is within Tolerance
	// of the sweep's best: where adding workers stops paying.
	SaturationVUs float64 `json:"saturation_vus"`
	Tolerance     float64 `json:"tolerance"`
	// USL is a Universal Scalability Law fit, with three points or more.
	USL *USLFit `json:"usl,omitempty"`
}

// Sentence says where throughput stopped increasing, or that it had not
// by the largest VU count of the sweep.
func (sc *Scaling) Sentence() string {
	most := 0
	for _, p := range sc.Points {
		most = max(most, p.VUs)
	}
	if len(sc.Points) > 1 && sc.SaturationVUs >= float64(most) {
		return fmt.Sprintf("throughput was still increasing at %d VUs, the most tried: no saturation within the sweep", most)
	}
	return fmt.Sprintf("throughput stops increasing at %g VUs (the fewest within %.0f%% of the best)", sc.SaturationVUs, 100*sc.Tolerance)
}

// USLLine states the Universal Scalability Law fit, if there is one.
func (sc *Scaling) USLLine() string {
	u := sc.USL
	if u == nil {
		return ""
	}
	line := fmt.Sprintf("Universal Scalability Law fit (R² %.3f): λ %.1f req/s per VU, contention σ %.4f, coherency κ %.6f", u.R2, u.Lambda, u.Sigma, u.Kappa)
	if u.PeakVUs > 0 {
		line += fmt.Sprintf("; predicted peak %.0f req/s at %.1f VUs", u.PeakRPS, u.PeakVUs)
	}
	return line
}

// USLFit is X(N) = λN / (1 + σ(N-1) + κN(N-1)) fitted to the points.
type USLFit struct {
	Lambda float64 `json:"lambda"`
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	// PeakVUs and PeakRPS are the predicted maximum; omitted when the fit
	// has no peak (no coherency cost) or puts it beyond ten times the
	// largest load measured.
	PeakVUs float64 `json:"peak_vus,omitempty"`
	PeakRPS float64 `json:"peak_rps,omitempty"`
	R2      float64 `json:"r2"`
}

// ScalingPoint is one stage of a scaling sweep.
type ScalingPoint struct {
	Stage      int     `json:"stage"`
	VUs        int     `json:"vus"`
	Requests   int64   `json:"requests"`
	Wall       float64 `json:"wall_s"`
	RPS        float64 `json:"rps"`
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
}

// PlanInfo is the plan as run.
type PlanInfo struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Source string `json:"source"`
	// Includes are the files the plan includes, as they were read: with
	// Source, the plan whole.
	Includes []metrics.PlanFile `json:"includes,omitempty"`
}

// Host describes the machine that generated the load.
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPUs     int    `json:"cpus"`
	// GoMaxProcs is the number of cores perflab could use (the CPUs it may
	// run on, or its cgroup's limit).
	GoMaxProcs int    `json:"gomaxprocs,omitempty"`
	CPUModel   string `json:"cpu_model,omitempty"`
	MemoryMB   int64  `json:"memory_mb,omitempty"`
	Go         string `json:"go_version"`
	Perflab    string `json:"perflab_version"`
}

// PhaseSummary is one stage (or setup/teardown) and its operations.
type PhaseSummary struct {
	Index      int               `json:"index"`
	Name       string            `json:"name"`
	Values     map[string]string `json:"values"`
	Start      time.Time         `json:"start"`
	End        time.Time         `json:"end"`
	Duration   float64           `json:"duration_s"`
	Error      string            `json:"error,omitempty"`
	Load       []metrics.Load    `json:"load,omitempty"`
	Abandoned  int64             `json:"abandoned,omitempty"`
	Operations []Operation       `json:"operations"`
	// Limits are the limits of the generator's host that the stage's
	// load could pass, found before it started (stages only).
	Limits []metrics.HostLimit `json:"host_limits,omitempty"`
	// Processing is what the stage's VUs spent on responses after they
	// arrived, extracting and checking (stages only; absent when no step
	// extracts or checks).
	Processing *metrics.Processing `json:"processing,omitempty"`
	// Generator says whether the load generator kept up (stages only).
	Generator *GeneratorCheck `json:"generator,omitempty"`
}

// Operation is the statistics of one step, transaction or scenario.
type Operation struct {
	Name        string       `json:"name"`
	Kind        metrics.Kind `json:"kind"`
	Scenario    string       `json:"scenario"`
	Transaction string       `json:"transaction,omitempty"`
	metrics.Summary
}

// Total is the JMeter-style total over every request of the run.
type Total struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Duration float64 `json:"duration_s"`
	RPS      float64 `json:"rps"`
	// Mean, Min and Max are over all requests, failed ones included, in ms.
	Mean float64 `json:"mean_ms"`
	Min  float64 `json:"min_ms"`
	Max  float64 `json:"max_ms"`
	// Dropped counts the iterations open models could not start (every
	// VU busy) of Due, those that were due: started or dropped
	// (metrics.Due). Closed models have none due.
	Dropped int64  `json:"dropped,omitempty"`
	Due     int64  `json:"due,omitempty"`
	Line    string `json:"line"`
}

// droppedOf counts the iterations open models dropped in stages, and
// those that were due (metrics.Due).
func droppedOf(stages []PhaseSummary) (dropped, due int64) {
	for _, ph := range stages {
		for _, op := range ph.Operations {
			if op.Kind == metrics.KindScenario {
				d, _ := metrics.Due(ph.Load, op.Scenario, op.Count, op.Dropped)
				dropped, due = dropped+op.Dropped, due+d
			}
		}
	}
	return dropped, due
}

// finish completes the total of stages: their dropped iterations, and
// the summary line.
func (t *Total) finish(stages []PhaseSummary) {
	t.Dropped, t.Due = droppedOf(stages)
	t.Line = SummaryLine(*t)
}

// HostFacts reads facts about this machine.
func HostFacts() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoMaxProcs: runtime.GOMAXPROCS(0), Go: runtime.Version(), Perflab: Version}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "MemTotal:") {
				f := strings.Fields(line)
				if len(f) >= 2 {
					for _, c := range f[1] {
						kb = kb*10 + int64(c-'0')
					}
				}
			}
		}
		h.MemoryMB = kb / 1024
	}
	return h
}

// Summarize builds the summary document of a run.
// LabelList is the run's labels as "k=v, k=v", sorted by name.
func (s *Summary) LabelList() string {
	kv := make([]string, 0, len(s.Labels))
	for k, v := range s.Labels {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ", ")
}

// IntervalLength is the run's interval (Interval, in seconds), 0 when
// not known.
func (s *Summary) IntervalLength() time.Duration {
	return time.Duration(math.Round(s.Interval*1e6)) * time.Microsecond
}

func Summarize(run *metrics.Run, host Host) *Summary {
	s := &Summary{
		Format: Format, RunID: run.ID, Status: run.Status, Error: run.Error,
		Plan:      PlanInfo{Name: run.PlanName, File: run.PlanFile, Source: string(run.PlanSource), Includes: run.PlanIncludes},
		Variables: map[string]any{}, Overrides: map[string]string{},
		Start: run.Start, End: run.End, Duration: run.End.Sub(run.Start).Seconds(),
		Interval: run.Interval.Seconds(), Host: host,
		Setup: []PhaseSummary{}, Stages: []PhaseSummary{}, Teardown: []PhaseSummary{},
		Simulators: run.Simulators,
	}
	for _, v := range run.Vars {
		if v.Swept {
			s.Variables[v.Name] = v.Values
		} else if len(v.Values) > 0 {
			s.Variables[v.Name] = v.Values[0]
		}
	}
	for _, kv := range run.Overrides {
		s.Overrides[kv.Name] = kv.Value
	}
	for _, ph := range run.Setup {
		s.Setup = append(s.Setup, phaseSummary(ph))
	}
	for _, ph := range run.Stages {
		s.Stages = append(s.Stages, phaseSummary(ph))
	}
	for _, ph := range run.Teardown {
		s.Teardown = append(s.Teardown, phaseSummary(ph))
	}
	s.Total = total(run)
	s.Total.finish(s.Stages)
	s.Scaling = scaling(run)
	return s
}

// scaling analyses a sweep whose stages run closed models with a growing
// number of VUs; nil otherwise.
func scaling(run *metrics.Run) *Scaling {
	if len(run.Stages) < 2 {
		return nil
	}
	var pts []analyze.ScalePoint
	prev := 0
	for _, ph := range run.Stages {
		vus := 0
		for _, l := range ph.Load {
			if l.Open {
				return nil
			}
			vus += l.VUs
		}
		if vus <= prev {
			return nil
		}
		prev = vus
		var reqs int64
		for i, op := range ph.Ops {
			if op.Kind == metrics.KindStep && i < len(ph.Totals) {
				reqs += ph.Totals[i].Count
			}
		}
		pts = append(pts, analyze.ScalePoint{P: float64(vus), Work: float64(reqs), Wall: ph.Elapsed().Seconds()})
	}
	a := analyze.Scale(pts, 0)
	if len(a.Rows) != len(run.Stages) {
		return nil
	}
	sc := &Scaling{By: "vus", SaturationVUs: a.Saturation, Tolerance: a.Tolerance}
	var ns, xs []float64
	for _, r := range a.Rows {
		ns, xs = append(ns, r.P), append(xs, r.Throughput)
	}
	if m, err := analyze.FitUSL(ns, xs); err == nil {
		sc.USL = &USLFit{Lambda: m.Lambda, Sigma: m.Sigma, Kappa: m.Kappa, R2: m.R2}
		// A peak far beyond the measured loads (a coherency cost of about
		// zero) is an extrapolation, not a prediction: none is given.
		if !math.IsInf(m.PeakN, 0) && m.PeakN <= 10*ns[len(ns)-1] {
			sc.USL.PeakVUs, sc.USL.PeakRPS = m.PeakN, m.PeakX
		}
	}
	for i, r := range a.Rows {
		sc.Points = append(sc.Points, ScalingPoint{
			Stage: run.Stages[i].Index, VUs: int(r.P), Requests: int64(r.Work), Wall: r.Wall,
			RPS: r.Throughput, Speedup: r.Speedup, Efficiency: r.Efficiency,
		})
	}
	return sc
}

func phaseSummary(ph *metrics.Phase) PhaseSummary {
	ps := PhaseSummary{
		Index: ph.Index, Name: ph.Name, Values: map[string]string{}, Start: ph.Start, End: ph.End,
		Duration: ph.Elapsed().Seconds(), Error: ph.Error, Load: ph.Load, Abandoned: ph.Abandoned, Limits: ph.Limits, Processing: ph.Processing, Operations: []Operation{},
	}
	for _, kv := range ph.Values {
		ps.Values[kv.Name] = kv.Value
	}
	for i, op := range ph.Ops {
		if i >= len(ph.Totals) {
			break
		}
		// Rates are over the operation's scenario's active time.
		span := ph.Elapsed()
		if d, ok := ph.Spans[op.Scenario]; ok && d > 0 {
			span = d
		}
		ps.Operations = append(ps.Operations, Operation{
			Name: op.Name, Kind: op.Kind, Scenario: op.Scenario, Transaction: op.Transaction,
			Summary: ph.Totals[i].Summarize(span),
		})
	}
	return ps
}

// total adds up every request step of every stage (finish completes it).
func total(run *metrics.Run) Total {
	var t Total
	var all metrics.Moments
	var first, last time.Time
	for _, ph := range run.Stages {
		if first.IsZero() || ph.Start.Before(first) {
			first = ph.Start
		}
		if ph.End.After(last) {
			last = ph.End
		}
		for i, op := range ph.Ops {
			if op.Kind != metrics.KindStep || i >= len(ph.Totals) {
				continue
			}
			st := ph.Totals[i]
			t.Requests += st.Count
			t.Errors += st.ErrorCount()
			all.Merge(st.OK)
			all.Merge(st.Failed)
		}
	}
	if !first.IsZero() {
		t.Duration = last.Sub(first).Seconds()
	}
	if t.Duration > 0 {
		t.RPS = float64(t.Requests) / t.Duration
	}
	if all.N > 0 {
		t.Mean, t.Min, t.Max = all.Mean()/1e6, float64(all.Min)/1e6, float64(all.Max)/1e6
	}
	return t
}

// DecodeSummary reads a summary.json document from r as it comes: only
// the summary decoded is held, never the document's bytes whole (a run
// of thousands of stages writes hundreds of MB). It reads as
// encoding/json's Unmarshal does (go-json-experiment's decoder, the
// prototype of encoding/json/v2, with v1's semantics), but for errors,
// said as the decoder finds them rather than after a first pass over the
// whole document, which v1's way would need.
func DecodeSummary(r io.Reader) (*Summary, error) {
	var s Summary
	if err := jsonv2.UnmarshalRead(r, &s, jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false)); err != nil {
		return nil, err
	}
	return &s, nil
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// SummaryLine formats the total like JMeter's summariser, so people who
// compare against JMeter logs read the same figures:
//
//	summary = 222450112 in 72:00:39 = 858.1/s Avg: 5 Min: 1 Max: 946942 Err: 17 (0.00%)
//
// followed, when open models dropped iterations (every VU busy), by
// how many of those due: Dropped: 3812 of 10000 due (38.12%). The
// requests of those are in no other figure: without it, a run that sent
// a third of its load reads Err: 0 (0.00%).
func SummaryLine(t Total) string {
	secs := int64(t.Duration + 0.5)
	line := fmt.Sprintf("summary = %d in %02d:%02d:%02d = %.1f/s Avg: %d Min: %d Max: %d Err: %d (%.2f%%)",
		t.Requests, secs/3600, secs/60%60, secs%60, t.RPS,
		int64(t.Mean+0.5), int64(t.Min+0.5), int64(t.Max+0.5), t.Errors, Percent(t.Errors, t.Requests))
	if t.Dropped > 0 {
		line += " Dropped: " + OfDue(t.Dropped, t.Due)
	}
	return line
}

// OfDue says an open model's dropped iterations of those due, as the
// summary line and the tables do: "3812 of 10000 due (38.12%)".
func OfDue(dropped, due int64) string {
	return fmt.Sprintf("%d of %d due (%.2f%%)", dropped, due, Percent(dropped, due))
}

// Dropped is an operation's dropped iterations as the tables show them: a
// count, and of how many due when there are any ("3812 of 10000 due
// (38.12%)").
func (ph PhaseSummary) Dropped(op Operation) string {
	if op.Dropped == 0 {
		return "0"
	}
	due, _ := metrics.Due(ph.Load, op.Scenario, op.Count, op.Dropped)
	return OfDue(op.Dropped, due)
}

// Percent is a of b in percent, 0 when b is.
func Percent(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
