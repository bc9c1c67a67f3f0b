package postgres

import "context"

// Setting returns the value of a run-time setting on one of db's
// connections, for tests.
func Setting(ctx context.Context, db *DB, name string) (string, error) {
	var v string
	err := db.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

// Statements of the store, for tests of their plans.
const (
	GetMemoriesSQL = getMemoriesSQL
	GetVectorsSQL  = getVectorsSQL
)
