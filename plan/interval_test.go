package plan

import (
	"strings"
	"testing"
	"time"
)

// A plan without an interval gets one sized to its stages: at least 30 in
// the shortest stage of a known length, a round value from 100 ms to
// 10 s; 1 s for a stage bounded by iterations only; the plan's own
// interval always.
func TestIntervalSizedToStages(t *testing.T) {
	const flow = "flow: [{name: a, url: http://127.0.0.1:1/a}]"
	for _, c := range []struct {
		name, plan string
		load       LoadOverride
		env        map[string]string
		want       time.Duration
		sized      bool
		from       time.Duration
		says       string
	}{
		{name: "6 s", plan: "scenarios: [{vus: 4, duration: 6s, " + flow + "}]",
			want: 200 * time.Millisecond, sized: true, from: 6 * time.Second, says: "intervals of 200ms, sized to its 6s stage"},
		{name: "10 s", plan: "scenarios: [{vus: 4, duration: 10s, " + flow + "}]",
			want: 250 * time.Millisecond, sized: true, from: 10 * time.Second},
		{name: "shorter than 30 of 100 ms", plan: "scenarios: [{vus: 4, duration: 2500ms, " + flow + "}]",
			want: 100 * time.Millisecond, sized: true, from: 2500 * time.Millisecond},
		{name: "a minute", plan: "scenarios: [{vus: 4, duration: 1m, " + flow + "}]",
			want: 2 * time.Second, sized: true, from: time.Minute},
		{name: "3 minutes", plan: "scenarios: [{vus: 4, duration: 3m, " + flow + "}]",
			want: 5 * time.Second, sized: true, from: 3 * time.Minute},
		{name: "72 hours keep 10 s", plan: "scenarios: [{vus: 4, duration: 72h, " + flow + "}]",
			want: 10 * time.Second, sized: true, from: 72 * time.Hour},
		{name: "a ramp", plan: "scenarios: [{ramp_vus: [{target: 10, duration: 20s}, {target: 0, duration: 10s}], " + flow + "}]",
			want: time.Second, sized: true, from: 30 * time.Second},
		{name: "a ramp of the rate", plan: "scenarios: [{vus: 2, ramp_rate: [{target: 50, duration: 15s}], " + flow + "}]",
			want: 500 * time.Millisecond, sized: true, from: 15 * time.Second},
		{name: "iterations only", plan: "scenarios: [{vus: 4, iterations: 100, " + flow + "}]",
			want: time.Second, sized: true, says: "intervals of 1s, for a stage that ends after its iterations (of a length not known beforehand)"},
		{name: "the shortest stage of a sweep", plan: "vars: {d: [10s, 5m]}\nscenarios: [{vus: 4, duration: '${d}', " + flow + "}]",
			want: 250 * time.Millisecond, sized: true, from: 10 * time.Second, says: "intervals of 250ms, sized to its shortest stage (10s)"},
		{name: "an unknown length beside a long stage", plan: "vars: {n: [10, 20]}\nscenarios: [{vus: 4, iterations: '${n}', duration: 1h, " + flow + "}, {name: b, vus: 1, iterations: 5, " + flow + "}]",
			want: 10 * time.Second, sized: true, from: time.Hour},
		{name: "consecutive scenarios add up", plan: "consecutive: true\nscenarios: [{vus: 1, duration: 3s, " + flow + "}, {name: b, vus: 1, duration: 3s, " + flow + "}]",
			want: 200 * time.Millisecond, sized: true, from: 6 * time.Second},
		{name: "together, the longest", plan: "scenarios: [{vus: 1, duration: 3s, " + flow + "}, {name: b, vus: 1, duration: 6s, " + flow + "}]",
			want: 200 * time.Millisecond, sized: true, from: 6 * time.Second},
		{name: "--duration", plan: "scenarios: [{vus: 4, duration: 1h, " + flow + "}]", load: LoadOverride{Values: map[string]string{"duration": "6s"}},
			want: 200 * time.Millisecond, sized: true, from: 6 * time.Second},
		{name: "a length from the environment", plan: "scenarios: [{vus: 4, duration: '${env.RUN_FOR}', " + flow + "}]", env: map[string]string{"RUN_FOR": "1m"},
			want: 2 * time.Second, sized: true, from: time.Minute},
		{name: "the plan's own", plan: "interval: 1s\nscenarios: [{vus: 4, duration: 6s, " + flow + "}]",
			want: time.Second, says: "intervals of 1s"},
		{name: "the plan's own, long", plan: "interval: 30s\nscenarios: [{vus: 4, duration: 6s, " + flow + "}]",
			want: 30 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
			p, err := Parse([]byte("name: x\n"+c.plan+"\n"), "x.yaml", Options{LookupEnv: env, Load: c.load})
			if err != nil {
				t.Fatal(err)
			}
			if p.Interval.D != c.want || p.IntervalSized != c.sized || p.IntervalFor != c.from {
				t.Errorf("interval %v (sized %v, to %v), want %v (sized %v, to %v)", p.Interval.D, p.IntervalSized, p.IntervalFor, c.want, c.sized, c.from)
			}
			if c.says != "" && p.IntervalText() != c.says {
				t.Errorf("says %q, want %q", p.IntervalText(), c.says)
			}
		})
	}
	_, err := Parse([]byte("name: x\ninterval: 50ms\nscenarios: [{vus: 1, duration: 1s, flow: [{url: http://127.0.0.1:1/}]}]\n"), "x.yaml", Options{LookupEnv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "x.yaml:2:11: interval 50ms is too short: use 100ms or more") {
		t.Errorf("a 50 ms interval: %v", err)
	}
}
