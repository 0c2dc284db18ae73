package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/internal/inputfile"
)

// DefaultListen is the listen address when a Config gives none: a free
// loopback port.
const DefaultListen = "127.0.0.1:0"

// Config is a simulator definition, usually read from YAML by Load or Parse.
type Config struct {
	// Listen is a loopback host:port; the default is DefaultListen.
	Listen string   `yaml:"listen,omitempty"`
	Routes []*Route `yaml:"routes"`
	// GRPC stubs gRPC methods, on a listener of their own.
	GRPC *GRPC `yaml:"grpc,omitempty"`
}

// Route is one stubbed endpoint.
type Route struct {
	// Name labels the route in Stats and logs; the default is "METHOD PATH".
	Name string `yaml:"name,omitempty"`
	// Method is any HTTP method; the default is GET (which also serves HEAD).
	Method string `yaml:"method,omitempty"`
	// Path is a net/http ServeMux path pattern: /items/{id}, /files/{rest...}.
	Path string `yaml:"path"`
	// Status is the response status; the default is 200.
	Status  int               `yaml:"status,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
	// Body is a template; see the package documentation for its variables.
	Body    string   `yaml:"body,omitempty"`
	Latency *Latency `yaml:"latency,omitempty"`
	Errors  *Errors  `yaml:"errors,omitempty"`
	// Degrade makes the route slower after a while, as a service with a
	// leak does: a longevity test's change point to find.
	Degrade *Degrade `yaml:"degrade,omitempty"`
	// Stall freezes the route for a while, again and again, as a service
	// does in a garbage collector's pause or a failover.
	Stall *Stall `yaml:"stall,omitempty"`
}

// Stall freezes a route for For at the end of every period Every from the
// server's start: a request that arrives while it is frozen is held until
// the freeze ends, then answered as usual.
type Stall struct {
	Every Duration `yaml:"every"`
	For   Duration `yaml:"for"`
}

// Degrade replaces a route's latency once the server has served for After:
// at once, or spread over Over, the latency moving in a straight line from
// the route's own to Latency from After to After + Over (a service whose
// data grows, a leak). At least one of After and Over is positive. With
// For, the route is back to its own latency at After + For (a blip, an
// incident that does not last); For is longer than Over.
type Degrade struct {
	After   Duration `yaml:"after"`
	Over    Duration `yaml:"over,omitempty"`
	Latency *Latency `yaml:"latency"`
	For     Duration `yaml:"for,omitempty"`
}

// Errors injects failures into a share of a route's responses: at random
// (Ratio) or every Every-th request, all along or, with After or For, from
// After to After + For since the server's start (an error burst).
type Errors struct {
	// Ratio is the probability, in [0, 1], that a request fails.
	Ratio float64 `yaml:"ratio"`
	// Every fails the route's requests whose number is a multiple of it
	// (3: the 3rd, 6th, 9th ...), instead of Ratio.
	Every int `yaml:"every,omitempty"`
	// After and For bound the failures in time from the server's start;
	// For zero: from After on.
	After Duration `yaml:"after,omitempty"`
	For   Duration `yaml:"for,omitempty"`
	// Status is the failure's status; the default is 500.
	Status int `yaml:"status,omitempty"`
	// Body is the failure's body, sent as is.
	Body string `yaml:"body,omitempty"`
}

// MaxStubsBytes is the largest simulator file: 4 MiB, as a plan (YAML
// decoded with its positions takes about 12 times the file's size). A
// simulator's bodies are its responses' templates, not data.
const MaxStubsBytes = 4 << 20

// Load reads and validates a simulator file: a regular file of at most
// MaxStubsBytes. Errors start with the path.
func Load(path string) (*Config, error) {
	b, err := inputfile.ReadFile(path, MaxStubsBytes)
	if err != nil {
		return nil, inputfile.Explain(err, "a stubs file may be "+inputfile.FormatSize(MaxStubsBytes))
	}
	return Parse(b, path)
}

// Parse decodes and validates a simulator definition. Unknown fields are
// errors. Errors start with name and, where known, the line.
func Parse(data []byte, name string) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if te, ok := err.(*yaml.TypeError); ok { // "unmarshal errors:\n  line 3: ..."
			msg = strings.Join(te.Errors, "; ")
		}
		return nil, fmt.Errorf("%s: %s", name, msg)
	}
	if c.GRPC != nil {
		c.GRPC.dir = filepath.Dir(name)
	}
	if err := c.validate(nodeLines(data)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// Validate fills in defaults (listen address, route names, methods and
// statuses, error statuses) and checks the configuration: a loopback listen
// address, valid and non-conflicting patterns, bodies whose variables exist,
// latencies and error ratios in range. New calls it.
func (c *Config) Validate() error { return c.validate(yamlLines{}) }

// yamlLines holds the YAML line of the listen value and of each route, for
// errors; zero when unknown.
type yamlLines struct {
	listen int
	routes []int
}

func (l yamlLines) route(i int) int {
	if i < len(l.routes) {
		return l.routes[i]
	}
	return 0
}

// nodeLines finds the lines of listen and of each route. Decode has already
// reported syntax errors, so failures here just mean no line numbers.
func nodeLines(data []byte) yamlLines {
	var doc yaml.Node
	var l yamlLines
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return l
	}
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		switch k, v := m[i].Value, m[i+1]; {
		case k == "listen":
			l.listen = v.Line
		case k == "routes" && v.Kind == yaml.SequenceNode:
			for _, r := range v.Content {
				l.routes = append(l.routes, r.Line)
			}
		}
	}
	return l
}

func atLine(line int, err error) error {
	if line > 0 {
		return fmt.Errorf("line %d: %w", line, err)
	}
	return err
}

func (c *Config) validate(ln yamlLines) error {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if err := CheckLoopback(c.Listen); err != nil {
		return atLine(ln.listen, err)
	}
	if len(c.Routes) == 0 && c.GRPC == nil {
		return errors.New("routes: none defined")
	}
	if c.GRPC != nil {
		if _, err := compileGRPC(c.GRPC); err != nil {
			return err
		}
	}
	seen := make(map[string]int, len(c.Routes))
	for i, r := range c.Routes {
		if r == nil {
			return atLine(ln.route(i), fmt.Errorf("route %d is empty", i+1))
		}
		if _, err := compileRoute(r); err != nil {
			return atLine(ln.route(i), err)
		}
		key := r.Method + " " + r.Path
		if j, dup := seen[key]; dup {
			return atLine(ln.route(i), fmt.Errorf("route %q: duplicate route: %s is also route %d (%q)", r.Name, key, j+1, c.Routes[j].Name))
		}
		seen[key] = i
	}
	if i, err := checkPatterns(c.Routes); err != nil {
		return atLine(ln.route(i), err)
	}
	return nil
}

// CheckLoopback refuses a listen address that is not host:port with a
// loopback host (127.0.0.0/8, ::1 or localhost).
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen %q: want host:port, such as 127.0.0.1:8080", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("listen %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen %q: the simulator serves on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}
