package convert_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/plan"
)

// An OpenAPI description becomes a plan that calls each operation once,
// with its examples (or values made from its schemas), its required
// parameters and its credentials; what cannot be sent is listed.
func TestConvertOpenAPI(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "library.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := convert.OpenAPI(f, "library.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0], "set OKAPITOKEN in the environment") || !strings.Contains(res.Skipped[1], "GET /reports/overdue: the cookie parameter session") {
		t.Errorf("skipped %q", res.Skipped)
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	runConverted(t, res.Plan, plan.Options{Set: []plan.Override{{Name: "base", Value: srv.URL}},
		LookupEnv: func(k string) (string, bool) { return map[string]string{"OKAPITOKEN": "t0k"}[k], k == "OKAPITOKEN" }})
	want := []string{
		`GET /api/items/00000000-0000-4000-8000-000000000001 "" `,
		`GET /api/loans?query=status.name%3D%3DOpen "" `,
		`GET /api/reports/overdue "" `,
		`POST /api/loans "{\"itemBarcode\":\"90000\",\"userBarcode\":\"123456\"}" application/json`,
		`POST /api/loans/42/renew "{\"dueDate\":\"2026-01-01T00:00:00Z\",\"notes\":[\"x\"],\"servicePoint\":{\"id\":\"00000000-0000-4000-8000-000000000001\",\"pickup\":true}}" application/json`,
	}
	if got := rec.sorted(); !slices.Equal(got, want) {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.headers) == 0 || rec.headers[0].Get("X-Okapi-Token") != "t0k" {
		t.Errorf("the credentials were not sent: %v", rec.headers)
	}
}

func TestConvertOpenAPIRefuses(t *testing.T) {
	for src, want := range map[string]string{
		"swagger: \"2.0\"\npaths: {}\n": "a Swagger 2.0 document",
		"openapi: 2\n":                  "not an OpenAPI 3 document",
		"- a\n":                         "not an OpenAPI document",
		"openapi: [":                    "x.yaml: yaml:",
	} {
		if _, err := convert.OpenAPI(strings.NewReader(src), "x.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
