package retrieval

import "testing"

// TestGraphWalks: both walks keep most of the activation at the seed, give
// a neighbour more than a node two relations away, give the two-hop node
// some, and give nothing to a node that is not linked.
func TestGraphWalks(t *testing.T) {
	edges := []Edge{{A: "seed", B: "one", Weight: 2}, {A: "one", B: "two", Weight: 1}, {A: "x", B: "y", Weight: 5}}
	for name, walk := range map[string]func(map[string]float64, []Edge) map[string]float64{"pagerank": PageRank, "spread": SpreadActivation} {
		a := walk(map[string]float64{"seed": 1}, edges)
		if !(a["seed"] > a["one"] && a["one"] > a["two"] && a["two"] > 0) {
			t.Errorf("%s: activation %v, want seed > one > two > 0", name, a)
		}
		if a["x"] != 0 || a["y"] != 0 {
			t.Errorf("%s: unlinked nodes activated: %v", name, a)
		}
	}
}

// TestGraphWalkWeights: of two neighbours, the one linked more strongly
// gets more.
func TestGraphWalkWeights(t *testing.T) {
	edges := []Edge{{A: "s", B: "strong", Weight: 3}, {A: "s", B: "weak", Weight: 1}}
	for name, walk := range map[string]func(map[string]float64, []Edge) map[string]float64{"pagerank": PageRank, "spread": SpreadActivation} {
		if a := walk(map[string]float64{"s": 1}, edges); a["strong"] <= a["weak"] {
			t.Errorf("%s: strong %v <= weak %v", name, a["strong"], a["weak"])
		}
	}
}
