// An install's actions (the app config's scripts run on the install's
// runner): each with its description and triggers, a Run form of its typed
// inputs for a manual one (sensitive ones as password fields), and its
// recent runs, each opened to its steps (status, outputs with sensitive ones
// masked: the API never sends them) and a step's job log, followed live.
import * as api from "./api.js";
import { h, badge, when, duration, errorBox, refusal } from "./ui.js";
import { LogView } from "./logs.js";
import { loadWithRuns, toggleRunForm, postRun } from "./runnable.js";

const SENSITIVE = "(sensitive)"; // the API's mask of a sensitive input or output

// loadActions reads the actions, each one's recent runs and the runs the
// viewer opened (or started here). An install with no config version yet
// has no actions (409): that is shown, not thrown. state is the panel's own
// (forms, messages, the log), kept across polls; dirty asks for a re-render
// after a change made on the page.
export async function loadActions(base, state) {
  state.runsOpen ||= new Set();
  state.logPanel ||= h("div", { class: "log-panel" });
  return loadWithRuns(base, "actions", state,
    (runs) => Promise.all(runs.filter((r) => state.runsOpen.has(r.id)).map((r) => api.get(`${base}/action-runs/${r.id}`))));
}

// actionsPanel is the actions, then the log panel of the step chosen.
export function actionsPanel(d, base, state, reload) {
  requestAnimationFrame(() => state.log?.attached());
  if (d.none) return h("p", { class: "muted", id: "actions-none" }, d.none);
  if (!d.actions.length) return h("p", { class: "muted", id: "actions-none" }, "The app's config has no actions (actions/*.toml).");
  return h("div", { id: "actions" }, ...d.actions.map((a) => actionCard(a, base, state, reload)), state.logPanel);
}

function actionCard(a, base, state, reload) {
  const manual = a.triggers.some((t) => t.type === "manual");
  const said = state.said.get(a.name) || h("div", { class: "action-message", "aria-live": "polite" });
  state.said.set(a.name, said);
  const run = h("button", { type: "button", id: `run-${a.name}`, "data-run-action": a.name,
    onclick: () => {
      toggleRunForm(a, "action", { form: "data-form", submit: "run-submit" }, state, (fields) => start(a, fields, base, state, reload));
      reload();
    } }, "Run");
  return h("article", { class: "card app-action", "data-action": a.name },
    h("h3", {}, a.name, " ", manual ? run : null),
    a.description ? h("p", {}, a.description) : null,
    h("p", { class: "muted" }, "Triggers: ", a.triggers.map(trigger).join("; ") || "none", ` · ${a.steps.length} step(s): ${a.steps.join(", ")}`),
    state.forms.get(a.name) || null,
    said,
    runsView(a.runs, state, reload));
}

// trigger says what starts an action, in words.
function trigger(t) {
  if (t.type === "cron") return `cron ${t.schedule}`;
  if (t.type === "before" || t.type === "after") {
    return [t.type, t.operation.replaceAll("_", " "), t.component, t.when ? `(on ${t.when})` : null].filter(Boolean).join(" ");
  }
  return t.type;
}

// start posts the run; a refusal (a bad input, the runner's policy) shows
// the API's message and marks the field it names.
async function start(a, fields, base, state, reload) {
  const said = state.said.get(a.name);
  try {
    const run = await postRun(`${base}/actions/${encodeURIComponent(a.name)}/runs`, fields);
    state.runsOpen.add(run.id);
    state.forms.delete(a.name);
    said.replaceChildren(h("p", { class: "ok" }, `Run ${run.id} of ${a.name} started.`));
  } catch (err) {
    said.replaceChildren(refusal(err));
  }
  state.dirty = true;
  reload();
}

function runsView(runs, state, reload) {
  if (!runs.length) return h("p", { class: "muted" }, "No runs yet.");
  return h("div", { class: "runs" }, ...runs.map((r) => {
    const d = h("details", { "data-key": `run-${r.id}`, "data-run": r.id, open: state.runsOpen.has(r.id) },
      h("summary", {}, badge(r.status), " ", r.trigger, r.started_by ? ` by ${r.started_by}` : "", " ", when(r.created_at),
        h("span", { class: "muted" }, " ", duration(r.created_at, r.finished_at), " ", h("span", { class: "mono" }, r.id))),
      r.error ? h("p", { class: "error" }, r.error) : null,
      Object.keys(r.inputs).length ? h("dl", { class: "inputs" }, ...pairs(r.inputs)) : null,
      r.steps ? runSteps(r, state) : h("p", { class: "muted" }, "Loading steps…"));
    d.addEventListener("toggle", () => {
      if (!d.open || state.runsOpen.has(r.id)) return;
      state.runsOpen.add(r.id);
      state.dirty = true;
      reload();
    });
    return d;
  }));
}

// pairs are a name/value list's dt and dd, sensitive values masked.
export function pairs(values) {
  return Object.keys(values).sort().map((k) => [h("dt", {}, k), values[k] === SENSITIVE
    ? h("dd", { class: "masked" }, "•••••• sensitive") : h("dd", { class: "mono" }, values[k])]);
}

function runSteps(run, state) {
  return h("div", { class: "scroll" }, h("table", { class: "steps run-steps" },
    h("thead", {}, h("tr", {}, ...["Step", "Status", "Exit", "Started", "Took", "Outputs", "Log"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...run.steps.map((s) => h("tr", { "data-run-step": s.name },
      h("th", { scope: "row" }, s.name),
      h("td", { "data-label": "Status" }, badge(s.status), s.error ? h("div", { class: "error" }, s.error) : null),
      h("td", { "data-label": "Exit", class: "mono" }, s.exit_code ?? "—"),
      h("td", { "data-label": "Started" }, when(s.started_at)),
      h("td", { "data-label": "Took" }, duration(s.started_at, s.finished_at)),
      h("td", { "data-label": "Outputs", class: "outputs" }, Object.keys(s.outputs).length ? h("dl", {}, ...pairs(s.outputs)) : "—"),
      h("td", { "data-label": "Log" }, s.job_id ? logButton(run, s, state) : "—"))))));
}

function logButton(run, step, state) {
  const b = h("button", { type: "button", class: "link", id: `log-${step.job_id}`, "data-log-job": step.job_id,
    "aria-label": `Log of ${run.action}'s step ${step.name}` }, "Log");
  b.addEventListener("click", () => {
    state.log?.close();
    try {
      state.log = new LogView({ id: step.job_id, kind: `${run.action}/${step.name}` });
      state.logPanel.replaceChildren(state.log.node);
      state.log.search.focus();
    } catch (err) {
      state.logPanel.replaceChildren(errorBox(err));
    }
  });
  return b;
}
