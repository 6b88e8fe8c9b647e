// A step waiting for approval: its plan (terraform's, or a chart's diff of
// objects, with the API's redactions) and Approve / Deny, each confirmed.
import * as api from "./api.js";
import { h, confirm, errorBox } from "./ui.js";
import { policyNotes } from "./policies.js";

export function approvals(op, message, reload) {
  const waiting = (op.steps || []).filter((s) => s.status === "waiting_approval");
  return waiting.map((s) => {
    const path = `/installs/${op.install_id}/operations/${op.id}/steps/${encodeURIComponent(s.name)}`;
    const decide = (verb, done, text) => async () => {
      if (!(await confirm(`${verb} ${s.name}`, text))) return;
      try {
        await api.send("POST", `${path}/${verb.toLowerCase()}`);
        message.replaceChildren(h("p", { class: "ok" }, `${done} ${s.name}.`));
      } catch (err) {
        message.replaceChildren(errorBox(err));
      }
      reload();
    };
    return h("section", { class: "card approval", "data-approval": s.name },
      h("h3", {}, `${s.name} waits for approval`),
      s.has_changes === undefined ? null : h("p", { class: "muted" }, `Plan: +${s.add} ~${s.change} -${s.destroy_count}`),
      planView(s.plan),
      policyNotes(s),
      h("div", { class: "actions" },
        h("button", { type: "button", id: `approve-${s.name}`, onclick: decide("Approve", "Approved",
          `Approve ${s.name}'s plan? Its changes are applied at once.`) }, "Approve"),
        h("button", { type: "button", id: `deny-${s.name}`, class: "danger", onclick: decide("Deny", "Denied",
          `Deny ${s.name}'s plan? The operation ends: nothing more starts.`) }, "Deny")));
  });
}

// planView shows a plan, its added and removed lines marked.
function planView(plan) {
  if (!plan) return h("p", { class: "muted" }, "No plan text: the step's plan job shows what it found.");
  return h("pre", { class: "plan", tabindex: "0", "aria-label": "Plan" }, ...plan.split("\n").map((line) => {
    const t = line.trimStart();
    const cls = /^(\+|\+\+\+)/.test(t) ? "add" : /^(-|---)/.test(t) ? "del" : /^~/.test(t) ? "chg" : null;
    return h("span", { class: cls }, line + "\n");
  }));
}
