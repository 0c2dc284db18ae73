package results_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// loadIncluding writes runtest.IncludingPlan under a new directory and
// loads it.
func loadIncluding(t *testing.T) *plan.Plan {
	t.Helper()
	root := t.TempDir()
	runtest.WriteTree(t, root, runtest.IncludingPlan("http://127.0.0.1:1", 1))
	p, err := plan.Load(filepath.Join(root, runtest.IncludingPlanFile), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Included) != 4 {
		t.Fatalf("the plan includes %d files, want 4", len(p.Included))
	}
	return p
}

// reloads loads the plan of a record's plan directory, and checks that it
// is the plan p whole: its text and every file it includes, found by the
// plan where the record put them.
func reloads(t *testing.T, planDir string, p *plan.Plan) {
	t.Helper()
	var paths []string
	for _, f := range p.Included {
		paths = append(paths, f.Path)
	}
	entry, _ := results.PlanLayout(paths)
	back, err := plan.Load(filepath.Join(planDir, filepath.FromSlash(entry)), plan.Options{})
	if err != nil {
		t.Fatalf("the recorded plan: %v", err)
	}
	if string(back.Source) != string(p.Source) || !reflect.DeepEqual(back.Included, p.Included) {
		t.Errorf("the recorded plan differs:\n%s\n%+v\nwant\n%s\n%+v", back.Source, back.Included, p.Source, p.Included)
	}
}

// A plan and the files it includes are laid out as one tree in which the
// plan finds each where it found it: those above the plan's directory
// under a directory for each level climbed, those named by an absolute
// path under a directory of their own; the names made up are none the
// files' own.
func TestPlanLayout(t *testing.T) {
	for _, tc := range []struct {
		paths  []string
		entry  string
		placed []string
	}{
		{nil, "plan.yaml", nil},
		{[]string{"common/login.yaml", "more/logout.yaml"}, "plan.yaml", []string{"common/login.yaml", "more/logout.yaml"}},
		{[]string{"../team/a.yaml", "../../x/b.yaml", "c.yaml"}, "_/_/plan.yaml", []string{"_/team/a.yaml", "x/b.yaml", "_/_/c.yaml"}},
		{[]string{"../_/a.yaml", "plan.yaml"}, "__/_plan.yaml", []string{"_/a.yaml", "__/plan.yaml"}},
		{[]string{"/etc/perflab/a.yaml", "b.yaml"}, "plan.yaml", []string{"absolute/etc/perflab/a.yaml", "b.yaml"}},
		{[]string{"/absolute/a.yaml", "absolute/b.yaml"}, "plan.yaml", []string{"_absolute/absolute/a.yaml", "absolute/b.yaml"}},
		// What no plan records, from a record made elsewhere: nothing is
		// placed outside the tree.
		{[]string{"", ".", "..", "/", "a/../../b.yaml"}, "_/plan.yaml", []string{"", "", "", "", "b.yaml"}},
	} {
		entry, placed := results.PlanLayout(tc.paths)
		if entry != tc.entry || !slices.Equal(placed, tc.placed) {
			t.Errorf("PlanLayout(%q) = %q, %q; want %q, %q", tc.paths, entry, placed, tc.entry, tc.placed)
		}
	}

	// The plan, laid out elsewhere, loads as it did.
	p := loadIncluding(t)
	var paths []string
	for _, f := range p.Included {
		paths = append(paths, f.Path)
	}
	entry, placed := results.PlanLayout(paths)
	if entry != "_/plan.yaml" {
		t.Errorf("entry %q", entry)
	}
	tree := map[string]string{entry: string(p.Source)}
	for i, f := range p.Included {
		tree[placed[i]] = f.Source
	}
	dir := t.TempDir()
	runtest.WriteTree(t, dir, tree)
	reloads(t, dir, p)
}

// A run directory keeps the plan whole: summary.json its text and the
// files it includes, plan/ the files laid out for the plan to be run
// again, run.json their paths; a killed run's directory, rebuilt, has them
// too, and so do the history and a run exported from it.
func TestRunDirKeepsIncludes(t *testing.T) {
	p := loadIncluding(t)
	run := runtest.Fixture()
	run.PlanSource, run.PlanIncludes = p.Source, p.Included
	dir := filepath.Join(t.TempDir(), run.ID)
	w, err := results.CreateDir(dir, run.ID, run.PlanName, run.Start, run.PlanSource, nil, run.PlanIncludes...)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range run.Stages {
		if err := w.Sink(ph).Interval(&metrics.Interval{Start: ph.Start, End: ph.End, Ops: ph.Totals}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(results.Summarize(run, runtest.Host), run); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Plan.Source != string(p.Source) || !slices.Equal(s.Plan.Includes, p.Included) {
		t.Errorf("summary.json's plan: %+v", s.Plan)
	}
	if src, err := os.ReadFile(filepath.Join(dir, "plan.yaml")); err != nil || string(src) != string(p.Source) {
		t.Errorf("plan.yaml: %q %v", src, err)
	}
	// The run directory alone, the plan's own files gone.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.CopyFS(moved, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(filepath.Dir(p.File))); err != nil {
		t.Fatal(err)
	}
	reloads(t, filepath.Join(moved, results.PlanDir), p)

	// A killed run: no summary.json, its plan read back from plan/.
	killed := filepath.Join(t.TempDir(), "killed")
	w, err = results.CreateDir(killed, "killed", run.PlanName, run.Start, run.PlanSource, nil, run.PlanIncludes...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sink(run.Stages[0]).Interval(&metrics.Interval{Start: run.Stages[0].Start, End: run.Stages[0].End, Ops: run.Stages[0].Totals}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	rd, err := results.ReadDir(killed)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Summary.Status != store.Killed || rd.Summary.Plan.Source != string(p.Source) || !slices.Equal(rd.Summary.Plan.Includes, p.Included) {
		t.Errorf("the killed run's plan: %s %+v", rd.Summary.Status, rd.Summary.Plan)
	}

	// Into the history and out: the run, and the killed one.
	st, err := store.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, d := range []string{moved, killed} {
		id, err := results.Import(st, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		src, err1 := st.PlanSource(id)
		includes, err2 := st.PlanIncludes(id)
		if err1 != nil || err2 != nil || string(src) != string(p.Source) || !slices.Equal(includes, p.Included) {
			t.Errorf("%s in the history: %q %+v %v %v", id, src, includes, err1, err2)
		}
		out := filepath.Join(t.TempDir(), "out")
		if _, err := results.Export(st, id, out); err != nil {
			t.Fatal(err)
		}
		reloads(t, filepath.Join(out, results.PlanDir), p)
		back, err := results.FromStore(st, id)
		if err != nil || !slices.Equal(back.Summary.Plan.Includes, p.Included) {
			t.Errorf("%s from the history: %+v %v", id, back.Summary.Plan, err)
		}
	}
	// Begun in the history and killed there: the history has the files
	// from the start.
	if err := st.Begin("begun", run.PlanName, run.PlanSource, run.Start, nil, run.PlanIncludes...); err != nil {
		t.Fatal(err)
	}
	back, err := results.FromStore(st, "begun")
	if err != nil || !slices.Equal(back.Summary.Plan.Includes, p.Included) {
		t.Errorf("a run begun in the history: %+v %v", back.Summary.Plan, err)
	}

	// A merged run (perflab merge) is written whole.
	merged := filepath.Join(t.TempDir(), "merged")
	if err := results.WriteDir(rd, merged); err != nil {
		t.Fatal(err)
	}
	reloads(t, filepath.Join(merged, results.PlanDir), p)
}

// A record from elsewhere names the files of its plan as it likes: they
// are written in the plan directory, or not at all, never outside it;
// one naming more files than a plan may include is refused.
func TestRunDirIncludesFromElsewhere(t *testing.T) {
	run := runtest.Fixture()
	dir := filepath.Join(t.TempDir(), "run")
	hostile := []metrics.PlanFile{
		{Path: "../../escape.yaml", Source: "a"},
		{Path: "/tmp/escape.yaml", Source: "b"},
		{Path: "a/../../../c.yaml", Source: "c"},
		{Path: "..", Source: "d"},
	}
	w, err := results.CreateDir(dir, run.ID, run.PlanName, run.Start, run.PlanSource, nil, hostile...)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	var written []string
	filepath.WalkDir(filepath.Dir(dir), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Dir(dir), path)
			written = append(written, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, f := range written {
		if !strings.HasPrefix(f, "run/") {
			t.Errorf("%s: written outside the run directory", f)
		}
	}
	for _, want := range []string{"run/plan/_/_/plan.yaml", "run/plan/escape.yaml", "run/plan/absolute/tmp/escape.yaml", "run/plan/c.yaml"} {
		if !slices.Contains(written, want) {
			t.Errorf("%s not written: %q", want, written)
		}
	}

	many := make([]metrics.PlanFile, plan.MaxIncludes+1)
	for i := range many {
		many[i] = metrics.PlanFile{Path: strings.Repeat("d/", i) + "f.yaml"}
	}
	_, err = results.CreateDir(filepath.Join(t.TempDir(), "many"), run.ID, run.PlanName, run.Start, run.PlanSource, nil, many...)
	if err == nil || !strings.Contains(err.Error(), "101 files included, more than a plan may include (100)") {
		t.Errorf("101 files: %v", err)
	}
}
