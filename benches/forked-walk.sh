#!/usr/bin/env bash
# What a whole heap walk stops the JVM for, on the JVM itself (stop-the-world, max_pause 60 s)
# and on a forked copy (the default, max_pause 1 ms: every walk forks), side by side on the
# same heap: benches/../crates/cli/tests/java/Forked.java with NODES nodes (about 5 objects and
# 92 bytes each) churning garbage, per JDK and collector, alternated, RUNS times each. Pauses
# are the JVM's own (`-Xlog:safepoint`, "At safepoint" of each HeapWalkOperation); the forked
# runs also print what the child took (its walk's time and its copy, from the agent's events).
#
#   benches/forked-walk.sh [NODES] [SECONDS] [RUNS] [JAVA_HOME...]
#
# Default: 5,000,000 nodes, 40 s, 2 runs, JDK 17 (`java` on the PATH) and JDK 25 at
# /usr/lib/jvm/temurin-25-jdk-amd64, with G1 and Parallel. Needs sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-5000000}; seconds=${2:-40}; runs=${3:-2}; shift $(( $# < 3 ? $# : 3 ))
homes=("$@")
if [ ${#homes[@]} -eq 0 ]; then
  homes=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /usr/lib/jvm/temurin-25-jdk-amd64)
fi
out=$PWD/bench-out/forked-walk; mkdir -p "$out"
source benches/lib.sh
# The dev profile is optimized (Cargo.toml): the walks' callbacks run as in a release build.
cargo build -q -p leakscope -p leakscope-agent
bin=$PWD/target/debug/leakscope
"${homes[0]}/bin/javac" --release 17 -d "$out" crates/cli/tests/java/Forked.java

# The JVM's pauses (ms) at its heap walk safepoints, one per line.
pauses() { sed -n 's/.*"HeapWalkOperation".*At safepoint: \([0-9]*\) ns.*/\1/p' "$1" | awk '{ printf "%.1f\n", $1 / 1e6 }'; }

printf '%-22s %-9s %-7s %6s %10s %10s  %s\n' JDK collector walks count "median ms" "max ms" "the last forked child: its walk, its copy"
for run in $(seq "$runs"); do
  for home in "${homes[@]}"; do
    for gc in G1 Parallel; do
      for how in stw forked; do
        db=$out/$how.db; log=$out/$how-safepoint.log
        rm -f "$db"* "$log"
        if [ "$how" = stw ]; then flags=(--max-pause 60s); else flags=(--max-pause 1ms); fi
        "$bin" run --out "$db" --budget 50 --walk-every 5s "${flags[@]}" -- "$home/bin/java" -Xmx3g -XX:+Use${gc}GC \
          "-Xlog:safepoint:file=$log" -cp "$out" Forked "$nodes" "$seconds" > /dev/null 2>&1
        child=""
        if [ "$how" = forked ]; then
          child=$(sqlite3 "$db" "select message from events where message like 'heap walk forked%'" |
            sed -n 's/.* in \([0-9.]* m\?s\), its own memory at most \(.*\)$/\1|\2/p' | tail -1)
        fi
        printf '%-22s %-9s %-7s %6s %10s %10s  %s\n' "$(basename "$home")" "$gc" "$how" "$(pauses "$log" | wc -l)" \
          "$(pauses "$log" | median)" "$(pauses "$log" | sort -n | tail -1)" "$child"
      done
    done
  done
done
