// The step timeline: one row per step on a shared time axis, a bar from the
// step's start to its end (a running step's to now) coloured by its status,
// and under it a thin bar per job, so parallel branches show side by side.
import { h, badge, duration } from "./ui.js";

// jobsOf lists a step's jobs in the order they ran: plan and apply are one job
// under approve-all.
export function jobsOf(step) {
  const out = [];
  if (step.sync_job_id) out.push({ kind: "sync", id: step.sync_job_id });
  if (step.plan_job_id) out.push({ kind: step.plan_job_id === step.apply_job_id ? "plan+apply" : "plan", id: step.plan_job_id });
  if (step.apply_job_id && step.apply_job_id !== step.plan_job_id) out.push({ kind: "apply", id: step.apply_job_id });
  return out;
}

export function timeline(op, jobs) {
  const steps = op.steps || [];
  if (steps.length === 0) return h("p", { class: "muted" }, "No steps yet: they appear once the operation has planned its work.");
  const now = Date.now();
  const t = (iso) => (iso ? new Date(iso).getTime() : null);
  const starts = steps.map((s) => t(s.started_at)).filter((v) => v !== null);
  const t0 = Math.min(t(op.created_at) ?? now, ...starts);
  const t1 = Math.max(t(op.finished_at) ?? now, ...steps.map((s) => t(s.finished_at) ?? (s.started_at ? now : 0)), t0 + 1000);
  const at = (ms) => `${((ms - t0) / (t1 - t0)) * 100}%`;
  const bar = (cls, from, to, title) => {
    const el = h("span", { class: cls, title });
    el.style.left = at(from);
    el.style.width = `max(3px, calc(${at(to)} - ${at(from)}))`;
    return el;
  };
  return h("div", { class: "timeline", role: "list", "aria-label": "Step timeline" },
    axis(t0, t1, at),
    ...steps.map((s) => {
      const track = h("div", { class: "track" });
      if (s.started_at) {
        track.append(bar(`bar ${s.status}`, t(s.started_at), t(s.finished_at) ?? now,
          `${s.name}: ${s.status.replaceAll("_", " ")}, ${duration(s.started_at, s.finished_at)}`));
      } else {
        track.append(h("span", { class: "muted not-started" }, s.status === "skipped" ? "skipped" : "not started"));
      }
      for (const j of jobsOf(s)) {
        const d = jobs.get(j.id);
        if (d && d.started_at) track.append(bar("job-bar", t(d.started_at), t(d.finished_at) ?? now, `${j.kind} job ${j.id}`));
      }
      return h("div", { class: "row", role: "listitem", "data-timeline-step": s.name },
        h("span", { class: "label" }, s.name, " ", badge(s.status)), track);
    }));
}

// axis is the time scale: a few ticks in the viewer's zone.
function axis(t0, t1, at) {
  const ticks = h("div", { class: "track ticks", "aria-hidden": "true" });
  for (let i = 0; i <= 4; i++) {
    const ms = t0 + ((t1 - t0) * i) / 4;
    const tick = h("span", { class: "tick" }, new Date(ms).toLocaleTimeString());
    tick.style.left = at(ms);
    ticks.append(tick);
  }
  return h("div", { class: "row axis" }, h("span", { class: "label muted" }, "Step"), ticks);
}
