package metrics

import "time"

// Status of a run.
const (
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	// A run that has not written its summary: still going, or whose
	// process ended before it finished (kill -9, a lost machine).
	StatusRunning = "running"
	// StatusDegraded is a distributed run that lost a worker: what the
	// others measured is whole, the lost worker's share is missing.
	StatusDegraded = "degraded"
	StatusKilled   = "killed"
)

// Phase is the results of a part of a run: a stage, or setup/teardown.
type Phase struct {
	// Index counts stages from 1; 0 for setup and teardown.
	Index int
	// Name is "vus=10" style for stages, "setup"/"teardown" otherwise.
	Name string
	// Values holds the swept values of a stage, in dimension order.
	Values     []KV
	Start, End time.Time
	Ops        []Op
	Totals     []*Stats
	// Load is what each scenario was asked to do in a stage.
	Load []Load
	// Error is why the phase stopped early, if it did.
	Error string
	// Spans holds each scenario's active time in a stage, for its rates.
	Spans map[string]time.Duration
	// Abandoned counts requests still in flight when an interrupted stage
	// stopped waiting for them: the server may have seen them, perflab did
	// not record them.
	Abandoned int64
	// Limits are the limits of the generator's host that the stage's load
	// could pass, found before it started.
	Limits []HostLimit
	// Processing is what the stage's VUs spent on responses once they had
	// arrived; nil when no step extracts or checks.
	Processing *Processing
}

// Processing is the time VUs spent on responses after their last byte
// arrived: running the extractions and checks of their steps, which no
// latency includes (a step's latency ends with its response). Only HTTP
// steps with extractions or checks count.
type Processing struct {
	// Responses counts the responses processed.
	Responses int64 `json:"responses"`
	// Seconds is the time processing them took, in all; LatencyS the
	// time the responses themselves took, their latencies in all.
	Seconds  float64 `json:"seconds"`
	LatencyS float64 `json:"latency_s"`
}

// Add adds o's to p's.
func (p *Processing) Add(o Processing) {
	p.Responses += o.Responses
	p.Seconds += o.Seconds
	p.LatencyS += o.LatencyS
}

// Kinds of HostLimit.
const (
	// LimitOpenFiles is the process's open-file limit (RLIMIT_NOFILE),
	// less the descriptors it had open.
	LimitOpenFiles = "open_files"
	// LimitLocalPorts is the local (ephemeral) port range: how many
	// connections the host can hold to one destination address.
	LimitLocalPorts = "local_ports"
)

// HostLimit is a limit of the load generator's host that a stage's load
// could pass: the connections beyond it fail, as GeneratorLimit, however
// the system under test is doing.
type HostLimit struct {
	// Kind is LimitOpenFiles or LimitLocalPorts.
	Kind string `json:"kind"`
	// Target is the destination (host:port) of LimitLocalPorts.
	Target string `json:"target,omitempty"`
	// Need is the most sockets the load may hold open at once (to
	// Target); Limit what the host allows.
	Need  int `json:"need"`
	Limit int `json:"limit"`
	// Sentence says it, and what to do.
	Sentence string `json:"sentence"`
}

// Load is a scenario's workload in a stage.
type Load struct {
	Scenario string `json:"scenario"`
	VUs      int    `json:"vus"`
	// Iterations per VU, or TotalIterations shared by all VUs; 0 when unset.
	Iterations      int64         `json:"iterations,omitempty"`
	TotalIterations int64         `json:"total_iterations,omitempty"`
	Duration        time.Duration `json:"-"`
	DurationS       float64       `json:"duration_s,omitempty"`
	RampUpS         float64       `json:"ramp_up_s,omitempty"`
	// Open models: the arrival rate (constant, or the ramp's last target)
	// and the most VUs allowed.
	Open   bool    `json:"open,omitempty"`
	Rate   float64 `json:"rate,omitempty"`
	MaxVUs int     `json:"max_vus,omitempty"`
	// Engine is what ran the scenario's VUs: event_loop or goroutines;
	// EngineWhy says why not the event loop, when it was not.
	Engine    string `json:"engine,omitempty"`
	EngineWhy string `json:"engine_why,omitempty"`
	// Model is the scenario's whole load as the plan, and the command
	// line, gave it: "50 VUs for 5m0s" (a worker's figures above are its
	// share).
	Model string `json:"model,omitempty"`
}

// Planned is the number of iterations the load asks for, 0 if only a
// duration bounds it.
func (l Load) Planned() int64 {
	if l.TotalIterations > 0 {
		return l.TotalIterations
	}
	return l.Iterations * int64(l.VUs)
}

// Due is how many iterations of a scenario were due in a stage whose load
// was loads, given those it completed (count, its scenario operation's)
// and those it dropped, and whether it is an open model. An open model's
// iterations each have a due time: each was started, and counted when it
// ended, or dropped (every VU busy), so count + dropped is the schedule.
// A closed model's VUs loop: no iteration is due at a time and none is
// dropped (due 0, open false). A scenario that dropped iterations is an
// open model whatever loads say (a run whose loads were not kept).
func Due(loads []Load, scenario string, count, dropped int64) (due int64, open bool) {
	open = dropped > 0
	for _, l := range loads {
		if l.Scenario == scenario && l.Open {
			open = true
		}
	}
	if !open {
		return 0, false
	}
	return count + dropped, true
}

// Var is a plan variable's resolved values.
type Var struct {
	Name   string
	Values []string
	Swept  bool
}

// KV is a name and a value, in order.
type KV struct {
	Name, Value string
}

// Elapsed is the phase's wall time.
func (p *Phase) Elapsed() time.Duration { return p.End.Sub(p.Start) }

// PlanFile is a file a plan includes (include:), as it was read. Path is
// where it was found from the plan's directory, names separated by '/'
// (common/login.yaml, ../team/auth.yaml), or its absolute path when the
// plan, or a file it includes by an absolute path, named it so.
type PlanFile struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// MaxPlanIncludes is the most files a plan may include
// (plan.MaxIncludes), and so the most a record of a run may hold.
const MaxPlanIncludes = 100

// Run is the results of a whole run.
type Run struct {
	ID         string
	PlanName   string
	PlanFile   string
	PlanSource []byte
	// PlanIncludes are the files the plan includes, in the order they
	// were read: with PlanSource, the plan whole.
	PlanIncludes []PlanFile
	// Vars are the plan variables as resolved, in plan order; a swept
	// variable has all its values.
	Vars      []Var
	Overrides []KV
	Interval  time.Duration
	Start     time.Time
	End       time.Time
	Status    string
	Error     string
	Setup     []*Phase // one, or one per stage when setup depends on a swept value
	Stages    []*Phase
	Teardown  []*Phase
	// Simulators are the plan's simulators and what each saw.
	Simulators []SimulatorStats
}

// SimulatorStats is what a simulator saw during a run: per route for HTTP
// stubs, message counts for a responder.
type SimulatorStats struct {
	Name      string           `json:"name"`
	Kind      string           `json:"kind"` // http or responder
	Routes    []SimulatorRoute `json:"routes,omitempty"`
	Unmatched int64            `json:"unmatched,omitempty"` // http: requests no route matched
	Received  int64            `json:"received,omitempty"`  // responder: messages consumed
	Matched   int64            `json:"matched,omitempty"`   // of those, the ones its conditions matched
	Replied   int64            `json:"replied,omitempty"`
	Errors    int64            `json:"errors,omitempty"`   // replies the bus did not accept
	Canceled  int64            `json:"canceled,omitempty"` // replies not sent when it stopped
	LastError string           `json:"last_error,omitempty"`
}

// SimulatorRoute is what one HTTP stub route saw.
type SimulatorRoute struct {
	Name           string `json:"name"`
	Requests       int64  `json:"requests"`
	InjectedErrors int64  `json:"injected_errors"`
	Canceled       int64  `json:"canceled"`
}
