#!/usr/bin/env bash
# Cost of staleness watching (`--watch`), side by side on one workload, alternated:
#   plain     no agent
#   agent     the agent at its defaults, watching nothing
#   rare      the agent watching Customer (one call in 100,000 requests touches one)
#   hot       the agent watching Order (every request calls Order.total)
# Prints the median requests per second of each and its ratio to plain.
#
#   benches/watch-overhead.sh [RUNS] [SECONDS] [WARMUP_SECONDS]
#
# Needs a JDK.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; secs=${2:-10}; warm=${3:-5}
out=bench-out/watch; mkdir -p "$out"
cargo build --release -q
javac -d "$out" benches/java/WatchBench.java
lib=$PWD/target/release/libleakscope_agent.so
heap=(-Xmx512m -XX:+UseG1GC)
source benches/lib.sh
rate() { "$@" 2>/dev/null | awk '/requests/ {print $1}'; }

for k in plain agent rare hot; do : > "$out/$k"; done
for i in $(seq "$runs"); do
  rate java "${heap[@]}" -cp "$out" WatchBench "$secs" "$warm" >> "$out/plain"
  rm -f "$out"/*.db*
  rate java "${heap[@]}" "-agentpath:$lib=out:$PWD/$out/agent.db" -cp "$out" WatchBench "$secs" "$warm" >> "$out/agent"
  rate java "${heap[@]}" "-agentpath:$lib=out:$PWD/$out/rare.db,watch:Customer" -cp "$out" WatchBench "$secs" "$warm" >> "$out/rare"
  rate java "${heap[@]}" "-agentpath:$lib=out:$PWD/$out/hot.db,watch:Order" -cp "$out" WatchBench "$secs" "$warm" >> "$out/hot"
  echo "run $i: plain $(tail -n1 "$out/plain"), agent $(tail -n1 "$out/agent"), rare $(tail -n1 "$out/rare"), hot $(tail -n1 "$out/hot") requests/s"
done
p=$(median < "$out/plain")
for k in agent rare hot; do
  v=$(median < "$out/$k")
  printf "%-6s %12.0f requests/s  x%.3f of plain (slowdown %.1f%%)\n" "$k" "$v" "$(echo "$v / $p" | bc -l)" "$(echo "(1 - $v / $p) * 100" | bc -l)"
done
printf "%-6s %12.0f requests/s\n" plain "$p"
