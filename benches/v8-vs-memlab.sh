#!/usr/bin/env bash
# V8 heap snapshots: leakscope against memlab (Meta's, from npm) on a snapshot of a Node.js
# process holding a Map of RECORDS small records, each with an array and strings (default
# 10^6 records: about 7 M nodes, 17 M edges, 540 MB). Times `leakscope dominators` (parse,
# dominator tree, retained sizes) against `memlab analyze object-size` (the same work) with
# farm-bench, alternated, medians and peak memory.
#
#   benches/v8-vs-memlab.sh [RECORDS] [RUNS]
#
# memlab installs with `PUPPETEER_SKIP_DOWNLOAD=1 npm i -g memlab` (its browser download is
# not needed to analyse a snapshot).
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-1000000}
runs=${2:-3}
dir=bench-out/v8
mkdir -p "$dir"
snap=$dir/map-$records.heapsnapshot
cargo build --release -q -p leakscope --bin leakscope
if [ ! -f "$snap" ]; then
  node --max-old-space-size=8192 -e "
    const m = new Map();
    for (let i = 0; i < $records; i++) m.set('key-' + i, { id: i, name: 'record ' + i, tags: [i, i * 2] });
    globalThis.keep = m;
    require('v8').writeHeapSnapshot('$snap');"
fi
ls -la "$snap"
farm-bench -n "$runs" --timeout 600 --vs "memlab analyze object-size --snapshot $snap" -- \
  target/release/leakscope dominators --quiet --json "$snap"
