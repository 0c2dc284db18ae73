package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
)

// perflab help, and perflab help COMMAND for every command, print what
// testdata/help/*.txt hold (go test ./cmd/perflab -run TestHelpGolden
// -update rewrites them).
func TestHelpGolden(t *testing.T) {
	cases := [][]string{{"help"}}
	for _, c := range commands {
		cases = append(cases, []string{"help", c.name})
	}
	for _, args := range cases {
		name := "perflab"
		if len(args) > 1 {
			name = args[1]
		}
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, args...)
			got := []byte(fmt.Sprintf("$ perflab %s\nexit code %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, out, errs))
			path := filepath.Join("testdata", "help", name+".txt")
			if runtest.Update() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/perflab -run TestHelpGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (go test ./cmd/perflab -run TestHelpGolden -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}
