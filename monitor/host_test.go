package monitor

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func TestHost(t *testing.T) {
	m := mustOpen(t, Spec{Kind: KindHost})
	time.Sleep(100 * time.Millisecond)
	pts := sampleNow(t, m)
	for _, metric := range []string{MetricBusy, MetricBusyMaxCore} {
		if v := mustValue(t, pts, metric); v < 0 || v > 1 {
			t.Errorf("%s = %v, want 0..1", metric, v)
		}
	}
	used, total := mustValue(t, pts, MetricMemUsed), mustValue(t, pts, MetricMemTotal)
	if used <= 0 || used >= total {
		t.Errorf("memory used %v of %v", used, total)
	}
	if v := mustValue(t, pts, MetricLoad1); v < 0 {
		t.Errorf("load1 = %v", v)
	}

	// One busy loop per core for half a second.
	for range runtime.NumCPU() {
		busyLoop(t)
	}
	time.Sleep(500 * time.Millisecond)
	pts = sampleNow(t, m)
	if v := mustValue(t, pts, MetricBusy); v < 0.6 || v > 1 {
		t.Errorf("cpu_busy_ratio = %.2f with a busy loop on every core, want 0.6..1", v)
	}
	if v := mustValue(t, pts, MetricBusyMaxCore); v < 0.9 || v > 1 {
		t.Errorf("cpu_busy_max_core_ratio = %.2f with a busy loop on every core, want 0.9..1", v)
	}
}

// The host's steal share, run queue, cores, and the loopback round trip
// its probe times: the generator's own timing noise. A busy loop on every
// core puts them in the run queue.
func TestHostGeneratorHealth(t *testing.T) {
	m := mustOpen(t, Spec{Kind: KindHost})
	time.Sleep(300 * time.Millisecond) // 6 round trips of the probe
	pts := sampleNow(t, m)
	if v := mustValue(t, pts, MetricSteal); v < 0 || v > 1 {
		t.Errorf("%s = %v, want 0..1", MetricSteal, v)
	}
	if v := mustValue(t, pts, MetricCPUs); v < float64(runtime.NumCPU()) {
		t.Errorf("%s = %v, want the host's cores", MetricCPUs, v)
	}
	if v := mustValue(t, pts, MetricLoopbackRTT); v <= 0 || v > 1 {
		t.Errorf("%s = %v s, want a round trip of loopback", MetricLoopbackRTT, v)
	}
	if v := mustValue(t, pts, MetricRunQueue); v < 1 {
		t.Errorf("%s = %v: the sampling task itself is running", MetricRunQueue, v)
	}
	for range runtime.NumCPU() + 1 {
		busyLoop(t)
	}
	time.Sleep(200 * time.Millisecond)
	pts = sampleNow(t, m)
	if v := mustValue(t, pts, MetricRunQueue); v < float64(runtime.NumCPU()) {
		t.Errorf("%s = %v with %d busy loops, want at least %d", MetricRunQueue, v, runtime.NumCPU()+1, runtime.NumCPU())
	}
}

// The probe times 20 round trips a sample, one every 50 ms at most often
// and 500 ms at least: a p90 of as many round trips whatever the sampling
// from 1 s to 10 s, and fewer wake-ups the longer the intervals.
func TestProbePace(t *testing.T) {
	p := &probe{}
	for _, c := range []struct{ every, want time.Duration }{
		{100 * time.Millisecond, 50 * time.Millisecond},
		{time.Second, 50 * time.Millisecond},
		{2 * time.Second, 100 * time.Millisecond},
		{5 * time.Second, 250 * time.Millisecond},
		{10 * time.Second, 500 * time.Millisecond},
		{time.Minute, 500 * time.Millisecond},
	} {
		p.paceTo(c.every)
		if got := time.Duration(p.period.Load()); got != c.want {
			t.Errorf("samples every %v: a round trip every %v, want %v", c.every, got, c.want)
		}
	}
	var none *probe
	none.paceTo(time.Second) // a host without a probe
}

// The sampler paces the host monitor's probe as it starts, not from its
// second sample: samples an hour apart make no round trip every 50 ms
// in the meantime.
func TestSamplerPacesTheProbeAtOnce(t *testing.T) {
	m, err := openHost(Spec{Name: "host", Kind: KindHost})
	if err != nil {
		t.Skip(err)
	}
	if m.probe == nil {
		t.Skip("no loopback connection here")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := StartSampler(ctx, time.Hour, []Monitor{m}, func(Warning) {})
	if got := time.Duration(m.probe.period.Load()); got != probeEveryMost {
		t.Errorf("samples an hour apart: a round trip every %v, want %v", got, probeEveryMost)
	}
	cancel()
	s.Stop(context.Background())
}
