package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaDigest names the schema this code creates; schema_version holds
// the digests of the schemas a database has been given.
var schemaDigest = func() string {
	sum := sha256.Sum256([]byte(schema))
	return hex.EncodeToString(sum[:])
}()

// migrate creates the schema unless the database has it already. The DDL
// (CREATE … IF NOT EXISTS still locks every table it names) runs only
// when schema_version lacks this schema's digest, under a
// transaction-scoped advisory lock so that processes opening one
// database at once do not race: a process opening a database in use never
// waits for, or deadlocks with, the other processes' writes.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if current, err := schemaCurrent(ctx, pool); err != nil || current {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(4242001)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, schema); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (digest text PRIMARY KEY);
			INSERT INTO schema_version VALUES ('`+schemaDigest+`') ON CONFLICT DO NOTHING`)
		return err
	})
}

// schemaCurrent reports whether the database has this schema (false when
// it has no schema_version table yet).
func schemaCurrent(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var current bool
	err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_version WHERE digest = $1)`, schemaDigest).Scan(&current)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return false, nil
	}
	return current, err
}
