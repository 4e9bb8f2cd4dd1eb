#!/usr/bin/env bash
# Overhead of the leakscope agent at its default settings, side by side with the same
# workload without it and with JFR's default continuous recording (a peer: OldObjectSample
# is in it), alternated A B C A B C ... Prints the median wall and CPU (user + system) time
# of each, the ratios, the agent's walks and longest pause, and its memory footprint (peak
# RSS difference).
#
#   benches/agent-overhead.sh [RUNS] [LIVE_OBJECTS] [ROUNDS]
#
# Needs a JDK and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; live=${2:-2000000}; rounds=${3:-60}
out=bench-out/overhead; mkdir -p "$out"
cargo build --release -q
javac -d "$out" benches/java/AllocHeavy.java
lib=$PWD/target/release/libleakscope_agent.so
heap=(-Xmx1g -Xms1g -XX:+UseG1GC)

measure() { # prints "seconds peak_kb cpu_seconds"
  /usr/bin/time -f "%e %M %U %S" "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print $1, $2, $3 + $4}'
}
source benches/lib.sh

: > "$out/plain"; : > "$out/agent"; : > "$out/jfr"; : > "$out/plain.rss"; : > "$out/agent.rss"
: > "$out/plain.cpu"; : > "$out/agent.cpu"; : > "$out/jfr.cpu"
for i in $(seq "$runs"); do
  read -r t m c < <(measure java "${heap[@]}" -cp "$out" AllocHeavy "$live" "$rounds")
  echo "$t" >> "$out/plain"; echo "$m" >> "$out/plain.rss"; echo "$c" >> "$out/plain.cpu"
  rm -f "$out/run.db"*
  read -r t m c < <(measure java "${heap[@]}" "-agentpath:$lib=out:$PWD/$out/run.db" -cp "$out" AllocHeavy "$live" "$rounds")
  echo "$t" >> "$out/agent"; echo "$m" >> "$out/agent.rss"; echo "$c" >> "$out/agent.cpu"
  read -r t _ c < <(measure java "${heap[@]}" -XX:StartFlightRecording=filename=$out/rec.jfr -cp "$out" AllocHeavy "$live" "$rounds")
  echo "$t" >> "$out/jfr"; echo "$c" >> "$out/jfr.cpu"
  echo "run $i: plain $(tail -n1 "$out/plain") s, agent $(tail -n1 "$out/agent") s, jfr $(tail -n1 "$out/jfr") s"
done
p=$(median < "$out/plain"); a=$(median < "$out/agent"); j=$(median < "$out/jfr")
pr=$(median < "$out/plain.rss"); ar=$(median < "$out/agent.rss")
printf "median wall: plain %.2f s, agent %.2f s (x%.3f), jfr %.2f s (x%.3f)\n" "$p" "$a" "$(echo "$a / $p" | bc -l)" "$j" "$(echo "$j / $p" | bc -l)"
pc=$(median < "$out/plain.cpu"); ac=$(median < "$out/agent.cpu"); jc=$(median < "$out/jfr.cpu")
printf "median CPU: plain %.2f s, agent %.2f s (x%.3f), jfr %.2f s (x%.3f)\n" "$pc" "$ac" "$(echo "$ac / $pc" | bc -l)" "$jc" "$(echo "$jc / $pc" | bc -l)"
printf "agent footprint: peak RSS %+d MB (median %d MB vs %d MB)\n" $(((ar - pr) / 1024)) $((ar / 1024)) $((pr / 1024))
sqlite3 "$out/run.db" "select 'last run: ' || count(*) || ' walks, longest pause ' || ifnull(round(max(pause_ms)),0) || ' ms' from snapshots where kind='walk'; select 'sampled snapshots: ' || count(*) from snapshots where kind='sample'; select 'live samples at exit: ' || value from meta where key='live_samples';" 2>/dev/null || echo "(install sqlite3 to see walks and pauses)"
