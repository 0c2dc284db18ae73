package configstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// node is a data node: a container or a list entry, with its leaves and,
// when read, the descendants asked for.
type node struct {
	xpath    string
	member   string // the JSON member name, module prefix included
	leaves   []leaf // in document order; a list entry's key comes first
	children []*node
}

// leaf is a scalar member or a leaf-list ([]any of scalars).
type leaf struct {
	name  string
	value any // string, json.Number, bool, nil or []any of those
}

// isListEntry tells a list entry ("...[@k='v']") from a container.
func isListEntry(xpath string) bool { return strings.HasSuffix(xpath, "]") }

// decodeFragment decodes a request body, a JSON object given under the node
// at parent: its leaf members are leaves of parent, its objects and arrays
// of objects are new child nodes.
func decodeFragment(parent string, data []byte) ([]leaf, []*node, error) {
	if !gjson.ValidBytes(data) {
		return nil, nil, fmt.Errorf("%w: body is not valid JSON", ErrBadInput)
	}
	body := gjson.ParseBytes(data)
	if !body.IsObject() {
		return nil, nil, fmt.Errorf("%w: body must be a JSON object", ErrBadInput)
	}
	seen := map[string]bool{}
	return split(parent, body, seen)
}

// split divides obj, the content of the node at xpath, into its leaves and
// child nodes. seen holds the paths made so far, to reject duplicates.
func split(xpath string, obj gjson.Result, seen map[string]bool) ([]leaf, []*node, error) {
	var (
		leaves   []leaf
		children []*node
		err      error
	)
	names := map[string]bool{}
	obj.ForEach(func(k, v gjson.Result) bool {
		if names[k.Str] {
			err = fmt.Errorf("%w: %s: member %q given twice", ErrBadInput, xpath, k.Str)
			return false
		}
		names[k.Str] = true
		switch {
		case v.IsObject():
			err = addChild(&children, xpath, k.Str, nil, v, seen)
		case v.IsArray() && isLeafList(v):
			leaves = append(leaves, leaf{k.Str, leafValue(v)})
		case v.IsArray():
			v.ForEach(func(_, entry gjson.Result) bool {
				if !entry.IsObject() {
					err = fmt.Errorf("%w: %s: list %q mixes entries and values", ErrBadInput, xpath, k.Str)
					return false
				}
				key, kerr := keyOf(entry)
				if kerr != nil {
					err = fmt.Errorf("%s: list %q: %w", xpath, k.Str, kerr)
					return false
				}
				err = addChild(&children, xpath, k.Str, key, entry, seen)
				return err == nil
			})
		default:
			leaves = append(leaves, leaf{k.Str, leafValue(v)})
		}
		return err == nil
	})
	return leaves, children, err
}

// addChild builds the node for member and appends it to children.
func addChild(children *[]*node, parent, member string, key []pred, v gjson.Result, seen map[string]bool) error {
	if !isName(member) {
		return fmt.Errorf("%w: %s: %q cannot name a node: want letters, digits, '_', '-', '.', ':'", ErrBadInput, parent, member)
	}
	xpath := childPath(parent, step{name: stripPrefix(member), preds: key})
	if seen[xpath] {
		return fmt.Errorf("%w: %s given twice", ErrBadInput, xpath)
	}
	seen[xpath] = true
	leaves, grandchildren, err := split(xpath, v, seen)
	*children = append(*children, &node{xpath: xpath, member: member, leaves: leaves, children: grandchildren})
	return err
}

// keyOf returns the key of a list entry: its first member, a scalar leaf.
func keyOf(entry gjson.Result) ([]pred, error) {
	var key []pred
	err := fmt.Errorf("%w: an entry has no key: its first member must be a string, number or boolean", ErrBadInput)
	entry.ForEach(func(k, v gjson.Result) bool {
		switch v.Type {
		case gjson.String, gjson.Number, gjson.True, gjson.False:
			value := scalarString(leafValue(v))
			if !isName(k.Str) {
				err = fmt.Errorf("%w: %q cannot name a key: want letters, digits, '_', '-', '.', ':'", ErrBadInput, k.Str)
				return false
			}
			if strings.Contains(value, "'") && strings.Contains(value, `"`) {
				err = fmt.Errorf("%w: key %s holds both quote characters", ErrBadInput, k.Str)
				return false
			}
			key, err = []pred{{attr: k.Str, value: value}}, nil
		}
		return false
	})
	return key, err
}

// isLeafList reports whether the array v holds no objects (an empty array is
// an empty leaf-list).
func isLeafList(v gjson.Result) bool {
	leafList := true
	v.ForEach(func(_, e gjson.Result) bool {
		leafList = !e.IsObject() && !e.IsArray()
		return leafList
	})
	return leafList
}

// leafValue converts a JSON scalar or array of scalars.
func leafValue(v gjson.Result) any {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Number:
		return json.Number(v.Raw)
	case gjson.True:
		return true
	case gjson.False:
		return false
	case gjson.JSON:
		values := []any{}
		v.ForEach(func(_, e gjson.Result) bool {
			values = append(values, leafValue(e))
			return true
		})
		return values
	}
	return nil
}

// scalarString is the text a condition compares a scalar leaf value with.
func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// matches reports whether a node named name with these leaves meets s.
func matches(name string, leaves []leaf, s step) bool {
	if stripPrefix(name) != s.name {
		return false
	}
	for _, p := range s.preds {
		if !hasLeafValue(leaves, p) {
			return false
		}
	}
	return true
}

func hasLeafValue(leaves []leaf, p pred) bool {
	for _, l := range leaves {
		if l.name != p.attr {
			continue
		}
		if values, ok := l.value.([]any); ok {
			for _, v := range values {
				if v != nil && scalarString(v) == p.value {
					return true
				}
			}
			return false
		}
		return l.value != nil && scalarString(l.value) == p.value
	}
	return false
}

// mergeLeaves returns old with the values of update; the result is a new
// slice, so readers holding old are not disturbed.
func mergeLeaves(old, update []leaf) []leaf {
	merged := append([]leaf(nil), old...)
next:
	for _, u := range update {
		for i := range merged {
			if merged[i].name == u.name {
				merged[i].value = u.value
				continue next
			}
		}
		merged = append(merged, u)
	}
	return merged
}
