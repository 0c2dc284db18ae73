package grpc

import (
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// raw is a message kept as its wire bytes: a request whose message has
// no placeholder, marshalled once for every call; or a response nothing
// reads, whose size alone is counted.
type raw struct {
	b []byte
	n int
}

// codec is gRPC's proto codec, except that a raw message is sent as its
// bytes and received as its size, with no decoding.
type codec struct{ proto encoding.CodecV2 }

var rawCodec = codec{proto: encoding.GetCodecV2("proto")}

func (c codec) Name() string { return "proto" }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*raw); ok {
		return mem.BufferSlice{mem.SliceBuffer(r.b)}, nil
	}
	return c.proto.Marshal(v)
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*raw); ok {
		r.n = data.Len()
		return nil
	}
	return c.proto.Unmarshal(data, v)
}

// marshalOnce is the message's wire bytes as a raw message.
func marshalOnce(m proto.Message) (*raw, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &raw{b: b}, nil
}
