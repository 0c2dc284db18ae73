package monitor

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// This file reads the two text formats that Prometheus scrapes: the text
// exposition format 0.0.4 and OpenMetrics 1.0. (prometheus/common's expfmt
// parses only the former: it rejects OpenMetrics' exemplars and its
// unknown, info, stateset and gaugehistogram types.) Only what a monitor
// needs is kept: sample names, labels and values, and the family types of
// # TYPE lines. Metric names in quotes (the UTF-8 syntax of newer formats)
// are skipped.

// labelPair is one label of a sample or a selector.
type labelPair struct{ name, value string }

// expoSample is one sample line of an exposition.
type expoSample struct {
	name   string
	labels []labelPair
	value  float64
}

// parseExposition reads an exposition and returns the samples whose name is
// in wanted, and the type of every family declared by a # TYPE line.
func parseExposition(r io.Reader, wanted map[string]bool) ([]expoSample, map[string]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var out []expoSample
	types := map[string]string{}
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if line[0] == '#' {
			if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
				types[f[2]] = f[3]
			}
			continue
		}
		name, rest := splitName(line)
		if !wanted[name] {
			continue
		}
		labels, rest, err := parseLabels(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		f := strings.Fields(rest) // value [timestamp] [# exemplar]
		if len(f) == 0 {
			return nil, nil, fmt.Errorf("line %d: %s has no value", lineNo, name)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %s: value %q is not a number", lineNo, name, f[0])
		}
		out = append(out, expoSample{name: name, labels: labels, value: v})
	}
	return out, types, sc.Err()
}

// splitName splits a sample line or a selector after its metric name.
func splitName(s string) (name, rest string) {
	i := 0
	for i < len(s) && isNameByte(s[i], i) {
		i++
	}
	return s[:i], s[i:]
}

func isNameByte(c byte, i int) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9'
}

// parseLabels parses an optional {name="value",...} at the start of s and
// returns the rest. Values may hold the escapes \\, \" and \n.
func parseLabels(s string) ([]labelPair, string, error) {
	s = strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(s, "{") {
		return nil, s, nil
	}
	s = s[1:]
	var labels []labelPair
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, "", fmt.Errorf("label without a value in %q", s)
		}
		name := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		if !strings.HasPrefix(s, `"`) {
			return nil, "", fmt.Errorf("label %s: value not quoted", name)
		}
		var v strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				if s[i] == 'n' {
					v.WriteByte('\n')
					continue
				}
			}
			v.WriteByte(s[i])
		}
		if i == len(s) {
			return nil, "", fmt.Errorf("label %s: unterminated value", name)
		}
		labels = append(labels, labelPair{name, v.String()})
		s = strings.TrimLeft(s[i+1:], " \t")
		s = strings.TrimPrefix(s, ",")
	}
}

// selector picks series from an exposition: a metric name and the labels
// that a series must have (others may be there too). A selector naming a
// counter yields the per-second rate of the sum of its series; any other,
// the sum.
type selector struct {
	text   string
	name   string
	labels []labelPair
}

func parseSelector(text string) (selector, error) {
	t := strings.TrimSpace(text)
	name, rest := splitName(t)
	labels, rest, err := parseLabels(rest)
	if err == nil && (name == "" || strings.TrimSpace(rest) != "") {
		err = fmt.Errorf("expected name or name{label=\"value\",...}")
	}
	if err != nil {
		return selector{}, fmt.Errorf("series %q: %w", text, err)
	}
	return selector{text: t, name: name, labels: labels}, nil
}

func (s selector) matches(x expoSample) bool {
	if x.name != s.name {
		return false
	}
	for _, want := range s.labels {
		found := false
		for _, l := range x.labels {
			if l == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// isCounter tells whether a sample name is a counter: declared so (by its
// own name, or by its family's in OpenMetrics, where the samples of counter
// foo are foo_total), the _sum, _count or _bucket of a histogram or summary,
// or undeclared and named *_total.
func isCounter(name string, types map[string]string) bool {
	if t, ok := types[name]; ok {
		return t == "counter"
	}
	for _, suffix := range []string{"_total", "_sum", "_count", "_bucket"} {
		family, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		switch types[family] {
		case "counter":
			return suffix == "_total"
		case "histogram", "summary":
			return suffix != "_total"
		}
	}
	return strings.HasSuffix(name, "_total")
}
