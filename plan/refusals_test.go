package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refusal is a plan and the one error it should be refused with.
type refusal struct{ src, want string }

// checkRefused checks that each plan (named n.yaml) is refused with its
// error, and that each of loads is accepted.
func checkRefused(t *testing.T, refusals []refusal, loads ...string) {
	t.Helper()
	for _, r := range refusals {
		got := "the plan was accepted"
		if _, err := Parse([]byte(r.src), "n.yaml", Options{LookupEnv: noEnv}); err != nil {
			got = err.Error()
		}
		if got != r.want {
			t.Errorf("got  %s\nwant %s", got, r.want)
		}
	}
	for _, src := range loads {
		if _, err := Parse([]byte(src), "n.yaml", Options{LookupEnv: noEnv}); err != nil {
			t.Errorf("%v\n%s", err, src)
		}
	}
}

// A number out of range says the range the field accepts: the message of
// the value just below the boundary and of one far below it is the same
// rule (vus -3 said "want a number >= 0", but 0 is refused too).
func TestNumbersSayWhatTheyAccept(t *testing.T) {
	scenario := func(fields string) string {
		return "target: http://127.0.0.1:1\nscenarios:\n  - {name: s, " + fields + ", flow: [{name: a, url: /}]}\n"
	}
	checkRefused(t, []refusal{
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
	},
		// The boundaries themselves load.
		scenario("vus: 1, iterations: 1"), scenario("vus: 1, total_iterations: 1"), scenario("vus: 1, rate: 0.5, duration: 1s, max_vus: 0"))
}

// A timeout written as 0 is refused at its place: unset, a timeout has a
// default (http.timeout's 30s), but 0 written out was taken for that
// default, where its writer may have meant no timeout at all, which
// perflab has not (a server that never answers would hold a VU for
// ever). The interval likewise: 0 is not one, and leaving it out sizes it.
func TestZeroDurationsRefused(t *testing.T) {
	plan := func(top, step string) string {
		return "target: http://127.0.0.1:1\n" + top + "scenarios:\n  - name: s\n    vus: 1\n    iterations: 1\n    flow:\n      - {name: a, url: /" + step + "}\n"
	}
	checkRefused(t, []refusal{
		{plan("http: {timeout: 0s}\n", ""), "n.yaml:2:17: http.timeout 0s: want a duration above 0, such as 30s (leave it out for the default, 30s; there is no unbounded timeout)"},
		{plan("http: {connect_timeout: 0}\n", ""), "n.yaml:2:25: http.connect_timeout 0s: want a duration above 0, such as 30s (leave it out for the default, http.timeout; there is no unbounded timeout)"},
		{plan("", ", timeout: 0ms"), "n.yaml:7:36: step a: timeout 0s: want a duration above 0, such as 30s (leave it out for the default, http.timeout; there is no unbounded timeout)"},
		{plan("interval: 0s\n", ""), "n.yaml:2:11: interval 0s is too short: use 100ms or more (leave it out to size it to the run)"},
		{plan("grpc: {reflection: true, timeout: 0s}\n", ""), "n.yaml:2:35: grpc.timeout 0s: want a duration above 0, such as 30s (leave it out for the default, http.timeout; there is no unbounded timeout)"},
		{"buses: [{name: b, url: 'mem://x'}]\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, await: {bus: b, topic: t, match: key, equals: x, timeout: 0s}}]}\n",
			"n.yaml:3:113: step a: await timeout 0s: want a duration above 0, such as 30s (leave it out for the default, 30s; there is no unbounded timeout)"},
		{"scenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, ws: {url: 'ws://127.0.0.1:1/', send: x, await: {timeout: 0s}}}]}\n",
			"n.yaml:2:112: step a: ws await timeout 0s: want a duration above 0, such as 30s (leave it out for the default, 30s; there is no unbounded timeout)"},
	},
		// Given, a timeout above 0 loads.
		plan("http: {timeout: 1ms, connect_timeout: 1ms}\ninterval: 100ms\n", ", timeout: 1ns"))
}

// A threshold of a share beyond 0% to 100%, or below 0, could never
// judge anything: errors < 200% always holds, p95 < 0ms never does. Both
// are refused, saying why; the shares' bounds themselves are thresholds.
func TestThresholdsThatCannotJudge(t *testing.T) {
	for src, want := range map[string]string{
		"errors < 200%":           `threshold "errors < 200%": errors are a share of the operations, 0% to 100%: 200% is beyond it`,
		"errors < 1.5":            `threshold "errors < 1.5": errors are a share of the operations, 0% to 100%: 1.5 is 150%, beyond it`,
		"checkout: errors > 101%": `threshold "checkout: errors > 101%": errors are a share of the operations, 0% to 100%: 101% is beyond it`,
		"dropped < 100.5%":        `threshold "dropped < 100.5%": dropped is a share of the iterations due, 0% to 100%: 100.5% is beyond it`,
		"p95 < 0ms":               `threshold "p95 < 0ms": nothing is below 0: it could never hold`,
		"errors < 0%":             `threshold "errors < 0%": nothing is below 0: it could never hold (errors == 0 says none)`,
		"total: rps < 0":          `threshold "total: rps < 0": nothing is below 0: it could never hold`,
		"dropped < 0":             `threshold "dropped < 0": nothing is below 0: it could never hold (dropped == 0 says none)`,
	} {
		if _, err := ParseThreshold(src); err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", src, err, want)
		}
	}
	for _, src := range []string{"errors <= 100%", "errors < 1", "errors == 0", "dropped <= 100%", "p95 <= 0ms", "errors > 0%", "rps > 0"} {
		if _, err := ParseThreshold(src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// A variable perflab gives its value (${vu}, ${iteration} ...) cannot be
// set, extracted into or named by a loop: the built-in value wins, so
// the assignment would be accepted and never read.
func TestBuiltinsAreReadOnly(t *testing.T) {
	flow := func(steps string) string {
		return "target: http://127.0.0.1:1\nscenarios:\n  - name: s\n    vus: 1\n    iterations: 1\n    flow:\n" + steps
	}
	checkRefused(t, []refusal{
		{flow("      - set: {vu: '5'}\n"), "n.yaml:7:15: step set: set vu: ${vu} is built in (the VU's number) and read-only: a value set to it would never be read; choose another name"},
		{flow("      - {name: e, url: /a, extract: {iteration: $.n}}\n"), "n.yaml:7:38: extract iteration: ${iteration} is built in (the iteration's number) and read-only: a value set to it would never be read; choose another name"},
		{flow("      - {name: l, url: /b, loop: {count: 2, index: run_id}}\n"), "n.yaml:7:34: step l: loop: index run_id: ${run_id} is built in (the run's id) and read-only: a value set to it would never be read; choose another name"},
		{flow("      - {name: l, url: /b, loop: {over: '[1]', as: uuid}}\n"), "n.yaml:7:34: step l: loop: as uuid: ${uuid} is built in (a new UUID each time it is read) and read-only: a value set to it would never be read; choose another name"},
		{flow("      - {name: a, url: /}\n") + "setup:\n  - set: {stage: '\"x\"', timestamp_ms: '1'}\n",
			"n.yaml:9:11: step set: set stage: ${stage} is built in (the stage's name) and read-only: a value set to it would never be read; choose another name\n" +
				"n.yaml:9:25: step set: set timestamp_ms: ${timestamp_ms} is built in (the time in milliseconds) and read-only: a value set to it would never be read; choose another name"},
		{flow("      - {name: a, url: /}\n") + "setup:\n  - {name: r, url: /, repeat: {count: 2}, extract: {index: $.i}}\n",
			"n.yaml:9:53: extract index: ${index} is built in (a repeat's pass, from 0) and read-only: a value set to it would never be read; choose another name"},
		{"data: {d: {values: [a]}}\n" + flow("      - {name: a, url: /}\n") + "teardown:\n  - {name: r, url: /, repeat: {for_each: d}, extract: {item: $.i}}\n",
			"n.yaml:10:56: extract item: ${item} is built in (a repeat's item) and read-only: a value set to it would never be read; choose another name"},
	},
		// index and item are built in a setup or teardown repeat only: a
		// flow's loop may name its pass index.
		flow("      - {name: l, url: /b, loop: {over: '[1]', as: item, index: index}}\n      - set: {scenario_name: scenario}\n"))
}

// A file that is not YAML, included by mistake (or given as the plan), is
// not echoed whole into the error: its place and the start of its first
// line, with its length.
func TestNotYAMLQuotedShort(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte(strings.Repeat("line one of the release notes\n", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `notes.txt:1:1: want a mapping, got the string "line one of the release notes line one of the release notes "... (14999 bytes)`
	_, err := Parse([]byte("include: [notes.txt]\n"+tinyPlan), filepath.Join(dir, "plan.yaml"), Options{})
	if err == nil || err.Error() != filepath.Join(dir, want) {
		t.Errorf("included: got %v\nwant %s", err, filepath.Join(dir, want))
	}
	if _, err := Load(notes, Options{}); err == nil || err.Error() != filepath.Join(dir, want) {
		t.Errorf("as the plan: got %v", err)
	}
	// A value of a field is cut alike, with its place.
	long := strings.Repeat("x", 10_000)
	checkRefused(t, []refusal{
		{tinyPlan + "http: {timeout: " + long + "}\n", `n.yaml:4:17: timeout: want a duration such as 500ms, 10s or 1h30m, got "` + long[:60] + `"... (10000 bytes)`},
		{tinyPlan + "http:\n  body_limit: |\n    4 MiB\n    " + long + "\n", `n.yaml:5:15: body_limit: want a size such as 4MiB, 512KB or 1000 (bytes), got "4 MiB"... (10007 bytes)`},
	})
}

// A binary file, included by mistake, is refused at the place of its
// first character YAML does not take, where the message had no place.
func TestBinaryIncludePlaced(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"ls": "\x7fELF\x02\x01\x01\x00", "latin1.txt": "fragments:\n  caf\xe9: []\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"ls":         "ls:1:1: YAML: control characters are not allowed (U+007F)",
		"latin1.txt": "latin1.txt:2:6: YAML: invalid trailing UTF-8 octet (the byte 0xe9)",
	} {
		_, err := Parse([]byte("include: ["+name+"]\n"+tinyPlan), filepath.Join(dir, "plan.yaml"), Options{})
		if err == nil || err.Error() != filepath.Join(dir, want) {
			t.Errorf("got %v\nwant %s", err, filepath.Join(dir, want))
		}
	}
}

// A while loop without max is a warning, not an error: should its
// condition never turn false, it never ends (in setup, teardown or a
// scenario bounded by iterations: the run hangs), or keeps its VU until
// the scenario's duration ends. max: N bounds it; max: 0 says, on
// purpose, that it has no bound.
func TestWhileWithoutMaxWarned(t *testing.T) {
	src := `target: http://127.0.0.1:1
scenarios:
  - name: counted
    vus: 1
    iterations: 1
    flow:
      - name: poll
        loop: {while: 'json("$.state") != "done"'}
        steps: [{name: state, url: /state}]
      - {name: bounded, url: /b, loop: {while: "true", max: 20}}
      - {name: unbounded on purpose, url: /c, loop: {while: "true", max: 0}}
  - name: timed
    vus: 1
    duration: 1m
    flow:
      - loop: {while: "true"}
        steps: [{name: ping, url: /ping}]
setup:
  - {name: wait, url: /ready, loop: {while: "!response.ok"}}
teardown:
  - {name: drain, url: /drain, loop: {while: "response.ok"}}
`
	p, err := Parse([]byte(src), "w.yaml", Options{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"w.yaml:8:15: warning: step poll: loop: while has no max: should its condition never turn false, the VU stays in the loop and the run never ends (its scenario is bounded by iterations); give max: N to bound the passes (max: 0 says there is no bound)",
		"w.yaml:16:15: warning: scenario timed: loop: while has no max: should its condition never turn false, the VU stays in the loop until the scenario's duration ends, and that iteration is not counted; give max: N to bound the passes (max: 0 says there is no bound)",
		"w.yaml:19:37: warning: step wait: loop: while has no max: should its condition never turn false, setup never ends, nor the run (setup and teardown have no duration); give max: N to bound the passes (max: 0 says there is no bound)",
		"w.yaml:21:38: warning: step drain: loop: while has no max: should its condition never turn false, teardown never ends, nor the run (setup and teardown have no duration); give max: N to bound the passes (max: 0 says there is no bound)",
	}
	var got []string
	for _, w := range p.Warnings {
		got = append(got, w.Warn())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A threshold may name a step wherever it is in a flow: in a choice's
// branch, an else, a block or a loop's steps ("count > 0" of a branch is
// how a plan asks that it be taken); one that names no step is refused.
func TestThresholdNamesStepsInBranches(t *testing.T) {
	flow := `target: http://127.0.0.1:1
scenarios:
  - name: s
    vus: 1
    iterations: 1
    flow:
      - choose:
          - {steps: [{name: left, url: /l}]}
          - {steps: [{name: right, url: /r}]}
      - if: "false"
        steps: [{name: then, url: /t}]
        else: [{name: otherwise, url: /o}]
      - loop: {count: 2}
        steps: [{name: again, url: /a}]
`
	checkRefused(t, []refusal{
		{"thresholds: [\"rigth: count > 0\"]\n" + flow, `n.yaml:1:14: threshold "rigth: count > 0": no step, transaction or scenario is named "rigth" (did you mean "right"?)`},
	}, "thresholds: [\"left: count > 0\", \"right: p95 < 1s\", \"then: count == 0\", \"otherwise: errors < 1%\", \"again: count > 0\"]\n"+flow)
}

// count is how many times an operation ran: a whole number without a
// unit, counted (no (ko)), comparable with ==, and aborting a run only
// with < or <= (it only grows as a stage goes). Each reads back from its
// canonical form.
func TestCountThreshold(t *testing.T) {
	for src, want := range map[string]string{
		"count > 2.5":        `threshold "count > 2.5": a count of operations is whole`,
		"count > 5ms":        `threshold "count > 5ms": count is how many times an operation ran, such as count > 0`,
		"count(ko) > 0":      `threshold "count(ko) > 0": count is counted, not timed: (ok), (ko) and (all) are for latencies (p50 ... p999, mean, min, max), such as "p95(ko) < 2s"`,
		"a: count > 0 abort": `threshold "a: count > 0 abort": a count only grows as a stage goes: count > 0 cannot fail before the stage ends, where it is judged; remove abort`,
		"count < 0":          `threshold "count < 0": nothing is below 0: it could never hold (count == 0 says none)`,
	} {
		if _, err := ParseThreshold(src); err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", src, err, want)
		}
	}
	for _, src := range []string{"count > 0", "checkout: count == 3", "total: count >= 1000", "count < 500 abort"} {
		th, err := ParseThreshold(src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if back, err := ParseThreshold(th.String()); err != nil || back.String() != th.String() || back.Value != th.Value {
			t.Errorf("%s: reads back from %q as %+v (%v)", src, th.String(), back, err)
		}
	}
}
