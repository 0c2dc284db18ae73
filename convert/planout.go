package convert

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/plan"
)

// MaxInputBytes is the largest file perflab convert reads: 256 MiB. A
// JMeter plan or an OpenAPI description is a few MB (GitHub's, among the
// largest published, is about 10); a browser recording that keeps its
// responses' bodies can be tens. Each is decoded whole.
const MaxInputBytes = 256 << 20

// Result is a converted plan and what could not be converted.
type Result struct {
	// Plan is the perflab plan, YAML, with what was not converted listed
	// in its first comment.
	Plan []byte
	// Skipped are the elements, or parts of them, not converted: each
	// with its path in the test plan ("PATH: what"), or, when several
	// elements share a note, the note and their paths ("what (N
	// elements): PATH; PATH; ...").
	Skipped []string
	// Elements counts the enabled elements of a JMeter test plan by what
	// the converter made of them.
	Elements Accounting
}

// Accounting counts the enabled elements of a JMeter test plan: those
// converted into the plan (some with parts listed), those listed as not
// converted (themselves, or with the element around them), and those
// neither, which would be dropped in silence: their paths are in Dropped,
// and a test holds them at none.
type Accounting struct {
	Converted, Listed int
	Dropped           []string
}

// render writes a converted plan: a comment saying where it came from and
// listing what was not converted (each with where it is), then the plan.
// comment, when given, is the list as the comment writes it (a group of
// notes takes a line for each of its paths); else each of skipped is a
// line.
//
// The names come from the other tool's file, which anyone may have
// written: a name with a line break or another control character would
// be refused by the plan's validator (and would break the lines and
// documents names go into), so they become spaces, and the plan says so.
// The comment's lines are made one line each too: a line break in a file
// name or an element's name would end the comment.
func render(p *planOut, skipped, comment []string, from, whole, where string) (*Result, error) {
	renamed := singleLineNames(p)
	skipped = append(skipped, renamed...)
	if comment != nil {
		comment = append(comment, renamed...)
	} else {
		comment = skipped
	}
	for i, s := range skipped {
		skipped[i] = oneLine(s)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Converted from %s.\n", oneLine(from))
	if len(comment) == 0 {
		fmt.Fprintf(&b, "# %s\n", whole)
	} else {
		fmt.Fprintf(&b, "# Not converted (%s: what):\n", where)
		for _, s := range comment {
			fmt.Fprintf(&b, "#   %s\n", oneLine(s))
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return &Result{Plan: b.Bytes(), Skipped: skipped}, nil
}

// NothingToSendError is an input of which nothing converts into a
// request: a plan that would send none is not written.
type NothingToSendError struct {
	File string
	// Why says what the input lacks: "no operation under paths".
	Why string
	// Skipped are what was not converted and why, as Result.Skipped.
	Skipped []string
}

func (e *NothingToSendError) Error() string {
	return fmt.Sprintf("%s: %s, so the plan would send no request: none is written", e.File, e.Why)
}

// checkSends refuses a plan none of whose steps (setup, scenarios,
// teardown, fragments) sends a request (*NothingToSendError, with why).
func checkSends(p *planOut, file, why string, skipped []string) error {
	lists := [][]*stepOut{p.Setup, p.Teardown}
	for _, sc := range p.Scenarios {
		lists = append(lists, sc.Flow)
	}
	for _, f := range p.Fragments {
		lists = append(lists, f.V.([]*stepOut))
	}
	sends := false
	for _, list := range lists {
		eachStep(list, func(s *stepOut) { sends = sends || s.URL != "" })
	}
	if sends {
		return nil
	}
	return &NothingToSendError{File: file, Why: why, Skipped: skipped}
}

// oneLine is s with its line breaks and control characters made spaces.
func oneLine(s string) string {
	s, _ = plan.SingleLine(s)
	return s
}

// singleLineNames makes the plan's names one line each (plan.SingleLine),
// and says which were changed.
func singleLineNames(p *planOut) []string {
	var notes []string
	fix := func(what string, name *string) {
		if s, changed := plan.SingleLine(*name); changed {
			notes = append(notes, fmt.Sprintf("%s %.60q: its line breaks and control characters, which a name may not hold, are spaces in %.60q", what, *name, s))
			*name = s
		}
	}
	var steps func([]*stepOut)
	steps = func(list []*stepOut) {
		for _, st := range list {
			fix("the step", &st.Name)
			fix("the transaction", &st.Transaction)
			fix("the fragment used", &st.Use)
			for _, b := range st.Choose {
				fix("the branch", &b.Name)
				steps(b.Steps)
			}
			steps(st.Steps)
			steps(st.Else)
		}
	}
	fix("the plan's name", &p.Name)
	steps(p.Setup)
	for _, sc := range p.Scenarios {
		fix("the scenario", &sc.Name)
		steps(sc.Flow)
	}
	steps(p.Teardown)
	for i := range p.Fragments {
		fix("the fragment", &p.Fragments[i].K)
		steps(p.Fragments[i].V.([]*stepOut))
	}
	return notes
}

type planOut struct {
	Name        string              `yaml:"name"`
	Consecutive bool                `yaml:"consecutive,omitempty"`
	Target      string              `yaml:"target,omitempty"`
	Vars        map[string]string   `yaml:"vars,omitempty"`
	Headers     map[string]string   `yaml:"headers,omitempty"`
	Data        map[string]*dataOut `yaml:"data,omitempty"`
	HTTP        *httpOut            `yaml:"http,omitempty"`
	Fragments   ordered             `yaml:"fragments,omitempty"`
	Setup       []*stepOut          `yaml:"setup,omitempty"`
	Scenarios   []*scenarioOut      `yaml:"scenarios"`
	Teardown    []*stepOut          `yaml:"teardown,omitempty"`
}

type httpOut struct {
	Cookies string   `yaml:"cookies,omitempty"`
	Auth    *authOut `yaml:"auth,omitempty"`
}

type authOut struct {
	Type     string `yaml:"type"`
	User     string `yaml:"user"`
	Password string `yaml:"password"`
}

type dataOut struct {
	CSV       string    `yaml:"csv,omitempty"`
	Range     *rangeOut `yaml:"range,omitempty"`
	Header    *bool     `yaml:"header,omitempty"`
	Columns   []string  `yaml:"columns,omitempty,flow"`
	Delimiter string    `yaml:"delimiter,omitempty"`
	Mode      string    `yaml:"mode,omitempty"`
}

type rangeOut struct {
	From   int64  `yaml:"from"`
	To     int64  `yaml:"to"`
	Step   int64  `yaml:"step,omitempty"`
	Format string `yaml:"format,omitempty"`
}

type scenarioOut struct {
	Name       string     `yaml:"name"`
	VUs        any        `yaml:"vus"`
	Iterations any        `yaml:"iterations,omitempty"`
	Rate       any        `yaml:"rate,omitempty"`
	StartRate  float64    `yaml:"start_rate,omitempty"`
	RampRate   []rampOut  `yaml:"ramp_rate,omitempty"`
	MaxVUs     any        `yaml:"max_vus,omitempty"`
	Duration   any        `yaml:"duration,omitempty"`
	RampUp     any        `yaml:"ramp_up,omitempty"`
	RampVUs    []rampOut  `yaml:"ramp_vus,omitempty"`
	Think      any        `yaml:"think,omitempty"`
	OnError    string     `yaml:"on_error,omitempty"`
	Flow       []*stepOut `yaml:"flow"`
}

type rampOut struct {
	Target   float64 `yaml:"target"`
	Duration string  `yaml:"duration"`
}

// stepOut is a step of the plan written: a request, a transaction, a
// block of steps (with a condition, a loop or once), a choice, a
// fragment's use or a pause. The unexported fields are the converter's.
type stepOut struct {
	Transaction string            `yaml:"transaction,omitempty"`
	Name        string            `yaml:"name,omitempty"`
	Use         string            `yaml:"use,omitempty"`
	If          string            `yaml:"if,omitempty"`
	Once        bool              `yaml:"once,omitempty"`
	Loop        *loopOut          `yaml:"loop,omitempty"`
	Choose      []*branchOut      `yaml:"choose,omitempty"`
	Set         ordered           `yaml:"set,omitempty"`
	Method      string            `yaml:"method,omitempty"`
	URL         string            `yaml:"url,omitempty"`
	Headers     map[string]string `yaml:"headers,omitempty"`
	Query       map[string]string `yaml:"query,omitempty"`
	Body        string            `yaml:"body,omitempty"`
	Form        ordered           `yaml:"form,omitempty"`
	JSON        any               `yaml:"json,omitempty"`
	Timeout     string            `yaml:"timeout,omitempty"`
	Redirects   *int              `yaml:"redirects,omitempty"`
	Auth        any               `yaml:"auth,omitempty"`
	Extract     ordered           `yaml:"extract,omitempty"`
	Check       map[string]any    `yaml:"check,omitempty"`
	Think       any               `yaml:"think,omitempty"`
	Steps       []*stepOut        `yaml:"steps,omitempty"`
	Else        []*stepOut        `yaml:"else,omitempty"`

	conv *stepConv // the JMeter converter's, nil elsewhere
}

type loopOut struct {
	Count any      `yaml:"count,omitempty"`
	While string   `yaml:"while,omitempty"`
	Over  string   `yaml:"over,omitempty"`
	As    string   `yaml:"as,omitempty"`
	Index string   `yaml:"index,omitempty"`
	Max   int      `yaml:"max,omitempty"`
	Rows  []string `yaml:"rows,omitempty,flow"`
}

type branchOut struct {
	Name   string     `yaml:"name,omitempty"`
	Weight *float64   `yaml:"weight,omitempty"`
	Steps  []*stepOut `yaml:"steps,omitempty"`
}

// kv is an entry of an ordered mapping.
type kv struct {
	K string
	V any
}

// ordered is a YAML mapping written in its order.
type ordered []kv

func (o ordered) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range o {
		var v yaml.Node
		if err := v.Encode(e.V); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.K}, &v)
	}
	return n, nil
}

// set sets k's value, in place when k is there.
func (o *ordered) set(k string, v any) {
	for i := range *o {
		if (*o)[i].K == k {
			(*o)[i].V = v
			return
		}
	}
	*o = append(*o, kv{k, v})
}

// eachStep calls fn for each step of list and of the steps they hold
// (blocks, transactions, else, branches), each once.
func eachStep(list []*stepOut, fn func(*stepOut)) {
	seen := map[*stepOut]bool{}
	var walk func([]*stepOut)
	walk = func(list []*stepOut) {
		for _, s := range list {
			if seen[s] {
				continue
			}
			seen[s] = true
			fn(s)
			walk(s.Steps)
			walk(s.Else)
			for _, b := range s.Choose {
				walk(b.Steps)
			}
		}
	}
	walk(list)
}
