// Telemetry charts: every series of two or more samples is a line chart under its card.
//
// x is the series' own abscissa: the `t` the code logged with the value (labmate_log('E', E,
// t), labmate.log(name, v, t=…), a printed `t=0.1 y=…`), else a step column printed on the same
// line (`epoch 8 loss 0.31`, `iter 12, residual 3e-5`), else the sample's index; the axis is
// named after it. y is on a log scale when the series is positive and spans more than three
// decades (residuals), x too when it is a positive abscissa that does. Numbers are printed to
// four significant digits. Another series of the operation on the same abscissa can be drawn
// over a chart (its overlay menu), on the same axes, with a legend. The moments perception gave
// a Warning or an Error are marked at the sample they were about. Redrawn at most once a frame;
// each point observed after the page loaded is measured from the server's timestamp to the
// frame that shows it, as a performance entry "chart-point" (performance.getEntriesByName), so
// the lag is observable.

import { el } from "./util.js";

export const SVG = "http://www.w3.org/2000/svg";
const W = 480, H = 150;
const MAX_POINTS = 2000; // per series: past it, every other point is dropped

// STEP names a printed column that counts steps: the abscissa of the other values on its line.
const STEP = /^(step|steps|iter|iters|iteration|it|epoch|cycle|frame|generation|gen|n_?iter)$/i;


// fmtNum prints a number to four significant digits: "0.1235", "1.235e+05", "42".
export function fmtNum(v) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(3).replace(/\.?0+e/, "e");
  return String(+v.toPrecision(4));
}

// fmtTick prints a tick's round value without float noise: "0.3", not "0.30000000000000004".
export function fmtTick(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2).replace(/\.?0+e/, "e");
  return String(+v.toPrecision(6));
}

// addSample adds one telemetry sample of card c. ts is the message's timestamp, key the
// observation's time (the samples of one printed line share it).
export function addSample(c, s, ts, key) {
  if (!Number.isFinite(s.value)) return; // NaN/Inf cannot be drawn; the verdict says it
  c.charts ||= { series: new Map(), marks: [], steps: new Map(), pending: [] };
  const ch = c.charts;
  if (STEP.test(s.name) && s.t === undefined) ch.steps.set(key, { name: s.name, v: s.value });
  let sr = ch.series.get(s.name);
  if (!sr) {
    const fig = el("figure", "chart");
    const cap = el("figcaption");
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "telemetry " + s.name);
    fig.dataset.series = s.name;
    fig.hidden = true; // until its second point
    const pick = el("select", "overlay");
    pick.title = "draw another series of this operation on the same axes";
    const choose = el("label", "overlay", "overlay ");
    choose.append(pick);
    choose.hidden = true; // until there is a series to offer
    fig.append(cap, svg, choose);
    c.tele.append(fig);
    const step = ch.steps.get(key);
    const by = s.t !== undefined ? "t" : step && step.name !== s.name ? step.name : "";
    sr = { xs: [], ys: [], ts: [], cap, svg, fig, by, pick, choose, offered: "", overlay: "" };
    pick.addEventListener("change", () => { sr.overlay = pick.value; schedule(c); });
    ch.series.set(s.name, sr);
  }
  if (sr.xs.length >= MAX_POINTS) {
    const keep = (_, i) => i % 2 === 0;
    sr.xs = sr.xs.filter(keep); sr.ys = sr.ys.filter(keep); sr.ts = sr.ts.filter(keep);
  }
  let x;
  if (sr.by === "t") x = s.t;
  else if (sr.by) { const st = ch.steps.get(key); x = st && st.name === sr.by ? st.v : undefined; }
  else x = (sr.n = (sr.n ?? -1) + 1);
  if (x === undefined || !Number.isFinite(x)) x = sr.xs.length ? sr.xs[sr.xs.length - 1] : 0;
  if (ch.steps.size > 64) ch.steps.delete(ch.steps.keys().next().value); // only the newest lines matter
  sr.xs.push(x);
  sr.ys.push(s.value);
  sr.ts.push(ts);
  if (ts * 1000 >= performance.timeOrigin) ch.pending.push(ts * 1000);
  schedule(c);
}

// mark records a verdict that is not Normal at time ts: it is drawn at the sample of each
// series observed at that moment (the first one at or after it, else the last).
export function mark(c, v, ts) {
  if (!c.charts) return; // nothing charted yet
  c.charts.marks.push({ ts, state: v.state, text: `${v.state} · ${v.detector}: ${v.message}` });
  schedule(c);
}

function schedule(c) {
  const ch = c.charts;
  if (ch.frame) return;
  ch.frame = requestAnimationFrame(() => {
    ch.frame = 0;
    // A step column that is the abscissa of another series is not a chart of its own.
    const used = new Set([...ch.series.values()].map((sr) => sr.by));
    for (const [name, sr] of ch.series) {
      if (used.has(name)) { sr.fig.hidden = true; continue; }
      offer(ch, name, sr, used);
      draw(ch, name, sr);
    }
    const now = performance.timeOrigin + performance.now();
    for (const t of ch.pending) {
      performance.measure("chart-point", { start: t - performance.timeOrigin, end: now - performance.timeOrigin });
    }
    ch.pending = [];
  });
}

// niceTicks are evenly spaced round values (steps of 1, 2 or 5 times a power of ten) from
// below lo to above hi, at most about max of them: every tick is labelled, none skipped.
export function niceTicks(lo, hi, max) {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / Math.max(max - 1, 1);
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw * (1 - 1e-9));
  const first = Math.floor(lo / step + 1e-9) * step, last = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = first; v <= last + step / 2; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : +v.toPrecision(12));
  return ticks;
}

// axes draws a chart's frame: the y ticks (values already in the chart's units) with their
// labels, the x ticks, and the label of each axis.
export function axes(add, g, yt, xt, ylabel, xlabel) {
  for (const t of yt) {
    add("line", { class: "grid", x1: g.L, x2: g.W - g.R, y1: g.y(t.v), y2: g.y(t.v) });
    add("text", { class: "tick", x: g.L - 4, y: g.y(t.v) + 3.5, "text-anchor": "end" }, t.label);
  }
  for (const t of xt) {
    add("line", { class: "axis", x1: g.x(t.v), x2: g.x(t.v), y1: g.H - g.B, y2: g.H - g.B + 3 });
    const edge = g.x(t.v) > g.W - g.R - 16; // the last label ends at the frame instead of crossing it
    add("text", { class: "tick x", x: edge ? g.W - 1 : g.x(t.v), y: g.H - g.B + 13, "text-anchor": edge ? "end" : "middle" }, t.label);
  }
  add("line", { class: "axis", x1: g.L, x2: g.L, y1: g.T, y2: g.H - g.B });
  add("line", { class: "axis", x1: g.L, x2: g.W - g.R, y1: g.H - g.B, y2: g.H - g.B });
  add("text", { class: "axis-label x", x: (g.L + g.W - g.R) / 2, y: g.H - 3, "text-anchor": "middle" }, xlabel);
  add("text", { class: "axis-label y", x: 0, y: 0, "text-anchor": "middle",
    transform: `translate(11 ${(g.T + g.H - g.B) / 2}) rotate(-90)` }, ylabel);
}

export function svgAdder(svg) {
  return (tag, attrs, text) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
}

// scale maps values onto an axis: linear, or log10 for positive values spanning over three
// decades (when allowed); its ticks are round values, whole decades on a log scale.
function scale(vs, allowLog, from0, n) {
  let lo = Math.min(...vs), hi = Math.max(...vs);
  const log = allowLog && lo > 0 && hi / lo > 1e3;
  const f = log ? Math.log10 : (v) => v;
  lo = f(lo); hi = f(hi);
  if (!log && from0 && lo >= 0 && lo <= 0.25 * hi) lo = 0; // an abscissa that starts near 0 starts at 0
  if (hi === lo) { lo -= 1; hi += 1; }
  let ticks = log ? niceTicks(Math.floor(lo), Math.ceil(hi), n + 1).filter((v) => Number.isInteger(v)) : niceTicks(lo, hi, n);
  if (from0) ticks = ticks.filter((v) => v >= lo - 1e-9 * (hi - lo) && v <= hi + 1e-9 * (hi - lo)); // x: the data's span
  else { lo = Math.min(lo, ticks[0]); hi = Math.max(hi, ticks[ticks.length - 1]); } // y: the ticks' span
  return { f, lo, hi, log, ticks, label: (v) => (log ? "1e" + v : fmtTick(v)) };
}

// offer lists, in a chart's overlay menu, the other series of its operation that share its
// abscissa (so that their points line up): the related series a scientist compares on one pair
// of axes, a training loss with its validation loss, a temperature with its target.
function offer(ch, name, sr, used) {
  const names = [...ch.series].filter(([n, o]) => n !== name && !used.has(n) && o.by === sr.by && o.ys.length >= 2).map(([n]) => n);
  const key = names.join("\n");
  if (key === sr.offered) return;
  sr.offered = key;
  sr.pick.replaceChildren(el("option", "", "none"), ...names.map((n) => { const o = el("option", "", n); o.value = n; return o; }));
  sr.pick.firstChild.value = "";
  if (!names.includes(sr.overlay)) sr.overlay = "";
  sr.pick.value = sr.overlay;
  sr.choose.hidden = names.length === 0;
}

function draw(ch, name, sr) {
  const ys = sr.ys;
  // One point is no curve: a series shows from its second sample (a plate read once, at many
  // wavelengths, is its spectra in the bench view instead of a chart per well and wavelength).
  sr.fig.hidden = ys.length < 2;
  if (sr.fig.hidden) return;
  const other = sr.overlay ? ch.series.get(sr.overlay) : null;
  const ysc = scale(other ? ys.concat(other.ys) : ys, true, false, 5);
  const xsc = scale(other ? sr.xs.concat(other.xs) : sr.xs, sr.by !== "", true, 6);
  const g = { W, H, L: 50, R: 10, T: 6, B: 30 };
  g.x = (x) => g.L + ((x - xsc.lo) / (xsc.hi - xsc.lo)) * (W - g.L - g.R);
  g.y = (y) => H - g.B - ((y - ysc.lo) / (ysc.hi - ysc.lo)) * (H - g.T - g.B);
  sr.svg.replaceChildren();
  const add = svgAdder(sr.svg);
  const xname = sr.by || "sample";
  axes(add, g, ysc.ticks.map((v) => ({ v, label: ysc.label(v) })), xsc.ticks.map((v) => ({ v, label: xsc.label(v) })),
    (other ? name + ", " + sr.overlay : name) + (ysc.log ? " (log)" : ""), xname + (xsc.log ? " (log)" : ""));
  sr.svg.dataset.xmin = String(Math.min(...sr.xs));
  sr.svg.dataset.xmax = String(Math.max(...sr.xs));
  sr.svg.dataset.x = xname;
  const line = (o, cls) => add("polyline", { class: cls, points: o.ys.map((y, i) => g.x(xsc.f(o.xs[i])).toFixed(1) + "," + g.y(ysc.f(y)).toFixed(1)).join(" ") });
  if (other) {
    line(other, "series overlay").dataset.series = sr.overlay;
    // The legend: each series' name in its line's colour, at the top right.
    add("text", { class: "legend", x: W - g.R - 4, y: g.T + 10, "text-anchor": "end" }, name);
    add("text", { class: "legend overlay", x: W - g.R - 4, y: g.T + 22, "text-anchor": "end" }, sr.overlay);
  }
  line(sr, "series").dataset.series = name;
  for (const m of ch.marks) {
    let i = sr.ts.findIndex((t) => t >= m.ts - 1e-6);
    if (i < 0) i = sr.ts.length - 1;
    const x = g.x(xsc.f(sr.xs[i]));
    const l = add("line", { x1: x, x2: x, y1: g.T, y2: H - g.B, class: "mark " + m.state });
    l.dataset.x = String(sr.xs[i]);
    const t = document.createElementNS(SVG, "title");
    t.textContent = `${m.text} (at ${xname} ${fmtNum(sr.xs[i])})`;
    l.append(t);
  }
  sr.cap.textContent = `${name} = ${fmtNum(ys[ys.length - 1])}  (${ys.length} points against ${xname}` +
    `${ysc.log ? ", log scale" : ""}; ${fmtNum(Math.min(...ys))} … ${fmtNum(Math.max(...ys))})` +
    (other ? `; with ${sr.overlay} = ${fmtNum(other.ys[other.ys.length - 1])}` : "");
}
