package engine

import (
	"context"
	"errors"
	"time"

	"github.com/perflab/perflab/metrics"
	phttp "github.com/perflab/perflab/protocol/http"
)

// StepFunc is a step run in-process (embedded mode): bound by the step's
// name, it runs instead of the step's request, or serves a call step. Its
// duration is the step's latency; a non-nil error is its failure, of kind
// "other" unless the error is (or wraps) a *StepError.
type StepFunc func(ctx context.Context, vu *VU) error

// StepError is a step function's failure with a kind of its own, such as
// "timeout" or "check_failed" (the error kinds of the results).
type StepError struct {
	Kind string
	Err  error
}

func (e *StepError) Error() string { return e.Kind + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// VU is what a step function sees of its virtual user: its number, the
// iteration, and its variables (the plan's, data rows, extracted values),
// which it may also set for later steps.
type VU struct{ v *vars }

// ID is the VU's number, from 1 within its scenario.
func (u *VU) ID() int { return u.v.vu }

// Iteration is the current iteration, from 0.
func (u *VU) Iteration() int64 { return u.v.iteration }

// Scenario is the scenario's name.
func (u *VU) Scenario() string { return u.v.scenario }

// Var looks a name up as a ${name} placeholder would.
func (u *VU) Var(name string) (string, bool) { return u.v.Lookup(name) }

// SetVar sets a variable for the VU's later steps, as an extraction does.
func (u *VU) SetVar(name, value string) { u.v.Set(name, value) }

// call runs a bound step function, timed like a request, and classifies
// its error.
func call(ctx context.Context, f StepFunc, v *vars) phttp.Result {
	res := phttp.Result{Start: time.Now()}
	err := f(ctx, &VU{v})
	res.Latency = time.Since(res.Start)
	if err == nil {
		return res
	}
	res.Err, res.Detail = metrics.Other, err.Error()
	var se *StepError
	if errors.As(err, &se) {
		if k, ok := metrics.ParseErrKind(se.Kind); ok {
			res.Err = k
		}
	}
	return res
}
