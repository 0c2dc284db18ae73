package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// nonFinite lists the paths of the floats in v that are NaN or infinite:
// a number JSON cannot hold, which would lose the run that carries it.
func nonFinite(v any) []string {
	var out []string
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Float32, reflect.Float64:
			if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				out = append(out, fmt.Sprintf("%s = %v", path, f))
			}
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(path+"."+v.Type().Field(i).Name, v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(fmt.Sprintf("%s[%v]", path, it.Key()), it.Value())
			}
		}
	}
	walk("drift", reflect.ValueOf(v))
	return out
}

// checkDefined fails the test when the verdict holds a number JSON cannot
// write, or does not encode.
func checkDefined(t *testing.T, name string, d *results.Drift) {
	t.Helper()
	if d == nil {
		return
	}
	for _, p := range nonFinite(d) {
		t.Errorf("%s: %s", name, p)
	}
	if _, err := json.Marshal(d); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

// Every series a run can give the judge has a verdict JSON can hold:
// all zeros, constant, one interval, gaps, a start at 0, huge spikes,
// monitors' samples that are NaN or infinite, a generator whose CPU starts
// at 0. A number that cannot be defined (a change from 0) is told by its
// levels, never as an infinite percentage.
func TestLongevityAdversarialSeries(t *testing.T) {
	const n = 200
	iv := 100 * time.Millisecond
	zero := func(int) float64 { return 0.001 }
	cases := []struct {
		name          string
		lat           func(int) float64
		count, errs   func(int) int
		points        func(i int) (busy, rtt, mem, cpu float64)
		dropIntervals func(i int) bool
	}{
		{name: "nothing completed", lat: zero, count: constant(0), errs: constant(0)},
		{name: "everything failed", lat: zero, count: constant(10), errs: constant(10)},
		{name: "constant", lat: func(int) float64 { return 5 }, count: constant(10), errs: constant(0)},
		{name: "a start at 0", lat: func(i int) float64 { return 3000 }, count: func(i int) int {
			if i < 30 {
				return 0
			}
			return 100
		}, errs: constant(0)},
		{name: "errors from 0", lat: func(int) float64 { return 2 }, count: constant(50), errs: func(i int) int {
			if i > n/2 {
				return 25
			}
			return 0
		}},
		{name: "huge spikes", lat: func(i int) float64 {
			if i%37 == 0 {
				return 1e9
			}
			return 1
		}, count: constant(20), errs: constant(0)},
		{name: "gaps", lat: func(int) float64 { return 4 }, count: constant(20), errs: constant(0), dropIntervals: func(i int) bool { return i%3 == 0 || i > 150 && i < 180 }},
		{name: "monitors NaN, Inf and 0", lat: func(int) float64 { return 2 }, count: constant(100), errs: constant(0), points: func(i int) (float64, float64, float64, float64) {
			switch {
			case i < 20:
				return 0, 0, 0, 0
			case i%7 == 0:
				return math.NaN(), math.Inf(1), math.NaN(), math.Inf(-1)
			}
			return 0.4, 0.1, 60 + float64(i), 0.3
		}},
		{name: "the generator's CPU from 0", lat: func(int) float64 { return 2 }, count: constant(100), errs: constant(0), points: func(i int) (float64, float64, float64, float64) {
			if i < 30 {
				return 0.05, 0.05, 40, 0
			}
			return 0.6, 0.2, 40 + float64(i)/10, 0.4
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 8))
			rd := longRun(r, n, iv, c.lat, lognormal, c.count, c.errs)
			if c.dropIntervals != nil {
				for tag, ivs := range rd.Intervals {
					var kept []*results.IntervalData
					for i, x := range ivs {
						if !c.dropIntervals(i) {
							kept = append(kept, x)
						}
					}
					rd.Intervals[tag] = kept
				}
			}
			if c.points != nil {
				rd.Points = adversarialPoints(n, iv, c.points)
			}
			checkDefined(t, c.name, Longevity(rd, LongevityOptions{}))
		})
	}
	// One interval, and none.
	for _, k := range []int{0, 1, MinDriftValues} {
		r := rand.New(rand.NewPCG(9, 9))
		checkDefined(t, fmt.Sprintf("%d intervals", k), Longevity(longRun(r, k, time.Second, func(int) float64 { return 1 }, lognormal, constant(0), constant(0)), LongevityOptions{}))
	}
}

// adversarialPoints are a generator's host and perflab's own samples at
// each interval edge, from f: busy share, loopback p90 (ms), memory (MB),
// CPU used since the last sample (cores).
func adversarialPoints(n int, iv time.Duration, f func(i int) (busy, rtt, mem, cpu float64)) []monitor.Point {
	var out []monitor.Point
	cpu := 0.0
	for i := 0; i <= n; i++ {
		at := runtest.T0.Add(time.Duration(i) * iv)
		busy, rtt, mem, c := f(i)
		add := func(mon, metric string, v float64) {
			out = append(out, monitor.Point{Time: at, Monitor: mon, Metric: metric, Value: v})
		}
		add(results.GeneratorMonitor, monitor.MetricBusy, busy)
		add(results.GeneratorMonitor, monitor.MetricCPUs, 2)
		add(results.GeneratorMonitor, monitor.MetricLoopbackRTT, rtt/1000)
		add(results.SelfMonitor, monitor.MetricCPUUser, cpu)
		add(results.SelfMonitor, monitor.MetricCPUSystem, 0)
		add(results.SelfMonitor, monitor.MetricRSS, mem*(1<<20))
		cpu += c * iv.Seconds()
	}
	return out
}

// Random runs made of the pieces adversaries use (stretches of nothing,
// of failures only, of spikes of 1e9, gaps, constant levels, monitors'
// NaN and Inf) always give a verdict JSON can hold, and sentences that
// agree with their numbers.
func TestLongevityRandomAdversaries(t *testing.T) {
	for seed := uint64(0); seed < 150; seed++ {
		r := rand.New(rand.NewPCG(seed, 1234))
		n := MinDriftValues + r.IntN(300)
		kind := make([]int, n)
		for i := 0; i < n; {
			k, l := r.IntN(6), 1+r.IntN(n/3+1)
			for j := i; j < min(n, i+l); j++ {
				kind[j] = k
			}
			i += l
		}
		lat := func(i int) float64 {
			switch kind[i] {
			case 3:
				return 1e9
			case 4:
				return 0.001
			}
			return 2 + float64(kind[i])
		}
		count := func(i int) int {
			if kind[i] == 1 {
				return 0
			}
			return 1 + r.IntN(50)
		}
		errs := func(i int) int {
			if kind[i] == 2 {
				return -1 // all of them: see below
			}
			return r.IntN(2)
		}
		rd := longRun(r, n, 100*time.Millisecond, lat, lognormal, count, func(i int) int {
			if e := errs(i); e >= 0 {
				return min(e, count(i))
			}
			return count(i)
		})
		for tag, ivs := range rd.Intervals {
			var kept []*results.IntervalData
			for i, x := range ivs {
				if kind[i] != 5 {
					kept = append(kept, x)
				}
			}
			rd.Intervals[tag] = kept
		}
		if seed%2 == 0 {
			rd.Points = adversarialPoints(n, 100*time.Millisecond, func(i int) (float64, float64, float64, float64) {
				switch kind[min(i, n-1)] {
				case 3:
					return math.NaN(), math.Inf(1), math.Inf(-1), math.NaN()
				case 1:
					return 0, 0, 0, 0
				}
				return 0.3 + 0.1*float64(kind[min(i, n-1)]), 0.1, 50 + float64(i), 0.2
			})
		}
		d := Longevity(rd, LongevityOptions{})
		name := fmt.Sprintf("seed %d (%d intervals)", seed, n)
		checkDefined(t, name, d)
		if d != nil {
			for _, s := range d.Series {
				checkSentence(t, s)
			}
		}
	}
}
