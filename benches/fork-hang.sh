#!/usr/bin/env bash
# Forked walks on a real server, counted for children that hang: Debian's Jetty 9 shop of
# crates/cli/tests/java/Services.java (jetty-shop, -Xmx1g, a catalog of 300,000 items, 500
# requests a second), every whole walk forked (--max-pause 1ms --walk-every 1s), ROUNDS runs
# of SECONDS each. A child of the JVM older than 20 s is given to gdb, whose stack goes to
# bench-out/fork-hang/bt-PID.txt (the agent kills one stuck on a lock 10 s on, one still walking
# is left to end). Prints, per round, the forked walks completed and those the agent killed.
#
#   benches/fork-hang.sh [JAVA_HOME] [ROUNDS] [SECONDS] [GC]
set -euo pipefail
cd "$(dirname "$0")/.."
home=${1:-/usr/lib/jvm/temurin-25-jdk-amd64}; rounds=${2:-10}; seconds=${3:-90}; gc=${4:--XX:+UseG1GC}
out=$PWD/bench-out/fork-hang; mkdir -p "$out"
cargo build --release -q -p leakscope -p leakscope-agent
bin=$PWD/target/release/leakscope
cp=$(ls /usr/share/java/servlet-api.jar /usr/share/java/jetty9-{server,util,http,io}.jar | tr '\n' ':')
javac --release 17 -nowarn -cp "$cp" -d "$out" crates/cli/tests/java/Services.java 2>/dev/null
marker=leakscope-fork-hang-$$
for r in $(seq 1 "$rounds"); do
  db=$out/round-$r.db; rm -f "$db"*
  "$bin" run --out "$db" --max-pause 1ms --budget 50 --walk-every 1s --period 300ms -- \
    "$home/bin/java" -Xmx1g "$gc" -Dservices.catalog=300000 -D$marker=1 -cp "$cp:$out" Services jetty-shop "$seconds" 500 \
    > "$db.out" 2>&1 &
  run=$!
  while kill -0 "$run" 2>/dev/null; do
    for p in $(pgrep -f "$marker" || true); do
      ppid=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
      [ "$(cat "/proc/$ppid/comm" 2>/dev/null)" = java ] || continue
      # The child's name ("VM Thread") holds a space: its start time is the 20th field after ')'.
      start=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f20) || continue
      age=$(( ($(cut -d' ' -f1 /proc/uptime | cut -d. -f1) * 100 - start) / 100 ))
      if [ "$age" -ge 20 ] && [ ! -e "$out/bt-$p.txt" ]; then
        { cat "/proc/$p/syscall"; gdb -p "$p" -batch -ex "bt 40" 2>&1; } > "$out/bt-$p.txt" 2>&1 || true
        echo "  round $r: child $p alive after $age s, its stack in $out/bt-$p.txt"
      fi
    done
    sleep 2
  done
  echo "round $r: $(sqlite3 "$db" "select count(*) from events where message like 'heap walk forked%'") forked walks, $(sqlite3 "$db" "select count(*) from events where message like 'forked heap walk failed%killed%'") children killed"
done
