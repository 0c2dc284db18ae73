package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// Kinds of monitor, the values of Spec.Kind.
const (
	KindProcess    = "process"
	KindCgroup     = "cgroup"
	KindJVM        = "jvm"
	KindPrometheus = "prometheus"
	KindPostgres   = "postgres"
	KindHost       = "host"
)

// DefaultSlowThreshold is a postgres monitor's SlowThreshold when the spec
// leaves it zero.
const DefaultSlowThreshold = 100 * time.Millisecond

// Spec is one monitor as declared in a plan.
type Spec struct {
	Name string `yaml:"name"` // label in reports, e.g. "api", "db", "host"; default: Kind
	Kind string `yaml:"kind"` // one of the Kind constants

	// process and jvm: exactly one of a PID, a regular expression matched
	// against the command line (arguments joined by spaces), or a command
	// that Open starts and Close stops.
	PID     int      `yaml:"pid"`
	Pattern string   `yaml:"pattern"`
	Command []string `yaml:"command"`
	// Ready, with Command, is a URL polled after the command starts until
	// it answers (any HTTP status), before the run begins: the system
	// under test started by perflab is up.
	Ready string `yaml:"ready"`

	// cgroup: a cgroup v2 directory, absolute or relative to the cgroup2
	// mount, e.g. /sys/fs/cgroup/system.slice/foo.service.
	Path string `yaml:"path"`

	// prometheus: the endpoint, and the series kept, each a metric name or
	// name{label="value",...}.
	URL    string   `yaml:"url"`
	Series []string `yaml:"series"`

	// postgres: a pgx connection string, and the mean execution time above
	// which a statement is listed as slow (DefaultSlowThreshold if zero).
	DSN           string        `yaml:"dsn"`
	SlowThreshold time.Duration `yaml:"slow_threshold"`
}

// Point is one sampled value.
type Point struct {
	Time    time.Time `json:"time"`
	Monitor string    `json:"monitor"` // Spec.Name
	Metric  string    `json:"metric"`  // see the package documentation
	Value   float64   `json:"value"`
}

// Final is what a monitor reports once, at the end of a run.
type Final struct {
	Monitor string `json:"monitor"`
	// Postgres: statements executed between Open and Close, and those of
	// them whose mean execution time exceeded the threshold, the largest
	// total time first.
	Statements      int         `json:"statements"`
	SlowThresholdMS float64     `json:"slow_threshold_ms"`
	SlowQueries     []SlowQuery `json:"slow_queries"`
}

// SlowQuery is one row of the slow-query table: a normalized statement as
// pg_stat_statements shows it, and its figures during the run.
type SlowQuery struct {
	Monitor  string  `json:"monitor"`
	Database string  `json:"database"`
	Query    string  `json:"query"`
	Calls    int64   `json:"calls"`
	MeanMS   float64 `json:"mean_ms"`
	TotalMS  float64 `json:"total_ms"`
}

// Monitor is an open collector. Sample and Close are never called
// concurrently: a Sampler calls Sample from a goroutine of the monitor's own,
// once per interval, then Close once.
type Monitor interface {
	Spec() Spec
	// Sample reads the source once; now is the time stamp of its points.
	// It may return points together with an error (a partial sample, such
	// as a process whose open files cannot be counted).
	Sample(ctx context.Context, now time.Time) ([]Point, error)
	// Close ends the monitor: it stops a command that Open started and
	// returns what is reported once per run (nil when there is nothing).
	Close(ctx context.Context) (*Final, error)
}

// Open validates s and opens its monitor. It starts s.Command, if any, and a
// postgres monitor takes its first pg_stat_statements snapshot: Open is
// called just before the load starts. A source that is unreachable later
// shows as errors from Sample.
func Open(ctx context.Context, s Spec) (Monitor, error) {
	if s.Name == "" {
		s.Name = s.Kind
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var (
		m   Monitor
		err error
	)
	switch s.Kind {
	case KindProcess:
		m, err = openProcess(s)
	case KindJVM:
		m, err = openJVM(ctx, s)
	case KindCgroup:
		m, err = openCgroup(s)
	case KindHost:
		m, err = openHost(s)
	case KindPrometheus:
		m, err = openProm(s)
	case KindPostgres:
		m, err = openPostgres(ctx, s)
	}
	if err != nil {
		return nil, fmt.Errorf("monitor %s: %w", s.Name, err)
	}
	return m, nil
}

// Validate checks a spec without opening anything.
func (s Spec) Validate() error {
	name := s.Name
	if name == "" {
		name = s.Kind
	}
	err := s.validate()
	if err != nil {
		return fmt.Errorf("monitor %s: %w", name, err)
	}
	return nil
}

func (s Spec) validate() error {
	switch s.Kind {
	case KindProcess, KindJVM:
		n := 0
		for _, set := range []bool{s.PID != 0, s.Pattern != "", len(s.Command) > 0} {
			if set {
				n++
			}
		}
		if n != 1 {
			return errors.New("needs exactly one of pid, pattern and command")
		}
		if s.PID < 0 {
			return fmt.Errorf("pid %d is not a process id", s.PID)
		}
		if _, err := regexp.Compile(s.Pattern); err != nil {
			return fmt.Errorf("pattern: %w", err)
		}
		if s.Ready != "" && len(s.Command) == 0 {
			return errors.New("ready is for a command perflab starts")
		}
	case KindCgroup:
		if s.Path == "" {
			return errors.New("needs path, the cgroup v2 directory")
		}
	case KindHost:
	case KindPrometheus:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q is not an http(s) URL", s.URL)
		}
		if len(s.Series) == 0 {
			return errors.New("needs series, the metric names to keep")
		}
		for _, text := range s.Series {
			if _, err := parseSelector(text); err != nil {
				return err
			}
		}
	case KindPostgres:
		if s.DSN == "" {
			return errors.New("needs dsn, the database to watch")
		}
		if s.SlowThreshold < 0 {
			return errors.New("slow_threshold is negative")
		}
	case "":
		return errors.New("needs kind: process, cgroup, jvm, prometheus, postgres or host")
	default:
		return fmt.Errorf("unknown kind %q: process, cgroup, jvm, prometheus, postgres or host", s.Kind)
	}
	return nil
}

// points builds a sample's points with a common time and monitor.
type points struct {
	now     time.Time
	monitor string
	list    []Point
}

func (p *points) add(metric string, v float64) {
	p.list = append(p.list, Point{Time: p.now, Monitor: p.monitor, Metric: metric, Value: v})
}
