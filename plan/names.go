package plan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names (the plan's, its scenarios', steps', transactions', monitors',
// buses' and simulators', a run's labels) are single lines: they go into
// report lines, CSV rows, comments of generated files and Kubernetes
// objects, where a line break would start a line, or a document, of its
// own.

// notInName reports whether a name may not hold r: a control character
// (C0, DEL, C1: line feed, carriage return, NUL, tab, NEL...) or a Unicode
// line or paragraph separator.
func notInName(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// badInName is the index of the first character of s a name may not hold
// (notInName, or a byte that is not UTF-8), with the character and its
// size; -1 if none.
func badInName(s string) (int, rune, int) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if notInName(r) || r == utf8.RuneError && size == 1 {
			return i, r, size
		}
		i += size
	}
	return -1, 0, 0
}

// CheckName says what makes s unfit for a name (what is a name of, such
// as "label"), nil if nothing does.
func CheckName(what, s string) error {
	i, r, size := badInName(s)
	if i < 0 {
		return nil
	}
	kind := "a control character"
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Errorf("%s %.60q is not UTF-8: a name is one line of text", what, s)
	case r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029' || r == '\v' || r == '\f':
		kind = "a line break"
	}
	return fmt.Errorf("%s %.60q holds %s (U+%04X): a name is one line, without control characters", what, s, kind, r)
}

// SingleLine is s with every character a name may not hold (CheckName)
// replaced by a space, and whether any was: names taken from another
// tool's files (a JMeter plan, an OpenAPI description, a recording) are
// made names so.
func SingleLine(s string) (string, bool) {
	if i, _, _ := badInName(s); i < 0 {
		return s, false
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if notInName(r) || r == utf8.RuneError && size == 1 {
			r = ' '
		}
		b.WriteRune(r)
		s = s[size:]
	}
	return b.String(), true
}
