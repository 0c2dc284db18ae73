// Package dataset provides the values that a load test's virtual users
// consume: curl-style URL globs, integer ranges, CSV tables, and cursors that
// hand rows out to concurrent virtual users per VU, in sequence, or at random.
package dataset
