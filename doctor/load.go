package doctor

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/tmpl"
)

// Load is what a plan asks of the generator's host, at its peak.
type Load struct {
	// Plan is the plan's name, File its file; both "" for the generic
	// limits (Generic).
	Plan, File string
	// VUs is the most VUs the plan runs at once: the largest stage's
	// (its scenarios' peaks added up, or the largest of them when they
	// run one after another), named by Stage.
	VUs   int
	Stage string
	// ConnRate is the most new connections a second that the open
	// models' arrivals need without keep-alive: at least one an
	// iteration (0 with keep-alive, where a VU keeps its connections);
	// RateStage is the stage of that peak.
	ConnRate  float64
	RateStage string
	// ClosedVUs is the most VUs of closed models without keep-alive at
	// once: each opens a connection a request, as fast as the service
	// answers.
	ClosedVUs int
	// Target is the host of the plan's target ("" when the plan names
	// none, or its value is only known to its VUs).
	Target string
}

// GenericVUs is the load the checks assume without a plan.
const GenericVUs = 1000

// ConnsPerVU and OwnFiles size the open files a load needs: a VU may
// hold a connection or more (one per destination, a WebSocket beside its
// HTTP), and perflab opens files of its own (the run directory, the
// history, the monitors', the buses' connections).
const (
	ConnsPerVU = 2
	OwnFiles   = 100
)

// Generic is the load assumed without a plan: GenericVUs VUs, keep-alive,
// the target anywhere.
func Generic() Load { return Load{VUs: GenericVUs} }

// Files is how many file descriptors the load needs at its peak.
func (l Load) Files() int { return l.VUs*ConnsPerVU + OwnFiles }

// Local reports whether the plan's target is on this host (a loopback
// address), and whether that is known.
func (l Load) Local() (local, known bool) {
	if l.Target == "" {
		return false, false
	}
	if l.Target == "localhost" || strings.HasSuffix(l.Target, ".localhost") {
		return true, true
	}
	ip := net.ParseIP(l.Target)
	return ip != nil && ip.IsLoopback(), true
}

// Describe says what the checks are held to.
func (l Load) Describe() string {
	if l.Plan == "" {
		return fmt.Sprintf("doctor: this host, against generic limits (%s VUs, keep-alive; give a plan to check against its load)", grouped(l.VUs))
	}
	s := fmt.Sprintf("doctor: this host, against plan %s: at most %s VUs at once", l.Plan, grouped(l.VUs))
	if l.Stage != "" && l.Stage != "all" {
		s += " (stage " + l.Stage + ")"
	}
	if l.ConnRate > 0 {
		s += fmt.Sprintf(", %s new connections/s (arrivals without keep-alive", grouped(int64(l.ConnRate+0.5)))
		if l.RateStage != "" && l.RateStage != "all" {
			s += ", stage " + l.RateStage
		}
		s += ")"
	}
	if l.ClosedVUs > 0 {
		s += fmt.Sprintf(", %s VUs opening a connection a request (keep-alive off)", grouped(l.ClosedVUs))
	}
	if l.Target != "" {
		s += ", target " + l.Target
	}
	return s
}

// FromPlan is the load of a validated plan at its peak: each stage's
// scenarios (Workload.Peak, Workload.PeakRate), added up where they run
// at the same time, the largest where they run one after another
// (consecutive); the largest stage's. A worker of a distributed run
// (seg) makes its share of each scenario's VUs and arrivals; the zero
// Segment is the whole plan.
func FromPlan(p *plan.Plan, seg plan.Segment) Load {
	l := Load{Plan: p.Name, File: p.File}
	keep := p.HTTP.KeepAlive == nil || *p.HTTP.KeepAlive
	stages := p.Stages()
	for _, st := range stages {
		vars := p.VarsFor(st)
		var vus, closed int
		var rate float64
		for _, sc := range p.Scenarios {
			w, err := sc.LoadFor(vars)
			if err != nil {
				continue // validated: not met
			}
			n, c, r := int(seg.Share(int64(w.Peak()))), 0, 0.0
			switch {
			case keep:
			case w.Open():
				r = w.PeakRate() / float64(max(seg.Count, 1))
			default:
				c = n
			}
			if p.Consecutive {
				vus, closed, rate = max(vus, n), max(closed, c), max(rate, r)
			} else {
				vus, closed, rate = vus+n, closed+c, rate+r
			}
		}
		if vus > l.VUs {
			l.VUs, l.Stage = vus, st.Name()
		}
		if rate > l.ConnRate {
			l.ConnRate, l.RateStage = rate, st.Name()
		}
		l.ClosedVUs = max(l.ClosedVUs, closed)
	}
	if p.Target != nil && p.Target.T != nil && len(stages) > 0 {
		vars := p.VarsFor(stages[0])
		s, err := p.Target.T.Expand(tmpl.LookupFunc(func(name string) (string, bool) {
			v, ok := vars[name]
			return v, ok
		}))
		if u, perr := url.Parse(s); err == nil && perr == nil {
			l.Target = u.Hostname()
		}
	}
	return l
}
