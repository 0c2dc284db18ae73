package convert_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/internal/jmetertest"
	"github.com/perflab/perflab/jtl"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// comparison is a plan of the corpus run by JMeter and, converted, by
// perflab, each at a fresh instance of a server written for it.
type comparison struct {
	// name names the subtest; plan is the corpus file.
	name, plan string
	// data are the files the plan reads, by the path it reads them at
	// (from its directory): each a file of the corpus or of
	// testdata/compare.
	data map[string]string
	// props are JMeter properties (-Jname=value), given to the converted
	// plan with --set where it has a variable of that name, as the
	// converter's notes ask.
	props map[string]string
	// loops is each thread group's loops in the rewritten plan (default
	// 3).
	loops int
	// set are values for the converted plan's variables that its notes
	// ask for with --set, where a script of the plan computes them in
	// JMeter, as a user would give them.
	set func() map[string]string
	// server answers as the service would, for the plan's extractions and
	// assertions, with some answers they reject on purpose.
	server func() http.Handler
	// masks replace what each tool makes at random or from the clock
	// (UUIDs, dates) in both tools' requests alike.
	masks []mask
	// unordered says why the requests are compared as a collection of
	// requests rather than in order (thread groups at the same time); ""
	// compares the order.
	unordered string
	// random says why the requests are compared as numbers of each method
	// and path rather than one by one (a Random Controller): what was
	// picked at random differs from one run to the next.
	random string
	// gap names a known gap of the converter or the plan language that
	// makes this plan's requests or results differ, precisely: which
	// element, what JMeter sends, what perflab sends. at is a text of the
	// first difference it causes: the plan is skipped as an expected
	// failure only when its first difference is that one.
	gap, at string
	// varies says why the known gap's difference varies from run to run
	// (perflab's scenarios interleave as they will): a run without it is
	// skipped too, as one where the gap did not show.
	varies string
}

type mask struct {
	re *regexp.Regexp
	to string
}

// loops is each thread group's loops in the rewritten plans, unless a
// comparison says otherwise.
const loops = 3

// perflabBound bounds a converted plan's run: each ends in seconds (a few
// hundred requests without pauses), unless it loops for ever.
const perflabBound = time.Minute

// keepDir names the environment variable that keeps each plan's files in
// a directory of that name, to look into a difference: the rewritten
// plan and its data, JMeter's results and log, the converted plan and
// perflab's run, and each tool's requests as the server read them
// (requests-jmeter.txt, requests-perflab.txt).
const keepDir = "PERFLAB_COMPARE_KEEP"

// Each plan of the corpus below, rewritten to run at a recording server
// (rewriteJMX), is run by JMeter 5.6.3, then converted and run by perflab,
// each at a fresh instance of the same recording server written for that
// plan. Both must send the same requests in the same order (method, path,
// query, body, content type, as the server reads them), and each HTTP
// sampler must pass and fail as often in JMeter (the results file's
// success column) as its step in perflab (the step's errors in the
// summary): the same assertions pass and fail. Each subtest logs what
// matched and the first difference; a plan whose difference is a known
// gap, named in the table, is skipped as an expected failure.
func TestConvertedPlansSendWhatJMeterSends(t *testing.T) {
	jm := jmetertest.Install(t)
	for _, c := range comparisons {
		t.Run(c.name, func(t *testing.T) { c.run(t, jm) })
	}
}

// outcome is what one tool did: the requests the server saw, in order,
// and each HTTP sampler's (step's) runs and failures.
type outcome struct {
	requests []string
	samples  map[string]tally
	// failed says why the converted plan did not run, unended that it
	// ran without end.
	failed, unended string
}

type tally struct {
	runs, failed int
	why          string // what one failure said
}

func (c comparison) run(t *testing.T, jm *jmetertest.JMeter) {
	src, err := os.ReadFile(filepath.Join("testdata", "corpus", c.plan))
	if err != nil {
		t.Fatal(err)
	}
	n := c.loops
	if n == 0 {
		n = loops
	}
	rw, err := rewriteJMX(src, n)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if keep := os.Getenv(keepDir); keep != "" {
		dir = filepath.Join(keep, c.name)
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	jmx := filepath.Join(dir, c.plan)
	if err := os.WriteFile(jmx, rw.jmx, 0o644); err != nil {
		t.Fatal(err)
	}
	for to, from := range c.data {
		b, err := os.ReadFile(filepath.Join("testdata", from))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	byJMeter := c.jmeter(t, jm, jmx, rw)
	// The comparison says something only if JMeter ran the plan through
	// its samplers and some failed, as its server makes them.
	if runs, failed := totals(byJMeter.samples); runs == 0 || failed == 0 {
		t.Fatalf("JMeter's samplers ran %d times, %d failed: the plan's copy or its server is wrong", runs, failed)
	}
	byPerflab := c.perflab(t, dir, rw, max(1000, 10*len(byJMeter.requests)))

	if os.Getenv(keepDir) != "" {
		os.WriteFile(filepath.Join(dir, "requests-jmeter.txt"), []byte(strings.Join(byJMeter.requests, "\n")+"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "requests-perflab.txt"), []byte(strings.Join(byPerflab.requests, "\n")+"\n"), 0o644)
	}
	t.Logf("JMeter sent %d requests; %d samplers ran %s; failures: %s", len(byJMeter.requests), len(byJMeter.samples), summary(byJMeter.samples), failures(byJMeter.samples))
	diffs := c.compare(byJMeter, byPerflab)
	switch {
	case len(diffs) == 0 && c.gap != "" && c.varies != "":
		t.Skipf("known gap, which did not show in this run (%s): %s", c.varies, c.gap)
	case len(diffs) == 0 && c.gap != "":
		t.Errorf("JMeter and perflab agree now (%d requests): remove the known gap %q", len(byJMeter.requests), c.gap)
	case len(diffs) == 0:
		how := "in the same order"
		switch {
		case c.random != "":
			how = "as many of each method and path (" + c.random + ")"
		case c.unordered != "":
			how = "regardless of order (" + c.unordered + ")"
		}
		t.Logf("perflab agrees: the same %d requests %s, and the same passes and failures of each of the %d samplers",
			len(byJMeter.requests), how, len(byJMeter.samples))
	case c.gap != "" && strings.Contains(diffs[0], c.at):
		t.Skipf("known gap: %s\nfirst difference: %s", c.gap, diffs[0])
	default:
		t.Errorf("%s differs:\n%s", c.plan, strings.Join(diffs, "\n"))
		if c.gap != "" {
			t.Errorf("the known gap %q makes a first difference with %q", c.gap, c.at)
		}
	}
}

// jmeter runs the rewritten plan with JMeter at a fresh server.
func (c comparison) jmeter(t *testing.T, jm *jmetertest.JMeter, jmx string, rw *rewritten) outcome {
	tap := &tap{next: c.server()}
	srv := httptest.NewServer(tap)
	defer srv.Close()
	props := maps.Clone(c.props)
	if props == nil {
		props = map[string]string{}
	}
	props["target.port"] = port(srv.URL)
	results, log := jm.Run(t, jmx, props)
	if keep := os.Getenv(keepDir); keep != "" {
		b, _ := os.ReadFile(results)
		os.WriteFile(filepath.Join(filepath.Dir(jmx), "jmeter.jtl"), b, 0o644)
		os.WriteFile(filepath.Join(filepath.Dir(jmx), "jmeter.log"), []byte(log), 0o644)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, " ERROR ") {
			t.Logf("JMeter's log: %s", line)
		}
	}
	out := outcome{samples: samplerResults(t, results, rw.samplers)}
	out.requests = tap.lines(append([]mask{uuid}, c.masks...))
	return out
}

// samplerResults reads each HTTP sampler's runs and failures from
// JMeter's results file.
func samplerResults(t *testing.T, results string, samplers map[string]bool) map[string]tally {
	f, err := os.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := jtl.NewReader(f, results, jtl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tally{}
	for {
		s, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !samplers[s.Label] || s.Transaction {
			continue // a script's sample, a transaction's, a redirect's
		}
		n := out[s.Label]
		n.runs++
		if !s.Success {
			n.failed++
			if n.why == "" {
				n.why = strings.TrimSpace(s.Code + " " + s.Failure)
			}
		}
		out[s.Label] = n
	}
	return out
}

// perflab converts the rewritten plan and runs it at a fresh server, as a
// user would: the properties JMeter was given are given with --set to the
// variables the converted plan has for them.
func (c comparison) perflab(t *testing.T, dir string, rw *rewritten, limit int) outcome {
	res, err := convert.JMeter(bytes.NewReader(rw.jmx), c.plan)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, res.Plan, 0o644); err != nil {
		t.Fatal(err)
	}
	return c.runPlan(t, path, rw.samplers, limit)
}

// runPlan runs the perflab plan at path at a fresh server, and stops it
// once it has sent limit requests.
func (c comparison) runPlan(t *testing.T, path string, samplers map[string]bool, limit int) outcome {
	dir := filepath.Dir(path)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var declared struct {
		Vars map[string]any `yaml:"vars"`
		Data map[string]struct {
			CSV, File string
		} `yaml:"data"`
	}
	if err := yaml.Unmarshal(src, &declared); err != nil {
		t.Fatal(err)
	}
	// A data file the converted plan reads elsewhere than JMeter (its
	// notes say where) is put there too, as a user would.
	for _, d := range declared.Data {
		name := d.CSV + d.File
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil || strings.Contains(name, "${") {
			continue
		}
		for to := range c.data {
			if filepath.Base(to) == filepath.Base(name) {
				b, err := os.ReadFile(filepath.Join(dir, to))
				if err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("the converted plan reads %s, which JMeter read at %s: it is there too", name, to)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), perflabBound)
	defer cancel()
	tap := &tap{next: c.server(), limit: limit, over: cancel}
	srv := httptest.NewServer(tap)
	defer srv.Close()
	props := maps.Clone(c.props)
	if props == nil {
		props = map[string]string{}
	}
	props["target.port"] = port(srv.URL)
	var set []plan.Override
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if v := jmeterVar(name); declared.Vars[v] != nil {
			set = append(set, plan.Override{Name: v, Value: props[name]})
		}
	}
	if c.set != nil {
		values := c.set()
		for _, name := range slices.Sorted(maps.Keys(values)) {
			if declared.Vars[name] == nil {
				t.Logf("the converted plan has no variable %s to --set", name)
				continue
			}
			set = append(set, plan.Override{Name: name, Value: values[name]})
		}
	}
	p, err := plan.Load(path, plan.Options{Set: set})
	if err != nil {
		lines := strings.Split(strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""), "\n")
		if len(lines) > 4 {
			lines = append(lines[:4], fmt.Sprintf("and %d more", len(lines)-4))
		}
		return outcome{failed: "the converted plan does not load: " + strings.Join(lines, "\n  ")}
	}
	var stderr bytes.Buffer
	r, err := lab.Run(ctx, p, lab.Config{Out: filepath.Join(dir, "runs"), Store: "off", Progress: "none", Stdout: io.Discard, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("perflab said: %s", s)
	}
	out := outcome{samples: map[string]tally{}}
	// The requests sent by a run that went round for ever are compared
	// all the same: they say where it went round.
	switch {
	case tap.overflowed():
		out.unended = fmt.Sprintf("the converted plan did not end on its own: stopped at %d requests (10 times JMeter's)", limit)
	case r.Outcome == lab.Interrupted:
		out.unended = fmt.Sprintf("the converted plan did not end on its own: stopped after %v", perflabBound)
	}
	for _, phases := range [][]results.PhaseSummary{r.Summary.Setup, r.Summary.Stages, r.Summary.Teardown} {
		for _, ph := range phases {
			for _, op := range ph.Operations {
				name := op.Name
				if m := numbered.FindStringSubmatch(name); m != nil && !samplers[name] {
					name = m[1] // "NAME (2)": the converter's second step of a sampler's label
				}
				if op.Kind != metrics.KindStep || !samplers[name] || op.Count == 0 {
					continue
				}
				n := out.samples[name]
				n.runs += int(op.Count)
				n.failed += int(op.Errors.Total)
				for _, k := range slices.Sorted(maps.Keys(op.Errors.Details)) {
					if n.why == "" {
						n.why = k + ": " + op.Errors.Details[k]
					}
				}
				out.samples[name] = n
			}
		}
	}
	out.requests = tap.lines(append([]mask{uuid}, c.masks...))
	return out
}

// numbered is the name the converter gives a step whose sampler's label
// another step has: JMeter counts samplers of one label together, a plan's
// steps have names of their own ("NAME (2)"), counted here with NAME's.
var numbered = regexp.MustCompile(`^(.*) \(\d+\)$`)

// jmeterVar is the variable the converter gives a JMeter property.
func jmeterVar(name string) string {
	s := regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(name, "_")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		s = "p_" + s
	}
	return s
}

func port(u string) string { return u[strings.LastIndex(u, ":")+1:] }

// compare lists the differences between JMeter's outcome and perflab's,
// the first first.
func (c comparison) compare(j, p outcome) []string {
	if p.failed != "" {
		return []string{p.failed}
	}
	var diffs []string
	if p.unended != "" {
		diffs = append(diffs, p.unended)
	}
	a, b := j.requests, p.requests
	if c.unordered != "" {
		a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	}
	if c.random != "" {
		if counts := countDiffs(a, b); counts != "" {
			diffs = append(diffs, fmt.Sprintf("requests (by method and path, since %s): JMeter sent %d, perflab %d; JMeter's number against perflab's: %s", c.random, len(a), len(b), counts))
		}
	} else if !slices.Equal(a, b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "nothing more"
		}
		order := "in order"
		if c.unordered != "" {
			order = "sorted, since " + c.unordered
		}
		d := fmt.Sprintf("requests (%s): JMeter sent %d, perflab %d; the first %d are the same; then JMeter sent %s, perflab %s",
			order, len(a), len(b), i, at(a), at(b))
		if counts := countDiffs(a, b); counts != "" {
			d += "\n  requests by method and path, JMeter's number against perflab's: " + counts
		}
		diffs = append(diffs, d)
	}
	for _, label := range slices.Sorted(maps.Keys(union(j.samples, p.samples))) {
		x, y := j.samples[label], p.samples[label]
		if x.runs != y.runs || x.failed != y.failed {
			diffs = append(diffs, fmt.Sprintf("sampler %q: in JMeter %s, in perflab %s", label, x, y))
		}
	}
	return diffs
}

func (n tally) String() string {
	s := fmt.Sprintf("%d runs, %d failed", n.runs, n.failed)
	if n.why != "" {
		s += " (" + n.why + ")"
	}
	return s
}

func union(a, b map[string]tally) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// countDiffs lists the methods and paths requested a different number of
// times.
func countDiffs(a, b []string) string {
	count := func(l []string) map[string]int {
		n := map[string]int{}
		for _, r := range l {
			f := strings.SplitN(r, " ", 3)
			n[f[0]+" "+strings.SplitN(f[1], "?", 2)[0]]++
		}
		return n
	}
	x, y := count(a), count(b)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if x[k] != y[k] {
			out = append(out, fmt.Sprintf("%s %d/%d", k, x[k], y[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(y)) {
		if _, ok := x[k]; !ok {
			out = append(out, fmt.Sprintf("%s 0/%d", k, y[k]))
		}
	}
	return strings.Join(out, ", ")
}

// summary says how many runs and failures the samplers had in all.
func summary(samples map[string]tally) string {
	runs, failed := totals(samples)
	return fmt.Sprintf("%d runs, %d failed", runs, failed)
}

func totals(samples map[string]tally) (runs, failed int) {
	for _, n := range samples {
		runs += n.runs
		failed += n.failed
	}
	return runs, failed
}

// failures lists the samplers that failed, how often and why.
func failures(samples map[string]tally) string {
	var out []string
	for _, label := range slices.Sorted(maps.Keys(samples)) {
		if n := samples[label]; n.failed > 0 {
			out = append(out, fmt.Sprintf("%q %d of %d (%s)", label, n.failed, n.runs, n.why))
		}
	}
	if out == nil {
		return "none"
	}
	return strings.Join(out, ", ")
}

// tap records each request a server is sent, as the server reads it, then
// hands it on.
type tap struct {
	next http.Handler
	// limit, when not 0, is the most requests recorded: the next is
	// refused (503) and over is called, once.
	limit int
	over  func()
	mu    sync.Mutex
	reqs  []request
	extra int
}

func (t *tap) overflowed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.extra > 0
}

// request is what a request said, as the server reads it.
type request struct {
	method, target, body, contentType string
}

func (r request) String() string {
	return fmt.Sprintf("%s %s %q %s", r.method, r.target, r.body, r.contentType)
}

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := request{method: r.Method, target: strings.ReplaceAll(r.URL.Path, " ", "%20"), body: string(body), contentType: r.Header.Get("Content-Type")}
	if r.URL.RawQuery != "" {
		req.target += "?" + decoded(r.URL.RawQuery)
	}
	if strings.HasPrefix(req.contentType, "application/x-www-form-urlencoded") {
		req.body = decoded(req.body)
	}
	t.mu.Lock()
	if t.limit > 0 && len(t.reqs) >= t.limit {
		if t.extra++; t.extra == 1 {
			t.over()
		}
		t.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	t.reqs = append(t.reqs, req)
	t.mu.Unlock()
	t.next.ServeHTTP(w, r)
}

// lines are the requests recorded, what masks match replaced in their
// targets and bodies.
func (t *tap) lines(masks []mask) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, len(t.reqs))
	for i, r := range t.reqs {
		for _, m := range masks {
			r.target = m.re.ReplaceAllString(r.target, m.to)
			r.body = m.re.ReplaceAllString(r.body, m.to)
		}
		out[i] = r.String()
	}
	return out
}

// decoded is a query or a form as the server reads it: each name and
// value percent-decoded (JMeter and perflab escape different characters,
// and a service reads the same values), written back with only the
// characters that would make it ambiguous escaped.
func decoded(q string) string {
	if q == "" {
		return ""
	}
	esc := strings.NewReplacer("%", "%25", "&", "%26", "=", "%3D", " ", "%20")
	escValue := strings.NewReplacer("%", "%25", "&", "%26", " ", "%20")
	var out []string
	for _, kv := range strings.Split(q, "&") {
		k, v, eq := strings.Cut(kv, "=")
		if s, err := url.QueryUnescape(k); err == nil {
			k = s
		}
		if s, err := url.QueryUnescape(v); err == nil {
			v = s
		}
		if eq {
			out = append(out, esc.Replace(k)+"="+escValue.Replace(v))
		} else {
			out = append(out, esc.Replace(k))
		}
	}
	return strings.Join(out, "&")
}
