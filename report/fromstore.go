package report

import (
	"encoding/json"
	"fmt"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/store"
)

// FromStore reads a stored run as comparisons and drift analyses read run
// directories.
func FromStore(st *store.Store, id string) (*RunData, error) {
	b, err := st.Summary(id)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	hs, err := st.Histograms(id)
	if err != nil {
		return nil, err
	}
	rd := &RunData{Dir: id, Summary: &s, Intervals: map[string][]*IntervalData{}}
	for _, h := range hs {
		if h.Interval < 0 {
			continue
		}
		tag := Tag(fmt.Sprintf("s%d", h.Phase), metrics.Op{Scenario: h.Scenario, Name: h.Operation})
		rd.Intervals[tag] = append(rd.Intervals[tag], NewIntervalData(h.Start.UnixMilli(), h.End.UnixMilli(), h.Encoded))
	}
	return rd, nil
}
