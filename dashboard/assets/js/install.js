// An install: its components and their status, outputs (sensitive ones
// masked: the API never sends their values), inputs, operations with their
// steps, and the actions the API allows, each confirmed first.
import * as api from "./api.js";
import { h, badge, when, duration, confirm, errorBox } from "./ui.js";

async function load([id], state) {
  state.open ||= new Set();
  const base = `/installs/${id}`;
  const [inst, comps, outputs, ops] = await Promise.all([
    api.get(base), api.get(`${base}/components`), api.get(`${base}/outputs`), api.get(`${base}/operations?limit=10`)]);
  const [app, runner] = await Promise.all([
    api.get(`/apps/${inst.data.app_id}`),
    inst.data.runner ? api.get(`/runners/${inst.data.runner.id}`) : Promise.resolve({ data: null, changed: false })]);
  const list = ops.data.operations;
  // The latest operation is read whole (its steps are the components'
  // status), and so is each one the viewer opened.
  const wanted = list.filter((op, i) => i === 0 || state.open.has(op.id));
  const full = await Promise.all(wanted.map((op) => api.get(`${base}/operations/${op.id}`)));
  const detail = new Map(full.map((f) => [f.data.id, f.data]));
  const changed = [inst, comps, outputs, ops, app, runner, ...full].some((r) => r.changed);
  return { changed, data: { inst: inst.data, app: app.data, runner: runner.data, components: comps.data.components,
    outputs: outputs.data.outputs, ops: list.map((op) => detail.get(op.id) || op) } };
}

function render(d, _params, state, reload) {
  const { inst } = d;
  const message = h("div", { id: "action-message", "aria-live": "polite" });
  return h("section", { class: "install" },
    h("p", { class: "crumbs" }, h("a", { href: "#/installs" }, "Installs"), " / ", inst.name),
    h("h1", {}, inst.name, " ", badge(inst.status)),
    h("dl", { class: "facts" },
      fact("App", d.app.name),
      fact("Config version", inst.config_version ? `v${inst.config_version}` : "none deployed"),
      fact("Approval mode", inst.approval_mode),
      fact("Runner", d.runner ? [badge(d.runner.status), " ", d.runner.last_seen_at ? ["seen ", when(d.runner.last_seen_at)] : "never seen"] : "none"),
      fact("Created", when(inst.created_at))),
    actions(inst, message, reload),
    message,
    h("h2", {}, "Components"),
    components(d),
    h("h2", {}, "Outputs"),
    outputsView(d.outputs),
    h("h2", {}, "Inputs"),
    inputsView(inst.inputs),
    h("h2", {}, "Operations"),
    operations(d.ops, state, reload));
}

function fact(term, value) {
  return [h("dt", {}, term), h("dd", {}, value)];
}

// actions are the install's buttons; each asks before it calls the API.
function actions(inst, message, reload) {
  const run = (title, text, method, path, body) => async () => {
    if (!(await confirm(title, text))) return;
    try {
      await api.send(method, path, body);
      message.replaceChildren(h("p", { class: "ok" }, `${title}: started.`));
    } catch (err) {
      message.replaceChildren(errorBox(err));
    }
    reload();
  };
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

// components: each step of the latest operation, with the build each
// component runs.
function components({ components: installed, ops }) {
  const latest = ops[0];
  const steps = new Map(((latest && latest.steps) || []).map((s) => [s.name, s]));
  const builds = new Map(installed.map((c) => [c.component, c]));
  const names = [...new Set([...steps.keys(), ...builds.keys()])];
  if (names.length === 0) return h("p", { class: "muted" }, "Nothing deployed yet: provision the install to create its components.");
  return h("div", { class: "scroll" }, h("table", { class: "components" },
    h("thead", {}, h("tr", {}, ...["Component", "Status", "Build", "Config"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...names.map((name) => {
      const s = steps.get(name), b = builds.get(name);
      return h("tr", { "data-component": name },
        h("th", { scope: "row" }, name),
        h("td", { "data-label": "Status" }, s ? badge(s.status) : badge("deployed")),
        h("td", { "data-label": "Build", class: "mono" }, b ? b.digest.slice(0, 19) : "—"),
        h("td", { "data-label": "Config" }, b && b.config_version ? `v${b.config_version}` : "—"));
    }))));
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
      h("summary", {}, op.kind.replaceAll("_", " "), " ", badge(op.status), " ", when(op.created_at),
        h("span", { class: "muted" }, " ", duration(op.created_at, op.finished_at))),
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
  return h("div", { class: "scroll" }, h("table", { class: "steps" },
    h("thead", {}, h("tr", {}, ...["Step", "Status", "Started", "Took", "Changes", "Jobs"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...list.map((s) => h("tr", { "data-step": s.name },
      h("th", { scope: "row" }, s.name, s.destroy ? " (destroy)" : ""),
      h("td", { "data-label": "Status" }, badge(s.status), s.error ? h("div", { class: "error" }, s.error) : null),
      h("td", { "data-label": "Started" }, when(s.started_at)),
      h("td", { "data-label": "Took" }, duration(s.started_at, s.finished_at)),
      h("td", { "data-label": "Changes", class: "mono" }, s.has_changes === undefined ? "—" : `+${s.add} ~${s.change} -${s.destroy_count}`),
      h("td", { "data-label": "Jobs", class: "mono" }, [...new Set([s.sync_job_id, s.plan_job_id, s.apply_job_id].filter(Boolean))].join(" ")))))));
}

export const installView = { load, render };
