// ANSI SGR escapes (terraform's and helm's colours) as segments of text with
// classes; other escape sequences are dropped. Segments become spans with
// text nodes only, so nothing in a log can become markup.

const CSI = /\x1b\[([0-9;?]*)([@-~])|\x1b[@-Z\\-_]?/g;

// Ansi keeps the SGR state from one line to the next.
export class Ansi {
  constructor() { this.reset(); }

  reset() { this.bold = false; this.dim = false; this.italic = false; this.underline = false; this.fg = -1; this.bg = -1; }

  // segments splits text into [{text, cls}], cls the classes of its style.
  segments(text) {
    const out = [];
    let last = 0;
    for (const m of text.matchAll(CSI)) {
      if (m.index > last) out.push({ text: text.slice(last, m.index), cls: this.classes() });
      if (m[2] === "m") this.apply(m[1]);
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push({ text: text.slice(last), cls: this.classes() });
    return out;
  }

  classes() {
    const c = [];
    if (this.bold) c.push("ansi-bold");
    if (this.dim) c.push("ansi-dim");
    if (this.italic) c.push("ansi-italic");
    if (this.underline) c.push("ansi-underline");
    if (this.fg >= 0) c.push(`ansi-fg-${this.fg}`);
    if (this.bg >= 0) c.push(`ansi-bg-${this.bg}`);
    return c.join(" ");
  }

  // apply reads one SGR's parameters; 256-colour and RGB ones are skipped.
  apply(params) {
    const ps = params === "" ? [0] : params.split(";").map((p) => Number(p) || 0);
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i];
      if (p === 0) this.reset();
      else if (p === 1) this.bold = true;
      else if (p === 2) this.dim = true;
      else if (p === 3) this.italic = true;
      else if (p === 4) this.underline = true;
      else if (p === 22) { this.bold = false; this.dim = false; }
      else if (p === 23) this.italic = false;
      else if (p === 24) this.underline = false;
      else if (p >= 30 && p <= 37) this.fg = p - 30;
      else if (p >= 90 && p <= 97) this.fg = p - 90 + 8;
      else if (p === 39) this.fg = -1;
      else if (p >= 40 && p <= 47) this.bg = p - 40;
      else if (p >= 100 && p <= 107) this.bg = p - 100 + 8;
      else if (p === 49) this.bg = -1;
      else if (p === 38 || p === 48) i += ps[i + 1] === 5 ? 2 : 4;
    }
  }
}
