// An install's runbooks (the app config's ordered steps: actions, deploys,
// a reprovision, approval gates): each with its steps, a Run form of its
// typed inputs, and its recent runs, each linked to its page
// (runbookrun.js).
import { h, badge, when, duration, refusal } from "./ui.js";
import { loadWithRuns, toggleRunForm, postRun } from "./runnable.js";

// loadRunbooks reads the runbooks and each one's last runs (loadWithRuns).
export async function loadRunbooks(base, state) {
  return loadWithRuns(base, "runbooks", state);
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
    onclick: () => {
      toggleRunForm(b, "runbook", { form: "data-runbook-form", submit: "runbook-submit" }, state, (fields) => start(b, fields, base, state, reload));
      reload();
    } }, "Run");
  return h("article", { class: "card runbook", "data-runbook": b.name },
    h("h3", {}, b.name, " ", run),
    b.description ? h("p", {}, b.description) : null,
    h("p", { class: "muted" }, "Steps: ", b.steps.map((s) => `${s.name} (${s.kind})`).join(" → ")),
    state.forms.get(b.name) || null,
    said,
    runsList(b.runs, base));
}

// start posts the run and opens its page; a refusal (a bad input, the
// runner's policy, a viewer's missing permission) shows the API's message
// and marks the field it names.
async function start(b, fields, base, state, reload) {
  try {
    const run = await postRun(`${base}/runbooks/${encodeURIComponent(b.name)}/runs`, fields);
    state.forms.delete(b.name);
    location.hash = `#${base}/runbook-runs/${run.id}`;
  } catch (err) {
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
