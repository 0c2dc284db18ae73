package metrics

import (
	"errors"
	"strings"
	"syscall"
)

// Kind says what an operation is.
type Kind string

const (
	// KindStep is one request.
	KindStep Kind = "step"
	// KindTransaction is a named group of steps, timed from the start of its
	// first step to the end of its last, think time excluded.
	KindTransaction Kind = "transaction"
	// KindScenario is one iteration of a scenario's whole flow.
	KindScenario Kind = "scenario"
)

// Op identifies an operation whose statistics are kept.
type Op struct {
	Name     string `json:"name"`
	Kind     Kind   `json:"kind"`
	Scenario string `json:"scenario"`
	// Transaction names the transaction a step belongs to, if any.
	Transaction string `json:"transaction,omitempty"`
}

// ErrKind classifies a failed operation. OK is success.
type ErrKind uint8

// Error kinds. HTTP kinds mean a status code the step did not accept.
const (
	OK ErrKind = iota
	HTTP1xx
	HTTP2xx
	HTTP3xx
	HTTP4xx
	HTTP5xx
	Timeout
	ConnRefused
	ConnReset
	DNS
	TLS
	CheckFailed
	ExtractFailed
	Other
	// Connect is a failure to open a connection other than a refusal: the
	// connect timeout, an unreachable network.
	Connect
	// Write is a failure to send the request.
	Write
	// Read is a failure to read the response other than a reset or a
	// timeout: the server closed the connection early, a malformed response.
	Read
	// Publish is a message the bus did not accept.
	Publish
	// NotSent is a request or message that could not be built (a variable
	// no earlier step set, a URL that does not parse): nothing was sent, so
	// the server never counted it.
	NotSent
	// GRPCCanceled ... GRPCUnauthenticated are the gRPC status codes 1-16
	// of a call the step did not accept, in the codes' order.
	GRPCCanceled
	GRPCUnknown
	GRPCInvalidArgument
	GRPCDeadlineExceeded
	GRPCNotFound
	GRPCAlreadyExists
	GRPCPermissionDenied
	GRPCResourceExhausted
	GRPCFailedPrecondition
	GRPCAborted
	GRPCOutOfRange
	GRPCUnimplemented
	GRPCInternal
	GRPCUnavailable
	GRPCDataLoss
	GRPCUnauthenticated
	// InvalidRequest is a request whose URL, header or method, once its
	// values were filled in, is not valid HTTP (a CR or LF that would split
	// it, a space in a header name): refused before a byte was written.
	InvalidRequest
	// GeneratorLimit is a failure of the load generator's own host, not of
	// the system under test: out of file descriptors (EMFILE, ENFILE) or of
	// local ports (EADDRNOTAVAIL).
	GeneratorLimit
	numErrKinds
)

// NumErrKinds is the number of ErrKind values, OK included.
const NumErrKinds = int(numErrKinds)

var errKindNames = [...]string{
	OK: "ok", HTTP1xx: "http_1xx", HTTP2xx: "http_2xx", HTTP3xx: "http_3xx", HTTP4xx: "http_4xx", HTTP5xx: "http_5xx",
	Timeout: "timeout", ConnRefused: "connection_refused", ConnReset: "connection_reset", DNS: "dns", TLS: "tls",
	CheckFailed: "check_failed", ExtractFailed: "extract_failed", Other: "other",
	Connect: "connect", Write: "write", Read: "read", Publish: "publish", NotSent: "not_sent",
	GRPCCanceled: "grpc_canceled", GRPCUnknown: "grpc_unknown", GRPCInvalidArgument: "grpc_invalid_argument",
	GRPCDeadlineExceeded: "grpc_deadline_exceeded", GRPCNotFound: "grpc_not_found", GRPCAlreadyExists: "grpc_already_exists",
	GRPCPermissionDenied: "grpc_permission_denied", GRPCResourceExhausted: "grpc_resource_exhausted",
	GRPCFailedPrecondition: "grpc_failed_precondition", GRPCAborted: "grpc_aborted", GRPCOutOfRange: "grpc_out_of_range",
	GRPCUnimplemented: "grpc_unimplemented", GRPCInternal: "grpc_internal", GRPCUnavailable: "grpc_unavailable",
	GRPCDataLoss: "grpc_data_loss", GRPCUnauthenticated: "grpc_unauthenticated",
	InvalidRequest: "invalid_request", GeneratorLimit: "generator_limit",
}

// limitErrnos are the generator's own host running out: of file
// descriptors, the process's (EMFILE) or the system's (ENFILE), or of
// local ports (EADDRNOTAVAIL).
var limitErrnos = [...]syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL}

// IsGeneratorLimit reports whether err is a GeneratorLimit: EMFILE, ENFILE
// or EADDRNOTAVAIL anywhere in its chain, as Go's net package wraps them
// (a *net.OpError around an *os.SyscallError) or as a raw system call
// returns them.
func IsGeneratorLimit(err error) bool {
	for _, e := range limitErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// NamesGeneratorLimit reports whether msg, an error that reached perflab
// as text only (a gRPC status's message, a resolver's error), names one
// of those errors: "socket: too many open files".
func NamesGeneratorLimit(msg string) bool {
	for _, e := range limitErrnos {
		if strings.Contains(msg, e.Error()) {
			return true
		}
	}
	return false
}

// ParseErrKind reads an error kind's name ("timeout", "http_5xx", ...).
func ParseErrKind(name string) (ErrKind, bool) {
	for k, n := range errKindNames {
		if n == name && k != int(OK) {
			return ErrKind(k), true
		}
	}
	return OK, false
}

func (k ErrKind) String() string {
	if int(k) < len(errKindNames) {
		return errKindNames[k]
	}
	return "unknown"
}

// StatusKind is the error kind of an unaccepted HTTP status code.
func StatusKind(code int) ErrKind {
	switch code / 100 {
	case 1:
		return HTTP1xx
	case 2:
		return HTTP2xx
	case 3:
		return HTTP3xx
	case 4:
		return HTTP4xx
	case 5:
		return HTTP5xx
	}
	return Other
}

// GRPCKind is the error kind of a gRPC status code the step did not
// accept (1-16); OK for 0, Other for a code gRPC does not define.
func GRPCKind(code uint32) ErrKind {
	switch {
	case code == 0:
		return OK
	case code <= 16:
		return GRPCCanceled + ErrKind(code-1)
	}
	return Other
}

// Key identifies an operation's statistics within a scenario: its name and
// kind. A step of the same name in several transactions (one API called
// from several places) has one key: its histograms are kept together.
type Key struct {
	Scenario, Name string
	Kind           Kind
}

// KeyOf is op's key.
func KeyOf(op Op) Key { return Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind} }

// MergeByKey merges statistics indexed like ops into one per key, in the
// order the keys first appear. A key with a single member keeps its
// statistics as they are (unpacked, if Pack packed them); others get new,
// merged ones.
func MergeByKey(ops []Op, stats []*Stats) ([]Op, []*Stats) {
	var keys []Key
	members := map[Key][]int{}
	first := map[Key]Op{}
	for i, st := range stats {
		if i >= len(ops) || st == nil {
			continue
		}
		k := KeyOf(ops[i])
		if _, ok := members[k]; !ok {
			keys = append(keys, k)
			first[k] = ops[i]
		}
		members[k] = append(members[k], i)
	}
	outOps, out := make([]Op, len(keys)), make([]*Stats, len(keys))
	for j, k := range keys {
		outOps[j] = first[k]
		m := members[k]
		if len(m) == 1 {
			out[j] = stats[m[0]].Unpacked()
			continue
		}
		out[j] = NewStats()
		for _, i := range m {
			out[j].Merge(stats[i])
		}
	}
	return outOps, out
}
