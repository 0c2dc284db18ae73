package protoschema

import (
	"context"
	"testing"

	"gopkg.in/yaml.v3"
)

// Any YAML checked against a message of every kind of field (scalars, an
// enum, a repeated field, a nested well-known type, a map) gives problems
// with their places, never a panic.
func FuzzCheck(f *testing.F) {
	s, err := Compile(context.Background(), []string{"shop.proto"}, []string{"../protocol/grpc/testdata"})
	if err != nil {
		f.Fatal(err)
	}
	item, err := s.Method("shop.Shop", "GetItem")
	if err != nil {
		f.Fatal(err)
	}
	counts, err := s.Method("shop.Shop", "Counts")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"{id: a, name: b, price: 1.5, kind: BOOK, added: '2026-01-01T00:00:00Z', tags: [x, y]}",
		"{idd: a, price: x, kind: 7, tags: z}",
		"{calls: {a: 1, b: x}}",
		"&a {id: *a}",
		"[1, 2]",
		"id: ${x}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		for _, p := range append(Check(item.Output(), doc.Content[0]), Check(counts.Output(), doc.Content[0])...) {
			if p.Line < 1 || p.Msg == "" {
				t.Fatalf("a problem without its place: %+v", p)
			}
		}
	})
}
