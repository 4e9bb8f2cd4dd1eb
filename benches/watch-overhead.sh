#!/usr/bin/env bash
# Cost of staleness watching (`--watch`), side by side on one workload, alternated:
#   plain     no agent
#   agent     the agent at its defaults, watching nothing
#   rare      the agent watching Customer (one call in 100,000 requests touches one)
#   hot       the agent watching Order (every request calls Order.total)
# Prints the median requests per second of each and its ratio to plain, the CPU time (user +
# system) per million requests and its ratio, and the walks and longest pause of the last runs.
#
#   benches/watch-overhead.sh [RUNS] [SECONDS] [WARMUP_SECONDS]
#
# Needs a JDK and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; secs=${2:-10}; warm=${3:-5}
out=bench-out/watch; mkdir -p "$out"
cargo build --release -q
javac -d "$out" benches/java/WatchBench.java
lib=$PWD/target/release/libleakscope_agent.so
heap=(-Xmx512m -XX:+UseG1GC)
source benches/lib.sh
# Prints "requests_per_second cpu_seconds_per_million_requests" of one run.
rate() {
  local stats; stats=$(mktemp)
  local r; r=$(/usr/bin/time -f "%U %S" -o "$stats" "$@" 2>/dev/null | awk '/requests/ {print $1}')
  awk -v r="$r" -v s="$secs" -v w="$warm" '{printf "%s %.4f\n", r, ($1 + $2) / (r * (s + w) / 1e6)}' "$stats"
  rm -f "$stats"
}

for k in plain agent rare hot; do : > "$out/$k"; : > "$out/$k.cpu"; done
for i in $(seq "$runs"); do
  rm -f "$out"/*.db*
  for k in plain agent rare hot; do
    case $k in
      plain) agent=() ;;
      agent) agent=("-agentpath:$lib=out:$PWD/$out/agent.db") ;;
      rare) agent=("-agentpath:$lib=out:$PWD/$out/rare.db,watch:Customer") ;;
      hot) agent=("-agentpath:$lib=out:$PWD/$out/hot.db,watch:Order") ;;
    esac
    read -r r c < <(rate java "${heap[@]}" "${agent[@]}" -cp "$out" WatchBench "$secs" "$warm")
    echo "$r" >> "$out/$k"; echo "$c" >> "$out/$k.cpu"
  done
  echo "run $i: plain $(tail -n1 "$out/plain"), agent $(tail -n1 "$out/agent"), rare $(tail -n1 "$out/rare"), hot $(tail -n1 "$out/hot") requests/s"
done
p=$(median < "$out/plain"); pc=$(median < "$out/plain.cpu")
printf "%-6s %12.0f requests/s, %.3f CPU s per million requests\n" plain "$p" "$pc"
for k in agent rare hot; do
  v=$(median < "$out/$k"); c=$(median < "$out/$k.cpu")
  printf "%-6s %12.0f requests/s  x%.3f of plain; %.3f CPU s per million requests  x%.3f\n" "$k" "$v" "$(echo "$v / $p" | bc -l)" "$c" "$(echo "$c / $pc" | bc -l)"
done
for k in agent rare hot; do
  sqlite3 "$out/$k.db" "select '$k (last run): ' || count(*) || ' walks, longest pause ' || ifnull(round(max(pause_ms)),0) || ' ms' from snapshots where kind='walk'" 2>/dev/null || echo "(install sqlite3 to see walks and pauses)"
done
