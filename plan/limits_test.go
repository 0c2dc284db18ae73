package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tinyPlan = "target: http://127.0.0.1:1\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, url: /}]}\n"

// A plan file over MaxPlanBytes is refused before it is read, naming the
// file, its size and the limit; one at the limit loads.
func TestPlanSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(tinyPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size says it all, and Load must not read it.
	if err := os.Truncate(big, 50<<20); err != nil {
		t.Fatal(err)
	}
	_, err := Load(big, Options{})
	want := big + ": the plan is 50.0 MiB (52428800 bytes): plans are limited to 4 MiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s...", err, want)
	}
	// Parse, for plans given as text, has the same limit.
	src := tinyPlan + "#" + strings.Repeat("x", MaxPlanBytes-len(tinyPlan)-2) + "\n"
	if _, err := Parse([]byte(src), "at-limit.yaml", Options{}); err != nil {
		t.Errorf("a plan of exactly %d bytes: %v", len(src), err)
	}
	if _, err := Parse([]byte(src+"\n"), "over.yaml", Options{}); err == nil || !strings.Contains(err.Error(), "over.yaml: the plan is 4.0 MiB (4194305 bytes): plans are limited to 4 MiB") {
		t.Errorf("one byte over: %v", err)
	}
}

// A plan may declare at most MaxVars variables.
func TestPlanVariablesLimit(t *testing.T) {
	vars := func(n int) string {
		var b strings.Builder
		b.WriteString(tinyPlan + "vars:\n")
		for i := range n {
			fmt.Fprintf(&b, "  v%d: %d\n", i, i)
		}
		return b.String()
	}
	if _, err := Parse([]byte(vars(MaxVars)), "most.yaml", Options{}); err != nil {
		t.Errorf("%d variables: %v", MaxVars, err)
	}
	_, err := Parse([]byte(vars(MaxVars+1)), "many.yaml", Options{})
	if err == nil || err.Error() != "many.yaml:5:3: vars: 10001 variables: a plan may declare at most 10000 (put values in data files: data: csv, file, glob, range)" {
		t.Errorf("got %v", err)
	}
}
