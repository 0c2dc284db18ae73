package monitor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hsperfdata is the file in which a HotSpot JVM publishes its performance
// counters (the ones jstat reads): /tmp/hsperfdata_USER/PID, a memory-mapped
// buffer the JVM updates in place. Its layout is HotSpot's
// src/hotspot/share/runtime/perfMemory.hpp:
//
//	prologue (32 bytes): magic 0xcafec0c0, byte order (0 big, 1 little
//	endian), major and minor version, accessible flag, used, overflow,
//	modification time stamp, offset of the first entry, number of entries
//
//	entry: entry length, name offset, vector length (all relative to the
//	entry; 4 bytes each), data type ('J' for a long), flags, units,
//	variability (1 byte each), data offset (4 bytes); the NUL-terminated
//	name and the data follow
//
// Only long counters are read. The file stays open between samples: one
// sample is one pread of the file, and the index of names is rebuilt only
// when the JVM adds counters.
type hsperf struct {
	f     *os.File
	buf   []byte
	order binary.ByteOrder
	stamp uint64         // modification time stamp of the index
	n     uint32         // number of entries in the index
	index map[string]int // long counter name → offset of its data
}

var hsperfMagic = []byte{0xca, 0xfe, 0xc0, 0xc0}

// errNoPerfData is returned for a process that publishes no counters.
var errNoPerfData = errors.New("no hsperfdata file: not a HotSpot JVM, or one run with -XX:-UsePerfData " +
	"or -XX:+PerfDisableSharedMem, or its /tmp cannot be reached from here")

// findHsperf returns the hsperfdata file of a process. It looks in the
// process's own /tmp (/proc/PID/root/tmp, where a JVM in a container writes
// it under its PID in its own namespace), then in this machine's /tmp.
func findHsperf(pid int, buf *[]byte) (string, error) {
	b, err := readFile("/proc/"+strconv.Itoa(pid)+"/status", buf)
	if err != nil {
		return "", fmt.Errorf("process %d: %w", pid, errGone)
	}
	nspid := pid
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" {
			nspid, _ = strconv.Atoi(f[len(f)-1])
		}
	}
	for _, pattern := range []string{
		fmt.Sprintf("/proc/%d/root/tmp/hsperfdata_*/%d", pid, nspid),
		fmt.Sprintf("/tmp/hsperfdata_*/%d", pid),
	} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0], nil
		}
	}
	return "", fmt.Errorf("process %d: %w", pid, errNoPerfData)
}

func openHsperf(path string) (*hsperf, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	// A JVM's counters are 32 KiB by default (-XX:PerfDataMemorySize); a
	// file under /tmp that is not one, or is huge, is not read.
	if !fi.Mode().IsRegular() || fi.Size() > maxHsperf {
		f.Close()
		return nil, fmt.Errorf("%s: not a JVM's performance counters (a regular file of at most %d MiB)", path, maxHsperf>>20)
	}
	return &hsperf{f: f, buf: make([]byte, fi.Size())}, nil
}

// maxHsperf bounds the JVM performance-counter file read.
const maxHsperf = 64 << 20

// read takes a fresh copy of the counters.
func (h *hsperf) read() error {
	n, err := h.f.ReadAt(h.buf, 0)
	if n < len(h.buf) {
		return fmt.Errorf("%s: %v", h.f.Name(), err)
	}
	b := h.buf
	if len(b) < 32 || !bytes.Equal(b[:4], hsperfMagic) {
		return fmt.Errorf("%s is not an hsperfdata file", h.f.Name())
	}
	if b[7] == 0 {
		return fmt.Errorf("%s: the JVM has not made its counters accessible yet", h.f.Name())
	}
	h.order = binary.ByteOrder(binary.BigEndian)
	if b[4] == 1 {
		h.order = binary.LittleEndian
	}
	stamp, entries := h.order.Uint64(b[16:]), h.order.Uint32(b[28:])
	if h.index == nil || stamp != h.stamp || entries != h.n {
		if err := h.reindex(); err != nil {
			return err
		}
		h.stamp, h.n = stamp, entries
	}
	return nil
}

// reindex maps the names of the long counters to their data.
func (h *hsperf) reindex() error {
	b, o := h.buf, h.order
	h.index = map[string]int{}
	off, n := int(o.Uint32(b[24:])), int(o.Uint32(b[28:]))
	for i := 0; i < n; i++ {
		if off < 0 || off+20 > len(b) {
			return fmt.Errorf("%s: entry %d lies outside the file", h.f.Name(), i)
		}
		e := b[off:]
		length, nameOff, dataOff := int(o.Uint32(e)), int(o.Uint32(e[4:])), int(o.Uint32(e[16:]))
		if length < 20 || length > len(e) || nameOff >= length || dataOff+8 > length && e[12] == 'J' {
			return fmt.Errorf("%s: entry %d is malformed", h.f.Name(), i)
		}
		if e[12] == 'J' && o.Uint32(e[8:]) == 0 {
			name := e[nameOff:length]
			if end := bytes.IndexByte(name, 0); end >= 0 {
				name = name[:end]
			}
			h.index[string(name)] = off + dataOff
		}
		off += length
	}
	return nil
}

// long returns the value of a long counter from the last read.
func (h *hsperf) long(name string) (int64, bool) {
	off, ok := h.index[name]
	if !ok {
		return 0, false
	}
	return int64(h.order.Uint64(h.buf[off:])), true
}

// sum adds the long counters whose names have the prefix and suffix given,
// such as the used bytes of every space of the heap.
func (h *hsperf) sum(prefix, suffix string) (int64, bool) {
	var total int64
	found := false
	for name, off := range h.index {
		if strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix) {
			total += int64(h.order.Uint64(h.buf[off:]))
			found = true
		}
	}
	return total, found
}

func (h *hsperf) close() error { return h.f.Close() }
