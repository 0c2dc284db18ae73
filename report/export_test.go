package report

import (
	"fmt"
	"time"

	"github.com/perflab/perflab/results"
)

// Slug is the slug of a name, as a chart's.
var Slug = slug

// IncidentDrift is a drift verdict of a stage (named stage, from start,
// span seconds long) that did not degrade but had two incidents, at the
// seconds into the stage a and b: an error burst (503s, a third of the
// requests of "get"), then a latency excursion with a fall of
// throughput that the generator's host could explain (suspect). Its
// throughput and error ratio are steady series over the stage, drawn as
// drift charts.
func IncidentDrift(stage string, start time.Time, span float64, a, b [2]float64) *results.Drift {
	clock := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	var tp, er [][2]float64
	for i := range 60 {
		x := span * float64(i) / 60
		tp, er = append(tp, [2]float64{x, 100}), append(er, [2]float64{x, 0})
	}
	when := func(r [2]float64) string {
		return fmt.Sprintf("from %s to %s (%s to %s, %s)", elapsedText(r[0]), elapsedText(r[1]), clock(r[0]).Format("15:04:05"), clock(r[1]).Format("15:04:05"), elapsedText(r[1]-r[0]))
	}
	burst := results.Incident{Stage: stage, StartS: a[0], EndS: a[1], Elapsed: a[0], Start: clock(a[0]), End: clock(a[1]),
		Effects: []results.IncidentEffect{{Series: "error ratio of get", Kind: "errors", Operation: "get", Unit: "%", Baseline: 0, Level: 33.33, Peak: 50,
			Failures: 120, Message: "HTTP 503 Service Unavailable"}},
		Sentence: when(a) + ": error ratio of get 33.33% (worst 50.00%), 120 failures (most often: HTTP 503 Service Unavailable), then back to 0.00%"}
	slow := results.Incident{Stage: stage, StartS: b[0], EndS: b[1], Elapsed: b[0], Start: clock(b[0]), End: clock(b[1]),
		Effects: []results.IncidentEffect{
			{Series: "p95 of get", Kind: "latency", Operation: "get", Unit: "ms", Baseline: 20, Level: 180, Peak: 240},
			{Series: "throughput", Kind: "throughput", Unit: "/s", Baseline: 100, Level: 40, Peak: 31}},
		Suspect: "run queue of generator's host at 24 tasks (8 tasks around it)",
		Sentence: when(b) + ": p95 of get 180.00 ms (worst 240.00 ms), then back to 20.00 ms; throughput 40/s (worst 31/s), then back to 100/s; " +
			"meanwhile the generator's host: run queue of generator's host at 24 tasks (8 tasks around it) (suspect: the generator's as likely as the system's)"}
	return &results.Drift{Verdict: "no lasting degradation: 2 series steady; 2 incidents: " + burst.Sentence + "; " + slow.Sentence,
		Method: "each series of at least 12 intervals is tested (...)", Alpha: 0.01, MinEffect: 0.2, MinErrorRise: 0.01, Tests: 2,
		Series: []results.DriftSeries{
			{Stage: stage, Name: "throughput", Kind: "throughput", Unit: "/s", Values: 60, SpanS: span, Start: 100, End: 100, P: 1, PAdjusted: 1,
				Verdict: results.DriftSteady, Sentence: "throughput steady: 100/s at the start, 100/s at the end", Points: tp},
			{Stage: stage, Name: "error ratio", Kind: "errors", Unit: "%", Values: 60, SpanS: span, P: 1, PAdjusted: 1,
				Verdict: results.DriftSteady, Sentence: "error ratio steady: 0.00% at the start, 0.00% at the end", Points: er},
		},
		Incidents: []results.Incident{burst, slow}}
}
