package dataset

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
)

// Mode says how rows are handed to virtual users.
type Mode string

// Modes.
const (
	// PerVU gives VU i (1-based) row (i-1) mod n, always the same one.
	PerVU Mode = "per-vu"
	// Sequential hands out the next row to whoever asks, wrapping around.
	Sequential Mode = "sequential"
	// Random picks a row uniformly.
	Random Mode = "random"
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case PerVU, Sequential, Random:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q: want per-vu, sequential or random", s)
}

// Cursor picks row indexes for concurrent VUs without locks.
type Cursor struct {
	n    int
	mode Mode
	next atomic.Uint64
}

// NewCursor returns a cursor over n rows.
func NewCursor(n int, mode Mode) *Cursor { return &Cursor{n: max(n, 1), mode: mode} }

// Next returns the row index for a VU; r is the VU's own generator.
func (c *Cursor) Next(vu int, r *rand.Rand) int {
	switch c.mode {
	case PerVU:
		return ((vu-1)%c.n + c.n) % c.n
	case Random:
		return r.IntN(c.n)
	default:
		return int((c.next.Add(1) - 1) % uint64(c.n))
	}
}
