// The dashboard's shell: sign-in, navigation and hash routing to one
// module per page (pages/NAME.js exports render(main, params, route)).
import { api, session, saveSession, clearSession, h, status, showError, scopeHash, keysRequired, APIError } from "./lib.js";

const pages = {
  scopes: "Scopes", memories: "Memories", search: "Search", timeline: "Timeline", graph: "Graph",
  jobs: "Jobs", audit: "Audit log", purge: "Purge",
};
const hidden = { memory: true, signin: true, tenants: true };

function parseHash() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [path, qs] = raw.split("?");
  const [name, ...rest] = (path || "scopes").split("/");
  return { name: name || "scopes", arg: rest.map(decodeURIComponent).join("/"), params: new URLSearchParams(qs || "") };
}

function renderNav(current, params) {
  const nav = document.getElementById("nav");
  const scope = { user: params.get("user") || "", agent: params.get("agent") || "", session: params.get("session") || "" };
  nav.replaceChildren(...Object.entries(pages).map(([name, label]) => h("a", {
    href: "#/" + name + (name === "scopes" ? "" : scopeHash(scope)),
    "aria-current": name === current ? "page" : false,
  }, label)));
  const s = session();
  const who = document.getElementById("who");
  who.replaceChildren();
  if (s.org) who.append(s.key ? `${s.org} / ${s.project}` : h("a", { href: "#/tenants", title: "Other tenants" }, `${s.org} / ${s.project} (no key)`));
  document.getElementById("signout").hidden = !s.org;
}

// signedIn reports whether the tab has a session, learning the key's
// tenant from the server when only a key is stored; it returns false (and
// shows the sign-in page) when the server refuses it.
async function signedIn() {
  const s = session();
  if (!s.org && !s.key) return false;
  if (s.org && s.project) return true; // a refused key sends the page's first call back here
  try {
    const res = await api("GET", "/v1/scopes", { query: { org: s.org, project: s.project, limit: 1 } });
    if (!s.org) saveSession({ key: s.key, org: res.tenant.org, project: res.tenant.project });
    return true;
  } catch (err) {
    if (err instanceof APIError && (err.status === 401 || err.status === 403 || err.status === 400)) {
      showError(err);
      return false;
    }
    throw err;
  }
}

let seq = 0;

async function route() {
  const my = ++seq;
  const main = document.getElementById("main");
  const r = parseHash();
  status("");
  const t0 = performance.now();
  let name = r.name;
  if (!(name in pages) && !(name in hidden)) name = "scopes";
  // A server without keys opens on its tenants; one with keys asks for a
  // key first.
  if (name === "signin" && !(await keysRequired())) name = "tenants";
  if (name !== "signin" && name !== "tenants" && !(await signedIn())) name = (await keysRequired()) ? "signin" : "tenants";
  if (my !== seq) return;
  renderNav(name, r.params);
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  main.setAttribute("aria-busy", "true");
  try {
    const mod = await import(`./pages/${name}.js`);
    if (my !== seq) return;
    await mod.render(main, r.params, r.arg, { reroute: route });
    document.title = (pages[name] || { memory: "Memory", tenants: "Tenants" }[name] || "Sign in") + " · engram";
  } catch (err) {
    if (my !== seq) return;
    if (err instanceof APIError && err.status === 401) {
      // The key is missing, revoked or wrong: sign in again.
      const signin = await import("./pages/signin.js");
      await signin.render(main);
      name = "signin";
    } else {
      main.replaceChildren(h("p", { class: "error" }, "This page could not load."));
    }
    showError(err);
  } finally {
    if (my === seq) {
      main.removeAttribute("aria-busy");
      main.dataset.page = name;
      main.dataset.renderMs = String(Math.round(performance.now() - t0));
      main.dataset.readyAt = String(Math.round(performance.now()));
      main.dataset.ready = String(my);
    }
  }
}

document.getElementById("signout").addEventListener("click", () => {
  clearSession();
  window.location.hash = "#/signin";
});
window.addEventListener("hashchange", route);
route();
