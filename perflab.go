// Package perflab runs perflab's load tests from Go: the same plans, the
// same statistics (HDR histograms, per operation, per stage, per interval),
// the same run directory, history and reports as the perflab command.
//
// Its use beside the command is embedded mode, as the CPS basic load test
// (examples/cps) runs one flow twice, in-process through the service's own
// API and over REST: bind a plan's steps, by name, to Go functions, and the
// same plan runs with those steps as in-process calls instead of requests.
// A step with `call: NAME` (no url) runs only from Go. The two runs compare
// with `perflab compare` like any others.
//
//	p, _ := perflab.LoadPlan("plan.yaml")
//	res, err := perflab.Run(ctx, p, perflab.Options{
//		Steps: map[string]perflab.StepFunc{
//			"create anchor": func(ctx context.Context, vu *perflab.VU) error {
//				return store.CreateAnchor(ctx, "ds", fmt.Sprintf("a-%d-%d", vu.ID(), vu.Iteration()))
//			},
//		},
//		Labels: map[string]string{"mode": "embedded"},
//	})
//
// A step function's duration is the step's latency; its error, the
// step's failure (kind "other", or a *StepError's kind). Through the VU it
// reads the plan's variables and data rows as ${name} would, and sets
// variables for later steps, as an extraction does.
package perflab

import (
	"context"
	"fmt"
	"io"

	"github.com/perflab/perflab/engine"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/plan"
)

// A Plan is a validated plan.
type Plan = plan.Plan

// VU is what a step function sees of its virtual user.
type VU = engine.VU

// StepFunc is a step run in-process.
type StepFunc = engine.StepFunc

// StepError gives a step function's failure an error kind of the results,
// such as "timeout" or "check_failed".
type StepError = engine.StepError

// Result is a finished run: its id, directory, summary (as summary.json)
// and Outcome.
type Result = lab.Result

// Outcome is how a run ended.
type Outcome = lab.Outcome

// Outcomes.
const (
	Completed        = lab.Completed        // the load ran to its end
	ThresholdsFailed = lab.ThresholdsFailed // a threshold of the plan failed
	Interrupted      = lab.Interrupted      // ctx was cancelled; results are written
	Failed           = lab.Failed           // the run could not complete, or its results were not all recorded (Result.Err says why)
)

// LoadPlan reads and validates a plan file. set overrides plan variables
// as the command's --set does: "users=20", or "users=[1,5,20]" to sweep.
func LoadPlan(path string, set ...string) (*Plan, error) {
	o, err := overrides(set)
	if err != nil {
		return nil, err
	}
	return plan.Load(path, plan.Options{Set: o})
}

// ParsePlan reads and validates a plan from its YAML text; name is used in
// error messages as the file's name.
func ParsePlan(src []byte, name string, set ...string) (*Plan, error) {
	o, err := overrides(set)
	if err != nil {
		return nil, err
	}
	return plan.Parse(src, name, plan.Options{Set: o})
}

func overrides(set []string) ([]plan.Override, error) {
	var out []plan.Override
	for _, s := range set {
		o, err := plan.ParseOverride(s)
		if err != nil {
			return nil, fmt.Errorf("Set: %w", err)
		}
		out = append(out, o)
	}
	return out, nil
}

// Options say which steps run in-process and where the run is recorded.
type Options struct {
	// Steps bind step names (or call steps' names) to Go functions.
	Steps map[string]StepFunc
	// Out is the directory under which the run directory is written
	// (default runs); Store the run history (default Out/perflab.db, a
	// postgres:// URL, or off).
	Out, Store string
	// Labels label the run in the history, such as mode=embedded.
	Labels map[string]string
	// Stdout receives the result tables, Stderr progress lines (both
	// default to discarding).
	Stdout, Stderr io.Writer
}

// Run runs the plan and records it as `perflab run` does. Cancelling ctx
// stops the load; teardown still runs and what was measured is written.
// The error is non-nil when the run directory could not be written.
func Run(ctx context.Context, p *Plan, o Options) (*Result, error) {
	progress := "none"
	if o.Stderr != nil {
		progress = "plain"
	}
	return lab.Run(ctx, p, lab.Config{Out: o.Out, Store: o.Store, Labels: o.Labels, Progress: progress,
		Stdout: o.Stdout, Stderr: o.Stderr, Steps: o.Steps})
}
