// The installs list: every install with its status, health, app, config
// version, runner and last operation, what needs attention first.
import * as api from "./api.js";
import { h, badge, when } from "./ui.js";

// load reads the list (each install with its last operation and drifted
// parts), the apps and the runners: three calls, whatever the installs.
async function load(_params, _state) {
  const [installs, apps, runners] = await Promise.all([api.get("/installs"), api.get("/apps"), api.get("/runners")]);
  const changed = installs.changed || apps.changed || runners.changed;
  const appName = new Map(apps.data.apps.map((a) => [a.id, a.name]));
  const runnerOf = new Map(runners.data.runners.filter((r) => r.install_id).map((r) => [r.install_id, r]));
  const rows = installs.data.installs.map((inst) => ({
    inst, app: appName.get(inst.app_id) || inst.app_id, runner: runnerOf.get(inst.id), op: inst.last_operation,
  }));
  rows.forEach((r) => { r.attention = attention(r); });
  rows.sort((a, b) => a.attention.rank - b.attention.rank || a.inst.name.localeCompare(b.inst.name));
  return { changed, data: rows };
}

// attention ranks a row: failed first, then waiting for approval, then
// runner offline, then unhealthy, then drifted, then the rest.
function attention({ inst, runner, op }) {
  if (inst.status === "failed" || (op && ["failed", "denied"].includes(op.status))) return { rank: 0, why: "failed" };
  if (op && op.waiting_approval) return { rank: 1, why: "waiting for approval" };
  if (!runner || runner.status !== "online") return { rank: 2, why: "runner offline" };
  if (inst.health?.state === "unhealthy") return { rank: 3, why: "unhealthy" };
  if (inst.drifted.length) return { rank: 4, why: "drifted" };
  return { rank: 5, why: "" };
}

function render(rows, _params, state) {
  if (rows.length === 0) {
    return h("section", { class: "card empty" },
      h("h1", {}, "No installs yet"),
      h("p", {}, "An install is one customer's copy of an app. Sync an app's config, create an install, then provision it:"),
      h("pre", {}, "outpostctl apps sync DIR --app APP\noutpostctl installs create NAME --app APP\noutpostctl provision NAME"));
  }
  const search = h("input", { id: "install-search", type: "search", placeholder: "Search installs, apps, status…",
    "aria-label": "Search installs", value: state.search || "" });
  const filter = h("select", { id: "install-filter", "aria-label": "Show" },
    ...[["all", "All installs"], ["attention", "Needs attention"], ["failed", "Failed"],
      ["waiting for approval", "Waiting for approval"], ["runner offline", "Runner offline"], ["unhealthy", "Unhealthy"], ["drifted", "Drifted"]]
      .map(([v, label]) => h("option", { value: v, selected: (state.filter || "all") === v }, label)));
  const body = h("tbody");
  const count = h("p", { class: "muted", "aria-live": "polite" });
  const fill = () => {
    state.search = search.value;
    state.filter = filter.value;
    const q = search.value.trim().toLowerCase();
    const shown = rows.filter((r) => matches(r, q, filter.value));
    body.replaceChildren(...shown.map(row));
    count.textContent = `${shown.length} of ${rows.length} installs`;
  };
  search.addEventListener("input", fill);
  filter.addEventListener("change", fill);
  fill();
  return h("section", {},
    h("h1", {}, "Installs"),
    h("div", { class: "toolbar" }, search, filter),
    count,
    h("div", { class: "scroll" }, h("table", { class: "installs" },
      h("thead", {}, h("tr", {}, ...["Install", "Status", "Health", "App", "Config", "Runner", "Last operation"].map((t) => h("th", { scope: "col" }, t)))),
      body)));
}

function matches(r, q, filter) {
  if (filter === "attention" && r.attention.rank > 4) return false;
  if (!["all", "attention"].includes(filter) && r.attention.why !== filter) return false;
  if (!q) return true;
  return [r.inst.name, r.app, r.inst.status, r.inst.health?.state, r.attention.why, r.op?.kind, r.op?.status]
    .some((v) => v && v.toLowerCase().includes(q));
}

function row({ inst, app, runner, op, attention }) {
  return h("tr", { "data-install": inst.name, class: attention.rank < 5 ? "attention" : "" },
    h("th", { scope: "row" }, h("a", { href: `#/installs/${inst.id}` }, inst.name),
      attention.why ? h("span", { class: "why" }, attention.why === "drifted" ? `drifted: ${inst.drifted.join(", ")}` : attention.why) : null),
    h("td", { "data-label": "Status" }, badge(inst.status)),
    h("td", { "data-label": "Health", title: healthWhy(inst.health) }, badge(inst.health?.state)),
    h("td", { "data-label": "App" }, app),
    h("td", { "data-label": "Config" }, inst.config_version ? `v${inst.config_version}` : h("span", { class: "muted" }, "none deployed")),
    h("td", { "data-label": "Runner" }, badge(runner ? runner.status : "offline"), " ",
      runner && runner.last_seen_at ? h("span", { class: "muted" }, "seen ", when(runner.last_seen_at)) : h("span", { class: "muted" }, "never seen")),
    h("td", { "data-label": "Last operation" }, op ? [op.kind.replaceAll("_", " "), " ", badge(op.status), " ", when(op.created_at)]
      : h("span", { class: "muted" }, "none")));
}

// healthWhy says what decided an install's health, for the cell's title.
function healthWhy(hs) {
  return hs && hs.component ? [hs.component, hs.object, hs.condition].filter(Boolean).join(": ") : "";
}

export const installsView = { load, render };
