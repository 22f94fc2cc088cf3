// labmate dashboard: the protocol's sessions and operations, live over the WebSocket
// (resumed with after=SEQ when the connection drops; a reload replays the session's log),
// and a cell runner. Plain JS, no build step, nothing from the network but this server.
//
// The bearer token comes from the URL labmate serve prints (/?token=…), or the form the page
// shows on a 401. It is kept in sessionStorage — this origin and this tab only, never sent by
// the browser on its own (a cookie would be sent to every port of the host, and with any
// request a page elsewhere makes) — and taken out of the address bar at once. Every fetch
// sends it as Authorization: Bearer; the WebSocket, which cannot send headers, offers it as
// a subprotocol, labmate.bearer.BASE64URL(TOKEN), next to "labmate".
import { $, el, short, clock, when, bytes, duration } from "./util.js";
import { SVG, addSample, mark, niceTicks, axes, svgAdder } from "./charts.js";
import { runLine } from "./timeline.js";

const MAX_LINES = 4000; // per operation in the page; the whole stream is in the log

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

// ---------- HTTP ----------

async function api(method, path, body) {
  return (await request(method, path, body)).data;
}

// request is api with the response too (for its headers).
async function request(method, path, body) {
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
function base64url(s) {
  const bin = Array.from(new TextEncoder().encode(s), (b) => String.fromCharCode(b)).join("");
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function showError(err) {
  const a = $("#alert");
  a.textContent = String(err && err.message ? err.message : err);
  a.hidden = false;
}

function clearError() { $("#alert").hidden = true; }

function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}


// ---------- sessions ----------

async function loadKernels() {
  const list = (await api("GET", "/v1/kernels")) || [];
  for (const sel of [$("#kernel"), $("#run-kernel")]) {
    sel.replaceChildren();
    for (const k of list) {
      const o = document.createElement("option");
      o.value = k.name;
      o.textContent = k.error ? `${k.name} (not available)` : `${k.name} ${k.version || ""}`.trim();
      o.disabled = !!k.error;
      sel.append(o);
    }
    const saved = localStorage.getItem("labmate.kernel");
    if (saved && list.some((k) => k.name === saved && !k.error)) sel.value = saved;
  }
}

// loadSessions lists the sessions, newest first: each with its name (renamed inline) or its
// id, a Close button, and dimmed once closed (hidden when "show closed" is off).
async function loadSessions() {
  const list = (await api("GET", "/v1/sessions")) || [];
  if (state.session && !list.some((s) => s.id === state.session)) list.push({ id: state.session, operations: 0 }); // new: no operation yet
  state.sessionList = new Map(list.map((s) => [s.id, s]));
  showSessionName();
  const ul = $("#sessions");
  const showClosed = $("#show-closed").checked;
  const key = JSON.stringify([showClosed, list.map((s) => [s.id, s.operations, s.name, s.closed, s.kind, s.title, s.updated])]);
  if (key === state.sessionsKey || state.renaming) return; // unchanged, or being renamed: keep the DOM (and the keyboard focus)
  state.sessionsKey = key;
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.session : undefined;
  ul.replaceChildren();
  for (const s of list.slice().reverse()) {
    if (s.closed && !showClosed && s.id !== state.session) continue;
    const li = el("li", "sess" + (s.closed ? " closed" : ""));
    li.dataset.session = s.id;
    const b = el("button", "open");
    b.type = "button";
    b.dataset.session = s.id;
    const label = s.name || s.title || short(s.id);
    const at = s.updated || s.created;
    const what = `${s.operations} op${s.operations === 1 ? "" : "s"}${at ? " · " + when(at) : ""}`;
    if (s.kind) b.append(el("span", "kind", s.kind === "campaign" ? "campaign" : "run"));
    b.append(el("span", "name", label), el("span", "count", `${what}${s.closed ? " · closed" : ""}`));
    b.title = s.id;
    b.setAttribute("aria-label", `${s.kind === "campaign" ? "campaign" : s.kind ? "agent run" : "session"} ${s.name ? s.name + " (" + s.id + ")" : s.id}, ${what}${s.closed ? ", closed" : ""}`);
    if (s.id === state.session) b.setAttribute("aria-current", "true");
    b.addEventListener("click", () => (s.kind === "campaign" ? openCampaign(s.id) : openSession(s.id)));
    const rn = el("button", "secondary small rename", "Rename");
    rn.type = "button";
    rn.setAttribute("aria-label", "Rename session " + label);
    rn.addEventListener("click", () => renameSession(li, s));
    li.append(b, rn);
    if (!s.closed && s.operations > 0) {
      const cl = el("button", "secondary small close", "Close");
      cl.type = "button";
      cl.setAttribute("aria-label", "Close session " + label + ": stop its kernels");
      cl.addEventListener("click", () => closeSession(s.id, cl));
      li.append(cl);
    }
    ul.append(li);
    if (focused === s.id) b.focus();
  }
}



function showSessionName() {
  const s = state.sessionList && state.sessionList.get(state.session);
  const name = s && (s.name || s.title) ? `${s.name || s.title} (${short(state.session)})` : state.session;
  $("#session-name").textContent = state.session ? `in ${s && s.kind ? "run" : "session"} ${name}${s && s.closed ? " — closed; a cell reopens it" : ""}` : "";
}

// renameSession turns a session's entry into a name field: Enter saves, Escape cancels.
function renameSession(li, s) {
  state.renaming = true;
  const form = el("form", "rename-form");
  const input = el("input");
  input.value = s.name || "";
  input.maxLength = 80;
  input.placeholder = short(s.id);
  input.setAttribute("aria-label", "New name of session " + s.id);
  const save = el("button", "small", "Save");
  save.type = "submit";
  const done = () => { state.renaming = false; state.sessionsKey = ""; loadSessions().catch(showError); };
  input.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { ev.preventDefault(); done(); } });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearError();
    try {
      await api("PATCH", "/v1/sessions/" + encodeURIComponent(s.id), { name: input.value });
      done();
    } catch (e) { showError(e); input.focus(); }
  });
  form.append(input, save);
  li.replaceChildren(form);
  input.focus();
  input.select();
}

async function closeSession(id, button) {
  clearError();
  button.disabled = true;
  try {
    await api("POST", "/v1/sessions/" + encodeURIComponent(id) + "/close");
    await loadSessions();
  } catch (e) { showError(e); button.disabled = false; }
}

function openSession(id, focusOp) {
  if (state.ws) { state.ws.onclose = null; state.ws.close(); state.ws = null; }
  state.session = id;
  state.focusOp = focusOp || "";
  state.lastSeq = 0;
  state.retry = 0;
  state.ops.clear();
  sessionStorage.setItem("labmate.session", id);
  history.replaceState(null, "", "#lab/" + encodeURIComponent(id));
  $("#stream").replaceChildren();
  $("#history").replaceChildren();
  $("#deck").replaceChildren();
  $("#bench").hidden = true;
  scheduleBench();
  // An agent run's page is its timeline: no cell form (nor is a job's or a campaign's).
  const known = state.sessionList && state.sessionList.get(id);
  $("#cell").hidden = !!(known && known.kind);
  $("#runner-title").textContent = known && known.kind === "agent_run" ? "Agent run" : "Run a cell";
  state.runErrors = new Set();
  state.plans = 0;
  showSessionName();
  state.run = null;
  showRunBar();
  for (const b of document.querySelectorAll("#sessions button")) {
    if (b.dataset.session === id) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
  }
  connect();
}

async function newSession() {
  try {
    const { id } = await api("POST", "/v1/sessions");
    openSession(id);
    await loadSessions();
    $("#code").focus();
  } catch (e) { showError(e); }
}

// ---------- the live stream ----------

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const url = `${proto}//${location.host}/v1/sessions/${encodeURIComponent(state.session)}/ws?after=${state.lastSeq}`;
  const ws = state.token ? new WebSocket(url, ["labmate", "labmate.bearer." + base64url(state.token)]) : new WebSocket(url);
  state.ws = ws;
  const conn = $("#conn");
  conn.textContent = "connecting…";
  conn.className = "conn";
  ws.onopen = () => { state.retry = 0; conn.textContent = "live"; conn.className = "conn live"; };
  ws.onmessage = (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch { return; }
    if (m.type === "error") { showError("the server refused a message: " + m.error); return; }
    if (m.seq <= state.lastSeq) return;
    state.lastSeq = m.seq;
    render(m);
  };
  ws.onclose = (ev) => {
    if (state.ws !== ws) return;
    conn.textContent = `disconnected${ev.reason ? " (" + ev.reason + ")" : ""}; resuming…`;
    conn.className = "conn down";
    const delay = Math.min(5000, 200 * 2 ** state.retry++);
    setTimeout(() => { if (state.ws === ws) connect(); }, delay);
  };
}

function send(type, opID, payload) {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) {
    showError("not connected to the session yet; try again in a moment");
    return false;
  }
  state.ws.send(JSON.stringify({ id: uuid(), type, payload, timestamp: Date.now() / 1000,
    session_id: state.session, operation_id: opID }));
  return true;
}


// card returns the operation's card, making it (and its history entry) on first sight.
function card(m) {
  let c = state.ops.get(m.operation_id);
  if (c) return c;
  const root = el("article", "op");
  root.id = "op-" + m.operation_id;
  root.setAttribute("aria-label", "operation " + m.operation_id);
  const head = el("header");
  const title = el("h3", "", short(m.operation_id));
  title.title = m.operation_id;
  const badge = el("span", "badge", "requested");
  const kernel = el("span", "muted");
  const stop = el("button", "danger", "Interrupt");
  stop.type = "button";
  stop.hidden = true;
  stop.setAttribute("aria-label", "Interrupt operation " + short(m.operation_id));
  stop.addEventListener("click", () => {
    const c = state.ops.get(m.operation_id);
    if (c && c.jobID) { // a job is cancelled through its scheduler: it outlives the operation
      stop.disabled = true;
      cancelJob(c.jobID).catch((e) => { stop.disabled = false; showError(e); });
      return;
    }
    if (send("operation_interrupt", m.operation_id, { why: "interrupted from the dashboard" })) stop.disabled = true;
  });
  const at = el("time", "at", clock(m.timestamp));
  at.dateTime = new Date(m.timestamp * 1000).toISOString();
  head.append(title, kernel, at, badge, stop);
  const code = el("pre", "code");
  const jspec = el("p", "job-spec");
  const jstate = el("p", "job-state");
  jstate.setAttribute("aria-label", "the job's state");
  const verdicts = el("div", "verdicts");
  const tele = el("div", "telemetry");
  const out = el("pre", "out");
  out.setAttribute("aria-label", "output of " + short(m.operation_id));
  const arts = el("div", "artifacts");
  arts.setAttribute("aria-label", "files written by " + short(m.operation_id));
  const end = el("p", "end");
  root.append(head, code, jspec, jstate, verdicts, tele, out, arts, end);
  $("#stream").append(root);

  const li = document.createElement("li");
  const a = el("a", "", short(m.operation_id) + " ");
  a.href = "#op-" + m.operation_id;
  const hs = el("span", "state", "requested");
  a.append(hs);
  a.addEventListener("click", (ev) => { ev.preventDefault(); focus(state.ops.get(m.operation_id)); });
  li.append(a);
  $("#history").append(li);

  c = { root, badge, kernel, stop, code, jspec, jstate, verdicts, tele, out, arts, end, hs, lines: 0, hidden: 0 };
  state.ops.set(m.operation_id, c);
  return c;
}

function setState(c, label, cls) {
  c.badge.textContent = label;
  c.badge.className = "badge " + (cls || "");
  c.hs.textContent = label;
}

// addLine queues a line of an operation's output; the lines of a frame are added at once
// (one layout, one scroll), keeping the newest MAX_LINES, so a 10,000-line operation or a
// replayed log does not lay the page out 10,000 times.
function addLine(c, text, cls) {
  (c.pendingLines ||= []).push(cls ? [text, cls] : [text]);
  if (c.lineFrame) return;
  const flush = () => { if (c.lineFrame) { cancelAnimationFrame(c.lineFrame); clearTimeout(c.lineTimer); c.lineFrame = 0; flushLines(c); } };
  c.lineFrame = requestAnimationFrame(flush);
  c.lineTimer = setTimeout(flush, 250); // a tab in the background gets no frames
}

function flushLines(c) {
  const batch = c.pendingLines;
  c.pendingLines = [];
  const follow = c.out.scrollHeight - c.out.scrollTop - c.out.clientHeight < 80;
  const skip = Math.max(0, batch.length - MAX_LINES);
  const frag = document.createDocumentFragment();
  for (let i = skip; i < batch.length; i++) frag.append(el("span", batch[i][1], batch[i][0] + "\n"));
  c.hidden += skip;
  c.out.append(frag);
  c.lines += batch.length - skip;
  for (; c.lines > MAX_LINES; c.lines--) { c.out.firstChild.remove(); c.hidden++; }
  if (c.hidden) c.out.dataset.hidden = c.hidden;
  if (follow) c.out.scrollTop = c.out.scrollHeight;
}

function addVerdict(c, v) {
  const text = `${v.state} · ${v.detector}: ${v.message}`;
  if (c.lastVerdict === text) return; // the terminal message repeats the verdict that stopped the run
  c.lastVerdict = text;
  const p = el("p", "verdict " + v.state, text);
  if (v.evidence && v.evidence.length) p.title = v.evidence.join("\n");
  c.verdicts.append(p);
  c.root.classList.remove("v-Normal", "v-Warning", "v-Error");
  c.root.classList.add("v-" + v.state);
}

// Artifacts: the files a cell created or changed, fetched with the token — from the server's
// artifact store by their digest (GET /v1/artifacts/SHA256/PATH), so a figure outlives the
// session's workspace and the server; a file without a digest (too large to keep) from the
// live workspace. Only raster images are shown in place, from a blob: URL of their own type.
// SVG and HTML can carry script, and a blob: URL has this page's origin, so they — and
// everything else — are only downloaded, as application/octet-stream, which a browser never
// renders. A file evicted from the store for space says so, and when.
const INLINE_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

function artifactPath(a) {
  return "/v1/sessions/" + encodeURIComponent(state.session) + "/artifacts/" + a.path.split("/").map(encodeURIComponent).join("/");
}

// loadArtifact fetches an artifact's bytes: from the store by digest, else (a server without
// a store, a file too large to keep) from the session; an eviction is said as it is.
function loadArtifact(a) {
  if (!a.sha256) return fetchBlob(artifactPath(a));
  const kept = "/v1/artifacts/" + a.sha256 + "/" + a.path.split("/").map(encodeURIComponent).join("/");
  return fetchBlob(kept).catch((e) => (/evicted for space/.test(e.message) ? Promise.reject(e) : fetchBlob(artifactPath(a))));
}

function addArtifact(c, a) {
  const fig = el("figure", "artifact");
  const cap = el("figcaption");
  const link = el("a", "", a.path);
  link.href = "#";
  link.title = "download " + a.path + (a.sha256 ? " (sha256 " + a.sha256 + ")" : "");
  link.addEventListener("click", (ev) => {
    ev.preventDefault();
    clearError();
    loadArtifact(a).then((b) => saveBlob(b, a.path.split("/").pop())).catch(showError);
  });
  cap.append(link, el("span", "muted", ` ${a.mime_type} · ${bytes(a.size)}`));
  if (INLINE_IMAGES.has(a.mime_type)) {
    const img = el("img");
    img.alt = "figure " + a.path;
    fig.append(img);
    loadArtifact(a)
      .then((b) => { img.src = URL.createObjectURL(new Blob([b], { type: a.mime_type })); })
      .catch((e) => img.replaceWith(el("p", "muted gone", e.message)));
  }
  fig.append(cap);
  c.arts.append(fig);
}


// focus scrolls to an operation's card and moves the keyboard focus to it.
function focus(c) {
  c.root.scrollIntoView({ block: "start" });
  c.root.tabIndex = -1;
  c.root.focus();
}

function render(m) {
  if (m.type === "session_update") { // the session's name or closed flag: the list says it
    const s = state.sessionList && state.sessionList.get(m.session_id);
    if (s) { Object.assign(s, { name: m.payload.name || "", closed: !!m.payload.closed }); showSessionName(); }
    state.sessionsKey = "";
    loadSessions().catch(() => {});
    return;
  }
  const c = card(m);
  if (state.focusOp === m.operation_id) { state.focusOp = ""; setTimeout(() => focus(c), 0); }
  if (state.follow === m.operation_id) { // the cell just run from the runner: its card, and its Interrupt button, come into view
    state.follow = "";
    requestAnimationFrame(() => c.root.scrollIntoView({ block: "nearest" }));
  }
  const p = m.payload || {};
  switch (m.type) {
    case "operation_request":
      if (p.kind === "job" && p.job) {
        jobRequest(c, p.job);
        setState(c, "requested");
        if (m.session_id === state.session && m.operation_id === m.session_id) showJobSession(p.job);
        break;
      }
      c.kernel.textContent = p.kernel || p.kind || "";
      c.code.textContent = p.code || JSON.stringify(p);
      setState(c, "requested");
      break;
    case "operation_ack":
      setState(c, "queued");
      if (p.job) jobInfo(c, p.job, "submitted");
      c.stop.hidden = false;
      c.root.classList.add("live");
      break;
    case "operation_start":
      setState(c, "running", "s-running");
      if (p.job) jobInfo(c, p.job, "started");
      c.stop.hidden = false;
      c.root.classList.add("live");
      break;
    case "operation_progress": {
      const o = p.observation;
      if (o) {
        if (o.kind === "stdout") addLine(c, o.line, "");
        else if (o.kind === "stderr") addLine(c, o.line, "stderr");
        else if (o.kind === "file") addLine(c, `${o.path}: ${o.line}`, "file"); // a line of a followed file
        else if (o.kind === "artifact" && o.artifact) addArtifact(c, o.artifact);
        else if (o.kind === "event" && o.event) addLine(c, `[${o.event.name}${o.event.detail ? ": " + o.event.detail : ""}]`, "event");
        else if (o.kind === "telemetry" && o.sample) {
          addSample(c, o.sample, m.timestamp, o.time);
          if (o.sample.name.startsWith("vol_") || o.sample.name === "tips_used") scheduleBench();
        }
      }
      if (p.verdict) {
        addVerdict(c, p.verdict);
        if (p.verdict.state !== "Normal") mark(c, p.verdict, m.timestamp);
      }
      break;
    }
    case "operation_interrupt":
      addLine(c, `[interrupt requested${p.why ? ": " + p.why : ""}]`, "event");
      break;
    case "operation_complete": {
      scheduleBench();
      setState(c, "completed", "s-completed");
      c.stop.hidden = true;
      c.root.classList.remove("live");
      const r = p.result || {};
      c.end.className = "end";
      c.end.textContent = `completed in ${(r.duration_s || 0).toFixed(2)} s${r.job ? jobEnding(r) : ""}`;
      if (r.job) jobInfo(c, r.job, "ended");
      break;
    }
    case "operation_failed": {
      c.stop.hidden = true;
      c.root.classList.remove("live");
      if (p.verdict) addVerdict(c, p.verdict);
      const r = p.result || {};
      const kept = r.workspace_kept && !String(p.error).includes("workspace") ? " — the workspace is kept" : "";
      if (r.job) { jobFailed(c, p, r); break; }
      if (p.reason === "interrupted" && !p.verdict) { // someone asked for it: not a failure of the code
        setState(c, "interrupted", "s-interrupted");
        c.end.className = "end";
        c.end.textContent = `interrupted after ${(r.duration_s || 0).toFixed(2)} s${p.error ? ": " + p.error : ""}${kept}`;
        break;
      }
      setState(c, p.verdict && p.reason === "interrupted" ? "stopped by perception" : "failed: " + p.reason, "s-failed");
      c.end.className = "end failed";
      c.end.textContent = `failed (${p.reason})${p.error ? ": " + p.error : ""}${kept}`;
      break;
    }
    case "run_event": // one event of an agent run: its operations as cards of their own, the rest as the run's story
      c.kernel.textContent = "agent run";
      if (m.operation_id === state.session && p.type !== "operation") { $("#cell").hidden = true; $("#runner-title").textContent = "Agent run"; }
      setState(c, "running", "s-running");
      if (m.operation_id === state.session && !(state.run && state.run.running)) { state.run = { running: true }; showRunBar(); }
      if (p.type === "operation" && p.message) render(p.message);
      else runLine(c, p);
      break;
    case "run_end": {
      // A cancel someone asked for is not a failure of the run.
      const cancelled = p.reason === "cancelled" || p.reason === "interrupted";
      setState(c, cancelled ? p.reason : "ended: " + p.reason, p.reason === "answered" ? "s-completed" : cancelled ? "s-interrupted" : "s-failed");
      c.end.className = p.reason === "answered" || cancelled ? "end" : "end failed";
      c.end.textContent = `ended (${p.reason})${p.error ? ": " + p.error : ""}${p.resumable ? " — it can be resumed" : ""}`;
      if (m.operation_id === state.session) { state.run = { running: false, reason: p.reason, resumable: !!p.resumable }; showRunBar(); }
      // Its cells still open were cut short with it (the server stopped, or the run failed).
      for (const [id, o] of state.ops) {
        if (id === m.operation_id || !["requested", "queued", "running"].includes(o.badge.textContent)) continue;
        setState(o, "cut short", "s-interrupted");
        o.stop.hidden = true;
        o.root.classList.remove("live");
        o.end.className = "end";
        o.end.textContent = `cut short: the run ended (${p.reason})`;
      }
      if (p.reason !== "answered") runLine(c, { type: "ended", end: p, time: new Date(m.timestamp * 1000).toISOString() });
      break;
    }
    case "run_resume":
      setState(c, "running", "s-running");
      runLine(c, { type: "resumed", by: p.by });
      if (m.operation_id === state.session) { state.run = { running: true }; showRunBar(); }
      break;
  }
}

// ---------- job operations ----------
//
// A job is an operation of kind "job": its request carries the job's spec instead of code,
// its ack and start the scheduler's job (id, native id, state), its end how the job ended.
// Its Interrupt button cancels the job through its scheduler (POST /v1/jobs/ID/cancel).

// shellWords quotes a command's words the way a shell would read them back.
const shellWords = (argv) => argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replaceAll("'", "'\\''") + "'")).join(" ");

function jobRequest(c, spec) {
  c.isJob = true;
  const title = c.root.querySelector("h3");
  title.textContent = spec.name || short(title.title);
  c.kernel.textContent = "job" + (spec.profile ? " · " + spec.profile : "");
  c.code.textContent = spec.script || shellWords(spec.command || []);
  c.stop.textContent = "Cancel job";
  c.stop.setAttribute("aria-label", "Cancel job " + (spec.name || short(c.root.id.slice(3))));
  const res = spec.resources || {}, parts = [];
  if (res.cores) parts.push(`${res.cores} core${res.cores === 1 ? "" : "s"}`);
  if (res.memory_bytes) parts.push(bytes(res.memory_bytes) + " memory");
  if (res.wall_time_ns) parts.push(duration(res.wall_time_ns / 1e9) + " wall time");
  if (res.gpus) parts.push(`${res.gpus} GPU${res.gpus === 1 ? "" : "s"}`);
  if (res.partition) parts.push("partition " + res.partition);
  if ((spec.follow || []).length) parts.push("follows " + spec.follow.join(", "));
  parts.push(spec.hotfix === "off" ? "perception only watches" : spec.hotfix === "on_warning" ? "perception cancels it on a Warning" : "perception cancels it on an Error");
  c.jspec.textContent = parts.join(" · ");
}

// showJobSession says the session shown is a job's: no place to run cells.
function showJobSession(spec) {
  $("#cell").hidden = true;
  $("#runner-title").textContent = "Job " + (spec.name || "");
}

// jobInfo says where the job stands: "job local-… (Slurm 4711) · RUNNING". Each change of
// state is a line of the card's output too.
function jobInfo(c, j, what) {
  c.isJob = true;
  if (j.id) c.jobID = j.id;
  const sched = schedulerOf(c.jobID || "");
  const native = j.native ? ` (${sched === "slurm" ? "Slurm job " : "pid "}${j.native})` : "";
  c.jstate.textContent = `job ${c.jobID || "?"} · ${sched}${native} · ${j.state || ""}${j.reason ? ": " + j.reason : ""}`;
  if (j.state && j.state !== c.jobState) {
    c.jobState = j.state;
    if (what !== "ended") addLine(c, `[job ${what}: ${j.state}${j.reason ? " (" + j.reason + ")" : ""}]`, "event");
  }
}

const schedulerOf = (id) => (id.startsWith("slurm-") ? "slurm" : id.startsWith("local-") ? "local" : "job");

// jobEnding says the job's exit code or signal: " · exit code 0".
function jobEnding(r) {
  const j = r.job || {};
  if (j.signal) return " · killed by " + j.signal;
  if (r.exit_code !== undefined && r.exit_code !== null) return " · exit code " + r.exit_code;
  return "";
}

function jobFailed(c, p, r) {
  const j = r.job;
  jobInfo(c, j, "ended");
  if (p.verdict) addVerdict(c, p.verdict);
  const took = r.duration_s ? ` after ${duration(r.duration_s)}` : "";
  const ending = jobEnding(r);
  if (p.reason === "interrupted" && p.verdict) { // perception stopped it: say so, and why
    setState(c, "cancelled by perception", "s-perception");
    c.end.className = "end failed";
    c.end.textContent = `cancelled by perception${took}: ${p.verdict.detector}: ${p.verdict.message}${ending}`;
    return;
  }
  if (p.reason === "interrupted") { // someone cancelled it: not a failure of the job
    setState(c, "cancelled", "s-interrupted");
    c.end.className = "end";
    c.end.textContent = `cancelled${took}${j.reason ? ": " + j.reason : ""}${ending}`;
    return;
  }
  const label = { TIMEOUT: "timed out", LOST: "lost", FAILED: "failed" }[j.state] || "failed: " + p.reason;
  setState(c, label, "s-failed");
  c.end.className = "end failed";
  c.end.textContent = `${label}${took}${p.error ? ": " + p.error : ""}${ending && !String(p.error).includes(ending.slice(3)) ? ending : ""}`;
}


// ---------- the bench ----------

// The session's deck (GET /v1/sessions/ID/bench) is fetched again after a command moved
// liquid (its vol_… telemetry), at most one fetch at a time and one more queued.
let benchBusy = false, benchAgain = false;
function scheduleBench() {
  if (benchBusy) { benchAgain = true; return; }
  benchBusy = true;
  const id = state.session;
  api("GET", "/v1/sessions/" + encodeURIComponent(id) + "/bench")
    .then((b) => { if (id === state.session) drawBench(b.labware || [], b.readings || []); })
    .catch(() => {})
    .finally(() => {
      benchBusy = false;
      if (benchAgain) { benchAgain = false; scheduleBench(); }
    });
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// drawBench draws each labware in slot order: a plate as its grid of wells, filled with the
// colour of what each holds; a tip rack as its count of fresh tips.
// drawDeck draws the deck as its 11 slots and the trash, laid out as on an OT-2 (slot 1 at
// the front left, 10 and 11 at the back), each slot naming what it holds.
function drawDeck(labware) {
  const grid = $("#deck-grid");
  grid.replaceChildren();
  const bySlot = new Map(labware.map((lw) => [lw.slot, lw]));
  for (const slot of [10, 11, 12, 7, 8, 9, 4, 5, 6, 1, 2, 3]) {
    const lw = bySlot.get(slot);
    const cell = el("div", "slot" + (lw ? " used" : "") + (slot === 12 ? " trash" : ""));
    cell.dataset.slot = String(slot);
    cell.append(el("span", "n", String(slot)));
    if (slot === 12) cell.append(el("span", "what", "trash"));
    else if (lw) {
      const filled = Object.keys(lw.wells || {}).length;
      cell.append(el("span", "what", lw.name === String(slot) ? lw.display_name : lw.name),
        el("span", "state", lw.tiprack ? `${lw.fresh_tips || 0} fresh tips` : `${filled} well${filled === 1 ? "" : "s"} filled`));
      cell.title = lw.display_name;
    }
    grid.append(cell);
  }
}

// spectrum draws a reading of several wavelengths: absorbance against wavelength, one line
// per well that holds liquid, in the well's colour.
function spectrum(lw, r) {
  const fig = el("figure", "chart spectrum");
  fig.dataset.spectrum = lw.name;
  const wells = r.wells.filter((w) => lw.wells[w.well]);
  const ods = wells.flatMap((w) => w.od);
  const nm = r.wavelengths_nm, W = 480, H = 220;
  const yv = niceTicks(0, Math.max(...ods, 0.1), 5), xv = niceTicks(nm[0], nm[nm.length - 1], 7).filter((v) => v >= nm[0] && v <= nm[nm.length - 1]);
  const g = { W, H, L: 50, R: 10, T: 8, B: 32 };
  const lo = nm[0], hi = nm[nm.length - 1] > lo ? nm[nm.length - 1] : lo + 1, top = yv[yv.length - 1];
  g.x = (x) => g.L + ((x - lo) / (hi - lo)) * (W - g.L - g.R);
  g.y = (y) => H - g.B - (y / top) * (H - g.T - g.B);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `absorbance spectra of ${wells.length} wells of ${lw.name}` });
  const add = svgAdder(svg);
  axes(add, g, yv.map((v) => ({ v, label: String(+v.toFixed(3)) })), xv.map((v) => ({ v, label: String(v) })), "absorbance (OD)", "wavelength (nm)");
  for (const w of wells) {
    const line = add("polyline", { class: "spec", stroke: lw.wells[w.well].color || "#555", "data-well": w.well,
      points: w.od.map((od, k) => g.x(nm[k]).toFixed(1) + "," + g.y(od).toFixed(1)).join(" ") });
    const t = document.createElementNS(SVG, "title");
    t.textContent = `${w.well}: peak ${Math.max(...w.od).toFixed(3)} OD at ${nm[w.od.indexOf(Math.max(...w.od))]} nm`;
    line.append(t);
  }
  fig.append(svg, el("figcaption", "", `${lw.name}: absorbance of its ${wells.length} filled well${wells.length === 1 ? "" : "s"}, ${nm[0]}–${nm[nm.length - 1]} nm (the last read)`));
  return fig;
}

function drawBench(labware, readings) {
  $("#bench").hidden = labware.length === 0;
  drawDeck(labware);
  const reads = new Map((readings || []).map((r) => [r.labware, r]));
  const deck = $("#deck");
  deck.replaceChildren();
  for (const lw of [...labware].sort((a, b) => a.slot - b.slot)) {
    const fig = el("figure", "labware");
    fig.dataset.labware = lw.name;
    const cap = el("figcaption", "", `slot ${lw.slot}: ${lw.name === String(lw.slot) ? "" : lw.name + " — "}${lw.display_name}`);
    if (lw.tiprack) {
      cap.textContent += ` (${lw.fresh_tips || 0} fresh tips)`;
      fig.append(cap);
      deck.append(fig);
      continue;
    }
    const cols = lw.columns.length, rows = Math.max(...lw.columns.map((c) => c.length));
    const cell = 20, pad = 16;
    const svg = svgEl("svg", { viewBox: `0 0 ${pad + cols * cell} ${pad + rows * cell}`, role: "img",
      "aria-label": `plate map of ${lw.name}` });
    lw.columns.forEach((col, ci) => {
      const t = svgEl("text", { x: pad + ci * cell + cell / 2, y: 11, "text-anchor": "middle", class: "axis" });
      t.textContent = String(ci + 1);
      svg.append(t);
      col.forEach((name, ri) => {
        if (ci === 0) {
          const r = svgEl("text", { x: 6, y: pad + ri * cell + cell / 2 + 4, "text-anchor": "middle", class: "axis" });
          r.textContent = name.replace(/[0-9]+$/, "");
          svg.append(r);
        }
        const w = lw.wells[name];
        const c = svgEl("circle", { cx: pad + ci * cell + cell / 2, cy: pad + ri * cell + cell / 2, r: cell / 2 - 2,
          class: w ? "well full" : "well", fill: w ? w.color : "none", "data-well": name });
        const tip = svgEl("title", {});
        tip.textContent = w ? `${name}: ${w.volume_ul.toFixed(1)} µL${w.species ? ", " + w.species : ""}` : `${name}: empty`;
        c.append(tip);
        svg.append(c);
      });
    });
    fig.append(svg, cap);
    deck.append(fig);
    const r = reads.get(lw.name);
    if (r && r.wavelengths_nm.length > 1 && r.wells.some((w) => lw.wells[w.well])) deck.append(spectrum(lw, r));
  }
}

// ---------- campaigns ----------

async function detectCampaigns() {
  try {
    await api("GET", "/v1/campaigns");
    $("#nav-campaigns").hidden = false;
  } catch { /* this server runs no campaigns */ }
}

const fmt = (v, d = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(d));
const splitCols = (v) => v.split(",").map((x) => x.trim()).filter(Boolean);

async function loadCampaigns() {
  const list = (await api("GET", "/v1/campaigns")) || [];
  const ul = $("#camp-list");
  ul.replaceChildren();
  for (const st of list.slice().reverse()) {
    const c = st.campaign;
    const li = document.createElement("li");
    const b = el("button", "", `${c.space}${c.group ? " · " + c.group : ""} · ${c.planner} · ${st.steps.length}/${c.budget}`);
    b.type = "button";
    b.dataset.id = c.id;
    if (c.id === state.campaign) b.setAttribute("aria-current", "true");
    b.addEventListener("click", () => showCampaign(st));
    li.append(b);
    ul.append(li);
  }
}

// openCampaign shows campaign id (its stream's session in the Lab list) on the Campaigns page.
async function openCampaign(id) {
  clearError();
  try {
    const st = await api("GET", `/v1/campaigns/${encodeURIComponent(id)}`);
    history.pushState(null, "", "#campaigns");
    route();
    showCampaign(st);
  } catch (e) { showError(e); }
}

async function startCampaign(ev) {
  ev.preventDefault();
  clearError();
  const spec = {
    objective: $("#camp-objective").value.trim(),
    vars: splitCols($("#camp-vars").value),
    groups: splitCols($("#camp-groups").value),
    group: $("#camp-group").value.trim(),
    planner: $("#camp-planner").value,
    budget: Number($("#camp-budget").value),
    seed: Number($("#camp-seed").value),
    bench: $("#camp-bench").checked,
  };
  const file = $("#camp-file").files[0];
  if (file) { spec.csv_data = await file.text(); spec.name = file.name; }
  else spec.csv = $("#camp-path").value.trim();
  try {
    const st = await api("POST", "/v1/campaigns", spec);
    showCampaign(st);
    await loadCampaigns();
  } catch (e) { showError(e); }
}

async function showCampaignFile() {
  const file = $("#camp-file").files[0];
  if (!file) { $("#camp-cols").textContent = ""; return; }
  const head = (await file.slice(0, 4096).text()).split(/\r?\n/)[0];
  $("#camp-cols").textContent = "columns: " + head.split(",").join(", ");
}

function showCampaign(st) {
  const c = st.campaign;
  state.campaign = c.id;
  $("#camp-view").hidden = false;
  $("#camp-h").textContent = `Campaign on ${c.space}${c.group ? " · " + c.group : ""} (${c.planner}${c.bench ? ", on the bench" : ""})`;
  const best = st.best ? `best ${c.objective} ${fmt(st.best.value, 2)} at turn ${st.best.n} (${Object.entries(st.best.conditions).map(([k, v]) => k + "=" + v).join(", ")})` : "nothing measured yet";
  $("#camp-summary").textContent = `${st.steps.length} of ${c.budget} turns; ${best}` +
    (st.done ? "; done" : "") + (st.error ? `; stopped: ${st.error}` : "");
  $("#camp-step").disabled = st.done;
  $("#camp-play").disabled = st.done || state.playing;
  $("#camp-pause").disabled = !state.playing;
  const tb = $("#camp-steps");
  tb.replaceChildren();
  st.steps.forEach((s, i) => {
    const tr = document.createElement("tr");
    const cond = s.conditions ? Object.entries(s.conditions).map(([k, v]) => `${k}=${v}`).join(", ") : "";
    tr.append(el("td", "", String(s.n)), el("td", "", cond + (s.error ? ` (${s.error})` : "")),
      el("td", "", s.ok ? fmt(s.value, 2) : "—"), el("td", "", fmt(st.advantage[i])), el("td", "", fmt(st.nma[i])));
    tb.append(tr);
  });
  $("#camp-chart").replaceChildren(chart(st));
  for (const b of document.querySelectorAll("#camp-list button")) {
    if (b.dataset.id === c.id) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
  }
}

// chart draws NMA (a line) and each turn's normalized advantage (dots) as inline SVG: every
// turn is a tick up to 20 turns, round steps beyond; both axes are labelled.
function chart(st) {
  const W = 560, H = 270;
  const n = Math.max(st.campaign.budget, 1);
  const vals = st.advantage.concat(st.nma).filter((v) => v !== null);
  const yv = niceTicks(Math.min(-1, ...vals), 1, 5);
  const lo = yv[0], hi = yv[yv.length - 1];
  const g = { W, H, L: 52, R: 12, T: 12, B: 34 };
  g.x = (turn) => g.L + ((turn - 0.5) / n) * (W - g.L - g.R);
  g.y = (v) => g.T + ((hi - v) / (hi - lo)) * (H - g.T - g.B);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  const last = st.nma.length ? st.nma[st.nma.length - 1] : null;
  svg.setAttribute("aria-label", `NMA after ${st.steps.length} turns: ${fmt(last)}`);
  const add = svgAdder(svg);
  let xv = [];
  if (n <= 20) for (let i = 1; i <= n; i++) xv.push(i);
  else xv = niceTicks(0, n, 11).filter((v) => v >= 1 && v <= n);
  axes(add, g, yv.map((v) => ({ v, label: String(+v.toFixed(2)) })), xv.map((v) => ({ v, label: String(v) })),
    "NMA · advantage", "turn");
  const pts = [];
  st.nma.forEach((v, i) => { if (v !== null) pts.push(`${g.x(i + 1).toFixed(1)},${g.y(v).toFixed(1)}`); });
  if (pts.length) add("polyline", { class: "nma", points: pts.join(" ") });
  st.advantage.forEach((v, i) => { if (v !== null) add("circle", { class: "adv", cx: g.x(i + 1), cy: g.y(v), r: 3 }); });
  return svg;
}

async function stepCampaign(n) {
  try {
    const st = await api("POST", `/v1/campaigns/${encodeURIComponent(state.campaign)}/step?n=${n}`);
    showCampaign(st);
    return st;
  } catch (e) { showError(e); return null; }
}

// playCampaign plays one turn at a time, so that the chart grows as it goes.
async function playCampaign() {
  state.playing = true;
  $("#camp-play").disabled = true;
  $("#camp-pause").disabled = false;
  try {
    while (state.playing) {
      const st = await stepCampaign(1);
      if (!st || st.done) break;
      await new Promise((r) => setTimeout(r, 150));
    }
  } finally {
    state.playing = false;
    $("#camp-pause").disabled = true;
    $("#camp-play").disabled = $("#camp-step").disabled; // done: nothing left to play
    loadCampaigns().catch(() => {});
  }
}

// ---------- agent runs ----------
//
// The Runs page starts runs (POST /v1/runs) and lists them (GET /v1/runs, whose Labmate-Model
// header names the server's model; absent, the server runs no agent). A run's story is its
// session in the Lab (#lab/RUN), live over the WebSocket, with a bar to cancel it while it
// runs or resume it when its run_end says it can be.

const END_LABEL = { answered: "answered", cancelled: "cancelled", interrupted: "interrupted" };

function runState(r) {
  if (!r.done) return { text: "running", cls: "s-running" };
  const reason = (r.end && r.end.reason) || "ended";
  if (reason === "answered") return { text: "answered", cls: "s-completed" };
  if (END_LABEL[reason]) return { text: END_LABEL[reason], cls: "s-interrupted" };
  return { text: "failed: " + reason, cls: "s-failed" };
}

async function loadRuns() {
  const { data, res } = await request("GET", "/v1/runs");
  const list = data || [];
  const model = res.headers.get("Labmate-Model");
  state.model = model;
  $("#run-model").textContent = model
    ? `Runs use the model ${model}.`
    : "This server runs no agent: start it with labmate serve --model PROVIDER:MODEL (e.g. --model ollama:qwen3:8b or openai:gpt-4.1), or set $LABMATE_MODEL.";
  $("#run-model").classList.toggle("warn", !model);
  $("#run-start").disabled = !model;
  const running = list.filter((r) => !r.done).length;
  $("#run-count").textContent = `${list.length} run${list.length === 1 ? "" : "s"}${running ? `, ${running} running` : ""}`;
  const key = JSON.stringify(list);
  if (key === state.runsKey) return;
  state.runsKey = key;
  const tb = $("#run-rows");
  tb.replaceChildren();
  for (const r of list.slice().reverse()) {
    const tr = document.createElement("tr");
    tr.dataset.run = r.id;
    const task = el("td", "task");
    const a = el("a", "", (r.task && r.task.goal) || short(r.id));
    a.href = "#lab/" + encodeURIComponent(r.id);
    a.title = `run ${r.id}: open its story`;
    task.append(a);
    if (r.task && (r.task.mode || r.task.kernel)) task.append(el("span", "muted", ` ${r.task.mode || "agent"} · ${r.task.kernel || "?"}`));
    const st = runState(r);
    const stc = el("td", "state");
    stc.append(el("span", "badge " + st.cls, st.text));
    const resumable = r.done && r.end && r.end.resumable;
    if (resumable) stc.append(el("span", "muted resumable", "resumable"));
    if (r.end && r.end.error) stc.title = r.end.error;
    const acts = el("td", "acts");
    if (!r.done) acts.append(runButton("Cancel", "danger", r, cancelRun));
    if (resumable) acts.append(runButton("Resume", "", r, resumeRun));
    const err = el("p", "row-error", "");
    err.setAttribute("role", "alert");
    acts.append(err);
    tr.append(task, stc, el("td", "num", String(r.events)), el("td", "", new Date(r.created).toLocaleString([], { dateStyle: "short", timeStyle: "short" })),
      el("td", "num", r.tokens ? String(r.tokens) : "—"), acts);
    tb.append(tr);
  }
}

function runButton(label, cls, r, action) {
  const b = el("button", (cls + " small " + label.toLowerCase()).trim(), label);
  b.type = "button";
  b.setAttribute("aria-label", `${label} run ${(r.task && r.task.goal) || r.id}`);
  b.addEventListener("click", async () => {
    b.disabled = true;
    const err = b.parentElement.querySelector(".row-error");
    if (err) err.textContent = "";
    try {
      await action(r.id);
    } catch (e) {
      b.disabled = false;
      if (err) err.textContent = e.message;
      showError(e);
      return;
    }
    state.runsKey = "";
    loadRuns().catch(showError);
  });
  return b;
}

const cancelRun = (id) => api("POST", "/v1/runs/" + encodeURIComponent(id) + "/cancel");
const resumeRun = (id) => api("POST", "/v1/runs/" + encodeURIComponent(id) + "/resume");

async function startRun(ev) {
  ev.preventDefault();
  clearError();
  const goal = $("#run-goal").value;
  if (!goal.trim()) { showError("the task is empty"); return; }
  const kernel = $("#run-kernel").value;
  if (kernel) localStorage.setItem("labmate.kernel", kernel);
  const btn = $("#run-start");
  btn.disabled = true;
  try {
    const { id } = await api("POST", "/v1/runs", { goal, kernel, mode: $("#run-mode").value });
    $("#run-goal").value = "";
    location.hash = "#lab/" + encodeURIComponent(id); // its story, live
  } catch (e) { showError(e); } finally { btn.disabled = !state.model; }
}

// showRunBar shows, over a run's story, whether it runs and the buttons that apply.
function showRunBar() {
  const r = state.run;
  $("#run-bar").hidden = !r;
  if (!r) return;
  $("#run-status").textContent = r.running ? "This agent run is running." :
    `This agent run ended (${r.reason})${r.resumable ? " and can be resumed" : ""}.`;
  $("#run-cancel").hidden = !r.running;
  $("#run-cancel").disabled = false;
  $("#run-resume").hidden = r.running || !r.resumable;
  $("#run-resume").disabled = false;
}

async function runBarAction(button, action) {
  clearError();
  button.disabled = true;
  try { await action(state.session); } catch (e) { button.disabled = false; showError(e); }
}

// ---------- the cell runner ----------

function runCell(ev) {
  ev.preventDefault();
  clearError();
  const code = $("#code").value;
  if (!code.trim()) { showError("the cell is empty"); return; }
  if (!state.session) { showError("open or create a session first"); return; }
  const kernel = $("#kernel").value;
  localStorage.setItem("labmate.kernel", kernel);
  const watch = $("#watch").value.split(";").map((s) => s.trim()).filter(Boolean);
  const req = { kind: "exec", kernel, code, hotfix: $("#hotfix").value };
  if (watch.length) req.watch = watch;
  const id = uuid();
  if (send("operation_request", id, req)) state.follow = id;
}

// ---------- start ----------

// FACT_KINDS are the kinds of a memory fact (memory.FactKinds), offered by the Add and Edit forms.
const FACT_KINDS = ["observation", "warning", "boundary", "parameter", "reference"];

async function start() {
  for (const sel of ["#mem-add-kind", "#edit-kind"]) {
    $(sel).replaceChildren(...FACT_KINDS.map((k) => { const o = el("option", "", k); o.value = k; return o; }));
  }
  $("#cell").addEventListener("submit", runCell);
  $("#code").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) runCell(ev);
  });
  $("#new-session").addEventListener("click", newSession);
  $("#mem-form").addEventListener("submit", memorySearch);
  $("#mem-add-form").addEventListener("submit", addFact);
  $("#mem-add-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) addFact(ev);
  });
  $("#entry-edit").addEventListener("click", startEdit);
  $("#entry-invalidate").addEventListener("click", () => { entryForm("invalidate"); $("#inv-reason").focus(); });
  $("#edit-cancel").addEventListener("click", () => entryForm(""));
  $("#inv-cancel").addEventListener("click", () => entryForm(""));
  $("#entry-edit-form").addEventListener("submit", saveEdit);
  $("#entry-invalidate-form").addEventListener("submit", invalidateEntry);
  $("#camp-form").addEventListener("submit", startCampaign);
  $("#run-form").addEventListener("submit", startRun);
  $("#job-form").addEventListener("submit", submitJob);
  $("#job-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) submitJob(ev);
  });
  const sched = localStorage.getItem("labmate.scheduler");
  if (sched) $("#job-scheduler").value = sched;
  $("#run-goal").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) startRun(ev);
  });
  $("#run-cancel").addEventListener("click", () => runBarAction($("#run-cancel"), cancelRun));
  $("#run-resume").addEventListener("click", () => runBarAction($("#run-resume"), resumeRun));
  $("#show-closed").addEventListener("change", () => loadSessions().catch(showError));
  $("#camp-file").addEventListener("change", showCampaignFile);
  $("#camp-step").addEventListener("click", () => stepCampaign(1));
  $("#camp-play").addEventListener("click", playCampaign);
  $("#camp-pause").addEventListener("click", () => { state.playing = false; });
  window.addEventListener("hashchange", route);
  $("#auth").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.token = $("#token").value;
    sessionStorage.setItem("labmate.token", state.token);
    $("#auth").hidden = true;
    clearError();
    start2();
  });
  start2();
}

// labHash parses #lab/SESSION/OP.
function labHash() {
  if (!location.hash.startsWith("#lab/")) return { session: "", op: "" };
  const [session, op] = location.hash.slice(5).split("/").map(decodeURIComponent);
  return { session: session || "", op: op || "" };
}

// route shows the page the hash names: #lab[/SESSION[/OP]] or #memory.
function route() {
  const page = location.hash.startsWith("#memory") ? "memory" : location.hash.startsWith("#campaigns") ? "campaigns" :
    location.hash.startsWith("#runs") ? "runs" : location.hash.startsWith("#jobs") ? "jobs" : "lab";
  $("#page-lab").hidden = page !== "lab";
  $("#page-runs").hidden = page !== "runs";
  $("#page-jobs").hidden = page !== "jobs";
  $("#page-memory").hidden = page !== "memory";
  $("#page-campaigns").hidden = page !== "campaigns";
  for (const a of document.querySelectorAll("#pages a")) {
    if (a.dataset.page === page) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  if (page === "memory") {
    loadNamespaces().catch(showError);
    if (!state.searched) { state.searched = true; memorySearch(); }
    return;
  }
  if (page === "campaigns") {
    loadCampaigns().catch(showError);
    return;
  }
  if (page === "runs") {
    loadRuns().catch(showError);
    return;
  }
  if (page === "jobs") {
    loadJobs().catch(showError);
    return;
  }
  const { session, op } = labHash();
  if (session && session !== state.session) openSession(session, op);
  else if (op) {
    const c = state.ops.get(op);
    if (c) focus(c); else state.focusOp = op;
  }
}

// latestSession is the session, run or job with the latest activity ("" when there is none):
// the token URL opens it rather than a new empty session.
function latestSession() {
  let best = null;
  for (const s of (state.sessionList || new Map()).values()) {
    if (s.kind === "campaign" || !s.operations) continue;
    if (!best || (s.updated || s.created || 0) > (best.updated || best.created || 0)) best = s;
  }
  return best ? best.id : "";
}

async function start2() {
  try {
    await loadKernels();
    await loadSessions();
    await detectMemory();
    await detectCampaigns();
    await detectJobs();
    const first = ["#memory", "#campaigns", "#runs", "#jobs"].some((p) => location.hash.startsWith(p)) ? location.hash : "";
    const id = labHash().session || sessionStorage.getItem("labmate.session") || latestSession();
    if (id) openSession(id, labHash().op); else await newSession();
    if (first) { history.replaceState(null, "", first); route(); }
    if (!state.poll) state.poll = setInterval(() => loadSessions().catch(() => {}), 5000);
    if (!state.jobPoll) state.jobPoll = setInterval(() => { if (!$("#page-jobs").hidden) loadJobs().catch(() => {}); }, 1500);
    if (!state.runPoll) state.runPoll = setInterval(() => { if (!$("#page-runs").hidden) loadRuns().catch(() => {}); }, 1500);
  } catch (e) { showError(e); }
}

// ---------- jobs ----------
//
// The Jobs page submits background jobs (POST /v1/jobs) and lists them (GET /v1/jobs, newest
// first; 501 when the server runs no jobs, and the page stays hidden). A job is an operation
// in a session of its own, named by the job's id: its live story (log, telemetry, verdicts)
// is #lab/ID.

async function detectJobs() {
  try {
    await api("GET", "/v1/jobs");
    $("#nav-jobs").hidden = false;
    state.jobs = true;
  } catch { /* this server runs no jobs (501): the page stays hidden */ }
}

const cancelJob = (id) => api("POST", "/v1/jobs/" + encodeURIComponent(id) + "/cancel", { why: "cancelled from the dashboard" });

// jobState is a job's badge: a cancel is not a failure, and says who asked for it.
function jobState(j) {
  const why = j.reason || "";
  switch (j.state) {
    case "QUEUED": return { text: "queued", cls: "s-queued", why };
    case "RUNNING": return { text: "running", cls: "s-running", why: "" };
    case "COMPLETED": return { text: "completed", cls: "s-completed", why: "" };
    case "CANCELLED":
      if (/^(perception|hot-fix)\b/i.test(why)) return { text: "cancelled by perception", cls: "s-perception", why: why.replace(/^perception:\s*/i, "") };
      return { text: "cancelled", cls: "s-interrupted", why: why || "by a user" };
    case "TIMEOUT": return { text: "timed out", cls: "s-failed", why };
    case "LOST": return { text: "lost", cls: "s-failed", why };
    default: return { text: (j.state || "?").toLowerCase(), cls: "s-failed", why };
  }
}

function jobCommand(spec) {
  if (!spec) return "";
  return spec.script ? spec.script.split("\n").find((l) => l.trim() && !l.startsWith("#!")) || spec.script : shellWords(spec.command || []);
}

function jobRan(j, now) {
  if (!j.started || j.started.startsWith("0001")) return "—";
  const end = j.ended && !j.ended.startsWith("0001") ? Date.parse(j.ended) : now;
  return duration(Math.max(0, (end - Date.parse(j.started)) / 1000));
}

async function loadJobs() {
  const list = (await api("GET", "/v1/jobs")) || [];
  const running = list.filter((j) => j.state === "RUNNING").length, queued = list.filter((j) => j.state === "QUEUED").length;
  $("#job-count").textContent = `${list.length} job${list.length === 1 ? "" : "s"}` + (running ? `, ${running} running` : "") + (queued ? `, ${queued} queued` : "");
  const now = Date.now();
  const key = JSON.stringify([list, list.some((j) => j.state === "RUNNING") ? Math.floor(now / 1000) : 0]);
  if (key === state.jobsKey) return;
  state.jobsKey = key;
  const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest("#job-rows tr") : null;
  const focusID = focused ? focused.dataset.job : "";
  const tb = $("#job-rows");
  tb.replaceChildren();
  for (const j of list) {
    const tr = el("tr", "open-row");
    tr.dataset.job = j.id;
    const story = "#lab/" + encodeURIComponent(j.session || j.id) + (j.operation ? "/" + encodeURIComponent(j.operation) : "");
    const name = el("td", "task");
    const a = el("a", "", j.name || short(j.id));
    a.href = story;
    a.title = `job ${j.id}: open its live story`;
    name.append(a, el("span", "what", jobCommand(j.spec)));
    name.lastChild.title = (j.spec && (j.spec.script || shellWords(j.spec.command || []))) || "";
    const st = jobState(j);
    const stc = el("td", "state");
    stc.append(el("span", "badge " + st.cls, st.text));
    if (st.why) stc.append(el("span", "why", st.why));
    stc.title = j.reason || "";
    const exit = j.signal ? j.signal : j.exit_code !== undefined && j.exit_code !== null ? String(j.exit_code) : "—";
    const sched = el("td", "", j.scheduler || schedulerOf(j.id));
    if (j.native) sched.append(el("span", "why", (schedulerOf(j.id) === "slurm" ? "job " : "pid ") + j.native));
    const acts = el("td", "acts");
    if (j.state === "QUEUED" || j.state === "RUNNING") {
      const b = el("button", "danger small cancel", "Cancel");
      b.type = "button";
      b.setAttribute("aria-label", `Cancel job ${j.name || j.id}`);
      b.addEventListener("click", async (ev) => {
        ev.stopPropagation();
        b.disabled = true;
        err.textContent = "";
        try { await cancelJob(j.id); } catch (e) { b.disabled = false; err.textContent = e.message; return; }
        state.jobsKey = "";
        loadJobs().catch(showError);
      });
      acts.append(b);
    }
    const err = el("p", "row-error", "");
    err.setAttribute("role", "alert");
    acts.append(err);
    tr.append(name, stc, el("td", "num", exit), sched,
      el("td", "", new Date(j.submitted).toLocaleString([], { dateStyle: "short", timeStyle: "short" })), el("td", "num", jobRan(j, now)), acts);
    tr.addEventListener("click", (ev) => { if (!ev.target.closest("a, button")) location.hash = story; });
    tb.append(tr);
    if (focusID === j.id) (tr.querySelector("button") || a).focus();
  }
}

// shellSplit reads a command line into words: whitespace separates them, quotes group them.
function shellSplit(line) {
  const words = [];
  let w = null, q = "";
  for (const ch of line) {
    if (q) { if (ch === q) q = ""; else w += ch; continue; }
    if (ch === "'" || ch === '"') { q = ch; w = w || ""; continue; }
    if (/\s/.test(ch)) { if (w !== null) words.push(w); w = null; continue; }
    w = (w || "") + ch;
  }
  if (q) throw new Error("the command has an unclosed " + q);
  if (w !== null) words.push(w);
  return words;
}

async function submitJob(ev) {
  ev.preventDefault();
  clearError();
  const text = $("#job-text").value;
  if (!text.trim()) { showError("give the job a script or a command"); return; }
  const body = { resources: {}, hotfix: $("#job-hotfix").value, scheduler: $("#job-scheduler").value };
  try {
    if ($("#job-as").value === "command") body.command = shellSplit(text.trim()); else body.script = text;
  } catch (e) { showError(e); return; }
  const name = $("#job-name").value.trim();
  if (name) body.name = name;
  if ($("#job-profile").value) body.profile = $("#job-profile").value;
  const num = (sel) => ($(sel).value === "" ? 0 : Number($(sel).value));
  if (num("#job-cores")) body.resources.cores = Math.round(num("#job-cores"));
  if (num("#job-mem")) body.resources.memory_bytes = Math.round(num("#job-mem") * Number($("#job-mem-unit").value));
  if (num("#job-wall")) body.resources.wall_time_ns = Math.round(num("#job-wall") * Number($("#job-wall-unit").value) * 1e9);
  const follow = splitCols($("#job-follow").value);
  if (follow.length) body.follow = follow;
  localStorage.setItem("labmate.scheduler", body.scheduler);
  const btn = $("#job-submit");
  btn.disabled = true;
  try {
    const r = await api("POST", "/v1/jobs", body);
    const done = $("#job-submitted");
    done.replaceChildren("submitted job " + r.id + " — ");
    const a = el("a", "", "watch it");
    a.href = "#lab/" + encodeURIComponent(r.session || r.id) + (r.operation ? "/" + encodeURIComponent(r.operation) : "");
    done.append(a);
    state.jobsKey = "";
    await loadJobs();
  } catch (e) { showError(e); } finally { btn.disabled = false; }
}

// ---------- memory ----------

async function detectMemory() {
  try {
    await api("GET", "/v1/memory/namespaces");
    $("#nav-memory").hidden = false;
  } catch { /* this server has no memory: the page stays hidden */ }
}

async function loadNamespaces() {
  const list = (await api("GET", "/v1/memory/namespaces")) || [];
  const sel = $("#mem-ns");
  const keep = sel.value;
  sel.replaceChildren(new Option("all", ""));
  $("#mem-ns-list").replaceChildren(...list.filter((n) => !n.frozen).map((n) => new Option(n.name)));
  const rows = $("#ns-rows");
  rows.replaceChildren();
  for (const n of list) {
    sel.append(new Option(n.name, n.name));
    const tr = document.createElement("tr");
    const name = el("td", "", n.name);
    const frozen = el("td");
    const b = el("button", n.frozen ? "" : "secondary", n.frozen ? "Frozen — unfreeze" : "Freeze");
    b.type = "button";
    b.setAttribute("aria-pressed", String(n.frozen));
    b.setAttribute("aria-label", `${n.frozen ? "Unfreeze" : "Freeze"} namespace ${n.name}`);
    b.addEventListener("click", async () => {
      try {
        await api("POST", "/v1/memory/freeze", { namespace: n.name, frozen: !n.frozen });
        await loadNamespaces();
      } catch (e) { showError(e); }
    });
    frozen.append(b);
    const exp = el("td");
    const x = el("button", "secondary", "Export");
    x.type = "button";
    x.setAttribute("aria-label", `Export namespace ${n.name} as a zip of Markdown files`);
    x.addEventListener("click", () => exportNamespace(n.name));
    exp.append(x);
    tr.append(name, el("td", "", String(n.facts)), el("td", "", String(n.skills)), frozen, exp);
    rows.append(tr);
  }
  sel.value = keep;
}

// exportNamespace downloads a namespace's export (a zip of facts/*.md and skills/*/SKILL.md).
async function exportNamespace(ns) {
  clearError();
  try {
    saveBlob(await fetchBlob("/v1/memory/export?namespace=" + encodeURIComponent(ns)), `memory-${ns.replaceAll("/", "_")}.zip`);
  } catch (e) { showError(e); }
}

// fetchBlob GETs path with the token.
async function fetchBlob(path) {
  const headers = state.token ? { Authorization: "Bearer " + state.token } : {};
  const res = await fetch(path, { headers });
  if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || path + ": HTTP " + res.status);
  return res.blob();
}

// saveBlob downloads b as a file called name, typed application/octet-stream so that no
// browser renders it on this origin.
function saveBlob(b, name) {
  const url = URL.createObjectURL(new Blob([b], { type: "application/octet-stream" }));
  const a = el("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

async function memorySearch(ev) {
  if (ev) ev.preventDefault();
  clearError();
  const params = new URLSearchParams({ q: $("#mem-q").value, type: $("#mem-type").value, limit: "50" }); // the most a search returns
  if ($("#mem-ns").value) params.set("ns", $("#mem-ns").value);
  if ($("#mem-retired").checked) params.set("retired", "1");
  const seq = (state.searchSeq = (state.searchSeq || 0) + 1);
  try {
    const list = (await api("GET", "/v1/memory/search?" + params)) || [];
    if (seq !== state.searchSeq) return; // a newer search was started: its answer wins
    const ol = $("#mem-results");
    ol.replaceChildren();
    for (const r of list) {
      const e = r.fact || r.skill;
      const li = document.createElement("li");
      const b = el("button");
      b.type = "button";
      b.dataset.id = e.id;
      b.append(el("span", "kind", r.skill ? "skill" : e.kind));
      const label = r.skill ? `${e.name} — ${e.description}` : e.text;
      b.append(el("span", e.status === "active" ? "" : "retired", label));
      b.append(el("span", "muted", ` · ${e.namespace}`));
      b.append(el("span", "score", scoreText(r, e)));
      if (e.id === state.entry) b.setAttribute("aria-current", "true");
      b.addEventListener("click", () => showEntry(e.id));
      li.append(b);
      ol.append(li);
    }
    $("#mem-count").textContent = `${list.length} result${list.length === 1 ? "" : "s"}`;
  } catch (e) { showError(e); }
}

// scoreText says how well a hit matched (its retrieval score, when the search had a query) and
// what memory knows of it: a fact's confidence, how often it held.
function scoreText(r, e) {
  const parts = [];
  if (r.score) parts.push(`score ${r.score.toFixed(r.score < 0.1 ? 3 : 2)}`);
  if (e.confidence) parts.push(`confidence ${e.confidence}`);
  if (e.uses) parts.push(`${e.successes}/${e.uses} uses succeeded`);
  return parts.length ? parts.join(" · ") : "";
}

// addFact posts the Add form's fact (POST /v1/memory/facts), then shows it.
async function addFact(ev) {
  ev.preventDefault();
  clearError();
  const body = { text: $("#mem-add-text").value, kind: $("#mem-add-kind").value, namespace: $("#mem-add-ns").value.trim(),
    tags: splitCols($("#mem-add-tags").value) };
  if ($("#mem-add-conf").value !== "") body.confidence = Number($("#mem-add-conf").value);
  try {
    const { event, fact } = await api("POST", "/v1/memory/facts", body);
    $("#mem-added").textContent = event === "MERGE" ? `the same fact was there: merged into ${short(fact.id)}` : `added ${short(fact.id)}`;
    $("#mem-add-text").value = "";
    await Promise.all([memorySearch(), loadNamespaces()]);
    await showEntry(fact.id);
  } catch (e) { showError(e); }
}

// entryForm shows the entry's edit or invalidate form (or neither), and its buttons otherwise.
function entryForm(which) {
  $("#entry-edit-form").hidden = which !== "edit";
  $("#entry-invalidate-form").hidden = which !== "invalidate";
  $("#entry-actions").hidden = which !== "" || !state.entryData || state.entryData.status !== "active";
}

function startEdit() {
  const f = state.entryData;
  $("#edit-text").value = f.text;
  $("#edit-kind").value = f.kind;
  $("#edit-tags").value = (f.tags || []).join(", ");
  $("#edit-conf").value = f.confidence || "";
  $("#edit-reason").value = "";
  entryForm("edit");
  $("#edit-text").focus();
}

async function saveEdit(ev) {
  ev.preventDefault();
  clearError();
  const body = { text: $("#edit-text").value, kind: $("#edit-kind").value, tags: splitCols($("#edit-tags").value), reason: $("#edit-reason").value.trim() };
  if ($("#edit-conf").value !== "") body.confidence = Number($("#edit-conf").value);
  try {
    await api("PATCH", "/v1/memory/entries/" + encodeURIComponent(state.entry), body);
    await showEntry(state.entry);
    memorySearch();
  } catch (e) { showError(e); }
}

async function invalidateEntry(ev) {
  ev.preventDefault();
  clearError();
  try {
    await api("POST", "/v1/memory/entries/" + encodeURIComponent(state.entry) + "/invalidate", { reason: $("#inv-reason").value });
    await showEntry(state.entry);
    memorySearch();
    loadNamespaces().catch(() => {});
  } catch (e) { showError(e); }
}

function field(dl, name, value) {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return;
  dl.append(el("dt", "", name));
  const dd = el("dd");
  if (value instanceof Node) dd.append(value); else dd.textContent = Array.isArray(value) ? value.join(", ") : String(value);
  dl.append(dd);
}

async function showEntry(id) {
  let data;
  try { data = await api("GET", "/v1/memory/entries/" + encodeURIComponent(id)); } catch (e) { showError(e); return; }
  for (const b of document.querySelectorAll("#mem-results button")) {
    if (b.dataset.id === id) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
  }
  state.entry = id;
  const f = data.entry.fact, k = data.entry.skill, e = f || k;
  state.entryData = e;
  const sec = $("#mem-entry");
  sec.hidden = false;
  $("#entry-edit").hidden = !f; // a skill changes by a new version, not in place
  $("#inv-reason").value = "";
  entryForm("");
  $("#entry-h").textContent = k ? `Skill ${k.name}` : `Fact (${f.kind})`;
  const dl = $("#entry-fields");
  dl.replaceChildren();
  if (f) field(dl, "text", f.text);
  if (k) field(dl, "description", k.description);
  field(dl, "id", e.id);
  field(dl, "namespace", e.namespace);
  field(dl, "status", e.status + (e.reason ? ` (${e.reason})` : ""));
  field(dl, "tags", e.tags);
  if (f) { field(dl, "evidence", f.evidence); if (f.confidence) field(dl, "confidence", f.confidence); }
  if (k) { field(dl, "version", k.version); field(dl, "uses", `${k.uses} (${k.successes} succeeded, ${k.failures} failed)`); }
  if (f) field(dl, "outcomes", `${f.successes} succeeded, ${f.failures} failed`);
  field(dl, "created", new Date(e.created_at).toLocaleString());
  field(dl, "updated", new Date(e.updated_at).toLocaleString());
  const body = $("#entry-body");
  body.hidden = !k;
  body.textContent = k ? k.body : "";

  const prov = $("#entry-prov");
  prov.replaceChildren();
  const p = e.provenance || {};
  for (const op of p.operations || []) {
    const li = document.createElement("li");
    if (p.session) {
      const a = el("a", "", `operation ${short(op)}`);
      a.href = `#lab/${encodeURIComponent(p.session)}/${encodeURIComponent(op)}`;
      a.title = op;
      li.append(a, el("span", "muted", ` in session ${short(p.session)}`));
    } else li.textContent = `operation ${op}`;
    prov.append(li);
  }
  if (p.session && !(p.operations || []).length) {
    const li = document.createElement("li");
    const a = el("a", "", `session ${short(p.session)}`);
    a.href = `#lab/${encodeURIComponent(p.session)}`;
    li.append(a);
    prov.append(li);
  }
  if (p.model) prov.append(el("li", "", "model: " + p.model));
  if (p.source) prov.append(el("li", "", "source: " + p.source));
  if (!prov.children.length) prov.append(el("li", "muted", "none recorded"));

  const tb = $("#entry-history");
  tb.replaceChildren();
  for (const c of data.history) {
    const tr = document.createElement("tr");
    const change = c.old && c.new ? `${c.old} → ${c.new}` : (c.new || c.old || "");
    tr.append(el("td", "", new Date(c.time).toLocaleString()), el("td", "", c.event), el("td", "", c.actor),
      el("td", "", change + (c.reason ? ` (${c.reason})` : "")));
    tb.append(tr);
  }
  sec.focus();
}

start();
