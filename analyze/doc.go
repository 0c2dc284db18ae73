// Package analyze holds the statistics perflab computes over finished
// results, with no I/O: scaling of a sweep (speedup, efficiency, the point
// where throughput stops increasing), and later comparisons and drift.
package analyze
