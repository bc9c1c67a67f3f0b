// Search playground: query, k, budget and channels; each hit with its
// per-channel ranks and reranking factors as bars, and the assembled
// context with its token count.
import { h, api, scopeQuery, scopeLabel, scopeHash, tags, showError } from "../lib.js";

const channels = ["bm25", "dense", "temporal"];

function bar(label, frac, text, cls) {
  const fill = h("span");
  fill.style.width = Math.max(2, Math.min(100, frac * 100)).toFixed(1) + "%";
  return [h("span", {}, label), h("div", { class: "bar " + cls, role: "img", "aria-label": `${label}: ${text}` }, fill), h("span", { class: "num" }, text)];
}

function hitCard(hit, i) {
  const m = hit.memory;
  const ranks = (hit.explain || []).map((c) => bar(c.channel, 1 / c.rank, `rank ${c.rank} · ${c.score.toFixed(3)}`, "rank"));
  const factors = Object.entries(hit.factors || {});
  const max = Math.max(1e-9, ...factors.map(([, v]) => Math.abs(v)));
  return h("li", { class: "card hit" },
    h("div", {}, h("strong", {}, `${i + 1}. `), h("a", { href: `#/memory/${encodeURIComponent(m.id)}` + scopeHash(m.namespace), class: "hit-title" }, m.abstraction || m.id),
      h("span", { class: "muted" }, ` score ${hit.score.toFixed(4)}` + (hit.tokens ? ` · ${hit.tokens} tokens` : ""))),
    h("p", { class: "value" }, m.value.length > 400 ? m.value.slice(0, 400) + "…" : m.value),
    h("div", {}, tags(m.cues)),
    ranks.length ? [h("h3", { class: "muted" }, "Channel ranks"), h("div", { class: "bars" }, ranks)] : null,
    factors.length ? [h("h3", { class: "muted" }, "Score factors"), h("div", { class: "bars" }, factors.map(([k, v]) => bar(k, Math.abs(v) / max, v.toFixed(4), "factor")))] : null);
}

export async function render(main, params) {
  const scope = scopeQuery(params);
  const field = (id, label, el) => { el.id = id; return h("label", { for: id }, label, el); };
  const q = h("input", { type: "search", required: true, value: params.get("q") || "" });
  q.size = 40;
  const k = h("input", { type: "number", min: "1", max: "200", value: "10" });
  const budget = h("input", { type: "number", min: "0", max: "1048576", value: "0" });
  const shared = h("input", { type: "checkbox", id: "s-shared" });
  const chans = channels.map((c) => h("input", { type: "checkbox", value: c, id: "ch-" + c }));
  const out = h("div", { id: "search-results", "aria-live": "polite" });
  async function run() {
    const body = {
      scope: { org: scope.org, project: scope.project, user: scope.user, agent: scope.agent, session: scope.session, include_shared: shared.checked },
      query: q.value, k: Number(k.value) || 10, explain: true,
    };
    if (Number(budget.value) > 0) body.budget = Number(budget.value);
    const picked = chans.filter((c) => c.checked).map((c) => c.value);
    if (picked.length) body.channels = picked;
    const t0 = performance.now();
    const res = await api("POST", "/v1/search", { body });
    const ms = Math.round(performance.now() - t0);
    out.replaceChildren(h("div", {},
      h("p", { class: "muted", id: "search-summary" }, res.empty_scope ? `0 hits in ${ms} ms: this scope holds nothing yet (no episode and no current memory).` : `${res.hits.length} hits in ${ms} ms.`),
      h("ol", { class: "hits", id: "hits" }, res.hits.map(hitCard)),
      res.context !== undefined && body.budget ? [h("h2", {}, `Assembled context · ${res.tokens || 0} tokens`), h("pre", { id: "context" }, res.context || "(empty)")] : null));
  }
  const form = h("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); run().catch(showError); } },
    field("s-q", "Query", q), field("s-k", "Hits (k)", k), field("s-budget", "Token budget (0: none)", budget),
    h("fieldset", { class: "row" }, h("legend", { class: "muted" }, "Channels (none: all)"),
      chans.map((c) => h("label", { class: "inline", for: c.id }, c, c.value))),
    h("label", { class: "inline", for: "s-shared" }, shared, "include shared"),
    h("button", { type: "submit", id: "s-run" }, "Search"));
  main.replaceChildren(h("h1", {}, "Search · " + scopeLabel(scope)), form, out);
  if (q.value) await run();
}
