//go:build linux

package http

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// HTTP/2 on the event loop against nginx (http2 on, h2c and TLS), a server
// perflab's authors did not write: every request of each step, its
// checks, a redirect followed, a 404, a 256 KB file, served once each as
// nginx's access log counts them, all over HTTP/2.0. Needs nginx (.ci/run
// installs nginx-light).
func TestLoopH2Nginx(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			testenv.Missing(t, "nginx is not installed (Debian: apt-get install nginx-light)")
		}
		bin = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 16<<10) // 256 KB: many DATA frames
	files := map[string]string{"html/index.html": "hello h2\n", "html/big.txt": big}
	cert, key, pool := selfSigned(t)
	files["cert.pem"], files["key.pem"] = cert, key
	for name, content := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h2cPort, tlsPort := freePort(t), freePort(t)
	conf := `daemon off;
master_process off;
worker_processes 1;
pid DIR/nginx.pid;
error_log DIR/error.log warn;
events { worker_connections 256; }
http {
  log_format h2 '$server_port $server_protocol $status $uri';
  access_log DIR/access.log h2;
  client_body_temp_path DIR/tmp/body;
  proxy_temp_path DIR/tmp/proxy;
  fastcgi_temp_path DIR/tmp/fastcgi;
  uwsgi_temp_path DIR/tmp/uwsgi;
  scgi_temp_path DIR/tmp/scgi;
  server {
    listen 127.0.0.1:H2C http2;
    listen 127.0.0.1:TLS ssl http2;
    ssl_certificate DIR/cert.pem;
    ssl_certificate_key DIR/key.pem;
    root DIR/html;
    location = /old { return 302 /index.html; }
    location = /echo { add_header X-Seen "$http_x_vu" always; return 200 "vu $http_x_vu $request_method\n"; }
  }
}
`
	conf = strings.NewReplacer("DIR", dir, "H2C", strconv.Itoa(h2cPort), "TLS", strconv.Itoa(tlsPort)).Replace(conf)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755) //nolint:errcheck // nginx says if it cannot write there
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // it may have exited
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Error("nginx did not quit within 30 s of SIGQUIT")
				cmd.Process.Kill() //nolint:errcheck
				<-exited
			}
		})
	}
	defer stop()
	for _, port := range []int{h2cPort, tlsPort} { // until nginx listens, or has exited
		for deadline := time.Now().Add(20 * time.Second); ; {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-exited:
				log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
				t.Fatalf("nginx exited: %v\n%s%s", err, out, log)
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("nginx does not listen on %d", port)
			}
		}
	}

	const vus, rounds = 3, 20
	for _, origin := range []string{"http://127.0.0.1:" + strconv.Itoa(h2cPort), "https://127.0.0.1:" + strconv.Itoa(tlsPort)} {
		c := NewClient(Options{Timeout: 10 * time.Second, KeepAlive: true, HTTP2: true, RootCAs: pool, BodyLimit: 1 << 20})
		st := func(name, path string, check *plan.Check) step {
			s := &plan.Step{Name: name, Method: "GET", URL: text(origin + path), Check: check}
			if name == "echo" {
				s.Method = "POST"
				s.Headers = []plan.Pair{{Name: "X-VU", Value: text("perflab-h2")}}
			}
			return h2Step(t, s)
		}
		results := runLoop(t, c, vus, rounds,
			st("index", "/index.html", &plan.Check{BodyContains: []string{"hello h2"}}),
			st("old", "/old", &plan.Check{BodyContains: []string{"hello h2"}}),
			st("echo", "/echo", &plan.Check{BodyContains: []string{"vu perflab-h2 POST"}}),
			st("big", "/big.txt", &plan.Check{BodyContains: []string{big[len(big)-64:]}}),
			st("missing", "/missing", nil))
		for v, rs := range results {
			for i, r := range rs {
				want, status, bytes := metrics.OK, 200, 0
				switch i % 5 {
				case 3:
					bytes = len(big)
				case 4:
					want, status = metrics.HTTP4xx, 404
				}
				if r.Err != want || r.Status != status || bytes > 0 && r.Bytes != bytes {
					t.Errorf("%s, VU %d, request %d: %v %d %d bytes (%s); want %v %d", origin, v, i, r.Err, r.Status, r.Bytes, r.Detail, want, status)
				}
			}
		}
	}
	stop() // the access log is whole once nginx has exited
	log, err := os.ReadFile(filepath.Join(dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		counts[l]++
	}
	n := vus * rounds
	for _, port := range []int{h2cPort, tlsPort} {
		p := strconv.Itoa(port) + " HTTP/2.0 "
		want := map[string]int{p + "200 /index.html": 2 * n, p + "302 /old": n, p + "200 /echo": n, p + "200 /big.txt": n, p + "404 /missing": n}
		for line, w := range want {
			if counts[line] != w {
				t.Errorf("nginx logged %q %d times, want %d", line, counts[line], w)
			}
			delete(counts, line)
		}
	}
	if len(counts) > 0 {
		t.Errorf("nginx logged other requests: %v", counts)
	}
}

// selfSigned makes a certificate for 127.0.0.1: its PEM, its key's, and
// a pool that trusts it.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})), pool
}

// freePort is a port of 127.0.0.1 that nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
