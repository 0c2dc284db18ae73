package plan

import (
	"strings"

	"github.com/perflab/perflab/internal/secret"
)

// WSStep is a step on a VU's WebSocket connection to URL: opened by the
// VU's first step on that URL, kept across its iterations, closed when
// the VU ends (or by a step with Close). A step sends a message, awaits
// one, or both (the latency then runs from the send to the matching
// message).
type WSStep struct {
	Pos Pos `yaml:"-"`
	// URL is ws://HOST/PATH or wss://...
	URL *Text `yaml:"url"`
	// Headers and Subprotocols go with the opening handshake.
	Headers      []Pair   `yaml:"headers"`
	Subprotocols []string `yaml:"subprotocols"`
	// Send is a message as text; JSON one written as YAML, sent as JSON.
	// Binary sends it as a binary message.
	Send   *Text    `yaml:"send"`
	JSON   *JSONDoc `yaml:"json"`
	Binary bool     `yaml:"binary"`
	// Await waits for the message that matches.
	Await *WSAwait `yaml:"await"`
	// Close closes the connection (after sending and awaiting).
	Close bool `yaml:"close"`
}

// WSAwait is the message a WebSocket step waits for: the first whose
// Match (json.PATH, or text for the whole message) equals Equals; with no
// Match, the next message. Others that come first are counted as
// unmatched.
type WSAwait struct {
	Pos     Pos      `yaml:"-"`
	Match   string   `yaml:"match"`
	Equals  *Text    `yaml:"equals"`
	Timeout Duration `yaml:"timeout"`
}

// wsStep checks a WebSocket step.
func (v *validator) wsStep(st *Step, sc *scope, where string) {
	w := st.WS
	if st.Name == "" && w.URL != nil {
		st.Name = "ws " + secret.Text(w.URL.String()) // without its password
		v.unnamed[st] = true
	}
	who := "step " + st.Name
	if v.inPhase {
		v.at(w.Pos, "%s: ws steps belong in scenarios (a VU keeps its connections)", who)
		return
	}
	switch {
	case w.URL == nil:
		v.at(w.Pos, "%s: ws needs url, such as ws://127.0.0.1:8080/feed", who)
		return
	case w.URL.T.IsLiteral() && !strings.HasPrefix(w.URL.String(), "ws://") && !strings.HasPrefix(w.URL.String(), "wss://"):
		v.at(w.URL.Pos, "%s: url %q: want ws:// or wss://", who, secret.Text(w.URL.String()))
	case w.Send != nil && w.JSON != nil:
		v.at(w.Pos, "%s: give send or json, not both", who)
	}
	if st.URL != nil || st.Body != nil || st.JSON != nil || st.Form != nil || len(st.Headers) > 0 || len(st.Query) > 0 || st.Repeat != nil {
		v.at(st.Pos, "%s: url, body, json, form, headers, query and repeat are for HTTP requests: a ws step has them under ws", who)
	}
	v.refs(w.URL, sc)
	v.wireURL(who+": url", w.URL)
	for _, h := range w.Headers {
		v.refs(h.Value, sc)
	}
	v.wireHeaders(who+": headers", w.Headers)
	v.refs(w.Send, sc)
	if w.JSON != nil {
		v.refs(w.JSON.Text, sc)
	}
	if a := w.Await; a != nil {
		if path, ok := strings.CutPrefix(a.Match, "json."); a.Match != "" && a.Match != "text" && (!ok || path == "") {
			v.at(a.Pos, "%s: await.match %q: want json.PATH (a field of a JSON message) or text (the whole message)", who, a.Match)
		}
		if a.Match != "" && a.Equals == nil {
			v.at(a.Pos, "%s: await.equals is required with match: the value that marks this VU's message, such as ${id}", who)
		}
		if a.Match == "" && a.Equals != nil {
			v.at(a.Pos, "%s: await.equals needs match: the field it is compared with", who)
		}
		v.refs(a.Equals, sc)
	} else if len(st.Extract) > 0 || st.Check != nil {
		v.at(st.Pos, "%s: extract and check take the awaited message: add await", who)
	}
	v.extracts(st, sc) // before the checks, which may read what it extracts
	if c := st.Check; c != nil {
		if len(c.Status) > 0 {
			v.at(c.Pos, "%s: a WebSocket message has no status: check its fields with json, or its text with body_contains", who)
		}
		v.checks(c, who, sc, false)
	}
	v.refs(st.Correlate, sc)
}

// HasWS reports whether a step of the plan uses a WebSocket.
func (p *Plan) HasWS() bool {
	has := false
	p.EachStep(func(st *Step) { has = has || st.WS != nil })
	return has
}
