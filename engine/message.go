package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/responder"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	pgrpc "github.com/perflab/perflab/protocol/grpc"
	phttp "github.com/perflab/perflab/protocol/http"
	pws "github.com/perflab/perflab/protocol/ws"
	"github.com/perflab/perflab/sim"
	"github.com/perflab/perflab/tmpl"

	// The buses a plan can name.
	_ "github.com/perflab/perflab/bus/kafka"
	_ "github.com/perflab/perflab/bus/mem"
	_ "github.com/perflab/perflab/bus/nats"
)

// DefaultAwaitTimeout bounds an await step without a timeout of its own.
const DefaultAwaitTimeout = 30 * time.Second

// messaging is a run's message buses and simulators: dialled and started
// before setup, closed after teardown.
type messaging struct {
	conns map[string]bus.Conn
	sims  []*runningSim
	// grpc is the client of the plan's gRPC steps.
	grpc *pgrpc.Client
	// ws opens the WebSocket steps' connections.
	ws *pws.Dialer
}

type runningSim struct {
	name string
	http *sim.Server
	resp *responder.Responder
}

// startMessaging dials the plan's buses and starts its simulators. On an
// error, what was started is stopped again.
func startMessaging(ctx context.Context, p *plan.Plan, seed uint64) (*messaging, error) {
	m := &messaging{conns: map[string]bus.Conn{}}
	vars := p.VarsFor(plan.Stage{})
	lookup := tmpl.LookupFunc(func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
	if p.HasWS() {
		m.ws = newWSDialer(p)
	}
	if p.GRPC != nil {
		if err := m.startGRPC(ctx, p, lookup); err != nil {
			m.close()
			return nil, err
		}
	}
	for _, b := range p.Buses {
		url, err := b.URL.T.Expand(lookup)
		if err == nil {
			var c bus.Conn
			if c, err = bus.Dial(ctx, url); err == nil {
				m.conns[b.Name] = c
				if err = createTopics(ctx, c, b); err == nil {
					continue
				}
			}
		}
		m.close()
		return nil, fmt.Errorf("bus %s: %w", b.Name, err)
	}
	for i, s := range p.Simulators {
		rs := &runningSim{name: s.Name}
		var err error
		switch {
		case s.HTTP != nil:
			var cfg *sim.Config // Stubs was resolved against the plan's directory by Load
			if cfg, err = sim.Load(s.HTTP.Stubs); err == nil {
				cfg.Listen = s.HTTP.Listen
				seedOpt := sim.WithSeed(s.HTTP.Seed)
				if s.HTTP.Seed == 0 {
					seedOpt = sim.WithSeed(int64(seed) + int64(i))
				}
				if rs.http, err = sim.New(cfg, seedOpt); err == nil {
					err = rs.http.Start()
				}
			}
		default:
			spec := *s.Responder
			if spec.Seed == 0 {
				spec.Seed = seed + uint64(i)
			}
			rs.resp, err = responder.Start(context.WithoutCancel(ctx), m.conns[s.Bus], spec)
		}
		if err != nil {
			m.close()
			return nil, fmt.Errorf("simulator %s: %w", s.Name, err)
		}
		m.sims = append(m.sims, rs)
	}
	return m, nil
}

// topicCreator is a bus on which topics are created (Kafka).
type topicCreator interface {
	CreateTopic(ctx context.Context, topic string, partitions int32) error
}

// createTopics creates a bus's topics that are missing, where the bus has
// topics to create.
func createTopics(ctx context.Context, c bus.Conn, b *plan.Bus) error {
	tc, ok := c.(topicCreator)
	if !ok {
		return nil
	}
	for _, t := range b.Topics {
		if err := tc.CreateTopic(ctx, t, int32(max(b.Partitions, 1))); err != nil {
			return err
		}
	}
	return nil
}

// close stops the simulators and closes the buses, and returns what each
// simulator saw.
func (m *messaging) close() []metrics.SimulatorStats {
	var out []metrics.SimulatorStats
	for _, s := range m.sims {
		st := metrics.SimulatorStats{Name: s.name}
		if s.http != nil {
			s.http.Close()
			st.Kind = "http"
			for _, r := range s.http.Stats() {
				st.Routes = append(st.Routes, metrics.SimulatorRoute{Name: r.Name, Requests: r.Requests, InjectedErrors: r.InjectedErrors, Canceled: r.Canceled})
			}
			st.Unmatched = s.http.Unmatched()
		} else {
			closeErr := s.resp.Close()
			rs := s.resp.Stats()
			st.Kind = "responder"
			st.Received, st.Matched, st.Replied, st.Errors, st.Canceled = int64(rs.Received), int64(rs.Matched), int64(rs.Replied), int64(rs.Errors), int64(rs.Canceled)
			st.LastError = rs.LastError
			if closeErr != nil { // it stopped answering during the run: say why
				st.LastError = "stopped consuming: " + closeErr.Error()
			}
		}
		out = append(out, st)
	}
	for _, c := range m.conns {
		c.Close()
	}
	if m.grpc != nil {
		m.grpc.Close()
	}
	return out
}

// msgStep is a compiled publish or await step.
type msgStep struct {
	name    string
	pub     *plan.Publish
	await   *plan.Await
	conn    bus.Conn
	awaiter *bus.Awaiter // set for the stage by openAwaiters
	timeout time.Duration
	extract phttp.Extracts
}

func compileMessage(m *messaging, st *plan.Step) (*msgStep, error) {
	ms := &msgStep{name: st.Name, pub: st.Publish, await: st.Await}
	busName := ""
	if ms.pub != nil {
		busName = ms.pub.Bus
	} else {
		busName = ms.await.Bus
		ms.timeout = ms.await.Timeout.D
		if ms.timeout <= 0 {
			ms.timeout = DefaultAwaitTimeout
		}
		var err error
		if ms.extract, err = phttp.CompileExtracts(st.Name, st.Extract); err != nil {
			return nil, err
		}
	}
	if m != nil {
		ms.conn = m.conns[busName]
	}
	if ms.conn == nil {
		return nil, fmt.Errorf("step %s: bus %s is not open", st.Name, busName)
	}
	return ms, nil
}

// awaitKey identifies the subscription an await step needs: one per
// scenario, bus, topic and match field.
type awaitKey struct{ scenario, bus, topic, match string }

// openAwaiters subscribes, before any VU starts, for every await step of a
// stage's scenarios, so that no reply is missed; close them at the end.
func openAwaiters(ctx context.Context, scens []*scenario) (func(), error) {
	open := map[awaitKey]*bus.Awaiter{}
	closeAll := func() {
		for _, a := range open {
			a.Close()
		}
	}
	walk := func(scen string, nodes []*node) (err error) {
		each(nodes, func(n *node) {
			if err != nil || n.msg == nil || n.msg.await == nil {
				return
			}
			a := n.msg.await
			k := awaitKey{scen, a.Bus, a.Topic, a.Match}
			if aw := open[k]; aw != nil {
				n.msg.awaiter = aw
				return
			}
			field, ferr := bus.ParseField(a.Match)
			if ferr != nil {
				err = ferr
				return
			}
			sub, serr := n.msg.conn.Subscribe(ctx, []string{a.Topic}, "")
			if serr != nil {
				err = fmt.Errorf("step %s: subscribing to %s: %w", n.msg.name, a.Topic, serr)
				return
			}
			aw := bus.NewAwaiter(sub, bus.AwaiterConfig{Key: field.Get})
			open[k] = aw
			n.msg.awaiter = aw
		})
		return err
	}
	for _, s := range scens {
		if err := walk(s.sc.Name, s.nodes); err != nil {
			closeAll()
			return nil, err
		}
	}
	return closeAll, nil
}

// do publishes or awaits one message for a VU. An await's latency runs
// from the step's start to the moment perflab's consumer received the
// message (zero when it came before the step began).
func (ms *msgStep) do(ctx context.Context, vars *vars) phttp.Result {
	res := phttp.Result{Start: time.Now()}
	fail := func(kind metrics.ErrKind, err error, timed bool) phttp.Result {
		if timed {
			res.Latency = time.Since(res.Start)
		}
		res.Err, res.Detail = kind, err.Error()
		return res
	}
	if ms.pub != nil {
		msg, err := ms.message(vars)
		if err != nil {
			return fail(metrics.NotSent, err, false)
		}
		if err := ms.conn.Publish(ctx, msg); err != nil {
			return fail(metrics.Publish, err, true)
		}
		res.Latency = time.Since(res.Start)
		return res
	}
	key, err := ms.await.Equals.T.Expand(vars)
	if err != nil {
		return fail(metrics.NotSent, err, false)
	}
	w, err := ms.awaiter.Register(key)
	if err != nil {
		return fail(metrics.Other, err, false)
	}
	msg, err := w.Wait(ctx, ms.timeout)
	switch {
	case errors.Is(err, bus.ErrTimeout):
		return fail(metrics.Timeout, err, true)
	case err != nil:
		return fail(metrics.Other, err, true)
	}
	res.Latency = max(msg.Received.Sub(res.Start), 0)
	header := func(name string) ([]byte, bool) {
		v, ok := msg.Headers[name]
		return []byte(v), ok
	}
	res.Err, res.Detail = ms.extract.Apply(header, msg.Value, vars)
	return res
}

// message builds a publish step's message from the VU's variables.
func (ms *msgStep) message(vars *vars) (bus.Message, error) {
	p := ms.pub
	var m bus.Message
	var err error
	expand := func(t *plan.Text) string {
		if t == nil || err != nil {
			return ""
		}
		var s string
		s, err = t.T.Expand(vars)
		return s
	}
	m.Topic, m.Key = expand(p.Topic), expand(p.Key)
	switch {
	case p.JSON != nil:
		body := expand(p.JSON.Text)
		if err == nil && !json.Valid([]byte(body)) {
			err = fmt.Errorf("step %s: json body is not valid JSON after expansion", ms.name)
		}
		m.Value = []byte(body)
	case p.Body != nil:
		m.Value = []byte(expand(p.Body))
	}
	for _, h := range p.Headers {
		if m.Headers == nil {
			m.Headers = make(map[string]string, len(p.Headers))
		}
		m.Headers[h.Name] = expand(h.Value)
	}
	return m, err
}
