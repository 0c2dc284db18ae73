package metrics

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: microseconds from 1 µs to one hour, 3 significant digits.
const (
	lowestUs  = 1
	highestUs = int64(time.Hour / time.Microsecond)
	sigDigits = 3
)

// NewHistogram returns an empty histogram with perflab's geometry.
func NewHistogram() *hdr.Histogram { return hdr.New(lowestUs, highestUs, sigDigits) }

// Stats accumulates one operation's results. The zero value is not ready:
// use NewStats.
type Stats struct {
	// Hist holds the latency of successful operations (OK) in
	// microseconds.
	Hist *hdr.Histogram
	// FailHist holds the latency of failed operations (KO) that were sent,
	// as Hist those of successful ones: nil until one failed, so that a
	// run without failures pays nothing for it. Its count is Failed.N but
	// in statistics read back from a run recorded before perflab kept it
	// (nil there).
	FailHist *hdr.Histogram
	// Count is every operation, successful or not.
	Count int64
	// Errors counts failures by kind; Errors[OK] is unused.
	Errors [NumErrKinds]int64
	// Exact figures in nanoseconds, successes and failures apart.
	OK, Failed Moments
	// Bytes received in response bodies.
	Bytes int64
	// Clamped counts latencies above the histograms' range (recorded at
	// their top), of successful and failed operations.
	Clamped int64
	// Svc holds the service time of successful operations in open models:
	// from the actual send, where Hist is from the due time. Nil in closed
	// models, where the two are the same.
	Svc   *hdr.Histogram
	SvcOK Moments
	// Delay holds the start delay in open models: from the due time to the
	// send (to the iteration's start, for the scenario operation), the
	// time an iteration waited for a VU or for the generator itself; zero
	// for the operations after the first of an iteration. It is kept for
	// every operation that started, failed ones too: it says how the
	// generator kept to the schedule, whatever the server answered.
	Delay    *hdr.Histogram
	DelayAll Moments
	// Dropped counts iterations an open model could not start because every
	// VU was busy (on the scenario operation), and Queued those that
	// waited for a VU to be free (when_busy: queue).
	Dropped, Queued int64
	// Server holds the time the server reported it spent on successful
	// responses that said (nil until one did), and Overhead the rest of
	// their service time: network, queues, the client.
	Server   *hdr.Histogram
	ServerOK Moments
	Overhead Moments
	// Details holds, for each kind of error, the words of one of its
	// failures ("${token} is not set (...)"): nil until a failure says.
	Details map[ErrKind]string
	// Messages counts the failures recorded with their words (AddResult)
	// by kind and message (errors.go).
	Messages Messages
	// packed holds the histograms encoded once Pack has let them go.
	packed *packedHists
	// digest and failDigest are the histograms' encoding and quantiles,
	// for statistics made without them (FromCounts).
	digest, failDigest *digest
}

// packedHists is a Stats' histograms in the HdrHistogram V2 compressed
// encoding (Encode), nil where the Stats has none.
type packedHists struct{ hist, svc, delay, server, fail []byte }

// Moments keeps an exact count, sum, minimum and maximum of durations.
type Moments struct {
	N   int64 `json:"n"`
	Sum int64 `json:"sum_ns"`
	// Min is meaningful only when N > 0.
	Min int64 `json:"min_ns"`
	Max int64 `json:"max_ns"`
}

func (m *Moments) add(ns int64) { m.AddN(ns, 1) }

// AddN adds n values of ns (n > 0).
func (m *Moments) AddN(ns, n int64) {
	if m.N == 0 || ns < m.Min {
		m.Min = ns
	}
	if ns > m.Max {
		m.Max = ns
	}
	m.N += n
	m.Sum += n * ns
}

// Merge adds o into m.
func (m *Moments) Merge(o Moments) {
	if o.N == 0 {
		return
	}
	if m.N == 0 || o.Min < m.Min {
		m.Min = o.Min
	}
	if o.Max > m.Max {
		m.Max = o.Max
	}
	m.N += o.N
	m.Sum += o.Sum
}

// Mean is the exact mean in nanoseconds (0 when empty).
func (m Moments) Mean() float64 {
	if m.N == 0 {
		return 0
	}
	return float64(m.Sum) / float64(m.N)
}

// NewStats returns empty statistics.
func NewStats() *Stats { return &Stats{Hist: NewHistogram()} }

// NewOpenStats returns empty statistics that also keep service time and
// start delay.
func NewOpenStats() *Stats {
	return &Stats{Hist: NewHistogram(), Svc: NewHistogram(), Delay: NewHistogram()}
}

// Add records one operation: lat is its latency (from the due time in open
// models), svc its service time (from the actual send; pass lat in closed
// models). In open models the difference is the start delay.
func (s *Stats) Add(lat, svc time.Duration, ek ErrKind, bytes int) {
	s.Count++
	s.Bytes += int64(bytes)
	ns := max(int64(lat), 0)
	if s.Delay != nil && ek != NotSent {
		d := max(int64(lat-svc), 0)
		s.DelayAll.add(d)
		recordUs(s.Delay, d)
	}
	if ek != OK {
		s.Errors[ek]++
		if ek != NotSent { // nothing was sent: no latency to keep
			s.addFailed(ns)
		}
		return
	}
	s.OK.add(ns)
	if record(s.Hist, ns) {
		s.Clamped++
	}
	if s.Svc != nil {
		sns := max(int64(svc), 0)
		s.SvcOK.add(sns)
		record(s.Svc, sns)
	}
}

// addFailed records the latency of a failed operation, in its moments
// and its histogram (made at the first failure).
func (s *Stats) addFailed(ns int64) {
	s.Failed.add(ns)
	if s.FailHist == nil {
		s.FailHist = NewHistogram()
	}
	if record(s.FailHist, ns) {
		s.Clamped++
	}
}

// AddN records n operations of one latency and outcome in a closed model:
// as n calls of Add, for results that come counted by value (another
// tool's, at millisecond resolution).
func (s *Stats) AddN(lat time.Duration, ek ErrKind, bytes int64, n int64) {
	if us, ok := s.countN(lat, ek, bytes, n); ok {
		h := s.Hist
		if ek != OK {
			if s.FailHist == nil {
				s.FailHist = NewHistogram()
			}
			h = s.FailHist
		}
		_ = h.RecordValues(us, n) // cannot fail: us is within range
	}
}

// countN counts n operations of one latency and outcome in all but the
// histograms; for those timed (successes, and failures that were sent)
// it returns the value (µs) the histogram of their outcome (OK or KO)
// records them at, and true.
func (s *Stats) countN(lat time.Duration, ek ErrKind, bytes int64, n int64) (int64, bool) {
	if n <= 0 {
		return 0, false
	}
	s.Count += n
	s.Bytes += bytes
	ns := max(int64(lat), 0)
	m := &s.OK
	switch {
	case ek == NotSent:
		s.Errors[ek] += n
		return 0, false
	case ek != OK:
		s.Errors[ek] += n
		m = &s.Failed
	}
	m.AddN(ns, n)
	us, clamped := histUs(ns)
	if clamped {
		s.Clamped += n
	}
	return us, true
}

// histUs is the value in µs the histograms count a latency of ns at, and
// whether it had to be clamped to their top.
func histUs(ns int64) (int64, bool) {
	us := (max(ns, lowestUs*1000-500) + 500) / 1000
	if us > highestUs {
		return highestUs, true
	}
	return us, false
}

// MaxDetail is the most bytes of a failure's detail kept, "..." included.
const MaxDetail = 300

// AddDetail keeps what a failure of kind ek said, unless a failure of that
// kind already did.
func (s *Stats) AddDetail(ek ErrKind, detail string) {
	if ek == OK || detail == "" {
		return
	}
	if _, ok := s.Details[ek]; ok {
		return
	}
	if s.Details == nil {
		s.Details = map[ErrKind]string{}
	}
	// As JSON keeps it (summary.json, totals.jsonl), so that it reads
	// back as written.
	s.Details[ek] = clip(detail, MaxDetail)
}

// AddServer records the time the server reported for a successful
// operation whose service time was svc.
func (s *Stats) AddServer(srv, svc time.Duration) {
	if s.Server == nil {
		s.Server = NewHistogram()
	}
	ns := max(int64(srv), 0)
	s.ServerOK.add(ns)
	record(s.Server, ns)
	s.Overhead.add(max(int64(svc)-ns, 0))
}

// record adds ns to h in microseconds, at least 1; true when it had to be
// clamped to the histogram's top.
func record(h *hdr.Histogram, ns int64) bool {
	return recordUs(h, max(ns, lowestUs*1000-500))
}

// recordUs adds ns to h in microseconds, rounded: a time below 0.5 µs
// counts as 0 (a start delay of an operation after the first).
func recordUs(h *hdr.Histogram, ns int64) bool {
	us := (ns + 500) / 1000
	clamped := us > highestUs
	if clamped {
		us = highestUs
	}
	_ = h.RecordValue(us) // cannot fail: us is within range
	return clamped
}

// Pack encodes s's histograms and lets them go: a histogram of perflab's
// geometry takes about 190 KB, its encoding a few hundred bytes to a few
// KB. A finished stage keeps its totals packed, so that a sweep of
// thousands of stages does not keep hundreds of kilobytes for each. What
// reads the histograms (Summarize, Merge, MergeByKey) unpacks a copy, the
// same histogram exactly; nothing may be recorded into s (Add) once
// packed: use Unpacked.
func (s *Stats) Pack() {
	if s.packed != nil {
		return
	}
	enc := func(h *hdr.Histogram) []byte {
		if h == nil {
			return nil
		}
		return Encode(h)
	}
	s.packed = &packedHists{hist: enc(s.Hist), svc: enc(s.Svc), delay: enc(s.Delay), server: enc(s.Server), fail: enc(s.FailHist)}
	s.Hist, s.Svc, s.Delay, s.Server, s.FailHist = nil, nil, nil, nil, nil
}

// Unpacked returns s, or if it is packed a copy of it with its histograms
// decoded.
func (s *Stats) Unpacked() *Stats {
	p := s.packed
	if p == nil {
		return s
	}
	dec := func(b []byte) *hdr.Histogram {
		if b == nil {
			return nil
		}
		h := NewHistogram()
		if err := DecodeInto(h, b); err != nil { // cannot happen: Encode wrote it, or StatsRecord checked it
			panic("metrics: unpacking a histogram: " + err.Error())
		}
		return h
	}
	c := *s
	c.packed = nil
	c.Hist, c.Svc, c.Delay, c.Server, c.FailHist = dec(p.hist), dec(p.svc), dec(p.delay), dec(p.server), dec(p.fail)
	return &c
}

// Merge adds o into s exactly.
func (s *Stats) Merge(o *Stats) {
	if o.Count == 0 && o.Dropped == 0 && o.Queued == 0 {
		return
	}
	if s.packed != nil {
		*s = *s.Unpacked()
	}
	o = o.Unpacked()
	s.Count += o.Count
	s.Bytes += o.Bytes
	s.Clamped += o.Clamped
	for i := range s.Errors {
		s.Errors[i] += o.Errors[i]
	}
	s.Dropped += o.Dropped
	s.Queued += o.Queued
	for k, d := range o.Details {
		s.AddDetail(k, d)
	}
	s.Messages.Merge(o.Messages)
	s.OK.Merge(o.OK)
	s.Failed.Merge(o.Failed)
	if o.OK.N > 0 {
		s.Hist.Merge(o.Hist)
	}
	if o.FailHist != nil && o.FailHist.TotalCount() > 0 {
		if s.FailHist == nil {
			s.FailHist = NewHistogram()
		}
		s.FailHist.Merge(o.FailHist)
	}
	if o.SvcOK.N > 0 {
		if s.Svc == nil {
			s.Svc = NewHistogram()
		}
		s.Svc.Merge(o.Svc)
		s.SvcOK.Merge(o.SvcOK)
	}
	if o.DelayAll.N > 0 {
		if s.Delay == nil {
			s.Delay = NewHistogram()
		}
		s.Delay.Merge(o.Delay)
		s.DelayAll.Merge(o.DelayAll)
	}
	if o.ServerOK.N > 0 {
		if s.Server == nil {
			s.Server = NewHistogram()
		}
		s.Server.Merge(o.Server)
		s.ServerOK.Merge(o.ServerOK)
		s.Overhead.Merge(o.Overhead)
	}
}

// Reset empties s, keeping its histograms' memory.
func (s *Stats) Reset() {
	h, svc, delay, srv, fail := s.Hist, s.Svc, s.Delay, s.Server, s.FailHist
	if s.OK.N > 0 {
		h.Reset()
	}
	if s.Failed.N > 0 && fail != nil {
		fail.Reset()
	}
	if s.SvcOK.N > 0 {
		svc.Reset()
	}
	if s.DelayAll.N > 0 {
		delay.Reset()
	}
	if s.ServerOK.N > 0 {
		srv.Reset()
	}
	*s = Stats{Hist: h, Svc: svc, Delay: delay, Server: srv, FailHist: fail}
}

// ErrorCount is the number of failed operations.
func (s *Stats) ErrorCount() int64 { return s.Failed.N }

// Percentiles reported everywhere.
var Percentiles = []float64{50, 75, 90, 95, 99, 99.9}

// Summary is the figures of one operation over a span of time, in
// milliseconds where they are durations.
type Summary struct {
	Count        int64           `json:"count"`
	Errors       ErrorSummary    `json:"errors"`
	SuccessRatio float64         `json:"success_ratio"`
	Latency      LatencySummary  `json:"latency_ms"`
	ServiceTime  *LatencySummary `json:"service_time_ms,omitempty"`
	// StartDelay is the time from the due time to the send in open models,
	// of every operation that started (failed ones too).
	StartDelay *LatencySummary `json:"start_delay_ms,omitempty"`
	// ServerTime is what the server reported it spent (http.server_time),
	// and Overhead the rest of the same responses' service time.
	ServerTime      *LatencySummary `json:"server_time_ms,omitempty"`
	Overhead        *FailedSummary  `json:"overhead_ms,omitempty"`
	ServerResponses int64           `json:"server_responses,omitempty"`
	Dropped         int64           `json:"dropped,omitempty"`
	Queued          int64           `json:"queued,omitempty"`
	// Failed is the latency of the failed operations that were sent
	// (KO), as Latency is the successful ones' (OK); All is of both
	// together, present when there were both (otherwise it is one of them).
	Failed  *KOSummary       `json:"failed_latency_ms,omitempty"`
	All     *LatencySummary  `json:"all_latency_ms,omitempty"`
	RPS     float64          `json:"rps"`
	OpRate  OpRate           `json:"single_op_rate"`
	Bytes   int64            `json:"bytes_received"`
	Clamped int64            `json:"clamped,omitempty"`
	Extra   map[string]int64 `json:"-"`
}

// KOCount is how many failed operations were timed (KO): those that were
// sent. A run recorded before perflab kept their histogram says it by
// its errors.
func (s Summary) KOCount() int64 {
	switch {
	case s.Failed == nil:
		return 0
	case s.Failed.Count > 0:
		return s.Failed.Count
	}
	return s.Errors.Total - s.Errors.ByKind[NotSent.String()]
}

// ErrorSummary counts errors by kind name.
type ErrorSummary struct {
	Total  int64            `json:"total"`
	ByKind map[string]int64 `json:"by_kind"`
	// Details says in words what one failure of each kind was.
	Details map[string]string `json:"details,omitempty"`
	// Messages counts the failures of steps by kind and message.
	Messages []ErrorMessage `json:"messages,omitempty"`
}

// LatencySummary is the latency of successful operations in milliseconds.
// Min, mean and max are exact; percentiles come from the HDR histogram
// (within 0.1% of the true value).
type LatencySummary struct {
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Max    float64 `json:"max"`
	StdDev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P75    float64 `json:"p75"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
}

// KOSummary is the latency of failed operations (KO) in milliseconds, as
// LatencySummary is the successful ones': minimum, mean and maximum
// exact, percentiles from the HDR histogram of failed operations. Count is
// how many that histogram holds, those the percentiles are of: the failed
// operations that were sent (one never sent has no time). It is 0 where the
// histogram was not kept (a run recorded by a perflab before it), whose
// percentiles are then 0 and unknown.
type KOSummary struct {
	Count int64 `json:"count"`
	LatencySummary
}

// FailedSummary is an exact minimum, mean and maximum in milliseconds: the
// overhead of responses that reported their server time.
type FailedSummary struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// OpRate is the CPS basic load test's "operations per second" of a single
// operation (examples/cps): 1000 / latency in ms. Min comes from the slowest
// operation, max from the fastest, avg from the mean latency.
type OpRate struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	Avg float64 `json:"avg"`
}

func ms(ns float64) float64 { return ns / 1e6 }

// Summarize computes the figures; elapsed is the wall time the operations
// ran in, for throughput.
func (s *Stats) Summarize(elapsed time.Duration) Summary {
	if s.packed != nil {
		return s.Unpacked().Summarize(elapsed)
	}
	out := Summary{Count: s.Count, Bytes: s.Bytes, Clamped: s.Clamped}
	out.Errors.ByKind = map[string]int64{}
	for k, n := range s.Errors {
		if n > 0 && ErrKind(k) != OK {
			out.Errors.ByKind[ErrKind(k).String()] = n
			out.Errors.Total += n
		}
	}
	for k, d := range s.Details {
		if out.Errors.Details == nil {
			out.Errors.Details = map[string]string{}
		}
		out.Errors.Details[k.String()] = d
	}
	out.Errors.Messages = s.Messages.List()
	if s.Count > 0 {
		out.SuccessRatio = float64(s.Count-out.Errors.Total) / float64(s.Count)
	}
	if elapsed > 0 { // operations performed: those never sent are not throughput
		out.RPS = float64(s.Count-s.Errors[NotSent]) / elapsed.Seconds()
	}
	out.Dropped, out.Queued = s.Dropped, s.Queued
	if s.OK.N > 0 {
		out.Latency = latency(s.Hist, s.OK)
		l := &out.Latency
		// Guard against 0 ms (not seen in practice) so JSON never gets +Inf.
		inv := func(ms float64) float64 { return 1000 / math.Max(ms, 1e-6) }
		out.OpRate = OpRate{Min: inv(l.Max), Max: inv(l.Min), Avg: inv(l.Mean)}
	}
	if s.SvcOK.N > 0 {
		svc := latency(s.Svc, s.SvcOK)
		out.ServiceTime = &svc
	}
	if s.DelayAll.N > 0 {
		d := latency(s.Delay, s.DelayAll)
		out.StartDelay = &d
	}
	if s.ServerOK.N > 0 {
		srv := latency(s.Server, s.ServerOK)
		out.ServerTime = &srv
		out.ServerResponses = s.ServerOK.N
		out.Overhead = &FailedSummary{Min: ms(float64(s.Overhead.Min)), Mean: ms(s.Overhead.Mean()), Max: ms(float64(s.Overhead.Max))}
	}
	out.Failed, out.All = koFigures(s.Hist, s.OK, s.FailHist, s.Failed)
	return out
}

// koFigures are the figures of failed operations (KO) from their histogram
// and exact moments, and those of all operations with the successful
// ones' (OK): no KO figures when none failed, no figures of all unless
// some succeeded and every failure is in the histogram (one read back from
// a run recorded before it was kept has none).
func koFigures(ok *hdr.Histogram, okM Moments, ko *hdr.Histogram, koM Moments) (*KOSummary, *LatencySummary) {
	if koM.N == 0 {
		return nil, nil
	}
	f := &KOSummary{}
	if ko != nil && ko.TotalCount() > 0 {
		f.Count = ko.TotalCount()
		f.LatencySummary = latency(ko, koM)
	} else {
		f.Min, f.Mean, f.Max = ms(float64(koM.Min)), ms(koM.Mean()), ms(float64(koM.Max))
	}
	if okM.N == 0 || f.Count != koM.N {
		return f, nil
	}
	h := NewHistogram()
	h.Merge(ok)
	h.Merge(ko)
	okM.Merge(koM)
	all := latency(h, okM)
	return f, &all
}

// latency summarises a histogram in ms with its exact moments.
// SummarizeHistogram computes the figures of count operations, errors of
// them failed, from the histograms of the successful ones and of the
// failed ones (ko, nil when none was kept), for runs whose exact figures
// were never written (a killed run, read back from its stored intervals):
// minimum, mean and maximum come from the histograms, within their
// precision, and errors are not split by kind.
func SummarizeHistogram(h, ko *hdr.Histogram, count, errors int64, elapsed time.Duration) Summary {
	out := Summary{Count: count, Errors: ErrorSummary{Total: errors, ByKind: map[string]int64{}}}
	if count > 0 {
		out.SuccessRatio = float64(count-errors) / float64(count)
	}
	if elapsed > 0 {
		out.RPS = float64(count) / elapsed.Seconds()
	}
	if l := HistogramLatency(h); l != nil {
		out.Latency = *l
		inv := func(ms float64) float64 { return 1000 / math.Max(ms, 1e-6) }
		out.OpRate = OpRate{Min: inv(l.Max), Max: inv(l.Min), Avg: inv(l.Mean)}
	}
	if ko != nil {
		out.Failed, out.All = koFigures(h, histMoments(h), ko, histMoments(ko))
	}
	return out
}

// histMoments are a histogram's (µs) count, sum, minimum and maximum in
// ns, within its precision.
func histMoments(h *hdr.Histogram) Moments {
	n := h.TotalCount()
	if n == 0 {
		return Moments{}
	}
	return Moments{N: n, Sum: int64(h.Mean() * float64(n) * 1e3), Min: h.Min() * 1e3, Max: h.Max() * 1e3}
}

// HistogramLatency summarises a histogram (µs) in ms, its minimum, mean and
// maximum within its precision; nil when it is empty.
func HistogramLatency(h *hdr.Histogram) *LatencySummary {
	m := histMoments(h)
	if m.N == 0 {
		return nil
	}
	l := latency(h, m)
	return &l
}

func latency(h *hdr.Histogram, m Moments) LatencySummary {
	var l LatencySummary
	l.Min, l.Max, l.Mean = ms(float64(m.Min)), ms(float64(m.Max)), ms(m.Mean())
	l.StdDev = h.StdDev() / 1e3
	v := h.ValueAtPercentiles(Percentiles)
	q := func(p float64) float64 {
		// The histogram reports the highest value equivalent to the
		// percentile's bucket; never report beyond the exact extremes.
		x := float64(v[p]) / 1e3
		return math.Max(l.Min, math.Min(x, l.Max))
	}
	l.P50, l.P75, l.P90, l.P95, l.P99, l.P999 = q(50), q(75), q(90), q(95), q(99), q(99.9)
	return l
}
