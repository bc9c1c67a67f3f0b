// Tenants: the organisations and projects that hold active memories, for
// a server without API keys (GET /v1/tenants, admin only with keys). One
// click opens a tenant's scopes; with none yet, the user names one.
import { h, api, session, saveSession, fmtTime } from "../lib.js";

function open(org, project) {
  saveSession({ key: session().key, org, project });
  window.location.hash = "#/scopes";
}

export async function render(main) {
  const res = await api("GET", "/v1/tenants", { query: { limit: 1000 } });
  const org = h("input", { id: "org", autocomplete: "off" });
  const project = h("input", { id: "project", autocomplete: "off" });
  const named = h("form", { class: "signin card", onsubmit: (e) => {
    e.preventDefault();
    if (org.value.trim() && project.value.trim()) open(org.value.trim(), project.value.trim());
  } },
  h("label", { for: "org" }, "Organisation", org),
  h("label", { for: "project" }, "Project", project),
  h("button", { type: "submit", id: "signin-submit" }, "Open"));
  const rows = res.tenants.map((c) => h("tr", {},
    h("td", {}, h("a", { href: "#/scopes", class: "tenant", onclick: (e) => { e.preventDefault(); open(c.namespace.org, c.namespace.project); } },
      `${c.namespace.org} / ${c.namespace.project}`)),
    h("td", { class: "num" }, String(c.memories)),
    h("td", { class: "hide-sm" }, fmtTime(c.last_activity))));
  main.replaceChildren(
    h("h1", {}, "Tenants"),
    h("p", { class: "muted" }, res.tenants.length
      ? `This server needs no API key. ${res.tenants.length} organisations and projects hold active memories; open one.`
      : "This server needs no API key, and no organisation or project holds memories yet. Name the one to open."),
    res.tenants.length ? h("div", { class: "table-wrap" }, h("table", { id: "tenants" },
      h("caption", { class: "muted" }, "Organisations and projects with active memories"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Tenant"), h("th", { scope: "col", class: "num" }, "Memories"),
        h("th", { scope: "col", class: "hide-sm" }, "Last activity"))),
      h("tbody", {}, ...rows))) : "",
    h("h2", {}, "Another tenant"), named);
}
