// Package demo bundles perflab's demo: a plan modelled on the 4-step flow of
// the CPS basic load test (examples/cps), the simulator stubs it runs
// against, and its data.
package demo

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed plan.yaml stubs.yaml network.json
var files embed.FS

// WriteTo copies the demo's files into dir and returns the plan's path.
func WriteTo(dir string) (string, error) {
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, path), b, 0o644)
	})
	return filepath.Join(dir, "plan.yaml"), err
}

// Stubs returns the simulator configuration.
func Stubs() []byte {
	b, _ := files.ReadFile("stubs.yaml")
	return b
}
