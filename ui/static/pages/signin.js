// Sign-in: an API key and, optionally, the tenant; shown only when the
// server requires keys (a server without them opens on pages/tenants.js).
import { h, session, saveSession, api, status, showError } from "../lib.js";

export async function render(main) {
  const s = session();
  const key = h("input", { id: "key", type: "password", autocomplete: "off", value: s.key });
  const org = h("input", { id: "org", value: s.org, autocomplete: "off" });
  const project = h("input", { id: "project", value: s.project, autocomplete: "off" });
  const form = h("form", { class: "signin card", onsubmit: async (e) => {
    e.preventDefault();
    saveSession({ key: key.value.trim(), org: org.value.trim(), project: project.value.trim() });
    try {
      const res = await api("GET", "/v1/scopes", { query: { org: org.value.trim(), project: project.value.trim(), limit: 1 } });
      saveSession({ key: key.value.trim(), org: res.tenant.org, project: res.tenant.project });
      status("Signed in to " + res.tenant.org + " / " + res.tenant.project + ".", "ok");
      window.location.hash = "#/scopes";
    } catch (err) {
      saveSession({ key: "", org: "", project: "" });
      showError(err);
    }
  } },
  h("p", { class: "muted" }, "This server needs an API key. The key stays in this browser tab only (session storage) and is sent to this server as a Bearer token."),
  h("label", { for: "key" }, "API key", key),
  h("label", { for: "org" }, "Organisation (optional with a key)", org),
  h("label", { for: "project" }, "Project (optional with a key)", project),
  h("button", { type: "submit", id: "signin-submit" }, "Sign in"));
  main.replaceChildren(h("h1", {}, "Sign in"), form);
  key.focus();
}
