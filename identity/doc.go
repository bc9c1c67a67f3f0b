// Package identity clusters observations (face or voice embeddings from a
// client's own model) into identities online: each observation joins the
// identity it is most clearly a member of, or starts a new one; after a
// batch, identities whose estimated centres have come within Config.Merge
// of each other are merged. Thresholds are relative to each identity's
// spread, read off its centroid (a mean of unit vectors, shorter the more
// scattered its members), so a tight identity does not take in a close
// stranger and a loose one still takes its own. The thresholds are tuned
// on synthetic fixtures of known identities (seeds 1 and 2) and checked
// on twelve held-out seeds in six shapes (see the package's tests); the
// engine stores what this package decides.
package identity
