// Scopes: the users, agents and sessions of the tenant that hold active
// memories, with counts and last activity.
import { h, api, session, fmtTime, scopeHash } from "../lib.js";

export async function render(main) {
  const s = session();
  const res = await api("GET", "/v1/scopes", { query: { org: s.org, project: s.project, limit: 1000 } });
  const filter = h("input", { id: "scope-filter", type: "search", placeholder: "user, agent or session" });
  const tbody = h("tbody");
  const users = new Set(res.scopes.map((c) => c.namespace.user || ""));
  const total = res.scopes.reduce((n, c) => n + c.memories, 0);
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const rows = res.scopes.filter((c) => !q || [c.namespace.user, c.namespace.agent, c.namespace.session].some((v) => (v || "").toLowerCase().includes(q)));
    tbody.replaceChildren(...rows.map((c) => {
      const ns = c.namespace;
      return h("tr", {},
        h("td", {}, h("a", { href: "#/memories" + scopeHash(ns) }, ns.user || "(no user)")),
        h("td", {}, ns.agent || "—"),
        h("td", {}, ns.session || "—"),
        h("td", { class: "num" }, String(c.memories)),
        h("td", { class: "hide-sm" }, fmtTime(c.last_activity)),
        h("td", {}, ns.user ? h("a", { href: "#/timeline" + scopeHash({ user: ns.user }) }, "timeline") : ""));
    }));
    if (!rows.length) tbody.append(h("tr", {}, h("td", { colSpan: 6, class: "muted" }, "No scope holds active memories yet.")));
  };
  filter.addEventListener("input", draw);
  draw();
  main.replaceChildren(
    h("h1", {}, `Scopes of ${res.tenant.org} / ${res.tenant.project}`),
    h("p", { class: "muted" }, `${users.size} users, ${res.scopes.length} scopes, ${total} active memories.`),
    h("div", { class: "row" }, h("label", { for: "scope-filter" }, "Filter", filter)),
    h("div", { class: "table-wrap" }, h("table", { id: "scopes" },
      h("caption", { class: "muted" }, "Scopes (user, agent, session) with active memories"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "User"), h("th", { scope: "col" }, "Agent"), h("th", { scope: "col" }, "Session"),
        h("th", { scope: "col", class: "num" }, "Memories"), h("th", { scope: "col", class: "hide-sm" }, "Last activity"), h("th", { scope: "col" }, "View"))),
      tbody)));
}
