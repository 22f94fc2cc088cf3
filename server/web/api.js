// The dashboard's shared state and its HTTP calls.
//
// The bearer token comes from the URL labmate serve prints (/?token=…), or the form the page
// shows on a 401. It is kept in sessionStorage — this origin and this tab only, never sent by
// the browser on its own (a cookie would be sent to every port of the host, and with any
// request a page elsewhere makes) — and taken out of the address bar at once. Every fetch
// sends it as Authorization: Bearer; the WebSocket, which cannot send headers, offers it as
// a subprotocol, labmate.bearer.BASE64URL(TOKEN), next to "labmate".
import { $ } from "./util.js";

// takeToken moves ?token=… from the address bar into sessionStorage.
function takeToken() {
  const params = new URLSearchParams(location.search);
  if (!params.has("token")) return;
  sessionStorage.setItem("labmate.token", params.get("token"));
  params.delete("token");
  const rest = params.toString();
  history.replaceState(history.state, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
}
takeToken();

export const state = {
  token: sessionStorage.getItem("labmate.token") || "",
  session: "",     // the session shown
  lastSeq: 0,      // the last seq rendered
  ws: null,
  retry: 0,
  ops: new Map(),  // operation id → its card
};


export async function api(method, path, body) {
  return (await request(method, path, body)).data;
}

// request is api with the response too (for its headers).
export async function request(method, path, body) {
  const headers = {};
  if (state.token) headers["Authorization"] = "Bearer " + state.token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401) {
    $("#auth").hidden = false;
    $("#token").focus();
    throw new Error("this server needs its bearer token");
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || method + " " + path + ": HTTP " + res.status);
  return { data, res };
}

// base64url encodes a string's UTF-8 bytes without padding (a subprotocol is a header token).
export function base64url(s) {
  const bin = Array.from(new TextEncoder().encode(s), (b) => String.fromCharCode(b)).join("");
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function showError(err) {
  const a = $("#alert");
  a.textContent = String(err && err.message ? err.message : err);
  a.hidden = false;
}

export function clearError() { $("#alert").hidden = true; }

export function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
