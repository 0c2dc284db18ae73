package configstore

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Store is a configuration store: dataspaces, their anchors and one JSON
// data tree per anchor. It is safe for concurrent use.
type Store struct {
	b       backend
	visited atomic.Int64
}

// backend is a storage. Store validates and decodes its input before calling
// it, so a backend sees canonical paths and decoded trees only.
type backend interface {
	createDataspace(ctx context.Context, ds string) error
	deleteDataspace(ctx context.Context, ds string) error
	dataspaces(ctx context.Context) ([]string, error)
	createAnchor(ctx context.Context, ds, anchor string) error
	deleteAnchor(ctx context.Context, ds, anchor string) error
	anchors(ctx context.Context, ds string) ([]string, error)

	// insert adds trees under parent: ErrNotFound if parent is missing,
	// ErrExists if one of them is present.
	insert(ctx context.Context, a anchorRef, parent string, trees []*node) error
	// replace puts trees under parent, each replacing any node at its path
	// (keeping its place among its siblings).
	replace(ctx context.Context, a anchorRef, parent string, trees []*node) error
	// merge merges leaves into the node at xpath and each tree's leaves into
	// the node at its path; all must exist.
	merge(ctx context.Context, a anchorRef, xpath string, leaves []leaf, trees []*node) error
	// remove deletes the node at xpath and its descendants; at the root it
	// deletes every node.
	remove(ctx context.Context, a anchorRef, xpath string) error
	// get returns the node at xpath (the top-level nodes for the root) with
	// descendants to depth d, and how many nodes it read.
	get(ctx context.Context, a anchorRef, xpath string, d Descendants) ([]*node, int, error)
	// query returns the nodes q selects, in creation order, with
	// descendants to depth d, and how many nodes it examined.
	query(ctx context.Context, a anchorRef, q query, d Descendants) ([]*node, int, error)
	close() error
}

// anchorRef names an anchor.
type anchorRef struct{ dataspace, anchor string }

// NewMemory returns a Store that keeps its data in memory.
func NewMemory() *Store { return &Store{b: newMemory()} }

// OpenSQLite returns a Store kept in the SQLite database file, created if
// missing.
func OpenSQLite(file string) (*Store, error) {
	b, err := openSQLite(file)
	if err != nil {
		return nil, err
	}
	return &Store{b: b}, nil
}

// Close releases the storage.
func (s *Store) Close() error { return s.b.close() }

// NodesVisited is the number of nodes read or examined by GetNode and Query
// since the Store was made: the work that grows with the data.
func (s *Store) NodesVisited() int64 { return s.visited.Load() }

// CreateDataspace creates an empty dataspace.
func (s *Store) CreateDataspace(ctx context.Context, ds string) error {
	if err := checkName("dataspace", ds); err != nil {
		return err
	}
	return s.b.createDataspace(ctx, ds)
}

// DeleteDataspace deletes a dataspace with its anchors and their data.
func (s *Store) DeleteDataspace(ctx context.Context, ds string) error {
	return s.b.deleteDataspace(ctx, ds)
}

// Dataspaces lists the dataspaces by name.
func (s *Store) Dataspaces(ctx context.Context) ([]string, error) {
	return s.b.dataspaces(ctx)
}

// CreateAnchor creates an anchor, with an empty tree, in a dataspace.
func (s *Store) CreateAnchor(ctx context.Context, ds, anchor string) error {
	if err := checkName("anchor", anchor); err != nil {
		return err
	}
	return s.b.createAnchor(ctx, ds, anchor)
}

// DeleteAnchor deletes an anchor and its data.
func (s *Store) DeleteAnchor(ctx context.Context, ds, anchor string) error {
	return s.b.deleteAnchor(ctx, ds, anchor)
}

// Anchors lists the anchors of a dataspace by name.
func (s *Store) Anchors(ctx context.Context, ds string) ([]string, error) {
	return s.b.anchors(ctx, ds)
}

// CreateNode adds the nodes of data, a JSON object, under the node at
// parent ("/" for top-level nodes). Each member of data that is an object or
// an array of objects becomes a node; none may exist already.
func (s *Store) CreateNode(ctx context.Context, ds, anchor, parent string, data []byte) error {
	parent, trees, err := decodeNodes(parent, data)
	if err != nil {
		return err
	}
	return s.b.insert(ctx, anchorRef{ds, anchor}, parent, trees)
}

// ReplaceNode puts the nodes of data under the node at parent, replacing
// each node of the same path with its subtree, or adding it.
func (s *Store) ReplaceNode(ctx context.Context, ds, anchor, parent string, data []byte) error {
	parent, trees, err := decodeNodes(parent, data)
	if err != nil {
		return err
	}
	return s.b.replace(ctx, anchorRef{ds, anchor}, parent, trees)
}

// UpdateNode merges leaves. The leaf members of data go to the node at
// xpath; each object (or list entry) member names a child of it and holds
// leaves for that child. Child nodes are not added or removed.
func (s *Store) UpdateNode(ctx context.Context, ds, anchor, xpath string, data []byte) error {
	xpath, err := parseNodePath(xpath)
	if err != nil {
		return err
	}
	leaves, trees, err := decodeFragment(xpath, data)
	if err != nil {
		return err
	}
	if xpath == rootPath && len(leaves) > 0 {
		return fmt.Errorf("%w: the root has no leaves: leaf %q needs a node", ErrBadInput, leaves[0].name)
	}
	for _, t := range trees {
		if len(t.children) > 0 {
			return fmt.Errorf("%w: %s: an update merges leaves only; use ReplaceNode for child nodes", ErrBadInput, t.xpath)
		}
	}
	if err := keepsKeys(xpath, leaves); err != nil {
		return err
	}
	return s.b.merge(ctx, anchorRef{ds, anchor}, xpath, leaves, trees)
}

// DeleteNode deletes the node at xpath and its descendants; "/" deletes the
// whole tree.
func (s *Store) DeleteNode(ctx context.Context, ds, anchor, xpath string) error {
	xpath, err := parseNodePath(xpath)
	if err != nil {
		return err
	}
	return s.b.remove(ctx, anchorRef{ds, anchor}, xpath)
}

// GetNode returns the node at xpath as a JSON object with one member, named
// after the node (a list entry comes as a one-entry array), with descendants
// to depth d. "/" returns all top-level nodes.
func (s *Store) GetNode(ctx context.Context, ds, anchor, xpath string, d Descendants) ([]byte, error) {
	xpath, err := parseNodePath(xpath)
	if err != nil {
		return nil, err
	}
	nodes, visited, err := s.b.get(ctx, anchorRef{ds, anchor}, xpath, d)
	s.visited.Add(int64(visited))
	if err != nil {
		return nil, err
	}
	return appendObject(nil, nodes), nil
}

// Query returns the nodes selected by cpsPath as a JSON array, each node in
// the form GetNode uses, in creation order, with descendants to depth d.
func (s *Store) Query(ctx context.Context, ds, anchor, cpsPath string, d Descendants) ([]byte, error) {
	q, err := parseQuery(cpsPath)
	if err != nil {
		return nil, err
	}
	nodes, visited, err := s.b.query(ctx, anchorRef{ds, anchor}, q, d)
	s.visited.Add(int64(visited))
	if err != nil {
		return nil, err
	}
	b := []byte{'['}
	for i, n := range nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendObject(b, []*node{n})
	}
	return append(b, ']'), nil
}

// decodeNodes parses parent and decodes data into the trees to put under it.
func decodeNodes(parent string, data []byte) (string, []*node, error) {
	parent, err := parseNodePath(parent)
	if err != nil {
		return "", nil, err
	}
	leaves, trees, err := decodeFragment(parent, data)
	switch {
	case err != nil:
		return "", nil, err
	case len(leaves) > 0:
		return "", nil, fmt.Errorf("%w: leaf %q is not a node: use UpdateNode to set leaves", ErrBadInput, leaves[0].name)
	case len(trees) == 0:
		return "", nil, fmt.Errorf("%w: the body holds no node", ErrBadInput)
	}
	return parent, trees, nil
}

// checkName accepts names of letters, digits, '.', '_' and '-'.
func checkName(kind, name string) error {
	if name == "" || len(name) > 255 {
		return fmt.Errorf("%w: %s name must be 1 to 255 characters", ErrBadInput, kind)
	}
	for _, c := range []byte(name) {
		if !isNameByte(c, false) || c == ':' {
			return fmt.Errorf("%w: %s name %q: only letters, digits, '.', '_' and '-' are allowed", ErrBadInput, kind, name)
		}
	}
	return nil
}

// keepsKeys rejects an update that would change the key of the list entry
// at xpath: its path is made of the key, so the node would be left under
// the old one. Replace the entry (delete and create) to re-key it.
func keepsKeys(xpath string, leaves []leaf) error {
	q, err := parse(xpath)
	if err != nil || len(q.steps) == 0 {
		return err
	}
	last := q.steps[len(q.steps)-1]
	for _, p := range last.preds {
		for _, l := range leaves {
			if stripPrefix(l.name) == p.attr && scalarString(l.value) != p.value {
				return fmt.Errorf("%w: %s: leaf %s is the entry's key; an update cannot change it", ErrBadInput, xpath, l.name)
			}
		}
	}
	return nil
}
