package expr

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// allocated is what f allocated on the heap, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// evalLimited runs src over vars and returns its error, which must be a
// *LimitError (nil, said, when it is not), and what the run allocated.
func evalLimited(t *testing.T, src string, vars map[string]string) (*LimitError, uint64) {
	t.Helper()
	p, err := Compile(src, Any, nil)
	if err != nil {
		t.Errorf("%s: %v", src, err)
		return nil, 0
	}
	e := env(vars, Response{})
	p.Eval(e) //nolint:errcheck // the first run makes the VM's own buffers
	var out any
	used := allocated(func() { out, err = p.Eval(e) })
	var le *LimitError
	if !errors.As(err, &le) {
		if s, ok := out.(string); ok {
			out = len(s)
		}
		t.Errorf("%s: %v (a value of %v), want an error over the limit of text", src, err, out)
		return nil, used
	}
	return le, used
}

// Issue 37: repeat(repeat("a",100000),3000) built 334 MB before it was
// refused, and nested deeper 4.9 GB: the budget was checked after the
// value was built. A function that makes text checks the size it would
// make first. (Under a limit of 1 MiB, so that the cases are small.)
func TestTextRefusedBeforeItIsBuilt(t *testing.T) {
	defer func(l uint64) { textLimit = l }(textLimit)
	textLimit = 1 << 20
	vars := map[string]string{"a": "a", "n": "1000", "m": "3000", "s": strings.Repeat("x", 32<<10),
		"as": strings.Repeat("a", 100000), "bs": strings.Repeat(`\\`, 10000)}
	for _, c := range []struct {
		src, what string
		bytes     uint64
		buffers   uint64 // times the limit the function's own buffers may take
	}{
		{`upper(repeat(repeat(a, int(n)), int(m)))`, "repeat", 3_000_000, 0},
		{`replace(as, "a", repeat("b", 20))`, "replace", 2_000_000, 0},
		{`join([as, as, as, as, as, as, as, as, as, as], repeat("-", 100000))`, "join", 1_000_000 + 900_000, 0},
		{`randomString(int(m) * 500)`, "randomString", 1_500_000, 0},
		// each + makes a new text: the sum of what they made counts
		{`let a1 = s + s; let a2 = a1 + a1; let a3 = a2 + a2; let a4 = a3 + a3; let a5 = a4 + a4; let a6 = a5 + a5; let a7 = a6 + a6; len(a7)`, "+", 0, 0},
		{`reduce(1..12, #acc + repeat(s, 4), "")`, "+", 0, 0},
		// a backslash is two in JSON, four in JSON of the JSON ...
		{`toJSON(toJSON(toJSON(toJSON(toJSON(toJSON(toJSON(bs)))))))`, "toJSON", 0, 3}, // marshalled, indented, copied
		{`toBase64(toBase64(toBase64(toBase64(toBase64(toBase64(toBase64(toBase64(repeat(s, 4)))))))))`, "toBase64", 0, 0},
		{`len(split(repeat(as, 2), ""))`, "split", 200_000 * stringHeader, 0},
	} {
		le, used := evalLimited(t, c.src, vars)
		// what was made within the limit, and the functions' own buffers
		if used > (2+c.buffers)*textLimit {
			t.Errorf("%s: allocated %d bytes, over %d times the limit of %d", c.src, used, 2+c.buffers, textLimit)
		}
		if le == nil {
			continue
		}
		if le.Func != c.what || c.bytes != 0 && le.Bytes != c.bytes {
			t.Errorf("%s: %v (%s, %d bytes), want %s of %d bytes", c.src, le, le.Func, le.Bytes, c.what, c.bytes)
		}
		if !strings.Contains(le.Error(), "at most 1 MiB") {
			t.Errorf("%s: %q does not say the limit", c.src, le)
		}
	}
}

// Within the limit, the functions give what expr-lang's do.
func TestTextWithinTheLimit(t *testing.T) {
	vars := map[string]string{"a": "ab", "n": "2"}
	e := env(vars, Response{})
	for src, want := range map[string]any{
		`repeat(a, 3)`:                        "ababab",
		`a | repeat(2)`:                       "abab",
		`upper(a) + lower("CD")`:              "ABcd",
		`upper("é")`:                          "É",
		`replace("a-b-c", "-", "+")`:          "a+b+c",
		`replace("a-b-c", "-", "+", 1)`:       "a+b-c",
		`replace("abc", "", "-")`:             "-a-b-c-",
		`join(["a", "b"], ", ")`:              "a, b",
		`join(split("a,b,c", ","))`:           "abc",
		`join(split("a,b,c", ",", 2), "|")`:   "a|b,c",
		`join(splitAfter("a,b", ","), "|")`:   "a,|b",
		`toJSON({"a": [1, "x<"]})`:            "{\n  \"a\": [\n    1,\n    \"x\\u003c\"\n  ]\n}",
		`toBase64("hi")`:                      "aGk=",
		`reduce(1..3, #acc + a, "")`:          "ababab",
		`n + 1`:                               3.0, // text and a number add as numbers
		`1 + 2`:                               3,
		`len(randomString(2000000, "a")) > 0`: true,
		`randomString(2000000, "a") == repeat("a", 2000000)`: true,
	} {
		p, err := Compile(src, Any, nil)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got, err := p.Eval(e); err != nil || got != want {
			t.Errorf("%s = %#v, %v; want %#v", src, got, err, want)
		}
	}
}

// Issue 37: randomString(n) gave 1 MiB for any n beyond, in silence. A
// size over the limit is refused: where n is written in the expression,
// when the plan is loaded, at its column.
func TestTextOverTheLimitIsAnErrorOfThePlan(t *testing.T) {
	for src, col := range map[string]int{
		`upper(repeat(repeat("a",100000),100000))`: 7,
		`randomString(20000000)`:                   1,
		`"x" + randomString(17000000, "ab")`:       7,
		`len(repeat("ab", 9000000)) > 0`:           5,
		`randomString(9000000, "é")`:               1, // two bytes a character
	} {
		_, err := Compile(src, Any, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Col != col || !strings.Contains(ce.Msg, "16 MiB") {
			t.Errorf("%s: %v, want an error over 16 MiB at column %d", src, err, col)
		}
	}
	for _, src := range []string{`randomString(16777216)`, `repeat("a", 16777216)`, `repeat(a, 100000000)`} {
		if _, err := Compile(src, Any, nil); err != nil { // the last's size is known when it runs
			t.Errorf("%s: %v", src, err)
		}
	}
}
