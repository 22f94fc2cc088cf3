// An agent run's timeline: each event of its stream that is not an operation (those are
// cards of their own) as a line of the story, in order between the cards.

import { $, el, clock, duration } from "./util.js";
import { state } from "./api.js";
import { card } from "./stream.js";

// STEP_EVENTS are the events that belong to a step of the plan: the first of a step opens
// it with a heading (the step's title and check), so that the timeline reads step by step.
const STEP_EVENTS = new Set(["model_call", "cell", "tool_result", "reflection", "verdict"]);

// stepHeading adds the heading of the plan's step ev.step when ev is the first event of it.
function stepHeading(ev) {
  const pl = state.plan;
  if (!pl || !STEP_EVENTS.has(ev.type) || (ev.type === "model_call" && (ev.call || {}).module === "plan")) return;
  const st = (pl.steps || [])[ev.step];
  const key = `${state.plans}/${ev.step}`;
  if (!st || state.runStep === key) return;
  state.runStep = key;
  const h = el("h4", "run-step", `step ${ev.step + 1} of ${pl.steps.length}: ${st.title}`);
  if (st.checkpoint) h.append(el("span", "muted", ` — check: ${st.checkpoint}`));
  $("#stream").append(h);
}

// cellOfRun makes, in its place in the timeline, the card of a cell the run submits (an
// operation of its session, named by its id; its messages fill it) and marks it with the step
// and the attempt it belongs to.
function cellOfRun(ev) {
  const id = (ev.cell || {}).id;
  if (!id) return;
  const c = card({ operation_id: id, timestamp: ev.time ? Date.parse(ev.time) / 1000 : Date.now() / 1000 });
  if (c.root.dataset.step) return;
  c.root.dataset.step = String(ev.step + 1);
  c.root.classList.add("run-cell");
  c.kernel.after(el("span", "muted step", `step ${ev.step + 1}${ev.attempt ? ", repair " + ev.attempt : ""}`));
}

// told reports whether the run's view said err already — it, or an error it wraps, or one
// that wraps it ("code module: llm: …" wraps the failed call's "llm: …") — and remembers it.
export function told(err) {
  if (!err) return false;
  const key = String(err).trim();
  const said = (state.runErrors ||= new Set());
  for (const e of said) if (e.includes(key) || key.includes(e)) return true;
  said.add(key);
  return false;
}

// runLine adds one event of an agent run to the stream, in order between its operations'
// cards: the run's timeline — its start, what memory recalled, each plan (re-plans marked),
// each model answer (folded), tool results, reflections (repairs and re-plans), the answer and
// the stop — each with its time. An error already shown in this run is not shown again.
export function runLine(c, ev) {
  let text = "", cls = "run-line";
  const seen = told;
  const stamp = (e) => {
    const t = ev.time ? Date.parse(ev.time) / 1000 : 0;
    if (t) e.prepend(el("time", "at", clock(t) + " "));
    $("#stream").append(e);
  };
  stepHeading(ev);
  switch (ev.type) {
    case "cell": cellOfRun(ev); return; // the cell's card is the session's operation
    case "run_start": {
      const st = ev.start || {}, task = st.task || {};
      text = `${st.resumed ? "resumed" : "started"} with ${st.model || "?"} (${task.mode || "agent"}, ${task.kernel || "?"} kernel): ${task.goal || ""}`;
      c.code.textContent = task.goal || "";
      if (task.goal && c.root.parentNode) $("#runner-title").textContent = "Agent run: " + task.goal;
      break;
    }
    case "memory": text = "memory recalled: " + (ev.memory || "nothing relevant"); break;
    case "plan": {
      const pl = ev.plan || {};
      state.plans = (state.plans || 0) + 1;
      state.plan = pl;
      state.runStep = "";
      const box = el("div", "run-line plan");
      box.append(el("p", "", `${state.plans > 1 ? "re-plan" : "plan"}: ${pl.goal || ""}`));
      const ol = document.createElement("ol");
      for (const st of pl.steps || []) ol.append(el("li", "", `${st.title} [${st.tool}] — check: ${st.checkpoint}`));
      box.append(ol);
      stamp(box);
      return;
    }
    case "tool_result": {
      const t = ev.tool || {};
      if (t.operation && t.operation.ok) return; // its card says it
      if (t.operation) { // a failed cell goes back to the code module: a repair, or the planner once they are exhausted
        const o = t.operation, why = o.hot_fix ? "stopped by perception" : o.reason || "failed";
        text = /repairs of this step are exhausted/.test(t.content || "") ?
          `cell ${why}: the repairs of this step are exhausted; back to the planner` : `cell ${why}: repair ${ev.attempt} — the code module fixes it`;
        cls += " warn repair";
        break;
      }
      if (t.is_error && seen(t.content)) return;
      const wrote = /^(save_fact|save_skill|update_skill)$/.test(t.name || "") && !t.is_error;
      text = `${wrote ? "memory written: " : ""}${t.name}${t.is_error ? " rejected" : ""}: ${String(t.content || "").split("\n")[0]}`;
      if (wrote) cls += " memory-written";
      break;
    }
    case "verdict": return; // shown on the operation's card
    case "reflection": {
      const f = ev.reflection || {};
      const what = f.decision === "adjust" ? "repair" : f.decision === "replan" ? "re-plan" : f.decision;
      text = `reflect, step ${ev.step + 1}: ${what} — ${f.reasons}${f.fix ? " (fix: " + f.fix + ")" : ""}`;
      cls += f.decision === "accept" ? " ok" : " warn";
      break;
    }
    case "answer": text = "answer: " + ((ev.answer || {}).text || ""); cls += " answer"; break;
    case "resumed": text = "resumed" + (ev.by ? " (" + ev.by + ")" : ""); break;
    case "kernel_state": {
      const k = ev.kernel_state || {};
      const lost = (k.skipped || []).map((x) => `${x.name} (${x.reason})`);
      text = k.error ? `${k.kernel} kernel state not restored: ${k.error}` :
        `${k.kernel} kernel state restored: ${(k.names || []).join(", ") || "no variables"}${lost.length ? "; not restored: " + lost.join(", ") : ""}`;
      if (k.error || lost.length) cls += " warn";
      break;
    }
    case "ended": {
      const e = ev.end;
      text = `ended (${e.reason})${e.error && !seen(e.error) ? ": " + e.error : ""}`;
      if (!e.resumable && e.reason !== "cancelled") cls += " warn";
      break;
    }
    case "model_call": { // each model answer, folded: its module, turn, tokens and time, then what it said
      const call = ev.call || {}, u = call.usage || {};
      if (call.error) {
        if (seen(call.error)) return;
        text = `${call.module}: model call failed: ${call.error}`;
        cls += " warn";
        break;
      }
      const d = el("details", "run-line model");
      const tokens = (u.input_tokens || 0) + (u.output_tokens || 0);
      d.append(el("summary", "", `model · ${call.module}, turn ${call.turn}${tokens ? " · " + tokens + " tokens" : ""}` +
        `${call.duration_s ? " · " + duration(call.duration_s) : ""}`));
      d.append(el("pre", "reply", call.reply || "(no text)"));
      stamp(d);
      return;
    }
    case "stop": {
      const st = ev.stop || {}, stats = st.stats || {};
      const tokens = (stats.modules || []).map((m) => `${m.module} ${(m.input_tokens || 0) + (m.output_tokens || 0)}`).join(", ");
      text = `stopped: ${st.reason}${st.error && !seen(st.error) ? " (" + st.error + ")" : ""} — ${stats.operations || 0} operations, ` +
        `${stats.hot_fixes || 0} hot-fixes, ${stats.repairs || 0} repairs, ${stats.replans || 0} re-plans; tokens: ${tokens || "none"}`;
      break;
    }
    default: text = ev.type;
  }
  stamp(el("p", cls, text));
}

