// The apps list: each app with its installs and latest config version.
import * as api from "./api.js";
import { h, when } from "./ui.js";

async function load() {
  const [apps, installs] = await Promise.all([api.get("/apps"), api.get("/installs")]);
  const configs = await Promise.all(apps.data.apps.map((a) => api.get(`/apps/${a.id}/configs`)));
  const changed = [apps, installs, ...configs].some((r) => r.changed);
  const count = new Map();
  for (const inst of installs.data.installs) count.set(inst.app_id, (count.get(inst.app_id) || 0) + 1);
  const rows = apps.data.apps.map((app, i) => ({ app, installs: count.get(app.id) || 0, latest: configs[i].data.configs[0] }));
  rows.sort((a, b) => a.app.name.localeCompare(b.app.name));
  return { changed, data: rows };
}

function render(rows) {
  if (rows.length === 0) {
    return h("section", { class: "card empty" },
      h("h1", {}, "No apps yet"),
      h("p", {}, "An app is what you ship to your customers' clouds. Create one and sync its config directory:"),
      h("pre", {}, "outpostctl apps create NAME\noutpostctl apps sync DIR --app NAME"));
  }
  return h("section", {},
    h("h1", {}, "Apps"),
    h("div", { class: "scroll" }, h("table", { class: "apps" },
      h("thead", {}, h("tr", {}, ...["App", "Latest config", "Installs", "Releases"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...rows.map(({ app, installs, latest }) => h("tr", { "data-app": app.name },
        h("th", { scope: "row" }, h("a", { href: `#/apps/${app.id}` }, app.name),
          app.description ? h("span", { class: "sub" }, app.description) : null),
        h("td", { "data-label": "Latest config" }, latest ? [`v${latest.version} `, h("span", { class: "muted" }, "synced ", when(latest.created_at))]
          : h("span", { class: "muted" }, "none synced")),
        h("td", { "data-label": "Installs" }, String(installs)),
        h("td", { "data-label": "Releases" }, h("a", { href: `#/apps/${app.id}/releases` }, "Releases"))))))));
}

export const appsView = { load, render };
