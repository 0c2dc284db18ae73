package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// What makes an incident: a stretch of a series far worse than its level
// (its median), that then came back. Far worse is, beyond five robust
// standard deviations of the series (1.4826 median absolute deviations):
// a latency twice its level or more (and by more than the generator could
// make of it: four times its timing noise, a scheduler's time slice), a
// throughput halved or less, an error ratio higher by a point or more.
// An incident lasts at least incidentIntervals intervals and a second
// (an error burst: an interval, and incidentFailures failures), its
// stretches apart by at most incidentGap intervals joined.
const (
	incidentSigmas    = 5
	incidentLatency   = 1.0 // relative rise of a latency
	incidentDrop      = 0.5 // relative fall of a throughput
	incidentIntervals = 3
	incidentMinLength = time.Second
	incidentFailures  = 5
	incidentGap       = 2
	// maxVerdictIncidents are the incidents the verdict's sentence
	// names; the rest are counted there and all listed in Incidents.
	maxVerdictIncidents = 3
)

// excursion is a stretch of one series, values i to j inclusive, far
// worse than its level.
type excursion struct {
	s          *series
	i, j       int
	start, end float64 // seconds into the stage
	level      float64 // the median over the stretch
	peak       float64
	failures   int64
	// last: the stretch reaches the series' last value (the stage ended
	// before it did).
	last bool
}

// excursions finds a series' stretches far worse than its level, dt
// seconds an interval.
func (s *series) excursions(dt float64, o LongevityOptions) []excursion {
	n := len(s.v)
	if n < MinDriftValues {
		return nil
	}
	base := analyze.Median(s.v)
	dev := make([]float64, n)
	for i, x := range s.v {
		dev[i] = math.Abs(x - base)
	}
	sigma := 1.4826 * analyze.Median(dev)
	// bad tells whether a value is far worse than the level.
	var bad func(x float64) bool
	switch {
	case s.points:
		rise := max(100*o.MinErrorRise, incidentSigmas*sigma)
		bad = func(x float64) bool { return x-base >= rise && x > 0 }
	case s.lower:
		// However noisy the series, a fall to a tenth of its level is far.
		drop := min(max(incidentDrop*base, incidentSigmas*sigma), 0.9*base)
		bad = func(x float64) bool { return base-x >= drop && drop > 0 }
	default:
		// However noisy, ten times the level is far (past the floors).
		rise := max(min(max(incidentLatency*base, incidentSigmas*sigma), 9*base), 4*s.floor, schedulerSlice)
		bad = func(x float64) bool { return x-base >= rise }
	}
	var out []excursion
	for i := 0; i < n; {
		if !bad(s.v[i]) {
			i++
			continue
		}
		j, gap := i, 0
		for k := i + 1; k < n && gap <= incidentGap; k++ {
			if bad(s.v[k]) {
				j, gap = k, 0
			} else {
				gap++
			}
		}
		e := excursion{s: s, i: i, j: j, start: s.t[i], end: s.t[j] + dt, level: analyze.Median(s.v[i : j+1]), last: j == n-1}
		var count int64
		for k := i; k <= j; k++ {
			e.peak = s.worst(e.peak, s.v[k], k == i)
			if s.fails != nil {
				e.failures += s.fails[k]
				count += s.counts[k]
			}
		}
		i = j + 1
		// The stretch as a whole must be far worse, and long enough: an
		// error ratio's, by its failures, more than its rate around it
		// makes likely.
		if s.points {
			if e.failures >= incidentFailures && s.burst(e, count, o) {
				e.level = 100 * float64(e.failures) / float64(count)
				out = append(out, e)
			}
			continue
		}
		if bad(e.level) && e.end-e.start >= max(incidentMinLength.Seconds(), incidentIntervals*dt) {
			out = append(out, e)
		}
	}
	return out
}

// burst tells whether an error ratio's stretch e of count operations is a
// burst: its failures exceed the rate around it (the series' failures
// outside the stretch over its operations) by the minimum error rise, and
// a Poisson count at that rate reaches them with a probability below
// alpha over the series' values (one test a place the stretch could be).
func (s *series) burst(e excursion, count int64, o LongevityOptions) bool {
	var fails, ops int64
	for k := range s.fails {
		if k < e.i || k > e.j {
			fails += s.fails[k]
			ops += s.counts[k]
		}
	}
	rate := 0.0
	if ops > 0 {
		rate = float64(fails) / float64(ops)
	}
	if count == 0 || float64(e.failures)/float64(count)-rate < o.MinErrorRise {
		return false
	}
	return poissonTail(e.failures, rate*float64(count)) < o.Alpha/float64(len(s.v))
}

// poissonTail is P(X >= k) for X Poisson of mean lambda, k above the mean:
// the sum of the terms from k on, which fall from there.
func poissonTail(k int64, lambda float64) float64 {
	if lambda <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(float64(k) + 1)
	logTerm := float64(k)*math.Log(lambda) - lambda - lg
	sum := 0.0
	for i := k; i < k+1_000_000; i++ {
		term := math.Exp(logTerm)
		sum += term
		if term <= sum*1e-12 {
			break
		}
		logTerm += math.Log(lambda) - math.Log(float64(i+1))
	}
	return min(1, sum)
}

// worst is the worse of a and b for the series (b alone when first).
func (s *series) worst(a, b float64, first bool) float64 {
	switch {
	case first:
		return b
	case s.lower:
		return min(a, b)
	}
	return max(a, b)
}

// findIncidents finds a stage's incidents in its throughput, error
// ratios (the stage's and each operation's) and latencies, merges those
// that overlap, and takes their stretches out of the stage's series (sys:
// the level tests judge the stage outside its incidents). An excursion
// that lasts to the stage's end is left in the series, for the level
// tests to judge as a change; it is an incident (ongoing) only when they
// do not call it one.
func findIncidents(ph results.PhaseSummary, runStart time.Time, sys, opErrs, gen []*series, dt float64, o LongevityOptions) []results.Incident {
	var exs []excursion
	for _, s := range append(slices.Clone(sys), opErrs...) {
		switch s.out.Kind {
		case seriesThroughput, seriesErrors, seriesLatency:
			exs = append(exs, s.excursions(dt, o)...)
		}
	}
	if len(exs) == 0 {
		return nil
	}
	slices.SortFunc(exs, func(a, b excursion) int { return cmp.Compare(a.start, b.start) })
	var out []results.Incident
	var group []excursion
	flush := func() {
		if len(group) == 0 {
			return
		}
		out = append(out, incidentOf(ph, runStart, group, gen, dt))
		group = nil
	}
	end := math.Inf(-1)
	for _, e := range exs {
		if e.start > end+incidentGap*dt {
			flush()
		}
		group = append(group, e)
		end = max(end, e.end)
	}
	flush()
	// Each series outside its own excursions that ended: the level tests
	// judge it without them, and the other series whole.
	for _, e := range exs {
		if !e.last {
			e.s.without(e.start, e.end)
		}
	}
	return out
}

// without drops the series' values from a to b seconds into the stage.
func (s *series) without(a, b float64) {
	if s.chart == nil {
		s.chart = downsample(s.t, s.v)
	}
	keep := 0
	for i := range s.v {
		if s.t[i] >= a && s.t[i] < b {
			continue
		}
		s.t[keep], s.v[keep] = s.t[i], s.v[i]
		if s.fails != nil {
			s.fails[keep] = s.fails[i]
		}
		keep++
	}
	s.t, s.v = s.t[:keep], s.v[:keep]
	if s.fails != nil {
		s.fails = s.fails[:keep]
	}
}

// incidentOf makes one incident of overlapping excursions.
func incidentOf(ph results.PhaseSummary, runStart time.Time, group []excursion, gen []*series, dt float64) results.Incident {
	a, b := group[0].start, group[0].end
	ongoing := false
	for _, e := range group {
		a, b = min(a, e.start), max(b, e.end)
		// Still going at the series' last interval: the stage ended first.
		ongoing = ongoing || e.last
	}
	inc := results.Incident{Stage: ph.Name, StartS: a, EndS: b, Elapsed: ph.Start.Sub(runStart).Seconds() + a,
		Start: ph.Start.Add(seconds(a)), End: ph.Start.Add(seconds(b)), Ongoing: ongoing}
	// One effect a series: the stage's error ratio says less than an
	// operation's, and is left out beside one.
	byOp := false
	for _, e := range group {
		byOp = byOp || e.s.points && e.s.out.Operation != ""
	}
	seen := map[string]bool{}
	for _, e := range group {
		s := e.s
		if seen[s.out.Name] || byOp && s.points && s.out.Operation == "" {
			continue
		}
		seen[s.out.Name] = true
		inc.Effects = append(inc.Effects, results.IncidentEffect{Series: s.out.Name, Kind: s.out.Kind, Operation: s.out.Operation, Unit: s.out.Unit,
			Baseline: s.baselineOutside(a, b), Level: e.level, Peak: e.peak, Failures: e.failures, Message: s.message})
	}
	// Failures are the system's answers (a 503, a refused connection):
	// the generator's host explains latencies, not them.
	host := generatorDuring(gen, ph.Name, a, b)
	failed := slices.ContainsFunc(inc.Effects, func(e results.IncidentEffect) bool { return e.Failures > 0 })
	if !failed {
		inc.Suspect = host
	}
	inc.Sentence = incidentSentence(inc)
	if failed && host != "" {
		inc.Sentence += "; meanwhile the generator's host: " + host
	}
	return inc
}

// baselineOutside is the series' median outside a to b seconds into its
// stage (its median when nothing is left).
func (s *series) baselineOutside(a, b float64) float64 {
	var rest []float64
	for i, t := range s.t {
		if t < a || t >= b {
			rest = append(rest, s.v[i])
		}
	}
	if len(rest) == 0 {
		return analyze.Median(s.v)
	}
	return analyze.Median(rest)
}

// generatorDuring says what the generator's host did from a to b seconds
// into the stage that could explain an incident then: other processes'
// CPU up by minGeneratorRise or more, its run queue or loopback round trip
// doubled, the host saturated; "" when none did. perflab's own CPU is no
// sign: a slower service gives it less work.
func generatorDuring(gen []*series, stage string, a, b float64) string {
	var why []string
	for _, g := range gen {
		if g.out.Stage != stage || len(g.v) == 0 {
			continue
		}
		var in []float64
		for i, t := range g.t {
			if t >= a && t < b {
				in = append(in, g.v[i])
			}
		}
		if len(in) == 0 {
			continue
		}
		during, before := analyze.Median(in), g.baselineOutside(a, b)
		if math.IsNaN(before) {
			continue
		}
		switch g.out.Kind {
		case seriesHostBusy:
			// A host saturated meanwhile: the generator shared cores
			// that were all taken, whatever took them.
			if during >= 100*monitor.SaturationBusy {
				why = append(why, fmt.Sprintf("%s at %s", g.out.Name, g.value(during)))
			}
		case seriesOther, seriesSteal:
			if during-before >= 100*minGeneratorRise {
				why = append(why, fmt.Sprintf("%s at %s (%s around it)", g.out.Name, g.value(during), g.value(before)))
			}
		case seriesRunQueue, seriesLoopback:
			if during >= (1+minGeneratorGrowth)*before && during > before && before > 0 {
				why = append(why, fmt.Sprintf("%s at %s (%s around it)", g.out.Name, g.value(during), g.value(before)))
			}
		}
	}
	return strings.Join(why, ", ")
}

// incidentSentence says an incident: "error ratio of GET b 33.3% from
// 8 m 00 s to 12 m 01 s (4 m 01 s), then back to 0.00%".
func incidentSentence(inc results.Incident) string {
	var parts []string
	for _, e := range inc.Effects {
		sv := results.DriftSeries{Unit: e.Unit}
		p := fmt.Sprintf("%s %s", e.Series, sv.Value(e.Level))
		if e.Peak != e.Level {
			p += fmt.Sprintf(" (worst %s)", sv.Value(e.Peak))
		}
		if e.Failures > 0 {
			p += fmt.Sprintf(", %d failures", e.Failures)
			if e.Message != "" {
				p += " (most often: " + e.Message + ")"
			}
		}
		if inc.Ongoing {
			p += fmt.Sprintf(", against %s before", sv.Value(e.Baseline))
		} else {
			p += fmt.Sprintf(", then back to %s", sv.Value(e.Baseline))
		}
		parts = append(parts, p)
	}
	from, to := seconds(inc.Elapsed), seconds(inc.Elapsed+inc.EndS-inc.StartS)
	var when string
	switch {
	case inc.Ongoing:
		when = fmt.Sprintf("from %s (%s) to the end of stage %s, %s", elapsed(from), clock(inc.Start), inc.Stage, elapsed(to-from))
	case inc.StartS == 0:
		when = fmt.Sprintf("for the first %s of stage %s", elapsed(to-from), inc.Stage)
	default:
		when = fmt.Sprintf("from %s to %s (%s to %s, %s)", elapsed(from), elapsed(to), clock(inc.Start), clock(inc.End), elapsed(to-from))
	}
	text := when + ": " + strings.Join(parts, "; ")
	if inc.Suspect != "" {
		text += "; meanwhile the generator's host: " + inc.Suspect + " (suspect: the generator's as likely as the system's)"
	}
	return text
}

// clock is a time of day, UTC: "10:08:00".
func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// topMessage is an operation's most frequent failure message over its
// stage, "" when it has none.
func topMessage(op results.Operation) string {
	var best metrics.ErrorMessage
	for _, m := range op.Errors.Messages {
		if m.Count > best.Count {
			best = m
		}
	}
	switch {
	case best.Message != "":
		return best.Message
	case best.Kind != "":
		return best.Kind
	}
	return ""
}

// incidentsVerdict says a run's incidents after its verdict: "2
// incidents: ...", those the generator cannot explain first (failures
// first: a generator makes none), then the longest; those it can are
// counted.
func incidentsVerdict(incs []results.Incident) string {
	if len(incs) == 0 {
		return ""
	}
	incs = slices.Clone(incs)
	suspect := 0
	failures := func(inc results.Incident) bool {
		return slices.ContainsFunc(inc.Effects, func(e results.IncidentEffect) bool { return e.Failures > 0 })
	}
	for _, inc := range incs {
		if inc.Suspect != "" {
			suspect++
		}
	}
	slices.SortStableFunc(incs, func(a, b results.Incident) int {
		return cmp.Or(cmp.Compare(boolInt(a.Suspect != ""), boolInt(b.Suspect != "")), cmp.Compare(boolInt(!failures(a)), boolInt(!failures(b))),
			cmp.Compare(b.EndS-b.StartS, a.EndS-a.StartS))
	})
	var texts []string
	// Named: those the generator cannot explain; the suspect ones only
	// when there are no others.
	named := incs[:len(incs)-suspect]
	if len(named) == 0 {
		named = incs
	}
	for i, inc := range named {
		if i == maxVerdictIncidents {
			break
		}
		texts = append(texts, inc.Sentence)
	}
	if rest := len(incs) - min(len(named), maxVerdictIncidents); rest > 0 {
		texts = append(texts, fmt.Sprintf("and %d more", rest))
	}
	word := "incidents"
	if len(incs) == 1 {
		word = "incident"
	}
	if suspect > 0 {
		word += fmt.Sprintf(" (%d of them while the generator's host was busier or saturated: suspect)", suspect)
	}
	return fmt.Sprintf("%d %s: %s", len(incs), word, strings.Join(texts, "; "))
}

// lasting keeps the incidents that the level tests did not tell as a
// change: one still going at the end of its stage whose series the tests
// found degraded is that change, not an incident.
func lasting(incs []results.Incident, all []*series) []results.Incident {
	changed := map[string]bool{}
	for _, s := range all {
		if s.out.Verdict == results.DriftDegraded || s.out.Verdict == results.DriftSuspect {
			changed[s.out.Stage+"\x00"+s.out.Name] = true
		}
	}
	return slices.DeleteFunc(incs, func(inc results.Incident) bool {
		if !inc.Ongoing {
			return false
		}
		for _, e := range inc.Effects {
			if changed[inc.Stage+"\x00"+e.Series] {
				return true
			}
		}
		return false
	})
}

// OneVerdict makes the resources' memory verdicts those of the drift where
// it judged the same series (a monitor's memory over a stage): one series,
// one verdict in every view. A memory the drift found degraded is a leak
// (the load generator's own: a growth), one it found steady, settled or
// improved is none; the leak rule stands where the drift had no verdict
// (the run too short for it, or no drift).
func OneVerdict(sum *results.Summary) {
	if sum.Resources == nil || sum.Drift == nil {
		return
	}
	verdicts := map[string]string{}
	all := slices.Clone(sum.Drift.Series)
	if g := sum.Drift.Generator; g != nil {
		all = append(all, g.Series...)
	}
	for _, s := range all {
		if s.Kind == seriesMemory && s.Verdict != results.DriftTooShort {
			verdicts[s.Stage+"\x00"+s.Monitor] = s.Verdict
		}
	}
	for _, w := range sum.Resources.Windows {
		for _, m := range w.Monitors {
			v, ok := verdicts[w.Window+"\x00"+m.Monitor]
			if !ok || len(m.Memory) == 0 {
				continue
			}
			// The drift judges a monitor's first memory metric.
			m.Memory[0].Drift = v
			m.Memory[0].LeakSuspected = v == results.DriftDegraded
		}
	}
}
