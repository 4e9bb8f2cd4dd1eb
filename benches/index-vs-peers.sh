#!/usr/bin/env bash
# Side-by-side: full indexing (object graph, exact dominators, retained sizes, top retainers)
# by `leakscope dominators`, hprof-analyzer and VisualVM's heap library, on the same dump, in
# one run. Prints wall time and peak RSS of each, per object, and the ratios.
#
#   benches/index-vs-peers.sh DUMP
#
# Peers are skipped when missing: `cargo install --locked hprof-analyzer` (its newest zip
# dependency does not build without --locked), `apt-get install visualvm`. Set
# VISUALVM_HEAP_JAR to another path to skip VisualVM (it needs ~10x the dump size in memory).
set -euo pipefail
cd "$(dirname "$0")/.."
dump=${1:?usage: benches/index-vs-peers.sh DUMP}
out=bench-out
mkdir -p "$out"
cargo build --release -q -p leakscope
objects=$(target/release/leakscope info --json --quiet "$dump" | python3 -c 'import json,sys; print(json.load(sys.stdin)["objects"])')

run() { # label, command...
  local label=$1; shift
  if /usr/bin/time -f "%e %M" -o "$out/$label.time" "$@" > "$out/$label.out" 2> "$out/$label.err"; then
    read -r secs kb < "$out/$label.time"
    printf '%-16s %9.1f s %9d MB %8.1f B/object\n' "$label" "$secs" $((kb / 1024)) "$(echo "$kb * 1024 / $objects" | bc -l)"
    echo "$label $secs $kb" >> "$out/index.txt"
  else
    echo "$label failed: $(tail -1 "$out/$label.err")"
  fi
}
: > "$out/index.txt"
echo "dump: $dump ($(du -m "$dump" | cut -f1) MB, $objects objects)"
run leakscope target/release/leakscope dominators --quiet --top 20 "$dump"
if command -v hprof-analyzer >/dev/null; then
  run hprof-analyzer hprof-analyzer "$dump"
fi
jar=${VISUALVM_HEAP_JAR-/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar}
if [ -f "$jar" ]; then
  javac -cp "$jar" -d "$out" benches/java/VisualVmTop.java
  # VisualVM caches its index in DUMP.hwcache/; a cached run would not be an indexing run.
  rm -rf "$dump.hwcache"
  run visualvm java -Xmx16g -cp "$jar:$out" VisualVmTop "$dump" 20
  rm -rf "$dump.hwcache"
fi
awk '$1=="leakscope"{t=$2; m=$3} $1!="leakscope"{pt[$1]=$2; pm[$1]=$3}
  END {for (p in pt) printf "leakscope vs %s: %.2fx the speed, %.2fx less peak memory\n", p, pt[p]/t, pm[p]/m}' "$out/index.txt"
