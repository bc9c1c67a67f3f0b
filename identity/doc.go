// Package identity clusters observations (face or voice embeddings from a
// client's own model) into identities online: each observation joins the
// identity whose centroid is nearest, when its cosine similarity reaches
// Config.Assign, or starts a new one; after a batch, identities whose
// centroids have come within Config.Merge of each other are merged. The
// thresholds are measured on a synthetic fixture of known identities (see
// the package's tests); the engine stores what this package decides.
package identity
