// The entity graph of a scope, or around one entity: a force-directed
// drawing on a canvas (grid-bucketed repulsion, so 2,000 nodes stay
// responsive) and, for keyboards and screen readers, the same graph as a
// table of relations with links that recentre it.
import { h, api, scopeQuery, scopeLabel, scopeHash, showError } from "../lib.js";

// layout runs a force simulation over nodes (with x, y) and edges (with
// s, t indexes) for at most ticks steps, calling draw between frames.
// stats, when given, gets the longest frame's work in ms (maxWork).
export function layout(nodes, edges, w, hgt, draw, done, stats) {
  const n = nodes.length;
  const cell = Math.max(24, Math.sqrt((w * hgt) / Math.max(1, n)));
  const k = Math.min(cell * 0.6, 120);
  nodes.forEach((p, i) => {
    // Phyllotaxis start: even spacing, no overlaps.
    const r = Math.min(w, hgt) * 0.45 * Math.sqrt((i + 0.5) / Math.max(1, n)), a = i * 2.39996;
    p.x = w / 2 + r * Math.cos(a); p.y = hgt / 2 + r * Math.sin(a); p.vx = 0; p.vy = 0;
  });
  let tick = 0, temp = cell;
  const step = () => {
    const grid = new Map();
    for (const p of nodes) {
      const key = Math.floor(p.x / cell) + "," + Math.floor(p.y / cell);
      let b = grid.get(key);
      if (!b) grid.set(key, (b = []));
      b.push(p);
    }
    for (const p of nodes) {
      const gx = Math.floor(p.x / cell), gy = Math.floor(p.y / cell);
      for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) {
        const b = grid.get(gx + dx + "," + (gy + dy));
        if (!b) continue;
        for (const q of b) {
          if (q === p) continue;
          let ddx = p.x - q.x, ddy = p.y - q.y, d2 = ddx * ddx + ddy * ddy;
          if (d2 < 0.01) { ddx = Math.random() - 0.5; ddy = Math.random() - 0.5; d2 = 0.5; }
          const f = (k * k) / d2;
          p.vx += ddx * f * 0.05; p.vy += ddy * f * 0.05;
        }
      }
    }
    for (const e of edges) {
      const a = nodes[e.s], b = nodes[e.t];
      const dx = b.x - a.x, dy = b.y - a.y, d = Math.sqrt(dx * dx + dy * dy) || 1;
      const f = (d - k) / d * 0.05;
      a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f;
    }
    for (const p of nodes) {
      p.vx += (w / 2 - p.x) * 0.002; p.vy += (hgt / 2 - p.y) * 0.002;
      const v = Math.sqrt(p.vx * p.vx + p.vy * p.vy) || 1, lim = Math.min(v, temp);
      p.x = Math.min(w - 12, Math.max(12, p.x + (p.vx / v) * lim));
      p.y = Math.min(hgt - 12, Math.max(12, p.y + (p.vy / v) * lim));
      p.vx *= 0.5; p.vy *= 0.5;
    }
    temp *= 0.985;
  };
  let stopped = false;
  const frame = () => {
    if (stopped) return;
    const t0 = performance.now();
    while (tick < 300 && performance.now() - t0 < 12) { step(); tick++; }
    draw();
    if (stats) stats.maxWork = Math.max(stats.maxWork || 0, performance.now() - t0);
    if (tick < 300) requestAnimationFrame(frame);
    else done();
  };
  requestAnimationFrame(frame);
  return () => { stopped = true; };
}

export async function render(main, params) {
  const scope = scopeQuery(params);
  const entity = params.get("entity") || "";
  const hops = params.get("hops") || "1";
  let g;
  try {
    g = await api("GET", "/v1/graph", { query: { ...scope, entity, hops: entity ? hops : "", limit: 1000 } });
  } catch (err) {
    if (err.status === 503) {
      main.replaceChildren(h("h1", {}, "Entity graph"), h("p", {}, "This server keeps no entity graph."));
      return;
    }
    throw err;
  }
  const byId = new Map(g.nodes.map((n, i) => [n.id, i]));
  const nodes = g.nodes.map((n) => ({ ...n }));
  const edges = g.edges.filter((e) => byId.has(e.source) && byId.has(e.target)).map((e) => ({ ...e, s: byId.get(e.source), t: byId.get(e.target) }));
  const link = (id) => "#/graph" + scopeHash(scope) + (scopeHash(scope) ? "&" : "?") + "entity=" + encodeURIComponent(id) + "&hops=" + hops;

  const canvas = h("canvas", { id: "graph-canvas", role: "img", "aria-label": `Entity graph: ${nodes.length} entities, ${edges.length} relations; the table below lists them` });
  const tip = h("p", { class: "muted", id: "graph-tip", "aria-live": "polite" }, "Point at an entity to name it; click it to centre the graph on it.");
  const wrap = h("div", { class: "graph-wrap" }, canvas);
  const W = Math.min(1160, Math.max(320, main.clientWidth || 900)), H = Math.round(W * 0.6);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = W * dpr; canvas.height = H * dpr;
  canvas.style.width = W + "px"; canvas.style.height = H + "px";
  const c2 = canvas.getContext("2d");
  const maxW = Math.max(1, ...edges.map((e) => e.weight));
  const draw = () => {
    c2.setTransform(dpr, 0, 0, dpr, 0, 0);
    c2.clearRect(0, 0, W, H);
    c2.strokeStyle = "rgba(80,90,110,0.35)";
    for (const e of edges) {
      const a = nodes[e.s], b = nodes[e.t];
      c2.lineWidth = 0.5 + (2 * e.weight) / maxW;
      c2.beginPath(); c2.moveTo(a.x, a.y); c2.lineTo(b.x, b.y); c2.stroke();
    }
    for (const p of nodes) {
      c2.fillStyle = p.id === entity ? "#b4590b" : "#1651b5";
      c2.beginPath(); c2.arc(p.x, p.y, 2.5 + Math.min(6, Math.log2(1 + p.mentions)), 0, 6.283); c2.fill();
    }
    if (nodes.length <= 150) {
      c2.fillStyle = "#1b1d21"; c2.font = "12px system-ui, sans-serif";
      for (const p of nodes) c2.fillText(p.name, p.x + 6, p.y - 6);
    }
  };
  const stop = layout(nodes, edges, W, H, draw, () => { canvas.dataset.settled = "1"; });
  const nearest = (ev) => {
    const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    let best = null, bd = 144;
    for (const p of nodes) { const d = (p.x - x) ** 2 + (p.y - y) ** 2; if (d < bd) { bd = d; best = p; } }
    return best;
  };
  canvas.addEventListener("mousemove", (ev) => { const p = nearest(ev); tip.textContent = p ? `${p.name}${p.type ? " (" + p.type + ")" : ""} · ${p.mentions} mentions` : ""; });
  canvas.addEventListener("click", (ev) => { const p = nearest(ev); if (p) { stop(); window.location.hash = link(p.id); } });

  const rows = edges.slice(0, 300).map((e) => h("tr", {},
    h("td", {}, h("a", { href: link(nodes[e.s].id) }, nodes[e.s].name)), h("td", {}, e.label),
    h("td", {}, h("a", { href: link(nodes[e.t].id) }, nodes[e.t].name)), h("td", { class: "num" }, e.weight.toFixed(2))));
  const center = entity && byId.has(entity) ? nodes[byId.get(entity)].name : "";
  main.replaceChildren(
    h("h1", {}, "Entity graph · " + scopeLabel(scope) + (center ? ` · around ${center}` : "")),
    h("p", { class: "muted", id: "graph-summary" }, `${nodes.length} entities, ${edges.length} relations.`,
      entity ? [" ", h("a", { href: "#/graph" + scopeHash(scope) }, "Whole scope"), " · ", h("a", { href: link(entity).replace(/hops=\d/, "hops=" + (hops === "1" ? "2" : "1")) }, hops === "1" ? "Two hops" : "One hop")] : null),
    wrap, tip,
    h("h2", {}, "Relations"),
    h("div", { class: "table-wrap" }, h("table", { id: "graph-edges" },
      h("thead", {}, h("tr", {}, ["From", "Relation", "To", "Weight"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colSpan: 4, class: "muted" }, "No relations in this scope."))))));
}
