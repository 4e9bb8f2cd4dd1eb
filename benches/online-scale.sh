#!/usr/bin/env bash
# The agent at production scale, at its default settings: Debian's Tomcat 10 shop of
# crates/cli/tests/java/Services.java with -Xmx4g, whose session listener registers every
# cart's CartPriceListener with the PriceService and never removes it (tomcat-shop: about
# 20 M objects and 1.5 GB live after three minutes at 1,000 requests a second, 40 items a
# cart), beside the same shop that removes its listeners and holds a catalog of as many items
# (tomcat-shop-steady). For each JDK (17 and 25) and each way in (run, attach), it reads
# `growth RUN.db --json` every 10 s, and prints at each 30 s the first candidate, the structure
# that holds it and its element; every 90 s, the steady shop's `top` live bytes and stated error
# against jcmd's histogram; at the end the longest pause a walk caused (stopped walks
# included), the walks taken and skipped, what a walk would take now, and whether the steady
# shop had a candidate at any reading.
#
#   benches/online-scale.sh [SECONDS] [RATE] [JDKS] [WAYS]
#
# JDKS is a list of java homes (default: the JDK on PATH and /usr/lib/jvm/temurin-25-jdk-amd64),
# WAYS of run and attach. Needs Debian's libtomcat10-java, python3 and sqlite3.
# From the environment: SERVER=jetty runs Debian's Jetty 9 shop instead (jetty-shop: every
# request's report kept under an attribute of Jetty's Server, whose AttributeContainerMap
# keeps it in a map and a list of beans, arrays of a few MB at most for a gigabyte; needs
# libjetty9-java); AGENT_OPTS, agent options for both
# shops (`--no-fork-walks` for the stop-the-world planner alone);
# LEAK_AFTER=S, the leaking shop removes its listeners for its first S seconds of load (a leak
# that begins after a warm-up); WARM=N, both shops load a catalog of N items at start (10 M
# is about 1.2 GB live), the steady one as many more as the leak reaches; HEAP, -Xmx (4g).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-180}; rate=${2:-1000}
default_jdks="$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")") /usr/lib/jvm/temurin-25-jdk-amd64"
jdks=${3:-$default_jdks}; ways=${4:-run attach}
out=$PWD/bench-out/online-scale; mkdir -p "$out"
cargo build --release -q -p leakscope -p leakscope-agent
bin=$PWD/target/release/leakscope
server=${SERVER:-tomcat}
case $server in
  # Leaked objects a request: a cart of 40 items, or one report; the steady shop's catalog
  # holds as many bytes in items (about 20 items a report).
  tomcat) per_request=40 ;;
  jetty) per_request=20 ;;
  *) echo "SERVER is tomcat or jetty, not $server" >&2; exit 2 ;;
esac
cp=$(ls /usr/share/java/tomcat10-*.jar /usr/share/java/servlet-api.jar /usr/share/java/jetty9-{server,util,http,io}.jar 2>/dev/null | grep -v -- '-[0-9][0-9.]*\.jar$' | tr '\n' ':')
javac --release 17 -nowarn -cp "$cp" -d "$out" crates/cli/tests/java/Services.java 2>/dev/null

# Starts SCENARIO on JAVA_HOME by WAY with the agent writing DB; prints a pid that lives as
# long as the JVM (the JVM's, or its `leakscope run`).
start() {
  local home=$1 way=$2 scenario=$3 db=$4; shift 4
  rm -f "$db"*
  if [ "$way" = run ]; then
    # shellcheck disable=SC2086
    "$bin" run --out "$db" ${AGENT_OPTS:-} -- "$home/bin/java" -Xmx${HEAP:-4g} "$@" -cp "$cp:$out" Services "$scenario" "$seconds" "$rate" \
      > "$db.out" 2> "$db.err" &
    # `leakscope run` lives as long as its JVM.
    echo $!
  else
    # The JVM waits for a line after READY (its catalog loaded): the agent attaches then, so
    # that the warm-up is not what it sees grow, and the load starts once it is in.
    local fifo=$db.go
    rm -f "$fifo"; mkfifo "$fifo"
    "$home/bin/java" -Xmx${HEAP:-4g} -Dservices.wait=true "$@" -cp "$cp:$out" Services "$scenario" "$seconds" "$rate" \
      < "$fifo" > "$db.out" 2> "$db.err" &
    local pid=$!
    exec 3> "$fifo"
    until grep -q READY "$db.out" 2>/dev/null; do kill -0 "$pid" || exit 1; sleep 1; done
    # shellcheck disable=SC2086
    "$bin" attach "$pid" --out "$db" ${AGENT_OPTS:-} > /dev/null
    echo go >&3; exec 3>&-; rm -f "$fifo"
    echo "$pid"
  fi
}

verdict() { # DB: first candidate, its structure and element, as one line
  "$bin" growth "$1" --json -q 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = (d["candidates"] or [None])[0]
if c is None:
    print("no candidate")
else:
    s = c["slice"].get("structure") or {}
    held = (s.get("path") or ["-"])[0] if s else ("not known yet" if c["slice"].get("not_known") else "-")
    print(c["class"], "| grows in", s.get("name", "-"), "| held by", held, "| element", s.get("element", "-"))'
}

# The JVM of a pid `start` printed (a `leakscope run`'s child, or the JVM itself).
jvm_of() { pgrep -P "$1" java | head -n 1 | grep . || echo "$1"; }

# DB PID: `top`'s live estimate and its stated error against the JVM's own count (`jcmd
# GC.class_histogram`, live objects after a full collection), one line.
top_vs_jcmd() {
  local live hist
  live=$("$bin" top "$1" --once --json 2>/dev/null) || { echo "no top"; return; }
  hist=$(jcmd "$(jvm_of "$2")" GC.class_histogram 2>/dev/null | awk '/^Total/ {print $3}')
  printf '%s' "$live" | python3 -c '
import json, sys
t = json.load(sys.stdin); h = int(sys.argv[1] or 0); m = 2 ** 20
live, err, source, walks = t["live_bytes"], t["live_error_bytes"], t["live_source"], t["walks"]
verdict = "within" if abs(live - h) <= err else "OUTSIDE its error"
print(f"top {live / m:.0f} MiB +- {err / m:.0f} ({source}, {walks} walks); jcmd {h / m:.0f} MiB: {verdict}")' "$hist"
}

candidates() { "$bin" growth "$1" --json -q 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["candidates"]))'; }

for home in $jdks; do
  version=$("$home/bin/java" -version 2>&1 | head -n 1)
  for way in $ways; do
    echo "== $server, $version, $way, $seconds s at $rate requests/s"
    leak=$out/leak.db; steady=$out/steady.db
    warm=${WARM:-0}
    lpid=$(start "$home" "$way" "$server-shop" "$leak" -Dservices.items=40 -Dservices.catalog="$warm" -Dservices.leakAfter="${LEAK_AFTER:-0}")
    spid=$(start "$home" "$way" "$server-shop-steady" "$steady" -Dservices.items=40 -Dservices.catalog=$((warm + (seconds - ${LEAK_AFTER:-0}) * rate * per_request)))
    t=0; steady_max=0
    while kill -0 "$lpid" 2>/dev/null || kill -0 "$spid" 2>/dev/null; do
      sleep 10; t=$((t + 10))
      n=$(candidates "$steady" || echo 0); [ "$n" -gt "$steady_max" ] && steady_max=$n
      if [ $((t % 30)) = 0 ] && kill -0 "$lpid" 2>/dev/null; then echo "  $t s: $(verdict "$leak")"; fi
      if [ $((t % 90)) = 0 ] && kill -0 "$spid" 2>/dev/null; then echo "  $t s, steady shop: $(top_vs_jcmd "$steady" "$spid")"; fi
    done
    echo "  end: $(verdict "$leak")"
    sqlite3 "$leak" "select '  longest pause ' || ifnull((select value from meta where key = 'longest_pause_ms'), 0) || ' ms; walks ' || (select count(*) from snapshots where kind = 'walk') || ', skipped or stopped ' || (select count(*) from events where message like 'heap walk s%')"
    sqlite3 "$leak" "select '  ' || message from events where message like 'heap walk skipped%' order by rowid desc limit 1" | cut -c1-300
    sqlite3 "$leak" "select '  ' || count(*) || ' forked walks; the last: ' || ifnull(max(message), '-') from events where message like 'heap walk forked%'" | cut -c1-300
    sqlite3 "$leak" "select '  ' || message from events where message like 'forked heap walk%' order by rowid desc limit 2" | cut -c1-300
    echo "  steady shop: at most $steady_max candidates at any 10 s reading"
  done
done
