// The entity graph of a scope, or around one entity: a force-directed
// drawing on a canvas that stays responsive at 2,000 nodes (repulsion
// bucketed on a grid, so a tick is linear in the nodes; a bounded,
// cooling number of ticks; batched drawing once per animation frame),
// with zoom and pan by wheel, drag and keys, and, for keyboards and
// screen readers, the same graph as a paged table of relations.
import { h, api, scopeQuery, scopeLabel, scopeHash } from "../lib.js";

const maxTicks = 300;  // the layout stops after this many ticks at the latest
const frameBudget = 8; // ms of simulation per frame, the rest is drawing
const pageSize = 100;  // relations per page of the table
const neighbours = [[1, 0], [-1, 1], [0, 1], [1, 1]];

// Grid buckets points (xs, ys) into square cells of side cell: cellStart
// [c]..cellStart[c+1] index order for the points of cell c. Building it
// is linear; near returns the points of the 3x3 cells around (x, y).
class Grid {
  constructor(n) {
    this.order = new Int32Array(n);
    this.cellOf = new Int32Array(n);
  }

  build(xs, ys, n, cell) {
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      if (xs[i] < minX) minX = xs[i];
      if (xs[i] > maxX) maxX = xs[i];
      if (ys[i] < minY) minY = ys[i];
      if (ys[i] > maxY) maxY = ys[i];
    }
    this.cell = cell; this.minX = minX; this.minY = minY;
    this.cols = Math.max(1, Math.floor((maxX - minX) / cell) + 1);
    this.rows = Math.max(1, Math.floor((maxY - minY) / cell) + 1);
    const cells = this.cols * this.rows;
    if (!this.cellStart || this.cellStart.length < cells + 1) this.cellStart = new Int32Array(cells + 1);
    const start = this.cellStart;
    start.fill(0, 0, cells + 1);
    for (let i = 0; i < n; i++) {
      const c = this.cellIndex(xs[i], ys[i]);
      this.cellOf[i] = c;
      start[c + 1]++;
    }
    for (let c = 0; c < cells; c++) start[c + 1] += start[c];
    const fill = start.slice(0, cells);
    for (let i = 0; i < n; i++) this.order[fill[this.cellOf[i]]++] = i;
  }

  cellIndex(x, y) {
    const cx = Math.min(this.cols - 1, Math.max(0, Math.floor((x - this.minX) / this.cell)));
    const cy = Math.min(this.rows - 1, Math.max(0, Math.floor((y - this.minY) / this.cell)));
    return cy * this.cols + cx;
  }

  // near calls fn(j) for every point in the 3x3 cells around (x, y).
  near(x, y, fn) {
    const cx = Math.floor((x - this.minX) / this.cell), cy = Math.floor((y - this.minY) / this.cell);
    for (let gy = Math.max(0, cy - 1); gy <= Math.min(this.rows - 1, cy + 1); gy++) {
      for (let gx = Math.max(0, cx - 1); gx <= Math.min(this.cols - 1, cx + 1); gx++) {
        const c = gy * this.cols + gx;
        for (let k = this.cellStart[c]; k < this.cellStart[c + 1]; k++) fn(this.order[k]);
      }
    }
  }
}

// Simulation is the force layout of n nodes and the edges (es, et) in a
// square world of side size: spring edges, repulsion between nodes closer
// than two ideal lengths (found through the grid), a pull to the centre,
// and a temperature that caps each move and cools every tick. pairs
// counts the pairs of nodes whose distance the ticks have compared.
class Simulation {
  constructor(n, es, et) {
    this.n = n; this.es = es; this.et = et;
    this.k = 30; // ideal edge length in world units
    this.size = this.k * Math.sqrt(Math.max(1, n)) * 1.6;
    this.x = new Float64Array(n); this.y = new Float64Array(n);
    this.fx = new Float64Array(n); this.fy = new Float64Array(n);
    this.grid = new Grid(n);
    const c = this.size / 2;
    for (let i = 0; i < n; i++) {
      // Phyllotaxis start: even spacing, no two nodes at one point.
      const r = this.size * 0.45 * Math.sqrt((i + 0.5) / Math.max(1, n)), a = i * 2.39996;
      this.x[i] = c + r * Math.cos(a); this.y[i] = c + r * Math.sin(a);
    }
    this.temp = this.size / 10;
    this.ticks = 0;
    this.pairs = 0;
    this.grid.build(this.x, this.y, n, 1.5 * this.k);
  }

  done() { return this.ticks >= maxTicks || this.temp < 0.05; }

  tick() {
    const { n, x, y, fx, fy, k, es, et, grid } = this;
    const k2 = k * k, cut = 1.5 * k, cut2 = cut * cut, c = this.size / 2;
    fx.fill(0); fy.fill(0);
    grid.build(x, y, n, cut);
    // Each pair of nodes in the same or adjacent cells once: a cell with
    // itself (j after i) and with its right, lower-left, lower and
    // lower-right neighbours.
    const { cols, rows, cellStart: start, order } = grid;
    let pairs = 0;
    const repel = (i, j) => {
      pairs++;
      let dx = x[i] - x[j], dy = y[i] - y[j], d2 = dx * dx + dy * dy;
      if (d2 > cut2) return;
      if (d2 < 0.01) { dx = 0.1 * ((i % 7) - 3) || 0.1; dy = 0.1 * ((j % 5) - 2) || 0.1; d2 = dx * dx + dy * dy; }
      const f = k2 / d2;
      fx[i] += dx * f; fy[i] += dy * f; fx[j] -= dx * f; fy[j] -= dy * f;
    };
    for (let cy = 0; cy < rows; cy++) {
      for (let cx = 0; cx < cols; cx++) {
        const cell = cy * cols + cx, a0 = start[cell], a1 = start[cell + 1];
        if (a0 === a1) continue;
        for (let a = a0; a < a1; a++) for (let b = a + 1; b < a1; b++) repel(order[a], order[b]);
        for (const [ox, oy] of neighbours) {
          const nx = cx + ox, ny = cy + oy;
          if (nx < 0 || nx >= cols || ny >= rows) continue;
          const o = ny * cols + nx;
          for (let a = a0; a < a1; a++) for (let b = start[o]; b < start[o + 1]; b++) repel(order[a], order[b]);
        }
      }
    }
    for (let e = 0; e < es.length; e++) {
      const a = es[e], b = et[e];
      const dx = x[b] - x[a], dy = y[b] - y[a], d = Math.sqrt(dx * dx + dy * dy) || 1;
      const f = d / k;
      fx[a] += dx * f; fy[a] += dy * f; fx[b] -= dx * f; fy[b] -= dy * f;
    }
    const temp = this.temp;
    for (let i = 0; i < n; i++) {
      const gx = fx[i] + (c - x[i]) * 0.05, gy = fy[i] + (c - y[i]) * 0.05;
      const m = Math.sqrt(gx * gx + gy * gy);
      if (m > 0) { const s = Math.min(m, temp) / m; x[i] += gx * s; y[i] += gy * s; }
    }
    this.temp *= 0.97;
    this.ticks++;
    this.pairs += pairs;
  }
}

// layout runs the simulation of nodes (given x and y) and edges (with s,
// t indexes) in a w × hgt box, a frame's budget of ticks per animation
// frame, calling draw after each frame's ticks and done once it has
// cooled. stats, when given, is filled as run fills it. It returns a
// function that stops it.
export function layout(nodes, edges, w, hgt, draw, done, stats) {
  const sim = new Simulation(nodes.length, Int32Array.from(edges, (e) => e.s), Int32Array.from(edges, (e) => e.t));
  const fit = Math.min(w, hgt) / sim.size;
  const copy = () => nodes.forEach((p, i) => { p.x = w / 2 + (sim.x[i] - sim.size / 2) * fit; p.y = hgt / 2 + (sim.y[i] - sim.size / 2) * fit; });
  return run(sim, () => { copy(); draw(); }, done, stats);
}

// run ticks sim a frame's budget at a time, calling draw after each frame
// and done when it has cooled; it returns a function that stops it.
// stats, when given, gets the ticks, their total ms and the pairs of
// nodes they compared (ticks, tickMs, pairs),
// the drawings and their total ms (draws, drawMs) and the longest frame's
// work in ms (maxWork).
function run(sim, draw, done, stats = {}) {
  Object.assign(stats, { ticks: 0, tickMs: 0, pairs: 0, draws: 0, drawMs: 0, maxWork: 0 });
  let stopped = false;
  const frame = () => {
    if (stopped) return;
    const t0 = performance.now();
    while (!sim.done() && performance.now() - t0 < frameBudget) { sim.tick(); stats.ticks++; }
    const t1 = performance.now();
    draw();
    const t2 = performance.now();
    stats.tickMs += t1 - t0; stats.pairs = sim.pairs; stats.draws++; stats.drawMs += t2 - t1;
    stats.maxWork = Math.max(stats.maxWork, t2 - t0);
    if (!sim.done()) requestAnimationFrame(frame);
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
    g = await api("GET", "/v1/graph", { query: { ...scope, entity, hops: entity ? hops : "", limit: 2000 } });
  } catch (err) {
    if (err.status === 503) {
      main.replaceChildren(h("h1", {}, "Entity graph"), h("p", {}, "This server keeps no entity graph."));
      return;
    }
    throw err;
  }
  const byId = new Map(g.nodes.map((n, i) => [n.id, i]));
  const nodes = g.nodes;
  const edges = g.edges.filter((e) => byId.has(e.source) && byId.has(e.target)).map((e) => ({ ...e, s: byId.get(e.source), t: byId.get(e.target) }));
  const degree = new Int32Array(nodes.length);
  for (const e of edges) { degree[e.s]++; degree[e.t]++; }
  const link = (id) => "#/graph" + scopeHash(scope) + (scopeHash(scope) ? "&" : "?") + "entity=" + encodeURIComponent(id) + "&hops=" + hops;

  const canvas = h("canvas", {
    id: "graph-canvas", tabindex: "0", role: "img", "aria-describedby": "graph-help",
    "aria-label": `Entity graph: ${nodes.length} entities, ${edges.length} relations; the table below lists them`,
  });
  const help = h("p", { class: "muted", id: "graph-help" },
    "Wheel or + and − to zoom, drag or the arrow keys to pan, 0 to fit; click an entity to select it, Enter or a double click to centre the graph on it.");
  const tip = h("p", { class: "muted", id: "graph-tip", "aria-live": "polite" }, "");
  const selected = h("div", { id: "graph-selected", class: "card", "aria-live": "polite", hidden: true });
  const W = Math.min(1160, Math.max(300, main.clientWidth || 900)), H = Math.round(W * (W < 600 ? 0.9 : 0.6));
  const dpr = window.devicePixelRatio || 1;
  canvas.width = W * dpr; canvas.height = H * dpr;
  canvas.style.width = W + "px"; canvas.style.height = H + "px";

  const sim = new Simulation(nodes.length, Int32Array.from(edges, (e) => e.s), Int32Array.from(edges, (e) => e.t));
  const radius = new Float32Array(nodes.length);
  // radius is a node's size in screen pixels at scale 1; zoom changes it
  // only by its square root, so small graphs fitted large do not balloon.
  nodes.forEach((p, i) => { radius[i] = 2.5 + Math.min(5, Math.log2(1 + (p.mentions || 0) + degree[i])); });
  const worldRadius = (i) => (radius[i] * Math.min(1.6, Math.max(0.5, Math.sqrt(view.scale)))) / view.scale;
  // view maps world to screen: screen = world * scale + (tx, ty).
  const view = { scale: 1, tx: 0, ty: 0 };
  // fitView frames the nodes' bounding box; until the user zooms or pans,
  // every drawing of the running layout does.
  let userMoved = false;
  const fitView = () => {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < nodes.length; i++) {
      x0 = Math.min(x0, sim.x[i]); x1 = Math.max(x1, sim.x[i]); y0 = Math.min(y0, sim.y[i]); y1 = Math.max(y1, sim.y[i]);
    }
    if (!nodes.length) { x0 = y0 = 0; x1 = y1 = 1; }
    const pad = 24, w = Math.max(x1 - x0, sim.k), hh = Math.max(y1 - y0, sim.k);
    view.scale = Math.min(4, Math.min((W - 2 * pad) / w, (H - 2 * pad) / hh));
    view.tx = W / 2 - ((x0 + x1) / 2) * view.scale; view.ty = H / 2 - ((y0 + y1) / 2) * view.scale;
  };
  fitView();
  let sel = entity && byId.has(entity) ? byId.get(entity) : -1, hover = -1;
  const maxW = edges.reduce((m, e) => Math.max(m, e.weight), 1e-9);

  const c2 = canvas.getContext("2d");
  const draw = () => {
    const { scale, tx, ty } = view;
    c2.setTransform(dpr, 0, 0, dpr, 0, 0);
    c2.clearRect(0, 0, W, H);
    c2.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * tx, dpr * ty);
    // Edges in three weight bands, one path each.
    for (let band = 0; band < 3; band++) {
      c2.beginPath();
      for (const e of edges) {
        if (Math.min(2, Math.floor((3 * e.weight) / maxW)) !== band) continue;
        c2.moveTo(sim.x[e.s], sim.y[e.s]); c2.lineTo(sim.x[e.t], sim.y[e.t]);
      }
      c2.lineWidth = (0.6 + band * 0.8) / Math.max(scale, 0.05) * Math.min(1, scale * 2);
      c2.strokeStyle = `rgba(80,90,110,${0.25 + band * 0.15})`;
      c2.stroke();
    }
    c2.beginPath();
    for (let i = 0; i < nodes.length; i++) {
      const r = worldRadius(i);
      c2.moveTo(sim.x[i] + r, sim.y[i]);
      c2.arc(sim.x[i], sim.y[i], r, 0, 6.2832);
    }
    c2.fillStyle = "#1651b5";
    c2.fill();
    for (const [i, colour] of [[hover, "#0b7a3b"], [sel, "#b4590b"]]) {
      if (i < 0) continue;
      c2.beginPath(); c2.arc(sim.x[i], sim.y[i], worldRadius(i) + 2 / scale, 0, 6.2832);
      c2.fillStyle = colour; c2.fill();
    }
    // Names when they fit: few nodes, or zoomed in (only those on screen).
    c2.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (nodes.length <= 150 || scale * sim.k >= 40) {
      c2.fillStyle = "#1b1d21"; c2.font = "12px system-ui, sans-serif";
      let shown = 0;
      for (let i = 0; i < nodes.length && shown < 400; i++) {
        const sx = sim.x[i] * scale + tx, sy = sim.y[i] * scale + ty;
        if (sx < -50 || sy < 0 || sx > W || sy > H + 12) continue;
        c2.fillText(nodes[i].name, sx + 6, sy - 6); shown++;
      }
    }
    if (sel >= 0) {
      const sx = sim.x[sel] * scale + tx, sy = sim.y[sel] * scale + ty;
      c2.font = "bold 13px system-ui, sans-serif"; c2.fillStyle = "#7a3a05";
      c2.fillText(nodes[sel].name, sx + 8, sy - 8);
    }
  };
  // One drawing per animation frame at most, whatever asks for it.
  let drawQueued = false;
  const redraw = () => { if (!drawQueued) { drawQueued = true; requestAnimationFrame(() => { drawQueued = false; draw(); }); } };

  // The layout's work, for the browser test (canvas.graphStats).
  canvas.graphStats = {};
  const stop = run(sim, () => { if (!userMoved) fitView(); draw(); }, () => { sim.grid.build(sim.x, sim.y, nodes.length, 1.5 * sim.k); canvas.dataset.settled = "1"; }, canvas.graphStats);

  // nearest returns the node under a screen point (within its radius plus
  // a few pixels), looked up through the simulation's grid, or -1.
  const nearest = (sx, sy) => {
    const wx = (sx - view.tx) / view.scale, wy = (sy - view.ty) / view.scale, slack = 6 / view.scale;
    let best = -1, bd = Infinity;
    sim.grid.near(wx, wy, (j) => {
      const d = Math.hypot(sim.x[j] - wx, sim.y[j] - wy);
      if (d <= worldRadius(j) + slack && d < bd) { bd = d; best = j; }
    });
    return best;
  };
  const at = (ev) => { const r = canvas.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
  const describe = (i) => `${nodes[i].name}${nodes[i].type ? " (" + nodes[i].type + ")" : ""} · ${nodes[i].mentions} mentions · ${degree[i]} relations`;
  const select = (i) => {
    sel = i;
    if (i < 0) { selected.hidden = true; redraw(); return; }
    const near = edges.filter((e) => e.s === i || e.t === i).slice(0, 8)
      .map((e) => `${e.label} ${nodes[e.s === i ? e.t : e.s].name}`).join("; ");
    selected.replaceChildren(h("strong", {}, describe(i)), near ? h("p", { class: "muted" }, near) : null,
      h("a", { href: link(nodes[i].id) }, `Centre the graph on ${nodes[i].name}`));
    selected.hidden = false;
    redraw();
  };
  // A hook for the browser test: the screen position and name of node i.
  canvas.graphScreenOf = (i) => [sim.x[i] * view.scale + view.tx, sim.y[i] * view.scale + view.ty, nodes[i].name];

  const zoom = (f, sx = W / 2, sy = H / 2) => {
    const s = Math.min(40, Math.max(0.05, view.scale * f));
    view.tx = sx - ((sx - view.tx) * s) / view.scale; view.ty = sy - ((sy - view.ty) * s) / view.scale;
    view.scale = s; userMoved = true;
    redraw();
  };
  canvas.addEventListener("wheel", (ev) => { ev.preventDefault(); const [x, y] = at(ev); zoom(Math.exp(-ev.deltaY * 0.0015), x, y); }, { passive: false });
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, tx: view.tx, ty: view.ty, moved: false }; canvas.setPointerCapture(ev.pointerId); });
  canvas.addEventListener("pointermove", (ev) => {
    if (drag) {
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) { view.tx = drag.tx + dx; view.ty = drag.ty + dy; userMoved = true; redraw(); }
      return;
    }
    const [x, y] = at(ev), i = nearest(x, y);
    if (i !== hover) { hover = i; tip.textContent = i >= 0 ? describe(i) : ""; redraw(); }
  });
  canvas.addEventListener("pointerup", () => { setTimeout(() => { drag = null; }); });
  canvas.addEventListener("click", (ev) => {
    if (drag && drag.moved) return;
    const [x, y] = at(ev);
    select(nearest(x, y));
  });
  canvas.addEventListener("dblclick", (ev) => { const [x, y] = at(ev), i = nearest(x, y); if (i >= 0) { stop(); window.location.hash = link(nodes[i].id); } });
  canvas.addEventListener("keydown", (ev) => {
    const pan = 60;
    const keys = {
      "+": () => zoom(1.25), "=": () => zoom(1.25), "-": () => zoom(0.8), "0": () => { fitView(); userMoved = false; redraw(); },
      ArrowLeft: () => { view.tx += pan; userMoved = true; redraw(); }, ArrowRight: () => { view.tx -= pan; userMoved = true; redraw(); },
      ArrowUp: () => { view.ty += pan; userMoved = true; redraw(); }, ArrowDown: () => { view.ty -= pan; userMoved = true; redraw(); },
      Enter: () => { if (sel >= 0) { stop(); window.location.hash = link(nodes[sel].id); } },
      Escape: () => select(-1),
    };
    const fn = keys[ev.key];
    if (fn) { ev.preventDefault(); fn(); }
  });

  const tbody = h("tbody", {});
  const pageNote = h("span", { class: "muted", id: "graph-page" });
  const prev = h("button", { type: "button", class: "secondary", id: "graph-prev" }, "Previous relations");
  const next = h("button", { type: "button", class: "secondary", id: "graph-next" }, "Next relations");
  let page = 0;
  const showPage = () => {
    const rows = edges.slice(page * pageSize, (page + 1) * pageSize).map((e) => h("tr", {},
      h("td", {}, h("a", { href: link(nodes[e.s].id) }, nodes[e.s].name)), h("td", {}, e.label),
      h("td", {}, h("a", { href: link(nodes[e.t].id) }, nodes[e.t].name)), h("td", { class: "num" }, e.weight.toFixed(2))));
    tbody.replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colSpan: 4, class: "muted" }, "No relations in this scope."))]));
    pageNote.textContent = edges.length ? `Relations ${page * pageSize + 1}–${Math.min(edges.length, (page + 1) * pageSize)} of ${edges.length}` : "";
    prev.disabled = page === 0;
    next.disabled = (page + 1) * pageSize >= edges.length;
  };
  prev.addEventListener("click", () => { page--; showPage(); });
  next.addEventListener("click", () => { page++; showPage(); });
  showPage();

  const center = entity && byId.has(entity) ? nodes[byId.get(entity)].name : "";
  main.replaceChildren(
    h("h1", {}, "Entity graph · " + scopeLabel(scope) + (center ? ` · around ${center}` : "")),
    h("p", { class: "muted", id: "graph-summary" }, `${nodes.length} entities, ${edges.length} relations.`,
      entity ? [" ", h("a", { href: "#/graph" + scopeHash(scope) }, "Whole scope"), " · ", h("a", { href: link(entity).replace(/hops=\d/, "hops=" + (hops === "1" ? "2" : "1")) }, hops === "1" ? "Two hops" : "One hop")] : null),
    help,
    h("div", { class: "graph-wrap" }, canvas), tip, selected,
    h("h2", { id: "graph-relations" }, "Relations"),
    h("div", { class: "table-wrap" }, h("table", { id: "graph-edges", "aria-labelledby": "graph-relations" },
      h("thead", {}, h("tr", {}, ["From", "Relation", "To", "Weight"].map((t) => h("th", { scope: "col" }, t)))),
      tbody)),
    edges.length > pageSize ? h("div", { class: "pager" }, prev, next, pageNote) : pageNote);
  if (sel >= 0) select(sel);
}
