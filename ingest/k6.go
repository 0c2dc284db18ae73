package ingest

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/k6out"
	"github.com/perflab/perflab/metrics"
)

// K6 is a k6 result stream's points as a Source. Each request's
// http_req_duration (or grpc_req_duration) is a step of its scenario,
// named by its name tag (k6's default is the URL), failed as its
// expected_response tag says, of the kind its status or k6's error code
// tells (K6Kind); group_duration is a transaction named by the group's
// path, a script's own time trends transactions named by the metric,
// iteration_duration each scenario's iterations. Read with K6Metrics'
// metrics.
func K6(r *k6out.Reader) Source {
	return &k6{r: r, checks: map[string]*[2]int64{}, dropped: map[string]int64{}}
}

// K6Metrics says which metrics K6 reads: what else a stream holds is
// counted and left, each metric said in the run's origin. times are a
// script's own Trends of times that the file does not describe (k6's
// CSV does not say a metric's type; its JSON does).
func K6Metrics(times ...string) func(k6out.Metric) bool {
	return func(m k6out.Metric) bool {
		switch m.Name {
		case "http_req_duration", "grpc_req_duration", "group_duration", "iteration_duration", "checks", "dropped_iterations", "vus":
			return true
		}
		return (m.Time() || m.Type == "" && slices.Contains(times, m.Name)) && !k6out.Builtin(m.Name)
	}
}

type k6 struct {
	r *k6out.Reader
	// checks are each check's passes and fails.
	checks  map[string]*[2]int64
	dropped map[string]int64 // by scenario
	vus     float64          // the most VUs
}

func (k *k6) Next() (Sample, error) {
	for {
		p, err := k.r.Next()
		if err != nil {
			return Sample{}, err
		}
		scenario := cmp.Or(p.Tags.Scenario, "default")
		switch p.Metric {
		case "checks":
			c := k.checks[p.Tags.Check]
			if c == nil {
				c = new([2]int64)
				k.checks[p.Tags.Check] = c
			}
			if p.Value != 0 {
				c[0]++
			} else {
				c[1]++
			}
			continue
		case "dropped_iterations":
			k.dropped[scenario] += int64(p.Value)
			continue
		case "vus":
			k.vus = max(k.vus, p.Value)
			continue
		}
		if p.Value < 0 || math.IsNaN(p.Value) || p.Value > 1e12 {
			return Sample{}, &k6out.Error{File: k.r.Name(), Line: p.Line, Err: fmt.Errorf("%s of %v ms is not a duration", p.Metric, p.Value)}
		}
		d := time.Duration(math.Round(p.Value * 1e6))
		s := Sample{Start: p.Time.Add(-d), Elapsed: d, Scenario: scenario, Kind: metrics.KindTransaction, Thread: p.Tags.VU}
		switch p.Metric {
		case "http_req_duration", "grpc_req_duration":
			s.Kind, s.Name, s.Err = metrics.KindStep, cmp.Or(p.Tags.Name, "(no name)"), K6Kind(p.Metric, p.Tags)
		case "group_duration":
			s.Name = strings.TrimPrefix(p.Tags.Group, "::")
		case "iteration_duration":
			s.Kind, s.Name = metrics.KindScenario, scenario
			if g := strings.TrimPrefix(p.Tags.Group, "::"); g == "setup" || g == "teardown" {
				s.Scenario, s.Name = g, g
			}
		default: // a script's own Trend of times
			s.Name = p.Metric
		}
		return s, nil
	}
}

// K6Kind is the error kind of a request of a k6 stream: OK if it got the
// response the script expected (the expected_response tag; before k6
// 0.31, a status of 200-399); else the kind of its status, or for a
// request with no response, of k6's error code, as perflab gives the
// same failure of its own.
func K6Kind(metric string, t k6out.Tags) metrics.ErrKind {
	status, _ := strconv.Atoi(t.Status)
	if metric == "grpc_req_duration" { // the status is a gRPC code
		if status == 0 && t.ErrorCode != "" {
			return metrics.Other // no status: the call failed before one
		}
		return metrics.GRPCKind(uint32(status))
	}
	switch t.ExpectedResponse {
	case "true":
		return metrics.OK
	case "":
		if t.ErrorCode == "" && status >= 200 && status < 400 {
			return metrics.OK
		}
	}
	if status > 0 {
		return metrics.StatusKind(status)
	}
	code, _ := strconv.Atoi(t.ErrorCode)
	switch {
	case code == 1050:
		return metrics.Timeout
	case code == 1020:
		return metrics.NotSent // an invalid URL
	case code >= 1100 && code < 1200:
		return metrics.DNS
	case code == 1201 || code == 1202:
		return metrics.Write
	case code == 1211 || code == 1210 || code == 1213:
		return metrics.Connect
	case code == 1212:
		return metrics.ConnRefused
	case code == 1220:
		return metrics.ConnReset
	case code >= 1300 && code < 1400:
		return metrics.TLS
	case code >= 1600 && code < 1700: // HTTP/2 stream and connection errors
		return metrics.Read
	}
	return metrics.Other
}

// Notes say what the stream held that the run does not: its checks,
// dropped iterations, VUs and the metrics left.
func (k *k6) Notes() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(k.checks)) {
		c := k.checks[name]
		out = append(out, fmt.Sprintf("check %q: %d passed, %d failed (k6 counts checks apart from requests)", name, c[0], c[1]))
	}
	for _, sc := range slices.Sorted(maps.Keys(k.dropped)) {
		out = append(out, fmt.Sprintf("scenario %s: %d iterations dropped (an arrival rate k6 could not keep with its VUs)", sc, k.dropped[sc]))
	}
	if k.vus > 0 {
		out = append(out, fmt.Sprintf("VUs: k6 ran up to %d in all (its vus metric), and does not say how many each scenario had unless its points are tagged with vu", int64(k.vus)))
	}
	skipped := k.r.Skipped()
	for _, name := range slices.Sorted(maps.Keys(skipped)) {
		m := k.r.Metric(name)
		what := "a script's own metric"
		if k6out.Builtin(name) {
			what = "k6's"
		}
		kind := m.Type
		if kind == "" {
			kind = "of a type the file does not say"
		}
		out = append(out, fmt.Sprintf("%s: %d points (%s, %s)", name, skipped[name], what, kind))
	}
	return out
}
