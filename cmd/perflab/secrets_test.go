package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"
)

// secretsServer answers /ok with 200 to the basic credentials it is
// given (else 401), and /fail with 503; it keeps what each request said
// (its request-target and body) for the test to check that the values
// it was given were sent.
type secretsServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newSecretsServer(t *testing.T, creds map[string]string) *secretsServer {
	s := &secretsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, r.RequestURI+" "+string(b))
		s.mu.Unlock()
		switch r.URL.Path {
		case "/ok":
			if u, p, ok := r.BasicAuth(); !ok || creds[u] != p || strings.Contains(r.Host, "@") {
				w.WriteHeader(http.StatusUnauthorized)
			}
		case "/fail":
			w.Header().Set("Location", "/next?access_token=at-SERVER1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"busy","refresh_token":"rt-SERVER2"}`)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// everything is what a run left: the files of its run directory, every
// row of every table of its history, and what perflab printed, with the
// Markdown and HTML reports of the run.
func everything(t *testing.T, dir, db string, printed ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			out[path] = string(b)
		}
		return nil
	})
	h, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tables, err := h.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		tables.Scan(&n)
		names = append(names, n)
	}
	tables.Close()
	for _, n := range names {
		rows, err := h.Query(`SELECT * FROM "` + n + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var b strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			for _, v := range vals {
				if s, ok := v.([]byte); ok {
					v = string(s)
				}
				fmt.Fprintf(&b, "%v\t", v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
		out["history table "+n] = b.String()
	}
	for _, f := range []string{"md", "html"} {
		code, report, errs := runCLI(t, "report", dir, "--format", f)
		if code != exitOK {
			t.Fatalf("report --format %s: exit %d: %s", f, code, errs)
		}
		out["report --format "+f] = report + errs
	}
	for i, p := range printed {
		out[fmt.Sprintf("printed %d", i)] = p
	}
	return out
}

// leaks lists the places of outputs where a secret is written.
func leaks(outputs map[string]string, secrets ...string) []string {
	var found []string
	for where, text := range outputs {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				found = append(found, fmt.Sprintf("%s has %q", where, s))
			}
		}
	}
	return found
}

// Credentials in a URL work as in curl and k6 (the target's and a step's
// user:password@ become its Authorization: Basic) and are redacted
// wherever perflab writes the URL: the terminal, the run directory
// (summary.txt, summary.json, totals.jsonl, the plan's copy, the failed
// requests), the history and the reports.
func TestURLPasswordsAreSentAndNotWritten(t *testing.T) {
	srv := newSecretsServer(t, map[string]string{"al@ice": "pa:ss-URL1", "bob": "pw-URL2"})
	host := strings.TrimPrefix(srv.URL, "http://")
	out := t.TempDir()
	plan := writePlan(t, "name: secrets\ntarget: http://al%40ice:pa%3Ass-URL1@"+host+"\n"+
		"scenarios:\n  - name: s\n    vus: 1\n    iterations: 2\n    flow:\n"+
		"      - url: /ok\n"+
		"      - url: http://bob:pw-URL2@"+host+"/ok\n"+
		"      - url: http://bob:pw-URL2@"+host+"/fail\n")
	code, stdout, stderr := runCLI(t, "run", plan, "--out", out, "--dump-failures")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-secrets"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := readSummary(t, out)
	for _, name := range []string{"GET /ok", "GET http://bob:[redacted]@" + host + "/ok"} {
		if n := count(s, 0, name); n != 2 {
			t.Errorf("%s: %d, want 2", name, n)
		}
	}
	if s.Total.Errors != 2 {
		t.Errorf("%d errors, want the 2 of /fail (503)", s.Total.Errors)
	}
	showed := ""
	for _, args := range [][]string{{"show", "--store", filepath.Join(out, "perflab.db"), filepath.Base(dirs[0]), "--errors"}, {"runs", "--store", filepath.Join(out, "perflab.db")}} {
		_, o, e := runCLI(t, args...)
		showed += o + e
	}
	all := everything(t, dirs[0], filepath.Join(out, "perflab.db"), stdout, stderr, showed)
	if len(all[filepath.Join(dirs[0], "failures.jsonl")]) == 0 {
		t.Fatal("no failures.jsonl")
	}
	for _, l := range leaks(all, "pa%3Ass-URL1", "pa:ss-URL1", "pw-URL2", "YWxAaWNlOnBhOnNzLVVSTDE", "Ym9iOnB3LVVSTDI") {
		t.Error(l)
	}
}

// Query parameters, form fields and JSON keys of secret names are
// redacted in the failed requests and responses --dump-failures writes,
// as headers of the same names are; the values of --set for variables of
// secret names, and of --secret, are sent and not stored (summary.json,
// the run directory, the history).
func TestSecretsInQueriesFormsAndSets(t *testing.T) {
	srv := newSecretsServer(t, nil)
	out := t.TempDir()
	plan := writePlan(t, "name: sets\ntarget: "+srv.URL+"\nvars: {token: none, api_key: none, pw: none, users: 1}\n"+
		"scenarios:\n  - name: s\n    vus: ${users}\n    iterations: 2\n    flow:\n"+
		"      - {name: query, url: \"/fail?token=${token}&api_key=${api_key}&page=2\"}\n"+
		"      - {name: form, method: POST, url: /fail, body: \"user=ann&password=${pw}\", headers: {Content-Type: application/x-www-form-urlencoded}}\n"+
		"      - {name: json, method: POST, url: /fail, json: {user: ann, password: \"${pw}\"}}\n")
	code, stdout, stderr := runCLI(t, "run", plan, "--out", out, "--dump-failures",
		"--set", "token=tok-SET1", "--set", "api_key=key-SET2", "--secret", "pw=pw-SECRET3", "--set", "users=1")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	srv.mu.Lock()
	seen := strings.Join(srv.seen, "\n")
	srv.mu.Unlock()
	for _, sent := range []string{"/fail?token=tok-SET1&api_key=key-SET2&page=2 ", "/fail user=ann&password=pw-SECRET3", `/fail {"user":"ann","password":"pw-SECRET3"}`} {
		if strings.Count(seen, sent) != 2 {
			t.Errorf("the server read %q %d times, want 2:\n%s", sent, strings.Count(seen, sent), seen)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-sets"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := readSummary(t, out)
	if s.Overrides["users"] != "1" || s.Overrides["token"] != "[redacted]" || s.Overrides["pw"] != "[redacted]" || s.Variables["users"] != "1" || s.Variables["api_key"] != "[redacted]" {
		t.Errorf("overrides %v, variables %v", s.Overrides, s.Variables)
	}
	all := everything(t, dirs[0], filepath.Join(out, "perflab.db"), stdout, stderr)
	dump := all[filepath.Join(dirs[0], "failures.jsonl")]
	if strings.Count(dump, "\n") != 6 || strings.Count(dump, "[redacted]") < 6*2 {
		t.Errorf("failures.jsonl:\n%s", dump)
	}
	for _, l := range leaks(all, "tok-SET1", "key-SET2", "pw-SECRET3", "at-SERVER1", "rt-SERVER2") {
		t.Error(l)
	}
}
