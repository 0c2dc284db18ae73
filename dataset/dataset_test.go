package dataset

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestExpandGlob(t *testing.T) {
	v, err := ExpandGlob("C201-7-[1-25]A-[1-40]A1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1000 || v[0] != "C201-7-1A-1A1" || v[1] != "C201-7-1A-2A1" || v[999] != "C201-7-25A-40A1" {
		t.Fatalf("got %d values: %v ... %v", len(v), v[:2], v[len(v)-1])
	}
	cases := map[string][]string{
		"a[1-2]b[1-3]":    {"a1b1", "a1b2", "a1b3", "a2b1", "a2b2", "a2b3"},
		"[001-003]":       {"001", "002", "003"},
		"x[0-20:10]":      {"x0", "x10", "x20"},
		"[a-c]":           {"a", "b", "c"},
		"[A-E:2]":         {"A", "C", "E"},
		"{one,two}-[1-2]": {"one-1", "one-2", "two-1", "two-2"},
		`lit\[1-2\]`:      {"lit[1-2]"},
		"plain":           {"plain"},
	}
	for in, want := range cases {
		got, err := ExpandGlob(in, 0)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ExpandGlob(%q) = %v, %v; want %v", in, got, err, want)
		}
		if n, _ := GlobCount(in); n != int64(len(want)) {
			t.Errorf("GlobCount(%q) = %d", in, n)
		}
	}
}

func TestGlobErrors(t *testing.T) {
	cases := []struct {
		in     string
		offset int
		msg    string
	}{
		{"C201-[1-25A", 5, "unterminated"},
		{"x{}", 1, "empty set"},
		{"[5-1]", 0, "start is after end"},
		{"[1-9:0]", 0, "step"},
		{"[a-9]", 0, "two numbers or two letters"},
		{"[a-Z]", 0, "mixes"},
		{"a]", 1, "unexpected ]"},
		{"[1-1000][1-1000][1-1000]", 0, "more than the limit"},
	}
	for _, c := range cases {
		_, err := ExpandGlob(c.in, 0)
		var ge *GlobError
		if !errors.As(err, &ge) || ge.Offset != c.offset || !strings.Contains(ge.Msg, c.msg) {
			t.Errorf("ExpandGlob(%q) = %v; want offset %d and %q", c.in, err, c.offset, c.msg)
		}
	}
	if _, err := ExpandGlob("[1-10]", 5); err == nil {
		t.Error("limit of 5 not enforced")
	}
}

func TestRange(t *testing.T) {
	got, err := Range(1, 9, 4, "dev-%03d")
	if err != nil || !reflect.DeepEqual(got, []string{"dev-001", "dev-005", "dev-009"}) {
		t.Errorf("Range = %v, %v", got, err)
	}
	if got, _ := Range(3, 1, -1, ""); !reflect.DeepEqual(got, []string{"3", "2", "1"}) {
		t.Errorf("descending = %v", got)
	}
	for _, bad := range [][3]int64{{1, 5, 0}, {1, 5, -1}, {0, 1 << 40, 1}} {
		if _, err := Range(bad[0], bad[1], bad[2], ""); err == nil {
			t.Errorf("Range%v accepted", bad)
		}
	}
	if _, err := Range(1, 2, 1, "%s"); err == nil {
		t.Error("non-integer format accepted")
	}
}

func TestReadCSV(t *testing.T) {
	tb, err := ReadCSV(strings.NewReader("\xef\xbb\xbflogin,password\nann,1\nbob,2\n"), CSVOptions{Header: true})
	if err != nil || !reflect.DeepEqual(tb.Columns, []string{"login", "password"}) || len(tb.Rows) != 2 || tb.Rows[1][0] != "bob" {
		t.Fatalf("got %+v, %v", tb, err)
	}
	if i, ok := tb.Column("password"); !ok || i != 1 {
		t.Error("Column")
	}
	tb, err = ReadCSV(strings.NewReader("a;1\nb;2\n"), CSVOptions{Columns: []string{"name", "n"}, Comma: ';'})
	if err != nil || len(tb.Rows) != 2 || tb.Rows[1][1] != "2" {
		t.Fatalf("no header: %+v %v", tb, err)
	}
	if _, err := ReadCSV(strings.NewReader("a,b\n1,2\n3\n"), CSVOptions{Header: true}); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("ragged row: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("a,a\n1,2\n"), CSVOptions{Header: true}); err == nil {
		t.Error("duplicate column accepted")
	}
}

func TestCursorSequentialIsFair(t *testing.T) {
	c := NewCursor(100, Sequential)
	counts := make([]int, 100)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]int, 100)
			for i := 0; i < 1000; i++ {
				local[c.Next(g+1, nil)]++
			}
			mu.Lock()
			for i, n := range local {
				counts[i] += n
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, n := range counts {
		if n != 80 {
			t.Fatalf("row %d handed out %d times, want 80", i, n)
		}
	}
}

func TestCursorModes(t *testing.T) {
	c := NewCursor(3, PerVU)
	for vu, want := range map[int]int{1: 0, 2: 1, 3: 2, 4: 0, 7: 0} {
		if got := c.Next(vu, nil); got != want {
			t.Errorf("per-vu %d -> %d, want %d", vu, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	rc := NewCursor(4, Random)
	seen := map[int]int{}
	for i := 0; i < 4000; i++ {
		seen[rc.Next(1, r)]++
	}
	for i := 0; i < 4; i++ {
		if seen[i] < 850 || seen[i] > 1150 {
			t.Errorf("random row %d picked %d of 4000 times", i, seen[i])
		}
	}
	if _, err := ParseMode("round-robin"); err == nil || !strings.Contains(err.Error(), "per-vu, sequential or random") {
		t.Errorf("ParseMode: %v", err)
	}
}

func FuzzExpandGlob(f *testing.F) {
	for _, s := range []string{"a[1-3]", "{x,y}[a-c:2]", `\[x`, "[001-010]", "[1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := GlobCount(s)
		v, err2 := ExpandGlob(s, 100000)
		if err2 != nil {
			return
		}
		if err != nil || int64(len(v)) != n {
			t.Fatalf("%q: count %d (%v) but %d values", s, n, err, len(v))
		}
	})
}
