package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Segment is one worker's share of a distributed run: worker Index
// (0-based) of Count. Every countable thing of a scenario (its VUs, its
// shared iterations, its open model's arrivals, the rows of a sequential
// data source) is numbered from 0 in the plan's order, and item k is the
// share of worker k mod Count: the shares interleave, so that N workers
// together make exactly the plan's schedule (a ramp-up's VUs start at the
// plan's times, arrivals are due at the plan's times) and no item is made
// twice or lost to rounding. The zero Segment is the whole plan.
type Segment struct {
	Index, Count int
}

// ParseSegment reads "i/N", 0 <= i < N.
func ParseSegment(s string) (Segment, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Segment{}, fmt.Errorf("segment %q: want INDEX/COUNT, such as 0/3 (the first of 3 workers)", s)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return Segment{}, fmt.Errorf("segment %q: want INDEX/COUNT, two integers such as 0/3", s)
	case n < 1:
		return Segment{}, fmt.Errorf("segment %q: the count of workers must be at least 1", s)
	case i < 0 || i >= n:
		return Segment{}, fmt.Errorf("segment %q: the index counts from 0, so it must be 0 to %d for %d workers", s, n-1, n)
	}
	return Segment{Index: i, Count: n}, nil
}

// String is "i/N", or "" for the whole plan.
func (s Segment) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Whole reports whether the segment is the whole plan (one worker).
func (s Segment) Whole() bool { return s.Count <= 1 }

// Share is how many of n items, numbered 0 to n-1, are the segment's.
func (s Segment) Share(n int64) int64 {
	if s.Whole() {
		return n
	}
	if n <= int64(s.Index) {
		return 0
	}
	return (n-int64(s.Index)-1)/int64(s.Count) + 1
}

// Global is the plan's number (from 0) of the segment's k-th item (from 0).
func (s Segment) Global(k int64) int64 {
	if s.Whole() {
		return k
	}
	return k*int64(s.Count) + int64(s.Index)
}

// GlobalVU is the plan's number (from 1) of the segment's k-th VU (from 1):
// ${vu} is unique across the workers of a run.
func (s Segment) GlobalVU(k int) int { return int(s.Global(int64(k-1))) + 1 }

// Check says what splitting the plan into count workers does to it: errors
// for what cannot be split (a worker with a share of the arrivals or of the
// shared iterations needs a VU to run them; setup that runs per stage), notes for what leaves some workers idle (fewer VUs, or shared
// iterations, than workers). Every stage is checked.
func (p *Plan) CheckSegments(count int) (errs, notes []string) {
	if count <= 1 {
		return nil, nil
	}
	if p.SetupPerStage && len(p.Setup) > 0 {
		errs = append(errs, "setup uses a swept variable, so it runs around every stage: a distributed run runs setup once before the workers start and teardown once after they end")
	}
	if len(p.Simulators) > 0 {
		errs = append(errs, "the plan starts simulators, which would start once per worker: run them once beside the distributed run (perflab sim) and leave them out of the plan")
	}
	seen := map[string]bool{}
	for _, st := range p.Stages() {
		vars := p.VarsFor(st)
		for _, sc := range p.Scenarios {
			l, err := sc.LoadFor(vars)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			var msg string
			isErr := false
			switch {
			case l.Open() && l.MaxVUs < count:
				msg, isErr = fmt.Sprintf("scenario %s (stage %s): an arrival-rate model needs at least one VU per worker: max_vus %d is fewer than %d workers", sc.Name, st.Name(), l.MaxVUs, count), true
			case l.Open():
			case len(l.RampVUs) > 0:
				if l.Peak() < count {
					msg = fmt.Sprintf("scenario %s (stage %s): at most %d VUs for %d workers: %s", sc.Name, st.Name(), l.Peak(), count, idle(l.Peak(), count, "it"))
				}
			case l.TotalIterations > 0 && l.VUs < count:
				msg, isErr = fmt.Sprintf("scenario %s (stage %s): %d VUs share %d iterations: each of %d workers needs a VU for its share of the iterations", sc.Name, st.Name(), l.VUs, l.TotalIterations, count), true
			case l.TotalIterations > 0 && l.TotalIterations < int64(count):
				msg = fmt.Sprintf("scenario %s (stage %s): %d iterations for %d workers: %s", sc.Name, st.Name(), l.TotalIterations, count, idle(int(l.TotalIterations), count, "them"))
			case l.VUs < count:
				msg = fmt.Sprintf("scenario %s (stage %s): %d VUs for %d workers: %s", sc.Name, st.Name(), l.VUs, count, idle(l.VUs, count, "it"))
			}
			if msg == "" || seen[sc.Name] { // the first stage that says it
				continue
			}
			seen[sc.Name] = true
			if isErr {
				errs = append(errs, msg)
			} else {
				notes = append(notes, msg)
			}
		}
	}
	return errs, notes
}

// idle says which workers, from index from on, get none of a scenario.
func idle(from, count int, what string) string {
	if from == count-1 {
		return fmt.Sprintf("worker %d runs none of %s", from, what)
	}
	return fmt.Sprintf("workers %d to %d run none of %s", from, count-1, what)
}

// Files are the files the plan reads besides itself, as the plan names
// them (relative to its directory, or absolute): its data files and its
// certificate authorities. A plan that runs elsewhere (perflab k8s) takes
// them along.
func (p *Plan) Files() []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	add(p.HTTP.CAFile)
	if p.GRPC != nil {
		for _, f := range p.GRPC.Files {
			add(f)
		}
	}
	for _, d := range p.Data {
		add(d.File)
		add(d.CSV)
	}
	return out
}
