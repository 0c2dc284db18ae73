package responder

import (
	"bytes"
	"github.com/perflab/perflab/sim"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// exampleYAML is the package documentation's example.
const exampleYAML = `
topics: [orders]
group: responders
match:
  - {field: json.type, equals: order}
  - {field: header.reply-to}
reply:
  topic: ${header.reply-to}
  key: ${key}
  headers: {correlation-id: '${json.id}'}
  body: '{"id":"${json.id}","status":"accepted"}'
latency:
  lognormal: {p50: 20ms, p99: 120ms}
seed: 1
max_pending: 10000
`

func decode(t *testing.T, src string) (Spec, error) {
	t.Helper()
	var s Spec
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	err := dec.Decode(&s)
	return s, err
}

func TestSpecYAML(t *testing.T) {
	s, err := decode(t, exampleYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Match[0].Equals == nil || *s.Match[0].Equals != "order" || s.Match[1].Equals != nil ||
		s.Reply.Topic != "${header.reply-to}" || time.Duration(s.Latency.LogNormal.P99) != 120*time.Millisecond {
		t.Fatalf("decoded %+v", s)
	}
	var out bytes.Buffer
	if err := yaml.NewEncoder(&out).Encode(&s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "p99: 120ms") {
		t.Errorf("encoded latency as %s", out.String())
	}
	for _, c := range []struct{ src, want string }{
		{"latency: {fixed: soon}", `"soon" is not a duration`},
		{"latency: {fixed: -1ms}", "duration -1ms is negative"},
		{"latency: {fixed: [1]}", "want a duration"},
		{"reply: {topc: x}", "field topc not found"},
	} {
		if _, err := decode(t, c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decode %q: %v, want %q", c.src, err, c.want)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	valid := func() Spec {
		return Spec{Topics: []string{"in"}, Reply: Reply{Topic: "out"}}
	}
	for _, c := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Topics = nil }, "topics: none given"},
		{func(s *Spec) { s.Reply.Topic = "" }, "reply: topic is required"},
		{func(s *Spec) { s.MaxPending = -1 }, "max_pending -1 is negative"},
		{func(s *Spec) { s.Match = []Condition{{Field: "key"}, {Field: "body"}} }, `match 2: field "body"`},
		{func(s *Spec) { s.Reply.Body = "${json.id" }, "reply body: offset 0: unterminated"},
		{func(s *Spec) { s.Reply.Headers = map[string]string{"h": "${x}"} }, `reply header h: offset 0: field "x"`},
		{func(s *Spec) { s.Latency = &sim.Latency{} }, "latency: set exactly one of"},
	} {
		s := valid()
		c.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want an error containing %q", err, c.want)
		}
	}
	s := valid()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}
