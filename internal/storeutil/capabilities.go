package storeutil

import "github.com/engramhq/engram"

// Capabilities is every optional capability a store offers besides
// engram.Tx. Both stores implement all of them on one transaction type,
// which they check at compile time against this interface; the storetest
// suite checks the same at run time.
type Capabilities interface {
	engram.Tx
	engram.Reader
	engram.Locator
	engram.FullTextReader

	engram.MetaReader
	engram.MetaWriter
	engram.Dumper
	engram.Expirer
	engram.ExportPager

	engram.VectorReader
	engram.VectorWriter
	engram.ChangeLog

	engram.GraphReader
	engram.GraphWriter
	engram.RelationsWriter
	engram.CommunityReader
	engram.CommunityWriter
	engram.EntityHistoryReader

	engram.IdentityReader
	engram.IdentityWriter
	engram.IdentityExporter

	engram.ResourceReader
	engram.ResourceWriter
	engram.ResourceFinder
	engram.ResourceDumper
	engram.UploadSweeper

	engram.JobReader
	engram.JobQueue

	engram.KeyReader
	engram.KeyWriter
	engram.VaultKeyReader
	engram.VaultKeyWriter
}
