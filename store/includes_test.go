package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// beforeIncludes is the number of migrations of the schema that kept no
// plan's included files.
const beforeIncludes = 13

// A history made before the files a plan includes were kept is migrated:
// its runs read back with none; from then on a run keeps the files its
// plan includes, begun (Begin), imported (Import) or joined by the
// workers of a distributed run (Join: the run and each worker's part),
// and the plan's hash is of its text with them.
func TestPlanIncludes(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { planIncludes(t, filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { planIncludes(t, postgres(t)) })
}

func planIncludes(t *testing.T, path string) {
	old := oldStore(t, path, beforeIncludes)
	t0 := time.UnixMilli(1_700_000_000_000)
	src := []byte("name: shop\ninclude: [common/login.yaml]\n")
	if err := old.Begin("old", "shop", src, t0, nil); err != nil {
		t.Fatal(err)
	}
	st := migrated(t, old, path)
	defer st.Close()
	if files, err := st.PlanIncludes("old"); err != nil || files != nil {
		t.Errorf("the old run: %+v %v", files, err)
	}
	files := []metrics.PlanFile{
		{Path: "common/login.yaml", Source: "include: [../../team/x.yaml]\nfragments: {}\n"},
		{Path: "../team/x.yaml", Source: "fragments: {x: [{url: /x}]}\n"},
	}
	if err := st.Begin("begun", "shop", src, t0, nil, files...); err != nil {
		t.Fatal(err)
	}
	if err := st.Import("imported", "shop", src, t0, t0.Add(time.Second), metrics.StatusCompleted, nil, []byte("{}"), nil, nil, files...); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Join("joined", 0, 1, "shop", src, "sig", t0, nil, files...); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"begun", "imported", "joined", PartID("joined", 0)} {
		if got, err := st.PlanIncludes(id); err != nil || !slices.Equal(got, files) {
			t.Errorf("%s: %+v %v", id, got, err)
		}
	}
	if _, err := st.PlanIncludes("none"); err == nil {
		t.Error("a run not in the history has files")
	}
	runs, err := st.Runs(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for _, r := range runs {
		hashes[r.ID] = r.PlanHash
	}
	if hashes["old"] != PlanHash(src) || hashes["begun"] != PlanHash(src, files...) || hashes["begun"] == hashes["old"] {
		t.Errorf("plan hashes: %v", hashes)
	}
	// Each file's length is part of the hash: moving text from one file
	// to the next is another plan.
	moved := slices.Clone(files)
	moved[0].Source, moved[1].Source = files[0].Source+files[1].Source[:1], files[1].Source[1:]
	if PlanHash(src, moved...) == PlanHash(src, files...) {
		t.Error("text moved between the files hashes alike")
	}
}
