package configstore

import (
	"context"
	"testing"
)

// TestWorkGrowsWithData proves the data-size effect the CPS
// query-performance report (examples/cps-datasize) measures, without timing:
// a "//" query or a whole-tree read over 10,000 devices examines ten times
// the nodes it does over 1,000, while reading one device costs the same.
func TestWorkGrowsWithData(t *testing.T) {
	ops := []struct {
		name string
		run  func(ctx context.Context, s *Store, anchor string) error
		grow bool // whether the work should grow with the data
	}{
		{"query //nodes", func(ctx context.Context, s *Store, anchor string) error {
			_, err := s.Query(ctx, "ds", anchor, "//nodes[@status='down']", None)
			return err
		}, true},
		{"query /network/nodes/termination-points", func(ctx context.Context, s *Store, anchor string) error {
			_, err := s.Query(ctx, "ds", anchor, "/network/nodes/termination-points[@tp-id='tp1']", None)
			return err
		}, true},
		{"get whole tree", func(ctx context.Context, s *Store, anchor string) error {
			_, err := s.GetNode(ctx, "ds", anchor, "/", All)
			return err
		}, true},
		{"get one device", func(ctx context.Context, s *Store, anchor string) error {
			_, err := s.GetNode(ctx, "ds", anchor, "/network/nodes[@node-id='n500']", All)
			return err
		}, false},
	}
	forEachStorage(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		mustAnchor(t, s, "ds", "small", GenerateNetwork(1_000, 1))
		if err := s.CreateAnchor(ctx, "ds", "large"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateNode(ctx, "ds", "large", "/", GenerateNetwork(10_000, 1)); err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			work := func(anchor string) int64 {
				before := s.NodesVisited()
				if err := op.run(ctx, s, anchor); err != nil {
					t.Fatal(err)
				}
				return s.NodesVisited() - before
			}
			small, large := work("small"), work("large")
			t.Logf("%s: %d nodes at 1,000 devices, %d at 10,000", op.name, small, large)
			if op.grow && large < 9*small || !op.grow && large != small || small == 0 {
				t.Errorf("%s: %d nodes at 1,000 devices, %d at 10,000", op.name, small, large)
			}
		}
	})
}
