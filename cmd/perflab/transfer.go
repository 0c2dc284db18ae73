package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/jtl"
	"github.com/perflab/perflab/k6out"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

func cmdImport(std *stdio, args []string) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	path := fs.String("store", store.DefaultPath("runs"), "run history: a SQLite file or a postgres:// URL")
	var labels labelFlags
	fs.Var(&labels, "label", "label the imported run, as release=Goldenrod (repeatable)")
	from := fs.String("from", "", "the files are another tool's results: jmeter (a JTL file, CSV or XML), k6 (its --out json or csv), hdr (an HdrHistogram interval log); gzipped or not")
	unit := fs.String("unit", "us", "with --from hdr: the unit of the log's values: ns, us or ms")
	out := fs.String("out", "runs", "with --from: directory under which each imported run gets its own")
	name := fs.String("name", "", "with --from: the run's plan name (default: the file's name)")
	interval := fs.Duration("interval", 0, "with --from: the length of the run's intervals (default: sized to the run's longest stage, from 100ms to 10s; an HdrHistogram log's own)")
	lag := fs.Duration("lag", 5*time.Minute, "with --from: how far out of time order the file's samples may be")
	var times listFlag
	fs.Var(&times, "times", "with --from k6: a script's own Trend of times (repeatable, or NAME,NAME): k6's CSV does not tell them from its other metrics")
	endStamps := fs.Bool("end-stamps", false, "with --from jmeter: the file's time stamps are the samples' ends (sampleresult.timestamp.start=false)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab import RUN_DIR... [--label k=v]...\n       perflab import --from jmeter RESULTS.jtl... [--label k=v]...\n       perflab import --from k6 OUT.json... [--label k=v]...\n       perflab import --from hdr LOG.hlog... [--unit us] [--label k=v]...\n\n"+
			"Records run directories (from another machine, or from before the history) in the history;\n"+
			"with --from, another tool's results, each file as a run of its own.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	logUnit, err := ingest.LogUnit(*unit)
	switch {
	case *from != "" && *from != "jmeter" && *from != "k6" && *from != "hdr":
		fmt.Fprintf(std.err, "perflab: --from %s: perflab imports jmeter and k6 results and hdr (HdrHistogram) logs\n", *from)
		return exitUsage
	case err != nil:
		fmt.Fprintf(std.err, "perflab: --unit: %v\n", err)
		return exitUsage
	}
	st, err := store.Open(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	for _, arg := range fs.Args() {
		dir := arg
		if *from != "" {
			o := ingest.Options{Out: *out, Name: *name, Interval: *interval, Lag: *lag}
			var sum *results.Summary
			switch *from {
			case "hdr":
				dir, sum, err = importHdrLog(arg, o, logUnit)
			case "k6":
				dir, sum, err = importK6(arg, o, times)
			default:
				dir, sum, err = importJMeter(arg, o, jtl.Options{EndStamps: *endStamps})
			}
			if err != nil {
				fmt.Fprintf(std.err, "perflab: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(std.out, "read %d samples of %s into %s (intervals of %v)\n", sum.Origin.Samples, arg, dir, sum.IntervalLength())
		}
		id, err := results.Import(st, dir, labels.Map())
		if err != nil {
			if *from != "" { // the run made here is not in the history: it goes, not to be met later half-imported
				os.RemoveAll(dir)
				fmt.Fprintf(std.err, "perflab: %s: %v; %s removed\n", arg, err, dir)
				return exitUsage
			}
			fmt.Fprintf(std.err, "perflab: %s: %v\n", dir, err)
			return exitUsage
		}
		fmt.Fprintf(std.out, "imported %s as run %s\n", arg, id)
	}
	return exitOK
}

// openResults opens another tool's result file (a regular file or a
// pipe: it is read as a stream, a record at a time), through gzip if it
// is gzipped (k6 writes --out json=FILE.gz so; JTLs are kept gzipped).
func openResults(file string) (io.ReadCloser, error) {
	f, err := inputfile.OpenStream(file)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if b, _ := br.Peek(2); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return struct {
			io.Reader
			io.Closer
		}{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, f}, nil
}

// importHdrLog reads an HdrHistogram interval log into a run directory.
func importHdrLog(file string, o ingest.Options, unit time.Duration) (string, *results.Summary, error) {
	f, err := openResults(file)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	return ingest.Run(ingest.HdrLog(f, file, unit), "hdr", file, o, []string{
		"failures: a histogram log holds successful operations only",
		"each value's precision beyond its histogram bucket's (values are its buckets' lowest)",
	})
}

// importJMeter reads a JMeter result file into a run directory.
func importJMeter(file string, o ingest.Options, jo jtl.Options) (string, *results.Summary, error) {
	f, err := openResults(file)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	r, err := jtl.NewReader(f, file, jo)
	if err != nil {
		return "", nil, err
	}
	return ingest.Run(ingest.JMeter(r), "jmeter", file, o, []string{
		"each sample's Latency (time to first byte), Connect and IdleTime, its sent bytes and the active thread counts",
		"which Transaction Controller a step ran under: a result file does not say",
	})
}

// importK6 reads k6's --out json or csv stream into a run directory.
func importK6(file string, o ingest.Options, times []string) (string, *results.Summary, error) {
	f, err := openResults(file)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	r, err := k6out.NewReader(f, file, ingest.K6Metrics(times...))
	if err != nil {
		return "", nil, err
	}
	return ingest.Run(ingest.K6(r), "k6", file, o, []string{
		"each request's phases (http_req_blocked, _connecting, _tls_handshaking, _sending, _waiting, _receiving): its latency is k6's http_req_duration, from sending to the end of the response, without the wait for a connection",
		"data_sent and data_received: k6 counts them by iteration, not by request",
		"which group's iteration a failed request was in: a group's duration is a transaction without errors",
		"tags other than name, method, status, scenario, group, expected_response, error_code, check and vu (url, proto, a script's own)",
	})
}

func cmdExport(std *stdio, args []string) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab export RUN_ID DIR\n\nWrites a stored run as a run directory (summary.json, plan.yaml, latency.hlog).\nDIR must be new or empty: a directory holding anything, another run's files, is refused.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	st, err := openExisting(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	s, err := results.Export(st, fs.Arg(0), fs.Arg(1))
	if err == nil {
		err = report.WriteRunFiles(fs.Arg(1), s)
	}
	if err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	fmt.Fprintf(std.out, "exported run %s to %s\n", fs.Arg(0), fs.Arg(1))
	return exitOK
}

func cmdMerge(std *stdio, args []string) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "runs", "directory under which the merged run gets its own")
	storePath := fs.String("store", "", "run history: a SQLite file (default OUT/perflab.db), a postgres:// URL, or off")
	var labels labelFlags
	fs.Var(&labels, "label", "label the merged run, as release=Goldenrod (repeatable; added to the first run's labels)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab merge RUN_DIR... [--out DIR] [--store FILE] [--label k=v]...

Merges the runs of one plan made at the same time by several load
generators (each running its share of the load) into one run, exactly:
each operation's counts, errors and HDR histograms add up, so the merged
percentiles are those of all the samples. The merged run gets its own
directory and its place in the history; its thresholds are judged on the
whole. The runs must have finished (their totals.jsonl).`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	res, err := lab.Merge(fs.Args(), lab.Config{Out: *out, Store: *storePath, Labels: labels.Map(), Stdout: std.out, Stderr: std.err})
	if err != nil {
		return fail(std, err)
	}
	return exitCodes[res.Outcome]
}
