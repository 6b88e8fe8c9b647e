// An app: its config versions (one shown readably, a diff between two
// chosen ones) and its builds with their digests and provenance.
import * as api from "./api.js";
import { h, badge, when } from "./ui.js";
import { configView, diffView } from "./configview.js";

async function load([id], state) {
  const base = `/apps/${id}`;
  const [app, configs, builds] = await Promise.all([api.get(base), api.get(`${base}/configs`), api.get(`${base}/builds`)]);
  const versions = configs.data.configs.map((c) => c.version);
  state.shown ||= versions[0];
  state.to ||= versions[0];
  state.from ||= versions[1] || versions[0];
  const wanted = [...new Set([state.shown, state.from, state.to].filter(Boolean))];
  const full = await Promise.all(wanted.map((v) => api.get(`${base}/configs/${v}`)));
  const byVersion = new Map(full.map((f) => [f.data.version, f.data]));
  const changed = state.dirty || [app, configs, builds, ...full].some((r) => r.changed);
  state.dirty = false;
  return { changed, data: { app: app.data, configs: configs.data.configs, builds: builds.data.builds, byVersion } };
}

function render(d, _params, state, reload) {
  const { app } = d;
  const choose = (key) => (v) => { state[key] = v; state.dirty = true; reload(); };
  return h("section", { class: "app" },
    h("p", { class: "crumbs" }, h("a", { href: "#/apps" }, "Apps"), " / ", app.name),
    h("h1", {}, app.name),
    app.description ? h("p", {}, app.description) : null,
    h("p", {}, h("a", { href: `#/apps/${app.id}/releases`, id: "app-releases" }, "Releases of this app →")),
    h("h2", {}, "Config versions"),
    d.configs.length === 0 ? h("div", { class: "card empty" },
      h("p", {}, "No config version yet: sync the app's config directory to make version 1."),
      h("pre", {}, `outpostctl apps sync DIR --app ${app.name}`))
      : [versionsTable(d.configs, state.shown, choose("shown")), configView(d.byVersion.get(state.shown)),
        h("h2", {}, "Changes between two versions"), diffPicker(d, state, choose)],
    h("h2", {}, "Builds"),
    buildsTable(d.builds));
}

function versionsTable(configs, shown, show) {
  return h("div", { class: "scroll" }, h("table", { class: "versions" },
    h("thead", {}, h("tr", {}, ...["Version", "Synced", ""].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...configs.map((c) => h("tr", { "data-version": c.version, class: c.version === shown ? "current" : "" },
      h("th", { scope: "row" }, `v${c.version}`, c.version === configs[0].version ? h("span", { class: "sub" }, "latest") : null),
      h("td", { "data-label": "Synced" }, when(c.created_at)),
      h("td", {}, c.version === shown ? h("span", { class: "muted" }, "shown below")
        : h("button", { type: "button", class: "plain", onclick: () => show(c.version) }, `Show v${c.version}`)))))));
}

function diffPicker(d, state, choose) {
  const pick = (id, label, key) => {
    const sel = h("select", { id, "aria-label": label },
      ...d.configs.map((c) => h("option", { value: c.version, selected: c.version === state[key] }, `v${c.version}`)));
    sel.addEventListener("change", () => choose(key)(Number(sel.value)));
    return h("label", {}, label, " ", sel);
  };
  if (d.configs.length < 2) return h("p", { class: "muted" }, "One version so far: sync the config again after a change to compare two.");
  return [h("div", { class: "toolbar" }, pick("diff-from", "From", "from"), pick("diff-to", "To", "to")),
    diffView(d.byVersion.get(state.from), d.byVersion.get(state.to))];
}

function buildsTable(builds) {
  if (builds.length === 0) {
    return h("p", { class: "muted" }, "No builds yet: syncing a config whose components have a build (terraform_module, " +
      "helm_chart, container_image, docker_build) queues them on the org's build runner.");
  }
  return h("div", { class: "scroll" }, h("table", { class: "builds" },
    h("thead", {}, h("tr", {}, ...["Component", "Type", "Status", "Digest", "Config", "Started"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...builds.map((b) => h("tr", { "data-build": b.id, "data-component": b.component },
      h("th", { scope: "row" }, b.component),
      h("td", { "data-label": "Type" }, b.component_type),
      h("td", { "data-label": "Status" }, badge(b.status), b.error ? h("div", { class: "error" }, b.error) : null),
      h("td", { "data-label": "Digest", class: "mono digest" }, b.digest || h("span", { class: "muted" }, "none yet"),
        provenance(b)),
      h("td", { "data-label": "Config" }, `v${b.config_version}`),
      h("td", { "data-label": "Started" }, when(b.created_at)))))));
}

const provenanceNames = { "dev.outpost.source-digest": "Source digest", "dev.outpost.build-args": "Build arguments", "dev.outpost.builder": "Builder" };

// provenance is how a docker_build image was made, as the API shows it.
function provenance(b) {
  const p = b.provenance;
  if (!p || Object.keys(p).length === 0) return b.component_type === "docker_build" && b.digest ? h("div", { class: "muted" }, "no provenance recorded") : null;
  return h("dl", { class: "provenance" }, ...Object.keys(p).sort().map((k) =>
    [h("dt", {}, provenanceNames[k] || k), h("dd", {}, k === "dev.outpost.build-args" ? buildArgs(p[k]) : p[k])]));
}

function buildArgs(raw) {
  let args;
  try { args = JSON.parse(raw); } catch { return raw; }
  const names = Object.keys(args || {}).sort();
  return names.length === 0 ? "none" : names.map((n) => `${n}=${args[n]}`).join("\n");
}

export const appView = { load, render };
