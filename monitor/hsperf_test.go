package monitor

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perfEntry is a counter for buildHsperf: a long, or a string when text is set.
type perfEntry struct {
	name string
	long int64
	text string
}

// buildHsperf lays out an hsperfdata file as HotSpot does (see hsperf.go).
func buildHsperf(order binary.ByteOrder, entries []perfEntry) []byte {
	b := make([]byte, 32)
	copy(b, hsperfMagic)
	if order == binary.LittleEndian {
		b[4] = 1
	}
	b[5], b[6], b[7] = 2, 0, 1 // version 2.0, accessible
	order.PutUint32(b[24:], 32)
	order.PutUint32(b[28:], uint32(len(entries)))
	for _, e := range entries {
		nameOff := 20
		dataOff := (nameOff + len(e.name) + 1 + 7) &^ 7
		data := make([]byte, 8)
		typ, vlen := byte('J'), 0
		if e.text != "" {
			typ, vlen = 'B', len(e.text)+1
			data = append([]byte(e.text), 0)
		} else {
			order.PutUint64(data, uint64(e.long))
		}
		length := (dataOff + len(data) + 7) &^ 7
		entry := make([]byte, length)
		order.PutUint32(entry[0:], uint32(length))
		order.PutUint32(entry[4:], uint32(nameOff))
		order.PutUint32(entry[8:], uint32(vlen))
		entry[12] = typ
		order.PutUint32(entry[16:], uint32(dataOff))
		copy(entry[nameOff:], e.name)
		copy(entry[dataOff:], data)
		b = append(b, entry...)
	}
	order.PutUint32(b[8:], uint32(len(b)))
	return b
}

func TestHsperfLayout(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.BigEndian, binary.LittleEndian} {
		path := filepath.Join(t.TempDir(), "4242")
		file := buildHsperf(order, []perfEntry{
			{name: "sun.gc.collector.0.name", text: "Serial young collection pauses"},
			{name: hsYoungCount, long: 7},
			{name: "sun.gc.generation.0.space.0.used", long: 1000},
			{name: "sun.gc.generation.0.space.1.used", long: 200},
			{name: "sun.gc.generation.0.space.1.capacity", long: 5000},
			{name: "sun.gc.generation.1.space.0.used", long: 30},
		})
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		h, err := openHsperf(path)
		if err != nil {
			t.Fatal(err)
		}
		defer h.close()
		if err := h.read(); err != nil {
			t.Fatal(err)
		}
		if v, ok := h.long(hsYoungCount); !ok || v != 7 {
			t.Errorf("%v: young count = %v, %v", order, v, ok)
		}
		if _, ok := h.long("sun.gc.collector.0.name"); ok {
			t.Errorf("%v: a string read as a long", order)
		}
		if v, _ := h.sum(hsNewSpaces, hsSpaceUsedTail); v != 1200 {
			t.Errorf("%v: new generation used = %v, want 1200", order, v)
		}

		// The JVM updates values in place: a new read sees them.
		off := h.index[hsYoungCount]
		order.PutUint64(file[off:], 9)
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := h.read(); err != nil {
			t.Fatal(err)
		}
		if v, _ := h.long(hsYoungCount); v != 9 {
			t.Errorf("%v: young count after an update = %v, want 9", order, v)
		}
	}
}

func TestHsperfRejects(t *testing.T) {
	good := buildHsperf(binary.LittleEndian, []perfEntry{{name: hsYoungCount, long: 1}})
	for name, c := range map[string]struct {
		edit func([]byte)
		want string
	}{
		"magic":      {func(b []byte) { b[0] = 0 }, "not an hsperfdata file"},
		"accessible": {func(b []byte) { b[7] = 0 }, "not made its counters accessible"},
		"entries":    {func(b []byte) { b[28] = 9 }, "outside the file"},
		"length":     {func(b []byte) { b[32] = 0xff }, "malformed"},
	} {
		b := append([]byte(nil), good...)
		c.edit(b)
		path := filepath.Join(t.TempDir(), "1")
		os.WriteFile(path, b, 0o600)
		h, err := openHsperf(path)
		if err != nil {
			t.Fatal(err)
		}
		err = h.read()
		h.close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}
