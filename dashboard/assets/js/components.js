// An install's components: the dependency graph, then a row per component
// with its step's status, drift, the build it runs, and its Deploy and Tear
// down buttons (each confirmed; the API says what it allows).
import { h, badge, when } from "./ui.js";
import { graph } from "./graph.js";

// latestSteps are the steps of the newest operation that ran the
// components (a drift check's or a command's steps say less).
function latestSteps(ops) {
  const op = ops.find((o) => o.steps && o.steps.length && o.kind !== "drift_check") || ops.find((o) => o.steps);
  return (op && op.steps) || [];
}

// componentsView is the graph and the table; act(title, text, path) starts
// an operation after asking.
export function componentsView({ components: installed, ops, drift }, act) {
  const steps = latestSteps(ops);
  const byStep = new Map(steps.map((s) => [s.name, s]));
  const builds = new Map(installed.map((c) => [c.component, c]));
  const drifted = new Map(drift.filter((d) => d.drifted).map((d) => [d.name, d]));
  const names = [...new Set([...byStep.keys(), ...builds.keys()])];
  if (names.length === 0) return h("p", { class: "muted" }, "Nothing deployed yet: provision the install to create its components.");
  return [
    steps.length ? h("div", { class: "scroll graph-box" }, graph(steps, new Set(drifted.keys()))) : null,
    h("div", { class: "scroll" }, h("table", { class: "components" },
      h("thead", {}, h("tr", {}, ...["Component", "Status", "Drift", "Build", "Config", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...names.map((name) => row(name, byStep.get(name), builds.get(name), drifted.get(name), act))))),
    [...drifted.values()].map(driftPlan),
  ];
}

function row(name, step, build, drift, act) {
  const component = name !== "sandbox";
  return h("tr", { "data-component": name, class: drift ? "drifted" : "" },
    h("th", { scope: "row" }, name),
    h("td", { "data-label": "Status" }, step ? badge(step.status) : badge("deployed")),
    h("td", { "data-label": "Drift" }, drift ? [badge("drifted"), " since ", when(drift.since)] : h("span", { class: "muted" }, "—")),
    h("td", { "data-label": "Build", class: "mono" }, build ? build.digest.slice(0, 19) : "—"),
    h("td", { "data-label": "Config" }, build && build.config_version ? `v${build.config_version}` : "—"),
    h("td", { "data-label": "Actions" }, component ? h("span", { class: "group" },
      h("button", { type: "button", class: "small", "data-deploy": name,
        onclick: act("Deploy " + name, `Deploy ${name}: plan it and apply the plan (under the install's approval mode)?`, `/components/${encodeURIComponent(name)}/deploy`) }, "Deploy"),
      h("button", { type: "button", class: "small danger", "data-teardown": name,
        onclick: act("Tear down " + name, `Tear ${name} down: destroy what it created?`, `/components/${encodeURIComponent(name)}/teardown`) }, "Tear down"))
      : null));
}

// driftPlan is what a drift check found changed, as its plan says.
function driftPlan(d) {
  return h("details", { class: "card drift", "data-key": "drift-" + d.name, "data-drift": d.name },
    h("summary", {}, `${d.name} drifted since `, when(d.since), ": the plan"),
    h("pre", {}, d.plan || "(no plan recorded)"));
}
