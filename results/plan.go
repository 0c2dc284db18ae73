package results

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/metrics"
)

// PlanDir is the directory of a run directory that holds the plan and
// the files it includes, laid out by PlanLayout: the plan runs again from
// it, wherever the run directory is. A run whose plan includes nothing
// has none (plan.yaml is the plan whole).
const PlanDir = "plan"

// PlanLayout lays out a plan and the files it includes (their paths as
// metrics.PlanFile has them) as one directory in which the plan finds
// each file where it found it: entry is the plan's place in it, placed[i]
// the place of paths[i], each a path below the directory with '/'
// between names. A file above the plan's directory (../team/auth.yaml)
// puts the plan one directory down for each level climbed, in a directory
// named by underscores; one named by an absolute path goes under a
// directory of its own (absolute/etc/perflab/auth.yaml), where the plan,
// which names that path, does not look: it reads the path itself again.
// The names made up are none of the files' own. A path that names no
// file below its root ("", "..", "/") is placed nowhere ("").
func PlanLayout(paths []string) (entry string, placed []string) {
	type place struct {
		up   int    // the levels climbed above the plan's directory
		rest string // below them; absolute when abs
		abs  bool
	}
	places := make([]place, len(paths))
	used := map[string]bool{}
	depth := 0
	for i, p := range paths {
		p = path.Clean(filepath.ToSlash(p))
		pl := place{abs: path.IsAbs(p)}
		if pl.abs {
			p = strings.TrimLeft(p, "/")
		}
		for !pl.abs && (p == ".." || strings.HasPrefix(p, "../")) {
			pl.up++
			p = strings.TrimPrefix(strings.TrimPrefix(p, ".."), "/")
		}
		if p == "" || p == "." {
			places[i].up = -1 // nowhere
			continue
		}
		pl.rest = p
		places[i] = pl
		for _, name := range strings.Split(p, "/") {
			used[name] = true
		}
		if !pl.abs {
			depth = max(depth, pl.up)
		}
	}
	// A name none of the files has: the first of the candidates, with
	// more underscores before it until it is free.
	free := func(name string) string {
		for used[name] {
			name = "_" + name
		}
		return name
	}
	up, absolute, name := free("_"), free("absolute"), free("plan.yaml")
	climb := func(n int) string { return strings.TrimSuffix(strings.Repeat(up+"/", n), "/") }
	placed = make([]string, len(paths))
	for i, pl := range places {
		switch {
		case pl.up < 0:
		case pl.abs:
			placed[i] = path.Join(absolute, pl.rest)
		default:
			placed[i] = path.Join(climb(depth-pl.up), pl.rest)
		}
	}
	return path.Join(climb(depth), name), placed
}

// writePlan writes the plan and the files it includes into the run
// directory's PlanDir, as PlanLayout lays them out. The files come from
// a plan loaded here or from a record made elsewhere (summary.json, the
// history): each is written below PlanDir, through an os.Root that no
// name or link leads out of, or not at all.
func writePlan(dir string, src []byte, includes []metrics.PlanFile) error {
	if len(includes) == 0 {
		return nil
	}
	if len(includes) > metrics.MaxPlanIncludes {
		return fmt.Errorf("the plan: %d files included, more than a plan may include (%d)", len(includes), metrics.MaxPlanIncludes)
	}
	if err := os.Mkdir(filepath.Join(dir, PlanDir), 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(filepath.Join(dir, PlanDir))
	if err != nil {
		return err
	}
	defer root.Close()
	entry, placed := PlanLayout(includePaths(includes))
	write := func(name string, b []byte) error {
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
		return root.WriteFile(name, b, 0o644)
	}
	errs := []error{write(entry, src)}
	for i, f := range includes {
		if placed[i] != "" {
			errs = append(errs, write(placed[i], []byte(f.Source)))
		}
	}
	return errors.Join(errs...)
}

// readPlan reads back the files a plan included from the run directory's
// PlanDir, by their paths (run.json's): those of a killed run, which
// wrote no summary.json. A file missing or unreadable is left out.
func readPlan(dir string, paths []string) []metrics.PlanFile {
	if len(paths) == 0 || len(paths) > metrics.MaxPlanIncludes {
		return nil
	}
	root, err := os.OpenRoot(filepath.Join(dir, PlanDir))
	if err != nil {
		return nil
	}
	defer root.Close()
	_, placed := PlanLayout(paths)
	var out []metrics.PlanFile
	for i, p := range paths {
		if placed[i] == "" {
			continue
		}
		if b, err := readRegular(root, placed[i]); err == nil {
			out = append(out, metrics.PlanFile{Path: p, Source: string(b)})
		}
	}
	return out
}

// readRegular reads a regular file of root of at most MaxSummary bytes;
// anything else (a named pipe, which would wait for a writer, a device) is
// refused unopened, as inputfile.ReadFile refuses it.
func readRegular(root *os.Root, name string) ([]byte, error) {
	if fi, err := root.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.Join(err, fmt.Errorf("%s: not a regular file", name))
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.Join(err, fmt.Errorf("%s: not a regular file", name))
	}
	return io.ReadAll(inputfile.Limit(f, name, MaxSummary))
}

// includePaths are the paths of a plan's included files.
func includePaths(files []metrics.PlanFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}
