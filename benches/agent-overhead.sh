#!/usr/bin/env bash
# Overhead of the leakscope agent at its default settings, side by side with the same
# workload without it and with JFR's default continuous recording (a peer: OldObjectSample
# is in it), alternated. The steady state is told apart from the start-up: each setting runs
# the workload (benches/java/AllocHeavy.java, 1 GB G1 heap) twice as long as once, SHORT and
# LONG rounds, and the steady state's cost is what the LONG - SHORT rounds cost (the start-up,
# the same in both, cancels out). Prints the medians of CPU (user + system) and wall time of
# each, the steady state's CPU ratio to plain for the agent and JFR, the agent's start-up cost
# in CPU milliseconds, its walks and longest pause, and its memory footprint.
#
#   benches/agent-overhead.sh [RUNS] [LIVE_OBJECTS] [SHORT_ROUNDS] [LONG_ROUNDS]
#
# Needs a JDK, sqlite3 and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; live=${2:-2000000}; short=${3:-40}; long=${4:-160}
out=bench-out/overhead; mkdir -p "$out"
cargo build --release -q -p leakscope-agent
javac -d "$out" benches/java/AllocHeavy.java
lib=$PWD/target/release/libleakscope_agent.so
heap=(-Xmx1g -Xms1g -XX:+UseG1GC)
source benches/lib.sh

measure() { # prints "seconds peak_kb cpu_seconds"
  /usr/bin/time -f "%e %M %U %S" "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print $1, $2, $3 + $4}'
}

settings=(plain agent jfr)
command_for() { # SETTING ROUNDS
  case $1 in
    plain) echo java "${heap[@]}" -cp "$out" AllocHeavy "$live" "$2" ;;
    agent) echo java "${heap[@]}" "-agentpath:$lib=out:$PWD/$out/run-$2.db" -cp "$out" AllocHeavy "$live" "$2" ;;
    jfr) echo java "${heap[@]}" "-XX:StartFlightRecording=filename=$out/rec.jfr" -cp "$out" AllocHeavy "$live" "$2" ;;
  esac
}
for s in "${settings[@]}"; do for r in "$short" "$long"; do : > "$out/$s-$r.cpu"; : > "$out/$s-$r.wall"; : > "$out/$s-$r.rss"; done; done
for i in $(seq "$runs"); do
  for r in "$short" "$long"; do
    for s in "${settings[@]}"; do
      [ "$s" = agent ] && rm -f "$out/run-$r.db"*
      read -r t m c < <(measure $(command_for "$s" "$r"))
      echo "$c" >> "$out/$s-$r.cpu"; echo "$t" >> "$out/$s-$r.wall"; echo "$m" >> "$out/$s-$r.rss"
    done
  done
  echo "run $i: agent $(tail -n1 "$out/agent-$long.cpu") s CPU, plain $(tail -n1 "$out/plain-$long.cpu") s CPU ($long rounds)"
done
med() { median < "$out/$1"; }
for s in "${settings[@]}"; do
  printf "%-5s  %d rounds: CPU %.2f s, wall %.2f s   %d rounds: CPU %.2f s, wall %.2f s\n" "$s" \
    "$short" "$(med "$s-$short.cpu")" "$(med "$s-$short.wall")" "$long" "$(med "$s-$long.cpu")" "$(med "$s-$long.wall")"
done
steady() { echo "$(med "$1-$long.cpu") - $(med "$1-$short.cpu")" | bc -l; }
p=$(steady plain); a=$(steady agent); j=$(steady jfr)
printf "steady state (the %d extra rounds): CPU plain %.2f s, agent %.2f s (x%.3f), jfr %.2f s (x%.3f)\n" \
  $((long - short)) "$p" "$a" "$(echo "$a / $p" | bc -l)" "$j" "$(echo "$j / $p" | bc -l)"
# The start-up: what the short run costs more than plain, less its rounds at the steady ratio.
startup=$(echo "($(med "agent-$short.cpu") - $(med "plain-$short.cpu") - ($a / $p - 1) * $(med "plain-$short.cpu")) * 1000" | bc -l)
printf "agent start-up: %.0f ms of CPU (instrumentation, the first walks)\n" "$startup"
printf "agent footprint: peak RSS %+d MB (median, %d rounds)\n" \
  $((($(med "agent-$long.rss") - $(med "plain-$long.rss")) / 1024)) "$long"
sqlite3 "$out/run-$long.db" "select 'last long run: ' || count(*) || ' walks, longest pause ' || ifnull(round(max(pause_ms)),0) || ' ms' from snapshots where kind='walk'; select 'sampled snapshots: ' || count(*) from snapshots where kind='sample';" 2>/dev/null || echo "(install sqlite3 to see walks and pauses)"
