// An operation's steps as a table (the install's page and the operation's
// page), and the jobs a step ran.
import { h, badge, when, duration } from "./ui.js";
import { policyNotes } from "./policies.js";

// stepsTable is a row per step; jobsCell(step) is its Jobs cell.
export function stepsTable(list, jobsCell) {
  return h("div", { class: "scroll" }, h("table", { class: "steps" },
    h("thead", {}, h("tr", {}, ...["Step", "Status", "Started", "Took", "Changes", "Jobs"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...list.map((s) => h("tr", { "data-step": s.name },
      h("th", { scope: "row" }, s.name, s.destroy ? " (destroy)" : ""),
      h("td", { "data-label": "Status" }, badge(s.status), s.error ? h("div", { class: "error" }, s.error) : null,
        s.left_behind ? h("div", { class: "left-behind" }, "Left behind: ", s.left_behind.join(", ") || "nothing in its state") : null,
        policyNotes(s)),
      h("td", { "data-label": "Started" }, when(s.started_at)),
      h("td", { "data-label": "Took" }, duration(s.started_at, s.finished_at)),
      h("td", { "data-label": "Changes", class: "mono" }, s.has_changes === undefined ? "—" : `+${s.add} ~${s.change} -${s.destroy_count}`),
      jobsCell(s))))));
}

// jobsOf lists a step's jobs in the order they ran; one job that did two
// things (plan and apply under approve-all) is listed once, as "plan+apply".
export function jobsOf(step) {
  const byId = new Map();
  for (const [kind, id] of [["sync", step.sync_job_id], ["plan", step.plan_job_id], ["apply", step.apply_job_id]]) {
    if (!id) continue;
    const j = byId.get(id);
    if (j) j.kind += "+" + kind;
    else byId.set(id, { kind, id });
  }
  return [...byId.values()];
}
