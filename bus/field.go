package bus

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Field names a part of a message: "key", "topic", "header.NAME" or
// "json.PATH" (see the package documentation). The zero Field is invalid;
// make one with ParseField.
type Field struct {
	kind fieldKind
	name string // header name or gjson path
}

type fieldKind uint8

const (
	fieldInvalid fieldKind = iota
	fieldKey
	fieldTopic
	fieldHeader
	fieldJSON
)

// ParseField parses a field name such as "json.order.id".
func ParseField(s string) (Field, error) {
	switch {
	case s == "key":
		return Field{kind: fieldKey}, nil
	case s == "topic":
		return Field{kind: fieldTopic}, nil
	case strings.HasPrefix(s, "header.") && len(s) > len("header."):
		return Field{kind: fieldHeader, name: s[len("header."):]}, nil
	case strings.HasPrefix(s, "json.") && len(s) > len("json."):
		return Field{kind: fieldJSON, name: s[len("json."):]}, nil
	}
	return Field{}, fmt.Errorf("field %q: want key, topic, header.NAME or json.PATH", s)
}

// Get returns the field's value in m and whether m has it: a key or topic
// is present when not empty, a header when set (even to ""), a JSON path
// when it exists in a JSON value.
func (f Field) Get(m *Message) (string, bool) {
	switch f.kind {
	case fieldKey:
		return m.Key, m.Key != ""
	case fieldTopic:
		return m.Topic, m.Topic != ""
	case fieldHeader:
		v, ok := m.Headers[f.name]
		return v, ok
	case fieldJSON:
		r := gjson.GetBytes(m.Value, f.name)
		return r.String(), r.Exists()
	}
	return "", false
}

// String returns the name ParseField parsed.
func (f Field) String() string {
	switch f.kind {
	case fieldKey:
		return "key"
	case fieldTopic:
		return "topic"
	case fieldHeader:
		return "header." + f.name
	case fieldJSON:
		return "json." + f.name
	}
	return "invalid"
}
