// Package dockerfile_test holds the test of the repository's Dockerfile:
// a package of its own, so that its build (a whole -trimpath, CGO_ENABLED=0
// build of perflab, which shares no compiled package with the tests'
// builds) has a test binary's time limit to itself, not a share of the
// documentation's tests'. .ci/run makes the same build in the background
// while it installs the other tests' tools, so that CI's run of it finds
// its packages compiled.
package dockerfile_test

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Dockerfile's build step makes a static binary that runs with no
// environment (the distroless image has no libc, no shell), and its Go
// image is the version go.mod names. No container engine is needed: the
// step's command runs here, in the repository's root as the Dockerfile's
// WORKDIR holds it.
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var build, from string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "FROM golang:") {
			from = strings.Fields(strings.TrimPrefix(line, "FROM golang:"))[0]
		}
		if strings.HasPrefix(line, "RUN CGO_ENABLED=0 go build") {
			build = strings.TrimPrefix(line, "RUN ")
		}
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if build == "" || goVer == nil || from != string(goVer[1]) {
		t.Fatalf("Dockerfile: build step %q, Go image %q, go.mod's Go %s", build, from, goVer)
	}
	out := filepath.Join(t.TempDir(), "perflab")
	build = strings.ReplaceAll(build, "${VERSION}", "docker-test")
	build = strings.ReplaceAll(build, "-o /perflab", "-o "+out)
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}
	bin, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary needs a dynamic loader: the distroless static image has none")
		}
	}
	run := exec.Command(out, "version")
	run.Env = []string{}
	b, err := run.CombinedOutput()
	if err != nil || strings.TrimSpace(string(b)) != "perflab docker-test" {
		t.Fatalf("version: %v %q", err, b)
	}
}
