package jtl

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// Any bytes read as a result file give samples and then io.EOF, or an
// error that names the file and a line: never a panic, never a sample
// without its line.
func FuzzReader(f *testing.F) {
	f.Add(header + rows)
	f.Add(rows)
	f.Add(xmlResults)
	f.Add("timeStamp,elapsed,label,success\n1,2,\"a\nb\",true\n")
	f.Fuzz(func(t *testing.T, src string) {
		r, err := NewReader(strings.NewReader(src), "f.jtl", Options{})
		if err != nil {
			if !strings.Contains(err.Error(), "f.jtl") {
				t.Fatalf("an error without the file: %v", err)
			}
			return
		}
		for range 100_000 {
			s, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Line < 1 || e.File != "f.jtl" {
					t.Fatalf("an error without its place: %v", err)
				}
				return
			}
			if s.Line < 1 || s.Elapsed < 0 {
				t.Fatalf("sample %+v", s)
			}
		}
	})
}
