package configstore

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkStore measures, per storage and data size (devices with 4
// termination points each, 6 data nodes per device), the reads of the CPS
// query-performance report (examples/cps-datasize): one device with all
// descendants, the whole tree, and a "//" query. nodes/op is the work NodesVisited counts.
func BenchmarkStore(b *testing.B) {
	ops := []struct {
		name string
		run  func(ctx context.Context, s *Store) ([]byte, error)
	}{
		{"get-node", func(ctx context.Context, s *Store) ([]byte, error) {
			return s.GetNode(ctx, "ds", "net", "/network/nodes[@node-id='n500']", All)
		}},
		{"get-tree", func(ctx context.Context, s *Store) ([]byte, error) {
			return s.GetNode(ctx, "ds", "net", "/", All)
		}},
		{"query", func(ctx context.Context, s *Store) ([]byte, error) {
			return s.Query(ctx, "ds", "net", "//nodes[@status='down']", None)
		}},
	}
	for _, storage := range storages {
		b.Run(storage, func(b *testing.B) {
			for _, devices := range []int{1_000, 10_000} {
				b.Run(strconv.Itoa(devices), func(b *testing.B) {
					s := openStore(b, storage)
					mustAnchor(b, s, "ds", "net", GenerateNetwork(devices, 4))
					for _, op := range ops {
						b.Run(op.name, func(b *testing.B) {
							ctx := context.Background()
							before := s.NodesVisited()
							for b.Loop() {
								if _, err := op.run(ctx, s); err != nil {
									b.Fatal(err)
								}
							}
							b.ReportMetric(float64(s.NodesVisited()-before)/float64(b.N), "nodes/op")
						})
					}
				})
			}
		})
	}
}
