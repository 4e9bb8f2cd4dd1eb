#!/usr/bin/env bash
# What a heap walk costs per object, and what the walks name, with the agent as built and,
# side by side in the same run, as built at BASE (a commit, for example the one before a
# change to the walk). Each binary walks the same steady heap (benches/java/WalkHeap.java:
# a static registry of watched sessions among unrelated maps) every 2 s for SECONDS, without
# and with `watch:rule:Session`, alternated (max_pause 5 s: the point is the cost, not the
# bound). Prints the median pause per object of the walks after the first two (the first
# learn the class graph) for each, the ratios, and the paths the watched sessions are on at
# the end of the first run. The agent as built also walks once with no callback before each
# walk (`walk_floor:on`): HotSpot's own traversal, the floor of any walk; the agent's share is
# a walk's pause above it.
#
#   benches/walk-cost.sh [SESSIONS] [OTHER] [SECONDS] [BASE] [RUNS]
#
# Needs a JDK and sqlite3. BASE is built once in bench-out/walk-cost/base (a git worktree).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-100000}; other=${2:-500000}; seconds=${3:-30}; base=${4:-}; runs=${5:-3}
out=$PWD/bench-out/walk-cost; mkdir -p "$out"
source benches/lib.sh
rm -f "$out"/*.ns
cargo build --release -q -p leakscope-agent
javac -d "$out" benches/java/WalkHeap.java
libs=("now=$PWD/target/release/libleakscope_agent.so")
if [ -n "$base" ]; then
  if [ ! -d "$out/base" ]; then git worktree add -q --detach "$out/base" "$base"; fi
  git -C "$out/base" checkout -q --detach "$base"
  (cd "$out/base" && cargo build --release -q -p leakscope-agent)
  libs=("base=$out/base/target/release/libleakscope_agent.so" "${libs[@]}")
fi

# Pause per object (ns) of each walk after the second, one per line.
per_object() { sqlite3 "$1" "select pause_ms * 1e6 / total_instances from snapshots where kind = 'walk' order by time_ms limit -1 offset 2"; }
# The floor walk's pause per object (ns) before each of those walks (the nth floor event goes
# with the nth walk).
floor_per_object() {
  paste <(sqlite3 "$1" "select substr(message, 13, length(message) - 15) from events where message like 'floor walk: %' order by rowid") \
        <(sqlite3 "$1" "select total_instances from snapshots where kind = 'walk' order by time_ms") |
    tail -n +3 | awk '$2 > 0 { printf "%.1f\n", $1 * 1e6 / $2 }'
}

for i in $(seq "$runs"); do
  for lib in "${libs[@]}"; do
    name=${lib%%=*}; path=${lib#*=}
    for watch in none watch; do
      db="$out/$name-$watch.db"; rm -f "$db"*
      opts="out:$db,walk_every:2s,budget:50,max_pause:5s"
      [ "$name" = now ] && opts="$opts,walk_floor:on"
      [ "$watch" = watch ] && opts="$opts,watch:rule:Session"
      java -Xmx2g -Xms2g -XX:+UseG1GC "-agentpath:$path=$opts" -cp "$out" WalkHeap "$sessions" "$other" "$seconds" > /dev/null
      per_object "$db" >> "$out/$name-$watch.ns"
      [ "$name" = now ] && floor_per_object "$db" >> "$out/floor-$watch.ns"
      if [ "$i" = 1 ]; then
        walks=$(sqlite3 "$db" "select count(*) || ' walks, ' || round(avg(total_instances) / 1e6, 2) || ' M objects, longest pause ' || round(max(pause_ms)) || ' ms' from snapshots where kind = 'walk'")
        echo "$name, $watch: $walks"
        if [ "$watch" = watch ]; then
          sqlite3 "$db" "select '  sessions by path: ' || count(*) || '  ' || holders from watched group by holders order by count(*) desc limit 3"
        fi
      fi
    done
  done
done
echo
for lib in "${libs[@]}"; do
  name=${lib%%=*}
  for watch in none watch; do
    printf "%-5s %-6s median %.1f ns per object over %d walks\n" "$name" "$watch" "$(median < "$out/$name-$watch.ns")" "$(wc -l < "$out/$name-$watch.ns")"
  done
done
now_none=$(median < "$out/now-none.ns"); now_watch=$(median < "$out/now-watch.ns")
printf "watching vs not, now: x%.2f\n" "$(echo "$now_watch / $now_none" | bc -l)"
floor=$(median < "$out/floor-none.ns")
printf "floor (HotSpot's traversal, no callback): %.1f ns per object; the agent's share, now: %.1f ns per object without watching (x%.2f the floor), %.1f watching\n" \
  "$floor" "$(echo "$now_none - $floor" | bc -l)" "$(echo "$now_none / $floor" | bc -l)" "$(echo "$now_watch - $floor" | bc -l)"
if [ -n "$base" ]; then
  printf "now vs base, no watch: x%.2f; watching: x%.2f\n" \
    "$(echo "$now_none / $(median < "$out/base-none.ns")" | bc -l)" "$(echo "$now_watch / $(median < "$out/base-watch.ns")" | bc -l)"
fi
rm -f "$out"/*.ns
