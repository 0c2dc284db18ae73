package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
)

// netnsHosts makes count network namespaces, each a host of its own: a
// veth pair to this (the root) namespace, 10.231.I.2/24 inside with a
// default route to 10.231.I.1 outside. It returns their names; they are
// removed when the test ends.
func netnsHosts(t *testing.T, count int) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "network namespaces need root (CI runs as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Missing(t, "no ip command (iproute2)")
	}
	run := func(args ...string) error {
		if b, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, b)
		}
		return nil
	}
	var names []string
	for i := range count {
		ns := fmt.Sprintf("plw%d-%d", os.Getpid(), i)
		host, peer := fmt.Sprintf("plh%d-%d", os.Getpid()%10000, i), fmt.Sprintf("plp%d-%d", os.Getpid()%10000, i)
		if err := run("netns", "add", ns); err != nil {
			testenv.Missing(t, "cannot make a network namespace: "+err.Error())
		}
		t.Cleanup(func() {
			run("link", "del", host)
			run("netns", "del", ns)
		})
		outside, inside := fmt.Sprintf("10.231.%d.1", i), fmt.Sprintf("10.231.%d.2", i)
		for _, args := range [][]string{
			{"link", "add", host, "type", "veth", "peer", "name", peer},
			{"link", "set", peer, "netns", ns},
			{"addr", "add", outside + "/24", "dev", host},
			{"link", "set", host, "up"},
			{"-n", ns, "addr", "add", inside + "/24", "dev", peer},
			{"-n", ns, "link", "set", peer, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
			{"-n", ns, "route", "add", "default", "via", outside},
		} {
			if err := run(args...); err != nil {
				t.Fatal(err)
			}
		}
		names = append(names, ns)
	}
	return names
}

// forward serves on addr what listens on to (a PostgreSQL on 127.0.0.1,
// for hosts that cannot reach this machine's loopback).
func forward(t *testing.T, addr, to string) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				d, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer d.Close()
				go func() { io.Copy(d, c); d.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, d)
			}()
		}
	}()
	return l.Addr().String()
}

// Three workers, each on a host of its own (a network namespace with its
// own address and host name), reach the target and the PostgreSQL history
// over the network, not 127.0.0.1, and make one run: its counts are the
// server's, setup and teardown run once, each worker's host is named.
func TestDistributedOnSeparateHosts(t *testing.T) {
	bin := perflabBin(t)
	dsn := pgSchema(t, "dist_netns_test")
	hosts := netnsHosts(t, 3)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = forward(t, "10.231.0.1:0", u.Host)
	remoteDSN := u.String()

	srv := &distServer{seen: map[string]int{}, byPath: map[string]int{}}
	srv.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		srv.byPath[r.URL.Path]++
		srv.seen[r.RemoteAddr[:strings.LastIndex(r.RemoteAddr, ":")]]++
		if r.URL.Path == "/login" {
			w.Header().Set("X-Token", "t0k3n")
		}
	}))
	l, err := net.Listen("tcp", "10.231.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	defer srv.Close()

	planPath := distPlan(t, srv.URL, "n")
	out := t.TempDir()
	var cmds []*exec.Cmd
	for i, ns := range hosts {
		script := fmt.Sprintf("hostname worker-%d && exec %s run %s --segment %d/3 --run-id run-n --store '%s' --out %s --quiet --join-timeout 1m",
			i, bin, planPath, i, remoteDSN, filepath.Join(out, fmt.Sprint(i)))
		c := exec.Command("ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", script)
		c.Stderr = &lockedBuilder{b: &strings.Builder{}}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill() })
		cmds = append(cmds, c)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(2 * time.Minute): // a namespace that cannot reach the host: do not hang
			for _, c := range cmds {
				c.Process.Kill()
			}
		}
	}()
	codes, errs := wait(cmds)
	close(done)
	for _, c := range codes {
		if c != exitOK {
			t.Fatalf("exit codes %v\n%s", codes, errs)
		}
	}
	// Each worker's requests came from its own host's address.
	srv.mu.Lock()
	for i := range 3 {
		if srv.seen[fmt.Sprintf("10.231.%d.2", i)] == 0 {
			t.Errorf("no request from worker %d's address 10.231.%d.2 (from %v)", i, i, srv.seen)
		}
	}
	gets, posts, logins, logouts := srv.byPath["/n/get"], srv.byPath["/n/post"], srv.byPath["/login"], srv.byPath["/logout"]
	srv.mu.Unlock()
	var merged string
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(out, fmt.Sprint(i), "run-n", "summary.json")); err == nil {
			merged = filepath.Join(out, fmt.Sprint(i), "run-n")
		}
	}
	if merged == "" {
		t.Fatal("no worker wrote the run's directory")
	}
	sum := summaryAt(t, merged)
	if sum.Status != metrics.StatusCompleted || count(sum, 0, "get") != 1000 || int(count(sum, 0, "get")) != gets || int(count(sum, 0, "post")) != posts {
		t.Errorf("run %s: get %d (server %d), post %d (server %d)", sum.Status, count(sum, 0, "get"), gets, count(sum, 0, "post"), posts)
	}
	if logins != 1 || logouts != 1 {
		t.Errorf("setup %d times, teardown %d times", logins, logouts)
	}
	for i, w := range sum.Workers {
		if w.Host != fmt.Sprintf("worker-%d", i) {
			t.Errorf("worker %d ran on %q", i, w.Host)
		}
	}
}
