package convert_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/internal/jmetertest"
)

// Each small case of testdata/cases (its README says what each shows) is
// run by JMeter 5.6.3 and, converted, by perflab at the same recording
// server: both send the same requests in the same order, their bodies
// byte for byte, and each sampler passes and fails as often.
func TestSmallCasesSendWhatJMeterSends(t *testing.T) {
	jm := jmetertest.Install(t)
	answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sp" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"EXTRACTED"}`))
			return
		}
		w.Write([]byte("ok"))
	})
	for _, tc := range []struct {
		name string
		want []string // JMeter's requests, as the recording server reads them
		// gap is a difference the converter lists, in its words: the
		// converted plan must load and run, and the listing say it.
		gap string
	}{
		// Two CSV Data Sets on one file with a header line, each naming
		// its columns its own way: they load (each set's names), and the
		// sets' shared pass over the file is listed.
		{name: "twosets", want: []string{`GET /u?a=u2&b=p2&x=u1&y=p1 ""`, `GET /u?a=u4&b=p4&x=u3&y=p3 ""`},
			gap: "JMeter's sets of one file read one pass over it together"},

		// The server reads a form as a service would: decoded, written
		// back with what would make it ambiguous escaped (JMeter sent
		// a=Street+1%26x%3Dy&b=lit+eral).
		{name: "form", want: []string{`POST /form "a=Street%201%26x=y&b=lit%20eral" application/x-www-form-urlencoded; charset=UTF-8`}},
		{name: "shadow", want: []string{`GET /sp ""`, `GET /ci?sp=EXTRACTED ""`, `GET /co?sp=CSV-2 ""`, `GET /co?sp=CSV-3 ""`}},
		{name: "tail"},
		{name: "boundary", want: []string{`GET /sp ""`, `GET /ci?sp={"id":"EXTRACTED|EXTRACTED"}|{"id":"EXTRACTED"} ""`, `GET /co?sp=CSV-2 ""`, `GET /co?sp=CSV-3 ""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{tc.name + ".jmx", "sp2.csv", "users.csv"} {
				b, err := os.ReadFile(filepath.Join("testdata", "cases", f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			jmx := filepath.Join(dir, tc.name+".jmx")
			src, _ := os.ReadFile(jmx)
			rw := &rewritten{jmx: src, samplers: samplerNames(src)}
			c := comparison{name: tc.name, plan: tc.name + ".jmx", server: func() http.Handler { return answer }}
			byJMeter := c.jmeter(t, jm, jmx, rw)
			var got []string
			for _, r := range byJMeter.requests {
				got = append(got, strings.TrimSpace(r))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("JMeter sent %q, not what the case says it sends, %q: the case or the server is wrong", got, tc.want)
			}
			byPerflab := c.perflab(t, dir, rw, 1000)
			if tc.gap != "" {
				res, err := convert.JMeter(bytes.NewReader(src), tc.name+".jmx")
				switch {
				case err != nil:
					t.Fatal(err)
				case byPerflab.failed != "" || len(byPerflab.requests) != len(tc.want):
					t.Errorf("the converted plan did not run as JMeter's did: %s, %d requests", byPerflab.failed, len(byPerflab.requests))
				case !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, tc.gap) }):
					t.Errorf("the conversion does not list %q: %q", tc.gap, res.Skipped)
				}
				return
			}
			if diffs := c.compare(byJMeter, byPerflab); len(diffs) > 0 {
				t.Errorf("perflab's conversion differs from JMeter:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
}

// samplerNames are the test names of the HTTP samplers of a plan.
func samplerNames(jmx []byte) map[string]bool {
	out := map[string]bool{}
	for _, part := range strings.Split(string(jmx), `testclass="HTTPSamplerProxy" testname="`)[1:] {
		out[part[:strings.IndexByte(part, '"')]] = true
	}
	return out
}
