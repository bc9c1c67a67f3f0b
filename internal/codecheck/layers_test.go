package codecheck

import (
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A layer of the package graph; a package may import its own layer and
// those its row of allowedLayers names, never one above it.
type layer int

const (
	base    layer = iota // the root package engram (the domain) and internal helpers
	parts                // one package per thing the engine uses
	stores               // the engram.Store backends and their shared suite
	engineL              // the engine
	serving              // the APIs over an engine
	tools                // commands, benchmarks, evaluation, assembly, whole-stack suites
)

var layerNames = [...]string{"base", "parts", "stores", "engine", "serving", "tools"}

func (l layer) String() string { return layerNames[l] }

// layerDirs places each folder (and the folders below it, unless a longer
// entry places them) in its layer. The root is "" and holds only itself.
var layerDirs = map[string]layer{
	"":         base,
	"internal": base,

	"lang": parts, "textsearch": parts, "textindex": parts, "vector": parts, "uselite": parts,
	"embedcache": parts, "embedbatch": parts, "formation": parts, "llmformer": parts,
	"retrieval": parts, "entity": parts, "community": parts, "identity": parts,
	"document": parts, "media": parts, "vault": parts, "wordnet": parts, "openai": parts, "sensitive": parts,
	"internal/fakeopenai": parts, // a fake OpenAI server over openai/openaitest

	"sqlite": stores, "postgres": stores, "storetest": stores,

	"engine": engineL,

	"http": serving, "mcp": serving, "mem0api": serving, "chatproxy": serving, "ui": serving,
	"metrics": serving, // Prometheus metrics and the operation log over the engine's and the server's hooks

	"eval": tools, "bench": tools, "finetune": tools, "cmd": tools, "vector/cmd": tools,
	// storeopen puts a store backend and an engine together for the
	// commands; enginetest drives the whole stack, the HTTP API included.
	"storeopen": tools, "enginetest": tools,
}

// allowedLayers lists, for each layer, the layers below it that it may
// import. Stores sit below the engine but the engine sees them only
// through the root's interfaces, so it may not import them; nor may the
// serving layer, which sees the engine.
var allowedLayers = map[layer][]layer{
	base:    {base},
	parts:   {base, parts},
	stores:  {base, parts, stores},
	engineL: {base, parts, engineL},
	serving: {base, parts, engineL, serving},
	tools:   {base, parts, stores, engineL, serving, tools},
}

// knownUpEdges are imports allowed to point up a layer: none. Nothing is
// to be added.
var knownUpEdges = map[string]bool{}

// TestImportLayers fails for a package the layer table does not place and
// for an import of the module's packages that points up a layer.
func TestImportLayers(t *testing.T) {
	bad, unplaced := upEdges(importGraph(tree(t)))
	for _, dir := range unplaced {
		t.Errorf("package %q is in no layer: add it to layerDirs", dir)
	}
	seen := map[string]bool{}
	for _, e := range bad {
		seen[e] = true
		if !knownUpEdges[e] {
			t.Errorf("import %s points up a layer", e)
		}
	}
	for e := range knownUpEdges {
		if !seen[e] {
			t.Logf("import %s is gone: remove it from knownUpEdges", e)
		}
	}
}

// importGraph returns the module's packages, by folder, each with the
// module's folders it imports (test files left out).
func importGraph(files []srcFile) map[string]map[string]bool {
	g := map[string]map[string]bool{}
	for _, sf := range files {
		if g[sf.dir] == nil {
			g[sf.dir] = map[string]bool{}
		}
		for _, im := range sf.f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				continue
			}
			if p == module {
				g[sf.dir][""] = true
			} else if rest, ok := strings.CutPrefix(p, module+"/"); ok {
				g[sf.dir][rest] = true
			}
		}
	}
	return g
}

// upEdges returns, sorted, the imports of g that leave the layers a
// package may import ("from -> to"), and the packages no layer holds.
func upEdges(g map[string]map[string]bool) (bad, unplaced []string) {
	for from, tos := range g {
		lf, ok := layerOf(from)
		if !ok {
			unplaced = append(unplaced, from)
			continue
		}
		for to := range tos {
			lt, ok := layerOf(to)
			if !ok {
				continue // reported as from, when its own files are read
			}
			if !mayImport(lf, lt) {
				bad = append(bad, from+" -> "+to)
			}
		}
	}
	sort.Strings(bad)
	sort.Strings(unplaced)
	return bad, unplaced
}

// layerOf returns the layer of the longest entry of layerDirs that is dir
// or a folder above it.
func layerOf(dir string) (layer, bool) {
	for d := dir; ; {
		if l, ok := layerDirs[d]; ok && (d != "" || dir == "") {
			return l, true
		}
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return 0, false
		}
		d = d[:i]
	}
}

// mayImport reports whether a package of layer from may import one of to.
func mayImport(from, to layer) bool {
	for _, l := range allowedLayers[from] {
		if l == to {
			return true
		}
	}
	return false
}
