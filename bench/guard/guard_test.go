package guard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/perflab/perflab/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite budgets.json with the figures measured")

// Budgets is budgets.json: what one more request may cost, per case,
// and by how much a measured cost may differ from its budget before the
// test fails (Margins). A cost over budget is a regression; a cost under
// it by more than the margin is a stale budget, lowered with the change
// that made the request cheaper (go test ./bench/guard -update).
type Budgets struct {
	Margins Margins `json:"margins"`
	// CaseMargins are a case's own margins, where its figures vary more:
	// those it gives replace Margins'.
	CaseMargins map[string]Margins `json:"case_margins,omitempty"`
	Cases       map[string]Budget  `json:"cases"`
	// VUBytes are the bytes perflab allocates a VU that sends one request
	// and waits (TestVUMemory), per engine: what 10,000 VUs in think time
	// cost is 10,000 times that.
	VUBytes map[string]float64 `json:"vu_bytes"`
}

// margins are case's.
func (b *Budgets) margins(name string) Margins {
	m, own := b.Margins, b.CaseMargins[name]
	for _, f := range []struct{ to, from *float64 }{
		{&m.Instructions, &own.Instructions}, {&m.TotalInstructions, &own.TotalInstructions},
		{&m.Atomics, &own.Atomics}, {&m.Allocs, &own.Allocs}, {&m.Fixed, &own.Fixed}, {&m.VUBytes, &own.VUBytes},
	} {
		if *f.from != 0 {
			*f.to = *f.from
		}
	}
	return m
}

// Margins are relative (0.03 is 3%) but for atomics and allocations, which
// are counts a request.
type Margins struct {
	Instructions      float64 `json:"instructions,omitempty"`
	TotalInstructions float64 `json:"total_instructions,omitempty"`
	Atomics           float64 `json:"atomics,omitempty"`
	Allocs            float64 `json:"allocs,omitempty"`
	Fixed             float64 `json:"fixed,omitempty"`
	VUBytes           float64 `json:"vu_bytes,omitempty"`
}

// Budget is one case's, a request: the instructions of perflab's code and
// the libraries' but the Go runtime's and the histograms' (Steady), all
// instructions, the atomic instructions of the same code as Instructions
// (a lock taken, a shared counter), the heap allocations; and the
// steady instructions of a run that do not grow with its requests
// (start-up, plan loading, writing the run directory), in millions.
type Budget struct {
	Instructions      float64 `json:"instructions"`
	TotalInstructions float64 `json:"total_instructions"`
	Atomics           float64 `json:"atomics"`
	Allocs            float64 `json:"allocs"`
	Fixed             float64 `json:"fixed_millions"`
}

// A guardCase is a plan run twice, with n and 3n requests.
type guardCase struct {
	name string
	// plan is the plan's text for n requests; %s is the target.
	plan func(n int) string
	n    int
	h2   bool // at the HTTP/2 (h2c) server
	grpc bool // at the gRPC server (%s is its address; shop.proto is beside the plan)
}

// closed is a closed-model plan of one VU running n iterations of flow,
// over HTTP/1.1. One VU: the event loop wakes up for each response alone,
// whatever the server's speed (with more, how many responses a wake-up
// finds depends on how fast the server answers: 3,311 instructions a
// request of 10 VUs against a quiet server, 3,801 against one built with
// the race detector).
func closed(loop bool, flow string) func(n int) string { return closedOver("1.1", loop, flow) }

// closedOver is closed over HTTP version (1.1, or 2: h2c at the
// cases' HTTP/2 server).
func closedOver(version string, loop bool, flow string) func(n int) string {
	return func(n int) string {
		return fmt.Sprintf(`name: guard
target: %%s
interval: 1h
http: {event_loop: %t, version: "`+version+`"}
scenarios:
  - name: load
    vus: 1
    iterations: %d
    flow:
%s`, loop, n, flow)
	}
}

const getFlow = `      - {name: GET /, url: /}
`

// scriptedFlow logs in, extracts a token, sends it, checks a JSON field
// and takes a 43/57 weighted branch: two requests an iteration.
const scriptedFlow = `      - name: log in
        method: POST
        url: /login
        body: '{"user": "u${vu}"}'
        extract: {token: $.token}
      - name: item
        url: /items/1
        headers: {Authorization: "Bearer ${token}"}
        check: {json: {$.state: open}}
      - choose:
          - {weight: 43, steps: [{name: return, method: POST, url: /returns}]}
          - {weight: 57, steps: [{name: renew, method: POST, url: /renewals}]}
`

var cases = []guardCase{
	{name: "http1-loop", plan: closed(true, getFlow), n: 10000},
	{name: "http1-goroutines", plan: closed(false, getFlow), n: 10000},
	{name: "flow-loop", plan: closed(true, scriptedFlow), n: 4000},
	{name: "flow-goroutines", plan: closed(false, scriptedFlow), n: 4000},
	{name: "h2c-loop", plan: closedOver("2", true, getFlow), n: 10000, h2: true},
	{name: "h2c-goroutines", plan: closedOver("2", false, getFlow), n: 10000, h2: true},
	// A unary gRPC call on grpc-go (goroutines: the event loop speaks
	// HTTP only), its message made from the plan's JSON and its answer
	// decoded against the schema compiled from shop.proto.
	{name: "grpc-goroutines", n: 4000, grpc: true, plan: func(n int) string {
		return fmt.Sprintf(`name: guard
grpc: {target: "%%s", protos: [shop.proto]}
interval: 1h
scenarios:
  - name: load
    vus: 1
    iterations: %d
    flow:
      - name: get
        grpc: {service: shop.Shop, method: GetItem, message: {id: x}}
`, n)
	}},
	// At 500 arrivals a second, well within what perflab does under
	// valgrind, every arrival is paced alone (one that finds the loop late
	// is started with others, at another cost).
	{name: "open-loop", n: 1500, plan: func(n int) string {
		return fmt.Sprintf(`name: guard
target: %%s
interval: 1h
scenarios:
  - name: load
    rate: 500
    duration: %dms
    vus: 20
    flow:
%s`, n*2, getFlow)
	}},
}

// server answers the cases' requests as the same bytes every time: with
// no Date header, which changes every second (HTTP/2 would then encode the
// headers anew at a pace set by the clock, not by the requests).
func server() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/login":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"token": "abcdef0123456789"}`)
		case "/items/1":
			if r.Header.Get("Authorization") != "Bearer abcdef0123456789" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id": 1, "state": "open"}`)
		default:
			io.WriteString(w, "ok")
		}
	})
	return mux
}

// measured is what a case costs.
type measured struct {
	Budget
	requests [2]int64
	runs     [2]*Profile
}

var summaryLine = regexp.MustCompile(`summary = (\d+) .* Err: (\d+) `)

// TestCostBudgets runs each case under callgrind and holds what a
// request costs to its budget. Only the work that grows with requests is
// counted: the difference between a run of n and of 3n requests, with the
// garbage collector off (its pace depends on time, not on the requests;
// what it would have to collect is counted as allocations), and the plans'
// intervals an hour long (no interval closes while the load runs; with no
// progress display, the recorder is drained only when one does).
func TestCostBudgets(t *testing.T) {
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		testenv.Missing(t, "valgrind is not installed (apt-get install valgrind)")
	}
	budgets := loadBudgets(t)
	// GUARD_KEEP=DIR keeps the runs' plans and callgrind outputs there
	// (callgrind_annotate reads them).
	dir := os.Getenv("GUARD_KEEP")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := perflabBinary(t)
	srv := httptest.NewServer(server())
	defer srv.Close()
	// Go's own HTTP/2 server, h2c with prior knowledge.
	h2srv := httptest.NewServer(h2c.NewHandler(server(), &http2.Server{}))
	defer h2srv.Close()

	// perflab's own simulator answers gRPC: the same bytes every call.
	grpcAddr := startGRPCSim(t, bin, dir)

	got := map[string]Budget{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := srv.URL
			switch {
			case c.h2:
				target = h2srv.URL
			case c.grpc:
				target = grpcAddr
			}
			m := measure(t, valgrind, bin, dir, target, c)
			r := func(x float64) float64 { return math.Round(x*100) / 100 }
			got[c.name] = Budget{r(m.Instructions), r(m.TotalInstructions), r(m.Atomics), r(m.Allocs), r(m.Fixed)}
			t.Logf("%s, a request: %.0f instructions (%.0f with the runtime's), %.2f atomic, %.2f allocations; %.1f M fixed (%d and %d requests)",
				c.name, m.Instructions, m.TotalInstructions, m.Atomics, m.Allocs, m.Fixed, m.requests[0], m.requests[1])
			if *update {
				return
			}
			b, ok := budgets.Cases[c.name]
			if !ok {
				t.Fatalf("budgets.json has no case %q: add it (go test ./bench/guard -run TestCostBudgets -update)", c.name)
			}
			mg := budgets.margins(c.name)
			check := func(what string, got, budget, margin float64) {
				switch {
				case got > budget+margin:
					t.Errorf("%s: %.2f %s, over its budget of %.2f (+%.1f%%): a request got dearer\n%s",
						c.name, got, what, budget, (got/budget-1)*100, m.dearest())
				case got < budget-margin:
					t.Errorf("%s: %.2f %s, under its budget of %.2f (-%.1f%%): lower the budget with the change that made it cheaper (go test ./bench/guard -update)",
						c.name, got, what, budget, (1-got/budget)*100)
				}
			}
			check("instructions a request (steady)", m.Instructions, b.Instructions, b.Instructions*mg.Instructions)
			check("instructions a request (all)", m.TotalInstructions, b.TotalInstructions, b.TotalInstructions*mg.TotalInstructions)
			check("atomic instructions a request", m.Atomics, b.Atomics, mg.Atomics)
			check("allocations a request", m.Allocs, b.Allocs, mg.Allocs)
			check("million instructions fixed", m.Fixed, b.Fixed, b.Fixed*mg.Fixed)
		})
	}
	if *update && !t.Failed() {
		if budgets.Cases == nil {
			budgets.Cases = map[string]Budget{}
		}
		for name, b := range got { // the cases run (-run may pick some)
			budgets.Cases[name] = b
		}
		saveBudgets(t, budgets)
	}
}

// startGRPCSim runs `perflab sim` answering shop.Shop/GetItem on a free
// port of 127.0.0.1 until the test ends, with shop.proto copied into dir
// for the plans; it returns the address.
func startGRPCSim(t *testing.T, bin, dir string) string {
	proto, err := os.ReadFile(filepath.Join("..", "..", "protocol", "grpc", "testdata", "shop.proto"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shop.proto"), proto, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stubs := filepath.Join(dir, "grpc-stubs.yaml")
	if err := os.WriteFile(stubs, []byte(fmt.Sprintf(`routes: []
grpc:
  listen: %s
  protos: [shop.proto]
  methods:
    - method: shop.Shop/GetItem
      response: '{"id": "x", "name": "item"}'
`, addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "grpc-sim.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(bin, "sim", stubs)
	cmd.Dir = dir
	dieWithTest(cmd)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) //nolint:errcheck // it may have ended
		cmd.Wait()                       //nolint:errcheck // as above
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("perflab sim does not listen at %s after a minute:\n%s", addr, out)
		}
	}
}

// loadBudgets reads budgets.json, refusing a field it does not know.
func loadBudgets(t *testing.T) *Budgets {
	raw, err := os.ReadFile("budgets.json")
	if err != nil {
		t.Fatal(err)
	}
	var budgets Budgets
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&budgets); err != nil {
		t.Fatalf("budgets.json: %v", err)
	}
	return &budgets
}

// saveBudgets rewrites budgets.json (-update).
func saveBudgets(t *testing.T, budgets *Budgets) {
	out, err := json.MarshalIndent(budgets, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("budgets.json", append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// perflabBinary is the build of perflab the guard measures: GUARD_BIN
// (another revision's, to find which change made a request dearer), or
// this tree's.
func perflabBinary(t *testing.T) string {
	if bin := os.Getenv("GUARD_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "perflab")
	build := exec.Command("go", "build", "-o", bin, "github.com/perflab/perflab/cmd/perflab")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// measure runs c with n and 3n requests under callgrind.
func measure(t *testing.T, valgrind, bin, dir, target string, c guardCase) *measured {
	m := &measured{}
	for i, n := range []int{c.n, 3 * c.n} {
		plan := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", c.name, n))
		if err := os.WriteFile(plan, []byte(fmt.Sprintf(c.plan(n), target)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("%s-%d.callgrind", c.name, n))
		cmd := exec.Command(valgrind, "--tool=callgrind", "--collect-bus=yes", "--callgrind-out-file="+out,
			bin, "run", plan, "--out", filepath.Join(dir, "runs"), "--store", "off", "--quiet")
		// asyncpreemptoff: valgrind does not deliver the runtime's
		// preemption signals as it expects; cpu.all=off: the runtime's
		// baseline code (no AVX2 memmove or IndexByte), so that the counts
		// do not depend on the processor CI happens to get; GOMAXPROCS=1:
		// one scheduler, as valgrind runs one thread at a time anyway.
		cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1,cpu.all=off", "GOMAXPROCS=1", "GOGC=off")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("perflab under callgrind: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
		}
		sm := summaryLine.FindSubmatch(stdout.Bytes())
		if sm == nil || string(sm[2]) != "0" {
			t.Fatalf("perflab's run did not succeed without errors:\n%s\n%s", stdout.Bytes(), stderr.Bytes())
		}
		m.requests[i], _ = strconv.ParseInt(string(sm[1]), 10, 64)
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		m.runs[i], err = ParseCallgrind(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	d := float64(m.requests[1] - m.requests[0])
	if d <= 0 {
		t.Fatalf("runs of %d and %d requests", m.requests[0], m.requests[1])
	}
	a, b := m.runs[0], m.runs[1]
	ir, ge := a.Event("Ir"), a.Event("Ge")
	if ir < 0 || ge < 0 {
		t.Fatalf("callgrind counted %v, not Ir and Ge", a.Events)
	}
	per := func(e int) float64 { return float64(b.Sum(e, Steady)-a.Sum(e, Steady)) / d }
	m.Instructions = per(ir)
	m.TotalInstructions = float64(b.Total[ir]-a.Total[ir]) / d
	m.Atomics = per(ge)
	m.Allocs = float64(b.Allocs()-a.Allocs()) / d
	m.Fixed = (float64(a.Sum(ir, Steady)) - m.Instructions*float64(m.requests[0])) / 1e6
	return m
}

// dearest lists the functions whose own instructions a request are the
// most, for a failure's message.
func (m *measured) dearest() string {
	a, b := m.runs[0], m.runs[1]
	d := float64(m.requests[1] - m.requests[0])
	ir, ge := a.Event("Ir"), a.Event("Ge")
	type row struct {
		name   string
		ir, ge float64
	}
	var rows []row
	for fn, c := range b.Self {
		r := row{fn, float64(c[ir]) / d, float64(c[ge]) / d}
		if o := a.Self[fn]; o != nil {
			r.ir, r.ge = float64(c[ir]-o[ir])/d, float64(c[ge]-o[ge])/d
		}
		if r.ir >= 1 || r.ge >= 0.01 {
			rows = append(rows, r)
		}
	}
	var sb strings.Builder
	for _, by := range []struct {
		what string
		key  func(row) float64
	}{{"instructions", func(r row) float64 { return r.ir }}, {"atomic instructions", func(r row) float64 { return r.ge }}} {
		slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(by.key(y), by.key(x)) })
		fmt.Fprintf(&sb, "the functions with the most %s a request (instructions, atomic):\n", by.what)
		for _, r := range rows[:min(len(rows), 20)] {
			if by.key(r) > 0 {
				fmt.Fprintf(&sb, "  %8.1f %5.2f  %s\n", r.ir, r.ge, r.name)
			}
		}
	}
	return sb.String()
}
