// An install: its components and their status, outputs (sensitive ones
// masked: the API never sends their values), inputs, operations with their
// steps, the buttons the API allows, each confirmed first, and the app's
// actions with their runs (actions.js), and its health (health.js).
import * as api from "./api.js";
import { h, badge, when, duration, confirm, errorBox, opTitle } from "./ui.js";
import { componentsView } from "./components.js";
import { stepsTable, jobsOf } from "./steps.js";
import { loadActions, actionsPanel } from "./actions.js";
import { healthFact, healthView } from "./health.js";

async function load([id], state) {
  state.open ||= new Set();
  const base = `/installs/${id}`;
  const [inst, comps, outputs, ops, drift, windows, bundles, acts, health] = await Promise.all([
    api.get(base), api.get(`${base}/components`), api.get(`${base}/outputs`), api.get(`${base}/operations?limit=10`),
    api.get(`${base}/drift`), api.get(`${base}/maintenance-windows`), api.get(`${base}/support-bundles?limit=10`),
    loadActions(base, state.actions ||= {}), api.get(`${base}/health`)]);
  const [app, runner] = await Promise.all([
    api.get(`/apps/${inst.data.app_id}`),
    inst.data.runner ? api.get(`/runners/${inst.data.runner.id}`) : Promise.resolve({ data: null, changed: false })]);
  const list = ops.data.operations;
  // The latest operation is read whole (its steps are the components'
  // status), and so is each one the viewer opened.
  const wanted = list.filter((op, i) => i === 0 || state.open.has(op.id));
  const full = await Promise.all(wanted.map((op) => api.get(`${base}/operations/${op.id}`)));
  const detail = new Map(full.map((f) => [f.data.id, f.data]));
  const changed = [inst, comps, outputs, ops, drift, windows, bundles, acts, health, app, runner, ...full].some((r) => r.changed);
  return { changed, data: { inst: inst.data, app: app.data, runner: runner.data, components: comps.data.components,
    outputs: outputs.data.outputs, ops: list.map((op) => detail.get(op.id) || op), drift: drift.data.components,
    windows: windows.data, bundles: bundles.data.support_bundles, actions: acts.data, health: health.data } };
}

function render(d, _params, state, reload) {
  const { inst } = d;
  // The last action's outcome is kept in state: the page re-renders as the
  // operation it started moves, and the message must outlive that.
  const message = h("div", { id: "action-message", "aria-live": "polite" }, state.said || null);
  const act = starter(state, message, reload);
  const base = `/installs/${inst.id}`;
  return h("section", { class: "install" },
    h("p", { class: "crumbs" }, h("a", { href: "#/installs" }, "Installs"), " / ", inst.name),
    h("h1", {}, inst.name, " ", badge(inst.status)),
    h("dl", { class: "facts" },
      fact("App", d.app.name),
      fact("Config version", inst.config_version ? `v${inst.config_version}` : "none deployed"),
      fact("Approval mode", inst.approval_mode),
      fact("Health", healthFact(d.health.health)),
      fact("Runner", d.runner ? [badge(d.runner.status), " ", d.runner.last_seen_at ? ["seen ", when(d.runner.last_seen_at)] : "never seen"] : "none"),
      fact("Maintenance windows", windowsView(d.windows)),
      fact("Created", when(inst.created_at))),
    actions(inst, act),
    message,
    h("h2", {}, "Components"),
    componentsView(d, (title, text, path) => act(title, text, "POST", base + path)),
    h("h2", {}, "Health"),
    healthView(d.health),
    h("h2", {}, "Outputs"),
    outputsView(d.outputs),
    h("h2", {}, "Inputs"),
    inputsView(inst.inputs),
    h("h2", {}, "Operations"),
    operations(d.ops, state, reload),
    h("h2", {}, "Actions"),
    actionsPanel(d.actions, base, state.actions, reload),
    h("h2", {}, "Support bundles"),
    bundlesView(inst, d.bundles, act));
}

// bundlesView lists the install's support bundles, each with its download link once collected, and
// the button that asks the runner for a new one.
function bundlesView(inst, bundles, run) {
  const collect = h("button", { type: "button", id: "support-bundle", onclick: run("Support bundle",
    `Have ${inst.name}'s runner collect a support bundle (logs, job history, terraform resources, helm releases, cluster events), redacted before it leaves the account?`,
    "POST", `/installs/${inst.id}/support-bundles`) }, "Collect a support bundle");
  if (!bundles.length) return h("div", { class: "bundles" }, collect, h("p", { class: "muted" }, "No support bundles (they are kept 7 days)."));
  return h("div", { class: "bundles" }, collect, h("table", {},
    h("thead", {}, h("tr", {}, ...["Bundle", "Status", "Size", "Created", "Expires", ""].map((c) => h("th", {}, c)))),
    h("tbody", {}, ...bundles.map((b) => h("tr", { "data-bundle": b.id },
      h("td", { class: "mono", "data-label": "Bundle" }, b.id),
      h("td", { "data-label": "Status" }, badge(b.status), b.error ? h("span", { class: "error" }, " ", b.error) : null),
      h("td", { "data-label": "Size" }, b.size_bytes ? `${Math.ceil(b.size_bytes / 1024)} KiB` : "-"),
      h("td", { "data-label": "Created" }, when(b.created_at)),
      h("td", { "data-label": "Expires" }, when(b.expires_at)),
      h("td", {}, b.download_url ? h("a", { href: b.download_url, download: `support-bundle-${b.id}.tar.gz`, class: "download" }, "Download") : null))))));
}

function fact(term, value) {
  return [h("dt", {}, term), h("dd", {}, value)];
}

// starter makes a button's handler: it asks, calls the API, and says what
// happened in message (and state.said, for the next render).
function starter(state, message, reload) {
  return (title, text, method, path, body) => async () => {
    if (!(await confirm(title, text))) return;
    try {
      await api.send(method, path, body);
      state.said = h("p", { class: "ok" }, `${title}: started.`);
    } catch (err) {
      state.said = errorBox(err);
    }
    message.replaceChildren(state.said);
    reload();
  };
}

// windowsView: the install's maintenance windows and the next opening, in
// the viewer's zone.
function windowsView(w) {
  if (!w.windows.length) return h("span", { class: "muted" }, "none: the platform's own work runs at once");
  const list = w.windows.map((x) => `${x.days.join(", ")} ${x.start} for ${x.duration} (${x.time_zone})`).join("; ");
  const next = w.next ? (w.next.open ? ["open now, until ", new Date(w.next.end).toLocaleString()]
    : ["next opens ", new Date(w.next.start).toLocaleString()]) : [];
  return h("span", { id: "windows" }, list, next.length ? h("span", { class: "muted" }, " · ", ...next) : null);
}

// actions are the install's buttons; each asks before it calls the API.
function actions(inst, run) {
  const base = `/installs/${inst.id}`;
  const mode = h("select", { id: "approval-mode", "aria-label": "Approval mode" },
    ...["approve-all", "prompt"].map((m) => h("option", { value: m, selected: inst.approval_mode === m }, m)));
  const setMode = h("button", { type: "button", id: "set-approval-mode" }, "Set approval mode");
  setMode.addEventListener("click", () => run("Set approval mode",
    `Set ${inst.name}'s approval mode to ${mode.value}? (prompt: each plan waits for approval)`,
    "PUT", `${base}/approval-mode`, { approval_mode: mode.value })());
  return h("div", { class: "actions" },
    h("button", { type: "button", id: "provision", onclick: run("Provision",
      `Provision ${inst.name}: apply its sandbox and every component of the app's latest config?`, "POST", `${base}/provision`) }, "Provision"),
    h("button", { type: "button", id: "deprovision", class: "danger", onclick: run("Deprovision",
      `Deprovision ${inst.name}: destroy every component and then its sandbox?`, "POST", `${base}/deprovision`) }, "Deprovision"),
    h("span", { class: "group" }, mode, setMode));
}

function outputsView(outputs) {
  const names = Object.keys(outputs).sort();
  if (names.length === 0) return h("p", { class: "muted" }, "No outputs yet: they appear once the sandbox or a component is applied.");
  return h("div", { class: "outputs" }, ...names.map((name) => h("section", { class: "card", "data-outputs": name },
    h("h3", {}, name),
    h("dl", {}, ...Object.keys(outputs[name]).sort().map((k) => {
      const o = outputs[name][k];
      return [h("dt", {}, k), h("dd", { class: o.sensitive ? "masked" : "mono" },
        o.sensitive ? "•••••• sensitive" : JSON.stringify(o.value))];
    })))));
}

function inputsView(inputs) {
  if (!inputs || inputs.length === 0) return h("p", { class: "muted" }, "No inputs.");
  return h("dl", { class: "inputs" }, ...inputs.map((i) => [h("dt", {}, i.name),
    h("dd", { class: i.sensitive ? "masked" : "mono" }, i.sensitive ? "•••••• sensitive" : i.value)]));
}

function operations(ops, state, reload) {
  if (ops.length === 0) return h("p", { class: "muted" }, "No operations yet: Provision starts the first.");
  return h("div", { class: "ops" }, ...ops.map((op, i) => {
    const d = h("details", { "data-key": op.id, "data-operation": op.kind, open: i === 0 || state.open.has(op.id) },
      h("summary", {}, opTitle(op), " ", when(op.created_at),
        h("span", { class: "muted" }, " ", duration(op.created_at, op.finished_at)), " ",
        h("a", { href: `#/installs/${op.install_id}/operations/${op.id}`, class: "op-link" }, "Open the operation")),
      op.error ? h("p", { class: "error" }, op.error) : null,
      op.steps ? steps(op.steps) : h("p", { class: "muted" }, "Loading steps…"));
    d.addEventListener("toggle", () => {
      if (!d.open || state.open.has(op.id)) return;
      state.open.add(op.id);
      if (!op.steps) reload();
    });
    return d;
  }));
}

function steps(list) {
  return stepsTable(list, (s) => h("td", { "data-label": "Jobs", class: "mono" }, jobsOf(s).map((j) => j.id).join(" ")));
}

export const installView = { load, render };
