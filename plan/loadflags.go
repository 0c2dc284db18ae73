package plan

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// LoadFields are the load fields of a scenario that the command line can
// give (perflab run --vus 50 --duration 5m), in the order their flags are
// written. A field's flag is its name with - for _: --total-iterations.
var LoadFields = []string{"vus", "iterations", "total_iterations", "duration", "rate", "max_vus"}

// LoadFlag is the command-line flag of a load field: --total-iterations.
func LoadFlag(field string) string { return "--" + strings.ReplaceAll(field, "_", "-") }

// LoadOverride is a scenario's load given on the command line. It is
// written into the plan, in place of the load fields of the scenarios it
// names, before the plan is decoded: the values are checked as the plan's
// own are (an error in one names its flag), and the plan's source, kept
// as the run's plan.yaml and in the history, is the plan that ran. The
// rules, as k6 merges its -u, -d and -i into a script's options:
//   - The bounds given (--duration, --iterations, --total-iterations)
//     replace the scenario's bounds as a whole: --duration 5m on a
//     scenario of iterations runs it for 5 minutes; --iterations with
//     --duration runs until the first of the two ends.
//   - --vus replaces the VU count and keeps the bounds; in an arrival-rate
//     scenario it is the VUs started beforehand, as the plan's vus is.
//   - --rate makes the scenario a constant arrival rate (from a ramp of
//     rates, or from VUs that loop), for --duration or the scenario's own
//     duration; --max-vus goes with a rate only.
//   - A ramp (ramp_vus, ramp_rate) is replaced only by what takes its place
//     (--vus, --rate): cutting it with a bound alone is refused.
type LoadOverride struct {
	// Scenarios names the scenarios to change; none: the plan's only one.
	Scenarios []string
	// Values maps a load field (LoadFields) to its value as given: a
	// number, a duration, or a list in brackets that sweeps it.
	Values map[string]string
}

// Empty reports whether the override changes nothing.
func (o LoadOverride) Empty() bool { return len(o.Values) == 0 && len(o.Scenarios) == 0 }

// Args are the flags that give the override, in LoadFields' order, for a
// worker process to be given the same.
func (o LoadOverride) Args() []string {
	var args []string
	for _, n := range o.Scenarios {
		args = append(args, "--scenario", n)
	}
	for _, f := range LoadFields {
		if v, ok := o.Values[f]; ok {
			args = append(args, LoadFlag(f), v)
		}
	}
	return args
}

// A value written from a flag has no place in the plan file: its node is
// at line -1-i (i its field's index in LoadFields), column the
// scenario's number, and an error there is reported as the flag's.
func flagPos(field string, scenario int) (line, col int) {
	return -1 - slices.Index(LoadFields, field), scenario + 1
}

// flagErrors reports the errors found at a flag's value as the flag's:
// "--vus: scenario browse: vus: want at least 1, got 0".
func flagErrors(errs ErrorList) {
	for _, e := range errs {
		if e.Line < 0 && -e.Line <= len(LoadFields) {
			e.File, e.Line, e.Col = LoadFlag(LoadFields[-e.Line-1]), 0, 0
		}
	}
}

// applyLoad writes the override into the plan's YAML (doc, a document
// node) and returns the plan's source as it then is.
func applyLoad(doc *yaml.Node, o LoadOverride) ([]byte, ErrorList) {
	var errs ErrorList
	fail := func(flag, format string, args ...any) {
		errs = append(errs, &Error{File: flag, Msg: fmt.Sprintf(format, args...)})
	}
	if len(o.Values) == 0 {
		fail("--scenario", "--scenario names the scenarios whose load the load flags change: give --vus, --duration, --iterations, --total-iterations, --rate or --max-vus with it")
		return nil, errs
	}
	var flags []string
	for _, f := range LoadFields {
		if _, ok := o.Values[f]; ok {
			flags = append(flags, LoadFlag(f))
		}
	}
	first := flags[0]
	scenarios := mapValue(doc.Content[0], "scenarios")
	switch {
	case scenarios == nil:
		return nil, nil // the plan's own errors say what is wrong
	case scenarios.Kind != yaml.SequenceNode:
		fail(first, "the plan's scenarios are not written as a list (an alias?): their load cannot be given on the command line")
		return nil, errs
	}
	// The scenarios' names, as validation names them.
	var names []string
	for i, sc := range scenarios.Content {
		name := fmt.Sprintf("scenario-%d", i+1)
		if n := mapValue(sc, "name"); n != nil && n.Kind == yaml.ScalarNode && n.Value != "" {
			name = n.Value
		}
		names = append(names, name)
	}
	var targets []int
	switch {
	case len(o.Scenarios) > 0:
		for _, want := range o.Scenarios {
			i := slices.Index(names, want)
			if i < 0 {
				fail("--scenario", "the plan has no scenario %q (its scenarios: %s)%s", want, strings.Join(names, ", "), suggest(want, names))
				continue
			}
			if !slices.Contains(targets, i) {
				targets = append(targets, i)
			}
		}
	case len(names) == 1:
		targets = []int{0}
	case len(names) > 1:
		fail("--scenario", "the plan has %d scenarios (%s): name the one whose load %s give%s with --scenario NAME (repeatable)", len(names), strings.Join(names, ", "), strings.Join(flags, ", "), map[bool]string{true: "s"}[len(flags) == 1])
	}
	var changed []string
	for _, i := range targets {
		sc := scenarios.Content[i]
		if sc.Kind != yaml.MappingNode || mapValue(sc, "<<") != nil {
			fail(first, "scenario %s is written with an alias: its load cannot be given on the command line", names[i])
			continue
		}
		errs = append(errs, setLoad(sc, names[i], i, o.Values)...)
		changed = append(changed, names[i])
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var b bytes.Buffer
	comment, _ := SingleLine(fmt.Sprintf("# the load of scenario %s given on the command line: %s", strings.Join(changed, ", "), strings.Join(LoadOverride{Values: o.Values}.Args(), " ")))
	b.WriteString(comment + "\n")
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(doc); err != nil {
		fail(first, "writing the plan with the load given: %v", err)
		return nil, errs
	}
	e.Close()
	return b.Bytes(), nil
}

// setLoad writes the load flags' values into a scenario's mapping, by the
// rules of LoadOverride.
func setLoad(sc *yaml.Node, name string, index int, given map[string]string) ErrorList {
	var errs ErrorList
	fail := func(field, format string, args ...any) {
		errs = append(errs, &Error{File: LoadFlag(field), Msg: fmt.Sprintf("scenario %s: "+format, append([]any{name}, args...)...)})
	}
	has := func(key string) bool { return mapValue(sc, key) != nil }
	gave := func(field string) bool { _, ok := given[field]; return ok }
	bounded := gave("duration") || gave("iterations") || gave("total_iterations")
	counted := gave("iterations") || gave("total_iterations")
	open := has("rate") || has("ramp_rate")
	toOpen := gave("rate") || open && !counted
	switch {
	case gave("iterations") && gave("total_iterations"):
		fail("total_iterations", "give --iterations (each VU's) or --total-iterations (shared by the VUs), not both")
	case gave("rate") && counted:
		fail("rate", "an arrival rate runs for a duration, not a count of iterations: give --rate with --duration, or --iterations without --rate")
	case toOpen && !gave("rate") && has("ramp_rate") && gave("duration"):
		fail("duration", "its rate ramps (ramp_rate), which sets how long it runs: give --rate too, to run a constant rate for --duration in place of the ramp")
	case toOpen && gave("rate") && !open && has("ramp_vus") && !gave("vus"):
		fail("rate", "it ramps its VUs (ramp_vus): give --vus too, the VUs started beforehand to run the rate (and --max-vus, the most it may use)")
	case toOpen && gave("rate") && !gave("duration") && !has("duration"):
		fail("rate", "it has no duration to run the rate for: give --duration too")
	case !toOpen && gave("max_vus"):
		fail("max_vus", "--max-vus is the most VUs an arrival rate may use: give it with --rate")
	case !toOpen && open && !gave("vus"):
		fail(firstGiven(given, "iterations", "total_iterations"), "it starts iterations at a rate: give --vus too, the VUs that run the iterations in its place")
	case !toOpen && has("ramp_vus") && !gave("vus") && bounded:
		fail(firstGiven(given, "duration", "iterations", "total_iterations"), "it ramps its VUs (ramp_vus): give --vus too, the VUs to run in place of the ramp")
	case !toOpen && has("ramp_vus") && gave("vus") && !bounded && !has("duration") && !has("iterations") && !has("total_iterations"):
		fail("vus", "its ramp_vus, which --vus replaces, was what ended it: give --duration or --iterations too")
	}
	if len(errs) > 0 {
		return errs
	}
	if toOpen {
		if gave("rate") {
			deleteKeys(sc, "ramp_rate", "start_rate", "iterations", "total_iterations", "ramp_up", "ramp_vus")
		}
	} else {
		deleteKeys(sc, "rate", "ramp_rate", "start_rate", "max_vus", "when_busy")
		if gave("vus") {
			deleteKeys(sc, "ramp_vus")
		}
		if bounded {
			deleteKeys(sc, "iterations", "total_iterations", "duration")
		}
	}
	for _, f := range LoadFields {
		if v, ok := given[f]; ok {
			setKey(sc, f, flagValue(v, f, index))
		}
	}
	return nil
}

// firstGiven is the first of fields given.
func firstGiven(given map[string]string, fields ...string) string {
	for _, f := range fields {
		if _, ok := given[f]; ok {
			return f
		}
	}
	return fields[0]
}

// flagValue is the YAML node of a flag's value: a scalar, or a list in
// brackets (a sweep), at the flag's position (flagPos).
func flagValue(v, field string, scenario int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	if s := strings.TrimSpace(v); strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(s), &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.SequenceNode {
			n = doc.Content[0]
			n.Style = yaml.FlowStyle
		}
	} else if tag := resolvedTag(v); tag != "" {
		n.Tag = tag // a number is written as one, not quoted
	}
	line, col := flagPos(field, scenario)
	var place func(*yaml.Node)
	place = func(n *yaml.Node) {
		n.Line, n.Column = line, col
		for _, c := range n.Content {
			place(c)
		}
	}
	place(n)
	return n
}

// resolvedTag is the tag YAML gives v written plainly, when that tag is a
// number's.
func resolvedTag(v string) string {
	var n yaml.Node
	if yaml.Unmarshal([]byte(v), &n) != nil || len(n.Content) != 1 || n.Content[0].Value != v {
		return ""
	}
	if t := n.Content[0].Tag; t == "!!int" || t == "!!float" {
		return t
	}
	return ""
}

// mapValue is the value of key in mapping m, nil when absent.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// deleteKeys removes keys from mapping m.
func deleteKeys(m *yaml.Node, keys ...string) {
	out := m.Content[:0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !slices.Contains(keys, m.Content[i].Value) {
			out = append(out, m.Content[i], m.Content[i+1])
		}
	}
	m.Content = out
}

// setKey sets key to v in mapping m, in place or after the scenario's
// name and load, marked with the flag that gave it where the mapping is
// written a key a line.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	if m.Style&yaml.FlowStyle == 0 {
		v.LineComment = LoadFlag(key)
	}
	at := 0
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k := m.Content[i].Value; {
		case k == key:
			m.Content[i+1] = v
			return
		case k == "name" || slices.Contains(loadKeys, k):
			at = i + 2
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: v.Line, Column: v.Column}
	m.Content = slices.Insert(m.Content, at, k, v)
}

// loadKeys are a scenario's fields of its load.
var loadKeys = []string{"vus", "iterations", "total_iterations", "duration", "ramp_up", "ramp_vus", "rate", "ramp_rate", "start_rate", "max_vus", "when_busy"}
