package tmpl

import (
	"net/url"
	"strings"
	"testing"
)

// Every byte is encoded as the WHATWG serializer (and Java's URLEncoder)
// encodes it, and url.ParseQuery reads back the text (a form's reader
// takes + and %XX alike).
func TestAppendFormEscape(t *testing.T) {
	for in, want := range map[string]string{
		"Street 1&x=y": "Street+1%26x%3Dy",
		"lit eral":     "lit+eral",
		"a*b-c.d_e~f":  "a*b-c.d_e%7Ef",
		"50%+1":        "50%25%2B1",
		"café/ü?":      "caf%C3%A9%2F%C3%BC%3F",
		"":             "",
	} {
		if got := string(AppendFormEscape(nil, in)); got != want {
			t.Errorf("AppendFormEscape(%q) = %q, want %q", in, got, want)
		}
	}
	var all strings.Builder
	for b := 0; b < 256; b++ {
		all.WriteByte(byte(b))
	}
	back, err := url.ParseQuery("v=" + string(AppendFormEscape(nil, all.String())))
	if err != nil || back.Get("v") != all.String() {
		t.Errorf("every byte did not read back: %v", err)
	}
}

// A form template encodes its literal text and its values alike.
func TestAppendForm(t *testing.T) {
	tm := MustParse("${v} and ${w:-x y}")
	got, err := tm.AppendForm([]byte("a="), LookupFunc(func(n string) (string, bool) {
		if n == "v" {
			return "Street 1&x=y", true
		}
		return "", false
	}))
	if err != nil || string(got) != "a=Street+1%26x%3Dy+and+x+y" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// FormDecode undoes AppendFormEscape, and reads + and %XX as a form's
// reader does; ${decoded:name} gives a value so decoded.
func TestFormDecode(t *testing.T) {
	for in, want := range map[string]string{
		"Street+1%26x%3Dy": "Street 1&x=y",
		"a+b":              "a b",
		"100%":             "100%",
		"%zz%4":            "%zz%4",
		"%c3%A9":           "é",
		"plain":            "plain",
	} {
		if got := FormDecode(in); got != want {
			t.Errorf("FormDecode(%q) = %q, want %q", in, got, want)
		}
	}
	for _, s := range []string{"Street 1&x=y", "a*b~c+d%e", "café"} {
		if got := FormDecode(string(AppendFormEscape(nil, s))); got != s {
			t.Errorf("FormDecode(AppendFormEscape(%q)) = %q", s, got)
		}
	}
	tm := MustParse("${decoded:v}|${decoded:w:-a+b}")
	got, err := tm.Expand(LookupFunc(func(n string) (string, bool) { return "x+y%21", n == "v" }))
	if err != nil || got != "x y!|a b" {
		t.Fatalf("got %q, %v", got, err)
	}
}
