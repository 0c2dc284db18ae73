package monitor

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"os"
	"slices"
)

// spillAt is how many points a monitor keeps in memory before it writes
// them to its spill file: 4,096 (96 KB), a block of 80 KB in the file. A
// run samples for as long as it goes, and kept in memory its points grew
// without bound (at 100 ms samples, 11 points a sample of the host and
// perflab's process: 6 MB of heap an hour, twice that with the garbage
// collector's headroom).
var spillAt = 4096

// pointSeries is one monitor's points, in time order (the order it took
// them): those spilled to a file (an unlinked temporary file), then those
// still in memory. A series whose points ever went back in time keeps
// them all in memory, sorted when read.
type pointSeries struct {
	mem      []packed
	f        *os.File
	spilled  int  // points in f
	unsorted bool // a point came before the one added before it
	lastT    int64
	noSpill  bool // f could not be made or written: all in memory
}

// recordSize is a packed point in the spill file: time, value, name.
const recordSize = 8 + 8 + 4

func (s *pointSeries) add(p packed) {
	if (len(s.mem) > 0 || s.spilled > 0) && p.t < s.lastT {
		s.unsorted = true
	}
	s.lastT = max(s.lastT, p.t)
	s.mem = append(s.mem, p)
	if len(s.mem) >= spillAt && !s.unsorted && !s.noSpill {
		s.spill()
	}
}

// spill writes the points in memory to the file.
func (s *pointSeries) spill() {
	if s.f == nil {
		f, err := os.CreateTemp("", "perflab-samples-*")
		if err != nil {
			s.noSpill = true
			return
		}
		// Unlinked at once: the file goes with its descriptor, whatever
		// becomes of the run (where the system lets an open file go).
		os.Remove(f.Name())
		s.f = f
	}
	buf := make([]byte, 0, len(s.mem)*recordSize)
	for _, p := range s.mem {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(p.t))
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(p.v))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(p.name))
	}
	if _, err := s.f.WriteAt(buf, int64(s.spilled)*recordSize); err != nil {
		s.noSpill = true // keep them in memory from now on
		return
	}
	s.spilled += len(s.mem)
	s.mem = s.mem[:0]
}

func (s *pointSeries) close() {
	if s.f != nil {
		s.f.Close()
		s.f, s.spilled = nil, 0
	}
}

// reader reads the series from its start.
func (s *pointSeries) reader() *seriesReader {
	mem := s.mem
	if s.unsorted {
		mem = slices.Clone(mem)
		slices.SortStableFunc(mem, func(a, b packed) int { return cmpInt64(a.t, b.t) })
	}
	r := &seriesReader{mem: mem}
	if s.f != nil && s.spilled > 0 {
		r.file = bufio.NewReaderSize(io.NewSectionReader(s.f, 0, int64(s.spilled)*recordSize), 80<<10)
		r.left = s.spilled
	}
	return r
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// seriesReader yields a series' points one at a time (next, then cur).
type seriesReader struct {
	file *bufio.Reader
	left int // points still to read from file
	mem  []packed
	cur  packed
}

func (r *seriesReader) next() bool {
	if r.left > 0 {
		var b [recordSize]byte
		if _, err := io.ReadFull(r.file, b[:]); err == nil {
			r.left--
			r.cur = packed{t: int64(binary.LittleEndian.Uint64(b[0:])), v: math.Float64frombits(binary.LittleEndian.Uint64(b[8:])), name: int32(binary.LittleEndian.Uint32(b[16:]))}
			return true
		}
		r.left = 0 // not seen: a file that cannot be read back ends there
	}
	if len(r.mem) == 0 {
		return false
	}
	r.cur, r.mem = r.mem[0], r.mem[1:]
	return true
}
