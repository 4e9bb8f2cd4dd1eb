"""An oracle for leakscope's reading of V8 heap snapshots, written from the format's
documentation with Python's json module alone: the histogram by constructor as DevTools'
Summary groups it, and the retained size of given nodes by brute force (what the root no
longer reaches, following every edge but weak ones and shortcuts from other nodes than the
root, once the node is taken out), and the retaining edges out of the given nodes with their
labels as DevTools shows them (a name, or [index] for elements and hidden edges).

    python3 snapshot_oracle.py SNAPSHOT [ID ...] [class:NAME ...] [text:PART ...]

prints {"histogram": {name: [instances, bytes]}, "retained": {id or class:NAME: bytes},
"edges": {id: [[label, to_id, edge type], ...]}, "detached": {name: nodes V8 marks detached (2)},
"sites": {NAME: [[live bytes, [frame, ...]], ...]}}: for each class:NAME, the allocation
sites of its objects the root reaches (from trace_tree, innermost frame first, as
"function (script:line:column)" where the function starts, as V8 writes them), most live
bytes first; "texts": {PART: string
objects the root reaches whose text contains PART}.
"""
import json
import sys

snap = json.load(open(sys.argv[1], encoding="utf-8"))
classes = [a[len("class:") :] for a in sys.argv[2:] if a.startswith("class:")]
ids_wanted = [a for a in sys.argv[2:] if not a.startswith(("class:", "text:"))]
parts = [a[len("text:") :] for a in sys.argv[2:] if a.startswith("text:")]
meta = snap["snapshot"]["meta"]
nf, ef = meta["node_fields"], meta["edge_fields"]
ntypes, etypes = meta["node_types"][0], meta["edge_types"][0]
nodes, edges, strings = snap["nodes"], snap["edges"], snap["strings"]
NW, EW = len(nf), len(ef)
T, NAME, ID, SIZE, EC = (nf.index(f) for f in ("type", "name", "id", "self_size", "edge_count"))
ET, EN, TO = (ef.index(f) for f in ("type", "name_or_index", "to_node"))
n = len(nodes) // NW


def group(i):
    t = ntypes[nodes[i * NW + T]]
    if t in ("object", "native"):
        return strings[nodes[i * NW + NAME]]
    return {"hidden": "(system)", "code": "(compiled code)"}.get(t, "(" + t + ")")


histogram = {}
for i in range(n):
    if ntypes[nodes[i * NW + T]] == "synthetic":
        continue
    row = histogram.setdefault(group(i), [0, 0])
    row[0] += 1
    row[1] += nodes[i * NW + SIZE]

succ = [[] for _ in range(n)]
labelled = [[] for _ in range(n)]
e = 0
for i in range(n):
    for _ in range(nodes[i * NW + EC]):
        kind = etypes[edges[e * EW + ET]]
        if kind != "weak" and (kind != "shortcut" or i == 0):
            to = edges[e * EW + TO] // NW
            succ[i].append(to)
            name = edges[e * EW + EN]
            labelled[i].append(("[%d]" % name if kind in ("element", "hidden") else strings[name], to, kind))
        e += 1


def reached(without):
    """What the root reaches when the nodes in the set `without` are taken out."""
    seen = bytearray(n)
    for x in without:
        seen[x] = 1
    seen[0] = 1
    stack = [0]
    while stack:
        for t in succ[stack.pop()]:
            if not seen[t]:
                seen[t] = 1
                stack.append(t)
    for x in without:
        seen[x] = 0
    return seen


def freed(without):
    rest = reached(without)
    return sum(nodes[i * NW + SIZE] for i in range(n) if everything[i] and not rest[i])


everything = reached(())
by_id = {nodes[i * NW + ID]: i for i in range(n)}
retained = {}
for wanted in ids_wanted:
    retained[wanted] = freed((by_id[int(wanted, 0)],))
# And of every object of each class:NAME together.
for name in classes:
    retained["class:" + name] = freed([i for i in range(n) if ntypes[nodes[i * NW + T]] != "synthetic" and group(i) == name])
DETACHED = nf.index("detachedness") if "detachedness" in nf else None
detached = {}
for i in range(n):
    if DETACHED is not None and nodes[i * NW + DETACHED] == 2:
        name = strings[nodes[i * NW + NAME]]
        detached[name] = detached.get(name, 0) + 1
sites = {}
if classes and "trace_node_id" in nf:
    TN = nf.index("trace_node_id")
    ff, tf = meta["trace_function_info_fields"], meta["trace_node_fields"]
    infos, FW = snap["trace_function_infos"], len(ff)
    parent_of, function_of = {}, {}
    todo = [(snap["trace_tree"], 0)]
    while todo:
        flat, parent = todo.pop()
        for k in range(0, len(flat), len(tf)):
            record = dict(zip(tf, flat[k : k + len(tf)]))
            parent_of[record["id"]] = parent
            function_of[record["id"]] = record["function_info_index"]
            todo.append((record["children"], record["id"]))

    def frames(t):
        out = []
        while parent_of.get(t, 0) != 0:
            f = dict(zip(ff, infos[function_of[t] * FW : (function_of[t] + 1) * FW]))
            name = strings[f["name"]] or "(anonymous)"
            out.append("%s (%s:%d:%d)" % (name, strings[f["script_name"]], f["line"], f["column"]))
            t = parent_of[t]
        return out

    for name in classes:
        by_site = {}
        for i in range(n):
            if everything[i] and i != 0 and group(i) == name and nodes[i * NW + TN]:
                t = nodes[i * NW + TN]
                by_site[t] = by_site.get(t, 0) + nodes[i * NW + SIZE]
        rows = sorted(((b, frames(t)) for t, b in by_site.items()), key=lambda r: -r[0])
        sites[name] = [[b, f] for b, f in rows if f]
out_edges = {
    wanted: [[label, nodes[to * NW + ID], kind] for label, to, kind in labelled[by_id[int(wanted, 0)]]]
    for wanted in ids_wanted
}
STRING_TYPES = ("string", "concatenated string", "sliced string")
texts = {
    part: sum(
        1
        for i in range(n)
        if everything[i] and ntypes[nodes[i * NW + T]] in STRING_TYPES and part in strings[nodes[i * NW + NAME]]
    )
    for part in parts
}
print(json.dumps({"histogram": histogram, "retained": retained, "edges": out_edges, "detached": detached, "sites": sites, "texts": texts}))
