package main

import (
	"github.com/engramhq/engram/vault"
)

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
