package configstore

import (
	"context"
	"path/filepath"
	"testing"
)

// storages are the backends every Store test runs against.
var storages = []string{"memory", "sqlite"}

// openStore returns an empty Store of the given storage, closed at the end
// of the test.
func openStore(tb testing.TB, storage string) *Store {
	tb.Helper()
	if storage == "memory" {
		return NewMemory()
	}
	s, err := OpenSQLite(filepath.Join(tb.TempDir(), "configstore.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// forEachStorage runs f as a subtest per storage.
func forEachStorage(t *testing.T, f func(t *testing.T, s *Store)) {
	for _, storage := range storages {
		t.Run(storage, func(t *testing.T) { f(t, openStore(t, storage)) })
	}
}

// mustAnchor creates dataspace ds and anchor a in it, with data under "/"
// unless data is nil.
func mustAnchor(tb testing.TB, s *Store, ds, a string, data []byte) {
	tb.Helper()
	ctx := context.Background()
	if err := s.CreateDataspace(ctx, ds); err != nil {
		tb.Fatal(err)
	}
	if err := s.CreateAnchor(ctx, ds, a); err != nil {
		tb.Fatal(err)
	}
	if data == nil {
		return
	}
	if err := s.CreateNode(ctx, ds, a, "/", data); err != nil {
		tb.Fatal(err)
	}
}
