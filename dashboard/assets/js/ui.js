// Small DOM helpers: elements are built, never parsed from strings, so no
// value from the API can become markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// when shows a time in the viewer's zone, with the full time as its title.
export function when(iso) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const d = new Date(iso);
  return h("time", { datetime: iso, title: d.toLocaleString() }, relative(d));
}

function relative(d) {
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  if (s < 0) return d.toLocaleString();
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return d.toLocaleDateString() + " " + d.toLocaleTimeString();
}

export function duration(from, to) {
  if (!from) return "";
  const ms = (to ? new Date(to) : new Date()) - new Date(from);
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

// badge is a status word, coloured by what it means.
export function badge(status) {
  return h("span", { class: "badge " + tone(status) }, (status || "unknown").replaceAll("_", " "));
}

// opTitle is an operation's kind and status, and the offline mark of an
// imported offline deploy: what the install's list and the operation's page
// head it with.
export function opTitle(op) {
  return [op.kind.replaceAll("_", " "), " ", badge(op.status), offlineMark(op)];
}

// offlineMark marks an offline deploy imported from its result (it ran on an
// air-gapped machine, not through the install's runner), with the digest of
// the bundle index it deployed, short (the full one is its title); null for
// any other operation.
export function offlineMark(op) {
  if (op.source !== "offline") return null;
  const index = op.bundle_index || "";
  const short = index.replace(/^sha256:/, "").slice(0, 12);
  return [" ", h("span", { class: "badge plain offline-mark", "data-offline": index,
    title: `Deployed offline from the release bundle whose signed index is ${index}; imported from its result` },
    "offline · bundle ", short)];
}

// tone is a status's colour class: good, bad, warn, busy or plain.
export function tone(s) {
  if (["failed", "denied", "offline", "lost", "cancelled", "unhealthy"].includes(s)) return "bad";
  if (["waiting_approval", "rolled_back", "waiting_for_runner", "waiting_for_maintenance_window", "drifted", "left_behind", "degraded"].includes(s)) return "warn";
  if (["succeeded", "active", "online", "no_changes", "unchanged", "planned", "healthy"].includes(s)) return "good";
  if (["running", "provisioning", "deprovisioning", "planning", "applying", "building", "syncing"].includes(s)) return "busy";
  return "plain";
}

// confirm asks before a change; it resolves true only on Confirm.
export function confirm(title, text) {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true });
    dlg.returnValue = "";
    dlg.showModal();
    document.getElementById("confirm-ok").focus();
  });
}

export function errorBox(err) {
  return h("p", { class: "error", role: "alert" }, err.message || String(err));
}

// refusal is a refused change's message, with the field the API named
// (inputs.target, url…) when the message does not say it.
export function refusal(err) {
  const msg = err.message || String(err);
  return errorBox({ message: err.field && !msg.includes(err.field) ? `${err.field}: ${msg}` : msg });
}

// svg is h for SVG elements (the dependency graph).
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

