package logcorr

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Pattern tells how to find a request's processing time in a log. Set
// either Line, or Start and End.
type Pattern struct {
	// Line matches one line per processed request holding its id and either
	// both timestamps, (?P<id>...), (?P<start>...) and (?P<end>...), or its
	// processing time, (?P<id>...) and (?P<duration>...).
	Line string `yaml:"line,omitempty" json:"line,omitempty"`
	// Start and End match the two lines that open and close a request's
	// processing, each with (?P<id>...) and (?P<ts>...); they pair by id.
	Start string `yaml:"start,omitempty" json:"start,omitempty"`
	End   string `yaml:"end,omitempty" json:"end,omitempty"`
	// TimeLayout is the timestamps' Go time layout (default RFC3339Nano,
	// which also reads RFC3339 with or without fractions); RFC3339,
	// RFC3339Nano and DateTime name Go's constants; unix, unix_ms, unix_us
	// and unix_ns read numbers since the epoch (fractions allowed).
	TimeLayout string `yaml:"time_layout,omitempty" json:"time_layout,omitempty"`
	// DurationUnit is the unit of a bare number in the duration group: ms
	// (default), us, ns or s. A value with its own unit ("12.5ms", "1.2s")
	// is read as a Go duration.
	DurationUnit string `yaml:"duration_unit,omitempty" json:"duration_unit,omitempty"`
	// Location is the time zone (an IANA name, UTC or Local) of timestamps
	// whose layout has none (default Local).
	Location string `yaml:"location,omitempty" json:"location,omitempty"`
}

// Validate reports what is wrong with the pattern: a regex that does not
// compile or lacks a required named group, a bad time layout, duration unit
// or location.
func (p Pattern) Validate() error {
	_, err := p.compile()
	return err
}

// matcher is one compiled regex and the indexes of its groups (-1: absent).
type matcher struct {
	re                      *regexp.Regexp
	lit                     []byte // a literal every match contains, to skip lines fast
	id, start, end, dur, ts int
}

type compiled struct {
	line, start, end *matcher
	time             timeParser
	unit             time.Duration
}

func (p Pattern) compile() (*compiled, error) {
	c := &compiled{}
	switch {
	case p.Line != "" && (p.Start != "" || p.End != ""):
		return nil, errors.New("pattern: set either line, or start and end, not both")
	case p.Line != "":
		m, err := compileMatcher("line", p.Line)
		if err != nil {
			return nil, err
		}
		switch {
		case m.id < 0:
			return nil, fmt.Errorf("pattern: line regex %q has no (?P<id>...) group", p.Line)
		case m.dur >= 0 && (m.start >= 0 || m.end >= 0):
			return nil, fmt.Errorf("pattern: line regex %q has both (?P<duration>...) and (?P<start>...)/(?P<end>...); use one or the other", p.Line)
		case m.dur < 0 && (m.start < 0 || m.end < 0):
			return nil, fmt.Errorf("pattern: line regex %q needs (?P<start>...) and (?P<end>...) groups, or a (?P<duration>...) group", p.Line)
		}
		c.line = m
	case p.Start != "" && p.End != "":
		for _, s := range []struct {
			name, expr string
			m          **matcher
		}{{"start", p.Start, &c.start}, {"end", p.End, &c.end}} {
			m, err := compileMatcher(s.name, s.expr)
			if err != nil {
				return nil, err
			}
			if m.id < 0 || m.ts < 0 {
				return nil, fmt.Errorf("pattern: %s regex %q needs (?P<id>...) and (?P<ts>...) groups", s.name, s.expr)
			}
			*s.m = m
		}
	case p.Start != "" || p.End != "":
		return nil, errors.New("pattern: start and end go together: set both")
	default:
		return nil, errors.New("pattern: set line, or start and end")
	}
	var err error
	if c.time, err = newTimeParser(p.TimeLayout, p.Location); err != nil {
		return nil, err
	}
	switch p.DurationUnit {
	case "", "ms":
		c.unit = time.Millisecond
	case "us", "µs":
		c.unit = time.Microsecond
	case "ns":
		c.unit = time.Nanosecond
	case "s":
		c.unit = time.Second
	default:
		return nil, fmt.Errorf("pattern: duration_unit %q: want ms, us, ns or s", p.DurationUnit)
	}
	return c, nil
}

func compileMatcher(name, expr string) (*matcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("pattern: %s regex: %w", name, err)
	}
	m := &matcher{re: re, id: re.SubexpIndex("id"), start: re.SubexpIndex("start"),
		end: re.SubexpIndex("end"), dur: re.SubexpIndex("duration"), ts: re.SubexpIndex("ts")}
	if lit := requiredLiteral(expr); lit != "" {
		m.lit = []byte(lit)
	}
	return m, nil
}

// requiredLiteral returns the longest case-sensitive literal among the
// top-level pieces of expr: every match contains it, so a line without it
// cannot match and the regex need not run.
func requiredLiteral(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	best := ""
	for _, s := range subs {
		if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 {
			if lit := string(s.Rune); len(lit) > len(best) && utf8.ValidString(lit) {
				best = lit
			}
		}
	}
	return best
}

// group returns the text of group i of a match, nil when absent.
func group(line []byte, loc []int, i int) []byte {
	if i < 0 || 2*i+1 >= len(loc) || loc[2*i] < 0 {
		return nil
	}
	return line[loc[2*i]:loc[2*i+1]]
}

// timeParser reads timestamps: a Go layout, or Unix numbers in a unit.
type timeParser struct {
	layout   string
	loc      *time.Location
	unixUnit int64 // nanoseconds per unit; 0 for a Go layout
	// dateless layouts hold a time of day only: an end before its start has
	// crossed midnight.
	dateless bool
}

var namedLayouts = map[string]string{
	"RFC3339":     time.RFC3339,
	"RFC3339Nano": time.RFC3339Nano,
	"DateTime":    time.DateTime,
}

func newTimeParser(layout, location string) (timeParser, error) {
	tp := timeParser{layout: layout}
	switch location {
	case "", "Local":
		tp.loc = time.Local
	default:
		loc, err := time.LoadLocation(location)
		if err != nil {
			return tp, fmt.Errorf("pattern: location %q: %v", location, err)
		}
		tp.loc = loc
	}
	switch layout {
	case "unix":
		tp.unixUnit = int64(time.Second)
		return tp, nil
	case "unix_ms":
		tp.unixUnit = int64(time.Millisecond)
		return tp, nil
	case "unix_us":
		tp.unixUnit = int64(time.Microsecond)
		return tp, nil
	case "unix_ns":
		tp.unixUnit = 1
		return tp, nil
	case "":
		tp.layout = time.RFC3339Nano
	default:
		if l, ok := namedLayouts[layout]; ok {
			tp.layout = l
		}
	}
	// A layout must format a time into something it parses back.
	ref := time.Date(2011, 11, 22, 13, 44, 55, 123456789, time.UTC)
	s := ref.Format(tp.layout)
	if s == tp.layout {
		return tp, fmt.Errorf("pattern: time_layout %q has no Go time elements: write the reference time Mon Jan 2 15:04:05.000 MST 2006 the way the log does, or use unix, unix_ms, unix_us or unix_ns", layout)
	}
	back, err := time.ParseInLocation(tp.layout, s, time.UTC)
	if err != nil {
		return tp, fmt.Errorf("pattern: time_layout %q does not read back its own output %q: %v", layout, s, err)
	}
	if again := back.Format(tp.layout); again != s {
		return tp, fmt.Errorf("pattern: time_layout %q does not read back its own output %q (reads it as %q)", layout, s, again)
	}
	tp.dateless = back.Year() == 0 && back.YearDay() == 1
	return tp, nil
}

func (tp *timeParser) parse(b []byte) (time.Time, error) {
	if tp.unixUnit == 0 {
		return time.ParseInLocation(tp.layout, string(b), tp.loc)
	}
	ns, err := parseScaled(b, tp.unixUnit)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, ns), nil
}

// parseScaled reads a non-negative decimal number of units of unit
// nanoseconds ("1700000000.123456789", "1700000000123") as nanoseconds,
// exactly where float64 would round.
func parseScaled(b []byte, unit int64) (int64, error) {
	s := string(b)
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	var n int64
	if ip != "" {
		v, err := strconv.ParseUint(ip, 10, 63)
		if err != nil || v > uint64((1<<63-1)/unit) {
			return 0, fmt.Errorf("%q is not a number of %s", s, unitName(unit))
		}
		n = int64(v) * unit
	}
	if fp != "" {
		for _, c := range fp {
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("%q is not a number of %s", s, unitName(unit))
			}
		}
		// Digits beyond a nanosecond do not count.
		scale := int64(1)
		k := 0
		for u := unit; u > 1 && k < len(fp); u /= 10 {
			scale *= 10
			k++
		}
		var f int64
		for _, c := range fp[:k] {
			f = f*10 + int64(c-'0')
		}
		n += f * unit / scale
	}
	return n, nil
}

func unitName(unit int64) string {
	switch unit {
	case int64(time.Second):
		return "seconds"
	case int64(time.Millisecond):
		return "milliseconds"
	case int64(time.Microsecond):
		return "microseconds"
	}
	return "nanoseconds"
}

// parseDuration reads a duration group: a bare number of unit, or a Go
// duration with its own unit.
func parseDuration(b []byte, unit time.Duration) (time.Duration, error) {
	s := string(b)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v*float64(unit) >= math.MaxInt64 {
			return 0, fmt.Errorf("duration %q is not a non-negative number of a plausible size", s)
		}
		return time.Duration(v * float64(unit)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q is neither a number nor a Go duration", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, nil
}
