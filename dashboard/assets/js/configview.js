// A config version shown readably (components, inputs, files, its JSON)
// and the line diff of two versions' JSON.
import { h } from "./ui.js";
import { lineDiff } from "./diff.js";

// configJSON is a version's lines, without what differs in every version.
export function configLines(cfg) {
  const { version: _v, created_at: _c, created: _n, ...rest } = cfg;
  return JSON.stringify(rest, null, 2).split("\n");
}

export function configView(cfg) {
  return h("div", { class: "config", "data-config": cfg.version },
    h("h3", {}, `Version ${cfg.version}`),
    h("dl", { class: "facts" },
      [h("dt", {}, "Sandbox"), h("dd", { class: "mono" }, cfg.sandbox.source)],
      [h("dt", {}, "Deploy order"), h("dd", {}, cfg.levels.map((l) => l.join(", ")).join(" → ") || "—")]),
    h("div", { class: "scroll" }, h("table", { class: "config-components" },
      h("thead", {}, h("tr", {}, ...["Component", "Type", "Source", "Depends on", "File"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...cfg.components.map((c) => h("tr", { "data-component": c.name },
        h("th", { scope: "row" }, c.name),
        h("td", { "data-label": "Type" }, c.type),
        h("td", { "data-label": "Source", class: "mono" }, c.source || c.image || "—"),
        h("td", { "data-label": "Depends on" }, c.dependencies.join(", ") || "—"),
        h("td", { "data-label": "File", class: "mono" }, c.file)))))),
    inputs(cfg.inputs),
    h("details", { "data-key": `json-${cfg.version}` }, h("summary", {}, `Files (${cfg.files.length}) and the whole config as JSON`),
      h("ul", { class: "mono" }, ...cfg.files.map((f) => h("li", {}, f))),
      h("pre", {}, configLines(cfg).join("\n"))));
}

function inputs(list) {
  if (list.length === 0) return h("p", { class: "muted" }, "No inputs declared.");
  return h("div", { class: "scroll" }, h("table", { class: "config-inputs" },
    h("thead", {}, h("tr", {}, ...["Input", "Type", "Required", "Default", "Description"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...list.map((i) => h("tr", {},
      h("th", { scope: "row" }, i.name),
      h("td", { "data-label": "Type" }, i.type),
      h("td", { "data-label": "Required" }, i.required ? "yes" : "no"),
      h("td", { "data-label": "Default", class: i.sensitive ? "masked" : "mono" },
        i.sensitive ? "•••••• sensitive" : i.default === undefined ? "—" : JSON.stringify(i.default)),
      h("td", { "data-label": "Description" }, i.description || ""))))));
}

const CONTEXT = 3; // unchanged lines shown around a change

// diffView shows the lines that differ between two versions, with a little
// context; long unchanged runs fold into one line.
export function diffView(from, to) {
  const lines = lineDiff(configLines(from), configLines(to));
  if (!lines.some((l) => l.op !== " ")) return h("p", { class: "muted", id: "config-diff" }, `v${from.version} and v${to.version} are the same config.`);
  const near = lines.map((_, i) => lines.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some((l) => l.op !== " "));
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (near[i]) {
      const l = lines[i];
      out.push(h("div", { class: "diff-line " + ({ "+": "add", "-": "del", " ": "same" })[l.op] }, `${l.op} ${l.text}`));
      continue;
    }
    let j = i;
    while (j < lines.length && !near[j]) j++;
    out.push(h("div", { class: "diff-line fold" }, `⋯ ${j - i} unchanged lines`));
    i = j - 1;
  }
  return h("div", { class: "diff mono", id: "config-diff", "aria-label": `Changes from v${from.version} to v${to.version}` }, ...out);
}
