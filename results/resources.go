package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/csvcell"
	"github.com/perflab/perflab/monitor"
)

// readResources reads a run directory's resources.csv, if it has one.
func readResources(path string) ([]monitor.Point, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var out []monitor.Point
	for i, r := range rows {
		if i == 0 || len(r) != 4 {
			continue
		}
		t, err1 := strconv.ParseInt(r[0], 10, 64)
		v, err2 := strconv.ParseFloat(r[3], 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, i+1, err)
		}
		out = append(out, monitor.Point{Time: time.UnixMilli(t), Monitor: csvcell.Unescape(r[1]), Metric: csvcell.Unescape(r[2]), Value: v})
	}
	return out, nil
}

// WriteResources writes monitor samples as resources.csv: the monitors'
// series on the same time axis as intervals.csv.
func WriteResources(w io.Writer, points iter.Seq[monitor.Point]) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"time_ms", "monitor", "metric", "value"})
	for p := range points {
		cw.Write([]string{strconv.FormatInt(p.Time.UnixMilli(), 10), csvcell.Escape(p.Monitor), csvcell.Escape(p.Metric), strconv.FormatFloat(p.Value, 'g', -1, 64)})
	}
	cw.Flush()
	return cw.Error()
}
