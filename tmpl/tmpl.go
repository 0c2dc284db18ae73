package tmpl

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
)

// Lookup resolves a placeholder name to its value. The boolean is false when
// the name is undefined.
type Lookup interface {
	Lookup(name string) (string, bool)
}

// LookupFunc adapts a function to Lookup.
type LookupFunc func(name string) (string, bool)

// Lookup calls f.
func (f LookupFunc) Lookup(name string) (string, bool) { return f(name) }

// Template is a parsed string: literal text and placeholders in order.
type Template struct {
	src   string
	parts []part
	size  int // literal bytes, a hint for the output buffer
}

type part struct {
	lit      string
	ref      string // empty for a literal part
	fallback string
	hasFall  bool
	raw      bool // ${raw:name}: substituted into a URL as it is
	decoded  bool // ${decoded:name}: the value URL-decoded (FormDecode)
	offset   int  // byte offset of "${" in src
}

// Ref is a placeholder as written, with its byte offset in the source.
type Ref struct {
	Name   string
	Offset int
	// HasFallback is true when the placeholder gives a value to use if Name is undefined.
	HasFallback bool
}

// SyntaxError reports a malformed placeholder at a byte offset of the source.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// UndefinedError is returned by Expand when a placeholder has no value and no fallback.
type UndefinedError struct {
	Name string
	// Why says why the name has no value, when the Lookup can tell
	// (Explainer).
	Why string
}

func (e *UndefinedError) Error() string {
	if e.Why == "" {
		return fmt.Sprintf("${%s} is not set", e.Name)
	}
	return fmt.Sprintf("${%s} is not set (%s)", e.Name, e.Why)
}

// Explainer is a Lookup that can say why a name it has no value for is
// unset: "step login's extract of token failed in this iteration". Every
// expansion asks it, whatever the template is of (a URL, a header, a
// body, a message), so each kind of step says the same.
type Explainer interface {
	Unset(name string) string
}

// Parse parses s. It fails on an unterminated or empty placeholder or an invalid name.
func Parse(s string) (*Template, error) {
	t := &Template{src: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{lit: lit.String()})
			t.size += lit.Len()
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			lit.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := closing(s[i+2:])
		if end < 0 {
			return nil, &SyntaxError{Offset: i, Msg: "unterminated ${: missing }"}
		}
		body := s[i+2 : i+2+end]
		p := part{offset: i}
		if k := strings.Index(body, ":-"); k >= 0 {
			// $${name} in a default is the text ${name}: ${id:-$${id}}
			// sends ${id} when id is not set, as JMeter sends a variable
			// it has no value for.
			p.fallback, p.hasFall = strings.ReplaceAll(body[k+2:], "$${", "${"), true
			body = body[:k]
		}
		name := strings.TrimSpace(body)
		if n, ok := strings.CutPrefix(name, rawPrefix); ok {
			name, p.raw = strings.TrimSpace(n), true
		} else if n, ok := strings.CutPrefix(name, decodedPrefix); ok {
			name, p.decoded = strings.TrimSpace(n), true
		}
		if err := checkName(name); err != "" {
			return nil, &SyntaxError{Offset: i, Msg: err}
		}
		p.ref = name
		flush()
		t.parts = append(t.parts, p)
		i += 2 + end + 1
	}
	flush()
	return t, nil
}

// closing is the index of the } that ends a placeholder whose text s
// follows its ${; a $${...} in its default is passed over. -1: none.
func closing(s string) int {
	for j := 0; j < len(s); j++ {
		switch {
		case strings.HasPrefix(s[j:], "$${"):
			k := strings.IndexByte(s[j+3:], '}')
			if k < 0 {
				return -1
			}
			j += 3 + k
		case s[j] == '}':
			return j
		}
	}
	return -1
}

// rawPrefix marks a placeholder whose value goes into a URL unescaped:
// ${raw:name}.
const rawPrefix = "raw:"

// decodedPrefix marks a placeholder whose value is URL-decoded before it
// is used (FormDecode): ${decoded:name}.
const decodedPrefix = "decoded:"

// MustParse is Parse for strings known to be valid; it panics otherwise.
func MustParse(s string) *Template {
	t, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

func checkName(name string) string {
	if name == "" {
		return "empty placeholder ${}"
	}
	for _, seg := range strings.Split(name, ".") {
		if seg == "" {
			return fmt.Sprintf("invalid name %q: empty segment", name)
		}
		for _, r := range seg {
			if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return fmt.Sprintf("invalid name %q: character %q", name, r)
			}
		}
	}
	return ""
}

// Source returns the text the template was parsed from.
func (t *Template) Source() string { return t.src }

// IsLiteral reports whether the template has no placeholders.
func (t *Template) IsLiteral() bool {
	for _, p := range t.parts {
		if p.ref != "" {
			return false
		}
	}
	return true
}

// Refs lists the placeholders in order of appearance.
func (t *Template) Refs() []Ref {
	var refs []Ref
	for _, p := range t.parts {
		if p.ref != "" {
			refs = append(refs, Ref{Name: p.ref, Offset: p.offset, HasFallback: p.hasFall})
		}
	}
	return refs
}

// Expand returns the template with every placeholder replaced by its value.
func (t *Template) Expand(l Lookup) (string, error) {
	if len(t.parts) == 1 && t.parts[0].ref == "" {
		return t.parts[0].lit, nil
	}
	if len(t.parts) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(t.size + 16*len(t.parts))
	if err := t.expand(&b, l); err != nil {
		return "", err
	}
	return b.String(), nil
}

// AppendTo appends the expansion to dst, for callers that reuse a buffer.
func (t *Template) AppendTo(dst []byte, l Lookup) ([]byte, error) {
	for _, p := range t.parts {
		v, err := p.value(l)
		if err != nil {
			return dst, err
		}
		dst = append(dst, v...)
	}
	return dst, nil
}

// value is a part's text: its literal, or its placeholder's value.
func (p *part) value(l Lookup) (string, error) {
	if p.ref == "" {
		return p.lit, nil
	}
	v, ok := l.Lookup(p.ref)
	if !ok {
		if !p.hasFall {
			err := &UndefinedError{Name: p.ref}
			if x, ok := l.(Explainer); ok {
				err.Why = x.Unset(p.ref)
			}
			return "", err
		}
		v = p.fallback
	}
	if p.decoded {
		v = FormDecode(v)
	}
	return v, nil
}

// AppendURL appends the expansion of a URL template to dst, escaping the
// values it substitutes by where they land in the URL: a value in the path
// with path-segment escaping (url.PathEscape: "/" too), in the query or
// fragment with query escaping (url.QueryEscape), and before the path
// (scheme, host, port: a base URL) as it is. Where it lands is read from
// what has been expanded before it: the query begins at the first "?" or
// "#", the path at the first "/" after "://" (or at a leading "/"). The
// template's literal text is kept as written, and so is the value of a
// ${raw:name} placeholder.
func (t *Template) AppendURL(dst []byte, l Lookup) ([]byte, error) {
	start := len(dst)
	for _, p := range t.parts {
		v, err := p.value(l)
		if err != nil {
			return dst, err
		}
		switch {
		case p.ref == "" || p.raw:
			dst = append(dst, v...)
		case inQuery(dst[start:]):
			dst = append(dst, url.QueryEscape(v)...)
		case inPath(dst[start:]):
			dst = append(dst, url.PathEscape(v)...)
		default:
			dst = append(dst, v...)
		}
	}
	return dst, nil
}

// inQuery reports whether the URL u, as expanded so far, is in its query
// or fragment.
func inQuery(u []byte) bool { return bytes.IndexAny(u, "?#") >= 0 }

// inPath reports whether the URL u, as expanded so far, has reached its
// path: a "/" after the scheme's "://", or a leading "/" of a URL without
// a scheme.
func inPath(u []byte) bool {
	if i := bytes.Index(u, []byte("://")); i >= 0 {
		return bytes.IndexByte(u[i+3:], '/') >= 0
	}
	return len(u) > 0 && u[0] == '/'
}

func (t *Template) expand(b *strings.Builder, l Lookup) error {
	for _, p := range t.parts {
		v, err := p.value(l)
		if err != nil {
			return err
		}
		b.WriteString(v)
	}
	return nil
}
