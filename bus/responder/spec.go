package responder

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/sim"
)

// DefaultMaxPending is Spec.MaxPending's default.
const DefaultMaxPending = 10000

// Spec defines a responder; see the package documentation for its YAML.
type Spec struct {
	// Topics are consumed; at least one.
	Topics []string `yaml:"topics"`
	// Group, if set, makes the responder a member of this consumer group
	// (Kafka) or queue group (NATS), sharing the requests with its peers.
	Group string `yaml:"group,omitempty"`
	// Match lists the conditions a request must meet to be answered; all
	// must hold. None means every request is answered.
	Match []Condition `yaml:"match,omitempty"`
	Reply Reply       `yaml:"reply"`
	// Latency is the distribution of the delay before each reply; nil is
	// none.
	Latency *sim.Latency `yaml:"latency,omitempty"`
	// Seed seeds the delays' random generator: with one consumer, the n-th
	// matched request always gets the same delay.
	Seed uint64 `yaml:"seed,omitempty"`
	// MaxPending bounds the replies waiting for their delay; at the bound
	// the responder stops consuming until one is sent. The default is
	// DefaultMaxPending.
	MaxPending int `yaml:"max_pending,omitempty"`
}

// Condition is one test of a request.
type Condition struct {
	// Field is key, topic, header.NAME or json.PATH.
	Field string `yaml:"field"`
	// Equals, if set, is the value the field must have; unset, the field
	// must merely be present.
	Equals *string `yaml:"equals,omitempty"`
}

// Reply is the templated reply; see the package documentation.
type Reply struct {
	// Topic is where the reply goes; required.
	Topic   string            `yaml:"topic"`
	Key     string            `yaml:"key,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
	Body    string            `yaml:"body,omitempty"`
}

// Validate checks the spec: topics, fields, templates and latency.
func (s *Spec) Validate() error {
	_, err := s.compile()
	return err
}

// compiled is a validated Spec, ready to run.
type compiled struct {
	conds   []condition
	topic   *template
	key     *template
	headers map[string]*template
	body    *template
}

type condition struct {
	field  bus.Field
	equals *string
}

// matches reports whether m meets every condition.
func (c *compiled) matches(m *bus.Message) bool {
	for _, cond := range c.conds {
		v, ok := cond.field.Get(m)
		if !ok || cond.equals != nil && v != *cond.equals {
			return false
		}
	}
	return true
}

// reply builds the reply to m.
func (c *compiled) reply(m *bus.Message) bus.Message {
	r := bus.Message{Topic: c.topic.expand(m), Key: c.key.expand(m), Value: c.body.appendTo(nil, m)}
	if len(c.headers) > 0 {
		r.Headers = make(map[string]string, len(c.headers))
		for k, t := range c.headers {
			r.Headers[k] = t.expand(m)
		}
	}
	return r
}

func (s *Spec) compile() (*compiled, error) {
	if len(s.Topics) == 0 {
		return nil, errors.New("responder: topics: none given")
	}
	if s.MaxPending < 0 {
		return nil, fmt.Errorf("responder: max_pending %d is negative", s.MaxPending)
	}
	if err := s.Latency.Validate(); err != nil {
		return nil, fmt.Errorf("responder: %w", err)
	}
	c := &compiled{}
	for i, cond := range s.Match {
		f, err := bus.ParseField(cond.Field)
		if err != nil {
			return nil, fmt.Errorf("responder: match %d: %w", i+1, err)
		}
		c.conds = append(c.conds, condition{field: f, equals: cond.Equals})
	}
	if s.Reply.Topic == "" {
		return nil, errors.New("responder: reply: topic is required")
	}
	var err error
	parse := func(what, src string) *template {
		t, perr := parseTemplate(src)
		if perr != nil && err == nil {
			err = fmt.Errorf("responder: reply %s: %w", what, perr)
		}
		return t
	}
	c.topic = parse("topic", s.Reply.Topic)
	c.key = parse("key", s.Reply.Key)
	c.body = parse("body", s.Reply.Body)
	for _, k := range slices.Sorted(maps.Keys(s.Reply.Headers)) {
		if c.headers == nil {
			c.headers = make(map[string]*template, len(s.Reply.Headers))
		}
		c.headers[k] = parse("header "+k, s.Reply.Headers[k])
	}
	return c, err
}
