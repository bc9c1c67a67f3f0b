// Shared helpers of the dashboard's pages: the session (API key and
// tenant, kept in sessionStorage), REST calls, DOM building (text only,
// never HTML from data) and formatting.

const store = window.sessionStorage;

// session returns the signed-in key ("" without auth) and tenant.
export function session() {
  return { key: store.getItem("engram.key") || "", org: store.getItem("engram.org") || "", project: store.getItem("engram.project") || "" };
}

export function saveSession(s) {
  store.setItem("engram.key", s.key || "");
  store.setItem("engram.org", s.org || "");
  store.setItem("engram.project", s.project || "");
}

export function clearSession() {
  ["engram.key", "engram.org", "engram.project"].forEach((k) => store.removeItem(k));
}

let keysNeeded = null;

// keysRequired reports whether the server needs an API key, as its
// /healthz says (asked once per page load; no key is sent for it).
export async function keysRequired() {
  if (keysNeeded === null) {
    const res = await fetch(new URL("/healthz", window.location.origin));
    const data = res.ok ? await res.json() : {};
    keysNeeded = data.keys_required !== false;
  }
  return keysNeeded;
}

// APIError is a REST error: status, code and message.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// api calls the REST API; query is an object of parameters (arrays
// repeat, empty values are left out). It throws APIError.
export async function api(method, path, { query, body } = {}) {
  const s = session();
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    for (const x of [].concat(v)) {
      if (x !== undefined && x !== null && x !== "") url.searchParams.append(k, String(x));
    }
  }
  const headers = { "X-Engram-Actor": "dashboard" };
  if (s.key) headers.Authorization = "Bearer " + s.key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new APIError(res.status, e.code || "EUNKNOWN", e.message || `${method} ${path}: HTTP ${res.status}`);
  }
  return data;
}

// scopeQuery returns the scope parameters of a page's params within the
// signed-in tenant.
export function scopeQuery(params) {
  const s = session();
  return { org: s.org, project: s.project, user: params.get("user") || "", agent: params.get("agent") || "", session: params.get("session") || "" };
}

// scopeHash is the hash query string naming a scope.
export function scopeHash(ns) {
  const p = new URLSearchParams();
  for (const k of ["user", "agent", "session"]) if (ns[k]) p.set(k, ns[k]);
  const s = p.toString();
  return s ? "?" + s : "";
}

export function scopeLabel(ns) {
  const parts = [];
  parts.push(ns.user ? "user " + ns.user : "no user");
  if (ns.agent) parts.push("agent " + ns.agent);
  if (ns.session) parts.push("session " + ns.session);
  return parts.join(" · ");
}

// h builds an element: attrs are properties or attributes ("on" + event
// adds a listener, "class" sets className); children are nodes or text.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  if (isNaN(d)) return s;
  return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

// status shows a message in the page's live region.
export function status(msg, kind = "") {
  const el = document.getElementById("status");
  el.textContent = msg || "";
  el.className = "status " + kind;
}

// showError puts an error in the live region and returns it.
export function showError(err) {
  status(err instanceof APIError ? `${err.code}: ${err.message}` : String(err && err.message ? err.message : err), "error");
  return err;
}

// confirmDialog asks before a change; with word, the user must type it.
// It resolves to true when confirmed.
export function confirmDialog(title, text, word = "") {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  const typedLabel = document.getElementById("confirm-typed-label");
  const typed = document.getElementById("confirm-typed");
  const ok = document.getElementById("confirm-ok");
  typedLabel.hidden = !word;
  typed.value = "";
  document.getElementById("confirm-word").textContent = word;
  ok.disabled = !!word;
  typed.oninput = () => { ok.disabled = typed.value !== word; };
  return new Promise((resolve) => {
    dlg.onclose = () => resolve(dlg.returnValue === "ok" && (!word || typed.value === word));
    dlg.returnValue = "";
    dlg.showModal();
    (word ? typed : document.getElementById("confirm-cancel")).focus();
  });
}

// pager renders previous/next buttons over cursors kept in stack.
export function pager(next, stack, go) {
  return h("div", { class: "pager" },
    h("button", { type: "button", class: "secondary", disabled: stack.length === 0, onclick: () => go(stack.pop(), true) }, "Previous page"),
    h("button", { type: "button", class: "secondary", disabled: !next, onclick: () => go(next, false) }, "Next page"));
}

export function tags(list, cls = "") {
  return (list || []).map((t) => h("span", { class: "tag " + cls }, t));
}
