package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/tmpl"
)

// Stage is one combination of swept values. A plan without sweeps has one
// stage with no values.
type Stage struct {
	// Index counts stages from 1.
	Index int
	// Values holds the stage's value of every dimension, in dimension order.
	Values []Dimension // each with exactly one value
}

// Name is a readable label such as "vus=10 size=1000", or "all" without sweeps.
func (s Stage) Name() string {
	if len(s.Values) == 0 {
		return "all"
	}
	parts := make([]string, len(s.Values))
	for i, v := range s.Values {
		parts[i] = v.Name + "=" + v.Values[0]
	}
	return strings.Join(parts, " ")
}

// Stages expands the plan's dimensions into stages, the first dimension
// varying slowest.
func (p *Plan) Stages() []Stage {
	stages := []Stage{{}}
	for _, dim := range p.Dimensions {
		var next []Stage
		for _, st := range stages {
			for _, val := range dim.Values {
				vals := append(append([]Dimension(nil), st.Values...), Dimension{Name: dim.Name, Values: []string{val}})
				next = append(next, Stage{Values: vals})
			}
		}
		stages = next
	}
	for i := range stages {
		stages[i].Index = i + 1
	}
	return stages
}

// VarsFor returns every variable's value in a stage, with the plan's
// environment variables under env.NAME.
func (p *Plan) VarsFor(st Stage) map[string]string {
	m := make(map[string]string, len(p.Vars)+len(st.Values)+len(p.Env))
	for _, v := range p.Vars {
		if len(v.Values) > 0 {
			m[v.Name] = v.Values[0]
		}
	}
	for _, d := range st.Values {
		m[d.Name] = d.Values[0]
	}
	for k, v := range p.Env {
		m["env."+k] = v
	}
	return m
}

func (n *Num) raw(vars map[string]string) (string, error) {
	switch {
	case n.T != nil:
		return n.T.Expand(tmpl.LookupFunc(func(name string) (string, bool) {
			v, ok := vars[name]
			return v, ok
		}))
	case n.Dim != "":
		return vars[n.Dim], nil
	default:
		return n.Values[0], nil
	}
}

// Rate resolves an arrival rate, in iterations a second: a number above
// 0 that may have a fraction.
func (n *Num) Rate(vars map[string]string) (float64, error) {
	if n == nil {
		return 0, nil
	}
	s, err := n.raw(vars)
	if err != nil {
		return 0, err
	}
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("want a number of iterations per second, got %s", quoted(s))
	case f <= 0:
		return 0, fmt.Errorf("want more than 0 iterations per second, got %s", s)
	}
	return f, nil
}

// Int resolves a whole number for a stage's variables, least or more.
func (n *Num) Int(vars map[string]string, least int64) (int64, error) {
	if n == nil {
		return 0, nil
	}
	s, err := n.raw(vars)
	if err != nil {
		return 0, err
	}
	i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %s", quoted(s))
	}
	if i < least {
		return 0, fmt.Errorf("want at least %d, got %d", least, i)
	}
	return i, nil
}

// Dur resolves the duration for a stage's variables.
func (n *Num) Dur(vars map[string]string) (time.Duration, error) {
	if n == nil {
		return 0, nil
	}
	s, err := n.raw(vars)
	if err != nil {
		return 0, err
	}
	return parseDuration(strings.TrimSpace(s))
}

// Workload is a scenario's load resolved for one stage.
type Workload struct {
	VUs int
	// Iterations per VU and TotalIterations shared by all VUs; 0 when unset.
	Iterations, TotalIterations int64
	Duration, RampUp            time.Duration
	// Open models: Rate (per second) or RampRate from StartRate, with up to
	// MaxVUs VUs.
	Rate      float64
	StartRate float64
	RampRate  []*RampStep
	MaxVUs    int
	// Queue is true when iterations wait for a busy VU instead of dropping.
	Queue bool
	// RampVUs, a closed model: the VU count follows these segments.
	RampVUs []*RampStep
}

// Peak is the most VUs the load can run at once.
func (l Workload) Peak() int {
	n := max(l.VUs, l.MaxVUs)
	for _, r := range l.RampVUs {
		n = max(n, int(r.Target))
	}
	return n
}

// PeakRate is the highest arrival rate of an open model (iterations a
// second): its rate, or the highest of its ramp's start and targets; 0 for
// a closed model.
func (l Workload) PeakRate() float64 {
	r := l.Rate
	if len(l.RampRate) > 0 {
		r = max(r, l.StartRate)
	}
	for _, s := range l.RampRate {
		r = max(r, s.Target)
	}
	return r
}

// Open reports whether the load is an arrival-rate model.
func (l Workload) Open() bool { return l.Rate > 0 || len(l.RampRate) > 0 }

// Length is how long the load's schedule lasts, 0 if only counts bound it.
func (l Workload) Length() time.Duration {
	var ramp time.Duration
	for _, s := range l.RampRate {
		ramp += s.Duration.D
	}
	for _, s := range l.RampVUs {
		ramp += s.Duration.D
	}
	if ramp > 0 && (l.Duration == 0 || ramp < l.Duration) {
		return ramp
	}
	return l.Duration
}

// LoadFor resolves the scenario's load fields with a stage's variables.
func (sc *Scenario) LoadFor(vars map[string]string) (Workload, error) {
	var l Workload
	vus, err := sc.VUs.Int(vars, 0)
	if err != nil {
		return l, fmt.Errorf("scenario %s: vus: %w", sc.Name, err)
	}
	l.VUs = int(vus)
	if l.Iterations, err = sc.Iterations.Int(vars, 0); err != nil {
		return l, fmt.Errorf("scenario %s: iterations: %w", sc.Name, err)
	}
	if l.TotalIterations, err = sc.TotalIterations.Int(vars, 0); err != nil {
		return l, fmt.Errorf("scenario %s: total_iterations: %w", sc.Name, err)
	}
	if l.Duration, err = sc.Duration.Dur(vars); err != nil {
		return l, fmt.Errorf("scenario %s: duration: %w", sc.Name, err)
	}
	if l.RampUp, err = sc.RampUp.Dur(vars); err != nil {
		return l, fmt.Errorf("scenario %s: ramp_up: %w", sc.Name, err)
	}
	if l.Rate, err = sc.Rate.Rate(vars); err != nil {
		return l, fmt.Errorf("scenario %s: rate: %w", sc.Name, err)
	}
	maxVUs, err := sc.MaxVUs.Int(vars, 0)
	if err != nil {
		return l, fmt.Errorf("scenario %s: max_vus: %w", sc.Name, err)
	}
	l.MaxVUs = max(int(maxVUs), l.VUs)
	l.StartRate, l.RampRate, l.RampVUs = sc.StartRate, sc.RampRate, sc.RampVUs
	l.Queue = sc.WhenBusy == "queue"
	return l, nil
}

// String describes the load: "10 VUs x 150 iterations for 30s".
func (l Workload) String() string {
	s := fmt.Sprintf("%d VUs", l.VUs)
	switch {
	case l.Rate > 0:
		s = fmt.Sprintf("%g iterations/s (%d-%d VUs)", l.Rate, l.VUs, l.MaxVUs)
	case len(l.RampRate) > 0:
		s = fmt.Sprintf("rate %g", l.StartRate)
		for _, r := range l.RampRate {
			s += fmt.Sprintf(" -> %g/s in %v", r.Target, r.Duration.D)
		}
		s += fmt.Sprintf(" (%d-%d VUs)", l.VUs, l.MaxVUs)
	case len(l.RampVUs) > 0:
		s = fmt.Sprintf("VUs %d", l.VUs)
		for _, r := range l.RampVUs {
			s += fmt.Sprintf(" -> %g in %v", r.Target, r.Duration.D)
		}
	case l.TotalIterations > 0:
		s += fmt.Sprintf(", %d iterations shared", l.TotalIterations)
	case l.Iterations > 0:
		s += fmt.Sprintf(" x %d iterations", l.Iterations)
	}
	if l.Duration > 0 {
		s += " for " + l.Duration.String()
	}
	if l.RampUp > 0 {
		s += ", ramp-up " + l.RampUp.String()
	}
	return s
}

// StageLength is how long a stage's load is planned to last: the longest
// of its scenarios' lengths, or their sum when they run consecutively; 0
// when no scenario's length is known (bounded by iterations only). A
// scenario of unknown length beside others makes the stage at least as
// long as they are.
func (p *Plan) StageLength(st Stage) time.Duration {
	vars := p.VarsFor(st)
	var l time.Duration
	for _, sc := range p.Scenarios {
		w, err := sc.LoadFor(vars)
		if err != nil {
			continue
		}
		if p.Consecutive {
			l += w.Length()
		} else {
			l = max(l, w.Length())
		}
	}
	return l
}

// SizeInterval sets the plan's interval from its stages' lengths, as Load
// does when the plan gives none: the interval of its shortest stage of a
// known length (metrics.SizedInterval: at least 30 intervals in it, a
// round value from 100 ms to 10 s), or of a stage bounded by iterations
// only (1 s), whichever is shorter. A run has one interval, which its
// distributed workers, its merge and the comparisons of its stages share.
func (p *Plan) SizeInterval() {
	d, shortest := time.Duration(0), time.Duration(0)
	for _, st := range p.Stages() {
		l := p.StageLength(st)
		if si := metrics.SizedInterval(l); d == 0 || si < d {
			d = si
		}
		if l > 0 && (shortest == 0 || l < shortest) {
			shortest = l
		}
	}
	p.Interval.D, p.IntervalSized, p.IntervalFor = d, true, 0
	if metrics.SizedInterval(shortest) == d {
		p.IntervalFor = shortest
	}
}

// IntervalText says the run's interval and where it comes from, for the
// line that starts a run: "intervals of 200ms, sized to its 6s stage".
func (p *Plan) IntervalText() string {
	s := "intervals of " + p.Interval.D.String()
	switch {
	case !p.IntervalSized:
	case p.IntervalFor > 0 && len(p.Stages()) > 1:
		s += ", sized to its shortest stage (" + p.IntervalFor.String() + ")"
	case p.IntervalFor > 0:
		s += ", sized to its " + p.IntervalFor.String() + " stage"
	default:
		s += ", for a stage that ends after its iterations (of a length not known beforehand)"
	}
	return s
}
