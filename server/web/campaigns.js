// Campaigns: the page that starts, steps and plays a campaign and charts it.
import { $, el } from "./util.js";
import { SVG, niceTicks, axes, svgAdder } from "./charts.js";
import { state, api, showError, clearError } from "./api.js";
import { route } from "./app.js";


export async function detectCampaigns() {
  try {
    await api("GET", "/v1/campaigns");
    $("#nav-campaigns").hidden = false;
  } catch { /* this server runs no campaigns */ }
}

const fmt = (v, d = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(d));
export const splitCols = (v) => v.split(",").map((x) => x.trim()).filter(Boolean);

export async function loadCampaigns() {
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
export async function openCampaign(id) {
  clearError();
  try {
    const st = await api("GET", `/v1/campaigns/${encodeURIComponent(id)}`);
    history.pushState(null, "", "#campaigns");
    route();
    showCampaign(st);
  } catch (e) { showError(e); }
}

export async function startCampaign(ev) {
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

export async function showCampaignFile() {
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
  // A campaign another process plays (labmate campaign run) is followed here, and may be
  // interrupted there (through the log); it is not stepped from here.
  const elsewhere = !st.done && !!st.played_by;
  $("#camp-summary").textContent = `${st.steps.length} of ${c.budget} turns; ${best}` +
    (st.done ? "; done" : "") + (st.error ? `; stopped: ${st.error}` : "") + (elsewhere ? `; played by ${st.played_by}` : "");
  $("#camp-step").disabled = st.done || elsewhere;
  $("#camp-play").disabled = st.done || state.playing || elsewhere;
  $("#camp-interrupt").hidden = !elsewhere;
  clearTimeout(followTimer);
  if (elsewhere) followTimer = setTimeout(() => followCampaign(c.id), 1000);
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

let followTimer = 0;

// followCampaign shows campaign id again, as the process that plays it has logged it, while it
// is the one shown.
async function followCampaign(id) {
  if (state.campaign !== id || $("#page-campaigns").hidden) return;
  try {
    const st = await api("GET", `/v1/campaigns/${encodeURIComponent(id)}`);
    if (state.campaign === id) showCampaign(st);
  } catch (e) { showError(e); }
}

// interruptCampaign stops the campaign shown, which another process plays: the interrupt
// reaches it through the log, and it ends the campaign's stream, interrupted.
export async function interruptCampaign() {
  const id = state.campaign;
  const b = $("#camp-interrupt");
  clearError();
  b.disabled = true;
  try {
    await api("POST", `/v1/sessions/${encodeURIComponent(id)}/operations/${encodeURIComponent(id)}/interrupt`, { why: "interrupted from the dashboard" });
  } catch (e) { showError(e); }
  b.disabled = false;
  followCampaign(id);
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

export async function stepCampaign(n) {
  try {
    const st = await api("POST", `/v1/campaigns/${encodeURIComponent(state.campaign)}/step?n=${n}`);
    showCampaign(st);
    return st;
  } catch (e) { showError(e); return null; }
}

// playCampaign plays one turn at a time, so that the chart grows as it goes.
export async function playCampaign() {
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
