// Jobs: the background formation jobs of a scope.
import { h, api, scopeQuery, scopeLabel, fmtTime, pager, showError } from "../lib.js";

export async function render(main, params) {
  const scope = scopeQuery(params);
  const state = h("select", { id: "j-state" }, ["", "queued", "running", "retrying", "done", "failed"].map((s) => h("option", { value: s }, s || "any")));
  const tbody = h("tbody");
  const pagerBox = h("div");
  const stack = [];
  let cursor = "";
  async function load(c, back) {
    if (!back && c !== undefined) stack.push(cursor);
    cursor = c || "";
    const res = await api("GET", "/v1/jobs", { query: { ...scope, state: state.value, limit: 50, cursor } });
    tbody.replaceChildren(...res.jobs.map((j) => h("tr", {},
      h("td", {}, h("code", {}, j.id)), h("td", {}, j.state), h("td", { class: "num" }, String(j.attempts)),
      h("td", { class: "num" }, String((j.episodes || []).length)), h("td", { class: "hide-sm" }, fmtTime(j.created_at)),
      h("td", {}, j.last_error || ""))));
    if (!res.jobs.length) tbody.append(h("tr", {}, h("td", { colSpan: 6, class: "muted" }, "No jobs in this scope.")));
    pagerBox.replaceChildren(pager(res.next, stack, (c2, b) => load(c2, b).catch(showError)));
  }
  state.addEventListener("change", () => { stack.length = 0; load("", true).catch(showError); });
  main.replaceChildren(h("h1", {}, "Jobs · " + scopeLabel(scope)),
    h("div", { class: "row" }, h("label", { for: "j-state" }, "State", state)),
    h("div", { class: "table-wrap" }, h("table", { id: "jobs" }, h("thead", {}, h("tr", {},
      ["Id", "State", "Attempts", "Episodes", "Created", "Last error"].map((t, i) => h("th", { scope: "col", class: i === 4 ? "hide-sm" : "" }, t)))), tbody)),
    pagerBox);
  await load("", true);
}
