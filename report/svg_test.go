package report

import (
	"math"
	"math/rand/v2"
	"testing"
)

// m4 keeps, of each pixel column, the first, lowest, highest and last
// points, in their order: the line drawn through them has the same extent
// in every column, and it starts and ends where the series does.
func TestM4KeepsTheDrawnLine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	px := make([]XY, 8640) // a day of 10 s intervals across 560 pixels
	y := 150.0
	for i := range px {
		y = math.Max(20, math.Min(280, y+r.NormFloat64()*4))
		if i == 5000 {
			y = 25 // a spike: it must survive
		}
		px[i] = XY{60 + 560*float64(i)/float64(len(px)), y}
	}
	kept := m4(px)
	if len(kept) > 4*561 || len(kept) < 2*560 {
		t.Fatalf("kept %d of %d points", len(kept), len(px))
	}
	if kept[0] != px[0] || kept[len(kept)-1] != px[len(px)-1] {
		t.Errorf("ends moved: %v..%v", kept[0], kept[len(kept)-1])
	}
	type extent struct{ lo, hi float64 }
	extents := func(ps []XY) map[float64]extent {
		out := map[float64]extent{}
		for _, p := range ps {
			c := math.Floor(p.X)
			e, ok := out[c]
			if !ok {
				e = extent{p.Y, p.Y}
			}
			out[c] = extent{math.Min(e.lo, p.Y), math.Max(e.hi, p.Y)}
		}
		return out
	}
	all, thin := extents(px), extents(kept)
	if len(all) != len(thin) {
		t.Fatalf("%d columns drawn, %d in the series", len(thin), len(all))
	}
	for c, e := range all {
		if thin[c] != e {
			t.Errorf("column %g: drawn %v, series %v", c, thin[c], e)
		}
	}
	j := 0 // kept is a subsequence of px
	for _, p := range kept {
		for j < len(px) && px[j] != p {
			j++
		}
		if j == len(px) {
			t.Fatalf("%v is not in the series, or out of order", p)
		}
	}
	if short := []XY{{1, 2}, {1.5, 3}}; len(m4(short)) != 2 {
		t.Error("a short series is thinned")
	}
}
