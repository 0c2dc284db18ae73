package sim

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stub file either is refused with its name in the message, or makes a
// server, validates again unchanged, and answers each of its plain routes
// (no latency, errors, stall or degrade; a literal path) with its status.
func FuzzStubs(f *testing.F) {
	files, _ := filepath.Glob("../examples/*/*.yaml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil && strings.Contains(string(b), "routes:") {
			f.Add(b)
		}
	}
	f.Add([]byte("routes:\n  - {path: /items/{id}, body: '{\"id\": \"${path.id}\"}'}\n  - {method: POST, path: /items, status: 201}\n"))
	f.Add([]byte("listen: 127.0.0.1:0\nroutes:\n  - {path: /a, status: 204, headers: {X-A: b}, latency: {fixed: 1ms}}\n  - {path: /a}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := Parse(src, "stubs.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "stubs.yaml: ") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatalf("Parse accepted what New refuses: %v", err)
		}
		for _, rt := range cfg.Routes {
			if rt.Latency != nil || rt.Errors != nil || rt.Stall != nil || rt.Degrade != nil || strings.ContainsAny(rt.Path, "{}") ||
				!strings.HasPrefix(rt.Path, "/") || strings.ContainsAny(rt.Path, " %?#\t\r\n") || strings.Contains(rt.Path, "//") || strings.Contains(rt.Path, "/.") {
				continue
			}
			req := httptest.NewRequest(rt.Method, "http://127.0.0.1"+rt.Path, nil)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != rt.Status && !first(cfg, rt) {
				continue // an earlier route of the same method and path answers
			}
			if w.Code != rt.Status {
				t.Fatalf("%s %s answered %d, want %d", rt.Method, rt.Path, w.Code, rt.Status)
			}
		}
	})
}

// first reports whether rt is the only route for its method and path.
func first(cfg *Config, rt *Route) bool {
	for _, o := range cfg.Routes {
		if o != rt && o.Path == rt.Path && (o.Method == rt.Method || o.Method == http.MethodGet && rt.Method == http.MethodHead) {
			return false
		}
	}
	return true
}
