// What the actions and runbooks panels share: reading the install's
// actions or runbooks with their last runs, and the Run form (a field per
// typed input, kept in the panel's state across the poll's re-renders) and
// the post of the run it starts.
import * as api from "./api.js";
import { h } from "./ui.js";

// loadWithRuns reads the install's actions or runbooks (kind: the API's path
// and answer key) and each one's last runs, with the answers more reads of
// those runs (their details) in their place. An install with no config
// version yet has none (409): that is shown, not thrown. state keeps the
// forms and messages across polls; dirty asks for a re-render after a change
// made on the page.
export async function loadWithRuns(base, kind, state, more = async () => []) {
  state.forms ||= new Map();
  state.said ||= new Map();
  let list;
  try {
    list = await api.get(`${base}/${kind}`);
  } catch (err) {
    if (err.status !== 409) throw err;
    const changed = state.dirty || state.none !== err.message;
    state.none = err.message;
    state.dirty = false;
    return { changed, data: { none: err.message, [kind]: [] } };
  }
  const defs = list.data[kind];
  const runs = await Promise.all(defs.map((d) => api.get(`${base}/${kind}/${encodeURIComponent(d.name)}/runs?limit=5`)));
  const full = await more(runs.flatMap((r) => r.data.runs));
  const detail = new Map(full.map((f) => [f.data.id, f.data]));
  const changed = state.dirty || state.none !== undefined || [list, ...runs, ...full].some((r) => r.changed);
  state.none = undefined;
  state.dirty = false;
  return { changed, data: { [kind]: defs.map((d, i) => ({ ...d, runs: runs[i].data.runs.map((r) => detail.get(r.id) || r) })) } };
}

// toggleRunForm opens the Run form of def, an action or a runbook (what),
// or closes it. attrs name the form's attribute and its submit button's ID
// prefix; submit gets the fields when it is sent.
export function toggleRunForm(def, what, attrs, state, submit) {
  if (state.forms.has(def.name)) {
    state.forms.delete(def.name);
    state.dirty = true;
    return;
  }
  const fields = def.inputs.map(field);
  const form = h("form", { class: "run-form", [attrs.form]: def.name, "aria-label": `Run ${def.name}` },
    fields.length ? fields.map((f) => f.node) : h("p", { class: "muted" }, `This ${what} takes no inputs.`),
    h("div", { class: "buttons" }, h("button", { type: "submit", id: `${attrs.submit}-${def.name}` }, `Run ${def.name}`)));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(fields);
  });
  state.forms.set(def.name, form);
  state.dirty = true;
}

// postRun posts a run with the fields' inputs to url and answers it; a
// refusal (a bad input, the runner's policy, a viewer's missing permission)
// marks the field it names and is thrown.
export async function postRun(url, fields) {
  const inputs = {};
  for (const f of fields) {
    f.control.removeAttribute("aria-invalid");
    const v = f.value();
    if (v !== undefined) inputs[f.name] = v;
  }
  try {
    return await api.send("POST", url, { inputs });
  } catch (err) {
    const named = fields.find((f) => err.field === `inputs.${f.name}`);
    if (named) named.control.setAttribute("aria-invalid", "true");
    throw err;
  }
}

// field is one typed input: a password field when sensitive, a checkbox for
// a bool, JSON text for a list or map. value() is its text, or undefined
// (not sent: the default applies).
export function field(i) {
  const id = `input-${i.name}`;
  let control;
  if (i.type === "bool") {
    control = h("input", { type: "checkbox", id, name: i.name, checked: i.default === true });
  } else if (i.type === "list" || i.type === "map") {
    control = h("textarea", { id, name: i.name, rows: 2, placeholder: i.type === "list" ? '["a", "b"]' : '{"k": "v"}' },
      i.default !== undefined ? JSON.stringify(i.default) : "");
  } else {
    control = h("input", { type: i.sensitive ? "password" : i.type === "number" ? "number" : "text", step: i.type === "number" ? "any" : null,
      id, name: i.name, autocomplete: i.sensitive ? "new-password" : "off", value: i.default ?? null, "aria-required": i.required ? "true" : null });
  }
  const label = h("label", { for: id }, i.name, h("span", { class: "muted" }, ` ${i.type}${i.required ? ", required" : ""}${i.sensitive ? ", sensitive" : ""}`));
  const value = () => (i.type === "bool" ? String(control.checked) : control.value === "" ? undefined : control.value);
  return { name: i.name, control, value, node: h("div", { class: "field" }, label, control, i.description ? h("small", { class: "muted" }, i.description) : null) };
}

