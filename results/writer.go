package results

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
)

// Writer is the directory one run writes: plan.yaml, latency.hlog (every
// interval's histograms, written as the run goes) and intervals.csv (its
// counts and errors), run.json (what the run is, as its stages begin) and
// summary.json (written at the end). The renderers add summary.txt and
// junit.xml with WriteFile.
type Writer struct {
	Path string

	mu   sync.Mutex
	f    *os.File
	bw   *bufio.Writer
	hlog *hdr.HistogramLogWriter
	base time.Time
	// baseMs is the log's BaseTime: interval start times are offsets from it.
	baseMs int64
	// intervals.csv: counts and errors per interval, which the log of
	// successful latencies cannot hold.
	cf  *os.File
	csv *csv.Writer
	// interval_errors.csv: each interval's failures by kind and message.
	ef   *os.File
	ecsv *csv.Writer
	// spans are when each message's failures were seen, for the
	// summary's messages (First, Last).
	spans map[spanKey]MessageSpan
	// manifest is run.json, rewritten as each phase begins.
	manifest Manifest
}

// CreateDir makes the directory of a run and opens its interval log.
// The directory must not exist: two runs never share one (fs.ErrExist).
// The run holds a lock on its interval log while it goes, which tells a
// reader of a directory without summary.json whether its run is still
// going or was killed; run.json names the run and its stages. The plan
// is written as plan.yaml and, with the files it includes, if any, in
// PlanDir.
func CreateDir(dir, runID, planName string, start time.Time, planSource []byte, labels map[string]string, includes ...metrics.PlanFile) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	rd := &Writer{Path: dir, base: start,
		manifest: Manifest{Format: Format, RunID: runID, Plan: planName, PlanIncludes: includePaths(includes), Start: start, Host: host, PID: os.Getpid(), Labels: labels, Stages: []ManifestStage{}}}
	if err := rd.writeManifest(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), planSource, 0o644); err != nil {
		return nil, err
	}
	if err := writePlan(dir, planSource, includes); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "latency.hlog"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockLog(f); err != nil {
		f.Close()
		return nil, err
	}
	cf, err := os.OpenFile(filepath.Join(dir, IntervalsCSV), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		f.Close()
		return nil, err
	}
	ef, err := os.OpenFile(filepath.Join(dir, IntervalErrorsCSV), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		f.Close()
		cf.Close()
		return nil, err
	}
	rd.f, rd.bw, rd.cf, rd.csv, rd.ef, rd.ecsv = f, bufio.NewWriter(f), cf, csv.NewWriter(cf), ef, csv.NewWriter(ef)
	if err := errors.Join(rd.csv.Write(IntervalsHeader), rd.ecsv.Write(IntervalErrorsHeader)); err != nil {
		f.Close()
		cf.Close()
		ef.Close()
		return nil, err
	}
	rd.hlog = hdr.NewHistogramLogWriter(rd.bw)
	// The log's header holds whole seconds: offsets must be from a whole
	// second too, or readers place every interval up to 1 s off.
	baseMs := start.UnixMilli() / 1000 * 1000
	rd.baseMs = baseMs
	rd.hlog.SetBaseTime(baseMs)
	for _, err := range []error{
		rd.hlog.OutputComment("perflab interval histograms: latency of successful operations in microseconds (the Interval_Max column is in seconds)"),
		rd.hlog.OutputComment("tags are STAGE/SCENARIO/OPERATION with characters other than letters, digits and ._-/ replaced by _"),
		rd.hlog.OutputComment(openTagsComment),
		rd.hlog.OutputComment(failedTagComment),
		rd.hlog.OutputLogFormatVersion(),
		rd.hlog.OutputStartTime(baseMs),
		rd.hlog.OutputBaseTime(baseMs),
		rd.hlog.OutputLegend(),
	} {
		if err != nil {
			f.Close()
			cf.Close()
			ef.Close()
			return nil, err
		}
	}
	if err := rd.bw.Flush(); err != nil {
		rd.Close()
		return nil, err
	}
	return rd, nil
}

var tagUnsafe = regexp.MustCompile(`[^A-Za-z0-9._/-]`)

// Tag is the histogram log tag of an operation in a phase: PHASE/SCENARIO/
// NAME for a step (one of the same name in several transactions shares its
// tag), with /.transaction or /.scenario appended for the others, so that
// a scenario named like its step keeps its own histograms.
func Tag(phase string, op metrics.Op) string {
	t := phase + "/" + op.Scenario + "/" + op.Name
	if op.Kind != "" && op.Kind != metrics.KindStep {
		t += "/." + string(op.Kind)
	}
	return tagUnsafe.ReplaceAllString(t, "_")
}

// StageTag is the tag of an operation of a stage.
func StageTag(index int, scenario, name string, kind metrics.Kind) string {
	return Tag(fmt.Sprintf("s%d", index), metrics.Op{Scenario: scenario, Name: name, Kind: kind})
}

// UniqueOps leaves out the operations whose histograms another one of the
// list already stands for (steps of one name in several transactions).
func UniqueOps(ops []Operation) []Operation {
	seen := map[metrics.Key]bool{}
	var out []Operation
	for _, op := range ops {
		k := metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}
		if !seen[k] {
			seen[k] = true
			out = append(out, op)
		}
	}
	return out
}

// Sink returns the interval sink of a phase.
func (rd *Writer) Sink(ph *metrics.Phase) metrics.Sink {
	mErr := rd.beginPhase(ph)
	// Each operation's tag, made once (a regular expression cleans it),
	// not at every interval.
	tags := map[metrics.Key]string{}
	tagOf := func(op metrics.Op) string {
		k := metrics.KeyOf(op)
		t, ok := tags[k]
		if !ok {
			t = Tag(fmt.Sprintf("s%d", ph.Index), op)
			tags[k] = t
		}
		return t
	}
	return sinkFunc(func(iv *metrics.Interval) error {
		if mErr != nil {
			return fmt.Errorf("%s: %w", ManifestFile, mErr)
		}
		rd.mu.Lock()
		defer rd.mu.Unlock()
		ops, stats := metrics.MergeByKey(ph.Ops, iv.Ops)
		for i, st := range stats {
			vus := int64(-1)
			if v, ok := iv.PeakVUs[ops[i].Scenario]; ok && ops[i].Kind == metrics.KindScenario {
				vus = v
			}
			if st.Count == 0 && vus <= 0 {
				continue
			}
			// An interval with failures only gets an empty histogram, so
			// that its counts have a place in the log too.
			tag := tagOf(ops[i])
			// Encoded once for every sink (the run history writes them too).
			enc, q := iv.Digest(st)
			if err := logLine(rd.bw, rd.baseMs, tag, iv.Start.UnixMilli(), iv.End.UnixMilli(), q.Max, enc); err != nil {
				return err
			}
			for _, d := range openDurations(st) {
				if err := rd.logHistogram(d.h, tag+d.suffix, iv); err != nil {
					return err
				}
			}
			fenc, fq, failed := iv.FailDigest(st)
			if failed {
				if err := logLine(rd.bw, rd.baseMs, tag+FailedTag, iv.Start.UnixMilli(), iv.End.UnixMilli(), fq.Max, fenc); err != nil {
					return err
				}
			}
			op := ops[i]
			if err := rd.csv.Write(WithBytes(WithPeakVUs(QuantilesRow(ph.Index, op.Scenario, op.Name, op.Kind, iv.Index, iv.Start.UnixMilli(), iv.End.UnixMilli(), st.Count, st.ErrorCount(), q, fq, iv.Partial), vus), st.Bytes)); err != nil {
				return err
			}
			// The failures by kind and message that recording counted
			// in the interval: read once here, nothing more recorded.
			fs := st.Failures()
			if err := writeIntervalErrors(rd.ecsv, intervalErrorRows(ph.Index, op.Scenario, op.Name, op.Kind, iv.Index, iv.Start.UnixMilli(), iv.End.UnixMilli(), fs)); err != nil {
				return err
			}
			if rd.spans == nil {
				rd.spans = map[spanKey]MessageSpan{}
			}
			addSpans(rd.spans, ph.Index, metrics.KeyOf(op), iv.Start.UnixMilli(), iv.End.UnixMilli(), fs)
			iv.Point()
		}
		// Flush every interval: a crash loses at most the current one.
		rd.csv.Flush()
		if err := rd.csv.Error(); err != nil {
			return err
		}
		return rd.bw.Flush()
	})
}

// logHistogram writes one interval's histogram to the log under tag, as
// hdr.HistogramLogWriter's OutputIntervalHistogram does, with the
// encoder that reuses its memory (metrics.Encode), once for every sink of
// the interval (metrics.Interval.Encode).
func (rd *Writer) logHistogram(h *hdr.Histogram, tag string, iv *metrics.Interval) error {
	enc, q := iv.Encode(h)
	return logLine(rd.bw, rd.baseMs, tag, iv.Start.UnixMilli(), iv.End.UnixMilli(), q.Max, enc)
}

// logLine writes one interval's line of the log: its tag, its start from
// the log's base time and its length in seconds, its maximum (maxUs, in
// µs) in seconds, and its encoded histogram.
func logLine(w io.Writer, baseMs int64, tag string, startMs, endMs, maxUs int64, enc []byte) error {
	start := float64(startMs-baseMs) / 1000
	end := float64(endMs-baseMs) / 1000
	_, err := fmt.Fprintf(w, "Tag=%s,%f,%f,%f,%s\n", tag, start, end-start, float64(maxUs)/hdr.MsToNsRatio, enc)
	return err
}

// Tag suffixes of an open-model operation's service time and start delay
// histograms in latency.hlog, beside its latency's.
const (
	ServiceTimeTag = "/.service_time"
	StartDelayTag  = "/.start_delay"
)

// openTagsComment explains the open models' tags in a log's header.
const openTagsComment = "open models: TAG" + ServiceTimeTag + " is the time from the send, TAG" + StartDelayTag + " from the due time to the send (of failed operations too)"

// failedTagComment explains the failed operations' tag in a log's header.
const failedTagComment = "TAG" + FailedTag + " is the latency of the failed operations that were sent (KO), TAG the successful ones' (OK)"

// openDurations is an open-model operation's service time and start delay
// histograms, those that have values, with their tag suffixes.
func openDurations(st *metrics.Stats) []struct {
	h      *hdr.Histogram
	suffix string
} {
	type dur = struct {
		h      *hdr.Histogram
		suffix string
	}
	var out []dur
	if st.SvcOK.N > 0 {
		out = append(out, dur{st.Svc, ServiceTimeTag})
	}
	if st.DelayAll.N > 0 {
		out = append(out, dur{st.Delay, StartDelayTag})
	}
	return out
}

type sinkFunc func(iv *metrics.Interval) error

func (f sinkFunc) Interval(iv *metrics.Interval) error { return f(iv) }

// Finish writes the run's exact totals (totals.jsonl) and its summary
// (summary.json), and closes the log, whose lock says until then that the
// run is going. The rendered files (summary.txt, junit.xml) are the
// renderers' (WriteFile).
func (rd *Writer) Finish(s *Summary, run *metrics.Run) error {
	if err := rd.flush(); err != nil {
		return err
	}
	rd.mu.Lock()
	setMessageTimes(s, rd.spans)
	rd.mu.Unlock()
	err := WriteFile(filepath.Join(rd.Path, TotalsFile), func(w io.Writer) error { return WriteTotals(w, TotalsOf(run)) })
	if err == nil {
		err = WriteFile(filepath.Join(rd.Path, "summary.json"), s.WriteJSON)
	}
	return errors.Join(err, rd.Close())
}

// flush writes out what the interval files buffer.
func (rd *Writer) flush() error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.f == nil {
		return nil
	}
	rd.csv.Flush()
	rd.ecsv.Flush()
	return errors.Join(rd.csv.Error(), rd.ecsv.Error(), rd.bw.Flush())
}

// Close flushes and closes the interval files (Finish does too); a run that
// ends before its summary closes them with it. It is safe to call twice.
func (rd *Writer) Close() error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.f == nil {
		return nil
	}
	rd.csv.Flush()
	rd.ecsv.Flush()
	err := errors.Join(rd.bw.Flush(), rd.f.Close(), rd.csv.Error(), rd.cf.Close(), rd.ecsv.Error(), rd.ef.Close())
	rd.f = nil
	return err
}

// WriteFile writes a further file into the run directory (WriteFile).
func (rd *Writer) WriteFile(name string, write func(io.Writer) error) error {
	return WriteFile(filepath.Join(rd.Path, name), write)
}

// WriteFile writes a file whole or not at all: into a new file beside it,
// renamed over path once written and synced, so that a run killed while
// writing its summary leaves no half of one.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// WriteDir writes a run model as a new run directory (dir must not exist:
// fs.ErrExist), with the files a run writes: run.json, plan.yaml,
// latency.hlog and intervals.csv from its intervals, resources.csv from
// its points, totals.jsonl and summary.json. A merged run (Merge) is
// written so. The rendered files (summary.txt, junit.xml) are the
// renderers'.
func WriteDir(r *Run, dir string) error {
	s := r.Summary
	w, err := CreateDir(dir, s.RunID, s.Plan.Name, s.Start, []byte(s.Plan.Source), s.Labels, s.Plan.Includes...)
	if err != nil {
		return err
	}
	defer w.Close()
	for _, ph := range s.Stages {
		w.manifest.Stages = append(w.manifest.Stages, ManifestStage{Index: ph.Index, Name: ph.Name})
	}
	if err := w.writeManifest(); err != nil {
		return err
	}
	// The log in time order, as a run writes it.
	type line struct {
		tag string
		d   *IntervalData
	}
	var lines []line
	for tag, ivs := range r.Intervals {
		for _, d := range ivs {
			lines = append(lines, line{tag, d})
		}
	}
	slices.SortFunc(lines, func(a, b line) int {
		return cmp.Or(cmp.Compare(a.d.StartMs, b.d.StartMs), strings.Compare(a.tag, b.tag))
	})
	for _, l := range lines {
		p, err := l.d.Histogram()
		if err != nil {
			return fmt.Errorf("%s: interval at %d ms: %w", l.tag, l.d.StartMs, err)
		}
		if err := logLine(w.bw, w.baseMs, l.tag, l.d.StartMs, l.d.EndMs, p.Max(), []byte(l.d.enc)); err != nil {
			return err
		}
	}
	for _, ph := range s.Stages {
		for _, op := range UniqueOps(ph.Operations) {
			for i, d := range r.IntervalsOf(ph.Index, op) {
				p, err := d.Histogram()
				if err != nil {
					return err
				}
				ko, err := r.FailedQuantilesAt(ph.Index, op, d.StartMs)
				if err != nil {
					return err
				}
				if err := w.csv.Write(WithBytes(WithPeakVUs(IntervalRow(ph.Index, op.Scenario, op.Name, op.Kind, i, d.StartMs, d.EndMs, d.OpCount(p), max(d.Errors, 0), p, ko, d.Partial(s.IntervalLength())), d.PeakVUs), d.Bytes)); err != nil {
					return err
				}
				if err := writeIntervalErrors(w.ecsv, intervalErrorRows(ph.Index, op.Scenario, op.Name, op.Kind, i, d.StartMs, d.EndMs, d.Failures)); err != nil {
					return err
				}
			}
		}
	}
	if len(r.Points) > 0 {
		if err := w.WriteFile("resources.csv", func(wr io.Writer) error { return WriteResources(wr, slices.Values(r.Points)) }); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	if r.Totals != nil {
		if err := w.WriteFile(TotalsFile, func(wr io.Writer) error { return WriteTotals(wr, r.Totals) }); err != nil {
			return err
		}
	}
	if err := w.WriteFile("summary.json", s.WriteJSON); err != nil {
		return err
	}
	return w.Close()
}
