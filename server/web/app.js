// labmate dashboard: the protocol's sessions and operations, live over the WebSocket
// (resumed with after=SEQ when the connection drops; a reload replays the session's log),
// and a cell runner. Plain JS, no build step, nothing from the network but this server.
// This module starts the page and routes its hash to the page shown; each page is its own
// module (sessions, stream, jobs, bench, campaigns, runs, memory) over api.js (the state and
// the HTTP calls) and util.js, charts.js and timeline.js (drawing).
import { $, el } from "./util.js";
import { state, showError, clearError } from "./api.js";
import { loadKernels, loadSessions, openSession, newSession } from "./sessions.js";
import { focus, runCell } from "./stream.js";
import { detectJobs, loadJobs, submitJob } from "./jobs.js";
import { detectCampaigns, loadCampaigns, startCampaign, showCampaignFile, stepCampaign, playCampaign, interruptCampaign } from "./campaigns.js";
import { loadRuns, cancelRun, resumeRun, startRun, runBarAction } from "./runs.js";
import { detectMemory, loadNamespaces, memorySearch, addFact, entryForm, startEdit, saveEdit, invalidateEntry } from "./memory.js";


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
  $("#camp-interrupt").addEventListener("click", interruptCampaign);
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
export function route() {
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


start();
