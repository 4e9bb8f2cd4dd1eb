"""An oracle for leakscope's reading of V8 heap snapshots, written from the format's
documentation with Python's json module alone: the histogram by constructor as DevTools'
Summary groups it, and the retained size of given nodes by brute force (what the root no
longer reaches, following every edge but weak ones and shortcuts from other nodes than the
root, once the node is taken out), and the retaining edges out of the given nodes with their
labels as DevTools shows them (a name, or [index] for elements and hidden edges).

    python3 snapshot_oracle.py SNAPSHOT [ID ...]

prints {"histogram": {name: [instances, bytes]}, "retained": {id: bytes},
"edges": {id: [[label, to_id], ...]}, "detached": {name: nodes V8 marks detached (2)}}.
"""
import json
import sys

snap = json.load(open(sys.argv[1], encoding="utf-8"))
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
            labelled[i].append(("[%d]" % name if kind in ("element", "hidden") else strings[name], to))
        e += 1


def reached(without):
    seen = bytearray(n)
    seen[0] = 1
    stack = [0]
    while stack:
        for t in succ[stack.pop()]:
            if not seen[t] and t != without:
                seen[t] = 1
                stack.append(t)
    return seen


everything = reached(-1)
by_id = {nodes[i * NW + ID]: i for i in range(n)}
retained = {}
for wanted in sys.argv[2:]:
    x = by_id[int(wanted, 0)]
    rest = reached(x)
    retained[wanted] = sum(nodes[i * NW + SIZE] for i in range(n) if everything[i] and not rest[i])
DETACHED = nf.index("detachedness") if "detachedness" in nf else None
detached = {}
for i in range(n):
    if DETACHED is not None and nodes[i * NW + DETACHED] == 2:
        name = strings[nodes[i * NW + NAME]]
        detached[name] = detached.get(name, 0) + 1
out_edges = {
    wanted: [[label, nodes[to * NW + ID]] for label, to in labelled[by_id[int(wanted, 0)]]] for wanted in sys.argv[2:]
}
print(json.dumps({"histogram": histogram, "retained": retained, "edges": out_edges, "detached": detached}))
