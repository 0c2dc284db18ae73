package monitor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// escapeLabel writes a label value as an exposition does: \\, \" and \n.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// A scraped exposition of any text parses or fails without panicking; a
// sample as an exporter writes it (any label value, escaped; any float)
// reads back exactly, and the selector naming it matches it.
func FuzzExposition(f *testing.F) {
	f.Add(fmt.Sprintf(promText, 10, 20, 1.5), "queue", `a "quoted" name`, 2.5)
	f.Add(fmt.Sprintf(promOpenMetrics, 10, 20, 3.0), "code", "back\\slash\nnew line", math.Inf(-1))
	f.Add("x{a=\"\\\"}\n# TYPE\nx{a=\"1\",} 1e400\n", "le", "+Inf", 0.0)
	f.Fuzz(func(t *testing.T, text, label, value string, v float64) {
		wanted := map[string]bool{"http_requests_total": true, "queue_depth": true, "x": true, "latency_seconds_bucket": true}
		samples, types, err := parseExposition(strings.NewReader(text), wanted)
		if err == nil {
			for _, s := range samples {
				if !wanted[s.name] {
					t.Fatalf("sample %q was not asked for", s.name)
				}
				isCounter(s.name, types)
			}
		}
		if _, err := parseSelector(text); err == nil {
			_ = err // a selector from any text parses or fails
		}
		// Round trip of one sample.
		name := "fuzz_metric_total"
		if !validLabelName(label) || strings.ContainsRune(value, '\r') || math.IsNaN(v) {
			return
		}
		line := fmt.Sprintf("# TYPE fuzz_metric counter\n%s{%s=\"%s\",job=\"j\"} %s 1700000000000\n", name, label, escapeLabel(value), strconv.FormatFloat(v, 'g', -1, 64))
		got, types, err := parseExposition(strings.NewReader(line), map[string]bool{name: true})
		if err != nil || len(got) != 1 {
			t.Fatalf("%q: %d samples, %v", line, len(got), err)
		}
		s := got[0]
		if s.value != v || len(s.labels) != 2 || s.labels[0] != (labelPair{label, value}) || s.labels[1] != (labelPair{"job", "j"}) {
			t.Fatalf("%q read as %+v", line, s)
		}
		if !isCounter(name, types) {
			t.Fatalf("%s declared a counter (its family's TYPE) is not one", name)
		}
		sel, err := parseSelector(fmt.Sprintf("%s{%s=\"%s\"}", name, label, escapeLabel(value)))
		if err != nil || !sel.matches(s) {
			t.Fatalf("selector for %+v: %v, matches %v", s, err, err == nil && sel.matches(s))
		}
	})
}

func validLabelName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
