// The live stream of a session over the WebSocket, its operation cards (lines, verdicts,
// artifacts, charts) and the cell runner.
import { $, el, short, clock, bytes } from "./util.js";
import { addSample, mark } from "./charts.js";
import { runLine, told } from "./timeline.js";
import { state, base64url, showError, clearError, uuid } from "./api.js";
import { loadSessions, showSessionName } from "./sessions.js";
import { jobRequest, showJobSession, jobInfo, jobEnding, jobFailed, cancelJob } from "./jobs.js";
import { scheduleBench } from "./bench.js";
import { showRunBar } from "./runs.js";
import { fetchBlob, saveBlob } from "./memory.js";

const MAX_LINES = 4000; // per operation in the page; the whole stream is in the log


export function connect() {
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


// card returns the operation's card, making it (and its history entry) on first sight: from
// its first message, or from the agent run's event that names it (timeline.js).
export function card(m) {
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

export function setState(c, label, cls) {
  c.badge.textContent = label;
  c.badge.className = "badge " + (cls || "");
  c.hs.textContent = label;
}

// addLine queues a line of an operation's output; the lines of a frame are added at once
// (one layout, one scroll), keeping the newest MAX_LINES, so a 10,000-line operation or a
// replayed log does not lay the page out 10,000 times.
export function addLine(c, text, cls) {
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

export function addVerdict(c, v) {
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
export function focus(c) {
  c.root.scrollIntoView({ block: "start" });
  c.root.tabIndex = -1;
  c.root.focus();
}

function render(m) {
  if (m.type === "run_checkpoint") return; // what a resume continues from: no line of the story
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
      c.stop.hidden = !!c.nested;
      c.root.classList.add("live");
      break;
    case "operation_start":
      setState(c, "running", "s-running");
      if (p.job) jobInfo(c, p.job, "started");
      c.stop.hidden = !!c.nested;
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
    case "run_event": // one event of an agent run: its cells are operations of the session (a "cell" event names one; an older log nests their messages), the rest is the run's story
      c.kernel.textContent = "agent run";
      if (m.operation_id === state.session && p.type !== "operation" && p.type !== "cell") { $("#cell").hidden = true; $("#runner-title").textContent = "Agent run"; }
      setState(c, "running", "s-running");
      if (m.operation_id === state.session && !(state.run && state.run.running)) { state.run = { running: true }; showRunBar(); }
      if (p.type === "operation" && p.message) { // a cell of a run with kernels of its own (labmate run): nobody here can interrupt it
        card(p.message).nested = true;
        render(p.message);
      }
      else runLine(c, p);
      break;
    case "run_end": {
      // A cancel someone asked for is not a failure of the run.
      const cancelled = p.reason === "cancelled" || p.reason === "interrupted";
      setState(c, cancelled ? p.reason : "ended: " + p.reason, p.reason === "answered" ? "s-completed" : cancelled ? "s-interrupted" : "s-failed");
      c.end.className = p.reason === "answered" || cancelled ? "end" : "end failed";
      // Its error once: not in the card's end when the story said it already (a failed model
      // call, the stop), and then not again in the story's "ended" line.
      const err = p.error ? String(p.error).trim() : "";
      c.end.textContent = `ended (${p.reason})${err && !told(err) ? ": " + err : ""}${p.resumable ? " — it can be resumed" : ""}`;
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



export function runCell(ev) {
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
