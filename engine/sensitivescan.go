package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sensitive"
)

// Records stored before their tenant's policy treated findings (or under
// another policy) are found and treated afterwards by ScanSensitive.

// ScanSensitive reads every episode and memory of scope s (episodes with
// their speakers; memories in any status, with their versions; vault
// memories left out, they are sealed whole), and with no user in s those
// of every user of the tenant too, and reports the secrets and personal
// data in their texts by user, kind and record. With apply it also treats each record holding a
// finding its tenant's policy does not keep, as a write would have: the
// record is rewritten in one transaction per record (an episode stored
// anew under its id; a memory stored anew with its versions, vectors, text
// index entries and graph), the spans sealed into the vault or redacted,
// the old texts forgotten by the embedding cache and scrubbed from the
// store's files as after a hard delete. It fails with EINVALID for a bad
// scope, and with the store's, the vault's or the embedder's error;
// records treated before a failure stay treated.
func (e *admin) ScanSensitive(ctx context.Context, s engram.Scope, apply bool) (*engram.SensitiveScan, error) {
	s, err := writeScope(s)
	if err != nil {
		return nil, err
	}
	sc := &scan{out: &engram.SensitiveScan{Found: []engram.SensitiveFound{}}}
	if err := e.scanScope(ctx, s, apply, sc); err != nil {
		return nil, err
	}
	if s.User == "" {
		if err := e.scanUsers(ctx, s, apply, sc); err != nil {
			return nil, err
		}
	}
	sc.out.Treated = sc.treated.report()
	return sc.out, nil
}

// scanScope scans the episodes and the memories of s.
func (e *admin) scanScope(ctx context.Context, s engram.Scope, apply bool, sc *scan) error {
	sc.user = s.User
	if err := e.scanEpisodes(ctx, s, apply, sc); err != nil {
		return err
	}
	return e.scanMemories(ctx, s, apply, sc)
}

// scanUsers scans s for every user of its tenant, one page of names at a
// time; a user whose scan fails ends the sweep with the error, naming
// the user.
func (e *admin) scanUsers(ctx context.Context, s engram.Scope, apply bool, sc *scan) error {
	for after := ""; ; {
		var users []string
		err := e.store.View(ctx, func(r engram.Reader) error {
			var err error
			users, err = r.Users(ctx, s.Namespace(), after, engram.MaxLimit)
			return err
		})
		if err != nil || len(users) == 0 {
			return err
		}
		for _, u := range users {
			one := s
			one.User = u
			sc.out.Users++
			if err := e.scanScope(ctx, one, apply, sc); err != nil {
				return fmt.Errorf("user %q: %w", u, err)
			}
		}
		after = users[len(users)-1]
	}
}

// scan gathers what ScanSensitive found and treated; user is the user of
// the scope being scanned.
type scan struct {
	out     *engram.SensitiveScan
	treated treated
	user    string
}

// note counts the findings fs of record id.
func (sc *scan) note(id string, fs []sensitive.Finding) {
	for _, f := range fs {
		i := slices.IndexFunc(sc.out.Found, func(x engram.SensitiveFound) bool { return x.Kind == string(f.Kind) && x.User == sc.user })
		if i < 0 {
			sc.out.Found = append(sc.out.Found, engram.SensitiveFound{User: sc.user, Kind: string(f.Kind)})
			i = len(sc.out.Found) - 1
		}
		x := &sc.out.Found[i]
		x.Count++
		if !slices.Contains(x.Records, id) {
			x.Records = append(x.Records, id)
		}
	}
}

// add adds the counts of t to what the scan treated.
func (sc *scan) add(t *treated) {
	for _, c := range t.counts {
		for range c.Count {
			sc.treated.count(sensitive.Kind(c.Kind), c.Treatment, orTreatment(c.Requested, c.Treatment))
		}
	}
}

func orTreatment(a, b engram.Treatment) engram.Treatment {
	if a != "" {
		return a
	}
	return b
}

func (e *admin) scanEpisodes(ctx context.Context, s engram.Scope, apply bool, sc *scan) error {
	f := engram.EpisodeFilter{Limit: engram.MaxLimit}
	for {
		var page []engram.Episode
		var next string
		err := e.store.View(ctx, func(r engram.Reader) error {
			var err error
			page, next, err = r.ListEpisodes(ctx, s, f)
			return err
		})
		if err != nil {
			return err
		}
		for i := range page {
			sc.out.Episodes++
			var fs []sensitive.Finding
			for _, t := range episodeTexts(page[i]) {
				fs = append(fs, detect(t)...)
			}
			sc.note(page[i].ID, fs)
			if apply && len(fs) > 0 {
				if err := e.rewriteEpisode(ctx, page[i], sc); err != nil {
					return fmt.Errorf("episode %s: %w", page[i].ID, err)
				}
			}
		}
		if next == "" {
			return nil
		}
		f.Cursor = next
	}
}

// rewriteEpisode stores ep anew with its findings treated, and its sealed
// spans, in one transaction; nothing when the policy keeps them all.
func (e *admin) rewriteEpisode(ctx context.Context, ep engram.Episode, sc *scan) error {
	eps := []engram.Episode{ep}
	t, err := e.treatEpisodes(ctx, ep.Namespace, eps)
	if err != nil || len(t.counts) == 0 {
		return err
	}
	ep = eps[0]
	actor, now := engram.ActorFrom(ctx), e.clock()
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		if err := tx.PurgeEpisode(ctx, ep.Namespace, ep.ID); err != nil {
			return err
		}
		if err := tx.InsertEpisode(ctx, &ep); err != nil {
			return err
		}
		return e.storeSeals(ctx, tx, nil, ep.Namespace, t, actor, now)
	})
	if err == nil {
		sc.add(t)
		e.afterPurge(ctx, ep.Namespace, nil, false)
	}
	return err
}

func (e *admin) scanMemories(ctx context.Context, s engram.Scope, apply bool, sc *scan) error {
	f, _ := hideVault(engram.MemoryFilter{Limit: engram.MaxLimit, Statuses: allStatuses})
	for {
		var page []engram.Memory
		var next string
		err := e.store.View(ctx, func(r engram.Reader) error {
			var err error
			page, next, err = r.ListMemories(ctx, s, f)
			return err
		})
		if err != nil {
			return err
		}
		for i := range page {
			sc.out.Memories++
			fs, err := e.memoryFindings(ctx, s, &page[i])
			if err != nil {
				return err
			}
			sc.note(page[i].ID, fs)
			if apply && len(fs) > 0 {
				if err := e.rewriteMemory(ctx, s, page[i].ID, sc); err != nil {
					return fmt.Errorf("memory %s: %w", page[i].ID, err)
				}
			}
		}
		if next == "" {
			return nil
		}
		f.Cursor = next
	}
}

// memoryFindings returns the findings in m's texts and in those of its
// versions.
func (e *admin) memoryFindings(ctx context.Context, s engram.Scope, m *engram.Memory) ([]sensitive.Finding, error) {
	texts := memoryTexts(m)
	var vs []engram.Version
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		vs, err = r.Versions(ctx, s, m.ID)
		return err
	})
	if err != nil && !engram.IsNotFound(err) {
		return nil, err
	}
	for i := range vs {
		for _, c := range []*engram.Memory{vs[i].Old, vs[i].New} {
			if c != nil {
				texts = append(texts, memoryTexts(c)...)
			}
		}
	}
	var fs []sensitive.Finding
	seen := map[string]bool{}
	for _, t := range texts {
		if seen[t] {
			continue
		}
		seen[t] = true
		fs = append(fs, detect(t)...)
	}
	return fs, nil
}

// memoryTexts returns the texts of m a write treats.
func memoryTexts(m *engram.Memory) []string {
	return append(append([]string{m.Value, m.Abstraction}, m.Cues...), metaStrings(m.Metadata)...)
}

// rewriteMemory stores memory id of scope s anew with its findings treated,
// in one transaction: the memory and each of its versions with their
// texts treated (the versions' copies numbered as the memory's, their
// spans redacted), its vectors and graph staged again, the spans of its
// current texts sealed; then the old texts are forgotten as after a hard
// delete. Nothing happens when the policy keeps every finding.
func (e *admin) rewriteMemory(ctx context.Context, s engram.Scope, id string, sc *scan) error {
	var m *engram.Memory
	var vs []engram.Version
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		if m, err = r.GetMemory(ctx, s, id); err != nil {
			return err
		}
		vs, err = r.Versions(ctx, s, id)
		return err
	})
	if err != nil {
		return err
	}
	t, changed, err := e.treatStored(ctx, m, vs)
	if err != nil || !changed {
		return err
	}
	vb := e.vec.Batch()
	if err := vb.Prepare(ctx, []engram.Memory{*m}); err != nil {
		return err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var texts []string
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		old, err := tx.GetMemory(ctx, s, id)
		if err != nil {
			return err
		}
		if texts, err = historyTexts(ctx, tx, s, old); err != nil {
			return err
		}
		return e.storeTreated(ctx, tx, vb, m, vs, t, actor, now)
	})
	if err = vb.Done(err); err == nil {
		sc.add(t)
		e.afterPurge(ctx, m.Namespace, texts, false)
	}
	return err
}

// treatStored treats the findings in m and in its versions' copies, in
// place, and reports whether any text changed.
func (e *admin) treatStored(ctx context.Context, m *engram.Memory, vs []engram.Version) (*treated, bool, error) {
	before := fmt.Sprint(memoryTexts(m), versionTexts(vs))
	w := e.redact.write(ctx, m.Namespace)
	seed, err := w.treat(memoryRecord(m, false))
	if err != nil {
		return nil, false, err
	}
	for i := range vs {
		for _, c := range []**engram.Memory{&vs[i].Old, &vs[i].New} {
			if *c == nil {
				continue
			}
			cp := **c
			*c = &cp
			rec := memoryRecord(&cp, true)
			rec.seed = seed
			if _, err := w.treat(rec); err != nil {
				return nil, false, err
			}
		}
	}
	t := w.done()
	if err := e.prepareVault(ctx, m.Namespace, t.seals); err != nil {
		return nil, false, err
	}
	return t, before != fmt.Sprint(memoryTexts(m), versionTexts(vs)), nil
}

func versionTexts(vs []engram.Version) []string {
	var out []string
	for i := range vs {
		for _, c := range []*engram.Memory{vs[i].Old, vs[i].New} {
			if c != nil {
				out = append(out, memoryTexts(c)...)
			}
		}
	}
	return out
}

// storeTreated purges memory m and stores it again in tx as treated, with its
// versions vs, its vectors and graph, and the spans t sealed.
func (e *admin) storeTreated(ctx context.Context, tx engram.Tx, vb *vecBatch, m *engram.Memory, vs []engram.Version, t *treated, actor string, now time.Time) error {
	if err := tx.PurgeMemory(ctx, m.Namespace, m.ID); err != nil {
		return err
	}
	vb.Purged(m.Namespace, m.ID)
	if err := tx.InsertMemory(ctx, m); err != nil {
		return err
	}
	for i := range vs {
		if err := tx.InsertVersion(ctx, &vs[i]); err != nil {
			return err
		}
	}
	if err := vb.Stage(ctx, tx, m); err != nil {
		return err
	}
	if m.Status == engram.StatusActive {
		if err := e.stageGraph(ctx, tx, nil, m, now); err != nil {
			return err
		}
	}
	return e.storeSeals(ctx, tx, vb, m.Namespace, t, actor, now)
}
