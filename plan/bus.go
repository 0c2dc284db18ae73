package plan

import (
	"github.com/perflab/perflab/bus/responder"
	"github.com/perflab/perflab/logcorr"
)

// Bus is a message bus that steps publish to and await messages from, and
// that message simulators answer on.
type Bus struct {
	Pos  Pos    `yaml:"-"`
	Name string `yaml:"name"`
	// URL is kafka://HOST:PORT[,HOST:PORT], nats://HOST:PORT or mem://NAME
	// (an in-process bus, for trying a plan out).
	URL *Text `yaml:"url"`
	// Topics are created before the run when the bus has topics to create
	// and they are missing (Kafka; with Partitions each, default 1).
	Topics     []string `yaml:"topics"`
	Partitions int      `yaml:"partitions"`
}

// Simulator is a dependency of the system under test that perflab runs
// beside the load, from before setup to after teardown: HTTP stubs, or a
// responder that answers messages on a bus. Each reports what it saw.
type Simulator struct {
	Pos  Pos    `yaml:"-"`
	Name string `yaml:"name"`
	// HTTP serves stubs (the format of `perflab sim`).
	HTTP *HTTPSimulator `yaml:"http"`
	// Bus and Responder answer matching messages with templated replies
	// after a drawn latency.
	Bus       string          `yaml:"bus"`
	Responder *responder.Spec `yaml:"responder"`
}

// HTTPSimulator serves a stubs file on an address.
type HTTPSimulator struct {
	Pos Pos `yaml:"-"`
	// Listen is HOST:PORT; required, so that the plan's steps and target
	// can name it.
	Listen string `yaml:"listen"`
	// Stubs is the stubs file, relative to the plan; it may name a plan
	// variable (stubs-${release}.yaml), resolved at load.
	Stubs string `yaml:"stubs"`
	// Seed fixes the simulator's random latencies and errors.
	Seed int64 `yaml:"seed"`
}

// Publish is a step that publishes one message.
type Publish struct {
	Pos     Pos      `yaml:"-"`
	Bus     string   `yaml:"bus"`
	Topic   *Text    `yaml:"topic"`
	Key     *Text    `yaml:"key"`
	Headers []Pair   `yaml:"headers"`
	Body    *Text    `yaml:"body"`
	JSON    *JSONDoc `yaml:"json"`
}

// Await is a step that waits for a message on a topic whose field Match
// (key, header.NAME or json.PATH) equals Equals, such as the request id an
// earlier step extracted. One subscription per scenario and topic feeds
// every waiting VU; a message that arrives before its VU waits is held for
// a while (5 s), so the step may come after the one that causes it.
type Await struct {
	Pos     Pos      `yaml:"-"`
	Bus     string   `yaml:"bus"`
	Topic   string   `yaml:"topic"`
	Match   string   `yaml:"match"`
	Equals  *Text    `yaml:"equals"`
	Timeout Duration `yaml:"timeout"`
}

// LogSource is a set of the service's log files (paths or globs, relative
// to the plan) and the pattern that finds a request's processing in them.
type LogSource struct {
	Pos     Pos             `yaml:"-"`
	Files   []string        `yaml:"files"`
	Pattern logcorr.Pattern `yaml:"pattern"`
}
