//go:build !unix

package store

// processAlive cannot look the process up here: runs are judged by their
// heartbeat alone.
func processAlive(pid int) bool { return true }
