package http

import (
	"strconv"
	"strings"
	"time"
)

// ServerTime says where a response reports the time the server spent on
// it: the Server-Timing header (one of its metrics' dur, in ms), or a
// header holding a duration such as "12.5", "12.5ms" or "0.0125s"
// (a number alone is in milliseconds).
type ServerTime struct {
	Header string
	// Metric names the Server-Timing metric; empty takes the first with a
	// dur.
	Metric string
}

// parse reads the server time from a header's value; ok is false when the
// value holds none.
func (st *ServerTime) parse(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := string(v)
	if strings.EqualFold(st.Header, "Server-Timing") {
		return serverTiming(s, st.Metric)
	}
	return durationValue(strings.TrimSpace(s))
}

// serverTiming finds a metric's dur in a Server-Timing value such as
// `db;dur=53, app;dur=47.2;desc="handler"`.
func serverTiming(s, metric string) (time.Duration, bool) {
	for _, m := range splitUnquoted(s, ',') {
		params := splitUnquoted(m, ';')
		if metric != "" && strings.TrimSpace(params[0]) != metric {
			continue
		}
		for _, p := range params[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(k, "dur") {
				continue
			}
			ms, err := strconv.ParseFloat(strings.Trim(v, `"`), 64)
			if err != nil || !plausible(ms) {
				return 0, false
			}
			return time.Duration(ms * float64(time.Millisecond)), true
		}
		if metric != "" {
			return 0, false
		}
	}
	return 0, false
}

// durationValue reads "12.5", "12.5ms", "800us" or "0.0125s".
func durationValue(s string) (time.Duration, bool) {
	unit := time.Millisecond
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"ms", time.Millisecond}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"ns", time.Nanosecond}, {"s", time.Second}} {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.d
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !plausible(f*float64(unit)/float64(time.Millisecond)) {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// plausible reports whether a server time in ms can be one: finite, not
// negative, under a day.
func plausible(ms float64) bool {
	return ms >= 0 && ms < 24*60*60*1000 // NaN fails both
}

// splitUnquoted splits s at sep outside double quotes (a Server-Timing
// desc="a, b" stays whole).
func splitUnquoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
