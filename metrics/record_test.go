package metrics

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// everything is statistics with every kind of value a Stats keeps.
func everything() *Stats {
	s := NewOpenStats()
	for i := 1; i <= 200; i++ {
		svc := time.Duration(i) * 137 * time.Microsecond
		ek := OK
		switch i % 25 {
		case 3:
			ek = Timeout
		case 7:
			ek = HTTP5xx
		case 11:
			ek = NotSent
		}
		s.Add(svc+time.Duration(i)*time.Microsecond, svc, ek, i)
		if ek == OK && i%2 == 0 {
			s.AddServer(svc/2, svc)
		}
	}
	s.Add(2*time.Hour, 2*time.Hour, OK, 0) // clamped
	s.Dropped, s.Queued = 4, 9
	return s
}

// A record read back is the statistics recorded: the same summary, the
// same record, and it merges as the original does; packed or not.
func TestStatsRecordRoundTrip(t *testing.T) {
	orig := everything()
	rec := orig.Record()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back StatsRecord
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	st, err := back.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Summarize(time.Second), orig.Summarize(time.Second); !reflect.DeepEqual(got, want) {
		t.Errorf("summary read back\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(st.Record(), rec) {
		t.Error("the record of the record read back differs")
	}
	packed := everything()
	packed.Pack()
	if !reflect.DeepEqual(packed.Record(), rec) {
		t.Error("a packed Stats' record differs from the live one's")
	}
	a, b2 := everything(), everything()
	a.Merge(everything())
	b2.Merge(st)
	if !reflect.DeepEqual(a.Record(), b2.Record()) {
		t.Error("a record read back merges differently from the statistics it records")
	}
	if rec.Errors["timeout"] != 8 || rec.Errors["not_sent"] != 8 || rec.Clamped != 1 || rec.Server == nil || rec.DelayHist == "" || rec.FailedHist == "" {
		t.Errorf("record %+v", rec)
	}
}

// A record that cannot be what Stats wrote is an error, not a panic later.
func TestStatsRecordRefuses(t *testing.T) {
	good := everything().Record()
	for _, c := range []struct {
		edit func(r *StatsRecord)
		want string
	}{
		{func(r *StatsRecord) { r.Errors = map[string]int64{"oops": 1} }, `error kind "oops"`},
		{func(r *StatsRecord) { r.Hist = "" }, "latency: 177 values and no histogram"},
		{func(r *StatsRecord) { r.DelayHist = "HISTFAAAA" }, "start delay histogram"},
		{func(r *StatsRecord) { r.ServerHist = "" }, "server time: "},
	} {
		r := good
		c.edit(&r)
		if _, err := r.Stats(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// What a failure said is kept once per kind, at most MaxDetail bytes of
// valid UTF-8, merged kind by kind, and read back from a record as
// written; a record naming no kind is refused.
func TestDetails(t *testing.T) {
	s := NewStats()
	s.Add(time.Millisecond, time.Millisecond, NotSent, 0)
	s.AddDetail(NotSent, "${token} is not set")
	s.AddDetail(NotSent, "${other} is not set") // the first is kept
	s.AddDetail(OK, "ok")                       // a success says nothing
	s.AddDetail(Timeout, strings.Repeat("é", 200)+"\xff")
	if s.Details[NotSent] != "${token} is not set" || len(s.Details) != 2 {
		t.Errorf("details %q", s.Details)
	}
	if d := s.Details[Timeout]; len(d) > MaxDetail || !strings.HasSuffix(d, "...") || !utf8.ValidString(d) {
		t.Errorf("a long detail: %d bytes %q", len(d), d)
	}
	o := NewStats()
	o.Add(time.Millisecond, time.Millisecond, HTTP5xx, 0)
	o.AddDetail(HTTP5xx, "status 503")
	o.AddDetail(NotSent, "${later} is not set")
	s.Merge(o)
	if s.Details[HTTP5xx] != "status 503" || s.Details[NotSent] != "${token} is not set" {
		t.Errorf("merged details %q", s.Details)
	}
	back, b, err := readBack(t, s)
	if err != nil || !reflect.DeepEqual(back.Details, s.Details) {
		t.Errorf("read back: %q, %v; want %q", back.Details, err, s.Details)
	}
	var r StatsRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r.Details["no_such"] = "x"
	if _, err := r.Stats(); err == nil || !strings.Contains(err.Error(), `error kind "no_such"`) {
		t.Errorf("a record with an unknown kind: %v", err)
	}
}
