package exporter

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/prompb"
)

// Pusher pushes what a gatherer (the exporter's registry) has to a
// Prometheus remote-write endpoint (protocol 1.0, which Prometheus,
// Mimir, Thanos and VictoriaMetrics receive) every Every, and once more
// when stopped: the run's final figures.
type Pusher struct {
	api   *remote.API
	g     prometheus.Gatherer
	every time.Duration
	fail  func(error)

	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// NewPusher pushes to url (such as http://127.0.0.1:9090/api/v1/write);
// fail hears of pushes that failed (after the client's retries).
func NewPusher(url string, g prometheus.Gatherer, every time.Duration, fail func(error)) (*Pusher, error) {
	api, err := remote.NewAPI(url, remote.WithAPIPath(""),
		remote.WithAPIBackoff(remote.BackoffConfig{Min: 200 * time.Millisecond, Max: 2 * time.Second, MaxRetries: 3}))
	if err != nil {
		return nil, err
	}
	if every <= 0 {
		every = 5 * time.Second
	}
	return &Pusher{api: api, g: g, every: every, fail: fail, stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Start pushes every Every until Stop.
func (p *Pusher) Start() {
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if err := p.Push(context.Background()); err != nil && p.fail != nil {
					p.fail(err)
				}
			}
		}
	}()
}

// Stop ends the pushes with a last one, within ctx.
func (p *Pusher) Stop(ctx context.Context) error {
	p.once.Do(func() { close(p.stop) })
	<-p.done
	return p.Push(ctx)
}

// Push pushes what the gatherer has now.
func (p *Pusher) Push(ctx context.Context) error {
	mfs, err := p.g.Gather()
	if err != nil {
		return err
	}
	ts := TimeSeries(mfs, time.Now().UnixMilli())
	if len(ts) == 0 {
		return nil
	}
	if _, err := p.api.Write(ctx, remote.WriteV1MessageType, &prompb.WriteRequest{Timeseries: ts}); err != nil {
		return fmt.Errorf("remote write: %w", err)
	}
	return nil
}

// TimeSeries turns metric families into remote write's series, a sample
// each at ms: a histogram as its classic series (_bucket with le, _sum,
// _count), labels sorted by name.
func TimeSeries(mfs []*dto.MetricFamily, ms int64) []prompb.TimeSeries {
	var out []prompb.TimeSeries
	add := func(name string, base []*dto.LabelPair, extra []prompb.Label, v float64) {
		ls := []prompb.Label{{Name: "__name__", Value: name}}
		for _, l := range base {
			ls = append(ls, prompb.Label{Name: l.GetName(), Value: l.GetValue()})
		}
		ls = append(ls, extra...)
		sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
		out = append(out, prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: v, Timestamp: ms}}})
	}
	for _, mf := range mfs {
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetLabel(), nil, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetLabel(), nil, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m.GetLabel(), nil, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					if math.IsInf(b.GetUpperBound(), 1) {
						continue
					}
					add(name+"_bucket", m.GetLabel(), []prompb.Label{{Name: "le", Value: strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)}}, float64(b.GetCumulativeCount()))
				}
				add(name+"_bucket", m.GetLabel(), []prompb.Label{{Name: "le", Value: "+Inf"}}, float64(h.GetSampleCount()))
				add(name+"_sum", m.GetLabel(), nil, h.GetSampleSum())
				add(name+"_count", m.GetLabel(), nil, float64(h.GetSampleCount()))
			}
		}
	}
	return out
}
