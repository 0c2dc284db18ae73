package http

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Any Server-Timing or duration header a hostile server sends gives a
// plausible time (not negative, under a day) or none; a metric's dur as a
// server writes it reads back to the nanosecond's rounding, whichever
// metric comes first and however its desc is quoted.
func FuzzServerTiming(f *testing.F) {
	f.Add(`db;dur=53, app;dur=47.2;desc="handler"`, "app", 12.5, "a, b;dur=1")
	f.Add(`cache;desc="hit, miss";dur=0.5`, "", 0.0, `"`)
	f.Add(`total;dur=1e309`, "total", 86_399_999.0, "-0")
	f.Add("12.5ms", "", 1e-6, "\u00b5s")
	f.Fuzz(func(t *testing.T, header, metric string, ms float64, desc string) {
		for _, st := range []ServerTime{{Header: "Server-Timing", Metric: metric}, {Header: "Server-Timing"}, {Header: "X-Response-Time"}} {
			if d, ok := st.parse([]byte(header)); ok && (d < 0 || d >= 24*time.Hour) {
				t.Fatalf("%+v of %q: %v", st, header, d)
			}
		}
		if !plausible(ms) || math.IsInf(ms, 0) || strings.ContainsAny(metric, `,;="`) || strings.TrimSpace(metric) != metric || metric == "" || strings.Contains(desc, `"`) {
			return
		}
		value := "other;dur=7, " + metric + `;desc="` + desc + `";dur=` + strconv.FormatFloat(ms, 'g', -1, 64)
		want := time.Duration(ms * float64(time.Millisecond))
		if d, ok := (&ServerTime{Header: "Server-Timing", Metric: metric}).parse([]byte(value)); metric != "other" && (!ok || d != want) {
			t.Fatalf("%q: %v %v, want %v", value, d, ok, want)
		}
		if d, ok := (&ServerTime{Header: "X-Response-Time"}).parse([]byte(strconv.FormatFloat(ms, 'f', -1, 64) + "ms")); !ok || d != want {
			t.Fatalf("%vms: %v %v, want %v", ms, d, ok, want)
		}
	})
}
