package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
	"github.com/perflab/perflab/tmpl"
)

// DefaultAwaitTimeout bounds an await without a timeout of its own.
const DefaultAwaitTimeout = 30 * time.Second

// Step is a ws step compiled.
type Step struct {
	Name         string
	url          *tmpl.Template
	headers      []header
	subprotocols []string
	send         *tmpl.Template
	json         bool
	binary       bool
	await        bool
	match        string // a gjson path, "text", or "" for any message
	equals       *tmpl.Template
	timeout      time.Duration
	close        bool
	checks       phttp.JSONChecks
	contains     [][]byte
	extract      phttp.Extracts
}

type header struct {
	name  string
	value *tmpl.Template
}

// Compile builds a step from a plan's ws step.
func Compile(st *plan.Step) (*Step, error) {
	w := st.WS
	s := &Step{Name: st.Name, url: w.URL.T, subprotocols: w.Subprotocols, binary: w.Binary, close: w.Close}
	for _, h := range w.Headers {
		s.headers = append(s.headers, header{h.Name, h.Value.T})
	}
	switch {
	case w.JSON != nil:
		s.send, s.json = w.JSON.Text.T, true
	case w.Send != nil:
		s.send = w.Send.T
	}
	if a := w.Await; a != nil {
		s.await, s.timeout = true, a.Timeout.D
		if s.timeout <= 0 {
			s.timeout = DefaultAwaitTimeout
		}
		switch {
		case a.Match == "text":
			s.match = "text"
		case a.Match != "":
			s.match = strings.TrimPrefix(a.Match, "json.")
		}
		if a.Equals != nil {
			s.equals = a.Equals.T
		}
	}
	var err error
	if s.extract, err = phttp.CompileExtracts(st.Name, st.Extract); err != nil {
		return nil, err
	}
	if c := st.Check; c != nil {
		if s.checks, err = phttp.CompileJSONChecks(c.JSON); err != nil {
			return nil, err
		}
		for _, b := range c.BodyContains {
			s.contains = append(s.contains, []byte(b))
		}
	}
	return s, nil
}

// URL is the step's URL as the plan writes it: a VU keeps a connection
// per URL.
func (s *Step) URL() string { return s.url.Source() }

// Address is the host:port the step's URL dials, as far as a stage's
// variables tell it, or "" when a VU's values do (phttp.Address).
func (s *Step) Address(vars map[string]string) string { return phttp.Address(s.url, vars) }

// Conns are a VU's connections, by URL.
type Conns struct {
	d     *Dialer
	conns map[string]*Conn
	timer *time.Timer
}

// NewConns is a VU's set of connections, opened through d.
func NewConns(d *Dialer) *Conns { return &Conns{d: d, conns: map[string]*Conn{}} }

// Close closes every connection.
func (cs *Conns) Close() {
	for u, c := range cs.conns {
		c.Close()
		delete(cs.conns, u)
	}
}

// Result is a step's outcome: Latency as the step times it (from the send,
// or the step's start, to the matching message; the send alone; the
// handshake when the step only opens). Connect is the handshake's time
// when the step opened the connection; Unmatched the messages that came
// before the match.
type Result struct {
	phttp.Result
	Connect time.Duration
	Dialed  bool
	// ConnectErr is why the connection could not be opened (OK if it was).
	ConnectErr metrics.ErrKind
	Unmatched  int
}

// Do runs the step on a VU's connections with its variables. An await
// ends with ctx (the load's end), with ctx's error as its detail.
func (s *Step) Do(ctx context.Context, cs *Conns, vars phttp.Vars) Result {
	var res Result
	fail := func(k metrics.ErrKind, detail string) Result {
		res.Err, res.Detail = k, detail
		return res
	}
	u, err := s.url.Expand(vars)
	if err != nil {
		return fail(metrics.NotSent, err.Error())
	}
	if err := phttp.CheckURL(u); err != nil {
		return fail(metrics.InvalidRequest, err.Error())
	}
	u, authz, err := phttp.CutUserinfo(u) // the library refuses them in the URL
	if err != nil {
		return fail(metrics.InvalidRequest, err.Error())
	}
	var msg []byte
	if s.send != nil {
		text, err := s.send.Expand(vars)
		if err != nil {
			return fail(metrics.NotSent, err.Error())
		}
		if s.json && !json.Valid([]byte(text)) {
			return fail(metrics.NotSent, "the json message is not valid JSON after expansion")
		}
		msg = []byte(text)
	}
	var want string
	if s.equals != nil {
		if want, err = s.equals.Expand(vars); err != nil {
			return fail(metrics.NotSent, err.Error())
		}
	}
	start := time.Now()
	c := cs.conns[u]
	if c == nil {
		h := http.Header{}
		for _, hd := range s.headers {
			v, err := hd.value.Expand(vars)
			if err != nil {
				return fail(metrics.NotSent, err.Error())
			}
			if err := phttp.CheckHeader(hd.name, v); err != nil {
				return fail(metrics.InvalidRequest, err.Error())
			}
			h.Add(hd.name, v)
		}
		if authz != "" && h.Get("Authorization") == "" { // the step's own wins
			h.Set("Authorization", authz)
		}
		var resp *http.Response
		c, resp, err = cs.d.Dial(u, h, s.subprotocols)
		res.Connect, res.Dialed = time.Since(start), true
		if err != nil {
			res.Start, res.Latency = start, res.Connect
			if resp != nil {
				res.ConnectErr = metrics.StatusKind(resp.StatusCode)
				return fail(res.ConnectErr, "the handshake was refused: "+resp.Status)
			}
			res.ConnectErr = dialKind(err)
			return fail(res.ConnectErr, err.Error())
		}
		cs.conns[u] = c
	}
	res.Start = time.Now()
	if msg != nil {
		if err := c.Send(msg, s.binary); err != nil {
			res.Latency = time.Since(res.Start)
			s.drop(cs, u)
			return fail(metrics.Write, err.Error())
		}
	}
	if !s.await {
		res.Latency = time.Since(res.Start)
		if msg == nil && res.Dialed { // a step that only opens: its time is the handshake
			res.Start, res.Latency = start, res.Connect
		}
		if s.close {
			s.drop(cs, u)
		}
		return res
	}
	if cs.timer == nil {
		cs.timer = time.NewTimer(s.timeout)
	} else {
		cs.timer.Reset(s.timeout)
	}
	defer cs.timer.Stop()
	for {
		m, err := c.Next(ctx, cs.timer)
		if err != nil {
			res.Latency = time.Since(res.Start)
			var ce *CloseError
			if errors.As(err, &ce) {
				s.drop(cs, u)
				return fail(metrics.ConnReset, closeDetail(ce.Err))
			}
			return fail(metrics.Timeout, err.Error())
		}
		// A message that came before this step's send cannot answer it
		// (a late answer to an earlier, timed-out await; a greeting).
		if msg != nil && m.At.Before(res.Start) || !s.matches(m.Data, want) {
			res.Unmatched++
			continue
		}
		res.Latency = max(m.At.Sub(res.Start), 0) // an await alone: 0 for a message that came while the VU thought
		res.Bytes = len(m.Data)
		res.Err, res.Detail = s.judge(m.Data, vars)
		if s.close {
			s.drop(cs, u)
		}
		return res
	}
}

// drop closes and forgets a connection.
func (s *Step) drop(cs *Conns, u string) {
	if c := cs.conns[u]; c != nil {
		c.Close()
		delete(cs.conns, u)
	}
}

func (s *Step) matches(data []byte, want string) bool {
	switch s.match {
	case "":
		return true
	case "text":
		return string(data) == want
	}
	r := gjson.GetBytes(data, s.match)
	return r.Exists() && r.String() == want
}

// judge checks the matching message and extracts from it (extractions
// first: the json checks may read what they extract).
func (s *Step) judge(data []byte, vars phttp.Vars) (metrics.ErrKind, string) {
	for _, want := range s.contains {
		if !bytes.Contains(data, want) {
			return metrics.CheckFailed, "the message does not contain " + string(want)
		}
	}
	return phttp.Judge(s.extract, s.checks, func(string) ([]byte, bool) { return nil, false }, data, vars)
}

// dialKind is the error kind of a connection that could not be opened.
func dialKind(err error) metrics.ErrKind {
	var dnsErr *net.DNSError
	var timeout interface{ Timeout() bool }
	switch {
	case metrics.IsGeneratorLimit(err):
		return metrics.GeneratorLimit // this host out of descriptors or ports
	case errors.Is(err, syscall.ECONNREFUSED):
		return metrics.ConnRefused
	case errors.As(err, &dnsErr):
		return metrics.DNS
	case errors.Is(err, syscall.ECONNRESET):
		return metrics.ConnReset
	case errors.As(err, &timeout) && timeout.Timeout():
		return metrics.Connect
	case strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "x509:"):
		return metrics.TLS
	case strings.Contains(err.Error(), "malformed ws or wss URL"):
		return metrics.NotSent
	}
	return metrics.Other
}
