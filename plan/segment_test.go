package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSegment(t *testing.T) {
	for in, want := range map[string]Segment{"0/1": {0, 1}, "2/3": {2, 3}, " 0/32 ": {0, 32}} {
		got, err := ParseSegment(in)
		if err != nil || got != want {
			t.Errorf("ParseSegment(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"3/3":  "must be 0 to 2 for 3 workers",
		"0/0":  "at least 1",
		"-1/2": "must be 0 to 1",
		"1":    "want INDEX/COUNT",
		"a/b":  "two integers",
	} {
		if _, err := ParseSegment(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSegment(%q) = %v, want an error saying %q", in, err, msg)
		}
	}
}

// The shares of n items over N workers add up to n, for every n and N,
// and item numbers map back to their worker.
func TestSegmentSharesAddUp(t *testing.T) {
	for count := 1; count <= 9; count++ {
		for n := int64(0); n <= 50; n++ {
			var sum int64
			for i := range count {
				s := Segment{Index: i, Count: count}
				sum += s.Share(n)
				for k := range s.Share(n) {
					if g := s.Global(k); g >= n || int(g%int64(count)) != i {
						t.Fatalf("%d/%d: item %d is the plan's %d of %d", i, count, k, g, n)
					}
				}
			}
			if sum != n {
				t.Fatalf("%d items over %d workers: shares add up to %d", n, count, sum)
			}
		}
	}
}

func TestCheckSegments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	src := `name: split
target: http://127.0.0.1:1
vars: {users: [2, 8]}
scenarios:
  - {name: few, vus: "${users}", iterations: 1, flow: [{name: a, url: /a}]}
  - {name: shared, vus: 2, total_iterations: 100, flow: [{name: b, url: /b}]}
  - {name: open, rate: 10, duration: 1s, vus: 1, max_vus: 2, flow: [{name: c, url: /c}]}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	errs, notes := p.CheckSegments(3)
	if len(errs) != 2 || !strings.Contains(errs[0], "scenario shared (stage users=2): 2 VUs share 100 iterations: each of 3 workers needs a VU") ||
		!strings.Contains(errs[1], "scenario open (stage users=2): an arrival-rate model needs at least one VU per worker: max_vus 2 is fewer than 3 workers") {
		t.Errorf("errors: %q", errs)
	}
	if len(notes) != 1 || notes[0] != "scenario few (stage users=2): 2 VUs for 3 workers: worker 2 runs none of it" {
		t.Errorf("notes: %q", notes)
	}
	if errs, notes := p.CheckSegments(1); errs != nil || notes != nil {
		t.Errorf("one worker: %q %q", errs, notes)
	}
}

// ParseSegment accepts only INDEX/COUNT with 0 <= INDEX < COUNT, and a
// segment it accepts prints back as it reads.
func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"0/1", "2/3", "3/3", "-1/2", "1/0", "a/b", "/", "", " 1/2 ", "9223372036854775807/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seg, err := ParseSegment(s)
		if err != nil {
			return
		}
		if seg.Index < 0 || seg.Index >= seg.Count || seg.Count < 1 {
			t.Fatalf("%q: accepted %+v", s, seg)
		}
		if again, err := ParseSegment(fmt.Sprintf("%d/%d", seg.Index, seg.Count)); err != nil || again != seg {
			t.Fatalf("%q: %+v does not read back: %+v %v", s, seg, again, err)
		}
	})
}
