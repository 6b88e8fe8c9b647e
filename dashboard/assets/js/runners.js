// The runners: online or offline, last seen, version, platform, capabilities, the
// install each serves and, for an install's runner, its helm install line
// (the token stays a <TOKEN> placeholder: the API never sends one here).
import * as api from "./api.js";
import { h, badge, when, errorBox } from "./ui.js";

async function load(_params, state) {
  state.open ||= new Set();
  const [runners, installs] = await Promise.all([api.get("/runners"), api.get("/installs")]);
  const names = new Map(installs.data.installs.map((i) => [i.id, i.name]));
  const list = runners.data.runners.filter((r) => state.open.has(r.id) && r.install_id);
  // A refusal (409: no public gateway URL) is shown in place of the line.
  const helm = await Promise.all(list.map((r) => api.get(`/installs/${r.install_id}/runner/helm-install`).catch((err) => {
    if (err.status === 401) throw err;
    return { data: { error: err }, changed: false };
  })));
  const lines = new Map(list.map((r, i) => [r.id, helm[i].data]));
  const changed = state.dirty || [runners, installs, ...helm].some((r) => r.changed);
  state.dirty = false;
  const rows = runners.data.runners.map((r) => ({ r, install: names.get(r.install_id), helm: lines.get(r.id) }));
  rows.sort((a, b) => (a.r.status === "online") - (b.r.status === "online") || (a.install || "").localeCompare(b.install || ""));
  return { changed, data: rows };
}

function render(rows, _params, state, reload) {
  if (rows.length === 0) {
    return h("section", { class: "card empty" }, h("h1", {}, "No runners yet"),
      h("p", {}, "Each install has a runner, created with it; the org's build runner appears on first use. Create an install:"),
      h("pre", {}, "outpostctl installs create NAME --app APP"));
  }
  return h("section", {},
    h("h1", {}, "Runners"),
    h("p", { class: "muted" }, `${rows.filter((x) => x.r.status === "online").length} of ${rows.length} online; offline ones first.`),
    h("div", { class: "runners" }, ...rows.map((row) => card(row, state, reload))));
}

function card({ r, install, helm }, state, reload) {
  const kind = r.kind === "build" ? "build runner (the org's builds)" : "install runner";
  const title = r.kind === "build" ? "Build runner" : `Runner of ${install || r.install_id}`;
  return h("article", { class: "card runner", "data-runner": r.id, "data-for-install": install },
    h("h2", {}, title, " ", badge(r.status), h("span", { class: "sub" }, `named ${r.name}`)),
    h("dl", { class: "facts" },
      [h("dt", {}, "Kind"), h("dd", {}, kind)],
      r.install_id ? [h("dt", {}, "Install"), h("dd", {}, h("a", { href: `#/installs/${r.install_id}` }, install || r.install_id))] : null,
      [h("dt", {}, "Last seen"), h("dd", {}, r.last_seen_at ? when(r.last_seen_at) : "never: it has not registered yet")],
      r.status_since ? [h("dt", {}, r.status === "online" ? "Online since" : "Offline since"),
        h("dd", { "data-status-since": "" }, when(r.status_since))] : null,
      [h("dt", {}, "Version"), h("dd", { class: "mono" }, r.version || "—")],
      [h("dt", {}, "Platform"), h("dd", { class: "mono", "data-platform": "" }, r.platform || "unknown")],
      r.update_available ? [h("dt", {}, "Update available"), h("dd", { "data-update-available": r.update_available.version },
        h("span", { class: "badge warn" }, "waiting for the customer"), " ", h("span", { class: "mono" }, r.update_available.version),
        ": the customer accepts it on the runner with ", h("code", {}, `outpost-runner update accept ${r.update_available.version}`))] : null,
      [h("dt", {}, "Capabilities"), h("dd", {}, (r.capabilities || []).join(", ") || "—")],
      [h("dt", {}, "Jobs"), h("dd", { "data-jobs": "" }, `${r.running_jobs} running, ${r.queued_jobs} queued`)],
      lastError(r)),
    r.install_id ? helmInstall(r, install || r.install_id, helm, state, reload) : null);
}

// helmInstall is read when opened: the commands, in order.
function helmInstall(r, install, helm, state, reload) {
  const d = h("details", { "data-key": `helm-${r.id}`, open: state.open.has(r.id) },
    h("summary", {}, "Install this runner with helm"),
    !helm ? h("p", { class: "muted" }, "Loading…")
      : helm.error ? errorBox(helm.error)
        : [h("p", {}, "Run these in the customer's cluster, with <TOKEN> replaced by the runner's registration token ",
          "(issue one with ", h("code", {}, `outpostctl runners token ${install}`),
          ": it is shown once, in your terminal, never on this page)."),
        h("pre", { class: "helm-install" }, [helm.namespace_command, helm.secret_command, helm.command].join("\n"))]);
  d.addEventListener("toggle", () => {
    if (!d.open || state.open.has(r.id)) return;
    state.open.add(r.id);
    state.dirty = true;
    reload();
  });
  return d;
}

export const runnersView = { load, render };

// lastError is the runner's latest reported failure to reach the gateway:
// why it was offline, in its own words.
function lastError(r) {
  const e = (r.connection_errors || []).at(-1);
  if (!e) return null;
  return [h("dt", {}, "Last connection error"),
    h("dd", { "data-connection-error": e.kind }, h("span", { class: "badge warn" }, e.kind), " ", e.message, " ", when(e.at))];
}
