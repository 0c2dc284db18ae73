package dataset

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
)

// Mode says how a Cursor hands rows to virtual users.
type Mode string

// The modes of a Cursor.
const (
	// PerVU gives VU i (1-based) row (i-1) mod n, always the same one.
	PerVU Mode = "per-vu"
	// Sequential hands the next row to whichever VU asks, wrapping around
	// after the last row, through one counter shared by all VUs.
	Sequential Mode = "sequential"
	// Random picks a row uniformly at random each time.
	Random Mode = "random"
)

// ParseMode returns the Mode named s: "per-vu", "sequential" or "random".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case PerVU, Sequential, Random:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: want %s, %s or %s", s, PerVU, Sequential, Random)
}

// Cursor picks row indexes for concurrent virtual users. It is safe for
// concurrent use and takes no lock: Sequential shares one atomic counter,
// and Random uses the generator each caller passes.
type Cursor struct {
	next atomic.Uint64 // Sequential: how many rows were handed out
	n    uint64
	mode Mode
	// In a worker of a distributed run (Segment): the worker owns the
	// rows offset, offset+stride, ...: own of them.
	stride, offset, own uint64
}

// NewCursor returns a cursor over n rows, n >= 1 (n < 1 is taken as 1).
// A mode other than PerVU and Random, including "", means Sequential.
func NewCursor(n int, mode Mode) *Cursor {
	if mode != PerVU && mode != Random {
		mode = Sequential
	}
	return &Cursor{n: uint64(max(n, 1)), mode: mode}
}

// Segment makes the cursor worker index's (of count workers) in a
// distributed run: the worker owns rows index, index+count, index+2*count,
// ... and hands out only those, so that no two workers use one row.
// Sequential goes through its own rows in order and wraps around them;
// PerVU gives the run's VU v (numbered across the workers, so that
// (v-1) mod count is index) the row a single process would while the run
// has as many rows as VUs, and one of its own rows beyond. With fewer rows
// than workers, the workers share them (row k of all the picks is the
// run's pick k*count+index). Random is unchanged. Call it before the
// cursor is used.
func (c *Cursor) Segment(index, count int) {
	c.stride, c.offset = uint64(max(count, 1)), uint64(max(index, 0))
	c.own = 0
	if c.n > c.offset {
		c.own = (c.n-c.offset-1)/c.stride + 1
	}
}

// Next returns the index, in [0, n), of the row for virtual user vu
// (1-based). r is the caller's own generator, used in Random mode so that
// concurrent VUs share no lock; with r nil, Random uses the top-level
// functions of math/rand/v2.
func (c *Cursor) Next(vu int, r *rand.Rand) int {
	switch c.mode {
	case PerVU:
		if c.own > 0 && vu >= 1 {
			k := uint64(vu-1) / c.stride
			return int((k%c.own)*c.stride + c.offset)
		}
		// (vu-1) mod n, non-negative even for vu < 1.
		i := int64(vu-1) % int64(c.n)
		if i < 0 {
			i += int64(c.n)
		}
		return int(i)
	case Random:
		if r == nil {
			return int(rand.Uint64N(c.n))
		}
		return int(r.Uint64N(c.n))
	default:
		k := c.next.Add(1) - 1
		switch {
		case c.stride == 0: // the whole run's
			return int(k % c.n)
		case c.own > 0:
			return int((k%c.own)*c.stride + c.offset)
		}
		return int((k*c.stride + c.offset) % c.n)
	}
}
