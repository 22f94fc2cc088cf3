// Agent runs: the Runs page and the bar of a run's session.
import { $, el, short } from "./util.js";
import { state, api, request, showError, clearError } from "./api.js";

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

export async function loadRuns() {
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

export const cancelRun = (id) => api("POST", "/v1/runs/" + encodeURIComponent(id) + "/cancel");
export const resumeRun = (id) => api("POST", "/v1/runs/" + encodeURIComponent(id) + "/resume");

export async function startRun(ev) {
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
export function showRunBar() {
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

export async function runBarAction(button, action) {
  clearError();
  button.disabled = true;
  try { await action(state.session); } catch (e) { button.disabled = false; showError(e); }
}
