package k6out

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// Any bytes read as a k6 result file give points and then io.EOF, or an
// error that names the file (and a line, once past the first): never a
// panic, never a point without its line.
func FuzzReader(f *testing.F) {
	f.Add(jsonLines)
	f.Add(csvLines)
	f.Add(`{"metric":"x","type":"Point","data":{"time":"2026-11-26T05:59:14Z","value":1}}`)
	f.Fuzz(func(t *testing.T, src string) {
		r, err := NewReader(strings.NewReader(src), "f.json", nil)
		if err != nil {
			if !strings.Contains(err.Error(), "f.json") {
				t.Fatalf("an error without the file: %v", err)
			}
			return
		}
		for range 100_000 {
			p, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Line < 1 || e.File != "f.json" {
					t.Fatalf("an error without its place: %v", err)
				}
				return
			}
			if p.Line < 1 || p.Metric == "" {
				t.Fatalf("point %+v", p)
			}
		}
	})
}
