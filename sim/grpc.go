package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/perflab/perflab/protoschema"
	"github.com/perflab/perflab/tmpl"
)

// GRPC is a simulator's gRPC stubs: methods of the services its .proto
// files describe, each answered with a templated message after a drawn
// latency, on a listener of their own.
//
//	grpc:
//	  listen: 127.0.0.1:50051      # default 127.0.0.1:0
//	  protos: [shop.proto]         # relative to the stubs file (or import_paths)
//	  methods:
//	    - method: shop.Shop/GetItem
//	      response: '{"id": "${request.id}", "name": "item ${request.id}"}'
//	      latency: {fixed: 2ms}
//	      errors: {ratio: 0.01, code: 14, message: unavailable}
//	    - method: shop.Shop/ListItems
//	      stream: 5                # a server-streaming method's messages a call
//
// A response is a template of the message in the protobuf JSON mapping:
// ${request.PATH} is a field of the request (a JSON path; of the last
// message a client streamed), ${metadata.NAME} the request's metadata,
// ${count} the method's call number from 1, ${index} a streamed message's
// number from 0. An unset response is the empty message. The server
// answers reflection, so a plan can take its schema from it.
type GRPC struct {
	Listen      string        `yaml:"listen,omitempty"`
	Protos      []string      `yaml:"protos"`
	ImportPaths []string      `yaml:"import_paths,omitempty"`
	Methods     []*GRPCMethod `yaml:"methods"`
	// dir is the stubs file's directory, for relative paths (Load).
	dir string
}

// GRPCMethod is one stubbed method.
type GRPCMethod struct {
	// Name labels the method in Stats; the default is the method.
	Name string `yaml:"name,omitempty"`
	// Method is package.Service/Method.
	Method   string      `yaml:"method"`
	Response string      `yaml:"response,omitempty"`
	Stream   int         `yaml:"stream,omitempty"`
	Latency  *Latency    `yaml:"latency,omitempty"`
	Errors   *GRPCErrors `yaml:"errors,omitempty"`
}

// GRPCErrors injects a status into a share of a method's calls.
type GRPCErrors struct {
	Ratio   float64 `yaml:"ratio"`
	Code    int     `yaml:"code"` // default 14 UNAVAILABLE
	Message string  `yaml:"message,omitempty"`
}

// grpcMethod is a GRPCMethod compiled.
type grpcMethod struct {
	route    // latency, errors, counters and seed, as an HTTP route's
	desc     protoreflect.MethodDescriptor
	response *tmpl.Template
	stream   int
	code     codes.Code
	message  string
}

// grpcSim is the compiled stubs and their server.
type grpcSim struct {
	listen  string
	schema  *protoschema.Schema
	methods []*grpcMethod
	srv     *grpc.Server
	ln      net.Listener
}

// compileGRPC checks and compiles the stubs.
func compileGRPC(g *GRPC) (*grpcSim, error) {
	if g.Listen == "" {
		g.Listen = DefaultListen
	}
	if err := CheckLoopback(g.Listen); err != nil {
		return nil, fmt.Errorf("grpc: %w", err)
	}
	if len(g.Protos) == 0 || len(g.Methods) == 0 {
		return nil, errors.New("grpc: protos (the services' .proto files) and methods are required")
	}
	paths := []string{g.dir}
	if len(g.ImportPaths) > 0 {
		paths = nil
		for _, p := range g.ImportPaths {
			if !filepath.IsAbs(p) {
				p = filepath.Join(g.dir, p)
			}
			paths = append(paths, p)
		}
	}
	schema, err := protoschema.Compile(context.Background(), g.Protos, paths)
	if err != nil {
		return nil, fmt.Errorf("grpc.protos: %w", err)
	}
	gs := &grpcSim{listen: g.Listen, schema: schema}
	seen := map[string]bool{}
	for i, m := range g.Methods {
		svc, name, ok := strings.Cut(m.Method, "/")
		if !ok {
			return nil, fmt.Errorf("grpc method %d: method %q: want package.Service/Method", i+1, m.Method)
		}
		md, err := schema.Method(svc, name)
		if err != nil {
			return nil, fmt.Errorf("grpc method %d: %w", i+1, err)
		}
		if seen[m.Method] {
			return nil, fmt.Errorf("grpc method %d: %s is stubbed twice", i+1, m.Method)
		}
		seen[m.Method] = true
		gm := &grpcMethod{desc: md, stream: max(m.Stream, 1), code: codes.Unavailable}
		gm.name, gm.method, gm.path = m.Name, "GRPC", protoschema.FullMethod(md)
		if gm.name == "" {
			gm.name = m.Method
		}
		if m.Stream < 0 || m.Stream > 0 && !md.IsStreamingServer() {
			return nil, fmt.Errorf("grpc method %s: stream %d: only a server-streaming method streams messages", m.Method, m.Stream)
		}
		resp := m.Response
		if resp == "" {
			resp = "{}"
		}
		if gm.response, err = tmpl.Parse(resp); err != nil {
			return nil, fmt.Errorf("grpc method %s: response: %w", m.Method, err)
		}
		if gm.response.IsLiteral() {
			if err := protojson.Unmarshal([]byte(resp), dynamicpb.NewMessage(md.Output())); err != nil {
				return nil, fmt.Errorf("grpc method %s: response is not a %s: %v", m.Method, md.Output().FullName(), err)
			}
		}
		gm.latency = m.Latency
		if err := gm.latency.Validate(); err != nil {
			return nil, fmt.Errorf("grpc method %s: %w", m.Method, err)
		}
		if e := m.Errors; e != nil {
			if e.Ratio < 0 || e.Ratio > 1 {
				return nil, fmt.Errorf("grpc method %s: errors.ratio %g: want 0 to 1", m.Method, e.Ratio)
			}
			if e.Code != 0 {
				if e.Code < 1 || e.Code > 16 {
					return nil, fmt.Errorf("grpc method %s: errors.code %d: want a gRPC status code 1 to 16", m.Method, e.Code)
				}
				gm.code = codes.Code(e.Code)
			}
			gm.errRatio, gm.message = e.Ratio, e.Message
			if gm.message == "" {
				gm.message = "injected failure"
			}
		}
		gm.random = gm.latency.random() || gm.errRatio > 0
		gs.methods = append(gs.methods, gm)
	}
	return gs, nil
}

// start listens and serves the stubbed services, and reflection.
func (gs *grpcSim) start(seed uint64) error {
	ln, err := net.Listen("tcp", gs.listen)
	if err != nil {
		return fmt.Errorf("sim: grpc: %w", err)
	}
	gs.ln = ln
	gs.srv = grpc.NewServer()
	services := map[string]*grpc.ServiceDesc{}
	var order []string
	for _, m := range gs.methods {
		m.seed = mix64(seed ^ fnv64(m.path))
		m.stallFrom.Store(time.Now().UnixNano())
		svc := string(m.desc.Parent().FullName())
		sd := services[svc]
		if sd == nil {
			sd = &grpc.ServiceDesc{ServiceName: svc, HandlerType: (*any)(nil)}
			services[svc] = sd
			order = append(order, svc)
		}
		if !m.desc.IsStreamingClient() && !m.desc.IsStreamingServer() {
			sd.Methods = append(sd.Methods, grpc.MethodDesc{MethodName: string(m.desc.Name()), Handler: m.unary})
		} else {
			sd.Streams = append(sd.Streams, grpc.StreamDesc{StreamName: string(m.desc.Name()), Handler: m.streamHandler,
				ServerStreams: m.desc.IsStreamingServer(), ClientStreams: m.desc.IsStreamingClient()})
		}
	}
	for _, svc := range order {
		gs.srv.RegisterService(services[svc], struct{}{})
	}
	// Reflection, v1 and v1alpha, of the stubs' own descriptors.
	opts := reflection.ServerOptions{Services: gs.srv, DescriptorResolver: gs.schema.Files(), ExtensionResolver: protoregistry.GlobalTypes}
	rpb.RegisterServerReflectionServer(gs.srv, reflection.NewServerV1(opts))
	rpbalpha.RegisterServerReflectionServer(gs.srv, reflection.NewServer(opts))
	go gs.srv.Serve(ln)
	return nil
}

// stop stops serving: calls in progress get until ctx ends.
func (gs *grpcSim) stop(ctx context.Context) {
	if gs.srv == nil {
		return
	}
	done := make(chan struct{})
	go func() { gs.srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		gs.srv.Stop()
	}
}

// call waits the drawn latency (and any stall) and says whether the call
// fails by injection; a call whose client went away is counted canceled.
func (m *grpcMethod) call(ctx context.Context) (n int64, err error) {
	n = m.requests.Add(1)
	d, fail := m.draw(n)
	d += m.frozen()
	if d > 0 && !sleep(ctx, d) {
		m.canceled.Add(1)
		return n, status.FromContextError(ctx.Err()).Err()
	}
	if fail {
		m.injected.Add(1)
		return n, status.Error(m.code, m.message)
	}
	return n, nil
}

// reply is the response's message for a request (JSON of the request
// message, "" if none) of call n, streamed message index.
func (m *grpcMethod) reply(ctx context.Context, req proto.Message, n int64, index int) (proto.Message, error) {
	var reqJSON, reqProtoNames []byte
	md, _ := metadata.FromIncomingContext(ctx)
	lookup := tmpl.LookupFunc(func(name string) (string, bool) {
		switch {
		case name == "count":
			return strconv.FormatInt(n, 10), true
		case name == "index":
			return strconv.Itoa(index), true
		case strings.HasPrefix(name, "request."):
			// A field by its JSON name (itemId) or its proto name (item_id).
			path := strings.TrimPrefix(name, "request.")
			if reqJSON == nil && req != nil {
				reqJSON, _ = protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(req)
			}
			r := gjson.GetBytes(reqJSON, path)
			if !r.Exists() && req != nil {
				if reqProtoNames == nil {
					reqProtoNames, _ = protojson.MarshalOptions{EmitUnpopulated: true, UseProtoNames: true}.Marshal(req)
				}
				r = gjson.GetBytes(reqProtoNames, path)
			}
			return r.String(), true
		case strings.HasPrefix(name, "metadata."):
			v := md.Get(strings.TrimPrefix(name, "metadata."))
			if len(v) == 0 {
				return "", true
			}
			return v[0], true
		}
		return "", false
	})
	js, err := m.response.Expand(lookup)
	if err != nil {
		return nil, status.Error(codes.Internal, "sim: response: "+err.Error())
	}
	out := dynamicpb.NewMessage(m.desc.Output())
	if err := protojson.Unmarshal([]byte(js), out); err != nil {
		return nil, status.Errorf(codes.Internal, "sim: the response is not a %s: %v", m.desc.Output().FullName(), err)
	}
	return out, nil
}

func (m *grpcMethod) unary(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	req := dynamicpb.NewMessage(m.desc.Input())
	if err := dec(req); err != nil {
		return nil, err
	}
	n, err := m.call(ctx)
	if err != nil {
		return nil, err
	}
	return m.reply(ctx, req, n, 0)
}

func (m *grpcMethod) streamHandler(_ any, s grpc.ServerStream) error {
	ctx := s.Context()
	var last proto.Message
	n := int64(0)
	recv := func() (proto.Message, error) {
		req := dynamicpb.NewMessage(m.desc.Input())
		if err := s.RecvMsg(req); err != nil {
			return nil, err
		}
		return req, nil
	}
	switch {
	case m.desc.IsStreamingClient() && m.desc.IsStreamingServer(): // each message answered
		var err error
		if n, err = m.call(ctx); err != nil {
			return err
		}
		for i := 0; ; i++ {
			req, err := recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			out, err := m.reply(ctx, req, n, i)
			if err != nil {
				return err
			}
			if err := s.SendMsg(out); err != nil {
				return err
			}
		}
	case m.desc.IsStreamingClient(): // the messages, then one answer
		for {
			req, err := recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			last = req
		}
		n, err := m.call(ctx)
		if err != nil {
			return err
		}
		out, err := m.reply(ctx, last, n, 0)
		if err != nil {
			return err
		}
		return s.SendMsg(out)
	default: // one request, stream messages
		req, err := recv()
		if err != nil {
			return err
		}
		if n, err = m.call(ctx); err != nil {
			return err
		}
		for i := range m.stream {
			out, err := m.reply(ctx, req, n, i)
			if err != nil {
				return err
			}
			if err := s.SendMsg(out); err != nil {
				return err
			}
		}
		return nil
	}
}
