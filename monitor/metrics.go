package monitor

// Metric names. Those marked cumulative only grow while their source lives
// (the analysis takes their increase over a window, and treats a decrease
// as a restart of the source); the others are levels.
const (
	// process, jvm (the JVM's process), cgroup
	MetricCPUUser   = "cpu_user_s"   // cumulative CPU seconds in user mode
	MetricCPUSystem = "cpu_system_s" // cumulative CPU seconds in the kernel
	// process, jvm
	MetricRSS       = "rss_bytes"  // resident memory
	MetricThreads   = "threads"    // threads
	MetricOpenFiles = "open_files" // open file descriptors
	MetricProcesses = "processes"  // processes matched (process only)
	// process, of a pattern or a command's group only: proportional set
	// size, the memory that processes share divided among them
	MetricPSS = "pss_bytes"

	// cgroup
	MetricCgroupCPU       = "cpu_usage_s"          // cumulative CPU seconds
	MetricCgroupThrottled = "cpu_throttled_s"      // cumulative seconds throttled by cpu.max
	MetricCgroupMemory    = "memory_current_bytes" // memory.current: all memory charged, page cache included
	MetricCgroupAnon      = "memory_anon_bytes"    // anonymous memory (heap, stacks)
	MetricCgroupFile      = "memory_file_bytes"    // page cache
	MetricCgroupPids      = "pids"                 // tasks (processes and threads)

	// jvm
	MetricGCYoungCount  = "gc_young_count"       // cumulative young collections
	MetricGCYoungTime   = "gc_young_time_s"      // cumulative seconds in young collections
	MetricGCFullCount   = "gc_full_count"        // cumulative full collections
	MetricGCFullTime    = "gc_full_time_s"       // cumulative seconds in full collections
	MetricHeapUsed      = "heap_used_bytes"      // used by objects, all generations
	MetricHeapCommitted = "heap_committed_bytes" // reserved from the OS for the heap
	MetricHeapMax       = "heap_max_bytes"       // the most the heap may grow to

	// host
	MetricBusy        = "cpu_busy_ratio"          // 0..1, all cores, since the previous sample
	MetricBusyMaxCore = "cpu_busy_max_core_ratio" // 0..1, the busiest core, since the previous sample
	MetricMemUsed     = "memory_used_bytes"       // MemTotal - MemAvailable
	MetricMemTotal    = "memory_total_bytes"      // MemTotal
	MetricLoad1       = "load1"                   // load average over 1 minute
	MetricSteal       = "cpu_steal_ratio"         // 0..1, all cores: time a hypervisor gave to other guests
	MetricRunQueue    = "procs_running"           // tasks runnable at the sample (the run queue)
	MetricCPUs        = "cpus"                    // the cores the host counts
	// MetricLoopbackRTT is the 90th percentile of the round trips of one
	// byte over a loopback TCP connection that the host monitor times
	// since the previous sample (paced to 20 a sample, one every 50 ms to
	// 500 ms: 2 for samples 100 ms apart, 20 for samples 1 s to 10 s
	// apart), the generator's own timing noise (how much a measured latency can move
	// for the generator's host alone).
	MetricLoopbackRTT = "loopback_rtt_p90_s"

	// postgres: the statements pg_stat_statements counts (the monitor's
	// own left out), all of them together
	MetricStatementCalls = "statement_calls"   // cumulative calls
	MetricStatementTime  = "statement_time_ms" // cumulative execution time

	// postgres: client connections other than the monitor's own
	MetricConnTotal      = "connections_total"
	MetricConnActive     = "connections_active"
	MetricConnIdle       = "connections_idle"
	MetricConnIdleInTx   = "connections_idle_in_transaction" // aborted ones included
	MetricConnLockWaiter = "connections_waiting_lock"        // waiting for a lock
)

// cumulative lists the metrics that only grow while their source lives.
var cumulative = map[string]bool{
	MetricCPUUser: true, MetricCPUSystem: true,
	MetricCgroupCPU: true, MetricCgroupThrottled: true,
	MetricGCYoungCount: true, MetricGCYoungTime: true,
	MetricGCFullCount: true, MetricGCFullTime: true,
	MetricStatementCalls: true, MetricStatementTime: true,
}
