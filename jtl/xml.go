package jtl

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/lines"
)

// xmlReader reads an XML result file: <testResults> of <httpSample> and
// <sample> elements. A Transaction Controller that generates a parent
// sample is a <sample> holding its steps' samples: they are given first,
// then it. What an HTTP sample holds (its redirects, its embedded
// resources) is part of it, as JMeter's own listeners count it.
type xmlReader struct {
	name    string
	o       Options
	d       *xml.Decoder
	lim     *tokenLimit
	pending []Sample
	started bool
	depth   int // of the element being read
}

func newXML(r *bufio.Reader, name string, o Options) *xmlReader {
	lim := &tokenLimit{br: r}
	return &xmlReader{name: name, o: o, d: xml.NewDecoder(lim), lim: lim}
}

// tokenLimit is the input of an xml.Decoder (which reads it a byte at a
// time), cut off once a token is longer than lines.MaxLine: the decoder
// holds a token whole (an attribute, a text), however long.
type tokenLimit struct {
	br *bufio.Reader
	n  int // bytes given since the token's start
}

func (t *tokenLimit) ReadByte() (byte, error) {
	if t.n > lines.MaxLine {
		return 0, errLongToken
	}
	t.n++
	return t.br.ReadByte()
}

func (t *tokenLimit) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b, err := t.ReadByte()
	if err != nil {
		return 0, err
	}
	p[0] = b
	return 1, nil
}

var errLongToken = fmt.Errorf("an element or a text longer than %d MiB: they are limited to %d MiB (lines.MaxLine)", lines.MaxLine>>20, lines.MaxLine>>20)

// open is a sample element being read.
type open struct {
	s        Sample
	http     bool
	children []Sample
	depth    int
	err      error
	inFail   bool // in an assertionResult that failed
	failMsg  string
	text     strings.Builder
}

func (x *xmlReader) Next() (Sample, error) {
	if len(x.pending) > 0 {
		s := x.pending[0]
		x.pending = x.pending[1:]
		return s, nil
	}
	var stack []*open
	for {
		line, _ := x.d.InputPos()
		x.lim.n = 0
		tok, err := x.d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if !x.started {
					return Sample{}, &Error{x.name, line, errors.New("no <testResults> element: not a JMeter result file")}
				}
				if len(stack) > 0 || x.depth > 0 {
					return Sample{}, &Error{x.name, line, errors.New("the file ends inside an element: it is cut short")}
				}
				return Sample{}, io.EOF
			}
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				if se.Msg == "unexpected EOF" {
					return Sample{}, &Error{x.name, se.Line, errors.New("the file ends inside an element: it is cut short")}
				}
				return Sample{}, &Error{x.name, se.Line, errors.New(se.Msg)}
			}
			return Sample{}, &Error{x.name, line, err}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			x.depth++
			if !x.started {
				if t.Name.Local != "testResults" {
					return Sample{}, &Error{x.name, line, fmt.Errorf("<%s> where a JMeter result file has <testResults>", t.Name.Local)}
				}
				x.started = true
				continue
			}
			name := t.Name.Local
			if name == "httpSample" || name == "sample" {
				// Inside an HTTP sample: a sub-result, part of it.
				if len(stack) > 0 && stack[len(stack)-1].http {
					stack = append(stack, &open{http: true, depth: x.depth, err: errSkip})
					continue
				}
				o := &open{http: name == "httpSample", depth: x.depth}
				o.s, o.err = x.attrs(t.Attr, line)
				stack = append(stack, o)
				continue
			}
			if len(stack) > 0 {
				stack[len(stack)-1].text.Reset()
			}
		case xml.CharData:
			if len(stack) > 0 {
				o := stack[len(stack)-1]
				if o.text.Len()+len(t) > lines.MaxLine { // texts of many tokens (CDATA sections, comments between)
					return Sample{}, &Error{x.name, line, errLongToken}
				}
				o.text.Write(t)
			}
		case xml.EndElement:
			x.depth--
			if x.depth < 0 {
				return Sample{}, &Error{x.name, line, fmt.Errorf("</%s> closes nothing", t.Name.Local)}
			}
			if len(stack) == 0 {
				continue
			}
			o := stack[len(stack)-1]
			switch t.Name.Local {
			case "failure":
				o.inFail = strings.TrimSpace(o.text.String()) == "true"
			case "failureMessage":
				o.failMsg = o.text.String()
			case "assertionResult":
				if o.inFail && o.s.Failure == "" {
					o.s.Failure = o.failMsg
				}
				o.inFail, o.failMsg = false, ""
			}
			if o.depth != x.depth+1 {
				continue
			}
			stack = stack[:len(stack)-1]
			if o.err == errSkip {
				continue
			}
			if o.err != nil {
				return Sample{}, o.err
			}
			if !o.http && len(o.children) > 0 {
				o.s.Transaction = true
			}
			finish(&o.s, x.o)
			out := append(o.children, o.s)
			if len(stack) > 0 { // a step of a parent sample
				p := stack[len(stack)-1]
				p.children = append(p.children, out...)
				continue
			}
			x.pending = out[1:]
			return out[0], nil
		}
	}
}

var errSkip = errors.New("a sub-result")

// attrs reads a sample's attributes (JMeter's short names: t elapsed, ts
// time stamp, s success, lb label, rc code, rm message, tn thread, by
// bytes).
func (x *xmlReader) attrs(as []xml.Attr, line int) (Sample, error) {
	s := Sample{Line: line}
	var haveT, haveTS, haveS bool
	for _, a := range as {
		switch a.Name.Local {
		case "t":
			ms, ok := parseInt(a.Value)
			if !ok || ms < 0 {
				return s, &Error{x.name, line, fmt.Errorf("t=%q is not a number of milliseconds", a.Value)}
			}
			s.Elapsed, haveT = time.Duration(ms)*time.Millisecond, true
		case "ts":
			t, err := parseStamp(a.Value, x.o.Location)
			if err != nil {
				return s, &Error{x.name, line, err}
			}
			s.Start, haveTS = t, true
		case "s":
			s.Success, haveS = a.Value == "true", true
		case "lb":
			s.Label = a.Value
		case "rc":
			s.Code = a.Value
		case "rm":
			s.Message = a.Value
		case "tn":
			s.Thread = a.Value
		case "by":
			s.Bytes, _ = parseInt(a.Value)
		}
	}
	if !haveT || !haveTS || !haveS {
		return s, &Error{x.name, line, errors.New("a sample without t, ts or s: perflab needs its elapsed time, time stamp and success")}
	}
	if err := names(s.Label, s.Thread); err != nil {
		return s, &Error{x.name, line, err}
	}
	return s, nil
}
