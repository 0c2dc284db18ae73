package dataset

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
)

// MaxValues is the default limit on how many values ExpandGlob and Range
// produce, so that a typo in a pattern cannot exhaust memory.
const MaxValues = 10_000_000

// GlobError reports a malformed glob pattern, or one that expands to too many
// values.
type GlobError struct {
	// Offset is the byte offset in the pattern of the problem: the opening
	// bracket or brace of a bad range or set, an unmatched or nested
	// bracket or brace, or the range or set that takes the expansion over
	// the limit.
	Offset int
	// Msg says what is wrong.
	Msg string
}

func (e *GlobError) Error() string { return fmt.Sprintf("glob offset %d: %s", e.Offset, e.Msg) }

// globPart is one piece of a parsed pattern: literal text, or a range or set
// whose values vary.
type globPart struct {
	off  int        // byte offset of the part in the pattern
	lit  string     // literal text, when set == nil and rng == nil
	set  []string   // the elements of a {set}
	rng  *rangeSpec // a [range]
	alts []string   // values of a set or range, filled in before expanding
}

// count returns how many values the part takes.
func (p *globPart) count() uint64 {
	switch {
	case p.set != nil:
		return uint64(len(p.set))
	case p.rng != nil:
		return p.rng.count()
	}
	return 1
}

// rangeSpec is a parsed [start-end:step].
type rangeSpec struct {
	letters    bool
	start, end uint64
	step       uint64
	width      int // zero padding of numbers, 0 for none
}

func (r *rangeSpec) count() uint64 { return (r.end-r.start)/r.step + 1 }

// values formats every value of the range.
func (r *rangeSpec) values() []string {
	n := r.count()
	out := make([]string, n)
	var buf []byte
	for i := range n {
		v := r.start + i*r.step
		if r.letters {
			out[i] = string(rune(v))
			continue
		}
		buf = strconv.AppendUint(buf[:0], v, 10)
		if pad := r.width - len(buf); pad > 0 {
			out[i] = strings.Repeat("0", pad) + string(buf)
		} else {
			out[i] = string(buf)
		}
	}
	return out
}

// isGlobMeta reports whether a backslash before c escapes it.
func isGlobMeta(c byte) bool { return c == '[' || c == ']' || c == '{' || c == '}' }

// parseGlob splits a pattern into literal text, [ranges] and {sets}, without
// expanding anything.
func parseGlob(p string) ([]globPart, error) {
	var parts []globPart
	var lit []byte
	litOff := 0
	addLit := func(off int, s string) {
		if len(lit) == 0 {
			litOff = off
		}
		lit = append(lit, s...)
	}
	flush := func() {
		if len(lit) > 0 {
			parts = append(parts, globPart{off: litOff, lit: string(lit)})
			lit = lit[:0]
		}
	}
	for i := 0; i < len(p); {
		switch c := p[i]; c {
		case '\\':
			if i+1 < len(p) && isGlobMeta(p[i+1]) {
				addLit(i, p[i+1:i+2])
				i += 2
			} else {
				addLit(i, p[i:i+1])
				i++
			}
		case '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end < 0 {
				return nil, &GlobError{i, "unterminated [: missing ]"}
			}
			body := p[i+1 : i+1+end]
			next := i + end + 2
			if isLiteralBracket(body) {
				addLit(i, p[i:next])
				i = next
				continue
			}
			r, err := parseRange(body, i)
			if err != nil {
				return nil, err
			}
			flush()
			parts = append(parts, globPart{off: i, rng: r})
			i = next
		case '{':
			set, next, err := parseSet(p, i)
			if err != nil {
				return nil, err
			}
			flush()
			parts = append(parts, globPart{off: i, set: set})
			i = next
		case ']', '}':
			return nil, &GlobError{i, fmt.Sprintf("unexpected %c (escape it as \\%c)", c, c)}
		default:
			addLit(i, p[i:i+1])
			i++
		}
	}
	flush()
	return parts, nil
}

// isLiteralBracket reports whether [body] is kept as it is, like curl does:
// "[]" (as in a PHP-style query "ids[]=1") and an IPv6 address such as
// "[::1]" in "http://[::1]:8080/". Neither can be a range, which always has
// a '-' and no ':' before it.
func isLiteralBracket(body string) bool {
	if body == "" {
		return true
	}
	a, err := netip.ParseAddr(body)
	return err == nil && a.Is6()
}

// parseSet parses the {set} whose brace is at p[open]. It returns the
// elements and the offset just after the closing brace. Inside a set, a
// backslash escapes a bracket, a brace or a comma.
func parseSet(p string, open int) ([]string, int, error) {
	var set []string
	var cur []byte
	for i := open + 1; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 < len(p) && (isGlobMeta(p[i+1]) || p[i+1] == ',') {
				i++
			}
			cur = append(cur, p[i])
		case '{', '[':
			return nil, 0, &GlobError{i, fmt.Sprintf("%c inside a set: sets and ranges do not nest (escape it as \\%c)", c, c)}
		case ']':
			return nil, 0, &GlobError{i, "unexpected ] inside a set (escape it as \\])"}
		case ',':
			set = append(set, string(cur))
			cur = cur[:0]
		case '}':
			if i == open+1 {
				return nil, 0, &GlobError{open, "empty set {}"}
			}
			return append(set, string(cur)), i + 1, nil
		default:
			cur = append(cur, c)
		}
	}
	return nil, 0, &GlobError{open, "unterminated {: missing }"}
}

// parseRange parses the body of [body], whose bracket is at offset off.
func parseRange(body string, off int) (*rangeSpec, error) {
	bad := func(format string, args ...any) error {
		return &GlobError{off, fmt.Sprintf("range [%s]: ", body) + fmt.Sprintf(format, args...)}
	}
	spec, stepText, hasStep := strings.Cut(body, ":")
	a, b, ok := strings.Cut(spec, "-")
	if !ok || a == "" || b == "" {
		return nil, bad("want [start-end] or [start-end:step], such as [1-25], [001-100], [a-z] or [1-100:10]")
	}
	r := &rangeSpec{step: 1}
	if hasStep {
		st, err := strconv.ParseUint(stepText, 10, 63)
		if err != nil || st == 0 {
			return nil, bad("step %q must be a positive integer", stepText)
		}
		r.step = st
	}
	kindA, kindB := rangeEndKind(a), rangeEndKind(b)
	switch {
	case kindA == endLetter && kindB == endLetter:
		if isLower(a[0]) != isLower(b[0]) {
			return nil, bad("mixes lower and upper case letters")
		}
		r.letters, r.start, r.end = true, uint64(a[0]), uint64(b[0])
	case kindA == endNumber && kindB == endNumber:
		var err error
		if r.start, err = strconv.ParseUint(a, 10, 63); err != nil {
			return nil, bad("start %s is too large", a)
		}
		if r.end, err = strconv.ParseUint(b, 10, 63); err != nil {
			return nil, bad("end %s is too large", b)
		}
		if len(a) > 1 && a[0] == '0' {
			r.width = len(a)
		}
	case kindA != endOther && kindB != endOther:
		return nil, bad("mixes a letter and a number: want two numbers or two letters")
	default:
		return nil, bad("want two numbers or two letters, such as [1-25] or [a-z]")
	}
	if r.start > r.end {
		return nil, bad("start is after end")
	}
	return r, nil
}

const (
	endOther = iota
	endLetter
	endNumber
)

// rangeEndKind classifies one end of a range: a single ASCII letter, a run
// of ASCII digits, or something else.
func rangeEndKind(s string) int {
	if len(s) == 1 && (isLower(s[0]) || 'A' <= s[0] && s[0] <= 'Z') {
		return endLetter
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return endOther
		}
	}
	return endNumber
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// mulSat multiplies, saturating at math.MaxInt64.
func mulSat(a, b uint64) uint64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// globTotal returns how many values parts expand to, saturating at
// math.MaxInt64.
func globTotal(parts []globPart) uint64 {
	total := uint64(1)
	for i := range parts {
		total = mulSat(total, parts[i].count())
	}
	return total
}

// GlobCount returns how many values ExpandGlob would return for pattern,
// without expanding it and whatever the limit. A count too large for an
// int64 is reported as math.MaxInt64.
func GlobCount(pattern string) (int64, error) {
	parts, err := parseGlob(pattern)
	if err != nil {
		return 0, err
	}
	return int64(globTotal(parts)), nil
}

// ExpandGlob expands a curl-style URL glob into every value it names:
//
//   - a numeric range [1-25], zero-padded to the width of its start when
//     the start has a leading zero ([001-100] gives 001 ... 100), with an
//     optional step ([1-100:10] gives 1, 11, ... 91);
//   - a letter range [a-z] or [A-F], also with an optional step ([a-z:2]);
//   - a set {one,two,three}, whose elements may be empty ({,s} gives "" and
//     "s") and may hold \, for a literal comma.
//
// Several ranges and sets give their cartesian product, the leftmost varying
// slowest, as curl does: a[1-2]b[1-3] gives a1b1, a1b2, a1b3, a2b1, a2b2,
// a2b3. \[, \], \{ and \} stand for a literal bracket or brace; "[]" and an
// IPv6 address in brackets, as in http://[::1]:8080/, are kept literally.
//
// max limits the number of values; max <= 0 means MaxValues. The count is
// checked before anything is expanded, so a pattern over the limit costs no
// memory. Errors are *GlobError. The returned strings share one backing
// allocation.
func ExpandGlob(pattern string, max int) ([]string, error) {
	limit := uint64(MaxValues)
	if max > 0 {
		limit = uint64(max)
	}
	parts, err := parseGlob(pattern)
	if err != nil {
		return nil, err
	}
	total := globTotal(parts)
	if total > limit {
		// Point at the range or set that takes the product over the limit.
		n, off := uint64(1), 0
		for i := range parts {
			if n = mulSat(n, parts[i].count()); n > limit {
				off = parts[i].off
				break
			}
		}
		msg := fmt.Sprintf("pattern expands to %d values, more than the limit of %d", total, limit)
		if total == math.MaxInt64 {
			msg = fmt.Sprintf("pattern expands to more than %d values, the limit is %d", uint64(math.MaxInt64), limit)
		}
		return nil, &GlobError{off, msg}
	}
	n := int(total)

	// Format every range and set value once, and size the output exactly:
	// each value of a part with c values appears n/c times.
	size := uint64(0)
	for i := range parts {
		p := &parts[i]
		switch {
		case p.set != nil:
			p.alts = p.set
		case p.rng != nil:
			p.alts = p.rng.values()
		default:
			size = min(size+mulSat(uint64(len(p.lit)), total), math.MaxInt64)
			continue
		}
		sum := 0
		for _, a := range p.alts {
			sum += len(a)
		}
		size = min(size+mulSat(uint64(sum), total/uint64(len(p.alts))), math.MaxInt64)
	}
	if size > math.MaxInt/2 { // only with a huge max and a long pattern
		return nil, &GlobError{0, fmt.Sprintf("pattern expands to %d values of too many bytes in all", n)}
	}

	// Count like an odometer, the rightmost varying part turning fastest.
	var b strings.Builder
	b.Grow(int(size))
	ends := make([]int, n)
	idx := make([]int, len(parts))
	for v := range n {
		for k := range parts {
			if p := &parts[k]; p.alts != nil {
				b.WriteString(p.alts[idx[k]])
			} else {
				b.WriteString(p.lit)
			}
		}
		ends[v] = b.Len()
		for k := len(parts) - 1; k >= 0; k-- {
			if parts[k].alts == nil {
				continue
			}
			if idx[k]++; idx[k] < len(parts[k].alts) {
				break
			}
			idx[k] = 0
		}
	}
	all := b.String()
	out := make([]string, n)
	start := 0
	for v, end := range ends {
		out[v] = all[start:end]
		start = end
	}
	return out, nil
}
