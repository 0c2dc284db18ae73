package judge

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/results"
)

var (
	movedRe   = regexp.MustCompile(`(rose|fell) (\d+)% from (-?[\d.]+)( ?[a-zA-Zµ/%]*) to (-?[\d.]+)`)
	smallerRe = regexp.MustCompile(`\(([+-][\d.]+)(%| points), p [^,]+, smaller than the ([\d.]+)(%| points) that counts\)`)
	steadyRe  = regexp.MustCompile(`steady: (.+?) at the start, (.+?) at the end`)
)

// checkSentence fails when a sentence's figures disagree with each other
// or with the series' numbers beside it: a percentage of a rise that is
// not its two levels', a change "smaller than" what counts that is not,
// levels at the start and the end that are not the series'.
func checkSentence(t *testing.T, s results.DriftSeries) {
	t.Helper()
	text := s.Sentence
	for _, m := range movedRe.FindAllStringSubmatch(text, -1) {
		pct, _ := strconv.ParseFloat(m[2], 64)
		a, _ := strconv.ParseFloat(m[3], 64)
		b, _ := strconv.ParseFloat(m[5], 64)
		// The levels are printed to 3 or 4 digits, and a level in s
		// beside one in ms: compare within their rounding.
		if a == 0 || strings.Contains(m[0], " s to") || strings.Contains(m[0], " ms to") && strings.HasSuffix(m[0], " s") {
			continue
		}
		// The percentage of the levels as they were before rounding to
		// the digits printed.
		ua, ub := halfUnit(m[3]), halfUnit(m[5])
		lo := 100 * (math.Abs(b-a) - ua - ub) / (math.Abs(a) + ua)
		hi := 100 * (math.Abs(b-a) + ua + ub) / max(math.Abs(a)-ua, 1e-12)
		if pct < lo-0.5 || pct > hi+0.5 {
			t.Errorf("%q says %v%%, its levels %v and %v make %.1f%% to %.1f%%", text, pct, a, b, lo, hi)
		}
		if m[1] == "rose" && b < a || m[1] == "fell" && b > a {
			t.Errorf("%q: %s from %v to %v", text, m[1], a, b)
		}
	}
	if m := smallerRe.FindStringSubmatch(text); m != nil {
		change, _ := strconv.ParseFloat(m[1], 64)
		least, _ := strconv.ParseFloat(m[3], 64)
		if math.Abs(change) >= least {
			t.Errorf("%q: a change of %v is not smaller than %v", text, change, least)
		}
	}
	if m := steadyRe.FindStringSubmatch(text); m != nil && !strings.Contains(text, "before a change") {
		if m[1] != s.Value(s.Start) || m[2] != s.Value(s.End) {
			t.Errorf("%q: the series' levels are %s and %s", text, s.Value(s.Start), s.Value(s.End))
		}
	}
}

// Every sentence of every series agrees with its numbers, over runs of
// every kind the other tests make: flat, rising, stepping, a blip, an
// error burst, a starved generator, a busy one, a start at 0.
func TestSentencesAgreeWithTheirNumbers(t *testing.T) {
	iv := 100 * time.Millisecond
	var runs []*results.Run
	for seed := uint64(0); seed < 10; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		runs = append(runs,
			longRun(r, 300, iv, func(int) float64 { return 3 }, lognormal, constant(50), constant(0)),
			longRun(r, 300, iv, func(i int) float64 { return 3 + float64(i)/30 }, lognormal, constant(50), constant(0)),
			longRun(r, 300, iv, func(i int) float64 { return 3 + 3*float64(min(1, i/150)) }, lognormal, constant(50), func(i int) int { return r.IntN(2) }),
			longRun(r, 300, iv, func(i int) float64 { return 3 + 30*float64(min(1, max(0, (i-200)*(230-i)))) }, lognormal, constant(50), constant(0)),
			longRun(r, 300, iv, func(int) float64 { return 2 }, lognormal, func(i int) int { return 10 * min(1, i/40) }, constant(0)),
		)
		starved := longRun(r, 300, iv, func(i int) float64 { return 0.43 + 7*float64(min(1, i/170)) }, lognormal, constant(200), constant(0))
		starved.Points = starvedPoints(300, 170, iv)
		runs = append(runs, starved)
		busy := longRun(r, 200, iv, func(i int) float64 { return 0.056 + 0.03*float64(min(1, i/100)) }, lognormal, constant(100), constant(0))
		busy.Points = generatorPoints(200, iv, results.GeneratorMonitor, results.SelfMonitor, func(i int) float64 { return 0.2 + 0.5*float64(min(1, i/100)) }, flat(0.02), func(i int) float64 { return 40 + float64(i)/10 })
		runs = append(runs, busy)
	}
	checked := 0
	for _, rd := range runs {
		d := Longevity(rd, LongevityOptions{})
		if d == nil {
			t.Fatal("no verdict")
		}
		series := append([]results.DriftSeries{}, d.Series...)
		if d.Generator != nil {
			series = append(series, d.Generator.Series...)
		}
		for _, s := range series {
			checkSentence(t, s)
			checked++
		}
	}
	t.Logf("%d sentences checked", checked)
}

// halfUnit is half a unit of the last digit printed of a number.
func halfUnit(num string) float64 {
	_, frac, ok := strings.Cut(num, ".")
	if !ok {
		return 0.5
	}
	return 0.5 * math.Pow(10, -float64(len(frac)))
}
