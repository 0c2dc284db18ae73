package results

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/inputfile"
)

// A run directory from elsewhere whose files are not files (summary.json,
// totals.jsonl or run.json a link to /dev/zero) is refused at once, not
// read without end.
func TestForeignRunDirectoryFilesAreNotRead(t *testing.T) {
	for _, name := range []string{"summary.json", ManifestFile} {
		dir := t.TempDir()
		if err := os.Symlink("/dev/zero", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		_, err := ReadDir(dir)
		var nr *inputfile.NotRegularError
		if !errors.As(err, &nr) {
			t.Errorf("%s linked to /dev/zero: %v, want it refused as not a regular file", name, err)
		}
		if _, _, _, _, err := encodeDir(dir); !errors.As(err, &nr) {
			t.Errorf("%s linked to /dev/zero, for import: %v", name, err)
		}
	}
}
