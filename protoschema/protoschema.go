// Package protoschema is what a plan knows of the gRPC services it calls:
// their .proto files compiled at plan load by a pure-Go compiler
// (bufbuild/protocompile, no protoc), or descriptors a server gave by
// reflection. It finds a step's method and checks a step's messages,
// written as YAML in the protobuf JSON mapping, against their types, so
// that a wrong service, method or field is a plan error with its place
// before anything is sent.
package protoschema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/perflab/perflab/internal/inputfile"
)

// Schema holds the descriptors of a plan's services.
type Schema struct {
	files *protoregistry.Files
	// services are the full names of the services, in file order.
	services []string
}

// MaxFileBytes is the largest .proto file compiled: 4 MiB. The largest
// of Google's APIs are a few hundred KB.
const MaxFileBytes = 4 << 20

// Compile compiles .proto files (paths as given, found under
// importPaths; the well-known types google/protobuf/*.proto are built
// in). Each must be a regular file of at most MaxFileBytes. An error
// names the file, line and column the compiler gives.
func Compile(ctx context.Context, files, importPaths []string) (*Schema, error) {
	if len(importPaths) == 0 {
		importPaths = []string{"."}
	}
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths, Accessor: openProto}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	out, err := c.Compile(ctx, files...)
	if err != nil {
		return nil, err
	}
	var fds []protoreflect.FileDescriptor
	for _, f := range out {
		fds = append(fds, f)
	}
	return FromFiles(fds)
}

// openProto opens a .proto file: a regular file, read within
// MaxFileBytes.
func openProto(path string) (io.ReadCloser, error) {
	return inputfile.OpenLimit(path, MaxFileBytes, "a .proto file may be "+inputfile.FormatSize(MaxFileBytes))
}

// FromFiles is a schema of file descriptors (a server's, by reflection),
// with the files they import.
func FromFiles(fds []protoreflect.FileDescriptor) (*Schema, error) {
	s := &Schema{files: new(protoregistry.Files)}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor) error
	add = func(fd protoreflect.FileDescriptor) error {
		if seen[fd.Path()] {
			return nil
		}
		seen[fd.Path()] = true
		imps := fd.Imports()
		for i := range imps.Len() {
			if err := add(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		if err := s.files.RegisterFile(fd); err != nil {
			return fmt.Errorf("%s: %w", fd.Path(), err)
		}
		svcs := fd.Services()
		for i := range svcs.Len() {
			s.services = append(s.services, string(svcs.Get(i).FullName()))
		}
		return nil
	}
	for _, fd := range fds {
		if err := add(fd); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Paths are the paths of the schema's files, its imports' included,
// but not the well-known types' (google/protobuf/...).
func (s *Schema) Paths() []string {
	var out []string
	s.files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(fd.Path(), "google/protobuf/") {
			out = append(out, fd.Path())
		}
		return true
	})
	return out
}

// Files are the schema's file descriptors, as a resolver.
func (s *Schema) Files() *protoregistry.Files { return s.files }

// Services are the full names of the schema's services.
func (s *Schema) Services() []string { return s.services }

// Method finds a service's method: service is its full name (pkg.Service).
// A name not found is a *NotFound.
func (s *Schema) Method(service, method string) (protoreflect.MethodDescriptor, error) {
	d, err := s.files.FindDescriptorByName(protoreflect.FullName(service))
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return nil, &NotFound{What: "service", Name: service, In: "the schema", Known: s.services}
	}
	m := sd.Methods().ByName(protoreflect.Name(method))
	if m == nil {
		var names []string
		for i := range sd.Methods().Len() {
			names = append(names, string(sd.Methods().Get(i).Name()))
		}
		return nil, &NotFound{What: "method", Name: method, In: "service " + service, Known: names}
	}
	return m, nil
}

// NotFound is a service, method or field that the schema does not have,
// with those it has (for a suggestion).
type NotFound struct {
	What, Name, In string
	Known          []string
}

func (e *NotFound) Error() string {
	return fmt.Sprintf("%s has no %s %s (%ss: %s)", e.In, e.What, e.Name, e.What, strings.Join(e.Known, ", "))
}

// Kind says how a method streams: unary, server (streaming),
// client (streaming) or bidi.
func Kind(m protoreflect.MethodDescriptor) string {
	switch {
	case m.IsStreamingClient() && m.IsStreamingServer():
		return "bidi"
	case m.IsStreamingClient():
		return "client"
	case m.IsStreamingServer():
		return "server"
	}
	return "unary"
}

// FullMethod is the method's name on the wire: /pkg.Service/Method.
func FullMethod(m protoreflect.MethodDescriptor) string {
	return "/" + string(m.Parent().FullName()) + "/" + string(m.Name())
}

// ErrNoSchema is the error of a step whose plan has no schema.
var ErrNoSchema = errors.New("the plan has no gRPC schema: give grpc.protos, or grpc.reflection: true")
