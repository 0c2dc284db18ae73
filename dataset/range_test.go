package dataset

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestRange(t *testing.T) {
	const maxS, minS = "9223372036854775807", "-9223372036854775808"
	cases := []struct {
		from, to, step int64
		format         string
		want           []string
	}{
		{1, 5, 1, "", []string{"1", "2", "3", "4", "5"}},
		{1, 9, 4, "dev-%03d", []string{"dev-001", "dev-005", "dev-009"}},
		{0, 10, 3, "", []string{"0", "3", "6", "9"}},
		{3, 1, -1, "", []string{"3", "2", "1"}},
		{10, -10, -10, "%d", []string{"10", "0", "-10"}},
		{5, 5, 1, "", []string{"5"}},
		{5, 5, -3, "", []string{"5"}}, // one value: the step's sign does not matter
		{1, 3, 100, "", []string{"1"}},
		{-2, 2, 2, "%+d", []string{"-2", "+0", "+2"}},
		{7, 7, 1, "%%%d", []string{"%7"}},
		{7, 7, 1, "%5d|%%", []string{"    7|%"}},
		{7, 7, 1, "%-3d|", []string{"7  |"}},
		{255, 255, 1, "%#x", []string{"0xff"}},
		{10, 11, 1, "%X", []string{"A", "B"}},
		{8, 8, 1, "%o %% %b", nil}, // two verbs: checked below as an error
		{5, 5, 1, "%v", []string{"5"}},
		{5, 5, 1, "% 04d", []string{" 005"}},
		{5, 5, 1, "%.3d", []string{"005"}},
		{5, 5, 1, "id-%04d", []string{"id-0005"}},
		{5, 5, 1, "é%dü", []string{"é5ü"}},
		// The ends of int64, without overflow.
		{math.MaxInt64 - 2, math.MaxInt64, 1, "", []string{"9223372036854775805", "9223372036854775806", maxS}},
		{math.MinInt64, math.MinInt64 + 4, 2, "", []string{minS, "-9223372036854775806", "-9223372036854775804"}},
		{math.MaxInt64, math.MinInt64, math.MinInt64, "", []string{maxS, "-1"}},
		{math.MinInt64, math.MaxInt64, math.MaxInt64, "", []string{minS, "-1", "9223372036854775806"}},
		{math.MaxInt64, math.MaxInt64, math.MinInt64, "", []string{maxS}},
	}
	for _, c := range cases {
		got, err := Range(c.from, c.to, c.step, c.format)
		if c.want == nil {
			if err == nil {
				t.Errorf("Range(%d, %d, %d, %q) accepted", c.from, c.to, c.step, c.format)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Range(%d, %d, %d, %q) = %q, %v; want %q", c.from, c.to, c.step, c.format, got, err, c.want)
		}
	}
}

func TestRangeLong(t *testing.T) {
	got, err := Range(-500, 99_999, 1, "")
	if err != nil || len(got) != 100_500 {
		t.Fatalf("got %d values, %v", len(got), err)
	}
	for i, s := range got {
		if s != strconv.Itoa(i-500) {
			t.Fatalf("value %d = %q", i, s)
		}
	}
}

func TestRangeErrors(t *testing.T) {
	cases := []struct {
		from, to, step int64
		format         string
		msg            string
	}{
		{1, 5, 0, "", "step must not be 0"},
		{5, 5, 0, "", "step must not be 0"},
		{1, 5, -1, "", "range from 1 to 5: step -1 moves away from the end"},
		{5, 1, 2, "", "moves away"},
		{0, MaxValues, 1, "", "more than 10000000 values"},
		{0, 1 << 40, 1, "", "more than 10000000 values"},
		{math.MinInt64, math.MaxInt64, 1, "", "more than 10000000 values"},
		{math.MaxInt64, math.MinInt64, -1, "", "more than 10000000 values"},
		// Formats.
		{1, 2, 1, "%s", "%s is not an integer verb"},
		{1, 2, 1, "%q", "%q is not an integer verb"},
		{1, 2, 1, "%f", "%f is not an integer verb"},
		{1, 2, 1, "%é", "%é is not an integer verb"},
		{1, 2, 1, "dev-", "it has 0 verbs"},
		{1, 2, 1, "100%%", "it has 0 verbs"},
		{1, 2, 1, "%d-%d", "it has 2 verbs"},
		{1, 2, 1, "%", "it ends inside a verb"},
		{1, 2, 1, "id-%05", "it ends inside a verb"},
		{1, 2, 1, "%*d", "argument indexes and * widths"},
		{1, 2, 1, "%[1]d", "argument indexes and * widths"},
		{1, 2, 1, "%0100d", "width 100 is over 64"},
		{1, 2, 1, "%099999999999999999999d", "width 99999999999999999999 is over 64"},
		{1, 2, 1, "%.65d", "precision 65 is over 64"},
	}
	for _, c := range cases {
		got, err := Range(c.from, c.to, c.step, c.format)
		if err == nil || !strings.Contains(err.Error(), c.msg) || got != nil {
			t.Errorf("Range(%d, %d, %d, %q) = %q, %v; want an error with %q", c.from, c.to, c.step, c.format, got, err, c.msg)
		}
	}
	_, err := Range(1, 2, 1, "%s")
	if want := `range format "%s": %s is not an integer verb; want one integer verb such as %d or %05d`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// A range over the limit fails fast, without allocating its values.
func TestRangeOverLimitIsCheap(t *testing.T) {
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := Range(0, math.MaxInt64, 1, ""); err == nil {
			t.Fatal("accepted")
		}
	})
	if allocs > 5 {
		t.Errorf("%.0f allocations to refuse a huge range", allocs)
	}
}

func BenchmarkRange(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Range(1, 1000, 1, "id-%04d"); err != nil {
			b.Fatal(err)
		}
	}
}
