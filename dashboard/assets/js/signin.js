// The sign-in form: an API token, posted to the session endpoint, which
// keeps it in an HttpOnly cookie (the page never stores it).
import { h } from "./ui.js";

export function signInView(submit) {
  const input = h("input", { id: "token", type: "password", name: "token", autocomplete: "off", required: true,
    spellcheck: "false", "aria-describedby": "token-help" });
  const message = h("p", { id: "signin-error", class: "error", role: "alert", hidden: true });
  const button = h("button", { type: "submit", id: "signin" }, "Sign in");
  const form = h("form", { class: "card signin" },
    h("h1", {}, "Sign in"),
    h("label", { for: "token" }, "API token"),
    input,
    h("p", { id: "token-help", class: "muted" },
      "An API token of your org: `outpostctl tokens create NAME` makes one (`outpost dev` writes its admin token to .outpost/)."),
    message,
    button);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    message.hidden = true;
    try {
      await submit(input.value);
    } catch (err) {
      message.textContent = err.status === 401 ? "That token was refused: " + err.message : err.message;
      message.hidden = false;
      input.select();
    } finally {
      button.disabled = false;
    }
  });
  return form;
}
