// The dashboard's shell: the session, the hash router and the poll that
// keeps the shown page live.
import * as api from "./api.js";
import { h, errorBox } from "./ui.js";
import { signInView } from "./signin.js";
import { installsView } from "./installs.js";
import { installView } from "./install.js";
import { operationView } from "./operation.js";
import { runbookRunView } from "./runbookrun.js";
import { appsView } from "./appsview.js";
import { appView } from "./appview.js";
import { releasesView } from "./releases.js";
import { runnersView } from "./runners.js";
import { notificationsView } from "./notifications.js";

const POLL_MS = 3000;
const view = document.getElementById("view");
let current = null; // {page, params, state}
let timer = 0;

const routes = [
  [/^#\/installs\/([\w-]+)\/operations\/([\w-]+)$/, operationView],
  [/^#\/installs\/([\w-]+)\/runbook-runs\/([\w-]+)$/, runbookRunView],
  [/^#\/installs\/([\w-]+)$/, installView],
  [/^#\/installs$/, installsView],
  [/^#\/apps\/([\w-]+)\/releases$/, releasesView],
  [/^#\/apps\/([\w-]+)$/, appView],
  [/^#\/apps$/, appsView],
  [/^#\/runners$/, runnersView],
  [/^#\/notifications$/, notificationsView],
];

function route() {
  for (const [re, page] of routes) {
    const m = location.hash.match(re);
    if (m) return { page, params: m.slice(1) };
  }
  return { page: installsView, params: [] };
}

// show loads and renders the page the hash names.
async function show() {
  clearTimeout(timer);
  current = { ...route(), state: {} };
  view.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  await refresh(current, true);
}

// refresh reloads the current page's data and re-renders it when it changed
// (keeping focus and open sections), then polls again.
async function refresh(cur, first) {
  if (cur !== current) return;
  try {
    const { changed, data } = await cur.page.load(cur.params, cur.state);
    if (cur !== current) return;
    if (changed || first) swap(cur.page.render(data, cur.params, cur.state, () => refresh(cur, false)));
  } catch (err) {
    if (err.status === 401) return signedOut();
    if (cur !== current) return;
    swap(h("section", {}, errorBox(err), h("p", {}, h("a", { href: "#/installs" }, "Back to the installs"))));
    if (err.status === 404) return;
  }
  clearTimeout(timer);
  timer = setTimeout(() => refresh(cur, false), POLL_MS);
}

function swap(node) {
  const focused = document.activeElement && document.activeElement.id;
  const open = [...view.querySelectorAll("details[open][data-key]")].map((d) => d.dataset.key);
  view.replaceChildren(node);
  for (const key of open) {
    const d = view.querySelector(`details[data-key="${CSS.escape(key)}"]`);
    if (d) d.open = true;
  }
  if (focused) document.getElementById(focused)?.focus();
}

async function signedIn() {
  const { data: org } = await api.get("/org");
  document.getElementById("org").textContent = org.name;
  document.getElementById("nav").hidden = false;
  document.getElementById("signout").hidden = false;
  window.addEventListener("hashchange", show);
  await show();
}

function signedOut() {
  clearTimeout(timer);
  current = null;
  window.removeEventListener("hashchange", show);
  document.getElementById("org").textContent = "";
  document.getElementById("nav").hidden = true;
  document.getElementById("signout").hidden = true;
  view.replaceChildren(signInView(async (credentials) => {
    await api.signIn(credentials);
    await signedIn();
  }));
  view.querySelector("input")?.focus();
}

document.getElementById("signout").addEventListener("click", async () => {
  await api.signOut();
  signedOut();
});

document.addEventListener("visibilitychange", () => {
  if (!document.hidden && current) refresh(current, false);
});

try {
  await api.resume();
  await signedIn();
} catch (err) {
  if (err.status !== 401) console.error(err);
  signedOut();
}
