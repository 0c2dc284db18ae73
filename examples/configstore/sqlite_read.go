package configstore

import (
	"context"
	"database/sql"
)

// readStmts are the statements of GetNode and Query. Prepared on the read
// pool, each is parsed once per connection rather than once per request.
type readStmts struct {
	anchor  *sql.Stmt // anchorQuery
	subtree *sql.Stmt // anchor, xpath, xpath+"/", xpath+"0", depth: a node and its descendants
	tree    *sql.Stmt // anchor, depth: the nodes down to depth
	byName  *sql.Stmt // anchor, name: the nodes of that name
}

const nodeColumns = `SELECT xpath, parent_xpath, member, leaves FROM nodes WHERE `

func prepareReads(db *sql.DB) (readStmts, error) {
	var r readStmts
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&r.anchor, anchorQuery},
		{&r.subtree, nodeColumns + subtreeWhere +
			` AND depth <= ?5 + (SELECT depth FROM nodes WHERE anchor_id = ?1 AND xpath = ?2) ORDER BY id`},
		{&r.tree, nodeColumns + `anchor_id = ? AND depth <= ? ORDER BY id`},
		{&r.byName, nodeColumns + `anchor_id = ? AND name = ? ORDER BY id`},
	} {
		var err error
		if *p.stmt, err = db.Prepare(p.query); err != nil {
			return r, err
		}
	}
	return r, nil
}

// in returns the statements for use in tx.
func (r readStmts) in(ctx context.Context, tx *sql.Tx) readStmts {
	return readStmts{
		anchor:  tx.StmtContext(ctx, r.anchor),
		subtree: tx.StmtContext(ctx, r.subtree),
		tree:    tx.StmtContext(ctx, r.tree),
		byName:  tx.StmtContext(ctx, r.byName),
	}
}

// get reads without a transaction: two statements, where a concurrent
// delete can at worst turn "anchor not found" into "node not found".
func (s *sqliteStore) get(ctx context.Context, a anchorRef, xpath string, d Descendants) ([]*node, int, error) {
	anchor, err := anchorID(ctx, s.read, s.reads.anchor.QueryRowContext(ctx, a.dataspace, a.anchor), a)
	if err != nil {
		return nil, 0, err
	}
	nodes, visited, err := s.reads.read(ctx, anchor, xpath, d)
	if err == nil && xpath != rootPath && len(nodes) == 0 {
		err = nodeNotFound(xpath)
	}
	return nodes, visited, err
}

// query runs its steps, then reads descendants, in one read transaction.
func (s *sqliteStore) query(ctx context.Context, a anchorRef, q query, d Descendants) ([]*node, int, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	st := s.reads.in(ctx, tx)
	anchor, err := anchorID(ctx, tx, st.anchor.QueryRowContext(ctx, a.dataspace, a.anchor), a)
	if err != nil {
		return nil, 0, err
	}
	found, visited, err := st.find(ctx, anchor, q)
	if err != nil || d == None {
		return found, visited, err
	}
	nodes := make([]*node, len(found))
	for i, f := range found {
		sub, n, err := st.read(ctx, anchor, f.xpath, d)
		visited += n
		if err != nil {
			return nil, visited, err
		}
		nodes[i] = sub[0]
	}
	return nodes, visited, nil
}

// read returns the node at xpath (the top-level nodes for the root) with
// descendants to depth d, and how many rows it read.
func (r readStmts) read(ctx context.Context, anchor int64, xpath string, d Descendants) ([]*node, int, error) {
	depth := int64(d)
	if d == All {
		depth = 1 << 30
	}
	var (
		rows *sql.Rows
		err  error
	)
	if xpath == rootPath {
		rows, err = r.tree.QueryContext(ctx, anchor, 1+depth)
	} else {
		rows, err = r.subtree.QueryContext(ctx, anchor, xpath, xpath+"/", xpath+"0", depth)
	}
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var top []*node
	byPath := map[string]*node{}
	visited := 0
	for rows.Next() {
		n, parent, leaves, err := scanNode(rows)
		if err != nil {
			return nil, visited, err
		}
		visited++
		n.leaves = parseLeaves(leaves)
		if p := byPath[parent]; p != nil {
			p.children = append(p.children, n)
		} else {
			top = append(top, n)
		}
		byPath[n.xpath] = n
	}
	return top, visited, rows.Err()
}

// find returns the nodes, without descendants, that q selects, and how
// many rows it examined. Each step reads every node of the step's name and
// keeps those that are under a node the step before found and that meet
// the step's conditions.
func (r readStmts) find(ctx context.Context, anchor int64, q query) ([]*node, int, error) {
	var parents map[string]bool // nil: any parent, for the first step of a "//" query
	if !q.descendant {
		parents = map[string]bool{rootPath: true}
	}
	var found []*node
	visited := 0
	for _, s := range q.steps {
		var err error
		found, err = r.findStep(ctx, anchor, s, parents, &visited)
		if err != nil {
			return nil, visited, err
		}
		parents = make(map[string]bool, len(found))
		for _, n := range found {
			parents[n.xpath] = true
		}
	}
	return found, visited, nil
}

func (r readStmts) findStep(ctx context.Context, anchor int64, s step, parents map[string]bool, visited *int) ([]*node, error) {
	rows, err := r.byName.QueryContext(ctx, anchor, s.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []*node
	for rows.Next() {
		n, parent, leaves, err := scanNode(rows)
		if err != nil {
			return nil, err
		}
		*visited++
		if parents != nil && !parents[parent] {
			continue
		}
		if n.leaves = parseLeaves(leaves); matches(n.member, n.leaves, s) {
			found = append(found, n)
		}
	}
	return found, rows.Err()
}

// scanNode reads a row of nodeColumns, leaving its leaves as JSON.
func scanNode(rows *sql.Rows) (n *node, parent, leaves string, err error) {
	n = &node{}
	err = rows.Scan(&n.xpath, &parent, &n.member, &leaves)
	return n, parent, leaves, err
}
