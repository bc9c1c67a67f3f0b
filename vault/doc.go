// Package vault encrypts memories of kind vault at rest with AES-256-GCM.
// A master key, given to the process (ENGRAM_VAULT_KEY or a key file) and
// never stored, wraps one random data key per tenant; the wrapped keys live
// in the store (engram.VaultKeyReader, engram.VaultKeyWriter). A vault
// memory's value, abstraction, cues, metadata and language are sealed
// together under its tenant's data key with a random nonce, and with the
// memory's namespace and id as associated data, so a ciphertext copied onto
// another memory, user or tenant does not open. What stays in the clear is
// what lists and filters need: id, namespace, kind, status, times,
// confidence, importance, sources and version.
package vault
