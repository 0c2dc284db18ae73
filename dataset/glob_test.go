package dataset

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestExpandGlobDevices(t *testing.T) {
	v, err := ExpandGlob("C201-7-[1-25]A-[1-40]A1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1000 {
		t.Fatalf("got %d values, want 1000", len(v))
	}
	for i, want := range map[int]string{
		0:   "C201-7-1A-1A1",
		1:   "C201-7-1A-2A1",
		39:  "C201-7-1A-40A1",
		40:  "C201-7-2A-1A1",
		999: "C201-7-25A-40A1",
	} {
		if v[i] != want {
			t.Errorf("value %d = %q, want %q", i, v[i], want)
		}
	}
	seen := map[string]bool{}
	for _, s := range v {
		if seen[s] {
			t.Fatalf("%q appears twice", s)
		}
		seen[s] = true
	}
	if n, err := GlobCount("C201-7-[1-25]A-[1-40]A1"); n != 1000 || err != nil {
		t.Errorf("GlobCount = %d, %v; want 1000", n, err)
	}
}

func seq(format string, from, to, step int) []string {
	var out []string
	for i := from; i <= to; i += step {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

func TestExpandGlob(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		// No globbing.
		{"", []string{""}},
		{"plain", []string{"plain"}},
		{"http://h/a?b=c&d=%20", []string{"http://h/a?b=c&d=%20"}},
		// Numeric ranges.
		{"[1-5]", []string{"1", "2", "3", "4", "5"}},
		{"[5-5]", []string{"5"}},
		{"[0-2]", []string{"0", "1", "2"}},
		{"[8-11]", []string{"8", "9", "10", "11"}},
		{"[001-003]", []string{"001", "002", "003"}},
		{"[08-11]", []string{"08", "09", "10", "11"}},
		{"[001-100]", seq("%03d", 1, 100, 1)},
		{"[01-100:33]", []string{"01", "34", "67", "100"}},
		{"[1-010]", seq("%d", 1, 10, 1)}, // padding follows the start only
		{"[00-2]", []string{"00", "01", "02"}},
		{"[1-10:3]", []string{"1", "4", "7", "10"}},
		{"[1-100:10]", seq("%d", 1, 91, 10)},
		{"x[0-20:10]", []string{"x0", "x10", "x20"}},
		{"[1-3:10]", []string{"1"}},
		{"[9223372036854775806-9223372036854775807]", []string{"9223372036854775806", "9223372036854775807"}},
		// Letter ranges.
		{"[a-c]", []string{"a", "b", "c"}},
		{"[A-F]", []string{"A", "B", "C", "D", "E", "F"}},
		{"[A-E:2]", []string{"A", "C", "E"}},
		{"[a-z:5]", []string{"a", "f", "k", "p", "u", "z"}},
		{"[x-x]", []string{"x"}},
		// Sets.
		{"{one,two,three}", []string{"one", "two", "three"}},
		{"{solo}", []string{"solo"}},
		{"item{,s}", []string{"item", "items"}},
		{"{,}", []string{"", ""}},
		{`{a\,b,c}`, []string{"a,b", "c"}},
		{`{\{x\},\[y\]}`, []string{"{x}", "[y]"}},
		{`{a\b}`, []string{`a\b`}},
		// Products: the leftmost part varies slowest.
		{"a[1-2]b[1-3]", []string{"a1b1", "a1b2", "a1b3", "a2b1", "a2b2", "a2b3"}},
		{"{one,two}-[1-2]", []string{"one-1", "one-2", "two-1", "two-2"}},
		{"{x,y}[1-2]{p,q}", []string{"x1p", "x1q", "x2p", "x2q", "y1p", "y1q", "y2p", "y2q"}},
		{"[a-b][1-2]", []string{"a1", "a2", "b1", "b2"}},
		{"[1-2][1-2][1-2]", []string{"111", "112", "121", "122", "211", "212", "221", "222"}},
		// Escapes.
		{`lit\[1-2\]`, []string{"lit[1-2]"}},
		{`\{a,b\}[1-2]`, []string{"{a,b}1", "{a,b}2"}},
		{`a\b\,c`, []string{`a\b\,c`}},
		{`end\`, []string{`end\`}},
		// Kept literally, as curl does.
		{"ids[]=1&ids[]=[1-2]", []string{"ids[]=1&ids[]=1", "ids[]=1&ids[]=2"}},
		{"http://[::1]:8080/d[1-2]", []string{"http://[::1]:8080/d1", "http://[::1]:8080/d2"}},
		{"http://[2001:db8::7]/", []string{"http://[2001:db8::7]/"}},
		{"http://[fe80::1%25en0]/", []string{"http://[fe80::1%25en0]/"}},
	}
	for _, c := range cases {
		got, err := ExpandGlob(c.in, 0)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ExpandGlob(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if n, err := GlobCount(c.in); n != int64(len(c.want)) || err != nil {
			t.Errorf("GlobCount(%q) = %d, %v; want %d", c.in, n, err, len(c.want))
		}
	}
}

func TestGlobErrors(t *testing.T) {
	cases := []struct {
		in     string
		max    int
		offset int
		msg    string
	}{
		// Unterminated and unmatched.
		{"C201-[1-25A", 0, 5, "unterminated [: missing ]"},
		{"a{b,c", 0, 1, "unterminated {: missing }"},
		{"a]", 0, 1, `unexpected ] (escape it as \])`},
		{"a}b", 0, 1, `unexpected } (escape it as \})`},
		{`\\[1-2]`, 0, 6, "unexpected ]"}, // \\ is not an escape: \[ is
		{"{a,[1-2]}", 0, 3, "[ inside a set"},
		{"{a{b}}", 0, 2, "{ inside a set"},
		{"{a]}", 0, 2, "unexpected ] inside a set"},
		// Empty set.
		{"x{}", 0, 1, "empty set {}"},
		// Bad ranges, reported at their bracket.
		{"[5-1]", 0, 0, "start is after end"},
		{"ab[z-a]", 0, 2, "start is after end"},
		{"[1-9:0]", 0, 0, `step "0" must be a positive integer`},
		{"[1-9:-1]", 0, 0, "step"},
		{"[1-9:x]", 0, 0, "step"},
		{"[1-9:]", 0, 0, "step"},
		{"[a-z:1:2]", 0, 0, "step"},
		{"[a-9]", 0, 0, "mixes a letter and a number"},
		{"x[1-z]", 0, 1, "mixes a letter and a number"},
		{"[a-Z]", 0, 0, "mixes lower and upper case"},
		{"[A-z]", 0, 0, "mixes lower and upper case"},
		{"[1-]", 0, 0, "want [start-end]"},
		{"[-5]", 0, 0, "want [start-end]"},
		{"[15]", 0, 0, "want [start-end]"},
		{"[1.2.3.4]", 0, 0, "want [start-end]"},
		{"[aa-b]", 0, 0, "want two numbers or two letters"},
		{"[1-2-3]", 0, 0, "want two numbers or two letters"},
		{"[ 1-2]", 0, 0, "want two numbers or two letters"},
		{"[+1-2]", 0, 0, "want two numbers or two letters"},
		{"[[1-2]", 0, 0, "want two numbers or two letters"},
		{"[1-99999999999999999999]", 0, 0, "end 99999999999999999999 is too large"},
		{"[9223372036854775808-9223372036854775809]", 0, 0, "start 9223372036854775808 is too large"},
		// Over the limit: reported at the part that crosses it.
		{"[1-1000][1-1000][1-1000]", 0, 16, "pattern expands to 1000000000 values, more than the limit of 10000000"},
		{"[1-10000001]", 0, 0, "more than the limit of 10000000"},
		{"x[1-10]", 5, 1, "10 values, more than the limit of 5"},
		{"{a,b}-[1-3]", 5, 6, "6 values, more than the limit of 5"},
		{"[0-9223372036854775806][0-9]", 0, 0, "more than 9223372036854775807 values"},
		{"a{b,c}[1-9223372036854775806]", 0, 6, "more than 9223372036854775807 values"},
	}
	for _, c := range cases {
		v, err := ExpandGlob(c.in, c.max)
		var ge *GlobError
		if !errors.As(err, &ge) || ge.Offset != c.offset || !strings.Contains(ge.Msg, c.msg) {
			t.Errorf("ExpandGlob(%q, %d) = %q, %v; want offset %d and %q", c.in, c.max, v, err, c.offset, c.msg)
			continue
		}
		if v != nil {
			t.Errorf("ExpandGlob(%q) returned values with an error", c.in)
		}
		if want := fmt.Sprintf("glob offset %d: %s", ge.Offset, ge.Msg); err.Error() != want {
			t.Errorf("Error() = %q, want %q", err.Error(), want)
		}
	}
}

// The plan package's golden files hold this message.
func TestGlobErrorText(t *testing.T) {
	_, err := ExpandGlob("C201-[1-25A", 0)
	if err == nil || err.Error() != "glob offset 5: unterminated [: missing ]" {
		t.Errorf("got %v", err)
	}
}

func TestGlobCount(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"x", 1},
		{"[1-1000000][1-1000000]", 1_000_000_000_000},
		{"{a,b,c}[a-z][0-9:3]", 3 * 26 * 4},
		{"[0-9223372036854775806]", math.MaxInt64},
		{"[0-9223372036854775806][0-9]", math.MaxInt64}, // saturates
		{"[1-4294967296][1-4294967296][1-4294967296]", math.MaxInt64},
	}
	for _, c := range cases {
		if n, err := GlobCount(c.in); n != c.want || err != nil {
			t.Errorf("GlobCount(%q) = %d, %v; want %d", c.in, n, err, c.want)
		}
	}
	n, err := GlobCount("a[1-")
	var ge *GlobError
	if n != 0 || !errors.As(err, &ge) || ge.Offset != 1 {
		t.Errorf("GlobCount of a bad pattern = %d, %v", n, err)
	}
}

func TestExpandGlobLimit(t *testing.T) {
	if v, err := ExpandGlob("[1-10]", 10); err != nil || len(v) != 10 {
		t.Errorf("exactly at the limit: %d values, %v", len(v), err)
	}
	if _, err := ExpandGlob("[1-10]", 9); err == nil {
		t.Error("one over the limit accepted")
	}
	if v, err := ExpandGlob("[1-10]", -1); err != nil || len(v) != 10 {
		t.Errorf("max -1 means the default: %d values, %v", len(v), err)
	}
}

// A pattern over the limit is refused before anything is expanded, with the
// default limit and with a small one.
func TestExpandGlobOverLimitDoesNotAllocate(t *testing.T) {
	for _, c := range []struct {
		in  string
		max int
	}{
		{"[1-100000][1-100000]", 0},
		{"[0-9223372036854775806]", 0},
		{"[1-9999999]", 10}, // under MaxValues, over max
		{"{a,b}[1-5000000]", 1000},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ExpandGlob(c.in, c.max)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("ExpandGlob(%q, %d) accepted", c.in, c.max)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("ExpandGlob(%q, %d) allocated %d bytes before failing", c.in, c.max, n)
		}
	}
}

// The values are right however they share memory.
func TestExpandGlobValuesAreIndependent(t *testing.T) {
	v, err := ExpandGlob("{ab,c}[8-10]", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ab8", "ab9", "ab10", "c8", "c9", "c10"}
	if !slices.Equal(v, want) {
		t.Fatalf("got %q, want %q", v, want)
	}
	v[0] = "changed"
	if v[1] != "ab9" {
		t.Error("values alias each other")
	}
}

func FuzzExpandGlob(f *testing.F) {
	for _, s := range []string{
		"a[1-3]", "{x,y}[a-c:2]", `\[x`, "[001-010]", "[1-", "C201-7-[1-25]A-[1-40]A1",
		"{a,,b}", `{a\,b}`, "[]", "[::1]", "x{}", "[5-1]", "[a-Z]", "[1-9:0]", "a]",
		"[1-1000][1-1000]", "[0-9223372036854775807]", `\\[1-2]`, "{[}", "[1-3]{a,b}[x-z:2]",
	} {
		f.Add(s)
	}
	const limit = 10_000
	f.Fuzz(func(t *testing.T, s string) {
		n, countErr := GlobCount(s)
		v, err := ExpandGlob(s, limit)
		if err != nil {
			var ge *GlobError
			if !errors.As(err, &ge) {
				t.Fatalf("%q: error %T %v is not a *GlobError", s, err, err)
			}
			if ge.Offset < 0 || ge.Offset > len(s) {
				t.Fatalf("%q: offset %d outside the pattern", s, ge.Offset)
			}
			if countErr == nil && n <= limit {
				t.Fatalf("%q: GlobCount = %d but ExpandGlob failed: %v", s, n, err)
			}
			return
		}
		if countErr != nil || int64(len(v)) != n {
			t.Fatalf("%q: GlobCount = %d, %v but %d values", s, n, countErr, len(v))
		}
		if len(v) == 0 || len(v) > limit {
			t.Fatalf("%q: %d values", s, len(v))
		}
		if !strings.ContainsAny(s, `[]{}\`) && (len(v) != 1 || v[0] != s) {
			t.Fatalf("%q without glob characters expanded to %q", s, v)
		}
	})
}

func BenchmarkExpandGlob(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExpandGlob("C201-7-[1-25]A-[1-40]A1", 0); err != nil {
			b.Fatal(err)
		}
	}
}
