// Package analyze is the statistics perflab computes over series of
// numbers, with no I/O and no knowledge of runs: the Mann-Whitney U test
// with the Hodges-Lehmann shift and its confidence interval, the
// Mann-Kendall trend test, change points, the scaling of a sweep (speedup,
// efficiency, the point where throughput stops increasing) and the
// Universal Scalability Law fit. Package judge applies them to runs.
package analyze
