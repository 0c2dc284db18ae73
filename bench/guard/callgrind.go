// Package guard keeps perflab's per-request cost from growing unnoticed.
// Its test runs perflab under valgrind's callgrind, which counts the
// instructions a process executes, its atomic instructions and the calls
// between its functions: figures that do not drift with the machine's
// load as timings do. From two runs of the same plan that differ only in
// their number of requests, it takes what one more request costs and holds
// it to the budgets in budgets.json.
package guard

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Profile is what a callgrind output file says of a process: its events'
// totals, each function's own (exclusive) events and how many times each
// function was called (from anywhere).
type Profile struct {
	Events []string // Ir (instructions), Ge (atomic instructions) ...
	Total  []int64
	Self   map[string][]int64
	Calls  map[string]int64
}

// Event is the index of event name in the profile's figures, or -1.
func (p *Profile) Event(name string) int { return slices.Index(p.Events, name) }

// ParseCallgrind reads callgrind's output format (name compression and
// relative positions as callgrind writes them; positions: line).
func ParseCallgrind(r io.Reader) (*Profile, error) {
	p := &Profile{Self: map[string][]int64{}, Calls: map[string]int64{}}
	names := map[string]string{} // "(12)" -> name, for fn= and cfn=
	name := func(v string) string {
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "(") {
			return v
		}
		id, rest, _ := strings.Cut(v, ")")
		id += ")"
		if rest = strings.TrimSpace(rest); rest != "" {
			// callgrind tells a recursive call's frames apart as f'2, f'3 ...
			if i := strings.LastIndexByte(rest, '\''); i > 0 && strings.Trim(rest[i+1:], "0123456789") == "" {
				rest = rest[:i]
			}
			names[id] = rest
			return rest
		}
		return names[id]
	}
	numbers := func(fs []string) ([]int64, error) {
		out := make([]int64, len(p.Events))
		for i := range min(len(fs), len(out)) {
			n, err := strconv.ParseInt(fs[i], 10, 64)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	var fn, cfn string
	inCall := false // the next cost line is a call's inclusive cost
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		var err error
		switch {
		case s == "" || s[0] == '#':
		case strings.HasPrefix(s, "events:"):
			p.Events = strings.Fields(s[len("events:"):])
		case strings.HasPrefix(s, "fn="):
			fn = name(s[3:])
		case strings.HasPrefix(s, "cfn="):
			cfn = name(s[4:])
		case strings.HasPrefix(s, "calls="):
			var n int64
			n, err = strconv.ParseInt(strings.Fields(s[len("calls="):])[0], 10, 64)
			p.Calls[cfn] += n
			inCall = true
		case strings.HasPrefix(s, "summary:"):
			p.Total, err = numbers(strings.Fields(s[len("summary:"):]))
		case s[0] == '+' || s[0] == '-' || s[0] == '*' || (s[0] >= '0' && s[0] <= '9'):
			if inCall {
				inCall = false
				continue
			}
			var c []int64
			if c, err = numbers(strings.Fields(s)[1:]); err == nil {
				self := p.Self[fn]
				if self == nil {
					self = make([]int64, len(p.Events))
					p.Self[fn] = self
				}
				for i, n := range c {
					self[i] += n
				}
			}
		default:
			// fl=, fi=, fe=, ob=, cob=, cfi=, positions:, totals: ...
		}
		if err != nil {
			return nil, fmt.Errorf("callgrind output, line %d: %q: %v", line, s, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.Events) == 0 || p.Total == nil {
		return nil, fmt.Errorf("callgrind output has no events or summary line")
	}
	return p, nil
}

// Allocs is the number of heap allocations the process made: the calls
// to the Go runtime's allocator.
func (p *Profile) Allocs() int64 { return p.Calls["runtime.mallocgc"] }

// Sum is event e's own figures of the functions that count.
func (p *Profile) Sum(e int, count func(fn string) bool) int64 {
	var n int64
	for fn, c := range p.Self {
		if count(fn) {
			n += c[e]
		}
	}
	return n
}

// Steady tells the functions whose work is the same for the same
// requests from those whose work depends on how the machine went: the Go
// runtime's (its scheduler looks for work for as long as the server takes
// to answer, and the collector runs at its own pace), the histogram
// library's and the compressor's (they iterate over the distinct
// latencies a run happened to see, to merge and write them).
func Steady(fn string) bool {
	for _, pre := range []string{"runtime.", "internal/runtime/", "github.com/HdrHistogram/", "compress/flate."} {
		if strings.HasPrefix(fn, pre) {
			return false
		}
	}
	return true
}
