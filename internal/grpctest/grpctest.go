// Package grpctest runs the gRPC server of perflab's tests, on Python's
// grpcio (an implementation perflab's authors did not write; .ci/run
// installs grpcio, grpcio-tools and grpcio-reflection 1.85.1 with pip),
// serving protocol/grpc/testdata/shop.proto on 127.0.0.1.
package grpctest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/perflab/perflab/internal/pyserver"
	"github.com/perflab/perflab/protoschema"
)

// Dir is the directory of shop.proto and server.py.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "protocol", "grpc", "testdata")
}

// Server is a running test server.
type Server struct {
	Addr string // 127.0.0.1:PORT
	t    testing.TB
}

// Start starts the server for the test's time (at most 10 minutes).
func Start(t testing.TB) *Server {
	t.Helper()
	port := pyserver.Start(t, "grpc, grpc_tools, grpc_reflection",
		"pip install grpcio==1.85.1 grpcio-tools==1.85.1 grpcio-reflection==1.85.1", filepath.Join(Dir(), "server.py"), "600")
	return &Server{Addr: "127.0.0.1:" + port, t: t}
}

// Counts are the calls the server answered, by method (its Counts call).
func (s *Server) Counts() map[string]int64 {
	t := s.t
	t.Helper()
	schema, err := protoschema.Compile(context.Background(), []string{"shop.proto"}, []string{Dir()})
	if err != nil {
		t.Fatal(err)
	}
	md, err := schema.Method("shop.Shop", "Counts")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(s.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp := dynamicpb.NewMessage(md.Output())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.Invoke(ctx, protoschema.FullMethod(md), dynamicpb.NewMessage(md.Input()), resp); err != nil {
		t.Fatal(err)
	}
	b, _ := protojson.Marshal(resp)
	var raw struct {
		Calls map[string]string `json:"calls"` // protojson writes int64 as strings
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for k, v := range raw.Calls {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	return out
}
