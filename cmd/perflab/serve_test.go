package main

import (
	"bufio"
	"encoding/json"
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

// perflab serve follows, live, a run that another process writes to the
// same PostgreSQL history: the run is listed as running, its page's
// events say when intervals are stored and when it ends.
func TestServeFollowsARunOfAnotherProcess(t *testing.T) {
	bin := perflabBin(t)
	dsn := pgSchema(t, "serve_test")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	serve := exec.Command(bin, "serve", "--store", dsn, "--listen", "127.0.0.1:0")
	serr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	sc := bufio.NewScanner(serr)
	base := ""
	for sc.Scan() {
		if m := regexp.MustCompile(`perflab serve: (http://127\.0\.0\.1:\d+)/`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	go io.Copy(io.Discard, serr)
	if base == "" {
		t.Fatal("serve printed no URL")
	}
	plan := writePlan(t, "name: followed\ntarget: "+srv.URL+"\ninterval: 300ms\nscenarios: [{vus: 2, duration: 3s, flow: [{name: a, url: /a}]}]\n")
	run := exec.Command(bin, "run", plan, "--out", t.TempDir(), "--quiet", "--store", dsn)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	// The run, listed as running.
	var id string
	deadline := time.Now().Add(30 * time.Second)
	for id == "" {
		res, err := http.Get(base + "/api/runs")
		if err == nil {
			var runs []struct{ ID, Status string }
			json.NewDecoder(res.Body).Decode(&runs)
			res.Body.Close()
			for _, r := range runs {
				if r.Status == "running" {
					id = r.ID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the run was never listed as running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	res, err := http.Get(base + "/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body) // to the end event, when the server closes the stream
	if n := strings.Count(string(b), "event: interval"); n < 3 || !strings.Contains(string(b), "event: end\ndata: {\"status\":\"completed\"") {
		t.Errorf("%d interval events:\n%s", n, b)
	}
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, page := httpGet(t, base+"/runs/"+id); !strings.Contains(page, "completed") || !strings.Contains(page, `id="report"`) {
		t.Errorf("the page of the run that ended:\n%.300s", page)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
