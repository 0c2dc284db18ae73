package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// StatsRecord is Stats as JSON holds it exactly: the counts, the errors by
// kind name, the exact moments in nanoseconds and the histograms in the
// interval log's encoding. A run's records are what merges exactly with
// another's (Stats.Merge): the figures of a summary are computed from
// them, not the other way round.
type StatsRecord struct {
	Count   int64            `json:"count"`
	Errors  map[string]int64 `json:"errors,omitempty"`
	Bytes   int64            `json:"bytes,omitempty"`
	Clamped int64            `json:"clamped,omitempty"`
	Dropped int64            `json:"dropped,omitempty"`
	Queued  int64            `json:"queued,omitempty"`
	// The moments of the successful operations' latency and of the failed
	// ones', and of an open model's service time and start delay, of the
	// server's own time and the overhead around it.
	OK       Moments  `json:"ok"`
	Failed   *Moments `json:"failed,omitempty"`
	Service  *Moments `json:"service,omitempty"`
	Delay    *Moments `json:"delay,omitempty"`
	Server   *Moments `json:"server,omitempty"`
	Overhead *Moments `json:"overhead,omitempty"`
	// The histograms (µs), HdrHistogram V2 compressed, base64: latency of
	// successful operations, service time, start delay, server time, and
	// latency of failed operations (absent from records written before
	// perflab kept it, which have the failed ones' moments only).
	Hist        string `json:"hist"`
	ServiceHist string `json:"service_hist,omitempty"`
	DelayHist   string `json:"delay_hist,omitempty"`
	ServerHist  string `json:"server_hist,omitempty"`
	FailedHist  string `json:"failed_hist,omitempty"`
	// Details are what one failure of each kind said (Stats.Details).
	Details map[string]string `json:"details,omitempty"`
	// Messages count failures by kind and message (Stats.Messages).
	Messages []ErrorMessage `json:"messages,omitempty"`
}

// Record is s as a StatsRecord. A packed s gives its encodings as they are.
func (s *Stats) Record() StatsRecord {
	r := StatsRecord{Count: s.Count, Bytes: s.Bytes, Clamped: s.Clamped, Dropped: s.Dropped, Queued: s.Queued, OK: s.OK,
		Messages: s.Messages.List()}
	for k, n := range s.Errors {
		if n != 0 && ErrKind(k) != OK {
			if r.Errors == nil {
				r.Errors = map[string]int64{}
			}
			r.Errors[ErrKind(k).String()] = n
		}
	}
	moments := func(m Moments) *Moments {
		if m.N == 0 {
			return nil
		}
		return &m
	}
	r.Failed, r.Service, r.Delay, r.Server, r.Overhead = moments(s.Failed), moments(s.SvcOK), moments(s.DelayAll), moments(s.ServerOK), moments(s.Overhead)
	for k, d := range s.Details {
		if r.Details == nil {
			r.Details = map[string]string{}
		}
		r.Details[k.String()] = d
	}
	// Each histogram as logged: the packed encoding, or the live one encoded.
	enc := func(h *hdr.Histogram, packed []byte, n int64) string {
		switch {
		case n == 0:
			return ""
		case packed != nil:
			return string(packed)
		}
		return string(Encode(h))
	}
	var p packedHists
	if s.packed != nil {
		p = *s.packed
	}
	r.Hist = enc(s.Hist, p.hist, s.OK.N)
	r.ServiceHist = enc(s.Svc, p.svc, s.SvcOK.N)
	r.DelayHist = enc(s.Delay, p.delay, s.DelayAll.N)
	r.ServerHist = enc(s.Server, p.server, s.ServerOK.N)
	if s.FailHist != nil || p.fail != nil {
		r.FailedHist = enc(s.FailHist, p.fail, s.Failed.N)
	}
	return r
}

var (
	emptyOnce sync.Once
	emptyEnc  []byte
)

// emptyEncoding is an empty histogram of perflab's geometry, encoded.
func emptyEncoding() []byte {
	emptyOnce.Do(func() { emptyEnc = Encode(NewHistogram()) })
	return emptyEnc
}

// Stats is the record's statistics, packed (Stats.Pack): its histograms
// stay encoded until something reads them. A record whose histograms do
// not decode, or that has values without a histogram to hold them, is an
// error: a run directory or history row is input like any other.
func (r StatsRecord) Stats() (*Stats, error) {
	s := &Stats{Count: r.Count, Bytes: r.Bytes, Clamped: r.Clamped, Dropped: r.Dropped, Queued: r.Queued, OK: r.OK}
	for name, n := range r.Errors {
		k, ok := ParseErrKind(name)
		if !ok {
			return nil, fmt.Errorf("error kind %q: no such kind", name)
		}
		s.Errors[k] = n
	}
	for name, d := range r.Details {
		k, ok := ParseErrKind(name)
		if !ok || k == OK {
			return nil, fmt.Errorf("details: error kind %q: no such kind", name)
		}
		s.AddDetail(k, d)
	}
	m, err := messagesOf(r.Messages, &s.Errors)
	if err != nil {
		return nil, err
	}
	s.Messages = m
	deref := func(m *Moments) Moments {
		if m == nil {
			return Moments{}
		}
		return *m
	}
	s.Failed, s.SvcOK, s.DelayAll, s.ServerOK, s.Overhead = deref(r.Failed), deref(r.Service), deref(r.Delay), deref(r.Server), deref(r.Overhead)
	dec := func(what, enc string, n int64) ([]byte, error) {
		switch {
		case enc == "" && n > 0:
			return nil, fmt.Errorf("%s: %d values and no histogram", what, n)
		case enc == "":
			return nil, nil
		}
		h, err := hdr.DecodePacked([]byte(enc))
		if err != nil {
			return nil, fmt.Errorf("%s histogram: %w", what, err)
		}
		// perflab writes its own geometry only; another's could make a
		// decoded copy as large as it likes.
		if h.LowestTrackableValue() != lowestUs || h.HighestTrackableValue() != highestUs || h.SignificantFigures() != sigDigits {
			return nil, fmt.Errorf("%s histogram: range %d..%d µs, %d digits: not perflab's (%d..%d, %d)", what,
				h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), lowestUs, highestUs, sigDigits)
		}
		return []byte(enc), nil
	}
	p := &packedHists{}
	var err1, err2, err3, err4, err5 error
	p.hist, err1 = dec("latency", r.Hist, r.OK.N)
	p.svc, err2 = dec("service time", r.ServiceHist, s.SvcOK.N)
	p.delay, err3 = dec("start delay", r.DelayHist, s.DelayAll.N)
	p.server, err4 = dec("server time", r.ServerHist, s.ServerOK.N)
	// Records written before perflab kept it have failures without one.
	p.fail, err5 = dec("failed latency", r.FailedHist, 0)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, err
	}
	// Stats always has a latency histogram.
	if p.hist == nil {
		p.hist = emptyEncoding()
	}
	s.packed = p
	return s, nil
}

// PhaseRecord is a Phase as JSON holds it exactly: a stage's (or setup's,
// teardown's) operations, each with its StatsRecord, and what a summary of
// it needs (its load, its scenarios' active spans).
type PhaseRecord struct {
	Index  int       `json:"index"`
	Name   string    `json:"name"`
	Values []KV      `json:"values,omitempty"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Load   []Load    `json:"load,omitempty"`
	Error  string    `json:"error,omitempty"`
	// Spans are each scenario's active time from the phase's start, in ns.
	Spans     map[string]int64 `json:"spans_ns,omitempty"`
	Abandoned int64            `json:"abandoned,omitempty"`
	Ops       []OpRecord       `json:"operations"`
}

// OpRecord is one operation of a PhaseRecord.
type OpRecord struct {
	Op
	Stats StatsRecord `json:"stats"`
}

// Record is ph as a PhaseRecord.
func (ph *Phase) Record() PhaseRecord {
	r := PhaseRecord{Index: ph.Index, Name: ph.Name, Values: ph.Values, Start: ph.Start, End: ph.End, Load: ph.Load, Error: ph.Error,
		Abandoned: ph.Abandoned, Ops: make([]OpRecord, 0, len(ph.Ops))}
	for name, d := range ph.Spans {
		if r.Spans == nil {
			r.Spans = map[string]int64{}
		}
		r.Spans[name] = int64(d)
	}
	for i, op := range ph.Ops {
		if i >= len(ph.Totals) || ph.Totals[i] == nil {
			break
		}
		r.Ops = append(r.Ops, OpRecord{Op: op, Stats: ph.Totals[i].Record()})
	}
	return r
}

// Phase is the record as a Phase, its statistics packed.
func (r PhaseRecord) Phase() (*Phase, error) {
	ph := &Phase{Index: r.Index, Name: r.Name, Values: slices.Clone(r.Values), Start: r.Start, End: r.End, Load: slices.Clone(r.Load),
		Error: r.Error, Abandoned: r.Abandoned, Spans: map[string]time.Duration{}}
	for name, ns := range r.Spans {
		ph.Spans[name] = time.Duration(ns)
	}
	for _, o := range r.Ops {
		st, err := o.Stats.Stats()
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", o.Kind, o.Name, err)
		}
		ph.Ops = append(ph.Ops, o.Op)
		ph.Totals = append(ph.Totals, st)
	}
	return ph, nil
}
