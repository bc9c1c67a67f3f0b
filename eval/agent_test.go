package eval_test

import (
	"testing"

	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/eval"
)

// TestAgentTune checks that --agent sets the listed fields over the
// defaults and refuses unknown keys and values that are not numbers.
func TestAgentTune(t *testing.T) {
	tune, err := eval.AgentTune("entity=0.9, relation=0.5,limit=5,steps=2,mingain=0")
	if err != nil {
		t.Fatal(err)
	}
	var o engine.Options
	tune(&o)
	want := engine.DefaultAgentConfig()
	want.EntityShare, want.RelationShare, want.EntityLimit, want.ExpandSteps, want.MinGain = 0.9, 0.5, 5, 2, 0
	if o.Agent == nil || *o.Agent != want {
		t.Errorf("config %+v, want %+v", o.Agent, want)
	}
	for _, bad := range []string{"entiti=0.9", "limit=x", "entity"} {
		if _, err := eval.AgentTune(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
