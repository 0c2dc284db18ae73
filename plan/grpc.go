package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/perflab/perflab/protoschema"
)

// GRPCOptions are what a plan's gRPC steps share.
type GRPCOptions struct {
	Pos Pos `yaml:"-"`
	// Target is the server's HOST:PORT (or any gRPC target name, such as
	// dns:///HOST:PORT), unless a step names its own.
	Target *Text `yaml:"target"`
	// Protos are the .proto files of the services, found under
	// ImportPaths (default: the plan's directory); compiled at load.
	Protos      []string `yaml:"protos"`
	ImportPaths []string `yaml:"import_paths"`
	// Reflection asks the server for its services' descriptors at the
	// start of the run, when the plan has no protos.
	Reflection bool `yaml:"reflection"`
	// TLS calls over TLS, with http.ca_file and http.insecure_skip_verify;
	// plaintext (h2c) otherwise.
	TLS bool `yaml:"tls"`
	// Connections is how many connections to each target the VUs share,
	// calls spread over them in turn (default 1: HTTP/2 carries many
	// calls at once).
	Connections    int `yaml:"connections"`
	ConnectionsPos Pos `yaml:"-"`
	// Timeout is a call's deadline unless a step gives its own (default
	// http.timeout).
	Timeout Duration `yaml:"timeout"`

	// Schema is the protos', compiled by Load; nil with Reflection.
	Schema *protoschema.Schema `yaml:"-"`
	// Files are the proto files read, relative to the plan's directory.
	Files []string `yaml:"-"`
}

// GRPCCall is a step that calls a gRPC method.
type GRPCCall struct {
	Pos Pos `yaml:"-"`
	// Target overrides grpc.target.
	Target *Text `yaml:"target"`
	// Service is the service's full name (package.Service), Method one of
	// its methods.
	Service string `yaml:"service"`
	Method  string `yaml:"method"`
	// Message is the request (the protobuf JSON mapping, written as YAML,
	// with placeholders); Messages the requests a client-streaming or
	// bidirectional call sends, in order.
	Message  *JSONDoc   `yaml:"message"`
	Messages []*JSONDoc `yaml:"messages"`
	// Metadata are sent with the call.
	Metadata []Pair `yaml:"metadata"`
	// Deadline bounds the call (default grpc.timeout).
	Deadline Duration `yaml:"deadline"`

	// Desc is the method, resolved against the schema (ResolveGRPC).
	Desc protoreflect.MethodDescriptor `yaml:"-"`
}

// grpcOptions checks the plan's gRPC options and compiles its protos.
func (v *validator) grpcOptions() {
	g := v.p.GRPC
	if g == nil {
		return
	}
	if g.Target != nil {
		v.refs(g.Target, nil)
	}
	if g.Connections < 0 || g.Connections > 1000 || g.Connections == 0 && g.ConnectionsPos.Line != 0 {
		v.at(g.ConnectionsPos, "grpc.connections %d: want 1 to 1000", g.Connections)
	}
	if g.Connections == 0 {
		g.Connections = 1
	}
	v.timeout("grpc.timeout", g.Timeout, "http.timeout")
	if g.Timeout.D == 0 {
		g.Timeout.D = v.p.HTTP.Timeout.D
	}
	switch {
	case len(g.Protos) > 0 && g.Reflection:
		v.at(g.Pos, "grpc: give protos or reflection, not both")
	case len(g.Protos) == 0 && !g.Reflection:
		v.at(g.Pos, "grpc: give protos (the services' .proto files) or reflection: true (ask the server)")
	case len(g.Protos) > 0:
		paths := []string{v.dir}
		if len(g.ImportPaths) > 0 {
			paths = nil
			for _, ip := range g.ImportPaths {
				paths = append(paths, v.path(ip))
			}
		}
		s, err := protoschema.Compile(context.Background(), g.Protos, paths)
		if err != nil {
			v.at(g.Pos, "grpc.protos: %v", err)
			return
		}
		g.Schema = s
		g.Files = v.protoFiles(s, paths)
	}
}

// protoFiles are the schema's files found on disk under paths, relative
// to the plan's directory (for a plan taken elsewhere: perflab k8s).
func (v *validator) protoFiles(s *protoschema.Schema, paths []string) []string {
	var out []string
	for _, f := range s.Paths() {
		for _, dir := range paths {
			full := filepath.Join(dir, f)
			if _, err := os.Stat(full); err == nil {
				if rel, err := filepath.Rel(v.dir, full); err == nil {
					out = append(out, rel)
				}
				break
			}
		}
	}
	return out
}

// grpcStep checks a gRPC step; against the schema when the plan has one.
func (v *validator) grpcStep(st *Step, sc *scope, where string) {
	g := st.GRPC
	if st.Name == "" {
		st.Name = g.Service + "/" + g.Method
		v.unnamed[st] = true
	}
	who := "step " + st.Name
	switch {
	case v.p.GRPC == nil:
		v.at(g.Pos, "%s: a grpc step needs the plan's grpc options (protos or reflection, a target)", who)
		return
	case g.Service == "" || g.Method == "":
		v.at(g.Pos, "%s: grpc needs service (package.Service) and method", who)
		return
	case g.Target == nil && v.p.GRPC.Target == nil:
		v.at(g.Pos, "%s: no target: give grpc.target (HOST:PORT), or the step's own", who)
	case g.Message != nil && len(g.Messages) > 0:
		v.at(g.Pos, "%s: give message (one request) or messages (a stream of them), not both", who)
	}
	if st.Repeat != nil {
		v.at(st.Repeat.Pos, "%s: repeat is for HTTP requests in setup and teardown", who)
	}
	if st.URL != nil || st.Body != nil || st.JSON != nil || st.Form != nil || len(st.Headers) > 0 || len(st.Query) > 0 {
		v.at(st.Pos, "%s: url, body, json, form, headers and query are for HTTP requests: a grpc step has message and metadata", who)
	}
	v.refs(g.Target, sc)
	for _, m := range g.Metadata {
		v.refs(m.Value, sc)
	}
	for _, m := range append([]*JSONDoc{g.Message}, g.Messages...) {
		if m != nil {
			v.refs(m.Text, sc)
		}
	}
	v.extracts(st, sc) // before the checks, which may read what it extracts
	if c := st.Check; c != nil {
		for _, code := range c.Status {
			if code < 0 || code > 16 {
				v.at(c.Pos, "%s: status %d is not a gRPC status code (0 OK to 16 UNAUTHENTICATED)", who, code)
			}
		}
		if len(c.BodyContains) > 0 {
			v.at(c.Pos, "%s: body_contains is for HTTP bodies: check the response's fields with json", who)
		}
		v.checks(c, who, sc, false)
	}
	v.refs(st.Correlate, sc)
	if s := v.p.GRPC.Schema; s != nil {
		for _, e := range resolveCall(st.Name, g, s) {
			v.at(Pos{Line: e.Line, Col: e.Col}, "%s", e.Msg)
		}
	}
}

// ResolveGRPC resolves every gRPC step's method against a schema (a
// server's, by reflection) and checks its messages: the errors name each
// problem's place in the plan.
func (p *Plan) ResolveGRPC(s *protoschema.Schema) error {
	var errs ErrorList
	p.EachStep(func(st *Step) {
		if st.GRPC != nil {
			for _, e := range resolveCall(st.Name, st.GRPC, s) {
				errs = append(errs, &Error{File: p.File, Line: e.Line, Col: e.Col, Msg: e.Msg})
			}
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// EachStep calls f with every step of the plan, once each: setup's, the
// scenarios' and teardown's, and the steps they hold (a transaction's, a
// block's, a fragment's, an else, a choice's branches).
func (p *Plan) EachStep(f func(*Step)) {
	seen := map[*Step]bool{}
	all := slices.Clip(p.Setup)
	for _, sc := range p.Scenarios {
		all = append(all, sc.Flow...)
	}
	eachStep(append(all, p.Teardown...), func(st *Step) {
		if !seen[st] {
			seen[st] = true
			f(st)
		}
	})
}

// resolveCall finds a call's method and checks its messages.
func resolveCall(name string, g *GRPCCall, s *protoschema.Schema) []Error {
	who := "step " + name
	at := func(pos Pos, msg string) Error { return Error{Line: pos.Line, Col: pos.Col, Msg: who + ": " + msg} }
	md, err := s.Method(g.Service, g.Method)
	if err != nil {
		msg := err.Error()
		var nf *protoschema.NotFound
		if errors.As(err, &nf) {
			msg += suggest(nf.Name, nf.Known)
		}
		return []Error{at(g.Pos, msg)}
	}
	g.Desc = md
	var out []Error
	streams := md.IsStreamingClient()
	switch {
	case !streams && len(g.Messages) > 0:
		out = append(out, at(g.Pos, fmt.Sprintf("%s is %s: it takes one message, not messages", protoschema.FullMethod(md), kindWord(md))))
	case streams && g.Message != nil:
		// A stream of one message.
		g.Messages, g.Message = []*JSONDoc{g.Message}, nil
	}
	for _, m := range append([]*JSONDoc{g.Message}, g.Messages...) {
		if m == nil || m.Node == nil {
			continue
		}
		for _, pr := range protoschema.Check(md.Input(), m.Node) {
			msg := pr.Msg
			if pr.NotFound != nil {
				msg += suggest(pr.NotFound.Name, pr.NotFound.Known)
			}
			out = append(out, at(Pos{Line: pr.Line, Col: pr.Col}, msg))
		}
	}
	return out
}

func kindWord(md protoreflect.MethodDescriptor) string {
	switch k := protoschema.Kind(md); k {
	case "unary":
		return "unary"
	default:
		return strings.ReplaceAll(k, "bidi", "bidirectional") + "-streaming"
	}
}
