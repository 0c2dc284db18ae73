package metrics

import (
	"encoding/json"
	"testing"
	"time"
)

// Failed operations are timed as successful ones are: a histogram of
// their own (KO) beside the successful ones' (OK), whose percentiles are
// theirs alone; all operations together are both histograms'.
func TestFailedOperationsHaveTheirPercentiles(t *testing.T) {
	s := NewStats()
	for i := 1; i <= 100; i++ {
		s.Add(time.Duration(i)*time.Millisecond, 0, OK, 0)           // OK: 1..100 ms
		s.Add(time.Duration(1000+i)*time.Millisecond, 0, HTTP5xx, 0) // KO: 1001..1100 ms
	}
	s.Add(time.Second, 0, NotSent, 0) // not sent: counted, not timed
	sum := s.Summarize(time.Second)
	ko := sum.Failed
	if ko == nil || ko.Count != 100 || sum.Errors.Total != 101 {
		t.Fatalf("failed %+v, errors %d: want 100 timed of 101 failures", ko, sum.Errors.Total)
	}
	// Within the histogram's 0.1%, and never beyond the exact extremes.
	near := func(what string, got, want float64) {
		t.Helper()
		if got < want*0.999 || got > want*1.001 {
			t.Errorf("%s = %.3f ms, want %.3f", what, got, want)
		}
	}
	near("KO p50", ko.P50, 1050)
	near("KO p95", ko.P95, 1095)
	near("KO p99", ko.P99, 1099)
	near("KO min", ko.Min, 1001)
	near("KO max", ko.Max, 1100)
	near("KO mean", ko.Mean, 1050.5)
	near("OK p50", sum.Latency.P50, 50)
	near("OK p95", sum.Latency.P95, 95)
	if sum.All == nil {
		t.Fatal("no figures of all operations")
	}
	near("all p50", sum.All.P50, 100)
	near("all p95", sum.All.P95, 1090)
	near("all mean", sum.All.Mean, (50.5+1050.5)/2)

	// Merged: the histograms add, as two workers' do.
	m := NewStats()
	m.Merge(s)
	m.Merge(s)
	if mk := m.Summarize(time.Second).Failed; mk.Count != 200 || mk.P50 != ko.P50 || mk.P99 != ko.P99 {
		t.Errorf("merged twice: %+v, want 200 with the same percentiles as %+v", mk, ko)
	}
	// Packed and read back from its record: the same figures.
	b, err := json.Marshal(s.Record())
	if err != nil {
		t.Fatal(err)
	}
	var rec StatsRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	back, err := rec.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Summarize(time.Second).Failed; *got != *ko {
		t.Errorf("read back: %+v, want %+v", got, ko)
	}
	// Reset keeps the histogram's memory, and forgets its values.
	s.Reset()
	s.Add(20*time.Millisecond, 0, Timeout, 0)
	if f := s.Summarize(time.Second).Failed; f.Count != 1 || f.P50 != 20 || s.Summarize(time.Second).All != nil {
		t.Errorf("after Reset: %+v", f)
	}
}

// A record written before perflab kept the failed operations' histogram
// has their exact moments only: its failed figures say so (count 0, no
// percentiles) and it still merges with one that has it, whose
// percentiles are then of those it holds.
func TestFailedWithoutHistogram(t *testing.T) {
	old := NewStats()
	old.Add(5*time.Millisecond, 0, OK, 0)
	old.Add(30*time.Millisecond, 0, Timeout, 0)
	rec := old.Record()
	rec.FailedHist = ""
	st, err := rec.Stats()
	if err != nil {
		t.Fatal(err)
	}
	f := st.Summarize(time.Second).Failed
	if f == nil || f.Count != 0 || f.Min != 30 || f.Max != 30 || f.P50 != 0 || st.Summarize(time.Second).All != nil {
		t.Errorf("old record: failed %+v", f)
	}
	now := NewStats()
	now.Add(40*time.Millisecond, 0, Timeout, 0)
	now.Merge(st)
	f = now.Summarize(time.Second).Failed
	if f.Count != 1 || f.P50 != 40 || f.Min != 30 || now.Failed.N != 2 {
		t.Errorf("merged with an old record: failed %+v (moments %+v)", f, now.Failed)
	}
}

// What another tool's results give, counted by value (AddN, FromCounts),
// has the failed operations' histogram as Add makes it.
func TestCountedFailuresAreTimed(t *testing.T) {
	one, many := NewStats(), NewStats()
	for range 7 {
		one.Add(25*time.Millisecond, 0, HTTP5xx, 0)
	}
	many.AddN(25*time.Millisecond, HTTP5xx, 0, 7)
	if !one.FailHist.Equals(many.FailHist) || one.Failed != many.Failed {
		t.Errorf("Add: %+v, AddN: %+v", one.Failed, many.Failed)
	}
	fc := FromCounts([]Outcome{{Latency: 25 * time.Millisecond, Kind: HTTP5xx, N: 7}, {Latency: time.Millisecond, Kind: OK, N: 3}}, 0)
	enc, q, ok := fc.FailDigest()
	want, wantQ := Digest(one.FailHist)
	if !ok || string(enc) != string(want) || q != wantQ {
		t.Errorf("FromCounts' failed digest %v %+v, want %+v", ok, q, wantQ)
	}
}
