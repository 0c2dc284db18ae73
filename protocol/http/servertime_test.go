package http

import (
	"testing"
	"time"
)

func TestServerTime(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	cases := []struct {
		st   ServerTime
		in   string
		want time.Duration
		ok   bool
	}{
		{ServerTime{Header: "Server-Timing"}, "app;dur=47.2", ms(47.2), true},
		{ServerTime{Header: "Server-Timing"}, `cache;desc="hit", db;dur=53, app;dur=47.2`, ms(53), true},
		{ServerTime{Header: "server-timing", Metric: "app"}, `db;dur=53, app;desc="x";dur=47.2`, ms(47.2), true},
		{ServerTime{Header: "Server-Timing", Metric: "total"}, `db;dur=53`, 0, false},
		{ServerTime{Header: "Server-Timing"}, `miss`, 0, false},
		{ServerTime{Header: "Server-Timing"}, `app;dur=-1`, 0, false},
		{ServerTime{Header: "X-Response-Time"}, "12.5", ms(12.5), true},
		{ServerTime{Header: "X-Response-Time"}, "12.5ms", ms(12.5), true},
		{ServerTime{Header: "X-Response-Time"}, " 800us", 800 * time.Microsecond, true},
		{ServerTime{Header: "X-Response-Time"}, "0.25s", 250 * time.Millisecond, true},
		{ServerTime{Header: "X-Response-Time"}, "soon", 0, false},
		{ServerTime{Header: "X-Response-Time"}, "", 0, false},
		{ServerTime{Header: "X-Response-Time"}, "NaN", 0, false},
		{ServerTime{Header: "X-Response-Time"}, "1e300", 0, false},
		{ServerTime{Header: "Server-Timing"}, "app;dur=Inf", 0, false},
		{ServerTime{Header: "Server-Timing", Metric: "app"}, `db;desc="a, b";dur=2, app;dur=3`, ms(3), true},
		{ServerTime{Header: "Server-Timing"}, `cache;desc="hit, warm", db;dur=2`, ms(2), true},
	}
	for _, c := range cases {
		got, ok := c.st.parse([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("%s %q: %v %v, want %v %v", c.st.Header, c.in, got, ok, c.want, c.ok)
		}
	}
}
