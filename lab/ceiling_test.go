package lab

import (
	"math"
	"runtime/debug"
	"testing"
)

// The end of a run may use as much memory as the process held when its
// load ended (at least 64 MB); the limit is the runs' while any is
// ending, and what it was once the last has ended. A limit set before
// (GOMEMLIMIT) stays as it is.
func TestEndCeiling(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	first := endCeiling()
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 || limit < 64<<20 {
		t.Fatalf("limit %d while a run ends, want one of 64 MB or more", limit)
	}
	second := endCeiling() // another run ending meanwhile
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("limit %d with two runs ending, want the first's %d", got, limit)
	}
	first()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("limit %d while the second still ends, want %d", got, limit)
	}
	second()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d once both ended, want none", got)
	}
	debug.SetMemoryLimit(1 << 40)
	endCeiling()()
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("a limit set before became %d", got)
	}
}
