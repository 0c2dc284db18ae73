package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// binDir holds the perflab binary the tests that run it as a process
// build, once.
var (
	binDir  string
	binOnce sync.Once
	binErr  error
)

func TestMain(m *testing.M) {
	if os.Getenv(growEnv) != "" { // a process whose memory grows (longevity_test.go)
		grow()
		os.Exit(0)
	}
	if d, err := time.ParseDuration(os.Getenv(stepEnv)); err == nil { // one whose memory steps up
		stepUp(d)
		os.Exit(0)
	}
	var err error
	if binDir, err = os.MkdirTemp("", "perflab-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// perflabBin builds the perflab binary once for the tests that run it as
// a process (signals, kill -9, several runs at once).
func perflabBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(binDir, "perflab")
	binOnce.Do(func() {
		if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, b)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return bin
}
