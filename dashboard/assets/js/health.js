// An install's health (GET /installs/{id}/health): each helm component's
// readiness as its runner last read it, each health-check action's result
// (a component it names, or its own check "action:<name>"), why, and the
// latest changes.
import { h, badge, when } from "./ui.js";

// healthFact is the install's health in one line: its state and why.
export function healthFact(health) {
  const s = health || { state: "unknown" };
  const why = s.component ? [s.component, s.object, s.condition].filter(Boolean).join(": ") : "";
  return h("span", { id: "install-health" }, badge(s.state), why ? h("span", { class: "muted" }, " ", why) : null,
    s.since ? h("span", { class: "muted" }, " since ", when(s.since)) : null);
}

// healthView lists the components' health and the latest transitions.
export function healthView(d) {
  if (!d.components.length) {
    return h("p", { class: "muted" }, "No component has reported health yet: the runner reads each chart's objects once it is deployed, and a health-check action reports when it has run.");
  }
  return h("div", { class: "health" },
    h("table", {},
      h("thead", {}, h("tr", {}, ...["Component", "Health", "Object", "Condition", "Since"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, ...d.components.map((c) => h("tr", { "data-health": c.component },
        h("th", { scope: "row" }, c.component),
        h("td", { "data-label": "Health" }, badge(c.state)),
        h("td", { "data-label": "Object", class: "mono" }, c.object || ""),
        h("td", { "data-label": "Condition" }, c.condition || ""),
        h("td", { "data-label": "Since" }, when(c.since)))))),
    d.transitions.length ? h("details", { class: "transitions" },
      h("summary", {}, `Latest changes (${d.transitions.length})`),
      h("ul", {}, ...d.transitions.map((t) => h("li", {}, when(t.at), " ", t.component, ": ", t.from || "first report",
        " → ", badge(t.to), t.condition ? h("span", { class: "muted" }, " ", t.condition) : null)))) : null);
}
