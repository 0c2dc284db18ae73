package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// The HTML report in a real headless Chromium: it draws its charts, loads
// nothing (its scripts and styles are inline), and the screenshot is kept as an artifact
// (artifacts/report.png, or $PERFLAB_ARTIFACTS).
func TestHTMLReportInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium; .ci/run does)")
	}
	out := t.TempDir()
	if code, _, errs := runCLI(t, "demo", "--out", out, "--set", "circles=20", "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-cps-basic-demo"))
	page := filepath.Join(out, "report.html")
	if code, _, errs := runCLI(t, "report", "--format", "html", "-o", page, dirs[0]); code != exitOK {
		t.Fatal(errs)
	}
	html, _ := os.ReadFile(page)
	// Its scripts and styles are inline: nothing to load. Its links are
	// to its own parts (its table of contents: href="#...").
	for _, ref := range []string{"src=", "url(", "@import", "fetch("} {
		if bytes.Contains(html, []byte(ref)) {
			t.Errorf("the report has %q: it must be self-contained", ref)
		}
	}
	if ref := regexp.MustCompile(`href=("[^#]|[^"])`).Find(html); ref != nil {
		t.Errorf("the report has %q: it must be self-contained", ref)
	}
	art := os.Getenv("PERFLAB_ARTIFACTS")
	if art == "" {
		art = filepath.Join("..", "..", "artifacts")
	}
	os.MkdirAll(art, 0o755)
	shot, _ := filepath.Abs(filepath.Join(art, "report.png"))
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The DOM as the browser built it.
	dom, err := exec.CommandContext(ctx, chromium, append(base, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if n, drawn := len(regexp.MustCompile(`<div class="plot[^"]*" data-plot="\d+"`).FindAll(dom, -1)), strings.Count(string(dom), `<canvas`); n < 8 || drawn != n {
		t.Errorf("the rendered page has %d charts, %d drawn; want at least 8, all drawn", n, drawn)
	}
	if !strings.Contains(string(dom), "cps-basic-demo") || !strings.Contains(string(dom), "CREATE NODE") {
		t.Error("the rendered page lacks the run's data")
	}
	// A screenshot, and no console or loading errors about the page.
	cmd := exec.CommandContext(ctx, chromium, append(base, "--window-size=1200,2400", "--screenshot="+shot, "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "report.html") && strings.Contains(line, "ERR") {
			t.Errorf("browser error: %s", line)
		}
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 20000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}
