package dataset

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestParseMode(t *testing.T) {
	for _, s := range []string{"per-vu", "sequential", "random"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "round-robin", "Random", "per_vu", " sequential"} {
		m, err := ParseMode(s)
		if err == nil || m != "" {
			t.Errorf("ParseMode(%q) = %q, %v; want an error", s, m, err)
		}
	}
	// The plan package's golden files hold this message.
	_, err := ParseMode("round-robin")
	if want := `mode "round-robin": want per-vu, sequential or random`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCursorPerVU(t *testing.T) {
	c := NewCursor(3, PerVU)
	for vu, want := range map[int]int{1: 0, 2: 1, 3: 2, 4: 0, 7: 0, 8: 1, 3001: 0, 0: 2, -1: 1, -2: 0, math.MinInt: 1, math.MaxInt: 0} {
		for range 3 { // always the same row
			if got := c.Next(vu, nil); got != want {
				t.Errorf("VU %d got row %d, want %d", vu, got, want)
			}
		}
	}
}

func TestCursorSequential(t *testing.T) {
	c := NewCursor(3, Sequential)
	var got []int
	for range 7 {
		got = append(got, c.Next(1, nil))
	}
	want := []int{0, 1, 2, 0, 1, 2, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// Concurrent VUs share the counter: every row is handed out exactly as often
// as the others, with no row lost or given twice.
func TestCursorSequentialIsFair(t *testing.T) {
	for _, c := range []struct{ goroutines, calls, rows, each int }{
		{8, 1000, 100, 80},
		{7, 1000, 100, 70},
		{16, 999, 37, 432},
	} {
		cur := NewCursor(c.rows, Sequential)
		counts := make([]int, c.rows)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for g := range c.goroutines {
			wg.Go(func() {
				local := make([]int, c.rows)
				for range c.calls {
					local[cur.Next(g+1, nil)]++
				}
				mu.Lock()
				for i, n := range local {
					counts[i] += n
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		for i, n := range counts {
			if n != c.each {
				t.Errorf("%d goroutines x %d calls over %d rows: row %d handed out %d times, want %d",
					c.goroutines, c.calls, c.rows, i, n, c.each)
				break
			}
		}
	}
}

func TestCursorRandom(t *testing.T) {
	const rows, draws = 4, 40_000
	c := NewCursor(rows, Random)
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, rows)
	for range draws {
		counts[c.Next(1, r)]++
	}
	// Chi-square with 3 degrees of freedom: 16.27 is the 0.999 quantile.
	chi := 0.0
	for _, n := range counts {
		d := float64(n) - draws/rows
		chi += d * d / (draws / rows)
	}
	if chi > 16.27 {
		t.Errorf("counts %v are not uniform (chi-square %.1f)", counts, chi)
	}

	// The caller's generator decides: the same seed gives the same rows.
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	c2 := NewCursor(1000, Random)
	for range 100 {
		if x, y := c.Next(1, a), c.Next(2, b); x != y {
			t.Fatalf("same seed, rows %d and %d", x, y)
		}
		if x, y := c2.Next(1, a), c2.Next(2, b); x != y {
			t.Fatalf("same seed, rows %d and %d", x, y)
		}
	}

	// Without a generator, the global one is used.
	for range 1000 {
		if i := c.Next(1, nil); i < 0 || i >= rows {
			t.Fatalf("row %d out of range", i)
		}
	}
}

// Each VU passes its own generator; run with -race.
func TestCursorRandomConcurrent(t *testing.T) {
	c := NewCursor(10, Random)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 0))
			for range 1000 {
				if i := c.Next(g+1, r); i < 0 || i >= 10 {
					t.Errorf("row %d out of range", i)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCursorEdgeCases(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, mode := range []Mode{PerVU, Sequential, Random} {
		for _, n := range []int{1, 0, -5} { // n < 1 is taken as 1
			c := NewCursor(n, mode)
			for vu := range 5 {
				if i := c.Next(vu, r); i != 0 {
					t.Errorf("%s over %d rows gave row %d", mode, n, i)
				}
			}
		}
	}
	// An unknown or empty mode counts like Sequential.
	for _, mode := range []Mode{"", "bogus"} {
		c := NewCursor(3, mode)
		if a, b, d := c.Next(5, nil), c.Next(5, nil), c.Next(5, nil); a != 0 || b != 1 || d != 2 {
			t.Errorf("mode %q gave %d %d %d, want 0 1 2", mode, a, b, d)
		}
	}
}

func BenchmarkCursorSequentialParallel(b *testing.B) {
	c := NewCursor(1000, Sequential)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Next(1, nil)
		}
	})
}

func BenchmarkCursorRandomParallel(b *testing.B) {
	c := NewCursor(1000, Random)
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			c.Next(1, r)
		}
	})
}

// The workers of a distributed run use no row twice: each hands out only
// its own rows (row r is worker r mod N's), Sequential in order and
// PerVU as a single process would while there are rows enough for the
// VUs; with as many picks as rows, every row is used once.
func TestCursorSegments(t *testing.T) {
	const workers = 3
	for n := workers; n <= 14; n++ {
		for _, mode := range []Mode{Sequential, PerVU} {
			used := map[int]int{}
			for i := range workers {
				c := NewCursor(n, mode)
				c.Segment(i, workers)
				own := (n - i + workers - 1) / workers
				for k := range 2 * own {
					vu := k*workers + i + 1 // this worker's VUs, numbered across the run
					row := c.Next(vu, nil)
					if row%workers != i || row >= n {
						t.Fatalf("%s n=%d worker %d: row %d is not its own", mode, n, i, row)
					}
					if k < own {
						used[row]++
						if mode == PerVU && row != vu-1 {
							t.Errorf("per-vu n=%d: VU %d got row %d, a single process gives %d", n, vu, row, vu-1)
						}
					}
				}
			}
			for r := range n {
				if used[r] != 1 {
					t.Errorf("%s n=%d: row %d used %d times by the workers' first picks", mode, n, r, used[r])
				}
			}
		}
	}
	// Fewer rows than workers: they share them, in the run's order.
	c := NewCursor(2, Sequential)
	c.Segment(2, workers)
	if a, b := c.Next(0, nil), c.Next(0, nil); a != 0 || b != 1 {
		t.Errorf("2 rows, worker 2 of 3: rows %d %d, want the run's picks 2 and 5: 0 and 1", a, b)
	}
	// Without a segment, the whole run's order.
	whole := NewCursor(3, Sequential)
	for k := range 7 {
		if got := whole.Next(1, nil); got != k%3 {
			t.Fatalf("pick %d: row %d", k, got)
		}
	}
}
