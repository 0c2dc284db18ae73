package logcorr

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRequestsRoundTrip(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 123456789, time.UTC)
	in := []Request{
		{Operation: "create-order", ID: "ev-1", Start: t0, End: t0.Add(42 * time.Millisecond), OK: true},
		{Operation: `odd, "quoted" op`, ID: "id,with,commas", Start: t0.Add(time.Second), End: t0.Add(time.Second + 7), OK: false},
		{Operation: "create-order", ID: "", Start: t0, End: t0, OK: true},
	}
	var buf bytes.Buffer
	if err := WriteRequests(&buf, in); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != RequestsHeader {
		t.Fatalf("header %q, want %q", first, RequestsHeader)
	}
	path := filepath.Join(t.TempDir(), "requests.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := ReadRequestsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d requests, want %d", len(out), len(in))
	}
	for i := range in {
		a, b := in[i], out[i]
		if a.Operation != b.Operation || a.ID != b.ID || !a.Start.Equal(b.Start) || !a.End.Equal(b.End) || a.OK != b.OK {
			t.Errorf("request %d: read %+v, want %+v", i, b, a)
		}
	}
}

func TestReadRequestsColumnsByName(t *testing.T) {
	in := "\ufeffid,ok,extra,end_unix_ns,start_unix_ns,operation\r\nx1,false,zzz,3000000,1000000,op\r\n"
	reqs, err := ReadRequests(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Request{Operation: "op", ID: "x1", Start: time.Unix(0, 1000000), End: time.Unix(0, 3000000)}
	if len(reqs) != 1 || reqs[0] != want {
		t.Fatalf("got %+v, want %+v", reqs, want)
	}
	reqs, err = ReadRequests(strings.NewReader(RequestsHeader + "\n"))
	if err != nil || len(reqs) != 0 {
		t.Fatalf("header only: %v, %v", reqs, err)
	}
}

func TestReadRequestsErrors(t *testing.T) {
	h := RequestsHeader + "\n"
	good := "op,a,1,2,true\n"
	for _, tc := range []struct{ in, want string }{
		{"", "line 1: missing header operation,id,start_unix_ns,end_unix_ns,ok"},
		{"operation,id,start_unix_ns,end_unix_ns\nop,a,1,2\n", `line 1: header "operation,id,start_unix_ns,end_unix_ns" has no column ok (want operation,id,start_unix_ns,end_unix_ns,ok)`},
		{h + good + "op,b,abc,2,true\n", `line 3: start_unix_ns "abc" is not an integer`},
		{h + "op,b,1,2.5,true\n", `line 2: end_unix_ns "2.5" is not an integer`},
		{h + good + good + "op,b,1,2,maybe\n", `line 4: ok "maybe" is not true or false`},
		{h + good + "op,b,1,2\n", "line 3: 4 fields, want 5 like the header"},
		{h + "op,b\"x,1,2,true\n", `line 2: bare " in non-quoted-field`},
		{h + good + "op,b,5,2,true\n", "line 3: end_unix_ns 2 is before start_unix_ns 5"},
		{h + ",b,1,2,true\n", "line 2: empty operation"},
	} {
		_, err := ReadRequests(strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "requests.csv")
	os.WriteFile(path, []byte(h+"op,b,1,2,maybe\n"), 0o644)
	if _, err := ReadRequestsFile(path); err == nil || err.Error() != path+`: line 2: ok "maybe" is not true or false` {
		t.Errorf("file error %v", err)
	}
}
