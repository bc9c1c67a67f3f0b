// Audit log: every mutation of a scope, newest first, filtered by
// operation and time.
import { h, api, scopeQuery, scopeLabel, fmtTime, pager, showError } from "../lib.js";

export async function render(main, params) {
  const scope = scopeQuery(params);
  const op = h("input", { id: "a-op", placeholder: "e.g. memory.update" });
  const after = h("input", { id: "a-after", type: "date" });
  const tbody = h("tbody");
  const pagerBox = h("div");
  const stack = [];
  let cursor = "";
  async function load(c, back) {
    if (!back && c !== undefined) stack.push(cursor);
    cursor = c || "";
    const res = await api("GET", "/v1/audit", { query: { ...scope, op: op.value.trim(), after: after.value ? after.value + "T00:00:00Z" : "", limit: 50, cursor } });
    tbody.replaceChildren(...res.entries.map((e) => h("tr", {},
      h("td", {}, fmtTime(e.at)), h("td", {}, e.op), h("td", {}, e.actor || ""),
      h("td", { class: "hide-sm" }, (e.ids || []).slice(0, 3).join(", ") + ((e.ids || []).length > 3 ? ` (+${e.ids.length - 3})` : "")),
      h("td", {}, e.detail || ""))));
    if (!res.entries.length) tbody.append(h("tr", {}, h("td", { colSpan: 5, class: "muted" }, "No entries.")));
    pagerBox.replaceChildren(pager(res.next, stack, (c2, b) => load(c2, b).catch(showError)));
  }
  const form = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); stack.length = 0; load("", true).catch(showError); } },
    h("label", { for: "a-op" }, "Operation", op), h("label", { for: "a-after" }, "From", after), h("button", { type: "submit" }, "Apply"));
  main.replaceChildren(h("h1", {}, "Audit log · " + scopeLabel(scope)), form,
    h("div", { class: "table-wrap" }, h("table", { id: "audit" }, h("thead", {}, h("tr", {},
      ["Time", "Operation", "Actor", "Ids", "Detail"].map((t, i) => h("th", { scope: "col", class: i === 3 ? "hide-sm" : "" }, t)))), tbody)),
    pagerBox);
  await load("", true);
}
