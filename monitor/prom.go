package monitor

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// maxScrape bounds the size of one scrape.
const maxScrape = 64 << 20

// promAccept asks for OpenMetrics, or else the text format.
const promAccept = "application/openmetrics-text;version=1.0.0;q=0.9,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// promMonitor scrapes a Prometheus or OpenMetrics endpoint each interval and
// keeps the series its selectors pick. A gauge selector yields one point,
// named as written in the spec, with the sum of its series; a counter
// selector yields the per-second rate of that sum since the previous
// scrape, named rate(SELECTOR), from the second scrape on. A counter that
// went down was reset: its rate counts from zero.
type promMonitor struct {
	spec   Spec
	client *http.Client
	sels   []selector
	names  map[string]bool // metric names of the selectors
	prev   []promCounter   // per selector
}

// promCounter is a counter selector's previous scrape: each matching
// series' value (by name and labels), for resets judged series by series.
type promCounter struct {
	values map[string]float64
	at     time.Time
	ok     bool
}

// seriesKey identifies a series: its name and labels in order.
func seriesKey(x expoSample) string {
	var b strings.Builder
	b.WriteString(x.name)
	for _, l := range x.labels {
		b.WriteString("\x00" + l.name + "=" + l.value)
	}
	return b.String()
}

func openProm(s Spec) (*promMonitor, error) {
	m := &promMonitor{spec: s, names: map[string]bool{},
		client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	for _, text := range s.Series {
		sel, err := parseSelector(text)
		if err != nil {
			return nil, err
		}
		m.sels = append(m.sels, sel)
		m.names[sel.name] = true
	}
	m.prev = make([]promCounter, len(m.sels))
	return m, nil
}

func (m *promMonitor) Spec() Spec { return m.spec }

func (m *promMonitor) Sample(ctx context.Context, now time.Time) ([]Point, error) {
	samples, types, err := m.scrape(ctx)
	if err != nil {
		return nil, err
	}
	p := points{now: now, monitor: m.spec.Name}
	var missing []string
	for i, sel := range m.sels {
		sum, found := 0.0, false
		values := map[string]float64{}
		for _, x := range samples {
			// NaN and infinities (a summary's quantile with no
			// observations) are no level and no count: left out.
			if sel.matches(x) && !math.IsNaN(x.value) && !math.IsInf(x.value, 0) {
				sum += x.value
				values[seriesKey(x)] = x.value
				found = true
			}
		}
		if !found {
			missing = append(missing, sel.text)
			continue
		}
		if !isCounter(sel.name, types) {
			p.add(sel.text, sum)
			continue
		}
		prev := m.prev[i]
		m.prev[i] = promCounter{values: values, at: now, ok: true}
		if prev.ok && now.After(prev.at) {
			// Each series' increase, a reset judged series by series (a
			// series that went down restarted from zero; a new one
			// counts from zero too).
			delta := 0.0
			for k, v := range values {
				if d := v - prev.values[k]; d >= 0 {
					delta += d
				} else {
					delta += v
				}
			}
			p.add("rate("+sel.text+")", delta/now.Sub(prev.at).Seconds())
		}
	}
	if len(missing) > 0 {
		err = fmt.Errorf("%s has no series %s", m.spec.URL, strings.Join(missing, ", "))
	}
	return p.list, err
}

func (m *promMonitor) scrape(ctx context.Context) ([]expoSample, map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.spec.URL, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", promAccept)
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: %s", m.spec.URL, resp.Status)
	}
	samples, types, err := parseExposition(io.LimitReader(resp.Body, maxScrape), m.names)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.spec.URL, err)
	}
	return samples, types, nil
}

func (m *promMonitor) Close(context.Context) (*Final, error) {
	m.client.CloseIdleConnections()
	return nil, nil
}
