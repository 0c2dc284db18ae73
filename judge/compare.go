package judge

import (
	"errors"
	"fmt"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// OpComparison compares one operation of one stage between two sides.
type OpComparison struct {
	Stage     string `json:"stage"`
	Scenario  string `json:"scenario"`
	Operation string `json:"operation"`
	Kind      string `json:"kind"`
	// Percentile and Mean are in ms over each side's whole stage; the
	// verdict comes from the per-interval percentiles (the samples).
	BasePct  float64            `json:"base_pct_ms"`
	CandPct  float64            `json:"cand_pct_ms"`
	BaseMean float64            `json:"base_mean_ms"`
	CandMean float64            `json:"cand_mean_ms"`
	Change   float64            `json:"change"`
	Test     analyze.Comparison `json:"test"`
}

// RunComparison is BASE against CANDIDATE.
type RunComparison struct {
	Percentile float64        `json:"percentile"`
	Base       []string       `json:"base"`
	Candidate  []string       `json:"candidate"`
	Ops        []OpComparison `json:"operations"`
	Sentences  []string       `json:"summary"`
	// Resources compare the monitors' figures, where both sides have them.
	Resources []ResourceComparison `json:"resources,omitempty"`
}

// Compare compares candidate runs with baseline runs: per stage (by
// name) and operation, the chosen percentile and the mean, with a verdict
// from a Mann-Whitney test over the per-interval values of that percentile,
// pooled across each side's runs.
func Compare(base, cand []*results.Run, pct, alpha, minChange float64) (*RunComparison, error) {
	if len(base) == 0 || len(cand) == 0 {
		return nil, errors.New("compare needs at least one run on each side")
	}
	rc := &RunComparison{Percentile: pct}
	for _, r := range base {
		rc.Base = append(rc.Base, r.Source)
	}
	for _, r := range cand {
		rc.Candidate = append(rc.Candidate, r.Source)
	}
	// A step of the same name in several transactions (the same API called
	// from check-in and from check-out) shares its interval histograms: it
	// is compared once, as one API.
	for _, ph := range base[0].Summary.Stages {
		for _, op := range results.UniqueOps(ph.Operations) {
			c := OpComparison{Stage: ph.Name, Scenario: op.Scenario, Operation: op.Name, Kind: string(op.Kind)}
			key := metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}
			bs, bp, bm, okB := side(base, ph.Name, key, pct)
			cs, cp, cm, okC := side(cand, ph.Name, key, pct)
			if !okB || !okC {
				continue
			}
			c.BasePct, c.CandPct, c.BaseMean, c.CandMean = bp, cp, bm, cm
			if bp > 0 {
				c.Change = (cp - bp) / bp
			}
			c.Test = analyze.CompareChange(bs, cs, c.Change, alpha, minChange, true)
			rc.Ops = append(rc.Ops, c)
		}
	}
	if len(rc.Ops) == 0 {
		return nil, errors.New("the runs have no stage and operation in common")
	}
	rc.Sentences = sentences(rc)
	rc.Resources = compareResources(base, cand)
	return rc, nil
}

// side gathers, over a side's runs, the per-interval percentile samples of
// an operation in a stage and its whole-stage percentile and mean (merged).
func side(runs []*results.Run, stage string, key metrics.Key, pct float64) (samples []float64, p, mean float64, ok bool) {
	var all *hdr.Histogram
	samples, p, all, ok = metricSamples(runs, stage, key, sampleMetric{Pct: pct})
	if all != nil {
		mean = all.Mean() / 1e3
	}
	return samples, p, mean, ok
}

// sentences says, per operation, how it changed across the stages, in the
// words of the check-in/check-out report: "check-out is 9% to 28% slower across
// users=5 to users=20".
func sentences(rc *RunComparison) []string {
	type agg struct {
		worse, better []OpComparison
		n, tooFew     int
	}
	var order []string
	byOp := map[string]*agg{}
	// A name in several scenarios is several operations: say which.
	scenarios := map[string]map[string]bool{}
	for _, c := range rc.Ops {
		if scenarios[c.Operation] == nil {
			scenarios[c.Operation] = map[string]bool{}
		}
		scenarios[c.Operation][c.Scenario] = true
	}
	for _, c := range rc.Ops {
		key := c.Operation
		if len(scenarios[c.Operation]) > 1 {
			key = c.Scenario + ": " + c.Operation
		}
		a := byOp[key]
		if a == nil {
			a = &agg{}
			byOp[key] = a
			order = append(order, key)
		}
		a.n++
		switch c.Test.Verdict {
		case analyze.Worse:
			a.worse = append(a.worse, c)
		case analyze.Better:
			a.better = append(a.better, c)
		case analyze.TooFewToSay:
			a.tooFew++
		}
	}
	var out []string
	for _, name := range order {
		a := byOp[name]
		say := func(cs []OpComparison, word string) {
			lo, hi := math.Inf(1), math.Inf(-1)
			var stages []string
			for _, c := range cs {
				ch := math.Abs(c.Change) * 100
				lo, hi = math.Min(lo, ch), math.Max(hi, ch)
				stages = append(stages, c.Stage)
			}
			amount := fmt.Sprintf("%.0f%%", lo)
			if math.Round(lo) != math.Round(hi) {
				amount = fmt.Sprintf("%.0f%% to %.0f%%", lo, hi)
			}
			where := ""
			if len(stages) > 1 {
				where = " across " + stages[0] + " to " + stages[len(stages)-1]
			} else if stages[0] != "all" {
				where = " at " + stages[0]
			}
			out = append(out, fmt.Sprintf("%s is %s %s at p%g%s (%d of %s).", name, amount, word, rc.Percentile, where, len(cs), plural(a.n, "stage")))
		}
		if len(a.worse) > 0 {
			say(a.worse, "slower")
		}
		if len(a.better) > 0 {
			say(a.better, "faster")
		}
		switch {
		case len(a.worse) > 0 || len(a.better) > 0:
		case a.tooFew == a.n:
			out = append(out, fmt.Sprintf("%s: too few samples to say at p%g (too few intervals a side in %s; longer stages or a shorter interval give more).", name, rc.Percentile, plural(a.n, "stage")))
		case a.tooFew > 0:
			out = append(out, fmt.Sprintf("%s: no significant change at p%g (%d of %s had too few samples to say).", name, rc.Percentile, a.tooFew, plural(a.n, "stage")))
		default:
			out = append(out, fmt.Sprintf("%s: no significant change at p%g.", name, rc.Percentile))
		}
	}
	return out
}

// plural says n things: "1 stage", "4 stages".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
