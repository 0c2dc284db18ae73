package grpc

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/perflab/perflab/protoschema"
)

// Reflect asks a server for the descriptors of the services named (all of
// its services when none are) by server reflection, v1 or v1alpha.
func Reflect(ctx context.Context, conn *grpc.ClientConn, services []string) (*protoschema.Schema, error) {
	ask, closeStream, err := reflectStream(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer closeStream()
	if len(services) == 0 {
		resp, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
		if err != nil {
			return nil, err
		}
		for _, s := range resp.GetListServicesResponse().GetService() {
			if s.GetName() != "grpc.reflection.v1.ServerReflection" && s.GetName() != "grpc.reflection.v1alpha.ServerReflection" {
				services = append(services, s.GetName())
			}
		}
	}
	files := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	for _, svc := range services {
		resp, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc}})
		if err != nil {
			return nil, err
		}
		if e := resp.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("server reflection: service %s: %s", svc, e.GetErrorMessage())
		}
		for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				return nil, fmt.Errorf("server reflection: %w", err)
			}
			if files[fd.GetName()] == nil {
				files[fd.GetName()] = fd
				order = append(order, fd.GetName())
			}
		}
	}
	// Files the server did not send with the ones that import them.
	for i := 0; i < len(order); i++ {
		for _, dep := range files[order[i]].GetDependency() {
			if files[dep] != nil {
				continue
			}
			resp, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, err
			}
			for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
				fd := new(descriptorpb.FileDescriptorProto)
				if err := proto.Unmarshal(b, fd); err == nil && files[fd.GetName()] == nil {
					files[fd.GetName()] = fd
					order = append(order, fd.GetName())
				}
			}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, n := range order {
		set.File = append(set.File, files[n])
	}
	reg, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("server reflection: %w", err)
	}
	var fds []protoreflect.FileDescriptor
	reg.RangeFiles(func(fd protoreflect.FileDescriptor) bool { fds = append(fds, fd); return true })
	return protoschema.FromFiles(fds)
}

// reflectStream opens a reflection stream, v1 or else v1alpha, and gives
// a function that asks one question on it.
func reflectStream(ctx context.Context, conn *grpc.ClientConn) (func(*rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error), func(), error) {
	v1, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err == nil {
		ask := func(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
			if err := v1.Send(req); err != nil {
				if errors.Is(err, io.EOF) { // the server ended the stream: its status says why
					_, err = v1.Recv()
				}
				return nil, reflectErr(err)
			}
			resp, err := v1.Recv()
			return resp, reflectErr(err)
		}
		// The stream opens lazily: a server without v1 says so at the
		// first question.
		if _, err = ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err == nil {
			return ask, func() { v1.CloseSend() }, nil
		}
	}
	if status.Code(errors.Unwrap(err)) != codes.Unimplemented && status.Code(err) != codes.Unimplemented {
		return nil, nil, err
	}
	alpha, err := rpbalpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, nil, reflectErr(err)
	}
	ask := func(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
		b, err := proto.Marshal(req) // v1 and v1alpha are the same messages
		if err != nil {
			return nil, err
		}
		areq := new(rpbalpha.ServerReflectionRequest)
		if err := proto.Unmarshal(b, areq); err != nil {
			return nil, err
		}
		if err := alpha.Send(areq); err != nil {
			if errors.Is(err, io.EOF) {
				_, err = alpha.Recv()
			}
			return nil, reflectErr(err)
		}
		aresp, err := alpha.Recv()
		if err != nil {
			return nil, reflectErr(err)
		}
		if b, err = proto.Marshal(aresp); err != nil {
			return nil, err
		}
		resp := new(rpb.ServerReflectionResponse)
		return resp, proto.Unmarshal(b, resp)
	}
	return ask, func() { alpha.CloseSend() }, nil
}

func reflectErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed the stream")
	}
	return fmt.Errorf("server reflection: %w", err)
}
