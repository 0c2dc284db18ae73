package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// perflab run --serve prints the run's live page and serves it while the
// run goes; the page says the run is running, then the run ends as ever.
func TestRunServe(t *testing.T) {
	bin := perflabBin(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	plan := writePlan(t, "name: served\ntarget: "+srv.URL+"\ninterval: 250ms\nscenarios: [{vus: 2, duration: 4s, flow: [{name: a, url: /a}]}]\n")
	c := exec.Command(bin, "run", plan, "--out", t.TempDir(), "--quiet", "--serve=127.0.0.1:0")
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	page := regexp.MustCompile(`the run's live page: (http://127\.0\.0\.1:\d+/runs/\S+)`)
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if m := page.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if url == "" {
		t.Fatal("no live page printed")
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `data-status="running"`) || res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("%s: %d\n%.500s", url, res.StatusCode, b)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
}

// Beyond loopback, serve asks for a token, or to be told it is public.
func TestServeRefusesPublicWithoutToken(t *testing.T) {
	code, _, errs := runCLI(t, "serve", "--listen", "0.0.0.0:0", "--store", t.TempDir()+"/none.db")
	if code != exitUsage || !strings.Contains(errs, "give --token TOKEN") {
		t.Errorf("%d %s", code, errs)
	}
}
