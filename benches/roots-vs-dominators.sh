#!/usr/bin/env bash
# `roots` against `dominators` on the same dumps, alternated RUNS times in one run: wall
# time and peak memory of each, and their ratio (issue 18: roots within twice dominators).
#
#   benches/roots-vs-dominators.sh DUMP... [-- RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh
runs=3; dumps=()
while [ $# -gt 0 ]; do
  case $1 in --) runs=$2; shift 2 ;; *) dumps+=("$1"); shift ;; esac
done
[ ${#dumps[@]} -gt 0 ] || { echo "usage: $0 DUMP... [-- RUNS]" >&2; exit 2; }
cargo build --release -q -p leakscope
bin=target/release/leakscope
for dump in "${dumps[@]}"; do
  for c in dominators roots; do rm -f "/tmp/rvd.$c"; done
  for _ in $(seq "$runs"); do
    for c in dominators roots; do
      /usr/bin/time -f "%e %M" -a -o "/tmp/rvd.$c" "$bin" "$c" --quiet "$dump" > /dev/null
    done
  done
  d=$(cut -d' ' -f1 /tmp/rvd.dominators | median); r=$(cut -d' ' -f1 /tmp/rvd.roots | median)
  dm=$(cut -d' ' -f2 /tmp/rvd.dominators | median); rm_=$(cut -d' ' -f2 /tmp/rvd.roots | median)
  printf "%s: dominators %.2f s %d MB, roots %.2f s %d MB: roots/dominators time x%.2f, memory x%.2f\n" \
    "$(basename "$dump")" "$d" "$((${dm%.*} / 1024))" "$r" "$((${rm_%.*} / 1024))" \
    "$(echo "$r / $d" | bc -l)" "$(echo "$rm_ / $dm" | bc -l)"
done
