// The sign-in form: org, user and password, posted to the session endpoint;
// the server keeps the session and the cookie holds only its ID (HttpOnly:
// the page never sees it).
import { h } from "./ui.js";

function field(name, label, attrs) {
  const id = "signin-" + name; // the header's #org is the signed-in org's name
  return [h("label", { for: id }, label),
    h("input", { id, name, required: true, spellcheck: "false", ...attrs })];
}

export function signInView(submit) {
  const [orgLabel, org] = field("org", "Org", { type: "text", autocomplete: "organization" });
  const [userLabel, user] = field("user", "User", { type: "text", autocomplete: "username" });
  const [passwordLabel, password] = field("password", "Password", { type: "password", autocomplete: "current-password",
    "aria-describedby": "signin-help" });
  const message = h("p", { id: "signin-error", class: "error", role: "alert", hidden: true });
  const button = h("button", { type: "submit", id: "signin" }, "Sign in");
  // Shown when the org signs in with its identity provider (single sign-on).
  const sso = h("a", { id: "signin-sso", class: "sso", href: "#", hidden: true }, "Sign in with SSO");
  const checkSSO = async () => {
    const name = org.value.trim();
    const res = name ? await fetch("/auth/oidc/status?org=" + encodeURIComponent(name)).catch(() => null) : null;
    const on = res && res.ok && (await res.json()).sso === true && org.value.trim() === name;
    sso.href = "/auth/oidc/login?org=" + encodeURIComponent(name);
    sso.hidden = !on;
  };
  org.addEventListener("change", checkSSO);
  org.addEventListener("input", checkSSO);
  org.value = new URLSearchParams(location.search).get("org") || "";
  if (org.value) checkSSO();
  const form = h("form", { class: "card signin" },
    h("h1", {}, "Sign in"),
    orgLabel, org, userLabel, user, passwordLabel, password,
    h("p", { id: "signin-help", class: "muted" },
      "`outpost org create` and `outpost dev` print the org's admin user and password once."),
    message,
    button,
    sso);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    message.hidden = true;
    try {
      await submit({ org: org.value, user: user.value, password: password.value });
    } catch (err) {
      message.textContent = err.status === 401 ? "Sign-in refused: " + err.message : err.message;
      message.hidden = false;
      password.select();
    } finally {
      button.disabled = false;
    }
  });
  return form;
}
