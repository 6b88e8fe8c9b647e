// The install's components drawn as the dependency graph its operations
// run: one column per level (a step after every step it depends on), each
// node coloured by the latest operation's status of its step, drifted ones
// marked. The steps table beside it says the same in words.
import { svg, tone } from "./ui.js";

const W = 168, H = 44, GAP_X = 56, GAP_Y = 18, PAD = 8;

// levels places each step: its column is one more than its deepest
// dependency's (a dependency that is not a step of the operation is ignored).
function levels(steps) {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const level = new Map();
  const place = (s, seen) => {
    if (level.has(s.name)) return level.get(s.name);
    if (seen.has(s.name)) return 0; // a cycle cannot be: the API refuses one
    seen.add(s.name);
    const deps = (s.after || []).filter((d) => byName.has(d));
    const l = deps.length ? 1 + Math.max(...deps.map((d) => place(byName.get(d), seen))) : 0;
    level.set(s.name, l);
    return l;
  };
  steps.forEach((s) => place(s, new Set()));
  return level;
}

// graph is the SVG of steps ({name, after, status}); drifted names the
// components the drift checks found drifted.
export function graph(steps, drifted) {
  const level = levels(steps);
  const columns = [];
  for (const s of steps) (columns[level.get(s.name)] ||= []).push(s);
  const pos = new Map();
  columns.forEach((col, x) => col.forEach((s, y) =>
    pos.set(s.name, { x: PAD + x * (W + GAP_X), y: PAD + y * (H + GAP_Y) })));
  const width = PAD * 2 + columns.length * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + Math.max(...columns.map((c) => c.length)) * (H + GAP_Y) - GAP_Y;
  const edges = steps.flatMap((s) => (s.after || []).filter((d) => pos.has(d)).map((d) => edge(pos.get(d), pos.get(s.name))));
  const nodes = steps.map((s) => node(s, pos.get(s.name), drifted.has(s.name)));
  return svg("svg", { class: "graph", id: "graph", viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": `Dependency graph: ${steps.map((s) => `${s.name} ${s.status}${(s.after || []).length ? " after " + s.after.join(", ") : ""}`).join("; ")}` },
  svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto" },
    svg("path", { d: "M0,0 L8,4 L0,8 z", class: "arrowhead" }))),
  ...edges, ...nodes);
}

function edge(from, to) {
  const x1 = from.x + W, y1 = from.y + H / 2, x2 = to.x, y2 = to.y + H / 2, mx = (x1 + x2) / 2;
  return svg("path", { class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" });
}

function node(s, p, drifted) {
  const status = (s.status || "pending").replaceAll("_", " ");
  return svg("g", { class: `node ${tone(s.status)}${drifted ? " drifted" : ""}`, "data-node": s.name, transform: `translate(${p.x},${p.y})` },
    svg("title", {}, `${s.name}: ${status}${drifted ? ", drifted" : ""}`),
    svg("rect", { width: W, height: H, rx: 6 }),
    svg("text", { x: 10, y: 18, class: "name" }, s.name.length > 20 ? s.name.slice(0, 19) + "…" : s.name),
    svg("text", { x: 10, y: 35, class: "status" }, drifted ? `${status} · drifted` : status));
}
