package configstore

import (
	"context"
	"database/sql"
	"errors"
)

func (s *sqliteStore) insert(ctx context.Context, a anchorRef, parent string, trees []*node) error {
	return s.writeTx(ctx, a, func(tx *sql.Tx, anchor int64) error {
		_, depth, err := lookup(ctx, tx, anchor, parent)
		if err != nil {
			return err
		}
		for _, t := range trees {
			if _, _, err := lookup(ctx, tx, anchor, t.xpath); err == nil {
				return nodeExists(t.xpath)
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		in, err := newInserter(ctx, tx, anchor)
		if err != nil {
			return err
		}
		defer in.close()
		for _, t := range trees {
			if err := in.add(parent, depth+1, t, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *sqliteStore) replace(ctx context.Context, a anchorRef, parent string, trees []*node) error {
	return s.writeTx(ctx, a, func(tx *sql.Tx, anchor int64) error {
		_, depth, err := lookup(ctx, tx, anchor, parent)
		if err != nil {
			return err
		}
		in, err := newInserter(ctx, tx, anchor)
		if err != nil {
			return err
		}
		defer in.close()
		for _, t := range trees {
			var id any // the old row's id keeps the node's place; nil takes a new one
			old, _, err := lookup(ctx, tx, anchor, t.xpath)
			switch {
			case err == nil:
				id = old
				if _, err := deleteSubtree(ctx, tx, anchor, t.xpath); err != nil {
					return err
				}
			case !errors.Is(err, ErrNotFound):
				return err
			}
			if err := in.add(parent, depth+1, t, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *sqliteStore) merge(ctx context.Context, a anchorRef, xpath string, leaves []leaf, trees []*node) error {
	return s.writeTx(ctx, a, func(tx *sql.Tx, anchor int64) error {
		targets := append([]*node{{xpath: xpath, leaves: leaves}}, trees...)
		for _, t := range targets {
			if t.xpath == rootPath {
				continue
			}
			var id int64
			var old string
			err := tx.QueryRowContext(ctx, `SELECT id, leaves FROM nodes WHERE anchor_id = ? AND xpath = ?`,
				anchor, t.xpath).Scan(&id, &old)
			if errors.Is(err, sql.ErrNoRows) {
				return nodeNotFound(t.xpath)
			} else if err != nil {
				return err
			}
			merged := appendLeaves(nil, mergeLeaves(parseLeaves(old), t.leaves))
			if _, err := tx.ExecContext(ctx, `UPDATE nodes SET leaves = ? WHERE id = ?`, string(merged), id); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *sqliteStore) remove(ctx context.Context, a anchorRef, xpath string) error {
	return s.writeTx(ctx, a, func(tx *sql.Tx, anchor int64) error {
		if xpath == rootPath {
			_, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE anchor_id = ?`, anchor)
			return err
		}
		n, err := deleteSubtree(ctx, tx, anchor, xpath)
		if err == nil && n == 0 {
			err = nodeNotFound(xpath)
		}
		return err
	})
}

// lookup returns the row id and depth of the node at xpath, or ErrNotFound.
// The root is always there, with id 0 and depth 0.
func lookup(ctx context.Context, q queryer, anchor int64, xpath string) (id int64, depth int, err error) {
	if xpath == rootPath {
		return 0, 0, nil
	}
	err = q.QueryRowContext(ctx, `SELECT id, depth FROM nodes WHERE anchor_id = ? AND xpath = ?`,
		anchor, xpath).Scan(&id, &depth)
	if errors.Is(err, sql.ErrNoRows) {
		err = nodeNotFound(xpath)
	}
	return id, depth, err
}

// subtreeWhere selects the node at ?2 and its descendants: their paths
// start with ?2 + "/", so they sort between ?3 = ?2+"/" and ?4 = ?2+"0".
// SQLite answers it with two searches of the (anchor_id, xpath) index.
const subtreeWhere = `anchor_id = ?1 AND (xpath = ?2 OR (xpath > ?3 AND xpath < ?4))`

func deleteSubtree(ctx context.Context, tx *sql.Tx, anchor int64, xpath string) (int64, error) {
	// A DELETE would scan the anchor's rows for subtreeWhere; the UNION
	// keeps the two index searches.
	res, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE id IN (
		SELECT id FROM nodes WHERE anchor_id = ?1 AND xpath = ?2 UNION ALL
		SELECT id FROM nodes WHERE anchor_id = ?1 AND xpath > ?3 AND xpath < ?4)`,
		anchor, xpath, xpath+"/", xpath+"0")
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// inserter adds trees of nodes to an anchor with one prepared statement.
type inserter struct {
	ctx    context.Context
	stmt   *sql.Stmt
	anchor int64
	buf    []byte
}

func newInserter(ctx context.Context, tx *sql.Tx, anchor int64) (*inserter, error) {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO nodes
		(id, anchor_id, xpath, parent_xpath, name, member, depth, leaves) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	return &inserter{ctx: ctx, stmt: stmt, anchor: anchor}, err
}

func (in *inserter) close() { in.stmt.Close() }

// add inserts t, with row id id (nil for a new one), and its descendants.
func (in *inserter) add(parent string, depth int, t *node, id any) error {
	in.buf = appendLeaves(in.buf[:0], t.leaves)
	if _, err := in.stmt.ExecContext(in.ctx, id, in.anchor, t.xpath, parent,
		stripPrefix(t.member), t.member, depth, string(in.buf)); err != nil {
		return err
	}
	for _, c := range t.children {
		if err := in.add(t.xpath, depth+1, c, nil); err != nil {
			return err
		}
	}
	return nil
}
