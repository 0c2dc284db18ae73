package configstore

import (
	"context"
	"errors"
	"testing"
)

// An update cannot change a list entry's key: the entry's path is made of
// it. Setting it to the same value is allowed.
func TestUpdateKeepsKeys(t *testing.T) {
	forEachStorage(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if err := s.CreateDataspace(ctx, "ds"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAnchor(ctx, "ds", "a"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateNode(ctx, "ds", "a", "/", []byte(`{"net":[{"id":"a","v":1}]}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateNode(ctx, "ds", "a", "/net[@id='a']", []byte(`{"id":"b"}`)); !errors.Is(err, ErrBadInput) {
			t.Errorf("re-keying update: %v, want ErrBadInput", err)
		}
		if err := s.UpdateNode(ctx, "ds", "a", "/net[@id='a']", []byte(`{"id":"a","v":2}`)); err != nil {
			t.Errorf("same key: %v", err)
		}
		if _, err := s.GetNode(ctx, "ds", "a", "/net[@id='a']", None); err != nil {
			t.Errorf("the entry under its key: %v", err)
		}
	})
}
