package protoschema

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A .proto file must be a regular file of at most MaxFileBytes: /dev/zero
// and a directory are refused unread, saying what they are, and a larger
// file by its size, unread (a sparse file).
func TestProtoFileLimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.proto"), []byte("syntax = \"proto3\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "big.proto"), MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.proto"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.proto")); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"big.proto":  "big.proto is 4.0 MiB (4194305 bytes): a .proto file may be 4 MiB",
		"dir.proto":  "dir.proto is a directory, not a regular file",
		"zero.proto": "zero.proto is a character device, not a regular file",
	} {
		_, err := Compile(context.Background(), []string{file}, []string{dir})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, want)) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}
