// A job's log, followed live (Server-Sent Events from GET /v1/jobs/:id/logs
// ?follow=true) in a fixed-height box that keeps to the end while the viewer
// is there, its ANSI colours as spans, and a search that filters and marks
// the matching lines.
import { h, badge } from "./ui.js";
import { Ansi } from "./ansi.js";

export class LogView {
  constructor(job) {
    this.job = job;
    this.lines = [];
    this.ansi = new Ansi();
    this.partial = "";
    this.query = "";
    this.stick = true; // the box keeps to the end
    this.top = 0;
    this.state = h("span", { class: "log-state", "aria-live": "polite" }, badge("following"));
    this.count = h("span", { class: "muted log-count" });
    this.search = h("input", { id: "log-search", type: "search", placeholder: "Search the log", "aria-label": "Search the log" });
    this.search.addEventListener("input", () => this.filter(this.search.value));
    this.box = h("div", { class: "logbox mono", role: "log", tabindex: "0", "aria-label": `Log of job ${job.id}` },
      h("p", { class: "muted log-empty" }, "No output yet."));
    this.box.addEventListener("scroll", () => this.scrolled());
    this.node = h("section", { class: "log card", "data-log": job.id },
      h("div", { class: "toolbar" }, h("strong", {}, `${job.kind} job `, h("span", { class: "mono" }, job.id)),
        this.state, this.count, this.search),
      this.box);
    this.follow();
  }

  follow() {
    this.source = new EventSource(`/v1/jobs/${encodeURIComponent(this.job.id)}/logs?follow=true`);
    this.source.addEventListener("log", (ev) => this.add(JSON.parse(ev.data).data));
    this.source.addEventListener("end", (ev) => this.end(JSON.parse(ev.data)));
    this.source.addEventListener("error", (ev) => {
      if (ev.data) this.state.replaceChildren(h("span", { class: "error" }, JSON.parse(ev.data).message));
      else if (this.source.readyState === EventSource.CLOSED) this.state.replaceChildren(h("span", { class: "error" }, "The log could not be read: choose Log again."));
    });
    // Leaving the page leaves the box out of the document: stop following.
    this.watch = setInterval(() => { if (!this.node.isConnected) this.close(); }, 2000);
  }

  close() {
    this.source.close();
    clearInterval(this.watch);
  }

  end(e) {
    this.close();
    this.flushPartial();
    this.state.replaceChildren(h("span", {}, "ended ", badge(e.status), e.error ? h("span", { class: "error" }, " ", e.error) : null));
  }

  // add takes a chunk (a line with its newline, or a piece of a long one).
  add(data) {
    const parts = (this.partial + data).split("\n");
    this.partial = parts.pop();
    this.append(parts);
  }

  flushPartial() {
    if (this.partial) this.append([this.partial]);
    this.partial = "";
  }

  append(texts) {
    if (texts.length === 0) return;
    if (this.lines.length === 0) this.box.replaceChildren();
    for (const raw of texts) {
      const segs = this.ansi.segments(raw.replace(/\r$/, ""));
      const line = { segs, text: segs.map((s) => s.text).join(""), el: h("div", { class: "line" }) };
      this.lines.push(line);
      this.show(line);
      this.box.append(line.el);
    }
    this.counted();
    if (this.stick) this.box.scrollTop = this.box.scrollHeight;
  }

  scrolled() {
    if (!this.box.isConnected) return;
    this.top = this.box.scrollTop;
    this.stick = this.box.scrollTop + this.box.clientHeight >= this.box.scrollHeight - 8;
  }

  // attached puts the box back where it was after the page re-rendered.
  attached() {
    this.box.scrollTop = this.stick ? this.box.scrollHeight : this.top;
  }

  filter(q) {
    this.query = q.toLowerCase();
    for (const line of this.lines) this.show(line);
    this.counted();
    if (this.stick) this.box.scrollTop = this.box.scrollHeight;
  }

  // show renders a line's segments, hiding it when it does not match and
  // marking what matches.
  show(line) {
    const q = this.query;
    line.el.hidden = q !== "" && !line.text.toLowerCase().includes(q);
    line.el.replaceChildren(...line.segs.map((s) => h("span", { class: s.cls || null }, q ? marked(s.text, q) : s.text)));
    if (line.el.childNodes.length === 0) line.el.append("\u00a0");
  }

  counted() {
    const shown = this.query ? this.lines.filter((l) => !l.el.hidden).length : this.lines.length;
    this.count.textContent = this.query ? `${shown} of ${this.lines.length} lines match` : `${this.lines.length} lines`;
  }
}

// marked is text with each case-insensitive match of q in a <mark>.
function marked(text, q) {
  const out = [];
  const low = text.toLowerCase();
  let at = 0;
  for (let i = low.indexOf(q); i >= 0; i = low.indexOf(q, at)) {
    if (i > at) out.push(text.slice(at, i));
    out.push(h("mark", {}, text.slice(i, i + q.length)));
    at = i + q.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}
