package results

import (
	"encoding/csv"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/csvcell"
	"github.com/perflab/perflab/metrics"
)

// IntervalErrorsCSV is the run directory file of each interval's failures
// by kind and message, a row per operation, interval, kind and message
// (none for an interval without failures): what intervals.csv's errors
// column counts, told apart.
const IntervalErrorsCSV = "interval_errors.csv"

// IntervalErrorsHeader is interval_errors.csv's header: the operation
// (stage, scenario, operation, kind) and the interval (interval, start_ms,
// end_ms) as in intervals.csv; error_kind and message what the failures
// were counted as (metrics.Stats.Failures: an empty message is a kind's
// failures counted without their words, a transaction's or a scenario's),
// other 1 for the failures of the kind whose messages were not kept
// (beyond metrics.MaxMessages), and count how many.
var IntervalErrorsHeader = []string{"stage", "scenario", "operation", "kind", "interval", "start_ms", "end_ms", "error_kind", "message", "other", "count"}

// intervalErrorRows are interval_errors.csv's rows of one operation's
// interval.
func intervalErrorRows(stage int, scenario, operation string, kind metrics.Kind, ivl int, startMs, endMs int64, fs []metrics.ErrorMessage) [][]string {
	out := make([][]string, 0, len(fs))
	for _, e := range fs {
		other := "0"
		if e.Other {
			other = "1"
		}
		out = append(out, []string{strconv.Itoa(stage), csvcell.Escape(scenario), csvcell.Escape(operation), string(kind), strconv.Itoa(ivl),
			strconv.FormatInt(startMs, 10), strconv.FormatInt(endMs, 10), e.Kind, csvcell.Escape(e.Message), other, strconv.FormatInt(e.Count, 10)})
	}
	return out
}

// writeIntervalErrors writes rows to w, flushed: a crash loses at most the
// interval being written.
func writeIntervalErrors(w *csv.Writer, rows [][]string) error {
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// intervalFailure is a row of interval_errors.csv read back.
type intervalFailure struct {
	tag     string
	startMs int64
	e       metrics.ErrorMessage
}

// readIntervalErrors reads interval_errors.csv (none when the run did not
// write one: a run before perflab kept it). The last row of a run that was
// killed may be cut short: it is left out.
func readIntervalErrors(path string, f func(intervalFailure)) error {
	tags := tagCache{}
	return eachCSVRow(path, func(i int, r []string) error {
		if i == 0 || len(r) < len(IntervalErrorsHeader) {
			return nil // the header, or a row cut short
		}
		stage, err1 := strconv.Atoi(r[0])
		start, err2 := strconv.ParseInt(r[5], 10, 64)
		n, err3 := strconv.ParseInt(r[10], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		f(intervalFailure{tag: tags.of(stage, csvcell.Unescape(r[1]), csvcell.Unescape(r[2]), r[3]), startMs: start,
			e: metrics.ErrorMessage{Kind: strings.Clone(r[7]), Message: strings.Clone(csvcell.Unescape(r[8])), Other: r[9] == "1", Count: n}})
		return nil
	})
}

// addIntervalErrors gives the intervals their failures, from
// interval_errors.csv, read a row at a time.
func addIntervalErrors(path string, ivs map[string][]*IntervalData) error {
	return readIntervalErrors(path, func(f intervalFailure) {
		if d := findSorted(ivs[f.tag], f.startMs); d != nil {
			d.Failures = append(d.Failures, f.e)
		}
	})
}

// MessageSpan is when the failures of one message of an operation were
// seen, to within an interval: From is the start of the first interval
// that had one, To the end of the last; N is how many, over the
// intervals.
type MessageSpan struct {
	From, To time.Time
	N        int64
}

// MessageKey names a message of an operation: its operation's scenario,
// name and kind, the failure's kind and message ("" for failures counted
// without words), and whether it is the kind's other messages.
type MessageKey struct {
	Op      metrics.Key
	ErrKind string
	Message string
	Other   bool
}

// spanKey names a message of an operation of a phase.
type spanKey struct {
	phase int
	MessageKey
}

// addSpans widens spans by the failures of an interval of an operation.
func addSpans(spans map[spanKey]MessageSpan, phase int, op metrics.Key, startMs, endMs int64, fs []metrics.ErrorMessage) {
	for _, e := range fs {
		k := spanKey{phase, MessageKey{Op: op, ErrKind: e.Kind, Message: e.Message, Other: e.Other}}
		s, ok := spans[k]
		from, to := time.UnixMilli(startMs), time.UnixMilli(endMs)
		if !ok || from.Before(s.From) {
			s.From = from
		}
		if to.After(s.To) {
			s.To = to
		}
		s.N += e.Count
		spans[k] = s
	}
}

// setMessageTimes gives the messages of the summary's stages their
// first and last times (ErrorMessage.First, Last) from spans.
func setMessageTimes(s *Summary, spans map[spanKey]MessageSpan) {
	for _, ph := range s.Stages {
		for _, op := range ph.Operations {
			for i := range op.Errors.Messages {
				m := &op.Errors.Messages[i]
				if sp, ok := spans[spanKey{ph.Index, MessageKey{Op: metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}, ErrKind: m.Kind, Message: m.Message, Other: m.Other}}]; ok {
					from, to := sp.From.UTC(), sp.To.UTC()
					m.First, m.Last = &from, &to
				}
			}
		}
	}
}

// setMessageTimes gives the messages of the run's summary their first
// and last times from its intervals' failures (a merged run's).
func (rd *Run) setMessageTimes() {
	spans := map[spanKey]MessageSpan{}
	for _, ph := range rd.Summary.Stages {
		for k, sp := range rd.MessageSpans(ph) {
			spans[spanKey{ph.Index, k}] = sp
		}
	}
	setMessageTimes(rd.Summary, spans)
}

// MessageSpans are, for each message of a stage's operations, when its
// failures were seen, from the intervals' failures; none for a run that
// did not keep them per interval.
func (rd *Run) MessageSpans(ph PhaseSummary) map[MessageKey]MessageSpan {
	spans := map[spanKey]MessageSpan{}
	for _, op := range UniqueOps(ph.Operations) {
		for _, d := range rd.IntervalsOf(ph.Index, op) {
			addSpans(spans, ph.Index, metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}, d.StartMs, d.EndMs, d.Failures)
		}
	}
	out := make(map[MessageKey]MessageSpan, len(spans))
	for k, s := range spans {
		out[k.MessageKey] = s
	}
	return out
}
