package results

import (
	"fmt"
	"time"
)

// Drift is a run's longevity verdict: did the system degrade over time?
// Each series a longevity verdict needs (each stage's throughput and error
// ratio, each operation's mean and percentiles of latency, each monitored
// resource of the system under test: CPU per transaction, memory, garbage
// collection, statement time) is tested for a trend and for a change of
// level; the run degraded when one of them got worse by at least the
// minimum effect, with a significance that holds for the whole family of
// tests. Package judge makes it (judge.Longevity).
type Drift struct {
	Degraded bool `json:"degraded"`
	// Verdict says it in one sentence, naming what degraded and by how
	// much ("throughput fell 81% from 164/s to 31/s; the change began
	// after 2 s").
	Verdict string `json:"verdict"`
	// Method says how the series were tested: the tests, their
	// thresholds, the correction for the number of tests.
	Method string `json:"method"`
	// Alpha is the family-wise significance level (Holm's correction over
	// the Tests series); MinEffect the smallest relative change that counts,
	// MinErrorRise the smallest rise of an error ratio (absolute: 0.01 is
	// one percentage point).
	Alpha        float64 `json:"alpha"`
	MinEffect    float64 `json:"min_effect"`
	MinErrorRise float64 `json:"min_error_rise"`
	// Tests is the number of series tested: the family of Holm's correction.
	Tests int `json:"tests"`
	// FirstS and LastS are the lengths of the stretches at the start and
	// the end of each stage whose levels are compared (seconds; 0: the
	// first and last tenth of the stage).
	FirstS float64       `json:"first_s"`
	LastS  float64       `json:"last_s"`
	Series []DriftSeries `json:"series"`
	// Floors are the smallest changes of latency that count in each stage
	// (ms, by stage name): the generator's own timing noise, the 90th
	// percentile of the loopback round trips its host monitor timed
	// (median over the stage's intervals). None where it was not timed.
	Floors map[string]float64 `json:"floors,omitempty"`
	// Generator is the load generator's health over time, judged apart:
	// its own series (its host's CPU busy share, the share other
	// processes took, steal, run queue and loopback round trip; perflab's
	// CPU and memory; open models' start delay), never counted against
	// the system.
	Generator *GeneratorHealth `json:"generator,omitempty"`
	// Timeline lines up the changes of every series of the run, the
	// system's and the generator's, first to last; Hint says it in a
	// sentence ("at 2 h 05 time in garbage collection of api +120%, then
	// p95 of check-out +40% at 2 h 06; the generator steady").
	Timeline []DriftEvent `json:"timeline,omitempty"`
	Hint     string       `json:"hint,omitempty"`
	// Incidents are the changes that did not last (an outage, a burst of
	// errors, a latency excursion, a service not ready at the start), all
	// of them, first to last, overlapping ones merged. The level tests
	// judge each series outside its own incidents: a blip is an
	// incident, not a change of level.
	Incidents []Incident `json:"incidents,omitempty"`
}

// Incident is a stretch of a stage in which some of its series were far
// worse than their level around it, and then came back (or had not by the
// stage's end: Ongoing).
type Incident struct {
	Stage string `json:"stage"`
	// StartS and EndS are seconds into the stage, Elapsed the start in
	// seconds into the run; Start and End the clock times.
	StartS  float64   `json:"start_s"`
	EndS    float64   `json:"end_s"`
	Elapsed float64   `json:"elapsed_s"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	// Ongoing: the stage ended before the series came back.
	Ongoing bool `json:"ongoing,omitempty"`
	// Effects are the series that were worse, each with its level.
	Effects []IncidentEffect `json:"effects"`
	// Suspect says what the generator's host did meanwhile when it could
	// explain the incident (other processes took its CPU, its run queue
	// or loopback round trip rose, perflab got less CPU): the generator's
	// doing as likely as the system's. Empty when the generator was
	// steady.
	Suspect string `json:"suspect,omitempty"`
	// Sentence says it: "error ratio of GET b 33.3% from 8 m 00 s to
	// 12 m 01 s (4 m 01 s), then back to 0.00%".
	Sentence string `json:"sentence"`
}

// IncidentEffect is one series' part in an incident: its level around
// the incident (Baseline, the series' median outside its incidents), its
// median during it (Level) and its worst value (Peak), in Unit.
type IncidentEffect struct {
	Series    string  `json:"series"`
	Kind      string  `json:"kind"`
	Operation string  `json:"operation,omitempty"`
	Unit      string  `json:"unit"`
	Baseline  float64 `json:"baseline"`
	Level     float64 `json:"level"`
	Peak      float64 `json:"peak"`
	// Failures counts the failed operations during the incident (an
	// error ratio's), and Message names the operation's most frequent
	// failure over its stage.
	Failures int64  `json:"failures,omitempty"`
	Message  string `json:"message,omitempty"`
}

// GeneratorHealth is the generator's own series over time and a
// sentence: steady, or what changed in it.
type GeneratorHealth struct {
	Steady  bool          `json:"steady"`
	Verdict string        `json:"verdict"`
	Series  []DriftSeries `json:"series"`
}

// DriftEvent is one change on a run's timeline: a series' change of
// level (AtS, seconds into its stage; Elapsed into the run), or a trend
// over its stage (Trend, at the stage's start).
type DriftEvent struct {
	Stage     string  `json:"stage"`
	Series    string  `json:"series"`
	Kind      string  `json:"kind"`
	Generator bool    `json:"generator,omitempty"`
	AtS       float64 `json:"at_s"`
	Elapsed   float64 `json:"elapsed_s"`
	Trend     bool    `json:"trend,omitempty"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	Unit      string  `json:"unit"`
	// Change is After against Before: relative (0.4 is +40%), or, when
	// Points, in points of a ratio (0.01 is one point). It is null where
	// no relative change is defined, a change from 0 ("from 0 to
	// 3,100/s"): Before and After tell it.
	Change  *float64 `json:"change"`
	Points  bool     `json:"points,omitempty"`
	Verdict string   `json:"verdict"`
}

// Verdicts of a drift series: worse, or better, by the minimum effect or
// more and significant; steady; worse or better by that much but not
// significant (inconclusive: more intervals would tell); too short a
// series to judge.
const (
	DriftDegraded     = "degraded"
	DriftImproved     = "improved"
	DriftSteady       = "steady"
	DriftInconclusive = "inconclusive"
	DriftTooShort     = "too_short"
	// DriftSettled: the series changed early in its stage (its first
	// third) and stayed level after: a warm-up, judged from where it
	// settled.
	DriftSettled = "settled"
	// DriftSuspect: the series got worse as degraded would say, at the
	// time the generator's host got busier (other processes' CPU, steal,
	// its run queue, its loopback round trip): the generator's doing, as
	// likely as the system's, not counted against the system.
	DriftSuspect = "suspect"
)

// DriftSeries is one series of a stage over time, and what the tests
// found in it.
type DriftSeries struct {
	Stage string `json:"stage"`
	// Name says what the series is: "throughput", "error ratio", "p95 of
	// GET /item", "memory of db (pss)".
	Name string `json:"name"`
	// Kind is throughput, errors, latency, cpu_per_tx, memory, gc or
	// statements.
	Kind      string `json:"kind"`
	Operation string `json:"operation,omitempty"`
	Monitor   string `json:"monitor,omitempty"`
	// Unit is the values' unit: /s, %, ms, ms/tx or MB.
	Unit string `json:"unit"`
	// Values is the number of intervals in the series, over SpanS seconds.
	Values int     `json:"values"`
	SpanS  float64 `json:"span_s"`
	// Start and End are the series' level at the start and the end of the
	// stage: the median over the compared stretches.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Trend is the Mann-Kendall test of a monotonic trend; Change the
	// largest change of level found, if one was.
	Trend  *DriftTrend  `json:"trend,omitempty"`
	Change *DriftChange `json:"change,omitempty"`
	// P is the series' test of the family: twice the smaller p-value of
	// its trend and its change (Bonferroni over the two), PAdjusted the
	// same after Holm's correction over the series, Significant whether
	// it is below Alpha.
	P           float64 `json:"p"`
	PAdjusted   float64 `json:"p_adjusted"`
	Significant bool    `json:"significant"`
	// Verdict is degraded, improved, steady, settled, suspect,
	// inconclusive or too_short, and Sentence says it.
	Verdict  string `json:"verdict"`
	Sentence string `json:"sentence"`
	// Points are the series over time for charts: [seconds into the
	// stage, value], at most 120 (medians of consecutive intervals).
	Points [][2]float64 `json:"points"`
}

// DriftTrend is a series' trend test.
type DriftTrend struct {
	// P is the test's p-value, its variance corrected for autocorrelation
	// by Correction.
	P          float64 `json:"p"`
	Correction float64 `json:"variance_correction"`
	// SlopePerHour is Sen's slope in the series' unit per hour; none when
	// the series spans too little time for a rate per hour.
	SlopePerHour *float64 `json:"slope_per_hour,omitempty"`
	// OnsetS is where the trend began, in seconds into the stage, when a
	// level then a line fits clearly better than a line from the start
	// (analyze.Onset): a leak that began an hour in. Absent otherwise.
	OnsetS *float64 `json:"onset_s,omitempty"`
}

// DriftChange is a change of a series' level.
type DriftChange struct {
	// AtS is when it began, in seconds into the stage; Before and After
	// the level (medians) on each side.
	AtS    float64 `json:"at_s"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// P is the Mann-Whitney p-value of the split, corrected for the splits
	// tried.
	P float64 `json:"p"`
}

// Value writes a value of the series in its unit: "12.5 ms", "1.2 s",
// "0.50%", "164/s", "112.4 MB".
func (s DriftSeries) Value(v float64) string {
	switch s.Unit {
	case "ms":
		return Human(v)
	case "%":
		return fmt.Sprintf("%.2f%%", v)
	case "/s":
		return fmt.Sprintf("%.3g/s", v)
	case "MB":
		return fmt.Sprintf("%.1f MB", v)
	}
	return fmt.Sprintf("%.3g %s", v, s.Unit)
}
