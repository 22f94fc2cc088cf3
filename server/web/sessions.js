// Sessions: the list (with kernels, names, closing) and opening one.
import { $, el, short, when } from "./util.js";
import { state, api, showError, clearError } from "./api.js";
import { connect } from "./stream.js";
import { scheduleBench } from "./bench.js";
import { openCampaign } from "./campaigns.js";
import { showRunBar } from "./runs.js";


export async function loadKernels() {
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
export async function loadSessions() {
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



export function showSessionName() {
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

export function openSession(id, focusOp) {
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
  state.plan = null;
  state.runStep = "";
  showSessionName();
  state.run = null;
  showRunBar();
  for (const b of document.querySelectorAll("#sessions button")) {
    if (b.dataset.session === id) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
  }
  connect();
}

export async function newSession() {
  try {
    const { id } = await api("POST", "/v1/sessions");
    openSession(id);
    await loadSessions();
    $("#code").focus();
  } catch (e) { showError(e); }
}
