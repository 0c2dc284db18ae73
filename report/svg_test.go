package report

import (
	"encoding/json"
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

// A chart of more x values than MaxBuckets is downsampled: each bucket's
// mean (or median) with its min and max, a spike kept in the max; its
// partial interval stays a point apart; fewer values are kept as they are,
// the series aligned on one x column (null where one has no value).
func TestPlotBuckets(t *testing.T) {
	const n = 3 * MaxBuckets // three intervals a bucket
	var a, b []XY
	for i := range n {
		a = append(a, XY{float64(i), float64(i % 3)}) // 0, 1, 2 in each bucket
		b = append(b, XY{float64(i), 10})
	}
	b[4000].Y = 1000
	c := Chart{Series: []Series{{Name: "a", Points: a}, {Name: "b", Points: b, Partial: []XY{{n, 7}}}}, XKind: XSeconds}
	p := c.Plot()
	if len(p.Data[0].V) != MaxBuckets+1 || p.Bucketed == "" {
		t.Fatalf("%d x values (%q), want %d buckets and the partial point", len(p.Data[0].V), p.Bucketed, MaxBuckets)
	}
	sa, sb := p.Series[0], p.Series[1]
	if sa.Min == nil || sb.Min == nil || sb.Partial == nil || sa.Partial != nil {
		t.Fatalf("series %+v", p.Series)
	}
	for i := range MaxBuckets {
		if x := p.Data[0].V[i]; math.Abs(x-(float64(i)+0.5)*float64(n-1)/MaxBuckets) > 1e-9 {
			t.Fatalf("bucket %d at x %g", i, x)
		}
	}
	// The buckets are of width (n-1)/MaxBuckets, a hair under 3: bucket
	// 10 holds x 30 to 32.
	if y, lo, hi := p.Data[sa.Y].V[10], p.Data[*sa.Min].V[10], p.Data[*sa.Max].V[10]; y != 1 || lo != 0 || hi != 2 {
		t.Errorf("a's bucket 10: %g in %g..%g, want the mean 1 in 0..2", y, lo, hi)
	}
	width := float64(n-1) / MaxBuckets
	spike := int(4000 / width)
	if hi := p.Data[*sb.Max].V[spike]; hi != 1000 || p.Data[sb.Y].V[spike] != (10+10+1000)/3.0 {
		t.Errorf("b's spike: max %g, mean %g", hi, p.Data[sb.Y].V[spike])
	}
	c.Median = true
	if p := c.Plot(); p.Data[p.Series[1].Y].V[spike] != 10 {
		t.Errorf("b's median at its spike: %g, want 10", p.Data[p.Series[1].Y].V[spike])
	}
	last := len(p.Data[0].V) - 1
	if p.Data[0].V[last] != n || p.Data[*sb.Partial].V[last] != 7 || !math.IsNaN(p.Data[sb.Y].V[last]) || !math.IsNaN(p.Data[*sb.Partial].V[0]) {
		t.Errorf("the partial point: x %g, %g apart, %g on the line", p.Data[0].V[last], p.Data[*sb.Partial].V[last], p.Data[sb.Y].V[last])
	}
	// Few points: kept, aligned on the union of their x.
	small := Chart{Series: []Series{{Name: "a", Points: []XY{{0, 1}, {2, 3}}}, {Name: "b", Points: []XY{{1, 5}, {2, 6}}}}}.Plot()
	js, err := json.Marshal(small.Data)
	if err != nil || string(js) != `[[0,1,2],[1,null,3],[null,5,6]]` || small.Bucketed != "" || small.Series[0].Min != nil {
		t.Errorf("unbucketed: %s %v %q", js, err, small.Bucketed)
	}
}
