// Retained sizes by memlab (Meta's heap analysis for V8, installed from npm with
// `npm install -g memlab`), for comparison with leakscope's: memlab's own parser, dominator
// tree and retained sizes, through its heap-analysis API.
//
//   node memlab_retained.js SNAPSHOT ID ...   # prints {"ID": retained bytes, ...}
'use strict';
const path = require('path');
const { execSync } = require('child_process');

const root = execSync('npm root -g').toString().trim();
const { getFullHeapFromFile } = require(path.join(root, 'memlab/node_modules/@memlab/heap-analysis'));

(async () => {
  const heap = await getFullHeapFromFile(process.argv[2]);
  const out = {};
  for (const id of process.argv.slice(3)) {
    const node = heap.getNodeById(Number(id));
    out[id] = node ? node.retainedSize : null;
  }
  // memlab prints its progress on stdout too: the answer is the last line.
  console.log(JSON.stringify(out));
})();
