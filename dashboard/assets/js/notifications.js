// The org's notification subscriptions: the list, a form to make one (a
// webhook's signing secret is shown once, in the answer to its creation),
// Delete, and a subscription's deliveries with their tries and Redeliver.
import * as api from "./api.js";
import { h, badge, when, confirm, errorBox, refusal } from "./ui.js";

// EVENT_TYPES are the API's event types (contract.EventTypes; the
// dashboard's Go test keeps the two the same).
export const EVENT_TYPES = ["operation.succeeded", "operation.failed", "operation.waiting_for_approval", "release.finished", "release.halted", "policy.denied", "drift.found", "runner.offline", "health.changed"];

// STATE_TONES colour a delivery's state as the badges colour a status.
const STATE_TONES = { delivered: "good", failed: "bad", pending: "busy" };

async function load(_params, state) {
  state.open ||= new Set();
  state.message ||= h("div", { id: "notify-message", "aria-live": "polite" });
  const [subs, apps] = await Promise.all([api.get("/notifications/subscriptions"), api.get("/apps")]);
  const list = subs.data.subscriptions;
  const opened = list.filter((s) => state.open.has(s.id));
  const deliveries = await Promise.all(opened.map((s) => api.get(`/notifications/subscriptions/${s.id}/deliveries?limit=20`)));
  const byID = new Map(opened.map((s, i) => [s.id, deliveries[i].data.deliveries]));
  const changed = state.dirty || [subs, apps, ...deliveries].some((r) => r.changed);
  state.dirty = false;
  return { changed, data: { subs: list, apps: apps.data.apps, deliveries: byID } };
}

function render(d, _params, state, reload) {
  // The form is kept in state: what was typed outlives the poll's re-renders.
  state.form ||= createForm(d.apps, state, reload);
  const names = new Map(d.apps.map((a) => [a.id, a.name]));
  return h("section", { class: "notifications" },
    h("h1", {}, "Notifications"),
    h("p", { class: "muted" }, "The org's events sent to a webhook (a signed JSON POST) or a Slack incoming webhook."),
    state.message,
    h("h2", {}, "Subscriptions"),
    d.subs.length ? h("div", { class: "subscriptions" }, ...d.subs.map((s) => card(s, names, d.deliveries.get(s.id), state, reload)))
      : h("p", { class: "muted", id: "subscriptions-none" }, "No subscriptions yet: make one below, or with ",
        h("code", {}, "outpostctl notifications create"), "."),
    h("h2", {}, "New subscription"),
    state.form);
}

// createForm is the form that makes a subscription; a webhook's secret is
// shown in the message, once (it is not kept anywhere else).
function createForm(apps, state, reload) {
  const name = h("input", { id: "sub-name", type: "text", autocomplete: "off" });
  const url = h("input", { id: "sub-url", type: "url", autocomplete: "off", placeholder: "https://hooks.example.com/outpost" });
  const channel = h("select", { id: "sub-channel" }, h("option", { value: "webhook" }, "webhook (signed JSON)"), h("option", { value: "slack" }, "slack"));
  const selector = h("input", { id: "sub-selector", type: "text", autocomplete: "off", placeholder: "tier=gold" });
  const offline = h("input", { id: "sub-offline", type: "number", min: "1", max: "10079", placeholder: "10" });
  const events = EVENT_TYPES.map((t) => h("input", { type: "checkbox", value: t, id: `sub-event-${t}` }));
  const appBoxes = apps.map((a) => h("input", { type: "checkbox", value: a.id, id: `sub-app-${a.id}` }));
  const form = h("form", { class: "card sub-form", "aria-label": "New subscription" },
    labelled("Name", name),
    h("fieldset", { id: "sub-events" }, h("legend", {}, "Events"), events.map((e) => h("label", { class: "check", "data-event": e.value }, e, " ", e.value))),
    labelled("Channel", channel),
    labelled("URL", url),
    h("fieldset", { id: "sub-apps" }, h("legend", {}, "Only these apps (none: every app)"),
      appBoxes.length ? appBoxes.map((b, i) => h("label", { class: "check", "data-app": b.value }, b, " ", apps[i].name)) : h("span", { class: "muted" }, "no apps yet")),
    labelled("Only installs whose labels match (optional)", selector),
    labelled("runner.offline after this many minutes offline (default 10)", offline),
    h("div", { class: "buttons" }, h("button", { type: "submit", id: "sub-create" }, "Subscribe")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { name: name.value, channel: channel.value, url: url.value, label_selector: selector.value || undefined,
      event_types: events.filter((e) => e.checked).map((e) => e.value), app_ids: appBoxes.filter((b) => b.checked).map((b) => b.value),
      runner_offline_minutes: offline.value ? Number(offline.value) : undefined };
    try {
      const sub = await api.send("POST", "/notifications/subscriptions", body);
      form.reset();
      state.message.replaceChildren(created(sub));
    } catch (err) {
      state.message.replaceChildren(refusal(err));
    }
    state.dirty = true;
    reload();
  });
  return form;
}

function labelled(text, control) {
  return h("div", { class: "field" }, h("label", { for: control.id }, text), control);
}

// created says the subscription was made and shows a webhook's secret: the
// only time the API gives it.
function created(sub) {
  if (!sub.secret) return h("p", { class: "ok" }, `Subscribed ${sub.name}.`);
  return h("div", { class: "card secret", id: "sub-secret-box" },
    h("p", { class: "ok" }, `Subscribed ${sub.name}. Its signing secret, shown this once (verify each delivery's Outpost-Signature with it):`),
    h("pre", { id: "sub-secret" }, sub.secret));
}

function card(s, names, deliveries, state, reload) {
  const del = h("button", { type: "button", class: "small danger", "data-delete": s.id }, "Delete");
  del.addEventListener("click", () => change(state, reload, `Delete ${s.name}`, `Delete the subscription ${s.name} and its deliveries?`,
    "DELETE", `/notifications/subscriptions/${s.id}`, `Deleted ${s.name}.`));
  const apps = s.app_ids.length ? s.app_ids.map((id) => names.get(id) || id).join(", ") : "every app";
  const d = h("details", { "data-key": `deliveries-${s.id}`, open: state.open.has(s.id) },
    h("summary", {}, "Deliveries"),
    deliveries ? deliveriesView(deliveries, state, reload) : h("p", { class: "muted" }, "Loading…"));
  d.addEventListener("toggle", () => {
    if (!d.open || state.open.has(s.id)) return;
    state.open.add(s.id);
    state.dirty = true;
    reload();
  });
  return h("article", { class: "card subscription", "data-subscription": s.name },
    h("h3", {}, s.name, " ", badge(s.enabled ? "active" : "disabled"), " ", del),
    h("dl", { class: "facts" },
      [h("dt", {}, "Channel"), h("dd", {}, s.channel)],
      [h("dt", {}, "URL"), h("dd", { class: "mono" }, s.url)],
      [h("dt", {}, "Events"), h("dd", {}, s.event_types.join(", "))],
      [h("dt", {}, "Apps"), h("dd", {}, apps)],
      s.label_selector ? [h("dt", {}, "Labels"), h("dd", { class: "mono" }, s.label_selector)] : null,
      s.event_types.includes("runner.offline") ? [h("dt", {}, "Runner offline after"), h("dd", {}, `${s.runner_offline_minutes} min`)] : null,
      [h("dt", {}, "Created"), h("dd", {}, when(s.created_at))]),
    d);
}

function deliveriesView(list, state, reload) {
  if (!list.length) return h("p", { class: "muted" }, "No deliveries yet: one is made for each matching event.");
  return h("div", { class: "scroll" }, h("table", { class: "deliveries" },
    h("thead", {}, h("tr", {}, ...["Event", "State", "Tries", "Created", ""].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...list.map((dl) => h("tr", { "data-delivery": dl.id },
      h("td", { "data-label": "Event" }, dl.event_type, h("span", { class: "sub mono" }, dl.event_id)),
      h("td", { "data-label": "State" }, h("span", { class: `badge ${STATE_TONES[dl.state] || "plain"}` }, dl.state)),
      h("td", { "data-label": "Tries" }, h("ol", { class: "attempts" }, ...dl.attempts.map((a) => h("li", {},
        a.status_code ? h("span", { class: "mono" }, String(a.status_code)) : null, a.error ? h("span", { class: "error" }, " ", a.error) : null,
        " ", when(a.at))))),
      h("td", { "data-label": "Created" }, when(dl.created_at)),
      h("td", {}, h("button", { type: "button", class: "small", "data-redeliver": dl.id,
        onclick: () => change(state, reload, "Redeliver", `Send the ${dl.event_type} event again, as a new delivery?`,
          "POST", `/notifications/deliveries/${dl.id}/redeliver`, "Redelivery started.") }, "Redeliver")))))));
}

// change asks, calls the API and says what happened.
async function change(state, reload, title, text, method, path, done) {
  if (!(await confirm(title, text))) return;
  try {
    await api.send(method, path);
    state.message.replaceChildren(h("p", { class: "ok" }, done));
  } catch (err) {
    state.message.replaceChildren(errorBox(err));
  }
  state.dirty = true;
  reload();
}

export const notificationsView = { load, render };
