package plan

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/tmpl"
)

// Pos is the position of a value in the plan file (1-based).
type Pos struct {
	Line, Col int
	// File is the file of an included fragment; "" for the plan's own.
	File string
}

// Plan is a decoded and validated plan.
type Plan struct {
	// File is the path the plan was read from; Source is its text.
	File   string `yaml:"-"`
	Source []byte `yaml:"-"`
	// dir is where the data files named relative to the plan are, as
	// loaded (File may be renamed for messages: perflab demo).
	dir string

	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Target      *Text       `yaml:"target"`
	Headers     []Pair      `yaml:"headers"`
	Vars        []*Var      `yaml:"vars"`
	Data        []*Data     `yaml:"data"`
	HTTP        HTTPOptions `yaml:"http"`
	// GRPC is what the plan's gRPC steps share: their schema, target and
	// connections.
	GRPC *GRPCOptions `yaml:"grpc"`
	// Buses are the message buses that steps and simulators use.
	Buses []*Bus `yaml:"buses"`
	// Simulators stand in for the dependencies of the system under test.
	Simulators []*Simulator `yaml:"simulators"`
	// Monitors watch the system under test during the run: processes,
	// JVMs, cgroups, Prometheus endpoints, PostgreSQL (package monitor).
	// The load generator's host is always watched.
	Monitors []*Monitor `yaml:"monitors"`
	// Logs are the service's log files, matched at the end of the run with
	// the requests of the steps marked correlate: time inside the service
	// per operation, from its own logs.
	Logs []*LogSource `yaml:"logs"`
	// Interval is the length of the time slices statistics are kept for.
	// Unset, Load sizes it to the stages (SizeInterval); IntervalSized
	// then says so, and IntervalFor is the length it was sized to.
	Interval      Duration      `yaml:"interval"`
	IntervalSized bool          `yaml:"-"`
	IntervalFor   time.Duration `yaml:"-"`
	Setup         []*Step       `yaml:"setup"`
	Teardown      []*Step       `yaml:"teardown"`
	Scenarios     []*Scenario   `yaml:"scenarios"`
	// Consecutive runs a stage's scenarios one after another, in the
	// plan's order, each from the end of the one before (as JMeter's
	// "run thread groups consecutively"), where by default they run at
	// the same time.
	Consecutive bool `yaml:"consecutive"`
	// Fragments are named lists of steps that flows run with use: NAME;
	// Include names files whose fragments the plan adds to its own.
	Fragments []*Fragment `yaml:"fragments"`
	Include   []string    `yaml:"include"`
	// Included are the files the plan includes, and those they include,
	// each once, as Load read them: with Source, the plan whole, which a
	// run records and a cluster is given.
	Included []metrics.PlanFile `yaml:"-"`
	// Thresholds are checked at the end of the run; a failed one gives exit
	// code 4.
	Thresholds []*Threshold `yaml:"thresholds"`

	// Dimensions are the swept values, in order; filled by Load.
	Dimensions []Dimension `yaml:"-"`
	// SetupPerStage is true when setup or teardown use a swept value, so they
	// run around every stage instead of once around the run.
	SetupPerStage bool `yaml:"-"`
	// Env holds the environment variables the plan refers to, read at load.
	Env map[string]string `yaml:"-"`
	// Warnings are what Load found that may be meant but deserves a look
	// (a while loop without max), each at its place: they do not stop the
	// plan; perflab validate and perflab run say them (Error.Warn).
	Warnings ErrorList `yaml:"-"`
}

// Place is a position as messages say it: file:line:column, of the plan's
// file unless the position is in a file it includes.
func (p *Plan) Place(pos Pos) string {
	file := p.File
	if pos.File != "" {
		file = pos.File
	}
	return fmt.Sprintf("%s:%d:%d", file, pos.Line, pos.Col)
}

// HTTPOptions tunes the HTTP client shared by every step.
type HTTPOptions struct {
	// Timeout bounds one request, from send to the last byte of the body (default 30s).
	Timeout Duration `yaml:"timeout"`
	// BodyLimit is how much of a response body is kept for checks and
	// extractions (default DefaultBodyLimit); the bytes beyond it are read
	// and counted, not kept.
	BodyLimit Size `yaml:"body_limit"`
	// ParseLimit is the largest body parsed into a tree (default
	// DefaultParseLimit): HTML for css, XML or HTML for xpath, JSON for
	// the JSON paths that are not names and indexes only.
	ParseLimit Size `yaml:"parse_limit"`
	// KeepAlive reuses connections (default true).
	KeepAlive *bool `yaml:"keep_alive"`
	// Connections is "shared" (default: one pool for all VUs) or "per-vu"
	// (every VU keeps a connection of its own, as a browser user would).
	Connections string `yaml:"connections"`
	// MaxConnsPerHost caps connections to one host (default: enough for every VU).
	MaxConnsPerHost int `yaml:"max_conns_per_host"`
	// InsecureSkipVerify accepts any TLS certificate. Only for test systems.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
	// Version is "1.1" (default) or "2": HTTP/2 over TLS for https URLs and
	// h2c (prior knowledge) for http URLs.
	Version string `yaml:"version"`
	// ConnectTimeout bounds opening a connection (default: timeout).
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// CAFile is a PEM file of the certificate authorities that sign the
	// servers' certificates (default: the system's).
	CAFile    string `yaml:"ca_file"`
	CAFilePos Pos    `yaml:"-"`
	// CAs is CAFile's content, read by Load.
	CAs []byte `yaml:"-"`
	// ServerTime reads the time the service reports it spent on each
	// response, to split end-to-end time into server time and overhead.
	ServerTime *ServerTime `yaml:"server_time"`
	// EventLoop chooses the engine of the scenarios' VUs. Unset, each
	// scenario runs on event loops (one per CPU, raw epoll, as wrk: VUs as
	// state machines; http or https) where they can run it, else on a goroutine per VU;
	// true requires the event loops (the plan is refused where they
	// cannot), false runs every scenario on goroutines. Setup and teardown
	// are not affected.
	EventLoop *bool `yaml:"event_loop"`
	// Redirects is how many redirects (301, 302, 303, 307, 308) a request
	// follows (default DefaultRedirects; 0 follows none); a step's own
	// redirects overrides it.
	Redirects    *int `yaml:"redirects"`
	RedirectsPos Pos  `yaml:"-"`
	// Cookies is what each VU's cookie jar keeps: keep (default: across
	// its requests and iterations), per_iteration (emptied as each
	// iteration starts) or off (none kept).
	Cookies    string `yaml:"cookies"`
	CookiesPos Pos    `yaml:"-"`
	// Auth authenticates every request (basic or digest); a step's own
	// auth overrides it.
	Auth *Auth `yaml:"auth"`
}

// DefaultRedirects is how many redirects a request follows unless the plan
// says otherwise (k6's default).
const DefaultRedirects = 10

// Cookie jar modes (HTTPOptions.Cookies).
const (
	CookiesKeep         = "keep"
	CookiesPerIteration = "per_iteration"
	CookiesOff          = "off"
)

// RedirectsFor is how many redirects step st follows: its own redirects,
// else the plan's, else DefaultRedirects.
func (o HTTPOptions) RedirectsFor(st *Step) int {
	switch {
	case st != nil && st.Redirects != nil:
		return *st.Redirects
	case o.Redirects != nil:
		return *o.Redirects
	}
	return DefaultRedirects
}

// AuthFor is the authentication of step st's requests: its own auth, else
// the plan's; nil for none.
func (o HTTPOptions) AuthFor(st *Step) *Auth {
	a := o.Auth
	if st != nil && st.Auth != nil {
		a = st.Auth
	}
	if a == nil || a.Type == AuthNone {
		return nil
	}
	return a
}

// Auth is HTTP authentication: basic (the credentials sent with every
// request), digest (the server's challenge answered, then reused), or none
// (a step's way out of the plan's).
type Auth struct {
	Pos      Pos    `yaml:"-"`
	Type     string `yaml:"type"`
	User     *Text  `yaml:"user"`
	Password *Text  `yaml:"password"`
}

// Authentication types (Auth.Type).
const (
	AuthBasic  = "basic"
	AuthDigest = "digest"
	AuthNone   = "none"
)

// ServerTime names the response header that carries the server's own time:
// Server-Timing (with the metric to take), or a header holding a duration.
// RequiresEventLoop reports whether the plan says http.event_loop: true.
func (o HTTPOptions) RequiresEventLoop() bool { return o.EventLoop != nil && *o.EventLoop }

type ServerTime struct {
	Pos    Pos    `yaml:"-"`
	Header string `yaml:"header"`
	// Metric is the Server-Timing metric (default: the first with a dur).
	Metric string `yaml:"metric"`
}

// Var is a plan variable. A variable with several values is swept: the run
// has one stage per value.
type Var struct {
	Pos    Pos
	Name   string
	Values []string
	// List is true when the plan (or --set) gave a list, even of one value.
	List bool
	// Secret: its value was given by --secret.
	Secret bool
}

// Swept reports whether the variable makes stages.
func (v *Var) Swept() bool { return v.List }

// Kept are the variable's values as a run keeps them (summary.json, the
// history): secret.Redacted for a secret's (--secret), or a variable whose
// name says it holds one (secret.Name: token, api_key, password ...).
// A swept variable's values name its stages all the same.
func (v *Var) Kept() []string {
	if !v.Secret && !secret.Name(v.Name) {
		return v.Values
	}
	kept := make([]string, len(v.Values))
	for i := range kept {
		kept[i] = secret.Redacted
	}
	return kept
}

// KeptSource is the plan's text as a run keeps it (its run directory,
// summary.json, the history): its Source, the password of every URL in it
// redacted (http://user:[redacted]@host/). A run is sent with the plan as
// written.
func (p *Plan) KeptSource() []byte {
	return []byte(secret.Text(string(p.Source)))
}

// KeptIncluded are the files the plan includes as a run keeps them: the
// passwords of their URLs redacted, as KeptSource's.
func (p *Plan) KeptIncluded() []metrics.PlanFile {
	out := make([]metrics.PlanFile, len(p.Included))
	for i, f := range p.Included {
		out[i] = metrics.PlanFile{Path: f.Path, Source: secret.Text(f.Source)}
	}
	return out
}

// Data is a named source of values for templates.
type Data struct {
	Pos  Pos    `yaml:"-"`
	Name string `yaml:"-"`
	// Exactly one of the following.
	File   string    `yaml:"file"`   // whole file as one value (text or JSON)
	CSV    string    `yaml:"csv"`    // rows handed out to VUs
	Glob   string    `yaml:"glob"`   // curl-style glob expanded to values
	Range  *RangeGen `yaml:"range"`  // integer range
	Values []string  `yaml:"values"` // inline list

	// Mode says how rows are handed out: per-vu, sequential (default), random.
	Mode string `yaml:"mode"`
	// Header is true (default) when the CSV file's first row names its columns.
	Header *bool `yaml:"header"`
	// Columns names the CSV columns: its first fields, a row's further
	// fields ignored (as JMeter's CSV Data Set ignores them). With
	// header: true as well, the file's header row is skipped (its names
	// replaced); else the file has none.
	Columns []string `yaml:"columns"`
	// Delimiter separates a CSV file's fields: one character (default
	// ","), or "\t" or tab for a tab.
	Delimiter string `yaml:"delimiter"`

	// Filled by Load, but for the files' content and rows: validation
	// reads them as streams, and Plan.ReadData into memory for a run.
	Content string     `yaml:"-"` // File
	Cols    []string   `yaml:"-"` // CSV columns; nil for single-valued sources
	Rows    [][]string `yaml:"-"` // CSV rows, or one value a row
	read    bool       // ReadData read the file
}

// RangeGen generates integers from From to To inclusive.
type RangeGen struct {
	From   int64  `yaml:"from"`
	To     int64  `yaml:"to"`
	Step   int64  `yaml:"step"`
	Format string `yaml:"format"`
}

// IsList reports whether the source hands out rows (as opposed to a whole file).
func (d *Data) IsList() bool { return d.File == "" }

// Scenario is a group of virtual users running one flow, like a JMeter
// thread group. All scenarios of a stage run at the same time.
type Scenario struct {
	Pos  Pos    `yaml:"-"`
	Name string `yaml:"name"`
	// VUs is the number of virtual users (concurrent workers).
	VUs *Num `yaml:"vus"`
	// Iterations is the number of flow iterations of each VU.
	Iterations *Num `yaml:"iterations"`
	// TotalIterations is a fixed number of iterations shared by all VUs.
	TotalIterations *Num `yaml:"total_iterations"`
	// Duration bounds the scenario in time.
	Duration *Num `yaml:"duration"`
	// RampUp spreads the VUs' starts evenly over this time.
	RampUp *Num `yaml:"ramp_up"`
	// RampVUs changes the number of VUs linearly, segment by segment
	// (ramping VUs, a closed model), starting from VUs (default 0).
	RampVUs []*RampStep `yaml:"ramp_vus"`
	// Rate starts this many iterations per second whatever the system's
	// response times (constant arrival rate, an open model).
	Rate *Num `yaml:"rate"`
	// RampRate changes the arrival rate linearly, segment by segment,
	// starting from StartRate (ramping arrival rate, an open model).
	RampRate  []*RampStep `yaml:"ramp_rate"`
	StartRate float64     `yaml:"start_rate"`
	// MaxVUs is the most VUs an open model may use; VUs is how many are
	// started beforehand (default: MaxVUs = VUs).
	MaxVUs *Num `yaml:"max_vus"`
	// WhenBusy says what an open model does with an iteration that finds
	// every one of MaxVUs VUs busy: drop it and count it (default), or queue
	// it until a VU is free, its latency still counted from its due time.
	WhenBusy string `yaml:"when_busy"`
	// Think is a pause after every step unless the step sets its own.
	Think *Think `yaml:"think"`
	// OnError: continue (default), next_iteration, stop_vu.
	OnError string  `yaml:"on_error"`
	Flow    []*Step `yaml:"flow"`
}

// RampStep is one segment of a ramp: reach Target by the end of Duration.
type RampStep struct {
	Pos      Pos      `yaml:"-"`
	Target   float64  `yaml:"target"`
	Duration Duration `yaml:"duration"`
}

// IsOpen reports whether the scenario uses an open (arrival-rate) model.
func (sc *Scenario) IsOpen() bool { return sc.Rate != nil || len(sc.RampRate) > 0 }

// Step is one element of a flow: an HTTP request, a transaction (a named
// group of steps), or a pause.
type Step struct {
	Pos  Pos    `yaml:"-"`
	Name string `yaml:"name"`

	// Request.
	Method  string   `yaml:"method"`
	URL     *Text    `yaml:"url"`
	Headers []Pair   `yaml:"headers"`
	Query   []Pair   `yaml:"query"`
	Body    *Text    `yaml:"body"`
	JSON    *JSONDoc `yaml:"json"`
	// Form is an application/x-www-form-urlencoded body, its fields in
	// order: each name and value (placeholders filled in) encoded as
	// browsers and JMeter encode them (tmpl.AppendFormEscape).
	Form    []Pair   `yaml:"form"`
	Timeout Duration `yaml:"timeout"`
	// BodyLimit overrides http.body_limit for this step's responses.
	BodyLimit Size       `yaml:"body_limit"`
	Extract   []*Extract `yaml:"extract"`
	Check     *Check     `yaml:"check"`
	Think     *Think     `yaml:"think"`
	// Redirects overrides http.redirects for this step's requests.
	Redirects    *int `yaml:"redirects"`
	RedirectsPos Pos  `yaml:"-"`
	// Auth overrides http.auth for this step's requests (none: no
	// authentication).
	Auth *Auth `yaml:"auth"`

	// Correlate, if set, records each of the step's requests (operation,
	// this id, start, end, outcome) in the run directory's requests.csv, to
	// be matched with the service's logs (Plan.Logs). The id is expanded
	// after the step's extractions: ${requestId}, or an id the step sent.
	// On a transaction it records the transaction, from its first send to
	// its last step's end (an event injected, then its completion awaited).
	Correlate *Text `yaml:"correlate"`

	// Message bus: publish one message, or await one (its Extract takes
	// values from the awaited message).
	Publish *Publish `yaml:"publish"`
	Await   *Await   `yaml:"await"`

	// GRPC calls a method of a gRPC service (package protocol/grpc).
	GRPC *GRPCCall `yaml:"grpc"`
	// WS sends or awaits a message on a WebSocket (package protocol/ws).
	WS *WSStep `yaml:"ws"`

	// Call names a Go function that the program running the plan binds
	// (embedded mode, package perflab): a step with no request of its own.
	// Any step can also be bound by its name, in place of its request.
	Call string `yaml:"call"`

	// Transaction: a named group of steps with statistics of its own.
	Transaction string  `yaml:"transaction"`
	Steps       []*Step `yaml:"steps"`

	// Repeat runs a setup or teardown step several times.
	Repeat *Repeat `yaml:"repeat"`

	// The flow's logic (logic.go): whether the step runs (Once, If,
	// with Else), how often (Loop), or which of several branches
	// (Choose); Use runs a fragment's steps here. Steps without a
	// transaction are a block: a group without statistics of its own.
	If     *Expr     `yaml:"if"`
	Else   []*Step   `yaml:"else"`
	Loop   *Loop     `yaml:"loop"`
	Once   bool      `yaml:"once"`
	Choose []*Branch `yaml:"choose"`
	Use    string    `yaml:"use"`
	// Set gives variables the values of expressions, in order: a step
	// that sends nothing.
	Set []*Assign `yaml:"set"`
}

// IsTransaction reports whether the step groups other steps.
func (s *Step) IsTransaction() bool { return s.Transaction != "" }

// IsRequest reports whether the step sends a request.
func (s *Step) IsRequest() bool { return s.URL != nil }

// IsMessage reports whether the step publishes or awaits a message.
func (s *Step) IsMessage() bool { return s.Publish != nil || s.Await != nil }

// IsPause reports whether the step only waits.
func (s *Step) IsPause() bool {
	return !s.IsRequest() && !s.IsTransaction() && !s.IsMessage() && s.Call == "" && s.GRPC == nil && s.WS == nil && s.Think != nil &&
		!s.IsBlock() && s.Choose == nil && s.Set == nil
}

// IsOperation reports whether the step has statistics of its own: a
// request (a call, a message ...) or a transaction; not a pause, a block,
// a choice or a set.
func (s *Step) IsOperation() bool {
	return !s.IsPause() && !s.IsBlock() && s.Choose == nil && s.Set == nil
}

// IsBlock reports whether the step is a group of steps without statistics
// of its own: steps without a transaction, or a fragment's (use).
func (s *Step) IsBlock() bool { return !s.IsTransaction() && (len(s.Steps) > 0 || s.Use != "") }

// Label is the name statistics are kept under.
func (s *Step) Label() string {
	if s.IsTransaction() {
		return s.Transaction
	}
	return s.Name
}

// Pair is a name and a templated value, kept in plan order.
type Pair struct {
	Pos   Pos
	Name  string
	Value *Text
}

// Extract takes a value from a response into a variable.
type Extract struct {
	Pos  Pos    `yaml:"-"`
	Name string `yaml:"-"`
	// Exactly one of the following.
	JSON    string   `yaml:"json"`    // JSON path: $.a.b[0].c, $.items[?@.state=='OPEN'].id
	Header  string   `yaml:"header"`  // response header name
	Regex   string   `yaml:"regex"`   // a capture group (Group) of each match
	Between []string `yaml:"between"` // [left, right]: the text between two boundaries
	CSS     string   `yaml:"css"`     // CSS selector over an HTML body
	XPath   string   `yaml:"xpath"`   // XPath over an XML (or HTML) body
	// The places of the values above, for errors.
	JSONPos, RegexPos, BetweenPos, CSSPos, XPathPos Pos `yaml:"-"`
	// From is what regex and between read: body (default), headers, url
	// or status.
	From    string `yaml:"from"`
	FromPos Pos    `yaml:"-"`
	// Group is the regex's capture group (default 1, or 0 when it has none).
	Group    *int `yaml:"group"`
	GroupPos Pos  `yaml:"-"`
	// Attribute is the attribute of the elements css selects (default:
	// their text).
	Attribute string `yaml:"attribute"`
	// Match picks among several values: first (default), last, random, N
	// (1-based), all.
	Match    string `yaml:"match"`
	MatchPos Pos    `yaml:"-"`
	// Default is used when nothing matches; without it a miss is an error.
	Default *string `yaml:"default"`
}

// Check decides whether a response is a success.
type Check struct {
	Pos Pos `yaml:"-"`
	// Status lists the accepted status codes (default: 200-399).
	Status       []int        `yaml:"status"`
	BodyContains []string     `yaml:"body_contains"`
	JSON         []*JSONCheck `yaml:"json"`
	// That are assertions on the response, checked in order after the
	// step's extractions.
	That []*Assertion `yaml:"that"`
}

// JSONCheck compares the value at a JSON path with an expected text, which
// may hold placeholders.
type JSONCheck struct {
	Pos    Pos
	Path   string
	Equals *Text
}

// Assertion is one item of a check's that: a subject of the response and
// operators that its value must pass (all of them), or, with Not, not.
//
// The subject is one of JSON (the values a JSON path selects), Header,
// Body, Status, Duration (the response time) and Size (the body's bytes):
// a new subject (an expression) is one more field here, in Subject, and
// in protocol/http's subjects.
type Assertion struct {
	Pos Pos `yaml:"-"`
	// Subjects: exactly one.
	JSON     string `yaml:"json"`
	JSONPos  Pos    `yaml:"-"`
	Header   string `yaml:"header"`
	Body     bool   `yaml:"body"`
	Status   bool   `yaml:"status"`
	Duration bool   `yaml:"duration"`
	Size     bool   `yaml:"size"`
	// Expr is an expression (plan/expr) over the response and the VU's
	// variables: without operators, a condition that must hold.
	Expr *Expr `yaml:"expr"`

	// Operators: at least one (none with expr).
	Exists        *bool   `yaml:"exists"`
	Absent        *bool   `yaml:"absent"`
	Equals        *Text   `yaml:"equals"`
	NotEquals     *Text   `yaml:"not_equals"`
	Contains      *Text   `yaml:"contains"`
	NotContains   *Text   `yaml:"not_contains"`
	Matches       *Text   `yaml:"matches"`
	NotMatches    *Text   `yaml:"not_matches"`
	ContainsMatch *Text   `yaml:"contains_match"`
	Lt            *Text   `yaml:"lt"`
	Le            *Text   `yaml:"le"`
	Gt            *Text   `yaml:"gt"`
	Ge            *Text   `yaml:"ge"`
	Between       []*Text `yaml:"between"`
	BetweenPos    Pos     `yaml:"-"`
	OneOf         []*Text `yaml:"one_of"`
	OneOfPos      Pos     `yaml:"-"`

	// Not negates the whole assertion.
	Not bool `yaml:"not"`
	// Message is said first in the failure's detail.
	Message string `yaml:"message"`
}

// Subject names what the assertion reads: "json $.id", "header
// Content-Type", "body", "status", "duration", "size"; "" when it names
// none, and each of them, by commas, when it names several.
func (a *Assertion) Subject() string {
	var names []string
	if a.JSON != "" {
		names = append(names, "json "+a.JSON)
	}
	if a.Header != "" {
		names = append(names, "header "+a.Header)
	}
	for _, s := range []struct {
		set  bool
		name string
	}{{a.Body, "body"}, {a.Status, "status"}, {a.Duration, "duration"}, {a.Size, "size"}} {
		if s.set {
			names = append(names, s.name)
		}
	}
	if a.Expr != nil {
		names = append(names, "expr "+a.Expr.Src)
	}
	return strings.Join(names, ", ")
}

// Operator is one operator of an assertion, as the plan wrote it.
type Operator struct {
	// Name is the plan's key: equals, lt, between ...
	Name string
	// Values are its operands: one, two for between, any for one_of, none
	// for exists and absent.
	Values []*Text
	// Flag is the value of exists and absent.
	Flag bool
}

// Operators lists the assertion's operators in a fixed order (lower
// bounds before upper ones).
func (a *Assertion) Operators() []Operator {
	var ops []Operator
	for _, f := range []struct {
		name string
		flag *bool
	}{{"exists", a.Exists}, {"absent", a.Absent}} {
		if f.flag != nil {
			ops = append(ops, Operator{Name: f.name, Flag: *f.flag})
		}
	}
	for _, o := range []struct {
		name string
		v    *Text
	}{
		{"equals", a.Equals}, {"not_equals", a.NotEquals}, {"contains", a.Contains}, {"not_contains", a.NotContains},
		{"matches", a.Matches}, {"not_matches", a.NotMatches}, {"contains_match", a.ContainsMatch},
		{"gt", a.Gt}, {"ge", a.Ge}, {"lt", a.Lt}, {"le", a.Le},
	} {
		if o.v != nil {
			ops = append(ops, Operator{Name: o.name, Values: []*Text{o.v}})
		}
	}
	if a.Between != nil {
		ops = append(ops, Operator{Name: "between", Values: a.Between})
	}
	if a.OneOf != nil {
		ops = append(ops, Operator{Name: "one_of", Values: a.OneOf})
	}
	return ops
}

// Think is a pause: fixed, or uniformly random between Min and Max.
type Think struct {
	Pos      Pos
	Min, Max time.Duration
}

// Repeat runs a setup/teardown step Count times or once per row of a data source.
type Repeat struct {
	Pos     Pos    `yaml:"-"`
	Count   *Num   `yaml:"count"`
	ForEach string `yaml:"for_each"`
}

// Text is a templated string from the plan.
type Text struct {
	Pos Pos
	T   *tmpl.Template
}

// String returns the source text.
func (t *Text) String() string {
	if t == nil || t.T == nil {
		return ""
	}
	return t.T.Source()
}

// JSONDoc is an inline JSON body written as YAML; strings may hold placeholders.
type JSONDoc struct {
	Pos  Pos
	Text *Text // the document serialised as JSON, as a template
	// Node is the document as the plan wrote it, for checks against a
	// schema that name the place of each part.
	Node *yaml.Node
}

// Num is a number or duration field that may be swept: a scalar, a list, or a
// template such as ${users} naming a variable. Resolve it per stage.
type Num struct {
	Pos Pos
	// Values holds the literal values when the plan wrote a number or list.
	Values []string
	List   bool
	// T is set when the plan wrote a template.
	T *tmpl.Template
	// Dim is the sweep dimension made from a literal list; empty otherwise.
	Dim string
	// Duration is true when the field holds a duration.
	Duration bool
}

// Duration is a time.Duration written as "10s", "1m30s", "250ms".
type Duration struct {
	Pos Pos
	D   time.Duration
}

// Given reports whether the plan gives the duration (0 included), where
// unset it has a default.
func (d Duration) Given() bool { return d.Pos.Line != 0 }

// Size is a number of bytes written as 4MiB, 512KiB, 1MB (units B, KB, MB,
// GB of 1000 and KiB, MiB, GiB of 1024) or a plain number.
type Size struct {
	Pos Pos
	N   int64
}

// DefaultBodyLimit is http.body_limit's default: enough for the JSON or
// HTML a check or an extraction reads, small enough that every VU of a
// large run can hold one at the same time.
const DefaultBodyLimit = 4 << 20

// DefaultParseLimit is http.parse_limit's default, the default body
// limit. A tree takes many times its body: one parse of a 3 MB page
// allocated 34 MB for css (goquery, 30 MB of it the tree), 70 MB for
// xpath (xmlquery, 39 MB the tree), and a JSON body of 3 MB 82 MB for a
// path with a filter or a wildcard; the process parses as many bodies at
// once as Go has cores.
const DefaultParseLimit = DefaultBodyLimit

// Dimension is one swept variable and its values, in stage order.
type Dimension struct {
	Name   string
	Values []string
}

// Correlated reports whether a scenario step is marked correlate.
func (p *Plan) Correlated() bool {
	var walk func([]*Step) bool
	walk = func(steps []*Step) bool {
		for _, st := range steps {
			if st.Correlate != nil || walk(st.Steps) {
				return true
			}
		}
		return false
	}
	for _, sc := range p.Scenarios {
		if walk(sc.Flow) {
			return true
		}
	}
	return false
}

// Monitor is a monitor of the system under test, as declared in a plan.
type Monitor struct {
	Pos          Pos `yaml:"-"`
	monitor.Spec `yaml:",inline"`
}
