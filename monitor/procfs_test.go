package monitor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileGrows(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 1000) // larger than the first buffer
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for range 2 { // a fresh buffer, then a reused one
		got, err := readFile(path, &buf)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(want))
		}
	}
}

func TestProcReaders(t *testing.T) {
	pid := os.Getpid()
	var buf []byte
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	// ReadDir held one more descriptor open (the directory itself), as
	// countFDs does.
	if n, err := countFDs(pid, &buf); err != nil || n != len(entries) {
		t.Errorf("countFDs = %d (%v), /proc/self/fd lists %d", n, err, len(entries))
	}
	st, err := readProcStat(pid, &buf)
	if err != nil || st.state != 'R' && st.state != 'S' || st.threads < 1 || st.rss <= 0 || st.pgrp <= 0 {
		t.Errorf("readProcStat = %+v, %v", st, err)
	}
	if cl := cmdline(pid, &buf); !strings.Contains(cl, filepath.Base(os.Args[0])) {
		t.Errorf("cmdline = %q, want it to hold %q", cl, os.Args[0])
	}
	if _, err := readProcStat(unusedPID(t), &buf); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("readProcStat of no process: %v", err)
	}
}
