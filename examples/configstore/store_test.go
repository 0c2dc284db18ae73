package configstore

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"
)

func TestDataspacesAndAnchors(t *testing.T) {
	forEachStorage(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		// The calls run in order, as the table is built.
		for _, tc := range []struct {
			name string
			err  error
			want error
		}{
			{"create ds", s.CreateDataspace(ctx, "ds"), nil},
			{"create ds2", s.CreateDataspace(ctx, "ds2"), nil},
			{"create ds again", s.CreateDataspace(ctx, "ds"), ErrExists},
			{"create empty name", s.CreateDataspace(ctx, ""), ErrBadInput},
			{"create bad name", s.CreateDataspace(ctx, "a/b"), ErrBadInput},
			{"create anchor", s.CreateAnchor(ctx, "ds", "a1"), nil},
			{"create anchor 2", s.CreateAnchor(ctx, "ds", "a2"), nil},
			{"create anchor again", s.CreateAnchor(ctx, "ds", "a1"), ErrExists},
			{"create anchor in missing ds", s.CreateAnchor(ctx, "nope", "a1"), ErrNotFound},
			{"create anchor bad name", s.CreateAnchor(ctx, "ds", "a b"), ErrBadInput},
			{"delete anchor", s.DeleteAnchor(ctx, "ds", "a2"), nil},
			{"delete anchor again", s.DeleteAnchor(ctx, "ds", "a2"), ErrNotFound},
			{"delete anchor in missing ds", s.DeleteAnchor(ctx, "nope", "a1"), ErrNotFound},
			{"delete ds2", s.DeleteDataspace(ctx, "ds2"), nil},
			{"delete ds2 again", s.DeleteDataspace(ctx, "ds2"), ErrNotFound},
		} {
			if !errors.Is(tc.err, tc.want) || (tc.want == nil) != (tc.err == nil) {
				t.Errorf("%s: %v; want %v", tc.name, tc.err, tc.want)
			}
		}
		if got, err := s.Dataspaces(ctx); err != nil || !slices.Equal(got, []string{"ds"}) {
			t.Errorf("Dataspaces = %q, %v", got, err)
		}
		if got, err := s.Anchors(ctx, "ds"); err != nil || !slices.Equal(got, []string{"a1"}) {
			t.Errorf("Anchors = %q, %v", got, err)
		}
		if _, err := s.Anchors(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Anchors(nope) = %v; want ErrNotFound", err)
		}

		// Deleting a dataspace deletes its anchors and their data.
		if err := s.CreateNode(ctx, "ds", "a1", "/", []byte(`{"x":{"y":1}}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteDataspace(ctx, "ds"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateDataspace(ctx, "ds"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAnchor(ctx, "ds", "a1"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetNode(ctx, "ds", "a1", "/", All); err != nil || string(got) != "{}" {
			t.Errorf("tree after re-creating = %s, %v; want {}", got, err)
		}
	})
}

const bookstore = `{"bookstore": {"bookstore-name": "Chapters", "categories": [
	{"code": "01", "name": "SciFi", "books": [
		{"title": "Dune", "price": 10, "authors": ["Herbert"]},
		{"title": "Solaris", "price": 8}]},
	{"code": "02", "name": "Kids", "books": [{"title": "Matilda", "price": 6}]}]}}`

// call is one Store operation of a table-driven test.
type call struct {
	op    string // create, replace, update, delete, get or query
	xpath string // the path, or the cps-path of a query
	body  string
	d     Descendants
}

func (c call) do(ctx context.Context, s *Store) ([]byte, error) {
	const ds, a = "ds", "books"
	switch c.op {
	case "create":
		return nil, s.CreateNode(ctx, ds, a, c.xpath, []byte(c.body))
	case "replace":
		return nil, s.ReplaceNode(ctx, ds, a, c.xpath, []byte(c.body))
	case "update":
		return nil, s.UpdateNode(ctx, ds, a, c.xpath, []byte(c.body))
	case "delete":
		return nil, s.DeleteNode(ctx, ds, a, c.xpath)
	case "get":
		return s.GetNode(ctx, ds, a, c.xpath, c.d)
	case "query":
		return s.Query(ctx, ds, a, c.xpath, c.d)
	}
	panic("unknown op " + c.op)
}

// TestNodeOperations runs one sequence of operations, each with the
// expected JSON or error, on both storages.
func TestNodeOperations(t *testing.T) {
	const cat01 = `/bookstore/categories[@code='01']`
	steps := []struct {
		call
		want    string
		wantErr error
	}{
		{call: call{op: "get", xpath: "/", d: All}, want: `{}`},
		{call: call{op: "create", xpath: "/", body: bookstore}},
		{call: call{op: "create", xpath: "/", body: bookstore}, wantErr: ErrExists},
		{call: call{op: "get", xpath: "/bookstore"}, want: `{"bookstore":{"bookstore-name":"Chapters"}}`},
		{call: call{op: "get", xpath: "/bookstore", d: Direct},
			want: `{"bookstore":{"bookstore-name":"Chapters","categories":[{"code":"01","name":"SciFi"},{"code":"02","name":"Kids"}]}}`},
		{call: call{op: "get", xpath: `/bookstore/categories[@code="01"]`, d: All},
			want: `{"categories":[{"code":"01","name":"SciFi","books":[{"title":"Dune","price":10,"authors":["Herbert"]},{"title":"Solaris","price":8}]}]}`},
		{call: call{op: "get", xpath: cat01 + `/books[@title='Dune']`}, want: `{"books":[{"title":"Dune","price":10,"authors":["Herbert"]}]}`},
		{call: call{op: "get", xpath: "/bookstore/categories[@code='09']"}, wantErr: ErrNotFound},
		{call: call{op: "get", xpath: "/bookstore/categories"}, wantErr: ErrNotFound},
		{call: call{op: "get", xpath: "/bookstore/categories[@name='SciFi']"}, wantErr: ErrNotFound},
		{call: call{op: "get", xpath: "bookstore"}, wantErr: ErrBadInput},

		// create
		{call: call{op: "create", xpath: "/bookstore/categories[@code='02']", body: `{"books":[{"title":"Heidi","price":7}]}`}},
		{call: call{op: "create", xpath: "/bookstore/categories[@code='02']", body: `{"books":[{"title":"Heidi","price":7}]}`}, wantErr: ErrExists},
		{call: call{op: "create", xpath: "/bookstore/categories[@code='09']", body: `{"books":[{"title":"X"}]}`}, wantErr: ErrNotFound},
		{call: call{op: "create", xpath: "/bookstore", body: `{"open": true}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"x": `}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `[{"x": 1}]`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"tags":[{"t":"a"},{"t":"a"}]}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"tags":[{"sub":{}}]}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"tags":[{"t":"a"}, 1]}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"a":{"b":1},"a":{"b":2}}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"a b":{"c":1}}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"tags":[{"t t":"a"}]}`}, wantErr: ErrBadInput},
		{call: call{op: "create", xpath: "/bookstore", body: `{"tags":[{"t":"it's \"x\""}]}`}, wantErr: ErrBadInput},
		{call: call{op: "get", xpath: "/bookstore/categories[@code='02']", d: All},
			want: `{"categories":[{"code":"02","name":"Kids","books":[{"title":"Matilda","price":6},{"title":"Heidi","price":7}]}]}`},

		// update merges leaves
		{call: call{op: "update", xpath: "/bookstore/categories[@code='02']",
			body: `{"name":"Children","books":[{"title":"Heidi","price":9,"pages":288}]}`}},
		{call: call{op: "get", xpath: "/bookstore/categories[@code='02']", d: All},
			want: `{"categories":[{"code":"02","name":"Children","books":[{"title":"Matilda","price":6},{"title":"Heidi","price":9,"pages":288}]}]}`},
		{call: call{op: "update", xpath: "/bookstore", body: `{"categories":[{"code":"07","name":"New"}]}`}, wantErr: ErrNotFound},
		{call: call{op: "update", xpath: "/bookstore/nothing", body: `{"a":1}`}, wantErr: ErrNotFound},
		{call: call{op: "update", xpath: "/bookstore", body: `{"categories":[{"code":"01","books":[{"title":"Dune"}]}]}`}, wantErr: ErrBadInput},
		{call: call{op: "update", xpath: "/", body: `{"open":true}`}, wantErr: ErrBadInput},
		{call: call{op: "update", xpath: "/", body: `{"bookstore":{"open":true}}`}},
		{call: call{op: "get", xpath: "/bookstore"}, want: `{"bookstore":{"bookstore-name":"Chapters","open":true}}`},

		// replace swaps a subtree in place, or adds it
		{call: call{op: "replace", xpath: "/bookstore", body: `{"categories":[{"code":"01","name":"Sci-Fi"}]}`}},
		{call: call{op: "replace", xpath: "/bookstore", body: `{"categories":[{"code":"03","name":"Poetry"}]}`}},
		{call: call{op: "replace", xpath: "/nothing", body: `{"a":{}}`}, wantErr: ErrNotFound},
		{call: call{op: "get", xpath: "/bookstore", d: 2},
			want: `{"bookstore":{"bookstore-name":"Chapters","open":true,"categories":[{"code":"01","name":"Sci-Fi"},` +
				`{"code":"02","name":"Children","books":[{"title":"Matilda","price":6},{"title":"Heidi","price":9,"pages":288}]},` +
				`{"code":"03","name":"Poetry"}]}}`},

		// delete
		{call: call{op: "delete", xpath: "/bookstore/categories[@code='02']/books[@title='Heidi']"}},
		{call: call{op: "delete", xpath: "/bookstore/categories[@code='02']/books[@title='Heidi']"}, wantErr: ErrNotFound},
		{call: call{op: "delete", xpath: "/bookstore/categories[@code='03']"}},
		{call: call{op: "get", xpath: "/bookstore/categories[@code='02']", d: All},
			want: `{"categories":[{"code":"02","name":"Children","books":[{"title":"Matilda","price":6}]}]}`},
		{call: call{op: "delete", xpath: "//bookstore"}, wantErr: ErrBadInput},
		{call: call{op: "delete", xpath: "/"}},
		{call: call{op: "get", xpath: "/", d: All}, want: `{}`},
		{call: call{op: "delete", xpath: "/"}},
	}
	forEachStorage(t, func(t *testing.T, s *Store) {
		mustAnchor(t, s, "ds", "books", nil)
		for i, st := range steps {
			got, err := st.do(t.Context(), s)
			if !errors.Is(err, st.wantErr) || (st.wantErr == nil) != (err == nil) {
				t.Fatalf("step %d %s %s: error %v; want %v", i, st.op, st.xpath, err, st.wantErr)
			}
			if st.want != "" && string(got) != st.want {
				t.Fatalf("step %d %s %s:\n got %s\nwant %s", i, st.op, st.xpath, got, st.want)
			}
		}
	})
}

func TestMissingAnchor(t *testing.T) {
	forEachStorage(t, func(t *testing.T, s *Store) {
		mustAnchor(t, s, "ds", "other", nil)
		for _, op := range []string{"create", "replace", "update", "delete", "get", "query"} {
			c := call{op: op, xpath: "/bookstore", body: bookstore}
			if op == "update" {
				c.body = `{"open":true}`
			}
			if _, err := c.do(t.Context(), s); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s on a missing anchor: %v; want ErrNotFound", op, err)
			}
		}
	})
}

// TestRFC8944 uploads the RFC 8944 sample used by the CPS basic load test
// (examples/cps), reads it back whole, then replaces a fragment as that test
// does.
func TestRFC8944(t *testing.T) {
	sample, err := os.ReadFile("testdata/rfc8944.json")
	if err != nil {
		t.Fatal(err)
	}
	const d3 = "/networks/network[@network-id='l2-topo-example']/node[@node-id='D3']"
	forEachStorage(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		mustAnchor(t, s, "ds", "net", sample)
		got, err := s.GetNode(ctx, "ds", "net", "/", All)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got, sample) {
			t.Errorf("the tree read back differs from the one written:\n%s", got)
		}
		fragment := `{"ietf-l2-topology:l2-node-attributes": {"management-address": ["192.0.2.3", "2001:db8:0:3::"]}}`
		if err := s.ReplaceNode(ctx, "ds", "net", d3, []byte(fragment)); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetNode(ctx, "ds", "net", "/ietf-network:networks"+d3[len("/networks"):]+"/l2-node-attributes", All)
		if err != nil || !sameJSON(t, got, []byte(fragment)) {
			t.Errorf("replaced fragment = %s, %v; want %s", got, err, fragment)
		}
		got, err = s.Query(ctx, "ds", "net", "//termination-point[@tp-id='2-0-2']", None)
		if n := len(decodeJSON(t, got).([]any)); err != nil || n != 4 {
			t.Errorf("query found %d termination points, %v; want 4", n, err)
		}
	})
}

// TestConcurrent runs the CPS basic flow (create anchor, upload, replace a
// fragment, read, delete anchor) in parallel; run it with -race.
func TestConcurrent(t *testing.T) {
	network := GenerateNetwork(20, 2)
	forEachStorage(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		mustAnchor(t, s, "ds", "shared", network)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Go(func() {
				anchor := "a" + string(rune('0'+w))
				for range 5 {
					for _, err := range []error{
						s.CreateAnchor(ctx, "ds", anchor),
						s.CreateNode(ctx, "ds", anchor, "/", network),
						s.ReplaceNode(ctx, "ds", anchor, "/network/nodes[@node-id='n3']", []byte(`{"location":{"site":"x"}}`)),
						s.UpdateNode(ctx, "ds", "shared", "/network/nodes[@node-id='n4']", []byte(`{"status":"down"}`)),
						second(s.Query(ctx, "ds", "shared", "//nodes[@status='down']", None)),
						second(s.GetNode(ctx, "ds", anchor, "/", All)),
						s.DeleteAnchor(ctx, "ds", anchor),
					} {
						if err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// sameJSON compares JSON texts, ignoring the order of object members.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decodeJSON(t, a), decodeJSON(t, b))
}
