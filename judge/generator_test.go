package judge

import (
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// A generator that fell behind is named, with where and why, in the
// stage's generator check and the warnings; the open model's start delay
// is exact.
func TestGeneratorThatFellBehindIsNamed(t *testing.T) {
	s := results.Summarize(runtest.OpenRun(), runtest.Host)
	s.Resources = runtest.BusyGenerator("rate=100")
	Generator(s, 1)
	g := s.Stages[0].Generator
	if g == nil || g.KeptUp || len(g.Problems) != 3 {
		t.Fatalf("generator check %+v: want start_delay, dropped and cpu", g)
	}
	want := map[string]float64{"start_delay": 1.98, "dropped": 3, "cpu": 0.95}
	for _, p := range g.Problems {
		if v, ok := want[p.Kind]; !ok || v != p.Value {
			t.Errorf("problem %s value %v, want %v", p.Kind, p.Value, v)
		}
		if !strings.Contains(p.Sentence, "stage 1 (rate=100)") {
			t.Errorf("%q does not say where", p.Sentence)
		}
	}
	if !strings.Contains(g.Problems[0].Sentence, "5 iterations waited for a free VU") {
		t.Errorf("the start delay's cause is not named: %s", g.Problems[0].Sentence)
	}
	op := s.Stages[0].Operations[1]
	if d := op.StartDelay; d == nil || d.Min != 0.02 || d.Max != 2 || d.Mean != 1.01 {
		t.Errorf("start delay %+v: want min 0.02, mean 1.01, max 2 ms", d)
	}

	// The same stage without the problems kept up.
	s = results.Summarize(runtest.OpenRun(), runtest.Host)
	for i := range s.Stages[0].Operations {
		op := &s.Stages[0].Operations[i]
		op.StartDelay.P99, op.Dropped = 0.05, 0
	}
	Generator(s, 1)
	if g := s.Stages[0].Generator; !g.KeptUp || len(g.Problems) != 0 || len(s.Warnings) != 0 {
		t.Errorf("a generator that kept up: %+v, warnings %q", g, s.Warnings)
	}
}

// A limit of the generator's host that a stage's load could pass, found
// before the stage, is a problem of its generator check and a warning,
// with its figures.
func TestHostLimitsAreProblems(t *testing.T) {
	run := runtest.OpenRun()
	run.Stages[0].Limits = []metrics.HostLimit{{Kind: metrics.LimitOpenFiles, Need: 50000, Limit: 19988, Sentence: "stage 1 (rate=100): 50000 sockets"}}
	s := results.Summarize(run, runtest.Host)
	if l := s.Stages[0].Limits; len(l) != 1 || l[0].Need != 50000 {
		t.Fatalf("the stage's limits in the summary: %+v", l)
	}
	Generator(s, 0)
	var found *results.GeneratorProblem
	for i, p := range s.Stages[0].Generator.Problems {
		if p.Kind == metrics.LimitOpenFiles {
			found = &s.Stages[0].Generator.Problems[i]
		}
	}
	if found == nil || found.Value != 50000 || found.Limit != 19988 || s.Stages[0].Generator.KeptUp {
		t.Fatalf("generator check %+v: want an open_files problem, 50000 over 19988", s.Stages[0].Generator)
	}
	if !slices.Contains(s.Warnings, "stage 1 (rate=100): 50000 sockets") {
		t.Errorf("warnings %q do not say it", s.Warnings)
	}
}

// Issue 37: a 3 MiB response's extraction took 64 s that no figure had,
// the step's latency 164 ms. What the VUs spent processing responses
// after they arrived is in the summary; past a share of the time the
// responses took, it is a problem of the generator check and a warning,
// with its figures.
func TestProcessingIsAProblemPastItsShare(t *testing.T) {
	for _, c := range []struct {
		p    metrics.Processing
		want string // the problem's sentence, "" when there is none
	}{
		{metrics.Processing{Responses: 1, Seconds: 64, LatencyS: 0.164},
			"stage 1 (rate=100): extractions and checks took 1m4s on 1 response after they arrived, 39024% of the 164ms the responses themselves took (limit 20%): no latency includes it"},
		{metrics.Processing{Responses: 1000, Seconds: 0.5, LatencyS: 2}, // 25%
			"extractions and checks took 500ms on 1000 responses after they arrived, 25% of the 2s"},
		{metrics.Processing{Responses: 1000, Seconds: 0.3, LatencyS: 2}, ""},   // 15%
		{metrics.Processing{Responses: 10, Seconds: 0.09, LatencyS: 0.01}, ""}, // 90 ms in all
	} {
		run := runtest.OpenRun()
		run.Stages[0].Processing = &c.p
		s := results.Summarize(run, runtest.Host)
		if p := s.Stages[0].Processing; p == nil || *p != c.p {
			t.Fatalf("the stage's processing in the summary: %+v", p)
		}
		Generator(s, 0)
		var found *results.GeneratorProblem
		for i, p := range s.Stages[0].Generator.Problems {
			if p.Kind == "processing" {
				found = &s.Stages[0].Generator.Problems[i]
			}
		}
		switch {
		case c.want == "" && found != nil:
			t.Errorf("%+v: a problem %q", c.p, found.Sentence)
		case c.want != "" && (found == nil || !strings.Contains(found.Sentence, c.want) || found.Limit != 0.2 ||
			found.Value != c.p.Seconds/c.p.LatencyS || !slices.Contains(s.Warnings, found.Sentence)):
			t.Errorf("%+v: problem %+v, warnings %q; want %q", c.p, found, s.Warnings, c.want)
		}
	}
}
