package plan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a problem at a position of a plan file.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Warn is the problem said as a warning: "file:line:col: warning: what".
func (e *Error) Warn() string {
	w := *e
	w.Msg = "warning: " + e.Msg
	return w.Error()
}

// ErrorList is every problem found in a plan, in file order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// CommandLine reports whether every error is of a value given on the
// command line (--set, --vus ...), not of the plan file.
func (l ErrorList) CommandLine() bool {
	for _, e := range l {
		if !strings.HasPrefix(e.File, "--") {
			return false
		}
	}
	return len(l) > 0
}

// sorted orders the list by file (the plan's first) and position, and drops repeats: a node reached
// through many aliases (a "billion laughs" plan) is reported once.
func (l ErrorList) sorted(plan string) ErrorList {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File { // the plan's first, then its included files'
			return l[i].File == plan || l[j].File != plan && l[i].File < l[j].File
		}
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Col < l[j].Col
	})
	seen := make(map[Error]bool, len(l))
	out := l[:0]
	for _, e := range l {
		if !seen[*e] {
			seen[*e] = true
			out = append(out, e)
		}
	}
	return out
}

// MaxQuoted is how many characters of a value a message quotes: a value
// longer, or of several lines, is quoted to that length of its first line,
// then its length is said, so that a file included by mistake (release
// notes, a binary) is not echoed whole into the error; its place says
// where it is.
const MaxQuoted = 60

// quoted is s in Go's quotes, cut to MaxQuoted characters of its first
// line ("abc"... (10000 bytes)).
func quoted(s string) string {
	line, _, multi := strings.Cut(s, "\n")
	if !multi && utf8.RuneCountInString(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%.*q... (%d bytes)", MaxQuoted, line, len(s))
}

// suggest returns ` (did you mean "x"?)` when one of the candidates is close to word.
func suggest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(word) > 8 {
		limit = 3
	}
	if best != "" && bestD <= limit {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
