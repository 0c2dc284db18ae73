package dataset

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxValues bounds every expansion, so a typo cannot allocate without end.
const MaxValues = 10_000_000

// GlobError is a malformed glob pattern.
type GlobError struct {
	Offset int
	Msg    string
}

func (e *GlobError) Error() string { return fmt.Sprintf("glob offset %d: %s", e.Offset, e.Msg) }

// globPart is literal text or a list of alternatives.
type globPart struct {
	lit  string
	alts []string // nil for literal
}

// parseGlob splits a pattern like curl does: [1-25], [001-100], [a-z],
// [1-100:10], {one,two}; \[ \] \{ \} are literal.
func parseGlob(p string) ([]globPart, error) {
	var parts []globPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, globPart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 < len(p) && strings.IndexByte("[]{}", p[i+1]) >= 0 {
				lit.WriteByte(p[i+1])
				i++
				continue
			}
			lit.WriteByte(c)
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, &GlobError{i, "unterminated [: missing ]"}
			}
			alts, err := expandRange(p[i+1:i+end], i)
			if err != nil {
				return nil, err
			}
			flush()
			parts = append(parts, globPart{alts: alts})
			i += end
		case '{':
			end := strings.IndexByte(p[i:], '}')
			if end < 0 {
				return nil, &GlobError{i, "unterminated {: missing }"}
			}
			inner := p[i+1 : i+end]
			if inner == "" {
				return nil, &GlobError{i, "empty set {}"}
			}
			flush()
			parts = append(parts, globPart{alts: strings.Split(inner, ",")})
			i += end
		case ']', '}':
			return nil, &GlobError{i, fmt.Sprintf("unexpected %c (escape it as \\%c)", c, c)}
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return parts, nil
}

// rangeSpec is a parsed [start-end:step].
type rangeSpec struct {
	letters    bool
	start, end int64
	step       int64
	width      int // zero padding
}

func parseRange(s string, off int) (rangeSpec, error) {
	var r rangeSpec
	body, stepS, hasStep := strings.Cut(s, ":")
	a, b, ok := strings.Cut(body, "-")
	if !ok || a == "" || b == "" {
		return r, &GlobError{off, fmt.Sprintf("range [%s]: want [start-end] such as [1-25] or [a-z]", s)}
	}
	r.step = 1
	if hasStep {
		st, err := strconv.ParseInt(stepS, 10, 64)
		if err != nil || st <= 0 {
			return r, &GlobError{off, fmt.Sprintf("range [%s]: step must be a positive integer", s)}
		}
		r.step = st
	}
	isLetter := func(x string) bool {
		return len(x) == 1 && (x[0] >= 'a' && x[0] <= 'z' || x[0] >= 'A' && x[0] <= 'Z')
	}
	switch {
	case isLetter(a) && isLetter(b):
		r.letters, r.start, r.end = true, int64(a[0]), int64(b[0])
		if (a[0] >= 'a') != (b[0] >= 'a') {
			return r, &GlobError{off, fmt.Sprintf("range [%s]: mixes lower and upper case", s)}
		}
	default:
		x, err1 := strconv.ParseUint(a, 10, 63)
		y, err2 := strconv.ParseUint(b, 10, 63)
		if err1 != nil || err2 != nil {
			return r, &GlobError{off, fmt.Sprintf("range [%s]: want two numbers or two letters", s)}
		}
		r.start, r.end = int64(x), int64(y)
		if len(a) > 1 && a[0] == '0' {
			r.width = len(a)
		}
	}
	if r.start > r.end {
		return r, &GlobError{off, fmt.Sprintf("range [%s]: start is after end", s)}
	}
	return r, nil
}

func (r rangeSpec) count() int64 { return (r.end-r.start)/r.step + 1 }

func expandRange(s string, off int) ([]string, error) {
	r, err := parseRange(s, off)
	if err != nil {
		return nil, err
	}
	if r.count() > MaxValues {
		return nil, &GlobError{off, fmt.Sprintf("range [%s] has %d values, more than %d", s, r.count(), MaxValues)}
	}
	out := make([]string, 0, r.count())
	for v := r.start; v <= r.end; v += r.step {
		switch {
		case r.letters:
			out = append(out, string(rune(v)))
		case r.width > 0:
			out = append(out, fmt.Sprintf("%0*d", r.width, v))
		default:
			out = append(out, strconv.FormatInt(v, 10))
		}
	}
	return out, nil
}

// GlobCount returns how many values a pattern expands to, without expanding it.
func GlobCount(pattern string) (int64, error) {
	n, _, err := globCount(pattern)
	return n, err
}

func globCount(pattern string) (int64, []globPart, error) {
	// Count ranges before expanding them: parse brackets lazily.
	total := int64(1)
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '[':
			end := strings.IndexByte(pattern[i:], ']')
			if end < 0 {
				return 0, nil, &GlobError{i, "unterminated [: missing ]"}
			}
			r, err := parseRange(pattern[i+1:i+end], i)
			if err != nil {
				return 0, nil, err
			}
			total = mulCap(total, r.count())
			i += end
		case '{':
			end := strings.IndexByte(pattern[i:], '}')
			if end < 0 {
				return 0, nil, &GlobError{i, "unterminated {: missing }"}
			}
			total = mulCap(total, int64(strings.Count(pattern[i:i+end], ",")+1))
			i += end
		}
	}
	if total > MaxValues {
		return total, nil, nil
	}
	parts, err := parseGlob(pattern)
	return total, parts, err
}

func mulCap(a, b int64) int64 {
	if a > 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

// ExpandGlob expands a curl-style glob: the leftmost range varies slowest.
// max <= 0 means MaxValues.
func ExpandGlob(pattern string, max int) ([]string, error) {
	limit := int64(MaxValues)
	if max > 0 {
		limit = int64(max)
	}
	n, parts, err := globCount(pattern)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, &GlobError{0, fmt.Sprintf("pattern expands to %d values, more than the limit of %d", n, limit)}
	}
	out := []string{""}
	for _, p := range parts {
		if p.alts == nil {
			for i := range out {
				out[i] += p.lit
			}
			continue
		}
		next := make([]string, 0, len(out)*len(p.alts))
		for _, prefix := range out {
			for _, a := range p.alts {
				next = append(next, prefix+a)
			}
		}
		out = next
	}
	return out, nil
}

// Range returns the integers from..to inclusive by step, formatted with
// format (default "%d").
func Range(from, to, step int64, format string) ([]string, error) {
	if step == 0 {
		return nil, fmt.Errorf("range step must not be 0")
	}
	if (to-from)*step < 0 {
		return nil, fmt.Errorf("range from %d to %d: step %d moves away from the end", from, to, step)
	}
	n := (to-from)/step + 1
	if n > MaxValues {
		return nil, fmt.Errorf("range has %d values, more than %d", n, MaxValues)
	}
	if format == "" {
		format = "%d"
	}
	if strings.Count(format, "%") != 1 || !strings.ContainsAny(format[strings.IndexByte(format, '%'):], "dxXob") {
		return nil, fmt.Errorf("range format %q: want one integer verb such as %%d or %%05d", format)
	}
	out := make([]string, 0, n)
	for i := int64(0); i < n; i++ {
		out = append(out, fmt.Sprintf(format, from+i*step))
	}
	return out, nil
}
