// The step timeline: one row per step on a shared time axis, a bar from the
// step's start to its end (a running step's to now) coloured by its status,
// and under it a thin bar per job, so parallel branches show side by side.
// While the operation runs the bars are placed again each second, in place.
import { h, badge, duration } from "./ui.js";
import { jobsOf } from "./steps.js";

const ms = (iso) => (iso ? new Date(iso).getTime() : null);

export function timeline(op, jobs) {
  const steps = op.steps || [];
  if (steps.length === 0) return h("p", { class: "muted" }, "No steps yet: they appear once the operation has planned its work.");
  const bars = []; // {el, from, to}: to null while it runs
  const bar = (cls, from, to, title) => {
    const el = h("span", { class: cls, title });
    bars.push({ el, from: ms(from), to: ms(to) });
    return el;
  };
  const ticks = [0, 1, 2, 3, 4].map(() => h("span", { class: "tick" }));
  const node = h("div", { class: "timeline", role: "list", "aria-label": "Step timeline" },
    h("div", { class: "row axis" }, h("span", { class: "label muted" }, "Step"),
      h("div", { class: "track ticks", "aria-hidden": "true" }, ticks)),
    ...steps.map((s) => h("div", { class: "row", role: "listitem", "data-timeline-step": s.name },
      h("span", { class: "label" }, s.name, " ", badge(s.status)),
      h("div", { class: "track" },
        s.started_at ? bar(`bar ${s.status}`, s.started_at, s.finished_at,
          `${s.name}: ${s.status.replaceAll("_", " ")}, ${duration(s.started_at, s.finished_at)}`)
          : h("span", { class: "muted not-started" }, s.status === "skipped" ? "skipped" : "not started"),
        jobsOf(s).map((j) => jobs.get(j.id)).filter((d) => d && d.started_at)
          .map((d) => bar("job-bar", d.started_at, d.finished_at, `${d.id}: ${d.status}`))))));
  const place = () => layout(op, bars, ticks);
  place();
  if (!op.finished_at) {
    const timer = setInterval(() => (node.isConnected ? place() : clearInterval(timer)), 1000);
  }
  return node;
}

// layout places the bars and the axis's ticks on the operation's span so far.
function layout(op, bars, ticks) {
  const now = Date.now();
  const t0 = Math.min(ms(op.created_at) ?? now, ...bars.map((b) => b.from));
  const t1 = Math.max(ms(op.finished_at) ?? now, ...bars.map((b) => b.to ?? now), t0 + 1000);
  const at = (t) => `${((t - t0) / (t1 - t0)) * 100}%`;
  for (const b of bars) {
    b.el.style.left = at(b.from);
    b.el.style.width = `max(3px, calc(${at(b.to ?? now)} - ${at(b.from)}))`;
  }
  ticks.forEach((tick, i) => {
    const t = t0 + ((t1 - t0) * i) / (ticks.length - 1);
    tick.textContent = new Date(t).toLocaleTimeString();
    tick.style.left = at(t);
  });
}
