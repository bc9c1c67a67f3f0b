// Purge: hard-delete everything of a user's scope (episodes, memories,
// versions) after a typed confirmation, then show the counts removed.
import { h, api, session, confirmDialog, status, showError } from "../lib.js";

export async function render(main, params) {
  const s = session();
  const user = h("input", { id: "p-user", value: params.get("user") || "", autocomplete: "off", required: true });
  const result = h("div", { id: "purge-result", "aria-live": "polite" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    const u = user.value.trim();
    if (!u) { status("Name the user to purge.", "error"); return; }
    if (!(await confirmDialog(`Purge user ${u}?`, `Every episode, memory and version of ${u} in ${s.org} / ${s.project} is removed for good. This cannot be undone.`, u))) return;
    try {
      const c = await api("DELETE", "/v1/scope", { query: { org: s.org, project: s.project, user: u } });
      result.replaceChildren(h("p", { class: "ok" }, `Purged ${u}: ${c.episodes} episodes, ${c.memories} memories, ${c.versions} versions removed.`));
      status(`Purged ${u}.`, "ok");
    } catch (err) { showError(err); }
  } },
  h("p", {}, "Purging removes a user's records permanently (GDPR erasure). It needs an admin key."),
  h("label", { for: "p-user" }, "User", user),
  h("div", { class: "row" }, h("button", { type: "submit", class: "danger", id: "p-run" }, "Purge…")));
  main.replaceChildren(h("h1", {}, "Purge a user"), form, result);
}
