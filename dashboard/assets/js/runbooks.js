// An install's runbooks (the app config's ordered steps: actions, deploys,
// a reprovision, approval gates): each with its steps, a Run form of its
// typed inputs, and its recent runs, each linked to its page
// (runbookrun.js).
import * as api from "./api.js";
import { h, badge, when, duration, refusal } from "./ui.js";
import { field } from "./actions.js";

// loadRunbooks reads the runbooks and each one's last runs. An install with
// no config version yet has none (409): that is shown, not thrown. state
// keeps the forms and messages across polls.
export async function loadRunbooks(base, state) {
  state.forms ||= new Map();
  state.said ||= new Map();
  let list;
  try {
    list = await api.get(`${base}/runbooks`);
  } catch (err) {
    if (err.status !== 409) throw err;
    const changed = state.dirty || state.none !== err.message;
    state.none = err.message;
    state.dirty = false;
    return { changed, data: { none: err.message, runbooks: [] } };
  }
  const books = list.data.runbooks;
  const runs = await Promise.all(books.map((b) => api.get(`${base}/runbooks/${encodeURIComponent(b.name)}/runs?limit=5`)));
  const changed = state.dirty || state.none !== undefined || [list, ...runs].some((r) => r.changed);
  state.none = undefined;
  state.dirty = false;
  return { changed, data: { runbooks: books.map((b, i) => ({ ...b, runs: runs[i].data.runs })) } };
}

export function runbooksPanel(d, base, state, reload) {
  if (d.none) return h("p", { class: "muted", id: "runbooks-none" }, d.none);
  if (!d.runbooks.length) return h("p", { class: "muted", id: "runbooks-none" }, "The app's config has no runbooks (runbooks/*.toml).");
  return h("div", { id: "runbooks" }, ...d.runbooks.map((b) => runbookCard(b, base, state, reload)));
}

function runbookCard(b, base, state, reload) {
  const said = state.said.get(b.name) || h("div", { class: "action-message", "aria-live": "polite" });
  state.said.set(b.name, said);
  const run = h("button", { type: "button", id: `runbook-run-${b.name}`, "data-run-runbook": b.name,
    onclick: () => { toggleForm(b, base, state, reload); reload(); } }, "Run");
  return h("article", { class: "card runbook", "data-runbook": b.name },
    h("h3", {}, b.name, " ", run),
    b.description ? h("p", {}, b.description) : null,
    h("p", { class: "muted" }, "Steps: ", b.steps.map((s) => `${s.name} (${s.kind})`).join(" → ")),
    state.forms.get(b.name) || null,
    said,
    runsList(b.runs, base));
}

// toggleForm opens the runbook's Run form (kept in state: what was typed
// outlives the poll's re-renders), or closes it.
function toggleForm(b, base, state, reload) {
  if (state.forms.has(b.name)) {
    state.forms.delete(b.name);
    state.dirty = true;
    return;
  }
  const fields = b.inputs.map(field);
  const form = h("form", { class: "run-form", "data-runbook-form": b.name, "aria-label": `Run ${b.name}` },
    fields.length ? fields.map((f) => f.node) : h("p", { class: "muted" }, "This runbook takes no inputs."),
    h("div", { class: "buttons" }, h("button", { type: "submit", id: `runbook-submit-${b.name}` }, `Run ${b.name}`)));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    start(b, fields, base, state, reload);
  });
  state.forms.set(b.name, form);
  state.dirty = true;
}

// start posts the run and opens its page; a refusal (a bad input, the
// runner's policy, a viewer's missing permission) shows the API's message
// and marks the field it names.
async function start(b, fields, base, state, reload) {
  const inputs = {};
  for (const f of fields) {
    f.control.removeAttribute("aria-invalid");
    const v = f.value();
    if (v !== undefined) inputs[f.name] = v;
  }
  try {
    const run = await api.send("POST", `${base}/runbooks/${encodeURIComponent(b.name)}/runs`, { inputs });
    state.forms.delete(b.name);
    location.hash = `#${base}/runbook-runs/${run.id}`;
  } catch (err) {
    const named = fields.find((f) => err.field === `inputs.${f.name}`);
    if (named) named.control.setAttribute("aria-invalid", "true");
    state.said.get(b.name).replaceChildren(refusal(err));
    state.dirty = true;
    reload();
  }
}

function runsList(runs, base) {
  if (!runs.length) return h("p", { class: "muted" }, "No runs yet.");
  return h("ul", { class: "runs" }, ...runs.map((r) => h("li", { "data-runbook-run": r.id },
    badge(r.status), " ", h("a", { href: `#${base}/runbook-runs/${r.id}` }, r.id),
    r.started_by ? ` by ${r.started_by}` : "", " ", when(r.created_at),
    h("span", { class: "muted" }, " ", duration(r.created_at, r.finished_at)))));
}
