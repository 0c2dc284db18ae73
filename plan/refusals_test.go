package plan

import "testing"

// refused is the error of a plan that should be refused: one line, or
// what else it got.
func refused(name, src string) string {
	_, err := Parse([]byte(src), name, Options{LookupEnv: noEnv})
	if err == nil {
		return "the plan was accepted"
	}
	return err.Error()
}

// A number out of range says the range the field accepts: the message of
// the value just below the boundary and of one far below it is the same
// rule (vus -3 said "want a number >= 0", but 0 is refused too).
func TestNumbersSayWhatTheyAccept(t *testing.T) {
	scenario := func(fields string) string {
		return "target: http://127.0.0.1:1\nscenarios:\n  - {name: s, " + fields + ", flow: [{name: a, url: /}]}\n"
	}
	for _, tt := range []struct{ src, want string }{
		{scenario("vus: -3, iterations: 1"), "n.yaml:3:20: scenario s: vus: want at least 1, got -3"},
		{scenario("vus: 0, iterations: 1"), "n.yaml:3:20: scenario s: vus: want at least 1, got 0"},
		{scenario("vus: 1, iterations: -1"), "n.yaml:3:35: scenario s: iterations: want at least 1, got -1"},
		{scenario("vus: 1, iterations: 0"), "n.yaml:3:35: scenario s: iterations: want at least 1, got 0"},
		{scenario("vus: 1, total_iterations: -1"), "n.yaml:3:41: scenario s: total_iterations: want at least 1, got -1"},
		{scenario("vus: 1, total_iterations: 0"), "n.yaml:3:41: scenario s: total_iterations: want at least 1, got 0"},
		{scenario("vus: 1, rate: -1, duration: 1s"), "n.yaml:3:29: scenario s: rate: want more than 0 iterations per second, got -1"},
		{scenario("vus: 1, rate: 0, duration: 1s"), "n.yaml:3:29: scenario s: rate: want more than 0 iterations per second, got 0"},
		{scenario("vus: 1, rate: 1, duration: 1s, max_vus: -1"), "n.yaml:3:55: scenario s: max_vus: want at least 0, got -1"},
		{"target: http://127.0.0.1:1\nsetup: [{name: r, url: /, repeat: {count: -1}}]\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, url: /}]}\n",
			"n.yaml:2:43: step r: repeat count: want at least 0, got -1"},
		{scenario("ramp_vus: [{target: -2, duration: 1s}]"), "n.yaml:3:26: scenario s: ramp target -2: want a number, 0 or more"},
		{scenario("ramp_vus: [{target: 2000000, duration: 1s}]"), "n.yaml:3:26: scenario s: ramp target 2e+06: more than 1000000 VUs"},
		{scenario("ramp_rate: [{target: -2, duration: 1s}], vus: 1"), "n.yaml:3:27: scenario s: ramp target -2: want a number, 0 or more"},
		{"target: http://127.0.0.1:1\ngrpc: {reflection: true, connections: 0}\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, url: /}]}\n",
			"n.yaml:2:39: grpc.connections 0: want 1 to 1000"},
		{"target: http://127.0.0.1:1\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, url: /, loop: {count: 3, max: -1}}]}\n",
			"n.yaml:3:85: step a: loop: max -1: want a number of passes, 0 or more (0: no bound)"},
	} {
		if got := refused("n.yaml", tt.src); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	// The boundaries themselves load.
	for _, fields := range []string{"vus: 1, iterations: 1", "vus: 1, total_iterations: 1", "vus: 1, rate: 0.5, duration: 1s, max_vus: 0"} {
		if _, err := Parse([]byte(scenario(fields)), "n.yaml", Options{LookupEnv: noEnv}); err != nil {
			t.Errorf("%s: %v", fields, err)
		}
	}
}
