package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/metrics"
)

// TotalsFile is totals.jsonl: a finished run's exact statistics, a JSON
// object per phase (setup, each stage, teardown) with each operation's
// counts, errors by kind, exact moments and histograms
// (metrics.PhaseRecord). summary.json's figures are computed from them;
// runs merge exactly by them (Merge).
const TotalsFile = "totals.jsonl"

// Totals are a run's exact statistics per phase, as the engine recorded
// them: each phase's operations with their statistics over the whole
// phase, packed (metrics.Stats.Pack).
type Totals struct {
	Setup, Stages, Teardown []*metrics.Phase
}

// totalsLine is one line of totals.jsonl.
type totalsLine struct {
	// Part is setup, stage or teardown.
	Part string `json:"part"`
	metrics.PhaseRecord
}

// Parts of a run, as totals.jsonl names them.
const (
	partSetup    = "setup"
	partStage    = "stage"
	partTeardown = "teardown"
)

// TotalsOf is the totals of a run the engine recorded.
func TotalsOf(run *metrics.Run) *Totals {
	return &Totals{Setup: run.Setup, Stages: run.Stages, Teardown: run.Teardown}
}

// WriteTotals writes totals as totals.jsonl.
func WriteTotals(w io.Writer, t *Totals) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, part := range []struct {
		name   string
		phases []*metrics.Phase
	}{{partSetup, t.Setup}, {partStage, t.Stages}, {partTeardown, t.Teardown}} {
		for _, ph := range part.phases {
			if err := enc.Encode(totalsLine{Part: part.name, PhaseRecord: ph.Record()}); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// ReadTotals reads totals.jsonl.
func ReadTotals(r io.Reader) (*Totals, error) {
	t := &Totals{}
	dec := json.NewDecoder(bufio.NewReader(r))
	for n := 1; ; n++ {
		var line totalsLine
		err := dec.Decode(&line)
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("phase %d: %w", n, err)
		}
		ph, err := line.Phase()
		if err != nil {
			return nil, fmt.Errorf("phase %d (%s %q): %w", n, line.Part, line.Name, err)
		}
		switch line.Part {
		case partSetup:
			t.Setup = append(t.Setup, ph)
		case partStage:
			t.Stages = append(t.Stages, ph)
		case partTeardown:
			t.Teardown = append(t.Teardown, ph)
		default:
			return nil, fmt.Errorf("phase %d: part %q, want setup, stage or teardown", n, line.Part)
		}
	}
}

// readTotalsFile reads a run directory's totals.jsonl: none when the run
// did not write one (it did not finish, or a perflab before them wrote it).
func readTotalsFile(path string) (*Totals, error) {
	f, err := inputfile.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadTotals(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// totalsOf is a stored run's totals, or none.
func totalsOf(b []byte) (*Totals, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return ReadTotals(bytes.NewReader(b))
}
