#!/usr/bin/env bash
# What a gzip-compressed dump costs: `leakscope histogram` on a `jcmd GC.heap_dump -gz=1`
# dump against the same dump unpacked, and against `gzip -dc` (one thread) unpacking it
# alone, median of RUNS runs each, in one run of this script.
#
#   benches/gzip-unpack.sh [RUNS]
#
# Writes the dump with benches/java/Big.java (3 M map entries, about 500 MB unpacked) under
# bench-out/gzip. Needs a JDK and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
out=bench-out/gzip
mkdir -p "$out"
cargo build --release -q -p leakscope
ls=target/release/leakscope
gz=$out/big.hprof.gz
if [ ! -f "$gz" ]; then
  javac -d "$out" benches/java/Big.java
  java -Xmx4g -cp "$out" Big 3000000 > "$out/big.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do grep -q READY "$out/big.log" 2>/dev/null && break; sleep 1; done
  jcmd "$pid" GC.heap_dump -gz=1 "$PWD/$gz" > /dev/null
  kill "$pid"
fi
[ -f "$out/big.hprof" ] || gzip -dc "$gz" > "$out/big.hprof"
ls -la "$gz" "$out/big.hprof"

: > "$out/times.txt"
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "$label %e %M" "$@" > /dev/null 2>> "$out/times.txt" || { echo "$label failed" >&2; exit 2; }
}
cat "$gz" "$out/big.hprof" > /dev/null # warm the page cache for all
for _ in $(seq "$runs"); do
  measure gz "$ls" histogram --quiet --tmp-dir "$out" "$gz"
  measure plain "$ls" histogram --quiet "$out/big.hprof"
  measure gzip sh -c "gzip -dc '$gz' > /dev/null"
done
source benches/lib.sh
t() { grep -E "^$1 [0-9.]+ [0-9]+$" "$out/times.txt" | cut -d' ' -f2 | median; }
m() { grep -E "^$1 [0-9.]+ [0-9]+$" "$out/times.txt" | cut -d' ' -f3 | median; }
printf '%-40s %8s %10s\n' "median of $runs" seconds "peak MB"
printf '%-40s %8.2f %10.0f\n' "leakscope histogram, gzip dump" "$(t gz)" "$(echo "$(m gz) / 1024" | bc -l)"
printf '%-40s %8.2f %10.0f\n' "leakscope histogram, unpacked dump" "$(t plain)" "$(echo "$(m plain) / 1024" | bc -l)"
printf '%-40s %8.2f %10.0f\n' "gzip -dc alone (one thread)" "$(t gzip)" "$(echo "$(m gzip) / 1024" | bc -l)"
echo "gzip dump / unpacked: $(echo "$(t gz) / $(t plain)" | bc -l | cut -c1-5)x; leakscope's unpacking against gzip -dc: $(echo "($(t gz) - $(t plain)) / $(t gzip)" | bc -l | cut -c1-5)x the time"
