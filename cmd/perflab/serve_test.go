package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
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
	c := exec.Command(bin, "run", plan, "--out", t.TempDir(), "--quiet", "--serve=127.0.0.1:0", "--serve-allowed-host", "perflab.test")
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
	// The live server answers to its address and the names it was given,
	// not to another site's name.
	path := strings.TrimPrefix(url, "http://"+res.Request.URL.Host)
	if code, body := rawGet(t, res.Request.URL.Host, "evil.example", path); code != http.StatusMisdirectedRequest || !strings.Contains(body, "--serve-allowed-host") {
		t.Errorf("Host evil.example: %d %.300s", code, body)
	}
	if code, body := rawGet(t, res.Request.URL.Host, "perflab.test", path); code != http.StatusOK {
		t.Errorf("Host perflab.test, given by --serve-allowed-host: %d %.300s", code, body)
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

// Beyond loopback, serve asks for a token, or to be told it is public;
// run --serve names its own flags for them.
func TestServeRefusesPublicWithoutToken(t *testing.T) {
	code, _, errs := runCLI(t, "serve", "--listen", "0.0.0.0:0", "--store", t.TempDir()+"/none.db")
	if code != exitUsage || !strings.Contains(errs, "give --token TOKEN") || !strings.Contains(errs, "or --insecure-public") {
		t.Errorf("%d %s", code, errs)
	}
	plan := writePlan(t, "target: http://127.0.0.1:1\nscenarios: [{vus: 1, iterations: 1, flow: [{url: /a}]}]\n")
	code, _, errs = runCLI(t, "run", plan, "--out", t.TempDir(), "--quiet", "--serve=0.0.0.0:0")
	if code != exitUsage || !strings.Contains(errs, "perflab: --serve: --serve 0.0.0.0:0 is reachable beyond this machine: give --serve-token TOKEN") || !strings.Contains(errs, "or --serve-insecure-public") {
		t.Errorf("run --serve: %d %s", code, errs)
	}
	if code, _, errs = runCLI(t, "serve", "--allowed-host", "http://perflab.test/", "--store", t.TempDir()+"/none.db"); code != exitUsage || !strings.Contains(errs, `--allowed-host: allowed host "http://perflab.test/": want a host name or an IP address`) {
		t.Errorf("serve --allowed-host with a scheme: %d %s", code, errs)
	}
}

// rawGet sends GET path to addr with the Host header host, as a page of
// another site whose name points at addr (DNS rebinding) makes a browser
// send it, and returns the status and the body.
func rawGet(t *testing.T, addr, host, path string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "GET " + path + " HTTP/1.1\r\nConnection: close\r\n"
	if host != "" {
		req += "Host: " + host + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// startServe starts perflab serve with args and returns its address
// (HOST:PORT) from the URL it prints.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	serve := exec.Command(perflabBin(t), append([]string{"serve"}, args...)...)
	serr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	sc := bufio.NewScanner(serr)
	for sc.Scan() {
		if m := regexp.MustCompile(`perflab serve: http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, serr)
			return m[1]
		}
	}
	t.Fatal("serve printed no URL")
	return ""
}

// perflab serve answers only to the names it is reached by: the listen
// address, localhost on loopback, the names given by --allowed-host. A
// request naming another host, as a page of another site whose name was
// made to point at the server (DNS rebinding) sends it, gets 421 and
// nothing of the history.
func TestServeRefusesOtherHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "name: secret-plan\ntarget: "+srv.URL+"\ninterval: 100ms\nscenarios: [{vus: 1, iterations: 3, flow: [{name: a, url: /a}]}]\n")
	if code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	db := out + "/perflab.db"
	addr := startServe(t, "--store", db, "--listen", "127.0.0.1:0", "--allowed-host", "perflab.test", "--allowed-host", "10.1.2.3")
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{
		"127.0.0.1:" + port:         http.StatusOK,
		"localhost:" + port:         http.StatusOK,
		"[::1]:" + port:             http.StatusOK,
		"LocalHost.":                http.StatusOK,
		"perflab.test":              http.StatusOK,
		"PERFLAB.TEST.:" + port:     http.StatusOK,
		"10.1.2.3:" + port:          http.StatusOK,
		"evil.example:" + port:      http.StatusMisdirectedRequest,
		"evil.example":              http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io:" + port:  http.StatusMisdirectedRequest,
		"localhost.evil.example":    http.StatusMisdirectedRequest,
		"perflab.test.evil.example": http.StatusMisdirectedRequest,
		"192.0.2.1:" + port:         http.StatusMisdirectedRequest,
	} {
		for _, path := range []string{"/api/runs", "/", "/static/live.js"} {
			code, body := rawGet(t, addr, host, path)
			if code != want {
				t.Errorf("Host %s, %s: %d, want %d\n%.300s", host, path, code, want, body)
			}
			if want != http.StatusOK && (strings.Contains(body, "secret-plan") || !strings.Contains(body, "DNS rebinding") || !strings.Contains(body, "--allowed-host")) {
				t.Errorf("Host %s, %s: the refusal:\n%.500s", host, path, body)
			}
			if want == http.StatusOK && path == "/api/runs" && !strings.Contains(body, "secret-plan") {
				t.Errorf("Host %s: the runs:\n%.300s", host, body)
			}
		}
	}
	// HTTP/1.0 without a Host header names no host it answers to.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /api/runs HTTP/1.0\r\n\r\n")
	if res, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("no Host: %v %v", res, err)
	}

	// On every address (with its token), any IP address and this
	// machine's name are what a browser may send; other names are not.
	token := "t0ken-4b1d9e27c3a5"
	addr = startServe(t, "--store", db, "--listen", "0.0.0.0:0", "--token", token)
	hostname, _ := os.Hostname()
	for host, want := range map[string]int{
		"127.0.0.1":    http.StatusOK,
		"192.0.2.1":    http.StatusOK,
		"[fe80::1]:80": http.StatusOK,
		hostname:       http.StatusOK,
		"localhost":    http.StatusOK,
		"evil.example": http.StatusMisdirectedRequest,
	} {
		code, body := rawGet(t, addr, host, "/api/runs?token="+token)
		if want == http.StatusOK && code != http.StatusSeeOther || want != http.StatusOK && code != want {
			t.Errorf("0.0.0.0, Host %s: %d, want %d\n%.300s", host, code, want, body)
		}
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
	base := "http://" + startServe(t, "--store", dsn, "--listen", "127.0.0.1:0")
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

// A token is at least web.MinTokenLength characters, of the characters
// an Authorization header, a cookie and a URL carry as they are, and not
// one character repeated: serve, run --serve and run --metrics-listen
// refuse any other before they listen, wherever they listen.
func TestServersRefuseWeakTokens(t *testing.T) {
	plan := writePlan(t, "target: http://127.0.0.1:1\nscenarios: [{vus: 1, iterations: 1, flow: [{url: /a}]}]\n")
	for _, c := range []struct{ token, want string }{
		{"short", `token of 5 characters: a token is 16 characters at least`},
		{"0123456789abcde", `token of 15 characters: a token is 16 characters at least`},
		{"aaaaaaaaaaaaaaaaaaaa", `token of 20 characters has 1 different: a token has 5 different characters at least`},
		{"abababababababab", `token of 16 characters has 2 different`},
		{"0123456789abcdef;x", `token holds ';'`},
		{"0123456789 abcdef", `token holds ' '`},
		{"0123456789abcdéf", `token holds 'é'`},
	} {
		for _, args := range [][]string{
			{"serve", "--listen", "0.0.0.0:0", "--token", c.token, "--store", t.TempDir() + "/none.db"},
			{"serve", "--listen", "127.0.0.1:0", "--token", c.token, "--store", t.TempDir() + "/none.db"},
			{"run", plan, "--out", t.TempDir(), "--quiet", "--serve=0.0.0.0:0", "--serve-token", c.token},
			{"run", plan, "--out", t.TempDir(), "--quiet", "--metrics-listen", "0.0.0.0:0", "--metrics-token", c.token},
		} {
			flag := map[string]string{"serve": "--token", "run": "--serve-token"}[args[0]]
			if slices.Contains(args, "--metrics-token") {
				flag = "--metrics-token"
			}
			code, _, errs := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(errs, flag+": a "+c.want) && !strings.Contains(errs, flag+": the "+c.want) || strings.Contains(errs, c.token) {
				t.Errorf("%q: %d %s", args, code, errs)
			}
		}
	}
}

// perflab run --metrics-listen beyond loopback asks for a token, or to be
// told the figures are public, as serve does; with a token, /metrics
// answers only a request that carries it (Prometheus' authorization:
// credentials). On loopback, no token is needed.
func TestMetricsListenBeyondLoopback(t *testing.T) {
	plan := writePlan(t, "target: http://127.0.0.1:1\nscenarios: [{vus: 1, iterations: 1, flow: [{url: /a}]}]\n")
	code, _, errs := runCLI(t, "run", plan, "--out", t.TempDir(), "--quiet", "--metrics-listen", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(errs, "--metrics-listen 0.0.0.0:0 is reachable beyond this machine: give --metrics-token TOKEN") || !strings.Contains(errs, "or --metrics-insecure-public") {
		t.Errorf("run --metrics-listen 0.0.0.0:0: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "run", plan, "--out", t.TempDir(), "--quiet", "--metrics-listen", "9464")
	if code != exitUsage || !strings.Contains(errs, `--metrics-listen "9464": want HOST:PORT, such as 127.0.0.1:9464`) {
		t.Errorf("run --metrics-listen 9464: %d %s", code, errs)
	}
	token := "4f1c2a9e7b3d5f60"
	scrape := func(m *metricsServer, auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+m.addr+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode == http.StatusOK && !strings.Contains(string(b), "perflab_") {
			t.Errorf("/metrics: no perflab series:\n%.300s", b)
		}
		return res.StatusCode
	}
	m, err := startMetrics(metricsListen{addr: "127.0.0.1:0", token: token}, "", "p", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop(0)
	m.exp.SetRun("r")
	for auth, want := range map[string]int{
		"":                      http.StatusUnauthorized,
		"Bearer wrong":          http.StatusUnauthorized,
		"Bearer " + token:       http.StatusOK,
		"Basic " + token:        http.StatusUnauthorized,
		"Bearer " + token + "x": http.StatusUnauthorized,
	} {
		if got := scrape(m, auth); got != want {
			t.Errorf("Authorization %q: %d, want %d", auth, got, want)
		}
	}
	free, err := startMetrics(metricsListen{addr: "127.0.0.1:0", allowed: []string{"prom.test"}}, "", "p", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer free.stop(0)
	free.exp.SetRun("r")
	if got := scrape(free, ""); got != http.StatusOK {
		t.Errorf("loopback without a token: %d", got)
	}
	// As serve's pages, /metrics answers only to the names it is reached
	// by: a page of another site whose name points at it (DNS rebinding)
	// reads nothing.
	_, port, _ := net.SplitHostPort(free.addr)
	for host, want := range map[string]int{
		"127.0.0.1:" + port:    http.StatusOK,
		"localhost:" + port:    http.StatusOK,
		"prom.test:" + port:    http.StatusOK,
		"evil.example:" + port: http.StatusMisdirectedRequest,
		"evil.example":         http.StatusMisdirectedRequest,
	} {
		code, body := rawGet(t, free.addr, host, "/metrics")
		if code != want || want != http.StatusOK && (strings.Contains(body, "perflab_") || !strings.Contains(body, "--metrics-allowed-host")) {
			t.Errorf("Host %s: %d, want %d\n%.300s", host, code, want, body)
		}
	}
}
