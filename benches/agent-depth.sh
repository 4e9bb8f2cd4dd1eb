#!/usr/bin/env bash
# What the depth of a sampled allocation's stack costs: the same workload, run 50 calls deep
# (as under a server's frames), without the agent and with the agent recording 4, 8, 16 and
# 32 frames per sample, alternated; walks are off (agent-overhead.sh measures them). Prints
# the median wall time of each, its ratio to the plain run, and the cost of one sample as the
# agent timed its own callback (free of the run-to-run noise of a shared machine).
#
#   benches/agent-depth.sh [RUNS] [LIVE_OBJECTS] [ROUNDS]
#
# Needs a JDK and sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; live=${2:-1000000}; rounds=${3:-40}
out=bench-out/depth; mkdir -p "$out"
cargo build --release -q
javac -d "$out" benches/java/AllocHeavy.java
lib=$PWD/target/release/libleakscope_agent.so
heap=(-Xmx1g -Xms1g -XX:+UseG1GC)
source benches/lib.sh
depths=(4 8 16 32)

wall() { # the workload's own elapsed time, seconds
  "$@" -cp "$out" AllocHeavy "$live" "$rounds" 50 | awk '/elapsed_ms/ {printf "%.3f\n", $2 / 1000}'
}
: > "$out/plain"; for d in "${depths[@]}"; do : > "$out/d$d"; done
for i in $(seq "$runs"); do
  wall java "${heap[@]}" >> "$out/plain"
  line="run $i: plain $(tail -n1 "$out/plain") s"
  for d in "${depths[@]}"; do
    rm -f "$out/d$d.db"*
    wall java "${heap[@]}" "-agentpath:$lib=out:$PWD/$out/d$d.db,depth:$d,walks:off" >> "$out/d$d"
    line="$line, depth $d $(tail -n1 "$out/d$d") s"
  done
  echo "$line"
done
p=$(median < "$out/plain")
printf "median wall: plain %.2f s\n" "$p"
for d in "${depths[@]}"; do
  m=$(median < "$out/d$d")
  # The agent times its sampling callback in thread CPU time: the cost per sample, free of the noise.
  per=$(sqlite3 "$out/d$d.db" "select round(cast((select value from meta where key='sampling_ns') as real) / (select value from meta where key='samples_taken') / 1000, 2) || ' us per sample, ' || (select value from meta where key='samples_taken') || ' samples, ' || (select count(*) from sites) || ' sites'" 2>/dev/null || echo "?")
  printf "  depth %2d: %.2f s (x%.3f); last run: %s\n" "$d" "$m" "$(echo "$m / $p" | bc -l)" "$per"
done
