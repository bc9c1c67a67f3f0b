// Memories of a scope: filters (kind, status, text, time, metadata), paging and bulk
// soft delete with confirmation.
import { h, api, scopeQuery, scopeLabel, scopeHash, fmtTime, tags, pager, confirmDialog, status, showError } from "../lib.js";

const kinds = ["", "core", "episodic", "semantic", "procedural", "resource"];
const statuses = ["", "active", "superseded", "deleted", "expired"];

export async function render(main, params) {
  const scope = scopeQuery(params);
  const ns = { user: scope.user, agent: scope.agent, session: scope.session };
  const field = (id, label, el) => { el.id = id; return h("label", { for: id }, label, el); };
  const kind = h("select", {}, ...kinds.map((k) => h("option", { value: k }, k || "any")));
  const st = h("select", {}, ...statuses.map((k) => h("option", { value: k }, k || "current")));
  const text = h("input", { type: "search" });
  const after = h("input", { type: "date" });
  const before = h("input", { type: "date" });
  const meta = h("input", { type: "text", placeholder: "key=value; key=value", "aria-describedby": "f-meta-help", spellcheck: false });
  const tbody = h("tbody");
  const all = h("input", { type: "checkbox", "aria-label": "Select every memory on this page" });
  const del = h("button", { type: "button", class: "danger", disabled: true, id: "bulk-delete" }, "Delete selected");
  const count = h("span", { class: "muted", id: "memories-count" });
  const pagerBox = h("div");
  const stack = [];
  let cursor = "";
  let page = [];

  const selected = () => [...tbody.querySelectorAll("input[type=checkbox]:checked")].map((c) => c.value);
  const syncDel = () => { const n = selected().length; del.disabled = n === 0; del.textContent = n ? `Delete selected (${n})` : "Delete selected"; };

  async function load(c, back) {
    const metaQuery = metaParams(meta.value);
    if (!back && c !== undefined) stack.push(cursor);
    cursor = c || "";
    const res = await api("GET", "/v1/memories", { query: {
      ...scope, ...metaQuery, kind: kind.value, status: st.value, contains: text.value.trim(),
      created_after: after.value ? after.value + "T00:00:00Z" : "", created_before: before.value ? before.value + "T23:59:59Z" : "",
      limit: 50, cursor,
    } });
    page = res.memories;
    tbody.replaceChildren(...page.map((m) => h("tr", {},
      h("td", {}, h("input", { type: "checkbox", value: m.id, "aria-label": "Select " + (m.abstraction || m.id), onchange: syncDel })),
      h("td", {}, h("a", { href: `#/memory/${encodeURIComponent(m.id)}` + scopeHash(m.namespace) }, m.abstraction || m.value.slice(0, 80) || m.id),
        h("div", { class: "muted" }, tags(m.cues))),
      h("td", {}, h("span", { class: "tag" }, m.kind)),
      h("td", {}, h("span", { class: "tag status-" + m.status }, m.status)),
      h("td", { class: "hide-sm" }, fmtTime(m.valid_from || m.created_at)),
      h("td", { class: "hide-sm" }, fmtTime(m.updated_at)))));
    if (!page.length) {
      tbody.append(h("tr", {}, h("td", { colSpan: 6, class: "muted", id: "memories-empty" }, res.empty_scope
        ? `This scope (${scope.org} / ${scope.project}, ${scopeLabel(ns)}) holds nothing yet: no episode and no current memory. Check the user, agent and session, or the tenant.`
        : "No memory matches.")));
    }
    all.checked = false;
    count.textContent = `${page.length} on this page` + (res.next ? ", more on the next" : "");
    pagerBox.replaceChildren(pager(res.next, stack, (c, b) => load(c, b).catch(showError)));
    syncDel();
  }

  all.addEventListener("change", () => { tbody.querySelectorAll("input[type=checkbox]").forEach((c) => { c.checked = all.checked; }); syncDel(); });
  del.addEventListener("click", async () => {
    const ids = selected();
    if (!(await confirmDialog(`Delete ${ids.length} memories?`, "They are soft-deleted: kept in history and restorable from each memory's page."))) return;
    let done = 0;
    try {
      for (const id of ids) {
        await api("DELETE", `/v1/memories/${encodeURIComponent(id)}`, { query: { ...scope, reason: "deleted in the dashboard" } });
        done++;
      }
      status(`Deleted ${done} memories.`, "ok");
    } catch (err) {
      showError(err);
    }
    await load(cursor, true);
  });
  const form = h("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); stack.length = 0; load("", true).catch(showError); } },
    field("f-kind", "Kind", kind), field("f-status", "Status", st), field("f-text", "Text", text),
    field("f-after", "Created from", after), field("f-before", "Created until", before),
    field("f-meta", "Metadata", meta),
    h("button", { type: "submit", id: "f-apply" }, "Apply"),
    h("p", { class: "muted", id: "f-meta-help" }, "Metadata: key=value pairs separated by semicolons; a value that reads as JSON (a number, true) is compared as such."));
  main.replaceChildren(
    h("h1", {}, "Memories · " + scopeLabel(ns)),
    form,
    h("div", { class: "row" }, del, count),
    h("div", { class: "table-wrap" }, h("table", { id: "memories" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, all), h("th", { scope: "col" }, "Memory"), h("th", { scope: "col" }, "Kind"),
        h("th", { scope: "col" }, "Status"), h("th", { scope: "col", class: "hide-sm" }, "Event time"), h("th", { scope: "col", class: "hide-sm" }, "Updated"))),
      tbody)),
    pagerBox);
  await load("", true);
}

// metaParams turns "key=value; key=value" into meta.key query
// parameters; it throws, naming the filter, for a pair without a key.
export function metaParams(text) {
  const out = {};
  for (const pair of text.split(";").map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new Error(`Metadata filter: "${pair}" is not key=value`);
    const key = "meta." + pair.slice(0, at).trim();
    out[key] = [].concat(out[key] || [], pair.slice(at + 1).trim());
  }
  return out;
}
