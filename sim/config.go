package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/tmpl"
)

// Config is a simulator definition.
type Config struct {
	// Listen is a loopback host:port (default 127.0.0.1:0, a free port).
	Listen string   `yaml:"listen"`
	Routes []*Route `yaml:"routes"`
}

// Route is one stubbed endpoint.
type Route struct {
	Name    string            `yaml:"name"`
	Method  string            `yaml:"method"`
	Path    string            `yaml:"path"`
	Status  int               `yaml:"status"`
	Headers map[string]string `yaml:"headers"`
	Body    string            `yaml:"body"`
	Latency *Latency          `yaml:"latency"`
	Errors  *Errors           `yaml:"errors"`

	body     *tmpl.Template
	readBody bool
}

// Errors injects failures into a share of a route's responses.
type Errors struct {
	Ratio  float64 `yaml:"ratio"`
	Status int     `yaml:"status"`
	Body   string  `yaml:"body"`
}

// Latency is a distribution of response delays; exactly one field is set.
type Latency struct {
	Fixed     Dur        `yaml:"fixed"`
	Uniform   *MinMax    `yaml:"uniform"`
	Normal    *MeanSD    `yaml:"normal"`
	LogNormal *Quantiles `yaml:"lognormal"`

	mu, sigma float64 // lognormal parameters, in log-nanoseconds
}

// Dur is a duration written as "10ms".
type Dur struct{ time.Duration }

// UnmarshalYAML reads "10ms", "1.5s".
func (d *Dur) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: want a duration such as 20ms, got %q", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// MinMax bounds a uniform distribution.
type MinMax struct {
	Min Dur `yaml:"min"`
	Max Dur `yaml:"max"`
}

// MeanSD is a normal distribution, truncated at 0.
type MeanSD struct {
	Mean   Dur `yaml:"mean"`
	StdDev Dur `yaml:"stddev"`
}

// Quantiles gives a lognormal distribution by its median and 99th percentile.
type Quantiles struct {
	P50 Dur `yaml:"p50"`
	P99 Dur `yaml:"p99"`
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// Sample draws one delay.
func (l *Latency) Sample(r *rand.Rand) time.Duration {
	if l == nil {
		return 0
	}
	switch {
	case l.Uniform != nil:
		lo, hi := l.Uniform.Min.Duration, l.Uniform.Max.Duration
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
	case l.Normal != nil:
		v := float64(l.Normal.Mean.Duration) + r.NormFloat64()*float64(l.Normal.StdDev.Duration)
		return time.Duration(math.Max(v, 0))
	case l.LogNormal != nil:
		return time.Duration(math.Exp(l.mu + l.sigma*r.NormFloat64()))
	}
	return l.Fixed.Duration
}

func (l *Latency) check() error {
	n := 0
	if l.Fixed.Duration > 0 {
		n++
	}
	for _, set := range []bool{l.Uniform != nil, l.Normal != nil, l.LogNormal != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("latency: give one of fixed, uniform, normal or lognormal")
	}
	switch {
	case l.Uniform != nil && l.Uniform.Max.Duration < l.Uniform.Min.Duration:
		return errors.New("latency: uniform max is less than min")
	case l.LogNormal != nil:
		p50, p99 := l.LogNormal.P50.Duration, l.LogNormal.P99.Duration
		if p50 <= 0 || p99 <= p50 {
			return errors.New("latency: lognormal needs 0 < p50 < p99")
		}
		l.mu = math.Log(float64(p50))
		l.sigma = (math.Log(float64(p99)) - l.mu) / z99
	}
	return nil
}

// Load reads a simulator file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

var wildcard = regexp.MustCompile(`\{([A-Za-z0-9_]+)(\.\.\.)?\}`)

// Parse decodes and checks a simulator definition; name prefixes errors.
func Parse(data []byte, name string) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

func (c *Config) check() error {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if err := CheckLoopback(c.Listen); err != nil {
		return err
	}
	if len(c.Routes) == 0 {
		return errors.New("routes: none defined")
	}
	seen := map[string]bool{}
	for i, r := range c.Routes {
		if r.Method == "" {
			r.Method = "GET"
		}
		r.Method = strings.ToUpper(r.Method)
		if !strings.HasPrefix(r.Path, "/") {
			return fmt.Errorf("route %d: path %q must start with /", i+1, r.Path)
		}
		if r.Name == "" {
			r.Name = r.Method + " " + r.Path
		}
		key := r.Method + " " + r.Path
		if seen[key] {
			return fmt.Errorf("route %s: %s is defined twice", r.Name, key)
		}
		seen[key] = true
		if r.Status == 0 {
			r.Status = 200
		}
		if r.Status < 100 || r.Status > 599 {
			return fmt.Errorf("route %s: status %d is not an HTTP status", r.Name, r.Status)
		}
		t, err := tmpl.Parse(r.Body)
		if err != nil {
			return fmt.Errorf("route %s: body: %w", r.Name, err)
		}
		params := map[string]bool{}
		for _, m := range wildcard.FindAllStringSubmatch(r.Path, -1) {
			params[m[1]] = true
		}
		for _, ref := range t.Refs() {
			switch {
			case ref.Name == "body":
				r.readBody = true
			case ref.Name == "method" || ref.Name == "path" || ref.Name == "route" || ref.Name == "count",
				strings.HasPrefix(ref.Name, "query."), strings.HasPrefix(ref.Name, "header."):
			case strings.HasPrefix(ref.Name, "path."):
				if !params[strings.TrimPrefix(ref.Name, "path.")] && !ref.HasFallback {
					return fmt.Errorf("route %s: body uses ${%s} but the path has no {%s}", r.Name, ref.Name, strings.TrimPrefix(ref.Name, "path."))
				}
			default:
				if !ref.HasFallback {
					return fmt.Errorf("route %s: body uses undefined ${%s} (use path.NAME, query.NAME, header.NAME, method, path, body, route or count)", r.Name, ref.Name)
				}
			}
		}
		r.body = t
		if r.Latency != nil {
			if err := r.Latency.check(); err != nil {
				return fmt.Errorf("route %s: %w", r.Name, err)
			}
		}
		if e := r.Errors; e != nil {
			if e.Ratio < 0 || e.Ratio > 1 {
				return fmt.Errorf("route %s: errors.ratio %v is not between 0 and 1", r.Name, e.Ratio)
			}
			if e.Status == 0 {
				e.Status = 500
			}
		}
	}
	return nil
}

// CheckLoopback refuses any listen address that is not on this machine's
// loopback interface.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen %q: the simulator serves on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}
