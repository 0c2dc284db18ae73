package report

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/store"
)

// ImportRunDir records a run directory in a store, with labels.
func ImportRunDir(st *store.Store, dir string, labels map[string]string) (string, error) {
	rd, err := ReadRunDir(dir)
	if err != nil {
		return "", err
	}
	s := rd.Summary
	summary, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return "", err
	}
	var hs []store.Encoded
	for _, ph := range s.Stages {
		for _, op := range ph.Operations {
			ivs := rd.Intervals[Tag(fmt.Sprintf("s%d", ph.Index), metrics.Op{Scenario: op.Scenario, Name: op.Name})]
			total := metrics.NewHistogram()
			for i, iv := range ivs {
				h, err := iv.Histogram()
				if err != nil {
					return "", err
				}
				h.MergeInto(total)
				hs = append(hs, store.Encoded{Phase: ph.Index, PhaseName: ph.Name, Scenario: op.Scenario, Operation: op.Name, Kind: string(op.Kind),
					Interval: i, StartMs: iv.StartMs, EndMs: iv.EndMs, Count: h.TotalCount(), Hist: iv.enc})
			}
			enc, err := total.Encode(hdr.V2CompressedEncodingCookieBase)
			if err != nil {
				return "", err
			}
			hs = append(hs, store.Encoded{Phase: ph.Index, PhaseName: ph.Name, Scenario: op.Scenario, Operation: op.Name, Kind: string(op.Kind),
				Interval: -1, StartMs: ph.Start.UnixMilli(), EndMs: ph.End.UnixMilli(), Count: op.Count, Errors: op.Errors.Total, Hist: string(enc)})
		}
	}
	return s.RunID, st.Import(s.RunID, s.Plan.Name, []byte(s.Plan.Source), s.Start, s.End, s.Status, labels, summary, hs)
}

// ExportRunDir writes a stored run as a run directory: summary.json,
// plan.yaml and latency.hlog, readable by perflab and HdrHistogram's tools.
func ExportRunDir(st *store.Store, id, dir string) error {
	sum, err := st.Summary(id)
	if err != nil {
		return err
	}
	src, err := st.PlanSource(id)
	if err != nil {
		return err
	}
	hs, err := st.Histograms(id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), sum, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), src, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "latency.hlog"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	var baseMs int64 = -1
	for _, h := range hs {
		if h.Interval >= 0 && (baseMs < 0 || h.Start.UnixMilli() < baseMs) {
			baseMs = h.Start.UnixMilli()
		}
	}
	if baseMs < 0 {
		baseMs = 0
	}
	baseMs = baseMs / 1000 * 1000
	fmt.Fprintf(w, "#perflab interval histograms exported from the run history: latency of successful operations in microseconds (the Interval_Max column is in seconds)\n")
	fmt.Fprintf(w, "#[Histogram log format version 1.3]\n#[StartTime: %d (seconds since epoch), %s]\n#[BaseTime: %d (seconds since epoch)]\n",
		baseMs/1000, time.UnixMilli(baseMs).UTC().Format(time.RFC3339), baseMs/1000)
	fmt.Fprintln(w, `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`)
	for _, h := range hs {
		if h.Interval < 0 {
			continue
		}
		p, err := hdr.DecodePacked([]byte(h.Encoded))
		if err != nil {
			return err
		}
		tag := Tag(fmt.Sprintf("s%d", h.Phase), metrics.Op{Scenario: h.Scenario, Name: h.Operation})
		fmt.Fprintf(w, "Tag=%s,%f,%f,%f,%s\n", tag, float64(h.Start.UnixMilli()-baseMs)/1000, float64(h.End.UnixMilli()-h.Start.UnixMilli())/1000,
			float64(p.Max())/1e6, h.Encoded)
	}
	return w.Flush()
}
