package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/vault"
)

var vaultCommand = &Command{
	Name:     "vault",
	Synopsis: "rotate the master key of the vault",
	Usage: `
Usage: engram vault rotate --old-key-file FILE --new-key-file FILE [--data DIR | --store URL]

Memories of kind vault are sealed under a data key per tenant, and the
store keeps each data key wrapped by the master key that engram serve gets
in ENGRAM_VAULT_KEY or --vault-key-file. rotate unwraps every data key with
the old master key and wraps it with the new one, in one transaction: the
sealed memories are not touched, so it is quick. If the old key does not
open every data key nothing changes. Stop the servers first, then start
them with the new key; a server still holding the old key in memory keeps
working until it restarts, after which the old key is refused.

Key files hold 32 bytes as hex or base64 (openssl rand -base64 32 makes
one) or as raw bytes.`,
	Run: runVault,
}

func runVault(ctx context.Context, m *Main, cmd *Command, args []string) error {
	switch {
	case len(args) > 0 && args[0] == "rotate":
		args = args[1:]
	case len(args) == 0 || !strings.HasPrefix(args[0], "-"):
		return cmdUsageErrorf(cmd, "vault needs the subcommand rotate")
	}
	fs := m.flagSet(cmd)
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` (env ENGRAM_DATA)")
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	oldFile := fs.String("old-key-file", "", "`file` with the master key the vault has now (required)")
	newFile := fs.String("new-key-file", "", "`file` with the master key to wrap the data keys with (required)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cmdUsageErrorf(cmd, "vault rotate takes no arguments, got %q", pos[0])
	case *oldFile == "" || *newFile == "":
		return cmdUsageErrorf(cmd, "vault rotate needs --old-key-file and --new-key-file")
	}
	oldKey, err := vault.LoadKey("", *oldFile)
	if err != nil {
		return err
	}
	newKey, err := vault.LoadKey("", *newFile)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	slog.SetDefault(logger) // the stores log migrations through it
	loc := storeLocation(*data, *store)
	st, err := openStore(ctx, "--store", loc, storeopen.Options{Logger: logger, MustExist: true})
	if err != nil {
		return fmt.Errorf("open %s: %w", storeName(loc), err)
	}
	defer st.Close()
	n, err := vault.Rotate(ctx, st, oldKey, newKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "rewrapped %d data keys with the new master key\n", n)
	return nil
}

// envVaultKeyFile names the environment variable of --vault-key-file.
const envVaultKeyFile = "ENGRAM_VAULT_KEY_FILE"

// openVault returns the vault whose master key is env (the value of
// ENGRAM_VAULT_KEY) or in the file path, nil when neither is given, and an
// error when the key is malformed or both are given.
func openVault(env, path string) (*vault.Vault, error) {
	key, err := vault.LoadKey(env, path)
	if err != nil || key == nil {
		return nil, err
	}
	return vault.New(key)
}

// copyVaultKeys copies the wrapped data keys of the vault from src to dst
// as they are (the master key that opens them stays the same), so that the
// vault memories a copy holds stay readable, and says how many it copied.
func copyVaultKeys(ctx context.Context, src, dst engram.Store) (int, error) {
	var keys []engram.VaultKey
	err := src.View(ctx, func(r engram.Reader) error {
		var err error
		keys, err = r.VaultKeys(ctx)
		return err
	})
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	return len(keys), dst.Update(ctx, func(tx engram.Tx) error {
		for i := range keys {
			if err := tx.InsertVaultKey(ctx, &keys[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// vaultFlag registers --vault, which asks a read for vault memories.
func vaultFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("vault", false, "include vault memories, decrypted (see docs/security.md#vault): needs ENGRAM_VAULT_KEY, or an admin key with --server; audited")
}

// vaultContext returns ctx asking for the vault when on is set. In local
// mode the operator holds the data directory and the master key, so the
// asking is enough; with --server the server checks the key.
func vaultContext(ctx context.Context, on bool) context.Context {
	if !on {
		return ctx
	}
	return engram.WithVault(ctx, "the engram command")
}
