#!/usr/bin/env bash
# Side-by-side: `leakscope histogram` against `hprof-slurp` on the same heap dump, in one run.
# Prints median wall time and peak RSS of each (alternating runs, A B A B ...) and the ratios.
#
#   benches/histogram-vs-hprof-slurp.sh [DUMP] [RUNS]
#
# Without DUMP, it writes one: a Java program (benches/java/Big.java) holding 3 M map entries
# (about 1 GB of dump, 24 M objects). Needs a JDK, /usr/bin/time, and installs hprof-slurp
# with `cargo install` if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dump=${1:-}
runs=${2:-5}
out=bench-out
mkdir -p "$out"

command -v hprof-slurp >/dev/null || cargo install hprof-slurp
cargo build --release -q -p leakscope
ls=target/release/leakscope

if [ -z "$dump" ]; then
  dump=$out/big.hprof
  if [ ! -f "$dump" ]; then
    javac -d "$out" benches/java/Big.java
    java -Xmx4g -cp "$out" Big 3000000 > "$out/big.log" 2>&1 &
    pid=$!
    for _ in $(seq 120); do grep -q READY "$out/big.log" 2>/dev/null && break; sleep 1; done
    jcmd "$pid" GC.heap_dump "$PWD/$dump" > /dev/null
    kill "$pid"
  fi
fi

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "$label %e %M" "$@" > /dev/null 2>> "$out/times.txt" || { echo "$label failed" >&2; exit 2; }
}
: > "$out/times.txt"
cat "$dump" > /dev/null # warm the page cache for both
for _ in $(seq "$runs"); do
  measure leakscope "$ls" histogram --quiet "$dump"
  measure hprof-slurp hprof-slurp "$dump"
done
grep -E '^(leakscope|hprof-slurp) [0-9.]+ [0-9]+$' "$out/times.txt" > "$out/times.clean" || true

source benches/lib.sh
ls_t=$(awk '$1=="leakscope"{print $2}' "$out/times.clean" | median)
ls_m=$(awk '$1=="leakscope"{print $3}' "$out/times.clean" | median)
hs_t=$(awk '$1=="hprof-slurp"{print $2}' "$out/times.clean" | median)
hs_m=$(awk '$1=="hprof-slurp"{print $3}' "$out/times.clean" | median)
size=$(du -m "$dump" | cut -f1)
echo "dump: $dump ($size MB), $runs runs each, medians"
printf '%-12s %10s %14s\n' tool "wall (s)" "peak RSS (MB)"
printf '%-12s %10s %14d\n' leakscope "$ls_t" $((ls_m / 1024))
printf '%-12s %10s %14d\n' hprof-slurp "$hs_t" $((hs_m / 1024))
awk -v a="$hs_t" -v b="$ls_t" -v c="$hs_m" -v d="$ls_m" \
  'BEGIN {printf "leakscope is %.2fx faster and uses %.2fx less peak memory than hprof-slurp\n", a/b, c/d}'
