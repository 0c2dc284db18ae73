package monitor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// churnJava allocates garbage at a steady pace, so that young collections
// happen every few milliseconds, calls System.gc() (a full collection with
// the serial collector) now and then, and exits after 30 s at most.
const churnJava = `public class Churn {
    public static void main(String[] args) throws Exception {
        byte[][] keep = new byte[32][];
        long end = System.nanoTime() + 30_000_000_000L;
        for (int i = 1; System.nanoTime() < end; i++) {
            keep[i & 31] = new byte[64 * 1024];
            if (i % 1000 == 0) Thread.sleep(10);
            if (i % 10000 == 0) System.gc();
        }
    }
}
`

// churnArgs compiles Churn.java in a temporary directory and returns the
// java command line that runs it.
func churnArgs(t testing.TB) []string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		testenv.Missing(t, "javac is not on PATH (a JDK: apt-get install default-jdk-headless): the JVM monitor is not tested")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Churn.java"), []byte(churnJava), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("javac", "-d", dir, filepath.Join(dir, "Churn.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return []string{"java", "-Xmx64m", "-XX:+UseSerialGC", "-cp", dir, "Churn"}
}

// startChurn runs Churn until the test ends.
func startChurn(t testing.TB, args []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// gcCounts samples a jvm monitor's collection counts.
func gcCounts(t *testing.T, m Monitor) (pts []Point, young, full float64) {
	t.Helper()
	pts = sampleNow(t, m)
	return pts, mustValue(t, pts, MetricGCYoungCount), mustValue(t, pts, MetricGCFullCount)
}

// jstatCounts runs jstat -gcutil and returns its YGC and FGC columns.
func jstatCounts(t *testing.T, pid int) (young, full float64) {
	t.Helper()
	out, err := exec.Command("jstat", "-gcutil", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("jstat: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("jstat printed %q", out)
	}
	head, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	col := func(name string) float64 {
		for i, h := range head {
			if h == name && i < len(row) {
				v, err := strconv.ParseFloat(row[i], 64)
				if err != nil {
					t.Fatalf("jstat %s = %q", name, row[i])
				}
				return v
			}
		}
		t.Fatalf("jstat printed no %s column: %q", name, out)
		return 0
	}
	return col("YGC"), col("FGC")
}

func TestJVM(t *testing.T) {
	args := churnArgs(t)

	t.Run("pid", func(t *testing.T) {
		java := startChurn(t, args)
		pid := java.Process.Pid
		m := mustOpen(t, Spec{Name: "java", Kind: KindJVM, PID: pid})
		// The JVM publishes its counters some milliseconds after it starts.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, err := m.Sample(context.Background(), time.Now())
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}

		var pts []Point
		var young, full float64
		for deadline := time.Now().Add(10 * time.Second); young == 0 || full == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no collections after 10 s: young %v, full %v", young, full)
			}
			pts, young, full = gcCounts(t, m)
		}
		if v := mustValue(t, pts, MetricGCYoungTime); v <= 0 {
			t.Errorf("%s = %v with %v young collections", MetricGCYoungTime, v, young)
		}
		used, committed, max := mustValue(t, pts, MetricHeapUsed), mustValue(t, pts, MetricHeapCommitted), mustValue(t, pts, MetricHeapMax)
		if used <= 0 || used > committed || committed > max || max > 64<<20 {
			t.Errorf("heap used %v, committed %v, max %v: want 0 < used <= committed <= max <= -Xmx64m", used, committed, max)
		}
		if v := mustValue(t, pts, MetricRSS); v < float64(committed)/2 {
			t.Errorf("rss = %v bytes with a committed heap of %v", v, committed)
		}

		time.Sleep(300 * time.Millisecond)
		_, young2, _ := gcCounts(t, m)
		if young2 <= young {
			t.Errorf("young collections did not increase in 300 ms: %v then %v", young, young2)
		}

		// jstat reads the same counters: its counts must lie between two
		// samples taken around it.
		_, y0, f0 := gcCounts(t, m)
		jy, jf := jstatCounts(t, pid)
		_, y1, f1 := gcCounts(t, m)
		if jy < y0 || jy > y1 || jf < f0 || jf > f1 {
			t.Errorf("jstat YGC %v FGC %v, monitor before %v %v and after %v %v", jy, jf, y0, f0, y1, f1)
		}
	})

	t.Run("command", func(t *testing.T) {
		m, err := Open(context.Background(), Spec{Kind: KindJVM, Command: args})
		if err != nil {
			t.Fatal(err)
		}
		pid := m.(*jvmMonitor).pid
		// Open waited for the counters: the first sample has them.
		if max := mustValue(t, sampleNow(t, m), MetricHeapMax); max <= 0 || max > 64<<20 {
			t.Errorf("heap_max_bytes = %v, want the started JVM's -Xmx64m", max)
		}
		if _, err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !gone(pid) {
			t.Errorf("the JVM %d still runs after Close", pid)
		}
	})

	t.Run("not a JVM", func(t *testing.T) {
		m := mustOpen(t, Spec{Kind: KindJVM, PID: os.Getpid()})
		if _, err := m.Sample(context.Background(), time.Now()); err == nil || !strings.Contains(err.Error(), "no hsperfdata") {
			t.Errorf("err = %v", err)
		}
	})
}
