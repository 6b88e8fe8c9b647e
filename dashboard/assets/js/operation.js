// One operation: its step timeline, the plans waiting for approval, each
// step's jobs with their times, and the log of the job the viewer picks.
import * as api from "./api.js";
import { h, badge, when, duration, errorBox, opTitle } from "./ui.js";
import { timeline } from "./timeline.js";
import { stepsTable, jobsOf } from "./steps.js";
import { approvals } from "./approval.js";
import { LogView } from "./logs.js";

async function load([installId, opId], state) {
  const base = `/installs/${installId}`;
  const [inst, op] = await Promise.all([api.get(base), api.get(`${base}/operations/${opId}`)]);
  const ids = [...new Set((op.data.steps || []).flatMap((s) => jobsOf(s).map((j) => j.id)))];
  const jobs = await Promise.all(ids.map((id) => api.get(`/jobs/${id}`)));
  const changed = [inst, op, ...jobs].some((r) => r.changed);
  // The log and the last action's answer stay across re-renders.
  state.panel ||= h("div", { class: "log-panel" }, h("p", { class: "muted" }, "Choose a job's Log above to read its output."));
  state.message ||= h("div", { id: "action-message", "aria-live": "polite" });
  return { changed, data: { inst: inst.data, op: op.data, jobs: new Map(jobs.map((j) => [j.data.id, j.data])) } };
}

function render({ inst, op, jobs }, _params, state, reload) {
  const waiting = approvals(op, state.message, reload);
  requestAnimationFrame(() => state.log?.attached());
  return h("section", { class: "operation" },
    h("p", { class: "crumbs" }, h("a", { href: "#/installs" }, "Installs"), " / ",
      h("a", { href: `#/installs/${inst.id}` }, inst.name), " / ", op.kind.replaceAll("_", " ")),
    h("h1", {}, opTitle(op)),
    h("dl", { class: "facts" },
      fact("Started", when(op.created_at)),
      op.finished_at ? fact("Took", duration(op.created_at, op.finished_at)) : null,
      fact("Config version", op.config_version ? `v${op.config_version}` : "—"),
      op.source === "offline" ? fact("Bundle index", h("span", { class: "mono" }, op.bundle_index)) : null,
      fact("Approval mode", op.approval_mode || inst.approval_mode)),
    op.error ? h("p", { class: "error" }, op.error) : null,
    state.message,
    waiting.length ? [h("h2", {}, "Waiting for approval"), waiting] : null,
    h("h2", {}, "Timeline"),
    timeline(op, jobs),
    h("h2", {}, "Steps and jobs"),
    stepTable(op, jobs, state),
    h("h2", {}, "Log"),
    state.panel);
}

function fact(term, value) {
  return [h("dt", {}, term), h("dd", {}, value)];
}

function stepTable(op, jobs, state) {
  const steps = op.steps || [];
  if (steps.length === 0) return h("p", { class: "muted" }, "No steps yet.");
  return stepsTable(steps, (s) => h("td", { "data-label": "Jobs" }, jobList(s, jobs, state)));
}

function jobList(step, jobs, state) {
  const list = jobsOf(step);
  if (list.length === 0) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "jobs" }, ...list.map((j) => {
    const d = jobs.get(j.id);
    const open = h("button", { type: "button", id: `log-${j.id}`, class: "link", "data-log-job": j.id, "aria-label": `Log of ${step.name}'s ${j.kind} job` }, "Log");
    open.addEventListener("click", () => showLog(state, { ...j, step: step.name }));
    return h("li", { "data-job": j.id }, h("span", { class: "job-kind" }, j.kind), " ", h("span", { class: "mono" }, j.id), " ",
      d ? [badge(d.status), " ", when(d.started_at || d.created_at), " ", h("span", { class: "muted" }, duration(d.started_at, d.finished_at))] : null,
      " ", open,
      d && d.waiting ? h("div", { class: "muted", "data-waiting": d.waiting.reason }, "Queued: ", d.waiting.message) : null);
  }));
}

// showLog follows a job's log in the panel, in place of the one shown.
function showLog(state, job) {
  state.log?.close();
  try {
    state.log = new LogView(job);
    state.panel.replaceChildren(state.log.node);
    state.log.search.focus();
  } catch (err) {
    state.panel.replaceChildren(errorBox(err));
  }
}

export const operationView = { load, render };
