package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/doctor"
)

// perflab doctor PLAN holds the host to the plan's load: 100,000 new
// connections a second without keep-alive are more than any port range
// lets (64,511 ports at the most, each busy for a second even with
// tcp_tw_reuse), a check fails, the exit code is 4.
func TestDoctorPlanFails(t *testing.T) {
	if _, err := os.Stat("/proc/sys/net/ipv4/ip_local_port_range"); err != nil {
		t.Skipf("no port range to check: %v", err)
	}
	path := writePlan(t, `name: flood
target: http://10.20.0.5:8080
http: {keep_alive: false}
scenarios:
  - name: orders
    rate: 100000
    vus: 10
    max_vus: 500
    duration: 72h
    flow:
      - name: order
        url: /orders
`)
	code, out, errs := runCLI(t, "doctor", path, "--json", "--sample", "0")
	if code != exitThresholds {
		t.Fatalf("exit code %d, want %d (a check failed)\n%s%s", code, exitThresholds, out, errs)
	}
	var fs []doctor.Finding
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var ports *doctor.Finding
	for i := range fs {
		if fs[i].Name == "local ports" {
			ports = &fs[i]
		}
		if fs[i].Name == "other CPU" {
			t.Errorf("--sample 0 sampled the CPU: %+v", fs[i])
		}
	}
	if ports == nil || ports.Status != doctor.Fail || ports.Measured["need_per_second"] != 100000.0 || ports.Measured["vus"] != 500.0 ||
		!strings.HasPrefix(ports.Brief, "100,000 new connections/s > ") || !strings.Contains(ports.Fix, "keep_alive: true") {
		t.Errorf("local ports: %+v", ports)
	}
	// The table: the load it was held to, a line a check, the summary.
	code, out, _ = runCLI(t, "doctor", path, "--sample", "0", "--set", "x=1")
	if code != exitUsage {
		t.Errorf("--set of no variable: exit code %d, want %d", code, exitUsage)
	}
	code, out, _ = runCLI(t, "doctor", path, "--sample", "0", "--rate", "10")
	if code != exitOK && code != exitThresholds {
		t.Fatalf("exit code %d", code)
	}
	for _, re := range []string{
		`(?m)^doctor: this host, against plan flood: at most 500 VUs at once, 10 new connections/s \(arrivals without keep-alive\), target 10\.20\.0\.5\n`,
		`(?m)^  ok    local ports   \d+-\d+: [\d,]+ ports to one destination`, // 10 a second: well under any range
		`(?m)^doctor: (host ok|.*\))\n\z`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the table does not match %s:\n%s", re, out)
		}
	}
}

// Without a plan, generic limits; an invalid plan is exit code 2, as run's;
// --set without a plan is the command line's error.
func TestDoctorArgs(t *testing.T) {
	code, out, errs := runCLI(t, "doctor", "--sample", "0")
	if code != exitOK && code != exitThresholds || !strings.HasPrefix(out, "doctor: this host, against generic limits (1,000 VUs") {
		t.Errorf("no plan: exit code %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "doctor", writePlan(t, "name: bad\nscenarios: []\n")); code != exitInvalidPlan {
		t.Errorf("invalid plan: exit code %d, want %d: %s", code, exitInvalidPlan, errs)
	}
	if code, _, errs := runCLI(t, "doctor", "--vus", "3"); code != exitUsage || !strings.Contains(errs, "name one") {
		t.Errorf("--vus without a plan: exit code %d: %s", code, errs)
	}
	if code, _, _ := runCLI(t, "doctor", "a.yaml", "b.yaml"); code != exitUsage {
		t.Errorf("two plans: exit code %d", code)
	}
}
