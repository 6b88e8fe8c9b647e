// An app's releases: each one's status and batches with their installs'
// state, and the controls the API allows for its state, each confirmed.
import * as api from "./api.js";
import { h, badge, when, confirm, errorBox } from "./ui.js";

async function load([id], state) {
  const [app, releases] = await Promise.all([api.get(`/apps/${id}`), api.get(`/apps/${id}/releases`)]);
  const changed = state.dirty || app.changed || releases.changed;
  state.dirty = false;
  return { changed, data: { app: app.data, releases: releases.data.releases } };
}

function render({ app, releases }, _params, state, reload) {
  const message = h("div", { id: "release-message", "aria-live": "polite" }, state.message || null);
  const say = (node) => { state.message = node; state.dirty = true; reload(); };
  const active = releases.some((r) => !r.finished_at);
  return h("section", { class: "releases" },
    h("p", { class: "crumbs" }, h("a", { href: "#/apps" }, "Apps"), " / ", h("a", { href: `#/apps/${app.id}` }, app.name), " / releases"),
    h("h1", {}, `Releases of ${app.name}`),
    message,
    releases.length === 0 ? h("div", { class: "card empty" },
      h("p", {}, "No releases yet: a release deploys a config version to many installs, a batch at a time. Start one:"),
      h("pre", {}, `outpostctl releases create --app ${app.name} --all --batch-size 1 --pause 5m`))
      : releases.map((r) => releaseCard(app, r, active, say)));
}

function releaseCard(app, r, active, say) {
  return h("article", { class: "card release", "data-release": r.id },
    h("h2", {}, r.rollback_of ? `Roll back to earlier versions` : `Version ${r.config_version}`, " ", badge(r.status),
      r.paused && r.status === "running" ? [" ", badge("pausing")] : null),
    h("dl", { class: "facts" },
      [h("dt", {}, "Started"), h("dd", {}, when(r.created_at))],
      [h("dt", {}, "Finished"), h("dd", {}, r.finished_at ? when(r.finished_at) : "not yet")],
      [h("dt", {}, "Batches"), h("dd", {}, `${r.batches.length}, ${r.batch_size || "some"} install(s) each, ${r.pause_between_batches} between them`)],
      [h("dt", {}, "Halts after"), h("dd", {}, r.failure_threshold ? `${r.failure_threshold} failed install(s)` : "never")],
      r.on_unhealthy ? [h("dt", {}, "Health gate"), h("dd", {}, `each batch healthy for ${r.soak} after its deploys, else ${r.on_unhealthy === "rollback" ? "roll it back and halt" : "halt"}`)] : null,
      r.rollback_of ? [h("dt", {}, "Rolls back"), h("dd", { class: "mono" }, r.rollback_of)] : null),
    r.error ? h("p", { class: "error" }, r.error) : null,
    controls(app, r, active, say),
    ...r.batches.map((b) => batch(b)));
}

// controls are the actions the API allows in the release's state.
function controls(app, r, active, say) {
  const act = (action, label, text, danger) => h("button", { type: "button", "data-action": action, class: danger ? "danger" : "",
    onclick: async () => {
      if (!(await confirm(label, text))) return;
      try {
        await api.send("POST", `/apps/${app.id}/releases/${r.id}/${action}`);
        say(h("p", { class: "ok" }, `${label}: asked.`));
      } catch (err) {
        say(errorBox(err));
      }
    } }, label);
  const buttons = [];
  if (!r.finished_at) {
    if (!r.paused && r.status === "running") buttons.push(act("pause", "Pause", "Pause this release before its next batch? The running batch finishes."));
    if (r.paused || r.status === "halted") buttons.push(act("resume", "Resume", r.status === "halted"
      ? "Resume this release? Its failed installs are deployed again first, then it goes on (after a health gate's halt: with the next batch)." : "Resume this release with its next batch?"));
    buttons.push(act("cancel", "Cancel release", "Cancel this release? The running batch finishes; installs not reached are skipped.", true));
  } else if (!active) {
    buttons.push(act("rollback", "Roll back", "Roll this release back? Every install it deployed returns to the version it ran before, in the same batches.", true));
  } else {
    return h("p", { class: "muted" }, "Another release of this app is under way: roll back once it has ended.");
  }
  return h("div", { class: "actions" }, ...buttons);
}

function batch(b) {
  return h("div", { class: "scroll" }, h("table", { class: "batch", "data-batch": b.batch },
    h("caption", {}, `Batch ${b.batch + 1}`),
    h("thead", {}, h("tr", {}, ...["Install", "State", "Versions", "Progress"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...b.installs.map((ri, i) => h("tr", { "data-install": ri.install_name },
      h("th", { scope: "row" }, h("a", { href: `#/installs/${ri.install_id}` }, ri.install_name)),
      h("td", { "data-label": "State" }, badge(ri.status), ri.error ? h("div", { class: "error" }, ri.error) : null),
      h("td", { "data-label": "Versions" }, ri.from_version ? `v${ri.from_version} → v${ri.to_version}` : `v${ri.to_version}`),
      h("td", { "data-label": "Progress" }, progress(ri, b.progress[i]), " ", h("span", { class: "muted" }, when(ri.updated_at))))))));
}

// progress is the API's line, with a maintenance window's time in the
// viewer's zone.
function progress(ri, line) {
  if (ri.waiting_until) return `waiting for the maintenance window until ${new Date(ri.waiting_until).toLocaleString()}`;
  return (line || "").replace(`${ri.install_name}: `, "");
}

export const releasesView = { load, render };
