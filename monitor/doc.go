// Package monitor watches the system under test during a load run, and the
// machine that generates the load, and turns what it sampled into figures
// per window (a stage, a part of a soak): CPU per transaction, memory trend
// and leak suspicion, garbage collection, a saturated load generator, and
// the statements PostgreSQL found slow.
//
// # Use
//
//	m, err := monitor.Open(ctx, spec)      // per Spec of the plan; starts spec.Command
//	s := monitor.StartSampler(ctx, interval, monitors, func(w monitor.Warning) { log(w) })
//	... the load runs ...
//	r := s.Stop(ctx)                       // last sample, Close: r.All(), r.Finals, r.Warnings
//	a := r.Analyze(windows)                // JSON-ready, for summary.json
//
// Open fails on a spec that is invalid (Spec.Validate checks one without
// opening it), a command that cannot start, a JVM command that publishes no
// counters within 10 s, and a PostgreSQL server that cannot be reached or
// has no pg_stat_statements (the error says how to enable it). A source
// that fails later (a process that exits, a port that closes) is reported
// once as a Warning; the sampler keeps sampling it and every other monitor.
// Each monitor is sampled at StartSampler, every interval, and at Stop, from
// a goroutine of its own: the load never waits for a monitor.
//
// # Kinds and metrics
//
// Every metric name carries its unit (counts have none). Cumulative metrics (marked Σ) only
// grow while their source lives; the analysis takes their increase over a
// window, interpolating at its edges, and counts a decrease as a restart.
//
// process: Spec.PID; or Spec.Pattern, a regular expression matched against
// every command line (arguments joined by spaces) at each sample, all
// matching processes summed (perflab itself excluded); or Spec.Command,
// started by Open in a process group of its own, summed over that group,
// stopped by Close (SIGTERM, SIGKILL after 5 s). Read from /proc: one
// sample of a PID costs about 25 µs, of a pattern about 8 µs per process on
// the machine, and reading PSS (pattern and command only) about 0.13 ms more
// per process (smaps_rollup of PostgreSQL 15's backends, measured from
// Python, 2026-11): 1.7 ms a sample for 12 backends.
//
//	cpu_user_s, cpu_system_s  Σ CPU seconds; a process that exits keeps
//	                            its last figures in the sum
//	rss_bytes                 Σ resident memory: memory that processes
//	                            share counts once per process
//	pss_bytes                 Σ proportional set size (smaps_rollup),
//	                            shared memory counted once: a pattern's
//	                            or a command's processes only, and only
//	                            when every one's smaps_rollup is readable
//	                            (another user's processes need root)
//	threads                   threads
//	open_files                file descriptors (left out, with a warning,
//	                            for another user's processes without root)
//	processes                 processes matched
//
// jvm: a HotSpot JVM by PID, by pattern (the oldest matching process that
// publishes counters) or started by Command (waited for, then the oldest
// such process of its group); found again if it restarts. The counters are
// jstat's, read from the JVM's hsperfdata file (/tmp/hsperfdata_USER/PID,
// in the JVM's own /tmp if it runs in a container) with no subprocess and
// no attach: about 40 µs a sample, /proc included. A JVM run with -XX:-UsePerfData has no
// such file, and cannot be watched.
//
//	gc_young_count, gc_young_time_s   Σ collector 0: jstat's YGC, YGCT
//	gc_full_count, gc_full_time_s     Σ collector 1: jstat's FGC, FGCT
//	heap_used_bytes                   all spaces of both generations
//	heap_committed_bytes, heap_max_bytes
//	cpu_user_s, cpu_system_s, rss_bytes, threads, open_files  as process
//
// cgroup: a cgroup v2 directory, Spec.Path (relative paths are taken from
// the cgroup2 mount). A file of a controller not enabled for the cgroup is
// left out, and named once in a warning.
//
//	cpu_usage_s, cpu_user_s, cpu_system_s  Σ cpu.stat
//	cpu_throttled_s           Σ time held back by cpu.max
//	memory_current_bytes      memory.current (page cache included)
//	memory_anon_bytes, memory_file_bytes  memory.stat anon, file
//	pids                      pids.current
//
// host: the load generator's machine (about 60 µs a sample).
//
//	cpu_busy_ratio            0..1, all cores, since the previous sample
//	cpu_busy_max_core_ratio   0..1, the busiest core
//	memory_used_bytes, memory_total_bytes  MemTotal - MemAvailable, MemTotal
//	load1                     load average, 1 minute
//
// prometheus: Spec.URL scraped each interval (OpenMetrics or the text
// format); Spec.Series are selectors, name or name{label="value",...}, each
// summing the series it matches. A gauge selector S yields the metric "S";
// a counter (TYPE counter, or undeclared and named *_total, or a
// histogram's or summary's _count, _sum, _bucket) yields "rate(S)", per
// second between two scrapes. A selector that matches nothing is warned of.
//
// postgres: Spec.DSN. Each interval, client connections other than its own
// from pg_stat_activity:
//
//	connections_total, connections_active, connections_idle,
//	connections_idle_in_transaction, connections_waiting_lock
//
// and the statements pg_stat_statements counts, all together (its own
// left out), for their mean time over each interval:
//
//	statement_calls, statement_time_ms   Σ calls, Σ execution time
//
// Open snapshots pg_stat_statements and Close snapshots it again: the
// difference is what ran during the load, and Final.SlowQueries lists the
// statements whose mean execution time exceeded Spec.SlowThreshold (100 ms
// by default), with calls, mean and total milliseconds. The server needs
// shared_preload_libraries = 'pg_stat_statements' and CREATE EXTENSION
// pg_stat_statements in the database; to see other roles' statements and
// connection states, the monitor's role needs pg_read_all_stats (or to be
// a superuser): Close warns when entries were hidden.
//
// # Analysis
//
// Analyze gives, per window and monitor: CPU seconds used (user + system),
// cores busy and CPU milliseconds per transaction; per memory metric
// (pss_bytes, rss_bytes, heap_used_bytes, memory_anon_bytes, memory_current_bytes) the
// average, peak, and, over at least MinTrendSpan (10 minutes) and
// MinTrendSamples (20) samples, the least-squares slope in bytes per hour
// and a leak suspicion (the rule is in trend.go: a significant
// Mann-Kendall rise of the memory's floor, by at least 1% of its level);
// a shorter window is TooShort and has neither; young and full
// collections with their average pause; a database's statements with
// their mean time; the host's busy
// fraction and whether the generator was saturated (SaturationBusy,
// WindowFigures.Saturated); min, average and maximum of the other levels.
package monitor
