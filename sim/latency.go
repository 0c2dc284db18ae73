package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration that YAML writes as "20ms" or "1.5s".
type Duration time.Duration

// UnmarshalYAML reads a Go duration string such as "20ms"; negative
// durations are refused.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 20ms", n.Line)
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (want e.g. 20ms or 1.5s)", n.Line, n.Value)
	}
	if v < 0 {
		return fmt.Errorf("line %d: duration %s is negative", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d as "20ms".
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// String is time.Duration's String.
func (d Duration) String() string { return time.Duration(d).String() }

// Latency is a distribution of response delays. Exactly one of its fields is
// set; a nil *Latency means no delay.
type Latency struct {
	Fixed     Duration   `yaml:"fixed,omitempty"`
	Uniform   *Uniform   `yaml:"uniform,omitempty"`
	Normal    *Normal    `yaml:"normal,omitempty"`
	LogNormal *LogNormal `yaml:"lognormal,omitempty"`
}

// Uniform draws delays uniformly from [Min, Max].
type Uniform struct {
	Min Duration `yaml:"min"`
	Max Duration `yaml:"max"`
}

// Normal draws delays from a normal distribution truncated at 0: draws below
// 0 are redrawn, so no delay is negative and there is no spike at 0.
type Normal struct {
	Mean   Duration `yaml:"mean"`
	StdDev Duration `yaml:"stddev"`
}

// LogNormal draws delays from the lognormal distribution with the given
// median and 99th percentile: mu = ln P50, sigma = (ln P99 - ln P50) / z(0.99).
type LogNormal struct {
	P50 Duration `yaml:"p50"`
	P99 Duration `yaml:"p99"`
}

// z99 is the 99th percentile of the standard normal distribution.
const z99 = 2.3263478740408408

// Params returns the lognormal's mu and sigma, in log-nanoseconds.
func (l *LogNormal) Params() (mu, sigma float64) {
	mu = math.Log(float64(l.P50))
	return mu, (math.Log(float64(l.P99)) - mu) / z99
}

// Validate checks that exactly one distribution is set and that its
// durations are positive and ordered.
func (l *Latency) Validate() error {
	if l == nil {
		return nil
	}
	n := 0
	for _, set := range []bool{l.Fixed != 0, l.Uniform != nil, l.Normal != nil, l.LogNormal != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("latency: set exactly one of fixed, uniform, normal or lognormal, with positive durations")
	}
	switch {
	case l.Uniform != nil:
		if u := l.Uniform; u.Min < 0 || u.Max <= u.Min {
			return fmt.Errorf("latency: uniform needs 0 <= min < max, got min %v, max %v", u.Min, u.Max)
		}
	case l.Normal != nil:
		if nd := l.Normal; nd.Mean <= 0 || nd.StdDev <= 0 {
			return fmt.Errorf("latency: normal needs a positive mean and stddev, got mean %v, stddev %v", nd.Mean, nd.StdDev)
		}
	case l.LogNormal != nil:
		if ln := l.LogNormal; ln.P50 <= 0 || ln.P99 <= ln.P50 {
			return fmt.Errorf("latency: lognormal needs 0 < p50 < p99, got p50 %v, p99 %v", ln.P50, ln.P99)
		}
	case l.Fixed < 0:
		return fmt.Errorf("latency: fixed %v is negative", l.Fixed)
	}
	return nil
}

// Sample draws one delay using r. It is safe for concurrent use with distinct
// generators. A nil Latency returns 0 and a fixed one does not use r.
func (l *Latency) Sample(r *rand.Rand) time.Duration {
	switch {
	case l == nil:
		return 0
	case l.Uniform != nil:
		lo, hi := int64(l.Uniform.Min), int64(l.Uniform.Max)
		if hi <= lo {
			return time.Duration(lo)
		}
		return time.Duration(lo + r.Int64N(hi-lo+1))
	case l.Normal != nil:
		mean, sd := float64(l.Normal.Mean), float64(l.Normal.StdDev)
		// With mean > 0 a draw is kept with probability > 1/2, so 64
		// tries fail with probability < 2^-64.
		for range 64 {
			if v := mean + sd*r.NormFloat64(); v >= 0 {
				return toDuration(v)
			}
		}
		return 0
	case l.LogNormal != nil:
		mu, sigma := l.LogNormal.Params()
		return toDuration(math.Exp(mu + sigma*r.NormFloat64()))
	}
	return time.Duration(l.Fixed)
}

// random reports whether Sample uses its generator.
func (l *Latency) random() bool {
	return l != nil && (l.Uniform != nil || l.Normal != nil || l.LogNormal != nil)
}

// toDuration converts nanoseconds, saturating instead of overflowing.
func toDuration(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// String describes the distribution: "fixed 2ms", "lognormal p50=20ms p99=120ms".
func (l *Latency) String() string {
	switch {
	case l == nil:
		return "none"
	case l.Uniform != nil:
		return fmt.Sprintf("uniform %v..%v", l.Uniform.Min, l.Uniform.Max)
	case l.Normal != nil:
		return fmt.Sprintf("normal mean=%v stddev=%v", l.Normal.Mean, l.Normal.StdDev)
	case l.LogNormal != nil:
		return fmt.Sprintf("lognormal p50=%v p99=%v", l.LogNormal.P50, l.LogNormal.P99)
	}
	return "fixed " + l.Fixed.String()
}

// clone copies l deeply, so a server does not share it with its Config.
func (l *Latency) clone() *Latency {
	if l == nil {
		return nil
	}
	c := *l
	if l.Uniform != nil {
		u := *l.Uniform
		c.Uniform = &u
	}
	if l.Normal != nil {
		n := *l.Normal
		c.Normal = &n
	}
	if l.LogNormal != nil {
		ln := *l.LogNormal
		c.LogNormal = &ln
	}
	return &c
}
