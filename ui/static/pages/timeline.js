// A user's timeline: episodes and memories over event time, newest first;
// superseded and deleted facts are shown closed.
import { h, api, scopeQuery, scopeLabel, scopeHash, fmtTime, showError } from "../lib.js";

export async function render(main, params) {
  const scope = scopeQuery(params);
  if (!scope.user) {
    main.replaceChildren(h("h1", {}, "Timeline"), h("p", {}, "Pick a user on the ", h("a", { href: "#/scopes" }, "scopes page"), "."));
    return;
  }
  const [eps, mems] = await Promise.all([
    api("GET", "/v1/episodes", { query: { ...scope, limit: 200 } }),
    api("GET", "/v1/memories", { query: { ...scope, status: ["active", "superseded", "deleted", "expired"], limit: 200 } }),
  ]);
  const items = [
    ...eps.episodes.map((e) => ({ at: e.occurred_at, kind: "episode", e })),
    ...mems.memories.map((m) => ({ at: m.valid_from || m.created_at, kind: "memory", m })),
  ].sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  const list = h("ol", { class: "timeline", id: "timeline" }, items.map((it) => {
    if (it.kind === "episode") {
      const e = it.e;
      return h("li", { class: "episode" }, h("div", { class: "muted" }, `${fmtTime(e.occurred_at)} · episode · ${e.speaker || e.role || ""}`), h("div", { class: "text" }, e.content));
    }
    const m = it.m;
    const closed = m.status !== "active" || !!m.valid_to;
    return h("li", { class: closed ? "closed memory" : "memory" },
      h("div", { class: "muted" }, `${fmtTime(it.at)}${m.valid_to ? " → " + fmtTime(m.valid_to) : ""} · ${m.kind} memory · `, h("span", { class: "tag status-" + m.status }, closed && m.status === "active" ? "closed" : m.status)),
      h("a", { class: "text", href: `#/memory/${encodeURIComponent(m.id)}` + scopeHash(m.namespace) }, m.abstraction || m.value.slice(0, 120)));
  }));
  main.replaceChildren(
    h("h1", {}, "Timeline · " + scopeLabel(scope)),
    h("p", { class: "muted" }, `${eps.episodes.length} episodes and ${mems.memories.length} memories (the latest 200 of each), by event time, newest first. Closed facts are struck through.`),
    list);
}
