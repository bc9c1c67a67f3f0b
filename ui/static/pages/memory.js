// One memory: value, abstraction, cues, validity on a timeline, its
// sources as a conversation, its version history with diffs, and rollback
// and restore with confirmation.
import { h, api, scopeQuery, scopeLabel, fmtTime, tags, confirmDialog, status, showError } from "../lib.js";

// wordDiff marks the words of b not in a (ins) and of a not in b (del),
// by the longest common subsequence of words (texts cut at 600 words).
export function wordDiff(a, b) {
  const x = (a || "").split(/(\s+)/).slice(0, 1200);
  const y = (b || "").split(/(\s+)/).slice(0, 1200);
  const n = x.length, m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push(x[i]); i++; j++; } else if (L[i + 1][j] >= L[i][j + 1]) out.push(h("del", {}, x[i++])); else out.push(h("ins", {}, y[j++]));
  }
  while (i < n) out.push(h("del", {}, x[i++]));
  while (j < m) out.push(h("ins", {}, y[j++]));
  return out;
}

const diffFields = ["value", "abstraction", "cues", "status", "kind", "valid_from", "valid_to", "importance", "confidence"];

function show(v) { return Array.isArray(v) ? v.join(", ") : v === undefined || v === null ? "" : String(v); }

function versionDiff(v) {
  const rows = [];
  for (const f of diffFields) {
    const a = show(v.old && v.old[f]), b = show(v.new && v.new[f]);
    if (a === b) continue;
    rows.push(h("dt", {}, f), h("dd", { class: "diff value" }, v.old ? wordDiff(a, b) : b));
  }
  return rows.length ? h("dl", { class: "fields" }, rows) : h("p", { class: "muted" }, "No visible field changed.");
}

function validity(m) {
  const from = m.valid_from ? Date.parse(m.valid_from) : Date.parse(m.created_at);
  const to = m.valid_to ? Date.parse(m.valid_to) : Date.now();
  const start = Math.min(from, Date.parse(m.created_at)), end = Math.max(to, Date.now());
  const span = h("span");
  span.style.left = (((from - start) / Math.max(1, end - start)) * 100).toFixed(1) + "%";
  span.style.width = Math.max(1, ((to - from) / Math.max(1, end - start)) * 100).toFixed(1) + "%";
  return h("div", {},
    h("div", { class: "validity", role: "img", "aria-label": `valid from ${fmtTime(m.valid_from) || "its creation"} to ${fmtTime(m.valid_to) || "now"}` }, span),
    h("p", { class: "muted" }, `Valid from ${fmtTime(m.valid_from) || "(not given)"} to ${m.valid_to ? fmtTime(m.valid_to) : "now (open)"}.`));
}

export async function render(main, params, id) {
  const scope = scopeQuery(params);
  const path = `/v1/memories/${encodeURIComponent(id)}`;
  const [m, hist] = await Promise.all([api("GET", path, { query: scope }), api("GET", path + "/history", { query: scope })]);
  const sources = (m.sources || []).slice(0, 50);
  const eps = await Promise.all(sources.map((sid) => api("GET", `/v1/episodes/${encodeURIComponent(sid)}`, { query: scope }).catch(() => null)));
  const reload = () => render(main, params, id).catch(showError);

  const rollback = async (v) => {
    if (!(await confirmDialog(`Roll back to version ${v.version}?`, "The memory takes that version's content again; the rollback is itself a new version in the history."))) return;
    try {
      await api("POST", path + "/rollback", { query: scope, body: { version: v.version, reason: "rolled back in the dashboard" } });
      status(`Rolled back to version ${v.version}.`, "ok");
    } catch (err) { showError(err); }
    await reload();
  };
  const restore = async () => {
    if (!(await confirmDialog("Restore this memory?", "It becomes active again."))) return;
    try {
      await api("POST", path + "/restore", { query: scope, body: { reason: "restored in the dashboard" } });
      status("Restored.", "ok");
    } catch (err) { showError(err); }
    await reload();
  };
  const versions = [...hist.versions].reverse();
  main.replaceChildren(
    h("h1", {}, m.abstraction || "Memory " + m.id),
    h("p", { class: "muted" }, scopeLabel(m.namespace), " · ", h("span", { class: "tag" }, m.kind), h("span", { class: "tag status-" + m.status, id: "memory-status" }, m.status), ` version ${m.version}`),
    h("section", { class: "card", "aria-labelledby": "h-value" }, h("h2", { id: "h-value" }, "Value"), h("p", { class: "value", id: "memory-value" }, m.value),
      h("dl", { class: "fields" },
        h("dt", {}, "Cues"), h("dd", {}, tags(m.cues)),
        h("dt", {}, "Language"), h("dd", {}, m.language || "—"),
        h("dt", {}, "Confidence"), h("dd", {}, String(m.confidence)),
        h("dt", {}, "Importance"), h("dd", {}, String(m.importance)),
        h("dt", {}, "Created"), h("dd", {}, fmtTime(m.created_at)),
        h("dt", {}, "Updated"), h("dd", {}, fmtTime(m.updated_at)),
        h("dt", {}, "Id"), h("dd", {}, h("code", {}, m.id))),
      ["deleted", "superseded", "expired"].includes(m.status) ? h("div", { class: "row" }, h("button", { type: "button", id: "restore", onclick: restore }, "Restore")) : null),
    h("section", { class: "card", "aria-labelledby": "h-valid" }, h("h2", { id: "h-valid" }, "Validity"), validity(m)),
    h("section", { class: "card", "aria-labelledby": "h-src" }, h("h2", { id: "h-src" }, `Sources (${(m.sources || []).length})`),
      eps.length ? h("ol", { class: "conv" }, eps.map((e, i) => e
        ? h("li", { class: "role-" + (e.role || "user") }, h("div", { class: "muted" }, `${e.speaker || e.role || "?"} · ${fmtTime(e.occurred_at)}`), h("div", { class: "value" }, e.content))
        : h("li", { class: "muted" }, `episode ${sources[i]} is gone`))) : h("p", { class: "muted" }, "No source episodes.")),
    h("section", { class: "card", "aria-labelledby": "h-hist" }, h("h2", { id: "h-hist" }, `History (${versions.length} versions)`),
      h("ol", { class: "hits", id: "history" }, versions.map((v) => h("li", { class: "card" },
        h("div", { class: "row" }, h("strong", {}, `v${v.version} ${v.op}`), h("span", { class: "muted" }, `${fmtTime(v.at)} · ${v.actor || ""}${v.reason ? " · " + v.reason : ""}`),
          v.new && v.version !== m.version ? h("button", { type: "button", class: "secondary", onclick: () => rollback(v), "data-version": String(v.version) }, `Roll back to v${v.version}`) : null),
        versionDiff(v))))));
}
