package engine

import (
	"context"
	"crypto/cipher"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vault"
)

// The vault in the engine: memories of kind vault are sealed (package
// vault) just before they are stored, so versions, the full-text index and
// exports only ever hold ciphertext, and they are never embedded. Reads
// leave them out unless the context carries engram.WithVault; then they
// are opened after the read and the read is audited as "vault.read" before
// anything is returned.

// VaultSearchLimit is the most vault memories of one scope that a vault
// search decrypts and matches, newest first. Vault memories are few by
// nature; beyond this, older ones are not searched (list them instead).
const VaultSearchLimit = engram.MaxLimit

// AuditVaultRead is the op of the audit entry every vault read writes.
const AuditVaultRead = "vault.read"

// errNoVault is the answer to a vault write on an engine without a vault.
func errNoVault(where string) error {
	return engram.Errorf(engram.EUNAVAILABLE, "%s: kind vault needs the vault, which this server does not have: start it with %s or --vault-key-file (see the README, Vault); nothing was stored", where, vault.EnvKey)
}

// prepareVault makes sure, before a write transaction, that the data key
// sealing the vault memories among ms (of namespace n's tenant) exists and
// is held by the vault: making it inside would take a second write
// transaction. It fails with EUNAVAILABLE on an engine without a vault,
// or with the store's error.
func (e *core) prepareVault(ctx context.Context, n engram.Namespace, ms []engram.Memory) error {
	i := slices.IndexFunc(ms, func(m engram.Memory) bool { return m.Kind == engram.KindVault })
	if i < 0 {
		return nil
	}
	if e.vault == nil {
		return errNoVault(fmt.Sprintf("memories[%d]", i))
	}
	_, err := e.vault.DataKey(ctx, e.store, n, true)
	return err
}

// sealed returns m as the store keeps it: sealed under its tenant's data
// key (see prepareVault) when it is a vault memory.
func (e *core) sealed(ctx context.Context, m *engram.Memory) (*engram.Memory, error) {
	if m.Kind != engram.KindVault {
		return m, nil
	}
	if e.vault == nil {
		return nil, errNoVault("memory")
	}
	dk, err := e.vault.DataKey(ctx, e.store, m.Namespace, false)
	if err != nil {
		return nil, err
	}
	if dk == nil {
		return nil, engram.Errorf(engram.EINTERNAL, "memory %s: tenant %s/%s has no vault data key: the write did not prepare one", m.ID, m.Namespace.Org, m.Namespace.Project)
	}
	s, err := vault.Seal(dk, *m)
	return &s, err
}

// visible reads memory id of scope s for a read or a change: a vault
// memory is not found unless ctx carries engram.WithVault.
func visible(ctx context.Context, r engram.Reader, s engram.Scope, id string) (*engram.Memory, error) {
	m, err := r.GetMemory(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if m.Kind == engram.KindVault && !engram.VaultFrom(ctx) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	return m, nil
}

// isVaultVersion reports whether v is a version of a vault memory.
func isVaultVersion(v engram.Version) bool {
	return (v.Old != nil && v.Old.Kind == engram.KindVault) || (v.New != nil && v.New.Kind == engram.KindVault)
}

// notVault refuses a change of content to a vault memory: it is sealed as
// a whole, and a patch of sealed fields cannot be applied in place.
func notVault(m *engram.Memory, what string) error {
	if m.Kind == engram.KindVault {
		return engram.Errorf(engram.EINVALID, "memory %s is a vault memory, whose content cannot be changed by %s; delete it and add a new one", m.ID, what)
	}
	return nil
}

// hideVault returns f narrowed to memories that are not vault ones, for a
// read without vault access. Asking for kind vault without access is
// EINVALID, saying how to ask.
func hideVault(f engram.MemoryFilter) (engram.MemoryFilter, error) {
	if slices.Contains(f.Kinds, engram.KindVault) {
		return f, engram.Errorf(engram.EINVALID, "filter: kind vault is read only by asking for the vault (vault=true, or \"vault\": true in a search) with a key that may read it")
	}
	if len(f.Kinds) == 0 {
		// Every kind of engram.Kind.Valid but vault: a kind added there
		// must be added here, or reads without the vault will miss it.
		f.Kinds = []engram.Kind{engram.KindCore, engram.KindEpisodic, engram.KindSemantic, engram.KindProcedural, engram.KindResource}
	}
	return f, nil
}

// openKey returns the data key of n's tenant for reading, nil when it has
// none. It fails with EUNAVAILABLE on an engine without a vault.
func (e *core) openKey(ctx context.Context, n engram.Namespace) (cipher.AEAD, error) {
	if e.vault == nil {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "vault memories are encrypted and this server has no vault key: start it with %s or --vault-key-file", vault.EnvKey)
	}
	return e.vault.DataKey(ctx, e.store, n, false)
}

// reveal opens the sealed memories among ms in place, with the data key of
// scope s's tenant, and audits the read as how (e.g. "get") before
// returning. An altered ciphertext fails the whole read.
func (e *core) reveal(ctx context.Context, s engram.Scope, how string, ms ...*engram.Memory) error {
	var ids []string
	var dk cipher.AEAD
	for _, m := range ms {
		if m == nil || !vault.IsSealed(m) {
			continue
		}
		if dk == nil {
			var err error
			if dk, err = e.openKey(ctx, s.Namespace()); err != nil {
				return err
			}
		}
		o, err := vault.Open(dk, *m)
		if err != nil {
			return err
		}
		*m = o
		if !slices.Contains(ids, m.ID) {
			ids = append(ids, m.ID)
		}
	}
	return e.auditVault(ctx, s, how, ids)
}

// auditVault writes the audit entry of a vault read of ids, when there
// are any; the read fails if the entry cannot be written.
func (e *core) auditVault(ctx context.Context, s engram.Scope, how string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	detail := how
	if by := engram.VaultGrantFrom(ctx); by != "" {
		detail += " by " + by
	}
	a := e.audit(s.Namespace(), engram.ActorFrom(ctx), AuditVaultRead, ids, detail, e.clock())
	if err := e.store.Update(ctx, func(tx engram.Tx) error { return tx.InsertAudit(ctx, a) }); err != nil {
		return fmt.Errorf("audit vault read: %w", err)
	}
	return nil
}

// searchVault answers a search that asks for the vault: it decrypts up to
// VaultSearchLimit vault memories of the scope that pass the filter,
// newest first, and ranks those that contain query terms by the share of
// the terms they contain. Vault memories are never indexed in plaintext, so
// the retrieval channels cannot see them.
func (e *searcher) searchVault(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	s, err := e.plan(req)
	if err != nil {
		return nil, err
	}
	if !engram.VaultFrom(ctx) {
		return nil, engram.Errorf(engram.EFORBIDDEN, "vault: reading the vault needs a key that may read it (see the README, Vault)")
	}
	if req.Budget > 0 || len(req.Channels) > 0 {
		return nil, engram.Errorf(engram.EINVALID, "vault: a vault search matches terms only; it takes no budget and no channels")
	}
	f := req.Filter
	f.Kinds, f.Limit, f.Cursor = []engram.Kind{engram.KindVault}, VaultSearchLimit, ""
	var ms []engram.Memory
	err = e.store.View(ctx, func(r engram.Reader) error {
		ms, _, err = r.ListMemories(ctx, s.scope, f)
		return err
	})
	if err != nil || len(ms) == 0 {
		return &engram.SearchResult{Hits: []engram.Hit{}}, err
	}
	dk, err := e.openKey(ctx, s.scope.Namespace())
	if err != nil {
		return nil, err
	}
	hits, err := matchVault(dk, ms, req.Query, s.k)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for i := range hits {
		ids[i] = hits[i].Memory.ID
	}
	if err := e.auditVault(ctx, s.scope, "search", ids); err != nil {
		return nil, err
	}
	e.access.recordHits(ctx, e.clock(), hits)
	return &engram.SearchResult{Hits: hits}, nil
}

// matchVault opens ms and returns, best first, at most k of those that
// contain at least one term of query, scored by the share of terms they
// contain (ties: the order of ms, newest first).
func matchVault(dk cipher.AEAD, ms []engram.Memory, query string, k int) ([]engram.Hit, error) {
	terms := vaultTerms(query)
	hits := []engram.Hit{}
	if len(terms) == 0 {
		return hits, nil
	}
	for _, m := range ms {
		o, err := vault.Open(dk, m)
		if err != nil {
			return nil, err
		}
		text := strings.ToLower(o.Value + "\n" + o.Abstraction + "\n" + strings.Join(o.Cues, "\n"))
		n := 0
		for _, t := range terms {
			if strings.Contains(text, t) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, engram.Hit{Memory: o, Score: float64(n) / float64(len(terms))})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(k, len(hits))], nil
}

// vaultTerms splits a query into lower-case terms: runs of letters and
// digits, and each Han, kana or Hangul character on its own, since those
// scripts do not separate words with spaces.
func vaultTerms(q string) []string {
	var terms []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			if t := string(cur); !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
			cur = cur[:0]
		}
	}
	for _, r := range strings.ToLower(q) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			cur = append(cur, r)
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return terms
}

// exportVault returns fn behind the vault's rule for exports (see
// vaultExport), and the function that audits what it let through once the
// export ends with err; that function returns err, or the audit's error.
func (e *core) exportVault(ctx context.Context, s engram.Scope, fn func(engram.Record) error) (func(engram.Record) error, func(error) error) {
	x := &vaultExport{access: engram.VaultFrom(ctx)}
	if x.access {
		x.dk, x.dkErr = e.openKey(ctx, s.Namespace())
	}
	filtered := func(rec engram.Record) error {
		if keep, err := x.record(&rec); err != nil || !keep {
			return err
		}
		return fn(rec)
	}
	audit := func(err error) error {
		if aerr := e.auditVault(ctx, s, "export", x.ids); err == nil {
			err = aerr
		}
		return err
	}
	return filtered, audit
}

// vaultExport decides, record by record, what an export shows of the
// vault, and remembers the vault memories it showed.
type vaultExport struct {
	access bool
	dk     cipher.AEAD
	dkErr  error
	ids    []string
}

// record reports whether rec is exported, opening it in place when it is
// a vault record and the export may show it.
func (x *vaultExport) record(rec *engram.Record) (bool, error) {
	var ms []*engram.Memory
	switch {
	case rec.Memory != nil && rec.Memory.Kind == engram.KindVault:
		ms = []*engram.Memory{rec.Memory}
	case rec.Version != nil && isVaultVersion(*rec.Version):
		ms = []*engram.Memory{rec.Version.Old, rec.Version.New}
	default:
		return true, nil
	}
	if !x.access {
		return false, nil
	}
	for _, m := range ms {
		if m == nil || !vault.IsSealed(m) {
			continue
		}
		if x.dkErr != nil {
			return false, x.dkErr
		}
		o, err := vault.Open(x.dk, *m)
		if err != nil {
			return false, err
		}
		*m = o
		if !slices.Contains(x.ids, m.ID) {
			x.ids = append(x.ids, m.ID)
		}
	}
	return true, nil
}

// withoutVault is a formation's view of a scope: vault memories are not
// in it, so a former never compares with, merges into or changes one. The
// user's profile (a core memory, never sealed) passes through as the
// wrapped reader's CurrentProfile.
type withoutVault struct{ engram.ScopeReader }

func (w withoutVault) GetMemory(ctx context.Context, id string) (*engram.Memory, error) {
	m, err := w.ScopeReader.GetMemory(ctx, id)
	if err == nil && m.Kind == engram.KindVault {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	return m, err
}

func (w withoutVault) ListMemories(ctx context.Context, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	f, err := hideVault(f)
	if err != nil {
		return nil, "", err
	}
	return w.ScopeReader.ListMemories(ctx, f)
}

func (w withoutVault) SearchText(ctx context.Context, query string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	f, err := hideVault(f)
	if err != nil {
		return nil, err
	}
	return w.ScopeReader.SearchText(ctx, query, f, limit)
}

// checkNoVault refuses an import that holds a vault memory or a version of
// one: exports show them decrypted (with vault access only), and an import
// cannot seal records whose ids it may rename.
func checkNoVault(recs []engram.Record) error {
	for i, r := range recs {
		if (r.Memory != nil && r.Memory.Kind == engram.KindVault) || (r.Version != nil && isVaultVersion(*r.Version)) {
			return engram.Errorf(engram.EINVALID, "record %d: vault memories cannot be imported; export without vault=true for a backup that imports, and add vault memories again with POST /v1/memories", i+1)
		}
	}
	return nil
}
