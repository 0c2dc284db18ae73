// Package pdp is a small event-driven rules engine to load-test, modelled
// on ONAP's Drools policy decision point as its performance report tests it
// (README.md): it accepts onset events over REST, asks a dependency (A&AI,
// over REST) about the target, for some use cases asks a controller (APPC)
// over the message bus and waits for its answer, publishes the outcome on a
// completion topic, and writes one audit line per processed event with its
// start and end times.
//
// Its dependencies are what perflab's simulators stand in for: HTTP stubs
// for A&AI and a message responder for APPC (examples/pdp/plan.yaml).
package pdp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/perflab/perflab/bus"
)

// Topics the service uses.
const (
	TopicAPPCRequest  = "appc-request"
	TopicAPPCResponse = "appc-response"
	TopicCompletion   = "policy-cl-mgt"
)

// Config configures a Service.
type Config struct {
	// Listen is the REST address (default 127.0.0.1:0).
	Listen string
	// Bus carries APPC requests and responses and the completions.
	Bus bus.Conn
	// AAI is the base URL of A&AI.
	AAI string
	// Audit receives one line per processed event:
	// START END requestId=ID useCase=UC outcome=OUTCOME (RFC 3339 times).
	Audit io.Writer
	// Workers process events concurrently (default 10).
	Workers int
	// APPCTimeout bounds the wait for APPC (default 10s).
	APPCTimeout time.Duration
}

// Event is an onset event.
type Event struct {
	RequestID string `json:"requestId"`
	UseCase   string `json:"useCase"`
}

// useCases are the rules: how much work each does, and whether it asks
// APPC (vCPE and vFirewall restart or reconfigure a VNF; vDNS and VoLTE
// only scale or notify).
var useCases = map[string]struct {
	rounds int // SHA-256 rounds of rule evaluation
	appc   string
}{
	"vCPE":      {rounds: 2000, appc: "Restart"},
	"vFirewall": {rounds: 6000, appc: "ModifyConfig"},
	"vDNS":      {rounds: 1000},
	"VOLTE":     {rounds: 1000},
}

// Service is a running rules engine.
type Service struct {
	cfg     Config
	ln      net.Listener
	srv     *http.Server
	awaiter *bus.Awaiter
	events  chan Event
	wg      sync.WaitGroup
	auditMu sync.Mutex
	client  *http.Client
}

// Start subscribes to APPC's responses, starts the workers and serves REST.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.APPCTimeout <= 0 {
		cfg.APPCTimeout = 10 * time.Second
	}
	if cfg.Audit == nil {
		cfg.Audit = io.Discard
	}
	sub, err := cfg.Bus.Subscribe(ctx, []string{TopicAPPCResponse}, "")
	if err != nil {
		return nil, fmt.Errorf("pdp: subscribing to %s: %w", TopicAPPCResponse, err)
	}
	field, _ := bus.ParseField("json.requestId")
	s := &Service{cfg: cfg, awaiter: bus.NewAwaiter(sub, bus.AwaiterConfig{Key: field.Get}),
		events: make(chan Event, 10000), client: &http.Client{Timeout: 10 * time.Second}}
	if s.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		s.awaiter.Close()
		return nil, fmt.Errorf("pdp: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events/onset", s.onset)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	for range cfg.Workers {
		s.wg.Add(1)
		go s.work(context.WithoutCancel(ctx))
	}
	go s.srv.Serve(s.ln)
	return s, nil
}

// URL is the REST base URL.
func (s *Service) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops serving (waiting for the requests in progress, so that none
// queues an event after the queue closes), finishes the queued events and
// stops.
func (s *Service) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	close(s.events)
	s.wg.Wait()
	s.awaiter.Close()
	return err
}

// onset accepts an event: 202, processed asynchronously.
func (s *Service) onset(w http.ResponseWriter, r *http.Request) {
	var ev Event
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.RequestID == "" {
		http.Error(w, `{"error":"want {\"requestId\": ..., \"useCase\": ...}"}`, http.StatusBadRequest)
		return
	}
	if _, ok := useCases[ev.UseCase]; !ok {
		http.Error(w, `{"error":"unknown useCase"}`, http.StatusBadRequest)
		return
	}
	select {
	case s.events <- ev:
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
	}
}

func (s *Service) work(ctx context.Context) {
	defer s.wg.Done()
	for ev := range s.events {
		start := time.Now()
		outcome, err := s.process(ctx, ev)
		if err != nil {
			outcome = "FAILURE"
		}
		end := time.Now()
		// The audit record is written before the completion is announced, so
		// that a test reading the log when its last completion arrives finds
		// every record. Failed events leave none, as a crashed rule would.
		if err == nil {
			s.auditMu.Lock()
			fmt.Fprintf(s.cfg.Audit, "%s %s requestId=%s useCase=%s outcome=%s\n",
				start.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano), ev.RequestID, ev.UseCase, outcome)
			s.auditMu.Unlock()
		}
		body, _ := json.Marshal(map[string]string{"requestId": ev.RequestID, "useCase": ev.UseCase, "outcome": outcome})
		s.cfg.Bus.Publish(ctx, bus.Message{Topic: TopicCompletion, Key: ev.RequestID, Value: body})
	}
}

// process runs an event's rules.
func (s *Service) process(ctx context.Context, ev Event) (string, error) {
	uc := useCases[ev.UseCase]
	resp, err := s.client.Get(s.cfg.AAI + "/aai/v1/network/generic-vnfs/" + url.PathEscape(ev.UseCase) + "?requestId=" + url.QueryEscape(ev.RequestID))
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("A&AI: status %d", resp.StatusCode)
	}
	evaluate(ev.RequestID, uc.rounds)
	if uc.appc == "" {
		return "SUCCESS", nil
	}
	w, err := s.awaiter.Register(ev.RequestID)
	if err != nil {
		return "", err
	}
	req, _ := json.Marshal(map[string]string{"requestId": ev.RequestID, "action": uc.appc})
	if err := s.cfg.Bus.Publish(ctx, bus.Message{Topic: TopicAPPCRequest, Key: ev.RequestID, Value: req}); err != nil {
		w.Cancel()
		return "", err
	}
	m, err := w.Wait(ctx, s.cfg.APPCTimeout)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(m.Value, []byte(`"SUCCESS"`)) {
		return "", errors.New("APPC did not succeed")
	}
	return "SUCCESS", nil
}

// evaluate stands for rule evaluation: CPU work in proportion to rounds.
func evaluate(id string, rounds int) {
	h := sha256.Sum256([]byte(id))
	for range rounds {
		h = sha256.Sum256(h[:])
	}
}
