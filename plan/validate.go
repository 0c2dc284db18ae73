package plan

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/dataset"
	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/sim"
	"github.com/perflab/perflab/tmpl"
)

// Built-in template names.
var (
	// FlowBuiltins are defined in every scenario step.
	FlowBuiltins = []string{"vu", "iteration", "scenario", "stage", "run_id", "uuid", "timestamp_ms"}
	// PhaseBuiltins are defined in setup and teardown steps; index and item
	// only inside a repeat.
	PhaseBuiltins = []string{"stage", "run_id", "uuid", "timestamp_ms"}
)

const defaultTimeout = 30 * time.Second

var methodRe = regexp.MustCompile(`^[A-Z][A-Z-]*$`)

type validator struct {
	*decoder
	// at reports a problem at a position; checkNums wraps it to report once.
	at        func(pos Pos, format string, args ...any)
	p         *Plan
	dir       string
	lookupEnv func(string) (string, bool)
	// names defined for templates outside any flow: vars, dims, data.
	global map[string]bool
	// setupNames are extracted in setup and visible afterwards.
	setupNames map[string]bool
	// unread are the CSV sources whose file could not be read (said
	// once): their columns are the plan's, or any.
	unread    map[string]bool
	swept     map[string]bool
	inPhase   bool // checking setup/teardown
	phaseName string
	usesSwept bool // setup/teardown use a swept value
	// unnamed are the steps named from what they do (METHOD URL, the
	// call, the topic): two of them with one name do the same thing.
	unnamed map[*Step]bool
	// fragments by name, the plan's and its included files'; using are
	// those being checked (a fragment that uses itself), in useStack's
	// order.
	fragments map[string]*Fragment
	using     map[string]bool
	useStack  []string
	// pending are checks to make once the step being checked is
	// (afterStep).
	pending []func()
	// scen is the scenario whose flow is being checked (nil in setup and
	// teardown).
	scen *Scenario
	// warnings do not stop the plan (Plan.Warnings).
	warnings ErrorList
}

func (v *validator) report(pos Pos, format string, args ...any) {
	v.errs = append(v.errs, v.problem(pos, format, args...))
}

// warn notes what may be meant but deserves a look (Plan.Warnings).
func (v *validator) warn(pos Pos, format string, args ...any) {
	v.warnings = append(v.warnings, v.problem(pos, format, args...))
}

// problem is a message at a position of the plan or of a file it includes.
func (v *validator) problem(pos Pos, format string, args ...any) *Error {
	file := v.file
	if pos.File != "" {
		file = pos.File
	}
	return &Error{File: file, Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, args...)}
}

func (v *validator) validate() {
	p := v.p
	if p.Name == "" {
		// The file's name, made one line as a name is.
		p.Name, _ = SingleLine(strings.TrimSuffix(filepath.Base(p.File), filepath.Ext(p.File)))
	}
	if p.Interval.Given() && p.Interval.D < metrics.MinInterval {
		v.at(p.Interval.Pos, "interval %v is too short: use %v or more (leave it out to size it to the run)", p.Interval.D, metrics.MinInterval)
	}
	v.timeout("http.timeout", p.HTTP.Timeout, "30s")
	v.timeout("http.connect_timeout", p.HTTP.ConnectTimeout, "http.timeout")
	if p.HTTP.Timeout.D == 0 {
		p.HTTP.Timeout.D = defaultTimeout
	}
	if p.HTTP.MaxConnsPerHost < 0 {
		v.errorf(nil, "http.max_conns_per_host must not be negative")
	}
	switch p.HTTP.Connections {
	case "", "shared", "per-vu":
	default:
		v.errorf(nil, "http.connections %q: want shared or per-vu", p.HTTP.Connections)
	}
	switch p.HTTP.Version {
	case "", "1.1", "2":
	default:
		v.errorf(nil, "http.version %q: want 1.1 or 2", p.HTTP.Version)
	}
	if p.HTTP.RequiresEventLoop() {
		switch {
		case runtime.GOOS != "linux":
			v.errorf(nil, "http.event_loop: true needs Linux (epoll); remove it to run on %s", runtime.GOOS)
		case p.HTTP.MaxConnsPerHost > 0:
			v.errorf(nil, "http.event_loop: true gives every VU a connection of its own: http.max_conns_per_host does not apply")
		}
	}
	if st := p.HTTP.ServerTime; st != nil && st.Header == "" {
		v.at(st.Pos, "http.server_time: header is required, such as Server-Timing or X-Response-Time")
	}
	if f := p.HTTP.CAFile; f != "" {
		b, err := inputfile.ReadFile(v.path(f), MaxCAFileBytes)
		if err == nil && !bytes.Contains(b, []byte("-----BEGIN CERTIFICATE-----")) {
			err = fmt.Errorf("%s holds no PEM certificate", f)
		}
		if err != nil {
			v.at(p.HTTP.CAFilePos, "http.ca_file: %v", inputfile.Explain(err, "a CA file may be "+inputfile.FormatSize(MaxCAFileBytes)))
		}
		p.HTTP.CAs = b
	}
	p.Env = map[string]string{}
	v.global = map[string]bool{}
	v.swept = map[string]bool{}
	v.setupNames = map[string]bool{}
	v.unnamed = map[*Step]bool{}
	v.loadFragments()

	for _, vr := range p.Vars {
		v.define(vr.Pos, vr.Name, "variable")
		if vr.Swept() {
			p.Dimensions = append(p.Dimensions, Dimension{Name: vr.Name, Values: vr.Values})
			v.swept[vr.Name] = true
		}
	}
	v.scenarioDims()
	for _, d := range p.Data {
		v.data(d)
	}

	// Target and headers may use variables and env only.
	if p.Target != nil {
		v.refs(p.Target, nil)
		v.checkTarget()
		v.wireURL("target", p.Target)
	}
	for _, h := range p.Headers {
		v.refs(h.Value, nil)
	}
	v.wireHeaders("headers", p.Headers)
	v.sessionOptions()

	v.buses()
	v.simulators()
	v.grpcOptions()
	v.logs()
	v.monitors()
	v.phase("setup", p.Setup, true)
	if len(p.Scenarios) == 0 {
		v.errorf(nil, "the plan has no scenarios: add scenarios: with at least one flow")
	}
	names := map[string]bool{}
	for i, sc := range p.Scenarios {
		if sc.Name == "" {
			sc.Name = fmt.Sprintf("scenario-%d", i+1)
		}
		if names[sc.Name] {
			v.at(sc.Pos, "scenario name %q is used twice", sc.Name)
		}
		names[sc.Name] = true
		v.scenario(sc)
	}
	v.phase("teardown", p.Teardown, false)
	v.thresholds()
	stages := int64(1)
	for _, d := range p.Dimensions {
		stages *= int64(len(d.Values))
		if stages > MaxStages {
			v.errorf(nil, "the sweeps make more than %d stages; sweep fewer values", MaxStages)
			return
		}
	}
	v.checkNums()
	if p.Interval.D == 0 {
		p.SizeInterval()
	}
}

// timeout refuses a timeout written as 0. Unset, it has a default
// (dflt); 0 written out was taken for that default where its writer may
// have meant no timeout at all, which perflab has not: a server that never
// answers would hold a VU for ever.
func (v *validator) timeout(who string, d Duration, dflt string) {
	if d.Given() && d.D == 0 {
		v.at(d.Pos, "%s 0s: want a duration above 0, such as 30s (leave it out for the default, %s; there is no unbounded timeout)", who, dflt)
	}
}

// stepTimeouts refuses a step's timeouts written as 0 (timeout).
func (v *validator) stepTimeouts(st *Step) {
	who := "step " + st.Label() + ": "
	v.timeout(who+"timeout", st.Timeout, "http.timeout")
	if st.Await != nil {
		v.timeout(who+"await timeout", st.Await.Timeout, "30s")
	}
	if st.WS != nil && st.WS.Await != nil {
		v.timeout(who+"ws await timeout", st.WS.Await.Timeout, "30s")
	}
	if st.GRPC != nil {
		v.timeout(who+"grpc deadline", st.GRPC.Deadline, "grpc.timeout")
	}
}

// MaxStages bounds the number of stages a plan's sweeps may make.
const MaxStages = 10000

// MaxVUs bounds the VUs of one scenario.
const MaxVUs = 1_000_000

// MaxRate bounds an arrival rate, in iterations a second. To start an
// iteration takes a VU, a clock reading and a histogram record: over 100
// ns of a core, so no process paces more, and a schedule beyond it would
// be dropped, not run.
const MaxRate = 10_000_000

func tooFast(r float64) string {
	return fmt.Sprintf("%g iterations a second is more than a load generator can start (at most %d: each start takes over 100 ns of a core)", r, MaxRate)
}

func (v *validator) define(pos Pos, name, what string) {
	if v.global[name] {
		v.at(pos, "%s %q: the name is already defined", what, name)
		return
	}
	for _, b := range FlowBuiltins {
		if b == name {
			v.at(pos, "%s %q: the name is built in (${%s})", what, name, name)
			return
		}
	}
	v.global[name] = true
}

// scenarioDims turns literal lists in scenario load fields into sweep dimensions.
func (v *validator) scenarioDims() {
	type field struct {
		sc   *Scenario
		name string
		n    *Num
	}
	var lists []field
	count := map[string]int{}
	for _, sc := range v.p.Scenarios {
		for name, n := range sc.nums() {
			if n != nil && n.List {
				lists = append(lists, field{sc, name, n})
				count[name]++
			}
		}
	}
	sort.SliceStable(lists, func(i, j int) bool {
		a, b := lists[i].n.Pos, lists[j].n.Pos
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	for _, f := range lists {
		dim := f.name
		if count[f.name] > 1 {
			dim = f.sc.Name + "." + f.name
		}
		f.n.Dim = dim
		v.define(f.n.Pos, dim, "swept field")
		v.swept[dim] = true
		v.p.Dimensions = append(v.p.Dimensions, Dimension{Name: dim, Values: f.n.Values})
	}
}

func (sc *Scenario) nums() map[string]*Num {
	return map[string]*Num{
		"vus": sc.VUs, "iterations": sc.Iterations, "total_iterations": sc.TotalIterations,
		"duration": sc.Duration, "ramp_up": sc.RampUp, "rate": sc.Rate, "max_vus": sc.MaxVUs,
	}
}

func (v *validator) data(d *Data) {
	v.define(d.Pos, d.Name, "data source")
	kinds := 0
	for _, set := range []bool{d.File != "", d.CSV != "", d.Glob != "", d.Range != nil, d.Values != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		v.at(d.Pos, "data %s: give exactly one of file, csv, glob, range or values", d.Name)
		return
	}
	if d.Delimiter != "" && d.CSV == "" {
		v.at(d.Pos, "data %s: delimiter is for csv files", d.Name)
	}
	if d.Mode == "" {
		d.Mode = string(dataset.Sequential)
	} else if _, err := dataset.ParseMode(d.Mode); err != nil {
		v.at(d.Pos, "data %s: %v", d.Name, err)
	}
	var values []string
	var err error
	switch {
	case d.File != "" || d.CSV != "":
		err = d.readData(v.dir, false)
	case d.Glob != "":
		values, err = dataset.ExpandGlob(d.Glob, 0)
	case d.Range != nil:
		step := d.Range.Step
		if step == 0 {
			step = 1
			if d.Range.To < d.Range.From {
				step = -1
			}
		}
		values, err = dataset.Range(d.Range.From, d.Range.To, step, d.Range.Format)
	default:
		values = d.Values
		if len(values) == 0 {
			err = fmt.Errorf("values is empty")
		}
	}
	if err != nil {
		v.at(d.Pos, "data %s: %v", d.Name, err)
		if d.CSV != "" {
			if v.unread == nil {
				v.unread = map[string]bool{}
			}
			v.unread[d.Name] = true
		}
		return
	}
	if values != nil {
		d.Rows = make([][]string, len(values))
		for i, s := range values {
			d.Rows[i] = []string{s}
		}
	}
}

func (v *validator) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(v.dir, p)
}

func (v *validator) checkTarget() {
	vars := v.p.VarsFor(Stage{})
	s, err := v.p.Target.T.Expand(tmpl.LookupFunc(func(n string) (string, bool) { x, ok := vars[n]; return x, ok }))
	if err != nil {
		return // reported by refs
	}
	if strings.IndexFunc(s, isCTL) >= 0 {
		return // wireURL says it
	}
	if msg := checkBaseURL(s); msg != "" {
		v.at(v.p.Target.Pos, "target %q: %s", secret.Text(s), msg)
	}
}

func checkBaseURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "malformed URL: " + strings.TrimPrefix(err.Error(), "parse \""+s+"\": ")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "want an http:// or https:// URL"
	}
	if u.Host == "" {
		return "the URL has no host"
	}
	return ""
}

// scope is the set of names a step may use.
type scope struct {
	builtins []string
	local    map[string]bool // extracted earlier in the flow, index/item
}

func (v *validator) phase(name string, steps []*Step, isSetup bool) {
	v.inPhase, v.phaseName = true, name
	defer func() { v.inPhase = false }()
	sc := &scope{builtins: PhaseBuiltins, local: map[string]bool{}}
	for k := range v.setupNames {
		sc.local[k] = true
	}
	kinds := map[string]string{}
	for _, st := range steps {
		v.step(st, sc, name, false)
		v.labels(st, kinds)
	}
	if isSetup {
		// What setup extracts or sets, wherever in it, is there afterwards.
		maps.Copy(v.setupNames, sc.local)
	}
	if v.usesSwept {
		v.p.SetupPerStage = true
	}
}

func (v *validator) scenario(sc *Scenario) {
	if sc.VUs == nil && len(sc.RampVUs) == 0 {
		v.at(sc.Pos, "scenario %s: vus is required", sc.Name)
	}
	if sc.VUs == nil && len(sc.RampVUs) > 0 {
		sc.VUs = &Num{Pos: sc.Pos, Values: []string{"0"}}
	}
	if sc.Iterations != nil && sc.TotalIterations != nil {
		v.at(sc.TotalIterations.Pos, "scenario %s: give iterations (per VU) or total_iterations (shared), not both", sc.Name)
	}
	switch {
	case sc.Rate != nil && len(sc.RampRate) > 0:
		v.at(sc.Pos, "scenario %s: give rate (constant) or ramp_rate (ramping), not both", sc.Name)
	case sc.IsOpen() && (sc.Iterations != nil || sc.TotalIterations != nil || sc.RampUp != nil || len(sc.RampVUs) > 0):
		v.at(sc.Pos, "scenario %s: an arrival-rate model (rate, ramp_rate) is bounded by duration or its ramp, not by iterations, ramp_up or ramp_vus", sc.Name)
	case sc.Rate != nil && sc.Duration == nil:
		v.at(sc.Rate.Pos, "scenario %s: rate needs a duration", sc.Name)
	case !sc.IsOpen() && (sc.MaxVUs != nil || sc.StartRate != 0 || sc.WhenBusy != ""):
		v.at(sc.Pos, "scenario %s: max_vus, start_rate and when_busy belong to arrival-rate models (rate, ramp_rate)", sc.Name)
	case sc.WhenBusy != "" && sc.WhenBusy != "drop" && sc.WhenBusy != "queue":
		v.at(sc.Pos, "scenario %s: when_busy %q: want drop or queue", sc.Name, sc.WhenBusy)
	case len(sc.RampVUs) > 0 && (sc.RampUp != nil || sc.TotalIterations != nil):
		v.at(sc.Pos, "scenario %s: ramp_vus sets the VU count over time; it does not go with ramp_up or total_iterations", sc.Name)
	case !sc.IsOpen() && len(sc.RampVUs) == 0 && sc.Iterations == nil && sc.TotalIterations == nil && sc.Duration == nil:
		v.at(sc.Pos, "scenario %s: give iterations, total_iterations or duration so the load ends", sc.Name)
	}
	if !(sc.StartRate >= 0) || math.IsInf(sc.StartRate, 0) {
		v.at(sc.Pos, "scenario %s: start_rate %g: want a number of iterations per second, 0 or more", sc.Name, sc.StartRate)
	} else if sc.StartRate > MaxRate {
		v.at(sc.Pos, "scenario %s: start_rate: %s", sc.Name, tooFast(sc.StartRate))
	}
	for _, steps := range [][]*RampStep{sc.RampRate, sc.RampVUs} {
		for _, r := range steps {
			if r.Duration.D <= 0 {
				v.at(r.Pos, "scenario %s: every ramp segment needs a duration", sc.Name)
			}
			switch {
			case !(r.Target >= 0) || math.IsInf(r.Target, 0):
				v.at(r.Pos, "scenario %s: ramp target %g: want a number, 0 or more", sc.Name, r.Target)
			case r.Target > MaxVUs && len(sc.RampVUs) > 0:
				v.at(r.Pos, "scenario %s: ramp target %g: more than %d VUs", sc.Name, r.Target, MaxVUs)
			case r.Target > MaxRate:
				v.at(r.Pos, "scenario %s: ramp target: %s", sc.Name, tooFast(r.Target))
			}
		}
	}
	switch sc.OnError {
	case "", "continue", "next_iteration", "stop_vu":
	default:
		v.at(sc.Pos, "scenario %s: on_error %q: want continue, next_iteration or stop_vu%s", sc.Name, sc.OnError, suggest(sc.OnError, []string{"continue", "next_iteration", "stop_vu"}))
	}
	for _, n := range sc.nums() {
		if n != nil && n.T != nil {
			v.refs(&Text{Pos: n.Pos, T: n.T}, nil)
		}
	}
	if len(sc.Flow) == 0 {
		v.at(sc.Pos, "scenario %s: flow is empty", sc.Name)
	}
	s := &scope{builtins: FlowBuiltins, local: map[string]bool{}}
	for k := range v.setupNames {
		s.local[k] = true
	}
	kinds := map[string]string{}
	seen := map[[3]string]*Step{}
	v.scen = sc
	defer func() { v.scen = nil }()
	for _, st := range sc.Flow {
		v.step(st, s, "scenario "+sc.Name, false)
		v.labels(st, kinds)
		v.distinct(sc.Name, st, "", seen)
		if v.p.HTTP.RequiresEventLoop() {
			eachStep([]*Step{st}, func(c *Step) {
				if c.Call != "" || c.IsMessage() {
					v.at(c.Pos, "step %s: http.event_loop: true runs HTTP requests only; call, publish and await steps run on goroutines (remove event_loop: true, and each scenario gets the engine that can run it)", c.Label())
				}
			})
		}
	}
}

// distinct refuses two steps (or transactions) of one flow that would be
// merged into one operation: statistics key a step by its scenario,
// transaction and name, so /a and /b both named "a" would be one line of
// the report, mixing their figures. Two unnamed steps with one name send
// the same request (METHOD URL), call the same function or use the same
// topic: they are one operation, as a request polled twice is.
func (v *validator) distinct(scenario string, st *Step, tx string, seen map[[3]string]*Step) {
	if st.IsPause() {
		return
	}
	if st.IsOperation() {
		kind, hint := "steps", " (unnamed steps with the same method and URL are one operation)"
		if st.IsTransaction() {
			kind, hint = "transactions", ""
		}
		key := [3]string{kind, tx, st.Label()}
		if prev, ok := seen[key]; !ok {
			seen[key] = st
		} else if prev != st && (!v.unnamed[prev] || !v.unnamed[st]) { // one step twice: a fragment used twice
			v.at(st.Pos, "scenario %s: two %s are named %q (here and at %s): their statistics would be merged into one operation; give each its own name%s",
				scenario, kind, st.Label(), v.place(prev.Pos), hint)
		}
		if st.IsTransaction() {
			tx = st.Transaction
		}
	}
	for _, cs := range st.Children() {
		for _, c := range cs {
			v.distinct(scenario, c, tx, seen)
		}
	}
}

// checkURL checks the start of a request's URL, its stage's values filled
// in, and reports whether the URL is relative: it starts with no scheme
// (SchemeLen), whatever "://" its query or fragment holds
// (/login?next=http://a.example/), and takes the target's origin,
// checked with the target. An absolute URL's scheme must be http or
// https, and its host must parse: "http://[::1/x" is a plan error, not a
// run of connect errors. Values known only at run time (data,
// extractions, env) stand as a digit, which fits a host or a port; a URL
// whose start is such a value is absolute or relative as the value says
// at each request, and one whose scheme holds one (${proto}://host) is
// checked as http.
func (v *validator) checkURL(st *Step) (relative bool) {
	vars := v.p.VarsFor(Stage{})
	expand := func(unknown string) (string, error) {
		return st.URL.T.Expand(tmpl.LookupFunc(func(n string) (string, bool) {
			if x, ok := vars[n]; ok {
				return x, true
			}
			return unknown, true
		}))
	}
	known, err := expand("\x00") // a VU's value is a NUL, one byte as the digit is
	if err != nil {
		return false // reported by refs
	}
	u, _ := expand("1")
	n := SchemeLen(known)
	if n == 0 {
		i := strings.IndexFunc(known, func(r rune) bool { return r != 0 && !schemeByte(r) })
		if i < 0 {
			i = len(known)
		}
		switch {
		case !strings.Contains(known[:i], "\x00"):
			return true
		case !strings.HasPrefix(known[i:], "://"):
			return false // the value says, at each request
		}
		known, u, n = "http"+known[i:], "http"+u[i:], len("http:")
	}
	src := secret.Text(st.URL.String())
	if scheme := strings.ToLower(known[:n-1]); scheme != "http" && scheme != "https" {
		hint := ""
		if !strings.HasPrefix(known[n:], "//") {
			hint = fmt.Sprintf(" (%q is read as its scheme; a path relative to the target starts with /)", known[:n])
		}
		v.at(st.URL.Pos, "step %s: url %q: want an http:// or https:// URL%s", st.Name, src, hint)
		return false
	}
	if strings.HasPrefix(u[n:], "//") { // the origin: the path's values are not the host's
		if i := strings.IndexAny(u[n+2:], "/?#"); i >= 0 {
			u = u[:n+2+i]
		}
	}
	if msg := checkBaseURL(u); msg != "" {
		v.at(st.URL.Pos, "step %s: url %q: %s", st.Name, src, msg)
	}
	return false
}

// SchemeLen is the length of the scheme a URL starts with, its colon
// included, or 0 when it starts with none: RFC 3986's scheme, a letter
// then letters, digits, "+", "-" or ".", then ":". A URL without one is
// relative, whatever "://" its query or fragment holds
// (/login?next=http://a.example/). The validator and the request
// builder tell relative URLs from absolute ones by it.
func SchemeLen[T string | []byte](u T) int {
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case 'a' <= c|0x20 && c|0x20 <= 'z':
		case i > 0 && c == ':':
			return i + 1
		case i == 0 || !schemeByte(rune(c)):
			return 0
		}
	}
	return 0
}

// schemeByte reports whether r may be in a URL's scheme after its first
// letter.
func schemeByte(r rune) bool {
	return 'a' <= r|0x20 && r|0x20 <= 'z' || '0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'
}

// wireURL refuses what the plan writes into a URL that would not be valid
// HTTP on the wire: a control character (a CR or LF would end the request
// line and start another), a % in the path that starts no escape. A space
// or a letter beyond ASCII is fine: it is sent percent-encoded. Values
// filled in at run time are checked as each request is built, and fail it
// as invalid_request.
func (v *validator) wireURL(who string, t *Text) (refused bool) {
	if t == nil {
		return false
	}
	src := t.String()
	if i := strings.IndexFunc(src, isCTL); i >= 0 {
		v.at(t.Pos, "%s %q: the control character %q at byte %d would split the request", who, secret.Text(src), src[i], i)
		return true
	}
	path, _, _ := strings.Cut(src, "?")
	path, _, _ = strings.Cut(path, "#")
	for i := strings.IndexByte(path, '%'); i >= 0; i = nextByte(path, '%', i) {
		if rest := path[i+1:]; !strings.HasPrefix(rest, "${") && !(len(rest) >= 2 && isHex(rest[0]) && isHex(rest[1])) {
			v.at(t.Pos, "%s %q: the %% at byte %d starts no escape such as %%20 (%%25 is a percent sign)", who, secret.Text(src), i)
			return true
		}
	}
	return false
}

// wireHeaders refuses headers that would not be valid HTTP: a name that is
// not a token (a space, a colon), a control character other than TAB in a
// value as the plan writes it.
func (v *validator) wireHeaders(who string, hs []Pair) {
	for _, h := range hs {
		if !httpguts.ValidHeaderFieldName(h.Name) {
			v.at(h.Pos, "%s: %q is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~, no space or colon)", who, h.Name)
		}
		if h.Value == nil {
			continue
		}
		if src := h.Value.String(); strings.ContainsFunc(src, func(r rune) bool { return r != '\t' && isCTL(r) }) {
			v.at(h.Pos, "%s: %s: the value %q has a control character, which would end the header and start another", who, h.Name, src)
		}
	}
}

func isCTL(r rune) bool { return r < ' ' || r == 0x7f }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// nextByte is the index of the next c in s after i, or -1.
func nextByte(s string, c byte, i int) int {
	if j := strings.IndexByte(s[i+1:], c); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// labels checks that a name is not used by both a step and a transaction.
func (v *validator) labels(st *Step, kinds map[string]string) {
	if st.IsPause() {
		return
	}
	kind := "step"
	if st.IsTransaction() {
		kind = "transaction"
	}
	if k, ok := kinds[st.Label()]; ok && k != kind {
		v.at(st.Pos, "%q names both a step and a transaction; statistics need distinct names", st.Label())
	}
	if st.IsOperation() {
		kinds[st.Label()] = kind
	}
	for _, cs := range st.Children() {
		for _, c := range cs {
			v.labels(c, kinds)
		}
	}
}

func (v *validator) step(st *Step, sc *scope, where string, inTx bool) {
	pending := len(v.pending)
	defer func() {
		for _, f := range v.pending[pending:] {
			f()
		}
		v.pending = v.pending[:pending]
	}()
	// A step without a name is named from what it does (METHOD URL, the
	// call, the topic): a name, one line as the names given are.
	defer func() {
		if v.unnamed[st] {
			if err := CheckName("step", st.Name); err != nil {
				v.at(st.Pos, "%v (the step is named from what it does: give it a name)", err)
			}
		}
		v.stepTimeouts(st)
	}()
	if !v.logic(st, sc, where, inTx) {
		return
	}
	kinds := 0
	for _, is := range []bool{st.IsTransaction(), st.IsRequest() && st.GRPC == nil && st.WS == nil, st.Publish != nil, st.Await != nil, st.Call != "", st.GRPC != nil, st.WS != nil} {
		if is {
			kinds++
		}
	}
	if kinds != 1 || !st.IsRequest() || st.GRPC != nil || st.WS != nil {
		v.notRequest(st)
	}
	switch {
	case kinds > 1:
		v.at(st.Pos, "%s: a step is one of url (a request), grpc, ws, publish, await, call, or transaction with steps", where)
		return
	case st.GRPC != nil:
		v.grpcStep(st, sc, where)
		return
	case st.WS != nil:
		v.wsStep(st, sc, where)
		return
	case st.Call != "":
		if st.Name == "" {
			st.Name = st.Call
			v.unnamed[st] = true
		}
		if len(st.Extract) > 0 || st.Check != nil {
			v.at(st.Pos, "step %s: a call step sets variables and fails from its Go function; extract and check are for requests", st.Name)
		}
		v.refs(st.Correlate, sc)
		return
	case st.IsMessage():
		v.message(st, sc, where)
		return
	case st.IsTransaction():
		if inTx {
			v.at(st.Pos, "transaction %s: transactions cannot be nested", st.Transaction)
		}
		if len(st.Steps) == 0 {
			v.at(st.Pos, "transaction %s: steps is empty", st.Transaction)
		}
		if st.Repeat != nil {
			v.at(st.Repeat.Pos, "transaction %s: repeat is only for single setup/teardown steps", st.Transaction)
		}
		for _, c := range st.Steps {
			v.step(c, sc, "transaction "+st.Transaction, true)
		}
		v.refs(st.Correlate, sc)
		return
	case st.IsBlock() || st.Choose != nil || st.Set != nil: // checked by logic
		return
	case st.IsPause():
		return
	case !st.IsRequest():
		v.at(st.Pos, "%s: a step needs url (a request), grpc (a gRPC call), ws (a WebSocket message), publish or await (a message), call (a Go function), transaction (a group of steps) or think (a pause)", where)
		return
	}
	if st.Method == "" {
		st.Method = "GET"
	}
	if !methodRe.MatchString(st.Method) {
		v.at(st.Pos, "step %s: method %q: want an HTTP method in capitals such as GET or POST", st.Name, st.Method)
	}
	if st.Name == "" {
		st.Name = st.Method + " " + secret.Text(st.URL.String()) // without its password
		v.unnamed[st] = true
	}
	if n := btoi(st.Body != nil) + btoi(st.JSON != nil) + btoi(st.Form != nil); n > 1 {
		v.at(st.Pos, "step %s: give one of body, json and form", st.Name)
	}
	if v.checkURL(st) && v.p.Target == nil {
		v.at(st.URL.Pos, "step %s: url %q is relative but the plan has no target", st.Name, secret.Text(st.URL.String()))
	}
	who := "step " + st.Name
	if v.unnamed[st] { // named from its URL: the URL says it
		who = "a step"
	}
	if v.wireURL(who+": url", st.URL) {
		delete(v.unnamed, st) // its name from the URL is no better: one error
	}
	v.wireHeaders("step "+st.Name+": headers", st.Headers)
	local := sc.local
	if st.Repeat != nil {
		if !v.inPhase {
			v.at(st.Repeat.Pos, "step %s: repeat is for setup and teardown; a scenario repeats with iterations", st.Name)
		}
		local = v.repeat(st, sc)
	}
	sub := &scope{builtins: sc.builtins, local: local}
	v.refs(st.URL, sub)
	for _, h := range st.Headers {
		v.refs(h.Value, sub)
	}
	for _, q := range st.Query {
		v.refs(q.Value, sub)
	}
	for _, f := range st.Form {
		v.refs(f.Value, sub)
	}
	if st.Body != nil {
		v.refs(st.Body, sub)
	}
	if st.JSON != nil {
		v.refs(st.JSON.Text, sub)
	}
	// The extractions run before the checks, which may read what they
	// extract.
	v.extracts(st, sc)
	for _, ex := range st.Extract {
		sub.local[ex.Name] = sc.local[ex.Name]
	}
	if st.Check != nil {
		for _, code := range st.Check.Status {
			if code < 100 || code > 599 {
				v.at(st.Check.Pos, "step %s: status %d is not an HTTP status code", st.Name, code)
			}
		}
		v.checks(st.Check, "step "+st.Name, sub, true)
	}
	v.stepSession(st, sub)
	v.refs(st.Correlate, sc)
}

func (v *validator) repeat(st *Step, sc *scope) map[string]bool {
	r := st.Repeat
	local := map[string]bool{"index": true}
	for k := range sc.local {
		local[k] = true
	}
	switch {
	case (r.Count == nil) == (r.ForEach == ""):
		v.at(r.Pos, "step %s: repeat needs count or for_each (one of them)", st.Name)
	case r.Count != nil:
		if r.Count.List {
			v.at(r.Count.Pos, "step %s: repeat count must be one number; sweep it with a variable", st.Name)
		}
		if r.Count.T != nil {
			v.refs(&Text{Pos: r.Count.Pos, T: r.Count.T}, nil)
		}
	default:
		var ds *Data
		for _, d := range v.p.Data {
			if d.Name == r.ForEach {
				ds = d
			}
		}
		if ds == nil {
			var names []string
			for _, d := range v.p.Data {
				names = append(names, d.Name)
			}
			v.at(r.Pos, "step %s: for_each %q is not a data source%s", st.Name, r.ForEach, suggest(r.ForEach, names))
			break
		}
		if !ds.IsList() {
			v.at(r.Pos, "step %s: for_each %q: a file source is one value, not a list", st.Name, r.ForEach)
		}
		local["item"] = true
		for _, c := range ds.Cols {
			local["item."+c] = true
		}
	}
	return local
}

// refs checks every placeholder of t against the names in scope; a nil scope
// allows only variables and environment variables.
func (v *validator) refs(t *Text, sc *scope) {
	if t == nil {
		return
	}
	for _, r := range t.T.Refs() {
		col := t.Pos.Col
		if !strings.Contains(t.T.Source(), "\n") {
			col += r.Offset
		}
		pos := Pos{Line: t.Pos.Line, Col: col, File: t.Pos.File}
		name := r.Name
		if v.swept[name] && v.inPhase {
			v.usesSwept = true
		}
		if strings.HasPrefix(name, "env.") {
			key := strings.TrimPrefix(name, "env.")
			if val, ok := v.lookupEnv(key); ok {
				v.p.Env[key] = val
			} else if !r.HasFallback {
				v.at(pos, "${%s}: environment variable %s is not set (give a default with ${%s:-value})", name, key, name)
			}
			continue
		}
		if r.HasFallback || v.defined(name, sc) {
			continue
		}
		v.at(pos, "undefined variable ${%s}%s", name, suggest(name, v.candidates(sc)))
	}
}

func (v *validator) defined(name string, sc *scope) bool {
	if v.global[name] {
		return v.isValueName(name, sc)
	}
	if sc == nil {
		return false
	}
	if sc.local[name] || listItem(name, sc.local) {
		return true
	}
	for _, b := range sc.builtins {
		if b == name {
			return true
		}
	}
	// Columns of CSV sources: users.login.
	if src, col, ok := strings.Cut(name, "."); ok {
		for _, d := range v.p.Data {
			if d.Name != src {
				continue
			}
			if slices.Contains(d.Cols, col) {
				return true
			}
			if v.unread[src] {
				// Its file's error is said: its columns are those the plan
				// names, or, if it names none, any the plan reads.
				return len(d.Columns) == 0 || slices.Contains(d.Columns, col)
			}
		}
	}
	return false
}

// isValueName reports whether a global name can stand alone in a template:
// variables always, data sources unless they have named columns. Data are
// not in the scope of target and plan headers (sc == nil).
func (v *validator) isValueName(name string, sc *scope) bool {
	for _, d := range v.p.Data {
		if d.Name == name {
			return sc != nil && len(d.Cols) == 0
		}
	}
	return true
}

func (v *validator) candidates(sc *scope) []string {
	var out []string
	for k := range v.global {
		out = append(out, k)
	}
	for _, d := range v.p.Data {
		for _, c := range d.Cols {
			out = append(out, d.Name+"."+c)
		}
	}
	if sc != nil {
		out = append(out, sc.builtins...)
		for k := range sc.local {
			if !strings.HasSuffix(k, listMark) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkNums resolves every scenario's load fields in every stage, so a bad
// value is reported before the run starts, not when its stage comes.
func (v *validator) checkNums() {
	if len(v.errs) > 0 {
		return
	}
	// Report a field once, at the first stage where it is wrong.
	reported := map[Pos]bool{}
	at := v.at
	v.at = func(pos Pos, format string, args ...any) {
		if !reported[pos] {
			reported[pos] = true
			at(pos, format, args...)
		}
	}
	defer func() { v.at = at }()
	for _, st := range v.p.Stages() {
		vars := v.p.VarsFor(st)
		for _, sc := range v.p.Scenarios {
			if r, err := sc.Rate.Rate(vars); err != nil {
				v.at(sc.Rate.Pos, "scenario %s: rate%s: %v", sc.Name, inStage(st, sc.Rate), err)
			} else if r > MaxRate {
				v.at(sc.Rate.Pos, "scenario %s: rate%s: %s", sc.Name, inStage(st, sc.Rate), tooFast(r))
			}
			if n, err := sc.MaxVUs.Int(vars, 0); err != nil {
				v.at(sc.MaxVUs.Pos, "scenario %s: max_vus%s: %v", sc.Name, inStage(st, sc.MaxVUs), err)
			} else if n > MaxVUs {
				v.at(sc.MaxVUs.Pos, "scenario %s: max_vus%s: %d is more than %d", sc.Name, inStage(st, sc.MaxVUs), n, MaxVUs)
			}
			if d, err := sc.Duration.Dur(vars); err == nil && sc.Duration != nil && d <= 0 {
				v.at(sc.Duration.Pos, "scenario %s: duration%s: want more than 0", sc.Name, inStage(st, sc.Duration))
			}
			// A ramp of VUs starts from vus, which may be none.
			leastVUs := int64(1)
			if len(sc.RampVUs) > 0 {
				leastVUs = 0
			}
			if n, err := sc.VUs.Int(vars, leastVUs); err != nil {
				v.at(sc.VUs.Pos, "scenario %s: vus%s: %v", sc.Name, inStage(st, sc.VUs), err)
			} else if n > MaxVUs {
				v.at(sc.VUs.Pos, "scenario %s: vus%s: %d is more than %d", sc.Name, inStage(st, sc.VUs), n, MaxVUs)
			}
			for _, f := range []struct {
				name string
				n    *Num
			}{{"iterations", sc.Iterations}, {"total_iterations", sc.TotalIterations}} {
				if _, err := f.n.Int(vars, 1); err != nil {
					v.at(f.n.Pos, "scenario %s: %s%s: %v", sc.Name, f.name, inStage(st, f.n), err)
				}
			}
			for _, f := range []struct {
				name string
				n    *Num
			}{{"duration", sc.Duration}, {"ramp_up", sc.RampUp}} {
				if _, err := f.n.Dur(vars); err != nil {
					v.at(f.n.Pos, "scenario %s: %s%s: %v", sc.Name, f.name, inStage(st, f.n), err)
				}
			}
		}
		eachStep(append(slices.Clip(v.p.Setup), v.p.Teardown...), func(s *Step) {
			if s.Repeat != nil && s.Repeat.Count != nil {
				if _, err := s.Repeat.Count.Int(vars, 0); err != nil {
					v.at(s.Repeat.Count.Pos, "step %s: repeat count%s: %v", s.Name, inStage(st, s.Repeat.Count), err)
				}
			}
		})
	}
}

func inStage(st Stage, n *Num) string {
	if len(st.Values) == 0 || n == nil || n.T == nil && n.Dim == "" {
		return ""
	}
	return " (stage " + st.Name() + ")"
}

// thresholds checks that named operations exist.
func (v *validator) thresholds() {
	names := map[string]bool{"total": true}
	var list []string
	for _, sc := range v.p.Scenarios {
		names[sc.Name] = true
		list = append(list, sc.Name)
		// Every step of the flow, in branches and elses too.
		eachStep(sc.Flow, func(st *Step) {
			if st.IsOperation() && !names[st.Label()] {
				names[st.Label()] = true
				list = append(list, st.Label())
			}
		})
	}
	for _, t := range v.p.Thresholds {
		if t.Operation != "" && !names[t.Operation] {
			v.at(t.Pos, "threshold %q: no step, transaction or scenario is named %q%s", t.Source, t.Operation, suggest(t.Operation, list))
			continue
		}
		if t.Metric == "dropped" {
			v.droppedThreshold(t)
		}
	}
}

// droppedThreshold checks that a threshold of dropped iterations is of an
// open model, the only kind that drops them: a closed model's VUs loop,
// no iteration of it is due at a time, and such a threshold would pass
// whatever the run did.
func (v *validator) droppedThreshold(t *Threshold) {
	var open []string
	var named *Scenario
	for _, sc := range v.p.Scenarios {
		if sc.IsOpen() {
			open = append(open, sc.Name)
		}
		if sc.Name == t.Operation {
			named = sc
		}
	}
	switch {
	case t.Operation == "" || t.Operation == "total":
		if len(open) == 0 {
			v.at(t.Pos, "threshold %q: no scenario is an open model (rate:, ramp_rate:): their VUs loop, no iteration is due at a time and none is dropped", t.Source)
		}
	case named == nil:
		v.at(t.Pos, "threshold %q: dropped counts a scenario's iterations, and %s is a step or transaction: name an open-model scenario (%s), total, or none", t.Source, t.Operation, strings.Join(open, ", "))
	case !named.IsOpen():
		v.at(t.Pos, "threshold %q: scenario %s is a closed model (vus:): its VUs loop, no iteration is due at a time and none is dropped; dropped is of open models (rate:, ramp_rate:)", t.Source, named.Name)
	}
}

// buses checks the plan's message buses.
func (v *validator) buses() {
	seen := map[string]bool{}
	for _, b := range v.p.Buses {
		switch {
		case b.Name == "":
			v.at(b.Pos, "bus: give it a name")
		case seen[b.Name]:
			v.at(b.Pos, "bus %s is defined twice", b.Name)
		}
		seen[b.Name] = true
		if b.URL == nil {
			v.at(b.Pos, "bus %s: url is required, such as kafka://127.0.0.1:9092, nats://127.0.0.1:4222 or mem://test", b.Name)
			continue
		}
		v.refs(b.URL, nil)
	}
}

// busNamed checks that a step or simulator names a defined bus.
func (v *validator) busNamed(pos Pos, who, name string) {
	var names []string
	for _, b := range v.p.Buses {
		if b.Name == name {
			return
		}
		names = append(names, b.Name)
	}
	if name == "" {
		v.at(pos, "%s: bus is required (one of the plan's buses: %s)", who, strings.Join(names, ", "))
		return
	}
	v.at(pos, "%s: no bus is named %q%s", who, name, suggest(name, names))
}

// simulators checks the plan's simulators.
func (v *validator) simulators() {
	seen := map[string]bool{}
	for _, s := range v.p.Simulators {
		who := "simulator " + s.Name
		switch {
		case s.Name == "":
			v.at(s.Pos, "simulator: give it a name")
		case seen[s.Name]:
			v.at(s.Pos, "simulator %s is defined twice", s.Name)
		}
		seen[s.Name] = true
		switch {
		case (s.HTTP == nil) == (s.Responder == nil):
			v.at(s.Pos, "%s: give http (stubs) or responder (messages), one of them", who)
		case s.HTTP != nil:
			if s.Bus != "" {
				v.at(s.Pos, "%s: an http simulator has no bus", who)
			}
			if s.HTTP.Listen == "" {
				v.at(s.HTTP.Pos, "%s: listen is required, such as 127.0.0.1:8081", who)
			}
			if s.HTTP.Stubs == "" {
				v.at(s.HTTP.Pos, "%s: stubs is required: a stubs file, relative to the plan", who)
			} else if err := v.stubs(s.HTTP); err != nil {
				v.at(s.HTTP.Pos, "%s: %v", who, err)
			}
		default:
			v.busNamed(s.Pos, who, s.Bus)
			if err := s.Responder.Validate(); err != nil {
				v.at(s.Pos, "%s: %v", who, err)
			}
		}
	}
}

// message checks a publish or await step.
func (v *validator) message(st *Step, sc *scope, where string) {
	if v.inPhase {
		v.at(st.Pos, "%s: publish and await steps belong in scenarios", where)
		return
	}
	if st.Repeat != nil {
		v.at(st.Repeat.Pos, "%s: repeat is for requests in setup and teardown", where)
	}
	if st.Check != nil {
		v.at(st.Check.Pos, "%s: check is for requests; an await step matches its message with match and equals", where)
	}
	if p := st.Publish; p != nil {
		if st.Name == "" {
			st.Name = "publish " + p.Topic.String()
			v.unnamed[st] = true
		}
		who := "step " + st.Name
		v.busNamed(p.Pos, who, p.Bus)
		if p.Topic == nil {
			v.at(p.Pos, "%s: topic is required", who)
		}
		if p.Body != nil && p.JSON != nil {
			v.at(p.Pos, "%s: give body or json, not both", who)
		}
		for _, t := range []*Text{p.Topic, p.Key, p.Body} {
			v.refs(t, sc)
		}
		for _, h := range p.Headers {
			v.refs(h.Value, sc)
		}
		if p.JSON != nil {
			v.refs(p.JSON.Text, sc)
		}
		if len(st.Extract) > 0 {
			v.at(st.Pos, "%s: a publish step has nothing to extract from", who)
		}
		v.refs(st.Correlate, sc)
		return
	}
	a := st.Await
	if st.Name == "" {
		st.Name = "await " + a.Topic
		v.unnamed[st] = true
	}
	who := "step " + st.Name
	v.busNamed(a.Pos, who, a.Bus)
	if a.Topic == "" {
		v.at(a.Pos, "%s: topic is required", who)
	}
	if _, err := bus.ParseField(a.Match); err != nil {
		v.at(a.Pos, "%s: match: %v", who, err)
	}
	if a.Equals == nil {
		v.at(a.Pos, "%s: equals is required: the value of match that marks this VU's message, such as ${id}", who)
	}
	v.refs(a.Equals, sc)
	v.extracts(st, sc)
	v.refs(st.Correlate, sc)
}

// logs checks the log sources and that some step is marked correlate.
func (v *validator) logs() {
	for _, l := range v.p.Logs {
		if len(l.Files) == 0 {
			v.at(l.Pos, "logs: files is required: the service's log files or globs")
		}
		if err := l.Pattern.Validate(); err != nil {
			v.at(l.Pos, "logs: pattern: %v", err)
		}
	}
	if len(v.p.Logs) > 0 && !v.p.Correlated() {
		v.at(v.p.Logs[0].Pos, "logs: no step is marked correlate: add correlate: ${id} to the steps whose requests the logs record")
	}
}

// stubs resolves an HTTP simulator's stubs file (plan variables and the
// plan's directory) and checks that it loads.
func (v *validator) stubs(h *HTTPSimulator) error {
	t, err := tmpl.Parse(h.Stubs)
	if err != nil {
		return fmt.Errorf("stubs: %w", err)
	}
	vars := v.p.VarsFor(Stage{})
	name, err := t.Expand(tmpl.LookupFunc(func(n string) (string, bool) { s, ok := vars[n]; return s, ok }))
	if err != nil {
		return fmt.Errorf("stubs: %w", err)
	}
	h.Stubs = v.path(name)
	_, err = sim.Load(h.Stubs)
	return err
}

// monitors checks the monitors and names them (default: the kind).
func (v *validator) monitors() {
	seen := map[string]bool{}
	for _, m := range v.p.Monitors {
		if m.Name == "" {
			m.Name = m.Kind
		}
		if err := m.Validate(); err != nil {
			v.at(m.Pos, "%v", err)
		}
		if seen[m.Name] {
			v.at(m.Pos, "monitor %s: the name is used twice; give each a name", m.Name)
		}
		seen[m.Name] = true
	}
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
