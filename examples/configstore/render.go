package configstore

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

// appendObject appends nodes as the members of one JSON object.
func appendObject(b []byte, nodes []*node) []byte {
	b = append(b, '{')
	b = appendMembers(b, nodes, false)
	return append(b, '}')
}

// appendMembers appends nodes as object members: a container as
// "member":{...}, the entries of a list together as "member":[{...},...],
// in order of first appearance. comma tells whether members precede them.
func appendMembers(b []byte, nodes []*node, comma bool) []byte {
	var done map[string]bool // members already written; nil while nodes are few
	for i, n := range nodes {
		if done[n.member] {
			continue
		}
		if i+1 < len(nodes) {
			if done == nil {
				done = map[string]bool{}
			}
			done[n.member] = true
		}
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = gjson.AppendJSONString(b, n.member)
		b = append(b, ':')
		if !isListEntry(n.xpath) {
			b = appendNode(b, n)
			continue
		}
		b = append(b, '[')
		b = appendNode(b, n)
		for _, m := range nodes[i+1:] {
			if m.member == n.member {
				b = append(b, ',')
				b = appendNode(b, m)
			}
		}
		b = append(b, ']')
	}
	return b
}

// appendNode appends the object for n: its leaves, then its children.
func appendNode(b []byte, n *node) []byte {
	b = append(b, '{')
	b = appendLeafMembers(b, n.leaves)
	b = appendMembers(b, n.children, len(n.leaves) > 0)
	return append(b, '}')
}

// appendLeaves appends leaves as a JSON object, the form SQLite stores.
func appendLeaves(b []byte, leaves []leaf) []byte {
	b = append(b, '{')
	b = appendLeafMembers(b, leaves)
	return append(b, '}')
}

func appendLeafMembers(b []byte, leaves []leaf) []byte {
	for i, l := range leaves {
		if i > 0 {
			b = append(b, ',')
		}
		b = gjson.AppendJSONString(b, l.name)
		b = append(b, ':')
		b = appendValue(b, l.value)
	}
	return b
}

func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return gjson.AppendJSONString(b, v)
	case json.Number:
		return append(b, v...)
	case bool:
		return strconv.AppendBool(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

// parseLeaves decodes the JSON object written by appendLeaves.
func parseLeaves(s string) []leaf {
	var leaves []leaf
	gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
		leaves = append(leaves, leaf{k.Str, leafValue(v)})
		return true
	})
	return leaves
}
