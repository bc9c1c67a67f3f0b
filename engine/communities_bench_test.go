package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storetest"
)

// BenchmarkRefreshCommunities measures a refresh after one relation
// changed in a graph of 40 separate circles of 8 entities (each circle's
// relations supported by its own memories): "incremental" recomputes the
// changed circle only, "full" every one. The ratio of the two is what the
// dirty set saves on a graph of many components; a graph of one giant
// component saves nothing (see engine/communities.go).
//
//	go test -run '^$' -bench BenchmarkRefreshCommunities -benchtime 20x ./engine/
func BenchmarkRefreshCommunities(b *testing.B) {
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "incremental", true: "full"}[full]
		b.Run(name, func(b *testing.B) {
			e, st := communityEngine(b, engine.Options{})
			ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
			s := engram.ScopeOf(ns)
			var mems []any
			var graph []any
			var first []*engram.Entity
			for c := range 40 {
				m := storetest.Memory(ns, fmt.Sprintf("Circle %d met at noon. Everyone of circle %d was there.", c, c))
				mems = append(mems, m)
				var ents []*engram.Entity
				for i := range 8 {
					en := storetest.Entity(ns, fmt.Sprintf("C%dP%d", c, i), engram.EntityPerson)
					ents = append(ents, en)
					graph = append(graph, en, engram.Mention{EntityID: en.ID, MemoryID: m.ID, Namespace: engram.EntityOwner(ns), At: m.CreatedAt})
				}
				for i := range ents {
					graph = append(graph, storetest.Relation(ents[i], ents[(i+1)%len(ents)], m.ID))
				}
				if c == 0 {
					first = ents
				}
			}
			storetest.Put(b, st, mems...)
			storetest.PutGraph(b, st, graph...)
			ctx := engram.WithActor(context.Background(), "bench")
			if _, err := e.RefreshCommunities(ctx, s, true); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				storetest.PutGraph(b, st, storetest.Relation(first[i%8], first[(i+3)%8], mems[0].(*engram.Memory).ID))
				b.StartTimer()
				if _, err := e.RefreshCommunities(ctx, s, full); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
