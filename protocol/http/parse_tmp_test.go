package http

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/plan"
)

func page(n int) []byte {
	var b strings.Builder
	b.WriteString("<html><head><title>Shop</title></head><body><ul>\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<li class="item"><a href="/p/%d">Product&nbsp;%d</a><br><span class="price">9.99</span></li>`+"\n", i, i)
	}
	b.WriteString("</ul></body></html>")
	return []byte(b.String())
}

func feed(n int) []byte {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?><feed>\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<item id="%d"><name>Product %d</name><price>9.99</price></item>`+"\n", i, i)
	}
	b.WriteString("</feed>")
	return []byte(b.String())
}

func js(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"name":"Product %d","price":9.99},`, i, i)
	}
	b.WriteString(`{"id":0}]}`)
	return []byte(b.String())
}

func mem(f func() any) (alloc, live uint64) {
	runtime.GC()
	var m0, m1, m2 runtime.MemStats
	runtime.ReadMemStats(&m0)
	x := f()
	runtime.ReadMemStats(&m1)
	runtime.GC()
	runtime.ReadMemStats(&m2)
	runtime.KeepAlive(x)
	return m1.TotalAlloc - m0.TotalAlloc, m2.HeapAlloc - m0.HeapAlloc
}

func TestParseTmp(t *testing.T) {
	const n = 3 << 20
	h, x, j := page(n), feed(n), js(n)
	p, _ := plan.ParseJSONPath("$.items[*].id")
	for _, c := range []struct {
		name string
		f    func() any
	}{
		{"html goquery", func() any { v := view{body: h}; return v.htmlDoc() }},
		{"html xpath (xml then lax)", func() any { v := view{body: h}; d, _ := v.xmlDoc(); return d }},
		{"xml xpath", func() any { v := view{body: x}; d, _ := v.xmlDoc(); return d }},
		{"json tree", func() any { v := view{body: j}; return p.Select(v.jsonBody(), nil) }},
	} {
		t0 := time.Now()
		a, l := mem(c.f)
		t.Logf("%v", time.Since(t0))
		t.Logf("%s: allocated %d MB (%.0f MB/MB), live %d MB (%.0f MB/MB)", c.name, a>>20, float64(a)/n, l>>20, float64(l)/n)
	}
}
