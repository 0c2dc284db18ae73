package configstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// memory is the in-memory backend: one tree of memNodes per anchor, with an
// index by path. One lock guards it all; reads share it.
type memory struct {
	mu     sync.RWMutex
	seq    int64 // creation counter, orders query results
	spaces map[string]map[string]*memAnchor
}

type memAnchor struct {
	root  *memNode            // the implicit node "/"
	nodes map[string]*memNode // every node by path, the root included
}

type memNode struct {
	seq      int64
	xpath    string
	member   string
	leaves   []leaf // never modified in place: readers may hold it
	parent   *memNode
	children []*memNode
}

func newMemory() *memory {
	return &memory{spaces: map[string]map[string]*memAnchor{}}
}

func newMemAnchor() *memAnchor {
	root := &memNode{xpath: rootPath}
	return &memAnchor{root: root, nodes: map[string]*memNode{rootPath: root}}
}

func (m *memory) close() error { return nil }

func (m *memory) createDataspace(_ context.Context, ds string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.spaces[ds] != nil {
		return fmt.Errorf("dataspace %q: %w", ds, ErrExists)
	}
	m.spaces[ds] = map[string]*memAnchor{}
	return nil
}

func (m *memory) deleteDataspace(_ context.Context, ds string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.spaces[ds] == nil {
		return dataspaceNotFound(ds)
	}
	delete(m.spaces, ds)
	return nil
}

func (m *memory) dataspaces(context.Context) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return sortedKeys(m.spaces), nil
}

func (m *memory) createAnchor(_ context.Context, ds, anchor string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	space := m.spaces[ds]
	switch {
	case space == nil:
		return dataspaceNotFound(ds)
	case space[anchor] != nil:
		return fmt.Errorf("anchor %q: %w", anchor, ErrExists)
	}
	space[anchor] = newMemAnchor()
	return nil
}

func (m *memory) deleteAnchor(_ context.Context, ds, anchor string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.anchor(anchorRef{ds, anchor}); err != nil {
		return err
	}
	delete(m.spaces[ds], anchor)
	return nil
}

func (m *memory) anchors(_ context.Context, ds string) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	space := m.spaces[ds]
	if space == nil {
		return nil, dataspaceNotFound(ds)
	}
	return sortedKeys(space), nil
}

// anchor finds an anchor; the caller holds the lock.
func (m *memory) anchor(a anchorRef) (*memAnchor, error) {
	space := m.spaces[a.dataspace]
	if space == nil {
		return nil, dataspaceNotFound(a.dataspace)
	}
	if an := space[a.anchor]; an != nil {
		return an, nil
	}
	return nil, anchorNotFound(a)
}

// node finds the node at xpath; the caller holds the lock.
func (m *memory) node(a anchorRef, xpath string) (*memAnchor, *memNode, error) {
	an, err := m.anchor(a)
	if err != nil {
		return nil, nil, err
	}
	n := an.nodes[xpath]
	if n == nil {
		return nil, nil, nodeNotFound(xpath)
	}
	return an, n, nil
}

func (m *memory) insert(_ context.Context, a anchorRef, parent string, trees []*node) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	an, p, err := m.node(a, parent)
	if err != nil {
		return err
	}
	for _, t := range trees {
		if an.nodes[t.xpath] != nil {
			return nodeExists(t.xpath)
		}
	}
	for _, t := range trees {
		p.children = append(p.children, m.build(an, p, t, 0))
	}
	return nil
}

func (m *memory) replace(_ context.Context, a anchorRef, parent string, trees []*node) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	an, p, err := m.node(a, parent)
	if err != nil {
		return err
	}
	for _, t := range trees {
		old := an.nodes[t.xpath]
		if old == nil {
			p.children = append(p.children, m.build(an, p, t, 0))
			continue
		}
		an.unindex(old)
		p.children[slices.Index(p.children, old)] = m.build(an, p, t, old.seq)
	}
	return nil
}

// build makes and indexes the memNodes of t; seq 0 takes a new number.
func (m *memory) build(an *memAnchor, parent *memNode, t *node, seq int64) *memNode {
	if seq == 0 {
		m.seq++
		seq = m.seq
	}
	n := &memNode{seq: seq, xpath: t.xpath, member: t.member, leaves: t.leaves, parent: parent}
	an.nodes[n.xpath] = n
	for _, c := range t.children {
		n.children = append(n.children, m.build(an, n, c, 0))
	}
	return n
}

// unindex drops n and its descendants from the index.
func (an *memAnchor) unindex(n *memNode) {
	delete(an.nodes, n.xpath)
	for _, c := range n.children {
		an.unindex(c)
	}
}

func (m *memory) merge(_ context.Context, a anchorRef, xpath string, leaves []leaf, trees []*node) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	an, target, err := m.node(a, xpath)
	if err != nil {
		return err
	}
	for _, t := range trees {
		if an.nodes[t.xpath] == nil {
			return nodeNotFound(t.xpath)
		}
	}
	target.leaves = mergeLeaves(target.leaves, leaves)
	for _, t := range trees {
		n := an.nodes[t.xpath]
		n.leaves = mergeLeaves(n.leaves, t.leaves)
	}
	return nil
}

func (m *memory) remove(_ context.Context, a anchorRef, xpath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	an, n, err := m.node(a, xpath)
	if err != nil {
		return err
	}
	if n == an.root {
		*an = *newMemAnchor()
		return nil
	}
	an.unindex(n)
	n.parent.children = slices.DeleteFunc(n.parent.children, func(c *memNode) bool { return c == n })
	return nil
}

func (m *memory) get(_ context.Context, a anchorRef, xpath string, d Descendants) ([]*node, int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	an, n, err := m.node(a, xpath)
	if err != nil {
		return nil, 0, err
	}
	visited := 0
	if n != an.root {
		return []*node{n.copy(d, &visited)}, visited, nil
	}
	nodes := make([]*node, len(n.children))
	for i, c := range n.children {
		nodes[i] = c.copy(d, &visited)
	}
	return nodes, visited, nil
}

// copy returns n with descendants to depth d, counting the nodes copied.
func (n *memNode) copy(d Descendants, visited *int) *node {
	*visited++
	c := &node{xpath: n.xpath, member: n.member, leaves: n.leaves}
	if d != None {
		c.children = make([]*node, len(n.children))
		for i, child := range n.children {
			c.children[i] = child.copy(d-1, visited)
		}
	}
	return c
}

func (m *memory) query(_ context.Context, a anchorRef, q query, d Descendants) ([]*node, int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	an, err := m.anchor(a)
	if err != nil {
		return nil, 0, err
	}
	visited := 0
	var found []*memNode
	if q.descendant {
		var walk func(n *memNode)
		walk = func(n *memNode) {
			for _, c := range n.children {
				visited++
				if matches(c.member, c.leaves, q.steps[0]) {
					found = append(found, c)
				}
				walk(c)
			}
		}
		walk(an.root)
	} else {
		found = []*memNode{an.root}
	}
	steps := q.steps
	if q.descendant {
		steps = steps[1:]
	}
	for _, s := range steps {
		var next []*memNode
		for _, n := range found {
			for _, c := range n.children {
				visited++
				if matches(c.member, c.leaves, s) {
					next = append(next, c)
				}
			}
		}
		found = next
	}
	slices.SortFunc(found, func(x, y *memNode) int { return cmp.Compare(x.seq, y.seq) })
	nodes := make([]*node, len(found))
	for i, n := range found {
		nodes[i] = n.copy(d, &visited)
	}
	return nodes, visited, nil
}

// sortedKeys returns the keys of m in order, as a non-nil slice.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}
