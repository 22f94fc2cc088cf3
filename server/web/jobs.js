// Jobs: a job operation's card in a session, and the Jobs page that submits and lists them.
import { $, el, short, bytes, duration } from "./util.js";
import { state, api, showError, clearError } from "./api.js";
import { setState, addLine, addVerdict } from "./stream.js";
import { splitCols } from "./campaigns.js";

//
// A job is an operation of kind "job": its request carries the job's spec instead of code,
// its ack and start the scheduler's job (id, native id, state), its end how the job ended.
// Its Interrupt button cancels the job through its scheduler (POST /v1/jobs/ID/cancel).

// shellWords quotes a command's words the way a shell would read them back.
const shellWords = (argv) => argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replaceAll("'", "'\\''") + "'")).join(" ");

export function jobRequest(c, spec) {
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
  if (res.wall_time_s) parts.push(duration(res.wall_time_s) + " wall time");
  if (res.gpus) parts.push(`${res.gpus} GPU${res.gpus === 1 ? "" : "s"}`);
  if (res.partition) parts.push("partition " + res.partition);
  if ((spec.follow || []).length) parts.push("follows " + spec.follow.join(", "));
  parts.push(spec.hotfix === "off" ? "perception only watches" : spec.hotfix === "on_warning" ? "perception cancels it on a Warning" : "perception cancels it on an Error");
  c.jspec.textContent = parts.join(" · ");
}

// showJobSession says the session shown is a job's: no place to run cells.
export function showJobSession(spec) {
  $("#cell").hidden = true;
  $("#runner-title").textContent = "Job " + (spec.name || "");
}

// jobInfo says where the job stands: "job local-… (Slurm 4711) · RUNNING". Each change of
// state is a line of the card's output too.
export function jobInfo(c, j, what) {
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
export function jobEnding(r) {
  const j = r.job || {};
  if (j.signal) return " · killed by " + j.signal;
  if (r.exit_code !== undefined && r.exit_code !== null) return " · exit code " + r.exit_code;
  return "";
}

export function jobFailed(c, p, r) {
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



//
// The Jobs page submits background jobs (POST /v1/jobs) and lists them (GET /v1/jobs, newest
// first; 501 when the server runs no jobs, and the page stays hidden). A job is an operation
// in a session of its own, named by the job's id: its live story (log, telemetry, verdicts)
// is #lab/ID.

export async function detectJobs() {
  try {
    await api("GET", "/v1/jobs");
    $("#nav-jobs").hidden = false;
    state.jobs = true;
  } catch { /* this server runs no jobs (501): the page stays hidden */ }
}

export const cancelJob = (id) => api("POST", "/v1/jobs/" + encodeURIComponent(id) + "/cancel", { why: "cancelled from the dashboard" });

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

export async function loadJobs() {
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

export async function submitJob(ev) {
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
  if (num("#job-wall")) body.resources.wall_time_s = num("#job-wall") * Number($("#job-wall-unit").value);
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
