package grpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
	"github.com/perflab/perflab/protoschema"
	"github.com/perflab/perflab/tmpl"
)

// Call is a grpc step compiled for calling.
type Call struct {
	Name     string
	target   *tmpl.Template
	method   string // /pkg.Service/Method
	desc     protoreflect.MethodDescriptor
	stream   *grpc.StreamDesc // nil for a unary call
	messages []*tmpl.Template
	metadata []pair
	deadline time.Duration
	accept   []int // accepted status codes; nil: OK only
	checks   phttp.JSONChecks
	extract  phttp.Extracts
	// body: the response is needed as JSON (checks, extractions).
	body bool
	// literal holds the messages' wire bytes when they have no
	// placeholder: marshalled once.
	literal []any
}

type pair struct {
	name  string
	value *tmpl.Template
}

// Compile builds a call from a plan step whose method the plan resolved
// (GRPCCall.Desc). target is grpc.target, deadline grpc.timeout; a step's
// own override them.
func Compile(st *plan.Step, target *plan.Text, deadline time.Duration) (*Call, error) {
	g := st.GRPC
	if g.Desc == nil {
		return nil, fmt.Errorf("step %s: method %s/%s is not resolved against a schema", st.Name, g.Service, g.Method)
	}
	c := &Call{Name: st.Name, desc: g.Desc, method: protoschema.FullMethod(g.Desc), deadline: deadline}
	if g.Target != nil {
		target = g.Target
	}
	if target == nil {
		return nil, fmt.Errorf("step %s: no target", st.Name)
	}
	c.target = target.T
	if g.Deadline.D > 0 {
		c.deadline = g.Deadline.D
	}
	if g.Desc.IsStreamingClient() || g.Desc.IsStreamingServer() {
		c.stream = &grpc.StreamDesc{StreamName: string(g.Desc.Name()), ClientStreams: g.Desc.IsStreamingClient(), ServerStreams: g.Desc.IsStreamingServer()}
	}
	switch {
	case g.Message != nil:
		c.messages = []*tmpl.Template{g.Message.Text.T}
	case len(g.Messages) > 0:
		for _, m := range g.Messages {
			c.messages = append(c.messages, m.Text.T)
		}
	case !g.Desc.IsStreamingClient():
		c.messages = []*tmpl.Template{tmpl.MustParse("{}")}
	}
	for _, m := range g.Metadata {
		c.metadata = append(c.metadata, pair{strings.ToLower(m.Name), m.Value.T})
	}
	var err error
	if c.extract, err = phttp.CompileExtracts(st.Name, st.Extract); err != nil {
		return nil, err
	}
	if ck := st.Check; ck != nil {
		c.accept = ck.Status
		if c.checks, err = phttp.CompileJSONChecks(ck.JSON); err != nil {
			return nil, err
		}
	}
	c.body = len(c.checks) > 0 || len(c.extract) > 0
	literal := len(c.messages) > 0
	for _, t := range c.messages {
		literal = literal && t.IsLiteral()
	}
	if literal {
		for _, t := range c.messages {
			js, err := t.Expand(tmpl.LookupFunc(func(string) (string, bool) { return "", false }))
			if err != nil {
				return nil, err
			}
			m := dynamicpb.NewMessage(c.desc.Input())
			if err := protojson.Unmarshal([]byte(js), m); err != nil {
				return nil, fmt.Errorf("step %s: the message is not a %s: %v", st.Name, c.desc.Input().FullName(), err)
			}
			r, err := marshalOnce(m)
			if err != nil {
				return nil, err
			}
			c.literal = append(c.literal, r)
		}
	}
	return c, nil
}

// Target is the target the call dials and its host:port, as far as a
// stage's variables tell them: "" when a VU's values do; addr is "" too
// for a target that is no TCP address (unix:PATH).
func (c *Call) Target(vars map[string]string) (target, addr string) {
	target, err := c.target.Expand(tmpl.LookupFunc(func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}))
	if err != nil {
		return "", ""
	}
	addr = target
	scheme, rest, _ := strings.Cut(target, ":")
	switch {
	case scheme == "unix" || scheme == "unix-abstract":
		return target, ""
	case strings.HasPrefix(rest, "//"): // scheme://[authority]/host:port, as grpc.NewClient names targets
		_, addr, _ = strings.Cut(rest[2:], "/")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "443") // gRPC's default port
	}
	return target, addr
}

// Result is a call's outcome: its Latency runs from the call's start to
// its status; a streaming response's First is the time to its first
// message (Messages of them).
type Result struct {
	phttp.Result
	Code     codes.Code
	First    time.Duration
	Messages int
}

// Streams reports whether the server streams its response.
func (c *Call) Streams() bool { return c.stream != nil && c.stream.ServerStreams }

// Do makes the call with a VU's variables. It ends with ctx (the load's
// end), or at its deadline.
func (c *Call) Do(ctx context.Context, cl *Client, vars phttp.Vars) Result {
	var res Result
	target, err := c.target.Expand(vars)
	if err != nil {
		res.Err, res.Detail = metrics.NotSent, err.Error()
		return res
	}
	reqs := c.literal
	if reqs == nil {
		reqs = make([]any, 0, len(c.messages))
		for _, t := range c.messages {
			js, err := t.Expand(vars)
			if err != nil {
				res.Err, res.Detail = metrics.NotSent, err.Error()
				return res
			}
			m := dynamicpb.NewMessage(c.desc.Input())
			if err := protojson.Unmarshal([]byte(js), m); err != nil {
				res.Err, res.Detail = metrics.NotSent, fmt.Sprintf("the message is not a %s: %v", c.desc.Input().FullName(), err)
				return res
			}
			reqs = append(reqs, m)
		}
	}
	var md metadata.MD
	for _, p := range c.metadata {
		v, err := p.value.Expand(vars)
		if err != nil {
			res.Err, res.Detail = metrics.NotSent, err.Error()
			return res
		}
		md = metadata.Join(md, metadata.Pairs(p.name, v))
	}
	conn, err := cl.Conn(target)
	if err != nil {
		res.Err, res.Detail = metrics.NotSent, err.Error()
		return res
	}
	cctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	if md != nil {
		cctx = metadata.NewOutgoingContext(cctx, md)
	}
	var header, trailer metadata.MD
	var resps []proto.Message
	res.Start = time.Now()
	if c.stream == nil {
		if c.body {
			resp := dynamicpb.NewMessage(c.desc.Output())
			err = conn.Invoke(cctx, c.method, reqs[0], resp, grpc.ForceCodecV2(rawCodec), grpc.Header(&header), grpc.Trailer(&trailer))
			if err == nil {
				resps = append(resps, resp)
				res.Bytes = proto.Size(resp)
			}
		} else { // nothing reads the response: its size is counted
			var resp raw
			err = conn.Invoke(cctx, c.method, reqs[0], &resp, grpc.ForceCodecV2(rawCodec))
			res.Bytes = resp.n
		}
	} else {
		resps, header, trailer, err = c.streamCall(cctx, conn, reqs, &res)
	}
	res.Latency = time.Since(res.Start)
	c.judge(&res, err, header, trailer, resps, vars)
	return res
}

// streamCall sends reqs on a stream, closes its sending side, and reads
// every response until the status.
func (c *Call) streamCall(ctx context.Context, conn *grpc.ClientConn, reqs []any, res *Result) (resps []proto.Message, header, trailer metadata.MD, err error) {
	s, err := conn.NewStream(ctx, c.stream, c.method, grpc.ForceCodecV2(rawCodec))
	if err != nil {
		return nil, nil, nil, err
	}
	send := func() error {
		for _, m := range reqs {
			if err := s.SendMsg(m); err != nil {
				if errors.Is(err, io.EOF) {
					break // the server ended the call: RecvMsg gives its status
				}
				return err
			}
		}
		return s.CloseSend()
	}
	var sent chan error
	if c.stream.ClientStreams && c.stream.ServerStreams {
		// A bidirectional call sends while it receives: a server that
		// answers each message would otherwise wait for a reader once its
		// answers fill the stream's window, and the client for it.
		sent = make(chan error, 1)
		go func() { sent <- send() }()
	} else if err := send(); err != nil {
		return nil, nil, nil, err
	}
	for {
		if !c.body { // nothing reads the messages: their sizes are counted
			var m raw
			if err = s.RecvMsg(&m); err != nil {
				break
			}
			res.Bytes += m.n
		} else {
			m := dynamicpb.NewMessage(c.desc.Output())
			if err = s.RecvMsg(m); err != nil {
				break
			}
			res.Bytes += proto.Size(m)
			resps = append(resps, m)
		}
		if res.Messages == 0 {
			res.First = time.Since(res.Start)
		}
		res.Messages++
	}
	header, _ = s.Header()
	trailer = s.Trailer()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if sent != nil {
		// The call has its status: a send still blocked ends with it.
		if serr := <-sent; err == nil && serr != nil {
			err = serr
		}
	}
	return resps, header, trailer, err
}

// judge sets the result's error kind: the status's, unless the step
// accepts it; then its checks and extractions on the response as JSON
// (a streaming response's messages as a JSON array).
func (c *Call) judge(res *Result, err error, header, trailer metadata.MD, resps []proto.Message, vars phttp.Vars) {
	st, _ := status.FromError(err)
	res.Code = st.Code()
	if !c.accepts(int(res.Code)) {
		res.Err, res.Detail = kindOf(st), "status "+strings.ToUpper(codeName(st.Code()))+": "+st.Message()
		if res.Code == codes.OK { // a step that expects a failure: a success is not what it checks for
			res.Err, res.Detail = metrics.CheckFailed, "status OK, which the step does not accept"
		}
		return
	}
	if !c.body {
		return
	}
	body, jerr := c.json(resps)
	if jerr != nil {
		res.Err, res.Detail = metrics.Read, jerr.Error()
		return
	}
	md := func(name string) ([]byte, bool) {
		name = strings.ToLower(name)
		for _, m := range []metadata.MD{header, trailer} {
			if v := m.Get(name); len(v) > 0 {
				return []byte(v[0]), true
			}
		}
		return nil, false
	}
	res.Err, res.Detail = phttp.Judge(c.extract, c.checks, md, body, vars)
}

var jsonOut = protojson.MarshalOptions{EmitUnpopulated: true}

// json is the response as JSON: a message, or a stream's as an array.
func (c *Call) json(resps []proto.Message) ([]byte, error) {
	if !c.Streams() {
		if len(resps) == 0 {
			return []byte("{}"), nil
		}
		return jsonOut.Marshal(resps[0])
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range resps {
		if i > 0 {
			b.WriteByte(',')
		}
		js, err := jsonOut.Marshal(m)
		if err != nil {
			return nil, err
		}
		b.Write(js)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

func (c *Call) accepts(code int) bool {
	if c.accept == nil {
		return code == 0
	}
	for _, a := range c.accept {
		if a == code {
			return true
		}
	}
	return false
}

// kindOf is the error kind of a status: its code's, except that an
// UNAVAILABLE whose cause is a refused connection, a name not found, a
// failed TLS handshake or this host out of descriptors or ports
// (generator_limit) is that, as perflab's HTTP steps say it.
func kindOf(st *status.Status) metrics.ErrKind {
	if st.Code() == codes.DeadlineExceeded && strings.Contains(st.Message(), "waiting for connections to become ready") {
		return metrics.Connect // no connection in time: the host never answered
	}
	if st.Code() == codes.Unavailable {
		msg := st.Message()
		switch {
		case strings.Contains(msg, "while dialing") && metrics.NamesGeneratorLimit(msg):
			// gRPC keeps the dialer's error as text only: "transport:
			// Error while dialing: dial tcp ...: socket: too many open
			// files". A server's own status saying it is out of
			// descriptors says nothing of dialing: the target's failure.
			return metrics.GeneratorLimit
		case strings.Contains(msg, "connection refused"):
			return metrics.ConnRefused
		case strings.Contains(msg, "no such host"), strings.Contains(msg, "produced zero addresses"):
			return metrics.DNS
		case strings.Contains(msg, "authentication handshake failed"), strings.Contains(msg, "tls:"):
			return metrics.TLS
		}
	}
	return metrics.GRPCKind(uint32(st.Code()))
}

// codeName is a code as gRPC's specification names it (NOT_FOUND).
func codeName(c codes.Code) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range c.String() {
		if prev >= 'a' && prev <= 'z' && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}
