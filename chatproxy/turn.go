package chatproxy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// store adds the turn as episodes in one call, formed as the engine is
// configured: the last user message (as x.asked) when it ends the request,
// and the reply (as now) when not empty. A request that goes on after the
// user message (tool results of a function call) does not store it again.
// A text longer than an episode may hold is stored as consecutive parts.
// It returns the service's error; nothing is stored then. The store, bound
// by Config.Timeout, runs on when the client goes away, since the upstream
// already answered.
func (h *Handler) store(ctx context.Context, x *exchange, reply string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.Timeout)
	defer cancel()
	answered := h.cfg.Now()
	var eps []engram.EpisodeInput
	if x.req.last == len(x.req.messages)-1 {
		eps = episodes("user", x.ns.User, x.req.messages[x.req.last].text, x.asked, x.req.model)
	}
	if strings.TrimSpace(reply) != "" {
		eps = append(eps, episodes("assistant", "assistant", reply, answered, x.req.model)...)
	}
	if len(eps) == 0 {
		return nil
	}
	if _, err := h.cfg.Service.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: x.ns, Episodes: eps}); err != nil {
		h.cfg.Logger.Warn("chatproxy: store the turn", "namespace", x.ns.Tenant(), "err", err)
		return err
	}
	return nil
}

// episodes is one message as episodes: one, or consecutive parts of at
// most engram.MaxContentBytes each, marked "part" i/n in metadata.
func episodes(role, speaker, text string, at time.Time, model string) []engram.EpisodeInput {
	pieces := split(text, engram.MaxContentBytes)
	out := make([]engram.EpisodeInput, len(pieces))
	for i, p := range pieces {
		meta := map[string]any{"source": "chatproxy", "model": truncate(model, 256)}
		if len(pieces) > 1 {
			meta["part"] = fmt.Sprintf("%d/%d", i+1, len(pieces))
		}
		out[i] = engram.EpisodeInput{Role: role, Speaker: speaker, Content: p, OccurredAt: &at, Metadata: meta}
	}
	return out
}
