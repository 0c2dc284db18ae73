package monitor

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// promText is a text exposition (format 0.0.4); %d are the request
// counters, %g the queue depth.
const promText = `# HELP http_requests_total Requests served.
# TYPE http_requests_total counter
http_requests_total{method="GET",code="200"} %d
http_requests_total{method="POST",code="200"} %d
http_requests_total{method="GET",code="500"} 3 1700000000000
# HELP queue_depth Jobs waiting.
# TYPE queue_depth gauge
queue_depth{queue="a \"quoted\" name"} %g
# TYPE latency_seconds histogram
latency_seconds_bucket{le="0.1"} 5
latency_seconds_bucket{le="+Inf"} 10
latency_seconds_sum 1.5
latency_seconds_count 10
`

// promOpenMetrics is the same in OpenMetrics, with an exemplar, an info
// metric (a type the text format does not know), and the end marker.
const promOpenMetrics = `# TYPE http_requests counter
# HELP http_requests Requests served.
http_requests_total{method="GET",code="200"} %d # {trace_id="abc"} 1.0 1700000000.0
http_requests_total{method="POST",code="200"} %d
http_requests_created{method="GET",code="200"} 1700000000.0
http_requests_total{method="GET",code="500"} 3
# TYPE build info
build_info{version="1.2"} 1
# TYPE queue_depth gauge
queue_depth{queue="a \"quoted\" name"} %g
# TYPE latency_seconds histogram
latency_seconds_bucket{le="0.1"} 5
latency_seconds_bucket{le="+Inf"} 10
latency_seconds_sum 1.5
latency_seconds_count 10
# EOF
`

// counterServer serves an exposition whose GET/200 and POST/200 request
// counters grow by 30 and 20 between scrapes.
func counterServer(t *testing.T, format, contentType string) *httptest.Server {
	var (
		mu     sync.Mutex
		scrape int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := scrape
		scrape++
		mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		fmt.Fprintf(w, format, 1000+30*n, 500+20*n, 7.5)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPrometheusRates(t *testing.T) {
	for _, c := range []struct{ name, format, contentType string }{
		{"text", promText, "text/plain; version=0.0.4"},
		{"openmetrics", promOpenMetrics, "application/openmetrics-text; version=1.0.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := counterServer(t, c.format, c.contentType)
			m := mustOpen(t, Spec{Name: "api", Kind: KindPrometheus, URL: srv.URL + "/metrics", Series: []string{
				`http_requests_total{code="200"}`,
				`queue_depth{queue="a \"quoted\" name"}`,
				`latency_seconds_count`,
			}})
			t0 := time.Now()
			first, err := m.Sample(context.Background(), t0)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := value(first, `rate(http_requests_total{code="200"})`); ok {
				t.Error("a rate from a single scrape")
			}
			if v := mustValue(t, first, `queue_depth{queue="a \"quoted\" name"}`); v != 7.5 {
				t.Errorf("gauge = %v, want 7.5", v)
			}
			second, err := m.Sample(context.Background(), t0.Add(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			// (30 + 20) requests in 2 s.
			if v := mustValue(t, second, `rate(http_requests_total{code="200"})`); math.Abs(v-25) > 1e-9 {
				t.Errorf("rate = %v/s, want 25/s", v)
			}
			if v := mustValue(t, second, `rate(latency_seconds_count)`); v != 0 {
				t.Errorf("histogram count rate = %v, want 0", v)
			}
		})
	}
}

func TestPrometheusResetAndMissing(t *testing.T) {
	values := []int{100, 40}
	var scrape atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(scrape.Add(1)) - 1
		fmt.Fprintf(w, "jobs_total %d\n", values[min(i, len(values)-1)])
	}))
	defer srv.Close()
	m := mustOpen(t, Spec{Kind: KindPrometheus, URL: srv.URL, Series: []string{"jobs_total", "absent_metric"}})
	t0 := time.Now()
	_, err := m.Sample(context.Background(), t0)
	if err == nil || !strings.Contains(err.Error(), "has no series absent_metric") {
		t.Errorf("err = %v, want the missing series named", err)
	}
	pts, _ := m.Sample(context.Background(), t0.Add(time.Second))
	// The counter went from 100 to 40: it restarted, and counted 40 since.
	if v := mustValue(t, pts, "rate(jobs_total)"); v != 40 {
		t.Errorf("rate after a reset = %v, want 40", v)
	}
}

func TestIsCounter(t *testing.T) {
	types := map[string]string{"a_total": "counter", "b": "counter", "h": "histogram", "s": "summary", "g_total": "gauge"}
	for name, want := range map[string]bool{
		"a_total": true, "b_total": true, "h_count": true, "h_sum": true, "h_bucket": true,
		"s_count": true, "s": false, "g_total": false, "undeclared_total": true, "undeclared": false,
	} {
		if got := isCounter(name, types); got != want {
			t.Errorf("isCounter(%s) = %v, want %v", name, got, want)
		}
	}
}

// One series of a selector resets while another grows: the rate is the sum
// of each series' increase (the reset one counting from zero), and a NaN
// gauge (a quantile with no observations) is left out.
func TestPromResetPerSeriesAndNaN(t *testing.T) {
	var scrape atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, bad := []int{1001, 1002}, []int{11, 1}
		i := scrape.Add(1) - 1
		fmt.Fprintf(w, "# TYPE req_total counter\nreq_total{code=\"200\"} %d\nreq_total{code=\"500\"} %d\n# TYPE lat summary\nlat{quantile=\"0.99\"} NaN\n", ok[i], bad[i])
	}))
	defer srv.Close()
	m, err := openProm(Spec{Name: "app", Kind: KindPrometheus, URL: srv.URL, Series: []string{"req_total", "lat"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	m.Sample(context.Background(), t0) // the lat series has no value: reported as missing
	pts, _ := m.Sample(context.Background(), t0.Add(time.Second))
	rates := 0
	for _, p := range pts {
		if math.IsNaN(p.Value) {
			t.Errorf("%s: NaN kept", p.Metric)
		}
		// 200: +1; 500: reset to 1, counts 1: 2 per second.
		if p.Metric == "rate(req_total)" {
			rates++
			if p.Value != 2 {
				t.Errorf("rate %v, want 2", p.Value)
			}
		}
	}
	if rates != 1 {
		t.Errorf("%d rates in %+v", rates, pts)
	}
}
