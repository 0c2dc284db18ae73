// Package metrics records operation latencies into HDR histograms without
// coordinated locking on the hot path, keeps exact counts, minimum, maximum
// and sums beside them, cuts the recording into time intervals, and merges
// per-worker data exactly.
//
// Latencies of successful operations go into the histogram (microsecond
// resolution, 3 significant digits, up to one hour); failed operations are
// counted by kind with their own exact min/mean/max, so a burst of instant
// "connection refused" errors cannot make a slow service look fast.
package metrics
