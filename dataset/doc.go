// Package dataset provides the values that a load test's virtual users
// consume: curl-style URL globs (ExpandGlob), integer ranges (Range), CSV
// tables (ReadCSV), and a Cursor that hands rows out to concurrent virtual
// users per VU, in sequence, or at random.
//
// Every expansion is bounded (MaxValues by default), and the bound is
// checked before any value is made, so a typo in a pattern fails fast
// instead of exhausting memory.
package dataset
