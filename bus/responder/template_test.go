package responder

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/bus"
)

func TestTemplate(t *testing.T) {
	m := &bus.Message{
		Topic:   "orders",
		Key:     "k1",
		Headers: map[string]string{"reply-to": "replies", "empty": ""},
		Value:   []byte(`{"id":"o-1","n":42,"user":{"name":"ann"}}`),
	}
	cases := []struct{ src, want string }{
		{"", ""},
		{"plain text", "plain text"},
		{`{"id":"${json.id}","n":${json.n}}`, `{"id":"o-1","n":42}`},
		{"${json.user}", `{"name":"ann"}`},
		{"${key}/${topic}/${header.reply-to}", "k1/orders/replies"},
		{"[${json.missing}]", "[]"},
		{"[${json.missing:-none}]", "[none]"},
		{"[${header.empty:-none}]", "[]"}, // present, if empty: no fallback
		{"[${header.absent:-a:-b}]", "[a:-b]"},
		{"$${key} is ${key}", "${key} is k1"},
		{"$5 and $ {key}", "$5 and $ {key}"},
	}
	for _, c := range cases {
		tm, err := parseTemplate(c.src)
		if err != nil {
			t.Errorf("parse %q: %v", c.src, err)
			continue
		}
		if got := tm.expand(m); got != c.want {
			t.Errorf("expand %q = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"a ${key", "offset 2: unterminated ${: missing }"},
		{"${}", `offset 0: field "": want key, topic, header.NAME or json.PATH`},
		{"x${body}", `offset 1: field "body"`},
		{"${json.}", `field "json."`},
	} {
		if _, err := parseTemplate(c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parse %q: %v, want an error containing %q", c.src, err, c.want)
		}
	}
}
