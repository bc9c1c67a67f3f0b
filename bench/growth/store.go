package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/sqlite"
)

// fill writes perNS memories with their two vectors (value and
// abstraction) into every namespace, batch memories per transaction,
// straight through the store: the engine's write path (formation,
// versions, audit) is not what this benchmark measures.
func fill(ctx context.Context, st engram.Store, emb *hashEmbedder, nss []engram.Namespace, perNS int) error {
	g := newGen(1)
	type item struct {
		m    *engram.Memory
		vecs []engram.FieldVector
	}
	var pending []item
	flush := func() error {
		err := st.Update(ctx, func(tx engram.Tx) error {
			for _, it := range pending {
				if err := tx.InsertMemory(ctx, it.m); err != nil {
					return err
				}
				if err := tx.PutVectors(ctx, it.m.Namespace, it.m.ID, emb.Name(), it.vecs); err != nil {
					return err
				}
			}
			return nil
		})
		pending = pending[:0]
		return err
	}
	for _, ns := range nss {
		for range perNS {
			m := g.memory(ns)
			vs, _ := emb.Embed(ctx, []string{m.Value, m.Abstraction})
			pending = append(pending, item{m, []engram.FieldVector{{Field: engram.FieldValue, Vec: vs[0]}, {Field: engram.FieldAbstraction, Vec: vs[1]}}})
			if len(pending) == batch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if len(pending) > 0 {
		return flush()
	}
	return nil
}

// openStore opens an empty store and returns what removes it.
func openStore(ctx context.Context, backend, pgURL string) (engram.Store, func(), error) {
	switch backend {
	case "sqlite":
		dir, err := os.MkdirTemp("", "engram-growth-")
		if err != nil {
			return nil, nil, err
		}
		db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return db, func() { db.Close(); os.RemoveAll(dir) }, nil
	case "postgres":
		if pgURL == "" {
			return nil, nil, fmt.Errorf("postgres needs --pg URL or ENGRAM_TEST_POSTGRES_URL (run under scripts/pg.sh)")
		}
		schema := "growth_" + strings.ToLower(engram.NewID())
		admin, err := pgx.Connect(ctx, pgURL)
		if err != nil {
			return nil, nil, err
		}
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			admin.Close(ctx)
			return nil, nil, err
		}
		drop := func() { _, _ = admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); admin.Close(ctx) }
		u, err := url.Parse(pgURL)
		if err != nil {
			drop()
			return nil, nil, err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		db, err := postgres.Open(ctx, u.String(), postgres.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			drop()
			return nil, nil, err
		}
		return db, func() { db.Close(); drop() }, nil
	}
	return nil, nil, fmt.Errorf("unknown backend %q (sqlite or postgres)", backend)
}
