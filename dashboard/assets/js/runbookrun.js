// One runbook run: its inputs (sensitive ones masked), each step's status
// and error, an action step's own steps with their job logs (followed live,
// as on the Actions panel), a deploy or reprovision step's link to its
// operation's page, and Approve (at a gate), Resume (a failed or cancelled
// run) and Cancel (a run not finished), each confirmed first.
import * as api from "./api.js";
import { h, badge, when, duration, confirm, errorBox, refusal } from "./ui.js";
import { pairs } from "./actions.js";
import { LogView } from "./logs.js";

async function load([installId, runId], state) {
  const base = `/installs/${installId}`;
  const [inst, run] = await Promise.all([api.get(base), api.get(`${base}/runbook-runs/${runId}`)]);
  const ids = run.data.steps.filter((s) => s.action_run_id).map((s) => s.action_run_id);
  const acts = await Promise.all(ids.map((id) => api.get(`${base}/action-runs/${id}`)));
  state.panel ||= h("div", { class: "log-panel" }, h("p", { class: "muted" }, "Choose an action step's Log above to read its output."));
  state.message ||= h("div", { id: "action-message", "aria-live": "polite" });
  const changed = [inst, run, ...acts].some((r) => r.changed);
  return { changed, data: { inst: inst.data, run: run.data, acts: new Map(acts.map((a) => [a.data.id, a.data])) } };
}

function render({ inst, run, acts }, _params, state, reload) {
  requestAnimationFrame(() => state.log?.attached());
  return h("section", { class: "runbook-run" },
    h("p", { class: "crumbs" }, h("a", { href: "#/installs" }, "Installs"), " / ",
      h("a", { href: `#/installs/${inst.id}` }, inst.name), " / runbook ", run.runbook),
    h("h1", {}, `Runbook ${run.runbook} `, badge(run.status)),
    h("dl", { class: "facts" },
      fact("Run", h("span", { class: "mono" }, run.id)),
      fact("Started", [when(run.created_at), run.started_by ? ` by ${run.started_by}` : ""]),
      run.finished_at ? fact("Took", duration(run.created_at, run.finished_at)) : null,
      fact("Config version", `v${run.config_version}`)),
    Object.keys(run.inputs || {}).length ? [h("h2", {}, "Inputs"), h("dl", { class: "inputs" }, ...pairs(run.inputs))] : null,
    run.error ? h("p", { class: "error", id: "runbook-error" }, run.error) : null,
    buttons(run, state, reload),
    state.message,
    h("h2", {}, "Steps"),
    stepsView(run, acts, state),
    h("h2", {}, "Log"),
    state.panel);
}

function fact(term, value) {
  return [h("dt", {}, term), h("dd", {}, value)];
}

// buttons are what the run's status allows; each asks first and shows the
// API's answer (a refusal in its words: a viewer's missing permission, a
// run that moved on meanwhile).
function buttons(run, state, reload) {
  const path = `/installs/${run.install_id}/runbook-runs/${run.id}`;
  const ask = (verb, title, text, done) => async () => {
    if (!(await confirm(title, text))) return;
    try {
      await api.send("POST", `${path}/${verb}`);
      state.message.replaceChildren(h("p", { class: "ok" }, done));
    } catch (err) {
      state.message.replaceChildren(refusal(err));
    }
    reload();
  };
  const gate = run.steps.find((s) => s.status === "waiting_approval");
  const out = [];
  if (gate) {
    out.push(h("button", { type: "button", id: "runbook-approve", onclick: ask("approve", `Approve ${gate.name}`,
      `Approve the gate ${gate.name}? The run goes on to its next step.`, `Approved ${gate.name}.`) }, `Approve ${gate.name}`));
  }
  if (run.status === "failed" || run.status === "cancelled") {
    out.push(h("button", { type: "button", id: "runbook-resume", onclick: ask("resume", "Resume the run",
      "Resume the run from its first step that did not succeed? Steps that succeeded are not run again.", "Resumed.") }, "Resume"));
  }
  if (!run.finished_at) {
    out.push(h("button", { type: "button", id: "runbook-cancel", class: "danger", onclick: ask("cancel", "Cancel the run",
      "Cancel the run? Its running step's action run or operation is cancelled, a gate stops waiting, and no later step starts.",
      "Cancel asked: the run ends cancelled.") }, "Cancel"));
  }
  return out.length ? h("div", { class: "actions" }, ...out) : null;
}

function stepsView(run, acts, state) {
  return h("div", { class: "scroll" }, h("table", { class: "steps runbook-steps" },
    h("thead", {}, h("tr", {}, ...["Step", "Kind", "Status", "Started", "Took", "Details"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...run.steps.map((s) => h("tr", { "data-runbook-step": s.name },
      h("th", { scope: "row" }, s.name),
      h("td", { "data-label": "Kind" }, s.kind, s.target ? h("span", { class: "muted" }, ` ${s.target}`) : null),
      h("td", { "data-label": "Status" }, badge(s.status), s.error ? h("div", { class: "error" }, s.error) : null,
        s.approved_by ? h("div", { class: "muted" }, `approved by ${s.approved_by}`) : null),
      h("td", { "data-label": "Started" }, when(s.started_at)),
      h("td", { "data-label": "Took" }, duration(s.started_at, s.finished_at)),
      h("td", { "data-label": "Details" }, details(run, s, acts, state)))))));
}

// details are an action step's own steps with their logs, or a deploy's
// or reprovision's operation.
function details(run, s, acts, state) {
  if (s.operation_id) {
    return h("a", { href: `#/installs/${run.install_id}/operations/${s.operation_id}`, "data-operation-link": s.operation_id }, `operation ${s.operation_id}`);
  }
  const a = s.action_run_id && acts.get(s.action_run_id);
  if (!a) return "—";
  return h("ul", { class: "jobs" }, h("li", { class: "muted mono" }, a.id), ...a.steps.map((st) => h("li", { "data-action-step": st.name },
    st.name, " ", badge(st.status), " ", st.job_id ? logButton(a, st, state) : null)));
}

function logButton(a, step, state) {
  const b = h("button", { type: "button", class: "link", id: `log-${step.job_id}`, "data-log-job": step.job_id,
    "aria-label": `Log of ${a.action}'s step ${step.name}` }, "Log");
  b.addEventListener("click", () => {
    state.log?.close();
    try {
      state.log = new LogView({ id: step.job_id, kind: `${a.action}/${step.name}` });
      state.panel.replaceChildren(state.log.node);
      state.log.search.focus();
    } catch (err) {
      state.panel.replaceChildren(errorBox(err));
    }
  });
  return b;
}

export const runbookRunView = { load, render };
