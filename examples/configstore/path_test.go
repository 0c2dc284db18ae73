package configstore

import (
	"errors"
	"strings"
	"testing"
)

func TestParseNodePath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/", "/"},
		{"/bookstore", "/bookstore"},
		{"/bookstore/categories[@code='01']", "/bookstore/categories[@code='01']"},
		{`/bookstore/categories[@code="01"]`, "/bookstore/categories[@code='01']"},
		{"/bookstore/categories[ @code = '01' ]/books", "/bookstore/categories[@code='01']/books"},
		{"/a/b[@n=7]", "/a/b[@n='7']"},
		{"/a/b[@y='2' and @x='1']", "/a/b[@x='1' and @y='2']"},
		{`/a/b[@k="it's"]`, `/a/b[@k="it's"]`},
		{"/ietf-network:networks/network[@network-id='n']", "/networks/network[@network-id='n']"},
		{"/network/nodes[@node-id='n7']/termination-points[@tp-id='tp3']", "/network/nodes[@node-id='n7']/termination-points[@tp-id='tp3']"},
	} {
		got, err := parseNodePath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseNodePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "must start with /"},
		{"bookstore", "must start with /"},
		{"/bookstore/", "expected a name"},
		{"/bookstore//categories", "// is only supported at the start"},
		{"/a[@k='1'", "expected ] or and"},
		{"/a[@k='1' or @j='2']", "expected ] or and"},
		{"/a[@k='1]", "unterminated string"},
		{"/a[@k]", "expected ="},
		{"/a[k='1']", "expected @attribute"},
		{"/a[1]", "expected @attribute"},
		{"/a[@k=x]", "expected a quoted value or a number"},
		{"/*", "expected a name"},
		{"/a/text()", "functions are not supported"},
		{"/a/..", "expected a name"},
		{"/a/b[@k='1'][@j='2']", "expected / or the end"},
	} {
		_, err := parseQuery(tc.in)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseQuery(%q) = %v; want ErrBadInput with %q", tc.in, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"//a", "// is for queries"},
		{"/a[@k='1' and @k='2']", "@k given twice"},
	} {
		_, err := parseNodePath(tc.in)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseNodePath(%q) = %v; want ErrBadInput with %q", tc.in, err, tc.want)
		}
	}
	if _, err := parseQuery("/"); !errors.Is(err, ErrBadInput) {
		t.Errorf(`parseQuery("/") = %v; want ErrBadInput`, err)
	}
}

func TestParseDescendants(t *testing.T) {
	for in, want := range map[string]Descendants{"none": None, "direct": Direct, "all": All, "-1": All, "0": None, "3": 3} {
		if got, err := ParseDescendants(in); err != nil || got != want {
			t.Errorf("ParseDescendants(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "some", "-2", "1.5"} {
		if _, err := ParseDescendants(in); !errors.Is(err, ErrBadInput) {
			t.Errorf("ParseDescendants(%q) = %v; want ErrBadInput", in, err)
		}
	}
}
