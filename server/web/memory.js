// Memory: namespaces, search, and a fact's page with its edit and invalidate forms.
import { $, el, short } from "./util.js";
import { state, api, showError, clearError } from "./api.js";
import { splitCols } from "./campaigns.js";


export async function detectMemory() {
  try {
    await api("GET", "/v1/memory/namespaces");
    $("#nav-memory").hidden = false;
  } catch { /* this server has no memory: the page stays hidden */ }
}

export async function loadNamespaces() {
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
export async function fetchBlob(path) {
  const headers = state.token ? { Authorization: "Bearer " + state.token } : {};
  const res = await fetch(path, { headers });
  if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || path + ": HTTP " + res.status);
  return res.blob();
}

// saveBlob downloads b as a file called name, typed application/octet-stream so that no
// browser renders it on this origin.
export function saveBlob(b, name) {
  const url = URL.createObjectURL(new Blob([b], { type: "application/octet-stream" }));
  const a = el("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export async function memorySearch(ev) {
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
export async function addFact(ev) {
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
export function entryForm(which) {
  $("#entry-edit-form").hidden = which !== "edit";
  $("#entry-invalidate-form").hidden = which !== "invalidate";
  $("#entry-actions").hidden = which !== "" || !state.entryData || state.entryData.status !== "active";
}

export function startEdit() {
  const f = state.entryData;
  $("#edit-text").value = f.text;
  $("#edit-kind").value = f.kind;
  $("#edit-tags").value = (f.tags || []).join(", ");
  $("#edit-conf").value = f.confidence || "";
  $("#edit-reason").value = "";
  entryForm("edit");
  $("#edit-text").focus();
}

export async function saveEdit(ev) {
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

export async function invalidateEntry(ev) {
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
