// Package enginetest is the behaviour suite of engram.Service as the engine
// provides it over a storage backend: formation, versions, supersede,
// deletes, rollback, scope purge, import/export and tenant isolation. Every
// backend runs it (see the sqlite and postgres packages' tests).
package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// Open returns a fresh, empty store for one subtest; the suite closes it.
type Open func(t *testing.T) engram.Store

// Run runs every behaviour test against stores made by open, the
// retrieval suite (RunSearch) included.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"AddEpisodesForms", testAddEpisodesForms},
		{"TurnAtATime", testTurnAtATime},
		{"AddEpisodesBadInputStoresNothing", testAddEpisodesBadInput},
		{"MetadataDepth", testMetadataDepth},
		{"FormerFailureStoresNothing", testFormerFailure},
		{"Consolidator", testConsolidator},
		{"ConsolidatorHoldsNoSnapshot", testConsolidatorHoldsNoSnapshot},
		{"LLMFormer", testLLMFormer},
		{"ProfilePerUser", testProfilePerUser},
		{"KnowledgeUpdate", testKnowledgeUpdate},
		{"PlanChange", testPlanChange},
		{"AsOfAttributes", testAsOfAttributes},
		{"CurrentFirst", testCurrentFirst},
		{"CurrentFirstChanged", testCurrentFirstChanged},
		{"RecurringNewerFirst", testRecurringNewerFirst},
		{"AsOfResidenceFirst", testAsOfResidenceFirst},
		{"AsOfBadInput", testAsOfBadInput},
		{"CountUpdate", testCountUpdate},
		{"ScheduleUpdate", testScheduleUpdate},
		{"Dates", testDates},
		{"NotAFact", testNotAFact},
		{"Changes", testChanges},
		{"ChangesAcrossSessions", testChangesAcrossSessions},
		{"ChangesStayWithTheirUser", testChangesStayWithTheirUser},
		{"FormerReach", testFormerReach},
		{"NowAndBefore", testNowAndBefore},
		{"ChangesLLM", testChangesLLM},
		{"Forget", testForget},
		{"MergeRepeat", testMergeRepeat},
		{"Conflict", testConflict},
		{"DecisionModel", testDecisionModel},
		{"AddMemoriesDirect", testAddMemoriesDirect},
		{"UpdateVersions", testUpdateVersions},
		{"Supersede", testSupersede},
		{"SoftDeleteRestoreHardDelete", testDeletes},
		{"Rollback", testRollback},
		{"DeleteScope", testDeleteScope},
		{"ExportImportLossless", testExportImport},
		{"ExportImportConflict", testExportImportConflict},
		{"ExportStalledReaders", testExportStalledReaders},
		{"ImportConflictStoresNothing", testImportConflict},
		{"ImportForeignVersions", testImportForeignVersions},
		{"ImportForeignIDs", testImportForeignIDs},
		{"EpisodeIDsOfOthers", testEpisodeIDsOfOthers},
		{"ObservationIDsOfOthers", testObservationIDsOfOthers},
		{"MemoryIDsOfOthers", testMemoryIDsOfOthers},
		{"ExportImportResources", testExportImportResources},
		{"ImportResourcesElsewhere", testImportResourcesElsewhere},
		{"ImportTamperedChunk", testImportTamperedChunk},
		{"TenantIsolation", testIsolation},
		{"AccessCount", testAccessCount},
		{"TTLReads", testTTLReads},
		{"Sweep", testSweep},
		{"Sweeper", testSweeper},
		{"AccessDecay", testAccessDecay},
		{"LanguageSet", testLanguageSet},
		{"SearchInput", testSearchInput},
		{"DeleteEpisode", testDeleteEpisode},
		{"EditRederives", testEditRederives},
		{"DeleteEpisodeReforms", testDeleteEpisodeReforms},
		{"DenseLifecycle", testDenseLifecycle},
		{"DenseFusionAndReload", testDenseFusionAndReload},
		{"DenseQueryViewsAndParts", testDenseViewsAndParts},
		{"Channels", testChannels},
		{"DenseFilterAndLanguage", testDenseFilterAndLanguage},
		{"Reembed", testReembed},
		{"DenseAcrossEngines", testDenseAcrossEngines},
		{"AsyncAdd", testAsyncAdd},
		{"AsyncDefault", testAsyncDefault},
		{"JobRetries", testJobRetries},
		{"JobIdempotent", testJobIdempotent},
		{"JobOrder", testJobOrder},
		{"JobActor", testJobActor},
		{"JobsSlowModel", testJobsSlowModel},
		{"JobsModelDown", testJobsModelDown},
		{"Provisional", testProvisional},
		{"EmbedLater", testEmbedLater},
		{"ReadYourWritesByMeaning", testReadYourWritesByMeaning},
		{"EmbedLaterRetries", testEmbedLaterRetries},
		{"EmbedLaterEdited", testEmbedLaterEdited},
		{"EditEmbedsOutsideWriter", testEditEmbedsOutsideWriter},
		{"EmbedLaterRestart", testEmbedLaterRestart},
		{"EmbedInline", testEmbedInline},
		{"VaultLifecycle", testVaultLifecycle},
		{"VaultFirstWritesRace", testVaultFirstWrites},
		{"SensitivePolicies", testSensitivePolicies},
		{"SensitiveTenantPolicy", testSensitiveTenantPolicy},
		{"SensitiveNoVault", testSensitiveNoVault},
		{"SensitiveWritePaths", testSensitiveWritePaths},
		{"SensitiveLLMPrompt", testSensitiveLLMPrompt},
		{"SensitiveScan", testSensitiveScan},
		{"SensitiveScanTenant", testSensitiveScanTenant},
		{"SensitiveMedia", testSensitiveMedia},
		{"SensitiveMetadata", testSensitiveMetadata},
		{"SensitiveMetadataScan", testSensitiveMetadataScan},
		{"SensitiveMetadataGrows", testSensitiveMetadataGrows},
		{"SensitiveResource", testSensitiveResource},
		{"SensitiveLogs", testSensitiveLogs},
		{"Graph", testGraph},
		{"GraphTurns", testGraphTurns},
		{"GraphMergeSplit", testGraphMergeSplit},
		{"GraphNarrowed", testGraphNarrowed},
		{"GraphFormer", testGraphFormer},
		{"ResourceLifecycle", testResourceLifecycle},
		{"ResourceDedupe", testResourceDedupe},
		{"MediaForms", testMediaForms},
		{"MediaBadInput", testMediaBadInput},
		{"MediaUnformed", testMediaUnformed},
		{"MediaDescribed", testMediaDescribed},
		{"MediaExportImport", testMediaExportImport},
		{"ResourcePDF", testResourcePDF},
		{"ResourceQuota", testResourceQuota},
		{"ResourceIsolation", testResourceIsolation},
		{"ResourceAbandoned", testResourceAbandoned},
		{"GraphChannel", testGraphChannel},
		{"Identities", testIdentities},
		{"IdentitySearch", testIdentitySearch},
		{"ExportImportIdentities", testExportImportIdentities},
		{"ImportIdentitiesElsewhere", testImportIdentitiesElsewhere},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
	t.Run("Search", func(t *testing.T) { RunSearch(t, open) })
	t.Run("Text", func(t *testing.T) { RunText(t, open) })
}

func newEngine(t *testing.T, open Open, opts engine.Options) *engine.Engine {
	t.Helper()
	st := open(t)
	e, err := engine.New(context.Background(), st, opts)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return e
}

var (
	ctx = engram.WithActor(context.Background(), "test")
	nsA = engram.Namespace{Org: "acme", Project: "p", User: "alice", Session: "s1"}
	nsB = engram.Namespace{Org: "acme", Project: "p", User: "bob", Session: "s1"}
	scA = engram.Scope{Org: "acme", Project: "p", User: "alice"}
	scB = engram.Scope{Org: "acme", Project: "p", User: "bob"}
	t0  = time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC)
)

func code(err error) string { return engram.ErrorCode(err) }

func mustAddEpisodes(t *testing.T, e *engine.Engine, ns engram.Namespace, texts ...string) *engram.AddEpisodesResult {
	t.Helper()
	in := make([]engram.EpisodeInput, len(texts))
	for i, s := range texts {
		at := t0.Add(time.Duration(i) * time.Minute)
		in[i] = engram.EpisodeInput{Role: "user", Speaker: "Alice", Content: s, OccurredAt: &at}
	}
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: in})
	if err != nil {
		t.Fatalf("add episodes: %v", err)
	}
	return res
}

func mustAddMemory(t *testing.T, e *engine.Engine, ns engram.Namespace, value string) engram.Memory {
	t.Helper()
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: value}}})
	if err != nil {
		t.Fatalf("add memory: %v", err)
	}
	return ms[0]
}

func searchIDs(t *testing.T, e *engine.Engine, s engram.Scope, q string) []string {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 20})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.Memory.ID
	}
	return ids
}

func countMemories(t *testing.T, e *engine.Engine, s engram.Scope, statuses ...engram.Status) int {
	t.Helper()
	p, err := e.ListMemories(ctx, s, engram.MemoryFilter{Statuses: statuses, Limit: engram.MaxLimit})
	if err != nil {
		t.Fatalf("list memories: %v", err)
	}
	return len(p.Memories)
}

func countEpisodes(t *testing.T, e *engine.Engine, s engram.Scope) int {
	t.Helper()
	p, err := e.ListEpisodes(ctx, s, engram.EpisodeFilter{Limit: engram.MaxLimit})
	if err != nil {
		t.Fatalf("list episodes: %v", err)
	}
	return len(p.Episodes)
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
