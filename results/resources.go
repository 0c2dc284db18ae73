package results

import (
	"encoding/csv"
	"errors"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/csvcell"
	"github.com/perflab/perflab/monitor"
)

// readResources reads a run directory's resources.csv, if it has one.
func readResources(path string) ([]monitor.Point, error) {
	var out []monitor.Point
	names := map[string]string{} // each monitor's and metric's name, once
	intern := func(s string) string {
		s = csvcell.Unescape(s)
		if n, ok := names[s]; ok {
			return n
		}
		n := strings.Clone(s)
		names[n] = n
		return n
	}
	err := eachCSVRow(path, func(i int, r []string) error {
		if i == 0 || len(r) != 4 {
			return nil
		}
		t, err1 := strconv.ParseInt(r[0], 10, 64)
		v, err2 := strconv.ParseFloat(r[3], 64)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		out = append(out, monitor.Point{Time: time.UnixMilli(t), Monitor: intern(r[1]), Metric: intern(r[2]), Value: v})
		return nil
	})
	return out, err
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
