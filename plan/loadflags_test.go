package plan

import (
	"strings"
	"testing"
)

// The load given on the command line, scenario model by scenario model:
// the load that then runs (as perflab validate prints it), or the refusal.
func TestLoadOverride(t *testing.T) {
	const head = "name: lo\ntarget: http://127.0.0.1:1\nscenarios:\n"
	const flow = "    flow: [{name: a, url: /a}]\n"
	closed := head + "  - name: s\n    vus: 5\n    iterations: 3\n" + flow
	open := head + "  - name: s\n    rate: 100\n    vus: 4\n    max_vus: 20\n    duration: 30s\n    when_busy: queue\n" + flow
	rampVUs := head + "  - name: s\n    ramp_vus: [{target: 10, duration: 1m}, {target: 0, duration: 10s}]\n" + flow
	rampRate := head + "  - name: s\n    start_rate: 1\n    ramp_rate: [{target: 50, duration: 1m}]\n    vus: 10\n" + flow
	two := head + "  - name: browse\n    vus: 1\n    iterations: 1\n" + flow + "  - name: buy\n    vus: 1\n    iterations: 1\n    flow: [{name: b, url: /b}]\n"
	for _, c := range []struct {
		name, plan string
		scenarios  []string
		set        map[string]string
		want       string // the load of the scenarios, or the error
	}{
		{"vus keeps the iterations", closed, nil, map[string]string{"vus": "50"}, "s: 50 VUs x 3 iterations"},
		{"duration replaces the iterations", closed, nil, map[string]string{"vus": "50", "duration": "5m"}, "s: 50 VUs for 5m0s"},
		{"iterations per VU", closed, nil, map[string]string{"iterations": "7"}, "s: 5 VUs x 7 iterations"},
		{"total iterations", closed, nil, map[string]string{"total_iterations": "100"}, "s: 5 VUs, 100 iterations shared"},
		{"iterations capped by a duration", closed, nil, map[string]string{"iterations": "7", "duration": "1m"}, "s: 5 VUs x 7 iterations for 1m0s"},
		{"a sweep", closed, nil, map[string]string{"vus": "[1, 2, 4]"}, "s: 1 VUs x 3 iterations | s: 2 VUs x 3 iterations | s: 4 VUs x 3 iterations"},
		{"rate on a closed model", closed, nil, map[string]string{"rate": "20", "duration": "10s", "max_vus": "8"}, "s: 20 iterations/s (5-8 VUs) for 10s"},
		{"rate needs a duration", closed, nil, map[string]string{"rate": "20"}, "--rate: scenario s: it has no duration to run the rate for: give --duration too"},
		{"rate and iterations", closed, nil, map[string]string{"rate": "20", "iterations": "3", "duration": "1s"}, "--rate: scenario s: an arrival rate runs for a duration, not a count of iterations"},
		{"max-vus without a rate", closed, nil, map[string]string{"max_vus": "20"}, "--max-vus: scenario s: --max-vus is the most VUs an arrival rate may use: give it with --rate"},
		{"both iteration counts", closed, nil, map[string]string{"iterations": "1", "total_iterations": "2"}, "--total-iterations: scenario s: give --iterations (each VU's) or --total-iterations (shared by the VUs), not both"},
		{"vus 0", closed, nil, map[string]string{"vus": "0"}, "--vus: scenario s: vus: want at least 1, got 0"},
		{"vus not a number", closed, nil, map[string]string{"vus": "many"}, `--vus: scenario s: vus: want an integer, got "many"`},
		{"duration not a duration", closed, nil, map[string]string{"duration": "5"}, "--duration: scenario s: duration: "},
		{"rate too fast", closed, nil, map[string]string{"rate": "1e12", "duration": "1s"}, "--rate: scenario s: rate: 1e+12 iterations a second is more than a load generator can start (at most 10000000"},

		{"rate replaced", open, nil, map[string]string{"rate": "300"}, "s: 300 iterations/s (4-20 VUs) for 30s"},
		{"vus of an open model are started beforehand", open, nil, map[string]string{"vus": "10", "duration": "1m"}, "s: 100 iterations/s (10-20 VUs) for 1m0s"},
		{"iterations make it closed", open, nil, map[string]string{"vus": "3", "iterations": "2"}, "s: 3 VUs x 2 iterations"},
		{"iterations on an open model need vus", open, nil, map[string]string{"iterations": "2"}, "--iterations: scenario s: it starts iterations at a rate: give --vus too"},

		{"vus replace a ramp of VUs", rampVUs, nil, map[string]string{"vus": "3", "duration": "10s"}, "s: 3 VUs for 10s"},
		{"a bound alone does not cut a ramp of VUs", rampVUs, nil, map[string]string{"duration": "10s"}, "--duration: scenario s: it ramps its VUs (ramp_vus): give --vus too"},
		{"vus alone leave a ramp of VUs unbounded", rampVUs, nil, map[string]string{"vus": "3"}, "--vus: scenario s: its ramp_vus, which --vus replaces, was what ended it: give --duration or --iterations too"},
		{"a ramp of VUs made a rate", rampVUs, nil, map[string]string{"rate": "5", "vus": "2", "duration": "3s"}, "s: 5 iterations/s (2-2 VUs) for 3s"},
		{"a ramp of VUs made a rate needs vus", rampVUs, nil, map[string]string{"rate": "5", "duration": "3s"}, "--rate: scenario s: it ramps its VUs (ramp_vus): give --vus too"},
		{"a rate replaces a ramp of rates", rampRate, nil, map[string]string{"rate": "5", "duration": "3s"}, "s: 5 iterations/s (10-10 VUs) for 3s"},
		{"a duration does not cut a ramp of rates", rampRate, nil, map[string]string{"duration": "3s"}, "--duration: scenario s: its rate ramps (ramp_rate)"},

		{"several scenarios", two, nil, map[string]string{"vus": "2"}, "--scenario: the plan has 2 scenarios (browse, buy): name the one whose load --vus gives with --scenario NAME"},
		{"one named", two, []string{"buy"}, map[string]string{"vus": "2"}, "browse: 1 VUs x 1 iterations; buy: 2 VUs x 1 iterations"},
		{"both named", two, []string{"buy", "browse"}, map[string]string{"iterations": "4"}, "browse: 1 VUs x 4 iterations; buy: 1 VUs x 4 iterations"},
		{"no such scenario", two, []string{"bye"}, map[string]string{"vus": "2"}, `--scenario: the plan has no scenario "bye" (its scenarios: browse, buy) (did you mean "buy"?)`},
		{"a scenario and no load", two, []string{"buy"}, nil, "--scenario: --scenario names the scenarios whose load the load flags change"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.plan), "lo.yaml", Options{LookupEnv: noEnv, Load: LoadOverride{Scenarios: c.scenarios, Values: c.set}})
			if err != nil {
				if !strings.HasPrefix(err.Error(), c.want) {
					t.Fatalf("error\n%v\nwant\n%s", err, c.want)
				}
				return
			}
			if got := loads(t, p); got != c.want {
				t.Fatalf("load %q, want %q", got, c.want)
			}
			// The source is the plan that ran: read again, it runs the same load.
			again, err := Parse(p.Source, "plan.yaml", Options{LookupEnv: noEnv})
			if err != nil {
				t.Fatalf("the plan with the load given does not load again: %v\n%s", err, p.Source)
			}
			if got := loads(t, again); got != c.want {
				t.Fatalf("read again, the load is %q, want %q\n%s", got, c.want, p.Source)
			}
		})
	}
}

// loads describes the plan's load, stage by stage (|) and scenario by scenario (;).
func loads(t *testing.T, p *Plan) string {
	var stages []string
	for _, st := range p.Stages() {
		var parts []string
		for _, sc := range p.Scenarios {
			l, err := sc.LoadFor(p.VarsFor(st))
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, sc.Name+": "+l.String())
		}
		stages = append(stages, strings.Join(parts, "; "))
	}
	return strings.Join(stages, " | ")
}

// The plan with the load given keeps the rest of the plan as written, its
// comments too, and says where its load came from.
func TestLoadOverrideSource(t *testing.T) {
	src := "# a plan\nname: lo\ntarget: http://127.0.0.1:1\nscenarios:\n  - name: s   # the shop\n    vus: 5     # five users\n    iterations: 3\n    flow:\n      - {name: a, url: /a}  # the home page\n"
	p, err := Parse([]byte(src), "lo.yaml", Options{LookupEnv: noEnv, Load: LoadOverride{Values: map[string]string{"vus": "50", "duration": "5m"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "# the load of scenario s given on the command line: --vus 50 --duration 5m\n# a plan\nname: lo\ntarget: http://127.0.0.1:1\nscenarios:\n  - name: s # the shop\n    vus: 50 # --vus\n    duration: 5m # --duration\n    flow:\n      - {name: a, url: /a} # the home page\n"
	if string(p.Source) != want {
		t.Errorf("source\n%s\nwant\n%s", p.Source, want)
	}
	// Without load flags the source is the file's, byte for byte.
	p, err = Parse([]byte(src), "lo.yaml", Options{LookupEnv: noEnv})
	if err != nil || string(p.Source) != src {
		t.Errorf("source %q, %v", p.Source, err)
	}
}
