// Package vector finds the stored vectors nearest to a query vector. It is
// engram's dense-retrieval index: derived data, built from the store on
// first use. An HNSW graph can be written to a file and read back
// (HNSW.WriteTo, ReadHNSW), so the engine can skip a rebuild at start-up.
//
// Vectors are L2-normalised float32, so cosine similarity is the dot
// product and a higher Score is better. The indexes share the Index method
// set:
//
//   - Flat scores every vector with SIMD dot products. It is exact, and
//     fast enough while the index is small.
//   - HNSW is a hierarchical navigable small-world graph written for this
//     package: approximate, with searches of about a millisecond at a
//     million 512-dimensional vectors, and the index to use when large.
//   - Auto is a Flat while small and builds an HNSW in the background once
//     it grows past a threshold, answering exactly from the Flat until the
//     graph has caught up. It is what the engine should use.
//   - IVF (k-means lists) builds an order of magnitude faster than HNSW,
//     but its recall collapses on data without well-separated clusters
//     (0.73 where HNSW keeps 0.99, see cmd/vectorbench -spread 2); it is
//     kept for that comparison and for bulk data known to cluster.
//
// All are safe for concurrent use: searches run in parallel, writes are
// serialised. Deletes, updates and search filters are exact in every
// index: a deleted or filtered-out id is never returned, an updated id is
// found by its new vector only.
package vector
