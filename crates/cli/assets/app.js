// leakscope serve: browses the server's JSON API from the report page.
// Every string from the heap is attacker-controlled text: it only ever goes into the page
// through textContent, never as markup.
"use strict";

const PAGE = 25;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v;
    else if (k === "cls") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

const int = (n) => Number(n).toLocaleString("en-US");

async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const res = await fetch(`${path}?${q}`, { headers: { Accept: "application/json" } });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `${res.status} ${res.statusText}`);
  return body;
}

function status(text, isError) {
  const s = document.getElementById("status");
  if (!s) return;
  s.textContent = text || "";
  s.className = isError ? "note err" : "note";
}

function fail(where, e) {
  where.append(el("div", { cls: "err", text: e.message }));
}

function classLink(name) {
  return el("span", { cls: "mono", "data-class": name, text: name });
}

function idLink(id) {
  return el("span", { cls: "muted mono", "data-id": id, text: id });
}

function moreButton(container, shown, total, load) {
  if (shown >= total) return;
  const b = el("button", { cls: "more", type: "button", text: `Show ${Math.min(PAGE, total - shown)} more (${int(total - shown)} not shown)` });
  b.addEventListener("click", () => { b.remove(); load(shown); });
  container.append(b);
}

// A row with a toggle that fetches its children the first time it is opened.
function expandable(row, hasKids, loadKids) {
  const tog = el("button", { cls: "tog", type: "button", "aria-expanded": "false", text: hasKids ? "▸" : "" });
  if (!hasKids) tog.disabled = true;
  row.prepend(tog);
  let kids = null;
  tog.addEventListener("click", () => {
    if (!kids) {
      kids = el("div", { cls: "kids" });
      row.after(kids);
      loadKids(kids, 0);
    } else {
      kids.hidden = !kids.hidden;
    }
    tog.setAttribute("aria-expanded", String(!kids.hidden));
    tog.textContent = kids.hidden ? "▸" : "▾";
  });
}

// ---- dominator tree ----

async function loadDominators(container, parent, offset) {
  let page;
  try {
    page = await api("/api/dominators", { parent, offset, limit: PAGE });
  } catch (e) {
    return fail(container, e);
  }
  if (page.total === 0) container.append(el("div", { cls: "muted", text: "dominates nothing" }));
  for (const n of page.objects) {
    const o = n;
    const name = o.represents ? `class ${o.represents}` : o.class;
    const row = el("div", { cls: "row dom", "data-node": o.id },
      el("span", { cls: "grow" }, classLink(name), " ", idLink(o.id)),
      el("span", { cls: "num", text: `retains ${bytes(o.retained_bytes)} (${(o.share * 100).toFixed(1)}%)` }),
      el("span", { cls: "num muted", text: `shallow ${bytes(o.shallow_bytes)}` }),
      el("span", { cls: "num muted", text: o.children ? `${int(o.children)} dominated` : "" }));
    if (o.represents) row.querySelector("[data-class]").setAttribute("data-class", o.represents);
    expandable(row, o.children > 0, (kids, off) => loadDominators(kids, o.id, off));
    container.append(row);
  }
  moreButton(container, page.offset + page.objects.length, page.total, (off) => loadDominators(container, parent, off));
}

// ---- grouping tree ----

const sizeQueue = [];
let sizing = false;

async function drainSizes() {
  if (sizing) return;
  sizing = true;
  while (sizeQueue.length) {
    const { by, node, deep, retained } = sizeQueue.shift();
    if (!deep.isConnected) continue;
    try {
      const s = await api("/api/group/sizes", { by, node });
      deep.textContent = bytes(s.sizes.transitive_bytes);
      retained.textContent = bytes(s.sizes.retained_bytes);
    } catch (e) {
      deep.textContent = "?";
      retained.textContent = "?";
      deep.title = e.message;
    }
  }
  sizing = false;
}

async function loadGroup(container, by, node, offset) {
  let page;
  try {
    page = await api("/api/group", { by, node, offset, limit: PAGE });
  } catch (e) {
    return fail(container, e);
  }
  for (const c of page.children) {
    const deep = el("span", { cls: "num", title: "deep: bytes the group reaches", text: "…" });
    const retained = el("span", { cls: "num", title: "retained: bytes freed with the whole group", text: "…" });
    const row = el("div", { cls: "row group", "data-group": String(c.node) },
      el("span", { cls: "grow mono", text: c.key }),
      el("span", { cls: "num", text: `${int(c.count)} objects` }),
      el("span", { cls: "num muted", title: "shallow bytes", text: bytes(c.shallow_bytes) }),
      deep, retained);
    if (by.split(",").pop() === "class" && c.more_children === 0) row.firstChild.setAttribute("data-class", c.key);
    expandable(row, c.more_children > 0, (kids, off) => loadGroup(kids, by, c.node, off));
    container.append(row);
    sizeQueue.push({ by, node: c.node, deep, retained });
  }
  moreButton(container, page.offset + page.children.length, page.total, (off) => loadGroup(container, by, node, off));
  drainSizes();
}

function regroup() {
  const tree = document.getElementById("grouptree");
  const by = document.getElementById("by").value.replace(/\s+/g, "");
  tree.replaceChildren(el("div", { cls: "row muted" },
    el("span", { cls: "grow", text: `grouped by ${by}` }), el("span", { text: "count" }),
    el("span", { text: "shallow" }), el("span", { text: "deep" }), el("span", { text: "retained" })));
  loadGroup(tree, by, 0, 0);
}

// ---- inspector ----

function openInspector() {
  const s = document.getElementById("inspect");
  s.hidden = false;
  s.scrollIntoView({ block: "start" });
  return s;
}

function sizesTable(sizes) {
  const t = el("table");
  for (const [k, v] of [["objects", int(sizes.objects)], ["shallow", bytes(sizes.shallow_bytes)],
    ["deep (reachable from it)", bytes(sizes.transitive_bytes)], ["retained (freed with it)", bytes(sizes.retained_bytes)]]) {
    t.append(el("tr", {}, el("th", { text: k }), el("td", { cls: "n", text: v })));
  }
  return t;
}

// Paths as the text shows them: the root object (or the class a loader defines) and how it
// is held on the first line, a class loader's bookkeeping left out (`readable`).
function pathsList(paths) {
  const box = el("div");
  if (paths.paths.length === 0) {
    box.append(el("p", { cls: "muted", text: "No strong path from a GC root: it would be collected." }));
  }
  for (const p of paths.paths) {
    const ul = el("ul", { cls: "path mono" });
    ul.append(el("li", { text: `${p.readable.from}${p.count > 1 ? ` — ${int(p.count)} objects like this` : ""}` }));
    p.readable.steps.forEach((s, i) => {
      ul.append(el("li", {}, "\u00a0\u00a0".repeat(i + 1) + `${s.field} → `, classLink(s.class), " ", idLink(s.id)));
    });
    box.append(ul);
  }
  if (paths.more_shapes) box.append(el("p", { cls: "muted", text: "More path shapes exist." }));
  if (paths.unreachable) box.append(el("p", { cls: "muted", text: `${int(paths.unreachable)} not strongly reachable.` }));
  return box;
}

// What a reference points to: class and id (both clickable), retained size, a string's text.
function target(t) {
  if (!t) return el("span", { cls: "muted", text: "null" });
  return el("span", {}, classLink(t.class), " ", idLink(t.id), ` retains ${bytes(t.retained_bytes)}`,
    t.value !== undefined ? el("span", { cls: "mono", text: ` ${JSON.stringify(t.value)}` }) : null);
}

function headerRow(...names) {
  return el("tr", {}, ...names.map(([n, cls]) => el("th", cls ? { cls, text: n } : { text: n })));
}

function fieldsTable(fields) {
  const statics = fields.length > 0 && fields.every((f) => f.is_static);
  const t = el("table", { id: "fields" }, headerRow([statics ? "static field" : "field"], ["type"], ["value"]));
  for (const f of fields) {
    t.append(el("tr", {}, el("td", { cls: "mono", text: f.name }), el("td", { cls: "mono", text: f.type }),
      el("td", {}, f.value !== null ? el("span", { cls: "mono", text: f.value }) : target(f.target))));
  }
  return t;
}

function elementsTable(box, id, a) {
  const t = el("table", { id: "elements" }, headerRow(["index", "n"], ["element"]));
  for (const e of a.elements) {
    t.append(el("tr", {}, el("td", { cls: "n", text: int(e.index) }),
      el("td", {}, e.value !== null ? el("span", { cls: "mono", text: e.value }) : target(e.target))));
  }
  box.append(t);
  if (a.values_hidden) box.append(el("p", { cls: "muted", text: "Values are shown when the server runs with --show-values." }));
  else moreButton(box, a.offset + a.elements.length, a.length, async (from) => {
    const v = await api("/api/object", { id, elements_from: from, limit: PAGE });
    elementsTable(box, id, v.array);
  });
}

function referrersTable(box, id, r) {
  const t = el("table", { id: "referrers" }, headerRow(["strength"], ["field"], ["referenced by"]));
  for (const x of r.rows) {
    t.append(el("tr", {}, el("td", { text: x.strength }), el("td", { cls: "mono", text: x.field }), el("td", {}, target(x))));
  }
  box.append(t);
  moreButton(box, r.offset + r.rows.length, r.total, async (from) => {
    const v = await api("/api/object", { id, referrers_from: from, limit: PAGE });
    referrersTable(box, id, v.referrers);
  });
}

async function showObject(id) {
  openInspector();
  const detail = document.getElementById("detail");
  status(`Loading ${id}…`);
  try {
    const v = await api("/api/object", { id, limit: PAGE });
    const o = v.object;
    const name = o.represents ? `class ${o.represents}` : o.class;
    const head = el("h3", {}, classLink(o.represents || o.class), " ", el("span", { cls: "muted mono", text: o.id }));
    head.firstChild.textContent = name;
    const parts = [head];
    if (v.value !== undefined) parts.push(el("p", {}, "value: ", el("span", { cls: "mono", text: JSON.stringify(v.value) })));
    for (const r of v.roots) parts.push(el("p", { text: `A GC root: ${r}.` }));
    parts.push(sizesTable(v.sizes));
    const dominated = o.children === 1 ? "1 object" : `${int(o.children)} objects`;
    parts.push(el("p", {}, v.live ? `Dominates ${dominated}. ` : "Not strongly reachable. ",
      v.dominator ? "Kept alive only through " : "", v.dominator ? classLink(v.dominator.class) : null,
      v.dominator ? " " : null, v.dominator ? idLink(v.dominator.id) : null));
    if (v.fields.length > 0) parts.push(el("h3", { text: "Fields" }), fieldsTable(v.fields));
    if (v.array) {
      const box = el("div");
      parts.push(el("h3", { text: `${int(v.array.length)} elements of ${v.array.element_type}` }), box);
      elementsTable(box, id, v.array);
    }
    const refs = el("div");
    const objects = v.referrers.total === 1 ? "object" : "objects";
    parts.push(el("h3", { text: `Referenced by ${int(v.referrers.total)} ${objects} (${int(v.referrers.strong)} strong)` }), refs);
    referrersTable(refs, id, v.referrers);
    parts.push(el("h3", { text: "Paths from GC roots" }), pathsList(v.paths));
    detail.replaceChildren(...parts);
    status("");
  } catch (e) {
    status(e.message, true);
  }
}

async function showClass(name) {
  openInspector();
  const detail = document.getElementById("detail");
  status(`Loading ${name}…`);
  try {
    const v = await api("/api/class", { name });
    const list = el("ul", { cls: "mono" });
    for (const o of v.biggest) {
      list.append(el("li", {}, idLink(o.id), ` retains ${bytes(o.retained_bytes)}, shallow ${bytes(o.shallow_bytes)}`));
    }
    detail.replaceChildren(el("h3", { cls: "mono", text: v.class }), el("p", { cls: "muted", text: "All instances together:" }),
      sizesTable(v.sizes), el("h3", { text: "Biggest instances" }), list,
      el("h3", { text: "Paths from GC roots" }), pathsList(v.paths));
    status("");
  } catch (e) {
    status(e.message, true);
  }
}

async function search(q, offset) {
  openInspector();
  const results = document.getElementById("results");
  if (!offset) results.replaceChildren();
  try {
    const page = await api("/api/search", { q, offset, limit: PAGE });
    if (!offset) {
      status(`${int(page.total)} classes match ${JSON.stringify(page.query)}.`);
      if (page.object) results.append(el("p", {}, "Object ", idLink(page.object)));
    }
    const t = el("table", {}, offset ? null : headerRow(["class"], ["instances", "n"], ["shallow", "n"]));
    for (const c of page.classes) {
      t.append(el("tr", {}, el("td", { cls: "mono", "data-class": c.name, text: c.name }),
        el("td", { cls: "n", text: int(c.instances) }), el("td", { cls: "n", text: bytes(c.shallow_bytes) })));
    }
    results.append(t);
    moreButton(results, page.offset + page.classes.length, page.total, (off) => search(q, off));
  } catch (e) {
    status(e.message, true);
  }
}

// ---- comparison of two heaps of the series ----

const signed = (n) => (n < 0 ? "−" : "+") + bytes(Math.abs(n));

async function compare() {
  const out = document.getElementById("comparison");
  const baseline = document.getElementById("baseline").value;
  const current = document.getElementById("current").value;
  out.replaceChildren(el("p", { cls: "muted", text: "Comparing…" }));
  try {
    const c = await api("/api/compare", { baseline, current });
    const g = c.growth;
    const parts = [];
    if (g.findings.length > 0) {
      const ul = el("ul", { id: "compare-findings" });
      for (const f of g.findings) {
        ul.append(el("li", {}, el("span", { cls: "mono", text: f.structure }),
          ` grew ${bytes(f.growth_bytes)}: `, ...f.members.slice(0, 3).flatMap((m, i) =>
            [i ? ", " : "", classLink(m.class)])));
      }
      parts.push(el("h3", { text: "Growing data structures between them" }), ul);
    } else if (g.candidates.length > 0) {
      const ul = el("ul", { id: "compare-findings" });
      for (const k of g.candidates) ul.append(el("li", {}, classLink(k.class), ` grew ${bytes(k.growth_bytes)}`));
      parts.push(el("h3", { text: "Growing classes between them" }), ul);
    } else {
      parts.push(el("p", { id: "compare-findings", cls: "muted",
        text: g.not_enough_data ? `Not enough heaps between them to judge growth: ${g.not_enough_data}.` : "Nothing grows between them." }));
    }
    const classes = el("table", { id: "compare-classes" },
      headerRow(["class"], ["instances before", "n"], ["instances after", "n"], ["bytes before", "n"], ["bytes after", "n"], ["change", "n"]));
    for (const d of c.diff.classes.slice(0, PAGE)) {
      classes.append(el("tr", {}, el("td", {}, classLink(d.class)), el("td", { cls: "n", text: int(d.old_instances) }),
        el("td", { cls: "n", text: int(d.new_instances) }), el("td", { cls: "n", text: bytes(d.old_bytes) }),
        el("td", { cls: "n", text: bytes(d.new_bytes) }), el("td", { cls: "n", text: signed(d.delta_bytes) })));
    }
    const edges = el("table", { id: "compare-edges" },
      headerRow(["referrer class"], ["referent class"], ["bytes before", "n"], ["bytes after", "n"], ["change", "n"]));
    for (const d of c.diff.edges.slice(0, PAGE)) {
      edges.append(el("tr", {}, el("td", {}, classLink(d.from)), el("td", {}, classLink(d.to)),
        el("td", { cls: "n", text: bytes(d.old_bytes) }), el("td", { cls: "n", text: bytes(d.new_bytes) }),
        el("td", { cls: "n", text: signed(d.delta_bytes) })));
    }
    parts.push(el("h3", { text: "Classes that changed most" }), classes,
      el("h3", { text: "References that changed most (bytes a class holds of another)" }), edges);
    out.replaceChildren(...parts);
  } catch (e) {
    out.replaceChildren();
    fail(out, e);
  }
}

// A deep link (`#object=0x1a2b`, `#class=com.acme.Cache`) opens what it names, and what the
// inspector shows is put in the address, so that it can be shared.
function followHash() {
  const m = /^#(object|class)=(.+)$/.exec(location.hash);
  if (!m) return;
  const what = decodeURIComponent(m[2]);
  if (m[1] === "object") showObject(what);
  else showClass(what);
}

function linkTo(kind, what) {
  history.replaceState(null, "", `#${kind}=${encodeURIComponent(what)}`);
}

window.addEventListener("hashchange", followHash);

document.addEventListener("click", (ev) => {
  const t = ev.target.closest("[data-id], [data-class]");
  if (!t) return;
  if (t.dataset.id) {
    linkTo("object", t.dataset.id);
    showObject(t.dataset.id);
  } else {
    const name = t.dataset.class.replace(/^class /, "");
    linkTo("class", name);
    showClass(name);
  }
});

document.addEventListener("DOMContentLoaded", () => {
  const dom = document.getElementById("domtree");
  if (dom) loadDominators(dom, null, 0);
  const groupby = document.getElementById("groupby");
  if (groupby) {
    groupby.addEventListener("submit", (ev) => { ev.preventDefault(); regroup(); });
    regroup();
  }
  const cmp = document.getElementById("compare-form");
  if (cmp) cmp.addEventListener("submit", (ev) => { ev.preventDefault(); compare(); });
  if (document.getElementById("inspect")) followHash();
  const form = document.getElementById("search");
  if (form) {
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const q = document.getElementById("q").value.trim();
      if (/^0x[0-9a-f]+$/i.test(q)) showObject(q);
      search(q, 0);
    });
  }
});
