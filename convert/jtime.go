package convert

import (
	"strconv"
	"strings"
	"time"
)

// javaTimeLayout is a pattern of Java's DateTimeFormatter (what JMeter's
// __time formats with) as a layout of Go's time package, which now().Format
// writes: the fields Go has (yyyy 2006, MM 01, dd 02, HH 15, hh 03, mm 04,
// ss 05, SSS after a dot .000, a PM, EEE Mon, MMM Jan, X Z07, XXX Z07:00,
// Z -0700, z MST ...) and quoted text. why says what it cannot say (a
// letter Go has no field for, such as H without its second H, or text Go
// would read as a field); approx what it says differently (an offset of
// X without its minutes).
func javaTimeLayout(pattern string) (layout, why, approx string) {
	var b strings.Builder
	// What each part writes of a time with fields all different: the
	// layout must write the same, or Go read a part otherwise.
	ref := time.Date(2009, 11, 17, 20, 34, 58, 651387237, time.FixedZone("", 5*3600+30*60))
	var want strings.Builder
	for i := 0; i < len(pattern); {
		ch := pattern[i]
		switch {
		case ch == '\'' && i+1 < len(pattern) && pattern[i+1] == '\'':
			b.WriteByte('\'') // '' is a quote
			want.WriteByte('\'')
			i += 2
		case ch == '\'':
			// Quoted text, in which '' is a quote.
			j := i + 1
			var lit strings.Builder
			for ; j < len(pattern); j++ {
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						lit.WriteByte('\'')
						j++
						continue
					}
					break
				}
				lit.WriteByte(pattern[j])
			}
			if j >= len(pattern) {
				return "", "an unclosed quote", ""
			}
			if w := layoutText(lit.String()); w != "" {
				return "", w, ""
			}
			b.WriteString(lit.String())
			want.WriteString(lit.String())
			i = j + 1
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			n := 1
			for i+n < len(pattern) && pattern[i+n] == ch {
				n++
			}
			f, ok := javaField(ch, n, b.String())
			if !ok {
				return "", "the field " + strconv.Quote(pattern[i:i+n]) + ", which Go's layouts do not have", ""
			}
			if ch == 'X' && n == 1 {
				approx = "its offset X is written without minutes (Java adds them to an offset of half an hour)"
			}
			if ch == 'S' {
				want.WriteString(ref.Format("." + f)[1:])
			} else {
				want.WriteString(ref.Format(f))
			}
			b.WriteString(f)
			i += n
		case ch == '[' || ch == ']' || ch == '#' || ch == '{' || ch == '}':
			return "", "the reserved character " + strconv.Quote(string(ch)), ""
		default:
			if w := layoutText(string(ch)); w != "" {
				return "", w, ""
			}
			b.WriteByte(ch)
			want.WriteByte(ch)
			i++
		}
	}
	if ref.Format(b.String()) != want.String() {
		return "", "its parts run together in Go's layout " + strconv.Quote(b.String()), ""
	}
	return b.String(), "", approx
}

// javaField is a run of n letters ch of a DateTimeFormatter pattern as Go
// writes it, after the layout so far.
func javaField(ch byte, n int, before string) (string, bool) {
	pick := func(forms ...string) (string, bool) {
		if n-1 < len(forms) && forms[n-1] != "" {
			return forms[n-1], true
		}
		return "", false
	}
	switch ch {
	case 'y', 'u':
		if n == 2 {
			return "06", true
		}
		return "2006", true
	case 'M', 'L':
		return pick("1", "01", "Jan", "January")
	case 'd':
		return pick("2", "02")
	case 'D':
		return pick("", "", "002")
	case 'E':
		return pick("Mon", "Mon", "Mon", "Monday")
	case 'a':
		return pick("PM")
	case 'H':
		return pick("", "15")
	case 'h':
		return pick("3", "03")
	case 'm':
		return pick("4", "04")
	case 's':
		return pick("5", "05")
	case 'S':
		// Go writes a fraction after a dot or a comma only.
		if strings.HasSuffix(before, ".") || strings.HasSuffix(before, ",") {
			return strings.Repeat("0", n), true
		}
	case 'X':
		return pick("Z07", "Z0700", "Z07:00", "Z070000", "Z07:00:00")
	case 'x':
		return pick("-07", "-0700", "-07:00", "-070000", "-07:00:00")
	case 'Z':
		return pick("-0700", "-0700", "-0700", "", "Z07:00")
	case 'z':
		return pick("MST", "MST", "MST")
	}
	return "", false
}

// layoutText says why text of a pattern cannot stand in a Go layout as it
// is: a digit, or letters Go reads as a field.
func layoutText(s string) string {
	if strings.ContainsAny(s, "0123456789") {
		return "the text " + strconv.Quote(s) + " holds digits, which Go's layouts read as fields"
	}
	for _, f := range []string{"Jan", "Mon", "MST", "PM", "pm", "Z07", "-07", "_2"} {
		if strings.Contains(s, f) {
			return "the text " + strconv.Quote(s) + " holds " + f + ", a field of Go's layouts"
		}
	}
	return ""
}
