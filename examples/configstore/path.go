package configstore

import (
	"fmt"
	"slices"
	"strings"
)

// step is one location step: a node name and the conditions on its leaves.
type step struct {
	name  string
	preds []pred
}

// pred is the condition [@attr='value'].
type pred struct {
	attr, value string
}

// query is a parsed path or cps-path.
type query struct {
	descendant bool // starts with "//": the first step matches at any depth
	steps      []step
}

// parseNodePath parses the path of one node and returns it in canonical
// form: single-quoted values, conditions sorted by attribute.
func parseNodePath(src string) (string, error) {
	q, err := parse(src)
	if err != nil {
		return "", err
	}
	if q.descendant {
		return "", fmt.Errorf("%w: path %q: // is for queries, not node paths", ErrBadInput, src)
	}
	xpath := rootPath
	for _, s := range q.steps {
		slices.SortFunc(s.preds, func(a, b pred) int { return strings.Compare(a.attr, b.attr) })
		for i := 1; i < len(s.preds); i++ {
			if s.preds[i].attr == s.preds[i-1].attr {
				return "", fmt.Errorf("%w: path %q: @%s given twice", ErrBadInput, src, s.preds[i].attr)
			}
		}
		xpath = childPath(xpath, s)
	}
	return xpath, nil
}

// parseQuery parses a cps-path query.
func parseQuery(src string) (query, error) {
	q, err := parse(src)
	if err == nil && len(q.steps) == 0 {
		err = fmt.Errorf("%w: query %q selects no nodes", ErrBadInput, src)
	}
	return q, err
}

// rootPath is the path of the implicit root, parent of the top-level nodes.
const rootPath = "/"

// childPath is the path of the node s under parent.
func childPath(parent string, s step) string {
	if parent == rootPath {
		return rootPath + s.String()
	}
	return parent + "/" + s.String()
}

// String formats s in canonical form.
func (s step) String() string {
	if len(s.preds) == 0 {
		return s.name
	}
	var b strings.Builder
	b.WriteString(s.name)
	b.WriteByte('[')
	for i, p := range s.preds {
		if i > 0 {
			b.WriteString(" and ")
		}
		b.WriteByte('@')
		b.WriteString(p.attr)
		b.WriteByte('=')
		b.WriteString(quote(p.value))
	}
	b.WriteByte(']')
	return b.String()
}

// quote quotes v with single quotes, or double quotes if v holds a single
// quote. Values holding both cannot be written; keyOf rejects them.
func quote(v string) string {
	if strings.Contains(v, "'") {
		return `"` + v + `"`
	}
	return "'" + v + "'"
}

// stripPrefix removes a module prefix: "ietf-network:networks" → "networks".
func stripPrefix(name string) string {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// parser reads the grammar documented in the package comment.
type parser struct {
	src string
	pos int
}

func parse(src string) (query, error) {
	p := &parser{src: src}
	var q query
	switch {
	case !strings.HasPrefix(src, "/"):
		return q, p.errorf("must start with /")
	case src == rootPath:
		return q, nil
	case strings.HasPrefix(src, "//"):
		q.descendant = true
		p.pos = 2
	default:
		p.pos = 1
	}
	for {
		s, err := p.step()
		if err != nil {
			return q, err
		}
		q.steps = append(q.steps, s)
		if p.pos == len(src) {
			return q, nil
		}
		if src[p.pos] != '/' {
			return q, p.errorf("expected / or the end")
		}
		p.pos++
		if p.pos < len(src) && src[p.pos] == '/' {
			return q, p.errorf("// is only supported at the start")
		}
	}
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: path %q at offset %d: %s", ErrBadInput, p.src, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) step() (step, error) {
	name, err := p.name()
	if err != nil {
		return step{}, err
	}
	s := step{name: stripPrefix(name)}
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		return s, p.errorf("functions are not supported")
	}
	if p.pos == len(p.src) || p.src[p.pos] != '[' {
		return s, nil
	}
	p.pos++
	for {
		p.space()
		c, err := p.condition()
		if err != nil {
			return s, err
		}
		s.preds = append(s.preds, c)
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			return s, nil
		}
		if !strings.HasPrefix(p.src[p.pos:], "and ") {
			return s, p.errorf("expected ] or and")
		}
		p.pos += len("and")
	}
}

func (p *parser) condition() (pred, error) {
	if p.pos == len(p.src) || p.src[p.pos] != '@' {
		return pred{}, p.errorf("expected @attribute")
	}
	p.pos++
	attr, err := p.name()
	if err != nil {
		return pred{}, err
	}
	p.space()
	if p.pos == len(p.src) || p.src[p.pos] != '=' {
		return pred{}, p.errorf("expected =")
	}
	p.pos++
	p.space()
	v, err := p.literal()
	return pred{attr: attr, value: v}, err
}

// literal reads a quoted string (no escapes) or a number.
func (p *parser) literal() (string, error) {
	if p.pos < len(p.src) && (p.src[p.pos] == '\'' || p.src[p.pos] == '"') {
		q := p.src[p.pos]
		end := strings.IndexByte(p.src[p.pos+1:], q)
		if end < 0 {
			return "", p.errorf("unterminated string")
		}
		v := p.src[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return v, nil
	}
	start := p.pos
	for p.pos < len(p.src) && strings.IndexByte("+-.0123456789eE", p.src[p.pos]) >= 0 {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("expected a quoted value or a number")
	}
	return p.src[start:p.pos], nil
}

func (p *parser) name() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && isNameByte(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("expected a name")
	}
	return p.src[start:p.pos], nil
}

// isName reports whether s is a name of the grammar.
func isName(s string) bool {
	for i := range len(s) {
		if !isNameByte(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case first:
		return false
	default:
		return c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':'
	}
}

func (p *parser) space() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}
