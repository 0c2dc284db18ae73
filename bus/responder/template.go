package responder

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/bus"
)

// template is a parsed reply template: literal text and fields in order.
type template struct {
	parts []part
}

// part is a literal when field is nil.
type part struct {
	lit      string
	field    *bus.Field
	fallback string
}

// parseTemplate parses the ${FIELD}, ${FIELD:-TEXT} and $${ of s (see the
// package documentation).
func parseTemplate(s string) (*template, error) {
	t := &template{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("offset %d: unterminated ${: missing }", i)
			}
			name, fallback, _ := strings.Cut(s[i+2:i+2+end], ":-")
			f, err := bus.ParseField(name)
			if err != nil {
				return nil, fmt.Errorf("offset %d: %w", i, err)
			}
			flush()
			t.parts = append(t.parts, part{field: &f, fallback: fallback})
			i += 2 + end + 1
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return t, nil
}

// appendTo appends the template expanded for m to dst.
func (t *template) appendTo(dst []byte, m *bus.Message) []byte {
	for _, p := range t.parts {
		if p.field == nil {
			dst = append(dst, p.lit...)
			continue
		}
		v, ok := p.field.Get(m)
		if !ok {
			v = p.fallback
		}
		dst = append(dst, v...)
	}
	return dst
}

// expand returns the template expanded for m.
func (t *template) expand(m *bus.Message) string {
	if len(t.parts) == 1 && t.parts[0].field == nil {
		return t.parts[0].lit
	}
	return string(t.appendTo(nil, m))
}
