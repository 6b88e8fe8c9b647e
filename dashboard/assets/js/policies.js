// What a step's plan policies said: a line per denial, failure and warning
// (a policy that passed says nothing), or null when none spoke.
import { h } from "./ui.js";

export function policyNotes(step) {
  const lines = [];
  for (const r of step.policies || []) {
    const name = `${r.source} policy ${r.policy}`;
    for (const m of r.deny || []) lines.push({ cls: "error", text: `${name} denies: ${m}` });
    if (r.error) lines.push({ cls: "error", text: `${name} failed: ${r.error}` });
    for (const m of r.warn || []) lines.push({ cls: "warn", text: `${name} warns: ${m}` });
  }
  if (!lines.length) return null;
  return h("ul", { class: "policies", "aria-label": "Plan policies" }, ...lines.map((l) => h("li", { class: l.cls }, l.text)));
}
