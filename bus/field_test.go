package bus

import "testing"

func TestParseField(t *testing.T) {
	for _, s := range []string{"key", "topic", "header.trace-id", "json.id", "json.items.#.id", `json.a\.b`} {
		f, err := ParseField(s)
		if err != nil {
			t.Errorf("ParseField(%q): %v", s, err)
			continue
		}
		if f.String() != s {
			t.Errorf("ParseField(%q).String() = %q", s, f.String())
		}
	}
	for _, s := range []string{"", "Key", "header.", "json.", "headers.x", "value", "json"} {
		if _, err := ParseField(s); err == nil {
			t.Errorf("ParseField(%q): no error", s)
		}
	}
	if s := (Field{}).String(); s != "invalid" {
		t.Errorf("zero Field's String() = %q", s)
	}
}

func TestFieldGet(t *testing.T) {
	m := &Message{
		Topic:   "orders",
		Key:     "k1",
		Headers: map[string]string{"trace-id": "abc", "empty": ""},
		Value:   []byte(`{"id":"o-1","n":42,"ok":true,"user":{"name":"ann"},"items":[{"id":1},{"id":2}],"a.b":"dotted","s":"q\"uote"}`),
	}
	cases := []struct {
		field, want string
		ok          bool
	}{
		{"key", "k1", true},
		{"topic", "orders", true},
		{"header.trace-id", "abc", true},
		{"header.empty", "", true},
		{"header.Trace-Id", "", false}, // case-sensitive
		{"json.id", "o-1", true},
		{"json.n", "42", true},
		{"json.ok", "true", true},
		{"json.user", `{"name":"ann"}`, true},
		{"json.user.name", "ann", true},
		{"json.items.1.id", "2", true},
		{"json.items.#.id", "[1,2]", true},
		{`json.a\.b`, "dotted", true},
		{"json.s", `q"uote`, true},
		{"json.missing", "", false},
	}
	for _, c := range cases {
		f, err := ParseField(c.field)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := f.Get(m); got != c.want || ok != c.ok {
			t.Errorf("%s: got %q, %v, want %q, %v", c.field, got, ok, c.want, c.ok)
		}
	}
	empty := &Message{Value: []byte("not json")}
	for _, s := range []string{"key", "topic", "header.x", "json.id"} {
		f, _ := ParseField(s)
		if v, ok := f.Get(empty); ok {
			t.Errorf("%s of an empty message: %q, true", s, v)
		}
	}
}
