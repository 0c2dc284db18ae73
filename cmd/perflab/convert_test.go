package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perflab convert of an input of which nothing converts into a request
// exits 1, says why and what was not converted, and writes no plan: not
// on standard output, not the -o file.
func TestConvertOfNothingExits1(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"openapi", write("api.yaml", "openapi: 3.0.0\ninfo: {title: t, version: \"1\"}\npaths: {}\n")},
			[]string{"perflab: " + filepath.Join(dir, "api.yaml") + ": no operation under paths (get, put, post, delete, options, head, patch, trace), so the plan would send no request: none is written"}},
		{[]string{"har", write("r.har", `{"log":{"entries":[{"request":{"method":"GET","url":"http://a.test/app.js"},"response":{"content":{"mimeType":"text/javascript"}}}]}}`)},
			[]string{"perflab: not converted: entry 1 (GET http://a.test/app.js): a static asset (--static keeps it)\n", "r.har: none of its 1 entries was kept"}},
		{[]string{"jmeter", write("p.jmx", `<jmeterTestPlan><hashTree><TestPlan testname="p"/><hashTree/></hashTree></jmeterTestPlan>`)},
			[]string{"perflab: not converted: TestPlan \"p\": no enabled thread group", "p.jmx: no sampler perflab converts"}},
	} {
		for _, o := range [][]string{nil, {"-o", filepath.Join(dir, "out.yaml")}} {
			code, stdout, errs := runCLI(t, append(append([]string{"convert"}, c.args...), o...)...)
			if code != exitUsage || stdout != "" {
				t.Errorf("%q: exit %d, wrote %q", c.args, code, stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("%q: %s\nwant %q", c.args, errs, w)
				}
			}
			if err := os.Remove(filepath.Join(dir, "out.yaml")); err == nil {
				t.Errorf("%q %q: wrote out.yaml", c.args, o)
			}
		}
	}
}
