package http

import (
	"bytes"
	"encoding/xml"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/antchfx/xmlquery"

	"github.com/perflab/perflab/plan"
)

// view is what a step's extractions and checks read of a response (or
// of a message: a gRPC call's response as JSON, a WebSocket or bus
// message, with neither status nor URL). The body is parsed once, as
// JSON, HTML or XML, by the first extraction or check that needs it.
//
// The response's headers are not in it but beside it (a headerFunc): a
// closure kept in a view that the body's parsers see would be moved to
// the heap on every request.
type view struct {
	status int
	// headers is the response's header block, status line first, and url
	// the request's URL: set only for a step that reads them (reads).
	headers []byte
	url     []byte
	body    []byte
	latency time.Duration
	size    int

	// headersLF is headers with its lines ended by LF alone (headerText).
	headersLF []byte

	json     plan.JSONBody
	jsonSet  bool
	html     *goquery.Document
	xml      *xmlquery.Node
	xmlErr   error
	xmlTried bool

	// parseLimit is the largest body parsed into a tree (0: the
	// default); parsing holds one of parses from the first parse until
	// the response is judged (release).
	parseLimit int64
	parsing    bool
}

// parses bounds the bodies parsed into trees at once in the process, by
// every VU, to as many as Go has cores (parsing is work for a core): a
// tree takes 10 to 30 times its body (plan.DefaultParseLimit), and a
// thousand VUs on goroutines would otherwise parse a thousand pages at
// once. A VU waits for its turn as it judges its response, which the
// time of its processing (Result.Processing) counts.
var parses = make(chan struct{}, runtime.GOMAXPROCS(0))

// parsing counts the parses under way, and peakParsing the most at once
// (for the tests).
var parsing, peakParsing atomic.Int32

// parseRefusal says why the body is not parsed into a tree (it is over
// the parse limit), or is empty; what says what would have parsed it.
func (v *view) parseRefusal(what string) string {
	limit := v.parseLimit
	if limit <= 0 {
		limit = plan.DefaultParseLimit
	}
	if int64(len(v.body)) <= limit {
		return ""
	}
	return "the body is " + strconv.Itoa(len(v.body)) + " bytes, past the " + plan.FormatSize(limit) + " that " + what + " parses (http.parse_limit)"
}

// parse takes the view's turn to parse (parses), if it has none yet.
func (v *view) parse() {
	if v.parsing {
		return
	}
	parses <- struct{}{}
	v.parsing = true
	n := parsing.Add(1)
	for p := peakParsing.Load(); n > p && !peakParsing.CompareAndSwap(p, n); p = peakParsing.Load() {
	}
}

// release ends the view's turn to parse, if it had one: the response is
// judged.
func (v *view) release() {
	if v.parsing {
		v.parsing = false
		parsing.Add(-1)
		<-parses
	}
}

// jsonTree is the body for p: one that p parses into a tree (a path
// that is not names and indexes only) takes a turn to parse. refusal
// says why p does not read it: it is over the parse limit, or nested too
// deep for a path with .. (plan.JSONPath.Refusal).
func (v *view) jsonTree(p *plan.JSONPath) (b *plan.JSONBody, refusal string) {
	if p.Fast() { // inlined: the common path costs a test
		return v.jsonBody(), ""
	}
	return v.parseJSON(p)
}

// parseJSON is jsonTree of a path that parses the body into a tree.
func (v *view) parseJSON(p *plan.JSONPath) (b *plan.JSONBody, refusal string) {
	if why := v.parseRefusal("a JSON path with filters, wildcards or .."); why != "" {
		return nil, why
	}
	v.parse()
	b = v.jsonBody()
	return b, p.Refusal(b)
}

// headerFunc looks up a header of a response (or of a message).
type headerFunc = func(name string) ([]byte, bool)

// What a step reads of a response beside its status, headers and body.
const (
	readsHeaders = 1 << iota // the header block
	readsURL                 // the request's URL
)

// headerText is the header block as a regex reads it: the status line
// and a line a header, each ended by LF alone, as JMeter keeps a
// response's headers: a pattern such as "token: (.+)" takes the value
// without the CR of the wire's CRLF.
func (v *view) headerText() []byte {
	if v.headersLF == nil && v.headers != nil {
		v.headersLF = bytes.ReplaceAll(v.headers, []byte("\r\n"), []byte("\n"))
	}
	return v.headersLF
}

// jsonBody is the body as JSON paths read it.
func (v *view) jsonBody() *plan.JSONBody {
	if !v.jsonSet {
		v.json.Reset(v.body)
		v.jsonSet = true
	}
	return &v.json
}

// htmlDoc is the body parsed as HTML (any bytes are HTML to a browser).
func (v *view) htmlDoc() *goquery.Document {
	if v.html == nil {
		v.parse()
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(v.body))
		if err != nil { // a read from memory does not fail: an empty page
			doc, _ = goquery.NewDocumentFromReader(bytes.NewReader(nil))
		}
		v.html = doc
	}
	return v.html
}

// xmlDoc is the body parsed as XML, or else as HTML (unclosed elements,
// HTML's entities). A body that says it is HTML (its doctype or its
// first element) is parsed as HTML at once: a page that is well-formed
// XML but for one void element near its end was parsed almost twice (a
// 3 MB page allocated 119 MB, where it takes 60).
func (v *view) xmlDoc() (*xmlquery.Node, error) {
	if !v.xmlTried {
		v.xmlTried = true
		v.parse()
		if !saysHTML(v.body) {
			v.xml, v.xmlErr = xmlquery.Parse(bytes.NewReader(v.body))
		}
		if v.xml == nil {
			lax := xmlquery.ParserOptions{Decoder: &xmlquery.DecoderOptions{AutoClose: xml.HTMLAutoClose, Entity: xml.HTMLEntity}}
			doc, err := xmlquery.ParseWithOptions(bytes.NewReader(v.body), lax)
			switch {
			case err == nil:
				v.xml, v.xmlErr = doc, nil
			case v.xmlErr == nil: // HTML by its start, and not even that
				v.xmlErr = err
			}
		}
	}
	return v.xml, v.xmlErr
}

// saysHTML reports whether body begins (after a byte order mark and
// white space) with an HTML doctype or an html element.
func saysHTML(body []byte) bool {
	body = bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), " \t\r\n")
	for _, start := range []string{"<!doctype html", "<html"} {
		if len(body) >= len(start) && strings.EqualFold(string(body[:len(start)]), start) {
			return true
		}
	}
	return false
}
