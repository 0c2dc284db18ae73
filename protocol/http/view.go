package http

import (
	"bytes"
	"encoding/xml"
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
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(v.body))
		if err != nil { // a read from memory does not fail: an empty page
			doc, _ = goquery.NewDocumentFromReader(bytes.NewReader(nil))
		}
		v.html = doc
	}
	return v.html
}

// xmlDoc is the body parsed as XML, or else as HTML (unclosed elements,
// HTML's entities).
func (v *view) xmlDoc() (*xmlquery.Node, error) {
	if !v.xmlTried {
		v.xmlTried = true
		v.xml, v.xmlErr = xmlquery.Parse(bytes.NewReader(v.body))
		if v.xmlErr != nil {
			lax := xmlquery.ParserOptions{Decoder: &xmlquery.DecoderOptions{AutoClose: xml.HTMLAutoClose, Entity: xml.HTMLEntity}}
			if doc, err := xmlquery.ParseWithOptions(bytes.NewReader(v.body), lax); err == nil {
				v.xml, v.xmlErr = doc, nil
			}
		}
	}
	return v.xml, v.xmlErr
}
