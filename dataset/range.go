package dataset

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxFormatWidth bounds the width and precision of a Range format, so that a
// typo such as "%0100000000d" cannot make every value huge.
const maxFormatWidth = 64

// Range returns the integers from, from+step, ... up to and including to
// (down to, with a negative step), each formatted with format.
//
// step must not be 0 and must move from toward to; when from == to the one
// value is returned whatever the step's sign. format is an fmt format with
// exactly one integer verb (%d, %x, %X, %o, %O, %b or %v, with flags, width
// and precision), such as "%05d" or "dev-%d"; "" means "%d". At most
// MaxValues values are returned.
func Range(from, to, step int64, format string) ([]string, error) {
	if step == 0 {
		return nil, fmt.Errorf("range step must not be 0")
	}
	if to > from && step < 0 || to < from && step > 0 {
		return nil, fmt.Errorf("range from %d to %d: step %d moves away from the end", from, to, step)
	}
	// Count in uint64, where the distance and |step| cannot overflow.
	dist := uint64(to) - uint64(from)
	abs := uint64(step)
	if to < from {
		dist = uint64(from) - uint64(to)
		abs = -abs
	}
	if dist/abs >= MaxValues {
		return nil, fmt.Errorf("range from %d to %d by %d has more than %d values", from, to, step, MaxValues)
	}
	if err := checkIntFormat(format); err != nil {
		return nil, err
	}
	n := int(dist/abs) + 1
	out := make([]string, n)
	v := from
	for i := range n {
		if format == "" {
			out[i] = strconv.FormatInt(v, 10)
		} else {
			out[i] = fmt.Sprintf(format, v)
		}
		v += step // may wrap after the last value, which is never used
	}
	return out, nil
}

// checkIntFormat checks that format has exactly one verb, an integer one,
// and no argument indexes or * widths.
func checkIntFormat(format string) error {
	if format == "" {
		return nil
	}
	bad := func(why string) error {
		return fmt.Errorf("range format %q: %s; want one integer verb such as %%d or %%05d", format, why)
	}
	verbs := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue // %% is a literal percent sign
		}
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		for _, part := range []string{"width", "precision"} {
			if part == "precision" {
				if i >= len(format) || format[i] != '.' {
					break
				}
				i++
			}
			j := i
			for i < len(format) && '0' <= format[i] && format[i] <= '9' {
				i++
			}
			if w, _ := strconv.Atoi(format[j:i]); w > maxFormatWidth || i-j > 3 {
				return bad(fmt.Sprintf("%s %s is over %d", part, format[j:i], maxFormatWidth))
			}
		}
		if i >= len(format) {
			return bad("it ends inside a verb")
		}
		switch c, _ := utf8.DecodeRuneInString(format[i:]); c {
		case 'd', 'x', 'X', 'o', 'O', 'b', 'v':
			verbs++
		case '*', '[':
			return bad("argument indexes and * widths are not supported")
		default:
			return bad(fmt.Sprintf("%%%c is not an integer verb", c))
		}
	}
	if verbs != 1 {
		return bad(fmt.Sprintf("it has %d verbs", verbs))
	}
	return nil
}
