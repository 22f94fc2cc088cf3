// The bench: the session's deck and readings drawn as SVG.
import { $, el } from "./util.js";
import { SVG, niceTicks, axes, svgAdder } from "./charts.js";
import { state, api } from "./api.js";


// The session's deck (GET /v1/sessions/ID/bench) is fetched again after a command moved
// liquid (its vol_… telemetry), at most one fetch at a time and one more queued.
let benchBusy = false, benchAgain = false;
export function scheduleBench() {
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
