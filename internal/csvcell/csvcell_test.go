package csvcell

import "testing"

func TestEscape(t *testing.T) {
	for text, cell := range map[string]string{
		"=HYPERLINK(\"http://x\",\"y\")": "'=HYPERLINK(\"http://x\",\"y\")",
		"+1+2":                           "'+1+2",
		"-2+3":                           "'-2+3",
		"@SUM(A1)":                       "'@SUM(A1)",
		"\tcmd":                          "'\tcmd",
		"\rcmd":                          "'\rcmd",
		"-3.5":                           "-3.5", // a number
		"+1e3":                           "+1e3",
		"GET /items":                     "GET /items",
		"a=b":                            "a=b",
		"":                               "",
		"'":                              "'",
		"'quoted":                        "'quoted",
		"'=x":                            "''=x",
		"''=x":                           "'''=x",
		"'-3.5":                          "'-3.5",
	} {
		if got := Escape(text); got != cell {
			t.Errorf("Escape(%q) = %q, want %q", text, got, cell)
		}
		if got := Unescape(cell); got != text {
			t.Errorf("Unescape(%q) = %q, want %q", cell, got, text)
		}
	}
}

// Unescape gives back what Escape was given, whatever it was.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"=1", "'=1", "-3.5", "x", "''@", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := Unescape(Escape(s)); got != s {
			t.Errorf("Unescape(Escape(%q)) = %q", s, got)
		}
	})
}
