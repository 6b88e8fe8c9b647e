// The page's only way to the server: the public API (/v1) with the session
// cookie, and the session endpoint. GET answers are kept with their ETag and
// asked for again with If-None-Match, so a poll that finds nothing new costs
// a 304 and re-renders nothing.

const cache = new Map(); // path -> {etag, data}
let csrfToken = "";

export class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.field = body && body.field;
  }
}

async function fail(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  return new APIError(res.status, body);
}

// get answers {data, changed}: changed is false when the server said 304.
export async function get(path) {
  const kept = cache.get(path);
  const headers = { Accept: "application/json" };
  if (kept) headers["If-None-Match"] = kept.etag;
  const res = await fetch("/v1" + path, { headers, cache: "no-store", credentials: "same-origin" });
  if (res.status === 304 && kept) return { data: kept.data, changed: false };
  if (!res.ok) throw await fail(res);
  const data = await res.json();
  const etag = res.headers.get("ETag");
  if (etag) cache.set(path, { etag, data });
  return { data, changed: true };
}

// send makes a change; the CSRF token proves the page sent it.
export async function send(method, path, body) {
  const res = await fetch("/v1" + path, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-Outpost-CSRF": csrfToken },
    body: JSON.stringify(body ?? {}),
    credentials: "same-origin",
  });
  if (!res.ok) throw await fail(res);
  return res.status === 204 ? null : res.json();
}

async function session(method, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch("/ui/session", init);
  if (!res.ok) throw await fail(res);
  return res.status === 204 ? null : res.json();
}

// resume picks up the session the cookie holds, if any.
export async function resume() {
  const s = await session("GET");
  csrfToken = s.csrf_token;
}

export async function signIn(credentials) {
  const s = await session("POST", credentials);
  csrfToken = s.csrf_token;
}

export async function signOut() {
  cache.clear();
  csrfToken = "";
  await session("DELETE");
}
