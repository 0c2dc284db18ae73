package configstore

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tidwall/gjson"
)

// TestQuery runs cps-path queries over a generated network of 20 devices
// with 3 termination points each.
func TestQuery(t *testing.T) {
	tps := func(ids ...int) []string {
		var keys []string
		for _, i := range ids {
			keys = append(keys, fmt.Sprintf("termination-points=tp%d", i))
		}
		return keys
	}
	cases := []struct {
		query string
		want  []string // member=key of each result, in order
		count int      // or the number of results, when want is nil
	}{
		{query: "//nodes[@status='down']", want: []string{"nodes=n10", "nodes=n20"}},
		{query: "/network/nodes[@node-id='n7']/termination-points[@tp-id='tp3']", want: tps(3)},
		{query: "/network/nodes[@node-id='n7']/termination-points", want: tps(1, 2, 3)},
		{query: "/network/nodes/termination-points[@tp-id='tp3']", count: 20},
		{query: "//termination-points[@admin-status='down' and @tp-id='tp1']", count: 3}, // (i+1)%7 == 0
		{query: "//termination-points[@speed=10000]", count: 60},
		{query: "//nodes[@vendor='acme' and @status='down']", want: []string{"nodes=n20"}},
		{query: "//nodes[@management-address='192.0.2.8']", want: []string{"nodes=n7"}}, // a leaf-list
		{query: "//location[@site='site-7']", want: []string{"location=site-7"}},
		{query: "//nodes[@status='up']/location", count: 18},
		{query: "/ietf-network:network", want: []string{"network=perflab-net"}},
		{query: "/nodes", count: 0},
		{query: "//nodes[@status='sideways']", count: 0},
		{query: "//nothing", count: 0},
	}
	forEachStorage(t, func(t *testing.T, s *Store) {
		mustAnchor(t, s, "ds", "net", GenerateNetwork(20, 3))
		for _, tc := range cases {
			got, err := s.Query(t.Context(), "ds", "net", tc.query, None)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			keys := resultKeys(got)
			if tc.want != nil && !slices.Equal(keys, tc.want) || tc.want == nil && len(keys) != tc.count {
				t.Errorf("%s = %q; want %q or %d results", tc.query, keys, tc.want, tc.count)
			}
		}
	})
}

// resultKeys returns "member=first leaf value" for each node of a query
// result.
func resultKeys(result []byte) []string {
	keys := []string{}
	gjson.ParseBytes(result).ForEach(func(_, r gjson.Result) bool {
		r.ForEach(func(member, v gjson.Result) bool {
			if v.IsArray() {
				v = v.Get("0")
			}
			v.ForEach(func(_, first gjson.Result) bool {
				keys = append(keys, member.Str+"="+first.String())
				return false
			})
			return false
		})
		return true
	})
	return keys
}

func TestQueryDescendants(t *testing.T) {
	forEachStorage(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		mustAnchor(t, s, "ds", "net", GenerateNetwork(5, 2))
		for _, d := range []Descendants{None, Direct, All} {
			node, err := s.GetNode(ctx, "ds", "net", "/network/nodes[@node-id='n3']", d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Query(ctx, "ds", "net", "//nodes[@node-id='n3']", d)
			if want := "[" + string(node) + "]"; err != nil || string(got) != want {
				t.Errorf("descendants %d: query = %s, %v; want %s", d, got, err, want)
			}
		}
	})
}

func TestQueryErrors(t *testing.T) {
	forEachStorage(t, func(t *testing.T, s *Store) {
		mustAnchor(t, s, "ds", "net", GenerateNetwork(2, 1))
		for _, q := range []string{"", "/", "nodes", "//", "/network//nodes", "//nodes[@status='up' or @vendor='acme']",
			"//nodes[contains(@name,'x')]", "//nodes[@status]", "//*", "/network/nodes[1]", "//nodes[@status='up'"} {
			if _, err := s.Query(t.Context(), "ds", "net", q, None); !errors.Is(err, ErrBadInput) {
				t.Errorf("query %q: %v; want ErrBadInput", q, err)
			}
		}
	})
}
