package configstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", pure Go
)

// sqliteStore is the SQLite backend: one row per node, keyed by anchor and
// path. Writes go through one connection in immediate transactions; reads
// use a pool of connections that WAL mode lets run beside the writer.
type sqliteStore struct {
	read, write *sql.DB
	reads       readStmts // prepared on the read pool
}

var sqliteSchema = []string{
	`CREATE TABLE IF NOT EXISTS dataspaces (
		name TEXT PRIMARY KEY
	)`,
	`CREATE TABLE IF NOT EXISTS anchors (
		id INTEGER PRIMARY KEY,
		dataspace TEXT NOT NULL REFERENCES dataspaces (name) ON DELETE CASCADE,
		name TEXT NOT NULL,
		UNIQUE (dataspace, name)
	)`,
	// id orders nodes by creation; name is the last step's name without
	// module prefix, member the JSON member name; depth is 1 for top-level
	// nodes; leaves is a JSON object.
	`CREATE TABLE IF NOT EXISTS nodes (
		id INTEGER PRIMARY KEY,
		anchor_id INTEGER NOT NULL REFERENCES anchors (id) ON DELETE CASCADE,
		xpath TEXT NOT NULL,
		parent_xpath TEXT NOT NULL,
		name TEXT NOT NULL,
		member TEXT NOT NULL,
		depth INTEGER NOT NULL,
		leaves TEXT NOT NULL,
		UNIQUE (anchor_id, xpath)
	)`,
	`CREATE INDEX IF NOT EXISTS nodes_by_name ON nodes (anchor_id, name)`,
}

func openSQLite(file string) (*sqliteStore, error) {
	dsn := "file:" + file + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	write, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, err
	}
	read.SetMaxOpenConns(max(4, runtime.NumCPU()))
	s := &sqliteStore{read: read, write: write}
	for _, stmt := range sqliteSchema {
		if _, err := write.Exec(stmt); err != nil {
			s.close()
			return nil, fmt.Errorf("sqlite %s: %w", file, err)
		}
	}
	if s.reads, err = prepareReads(read); err != nil {
		s.close()
		return nil, fmt.Errorf("sqlite %s: %w", file, err)
	}
	return s, nil
}

func (s *sqliteStore) close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

func (s *sqliteStore) createDataspace(ctx context.Context, ds string) error {
	res, err := s.write.ExecContext(ctx, `INSERT INTO dataspaces (name) VALUES (?) ON CONFLICT DO NOTHING`, ds)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = fmt.Errorf("dataspace %q: %w", ds, ErrExists)
	}
	return err
}

func (s *sqliteStore) deleteDataspace(ctx context.Context, ds string) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM dataspaces WHERE name = ?`, ds)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = dataspaceNotFound(ds)
	}
	return err
}

func (s *sqliteStore) dataspaces(ctx context.Context) ([]string, error) {
	return queryStrings(ctx, s.read, `SELECT name FROM dataspaces ORDER BY name`)
}

func (s *sqliteStore) createAnchor(ctx context.Context, ds, anchor string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := checkDataspace(ctx, tx, ds); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO anchors (dataspace, name) VALUES (?, ?) ON CONFLICT DO NOTHING`, ds, anchor)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("anchor %q: %w", anchor, ErrExists)
	}
	return tx.Commit()
}

func (s *sqliteStore) deleteAnchor(ctx context.Context, ds, anchor string) error {
	return s.writeTx(ctx, anchorRef{ds, anchor}, func(tx *sql.Tx, id int64) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM anchors WHERE id = ?`, id)
		return err
	})
}

func (s *sqliteStore) anchors(ctx context.Context, ds string) ([]string, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := checkDataspace(ctx, tx, ds); err != nil {
		return nil, err
	}
	return queryStrings(ctx, tx, `SELECT name FROM anchors WHERE dataspace = ? ORDER BY name`, ds)
}

// queryer is what *sql.DB and *sql.Tx share.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// writeTx runs f in a write transaction with the id of anchor a.
func (s *sqliteStore) writeTx(ctx context.Context, a anchorRef, f func(tx *sql.Tx, anchor int64) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	anchor, err := anchorID(ctx, tx, tx.QueryRowContext(ctx, anchorQuery, a.dataspace, a.anchor), a)
	if err != nil {
		return err
	}
	if err := f(tx, anchor); err != nil {
		return err
	}
	return tx.Commit()
}

// anchorQuery finds an anchor's id by dataspace and name.
const anchorQuery = `SELECT id FROM anchors WHERE dataspace = ? AND name = ?`

// anchorID scans the anchor's id from row, a result of anchorQuery, or
// tells with q which of the dataspace and the anchor is missing.
func anchorID(ctx context.Context, q queryer, row *sql.Row, a anchorRef) (int64, error) {
	var id int64
	err := row.Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if err := checkDataspace(ctx, q, a.dataspace); err != nil {
			return 0, err
		}
		return 0, anchorNotFound(a)
	}
	return id, err
}

func checkDataspace(ctx context.Context, q queryer, ds string) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM dataspaces WHERE name = ?`, ds).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return dataspaceNotFound(ds)
	}
	return nil
}

func queryStrings(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	return list, rows.Err()
}
