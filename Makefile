# engram: the two commands a fresh machine needs are `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
ADDR  ?= 127.0.0.1:8080
DATA  ?= $(HOME)/.local/share/engram
NO_AUTH ?= 1
# SHARED holds the benchmark data sets (datasets/locomo, datasets/longmemeval).
SHARED ?= $(or $(ENGRAM_SHARED),../shared)

.PHONY: run test build integrations model wordnet deps vet bench bench-mem0 bench-mem0-smoke fuzz fuzz-smoke eval-locomo eval-longmemeval eval-heldout clean

## run: fetch what is missing, then serve the engine on its embedded default
## store, without API keys on the loopback ADDR (NO_AUTH=0 to require keys,
## which a non-loopback ADDR needs: see engram keys create).
run: deps model
	ENGRAM_NO_AUTH=$(NO_AUTH) $(GO) run ./cmd/engram serve --addr $(ADDR) --data $(DATA)

## test: fetch what is missing, then vet and run every test with the race
## detector, next to a throwaway PostgreSQL (installed from Debian if missing);
## then the recall floors on one real conversation of each benchmark (skipped
## under the race detector, too slow there) and the smoke run of the Mem0
## side-by-side benchmark, so neither can rot; the tests with the real
## clients agents use (integrations/run.sh: MCP, Mem0 and OpenAI SDKs, the
## Python and TypeScript clients); last, a short run of every fuzz target
## (fuzz-smoke). The dashboard's browser test needs chromium, installed
## from Debian if missing (scripts/chromium.sh).
test: deps model
	$(GO) vet ./...
	bash scripts/chromium.sh
	ENGRAM_REQUIRE_CHROMIUM=1 ENGRAM_REQUIRE_POSTGRES=1 ENGRAM_REQUIRE_WORDNET=1 bash scripts/pg.sh $(GO) test -race -count=1 -timeout 25m ./...
	$(GO) test -count=1 -run '^TestRealData' ./eval/
	bash integrations/run.sh
	bash bench/mem0/run.sh --smoke
	$(MAKE) fuzz-smoke

# FUZZ_TARGETS are the fuzz targets as Name:package; `go test -fuzz` takes
# one target of one package at a time.
FUZZ_TARGETS := FuzzTerms:./textsearch/ FuzzResolve:./lang/ FuzzDetectStem:./lang/ \
	FuzzMatchQuery:./sqlite/ FuzzTSQuery:./postgres/ FuzzDecodeJSON:./http/ \
	FuzzImportBody:./http/ FuzzQueryString:./http/ FuzzHandler:./http/ FuzzDetect:./sensitive/
FUZZTIME ?= 2m

## fuzz: run every fuzz target for FUZZTIME (default 2m) each; a failing
## input is written to the package's testdata/fuzz/NAME, keep it as a seed.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t%%:*} ($${t#*:}) for $(FUZZTIME)"; \
		bash scripts/fuzz.sh $(GO) "$${t%%:*}" "$${t#*:}" $(FUZZTIME); \
	done

## fuzz-smoke: every fuzz target for 5 seconds, as `make test` does.
fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=5s

## build: the engram binary in ./bin.
build: deps
	$(GO) build -o bin/engram ./cmd/engram

## deps: the Go modules, and the WordNet database that query expansion
## reads (scripts/fetch-wordnet.sh, checked against its published digest).
deps:
	$(GO) mod download
	bash scripts/fetch-wordnet.sh

## wordnet: fetch and verify the WordNet database once.
wordnet:
	bash scripts/fetch-wordnet.sh

## model: fetch and verify the embedded embedding model (USE-lite) once.
model:
	bash scripts/fetch-model.sh

## bench: the Go benchmarks of the hot paths.
bench: deps model
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-mem0: engram and Mem0 (mem0ai OSS) side by side on LoCoMo, same
## embedder; report in bench/out/mem0 (OUT= to change).
bench-mem0: deps model
	bash bench/mem0/run.sh $(if $(OUT),--out $(OUT))

## bench-mem0-smoke: the short version of bench-mem0 that `make test` runs.
bench-mem0-smoke: deps model
	bash bench/mem0/run.sh --smoke $(if $(OUT),--out $(OUT))

## eval-locomo, eval-longmemeval: the retrieval benchmarks with every
## baseline (fetching the model if missing); report in bench/out/NAME (OUT=
## to change), LIMIT=N for a quick subset, ONLY=RANGE (e.g. 5-9) for
## held-out haystacks by index.
eval-locomo: deps model
	$(GO) run ./cmd/engram eval locomo --data $(SHARED)/datasets/locomo/locomo10.json \
		--out $(or $(OUT),bench/out/locomo) $(if $(LIMIT),--limit $(LIMIT)) $(if $(ONLY),--only $(ONLY))

eval-longmemeval: deps model
	$(GO) run ./cmd/engram eval longmemeval --data $(SHARED)/datasets/longmemeval/longmemeval_s_dev.json.gz \
		--out $(or $(OUT),bench/out/longmemeval) $(if $(LIMIT),--limit $(LIMIT)) $(if $(ONLY),--only $(ONLY))

## eval-heldout: the held-out fixture of everyday assistant conversations
## (12 questions, English, German, Spanish, French) written for this
## project; report in bench/out/heldout (OUT= to change).
eval-heldout: deps model
	$(GO) run ./cmd/engram eval longmemeval --data eval/testdata/assistant_heldout.json \
		--out $(or $(OUT),bench/out/heldout)

clean:
	rm -rf bin

## integrations: the tests with the real clients agents use, against a real
## engram serve (integrations/run.sh).
integrations: deps model
	bash integrations/run.sh
