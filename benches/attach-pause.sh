#!/usr/bin/env bash
# What attaching the agent costs a running Tomcat: the JVM's own safepoint log
# (-Xlog:safepoint) around `leakscope attach`, on JDK 17 and JDK 25, without and with --watch.
# Prints, for each, the longest stop within 3 s of the attach (the agent's load, and with
# --watch the rewriting of the watched classes) and the longest of the agent's heap walks
# afterwards. Tomcat is Debian's tomcat10 (crates/cli/tests/java/Services.java drives it).
#
#   benches/attach-pause.sh [SECONDS]
#
# Needs Debian's tomcat10 jars in /usr/share/java and JDK 25 at
# /usr/lib/jvm/temurin-25-jdk-amd64.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-40}
out=$PWD/bench-out/attach-pause; mkdir -p "$out"
cargo build --release -q -p leakscope -p leakscope-agent
cp=$(ls /usr/share/java/tomcat10-*.jar /usr/share/java/servlet-api.jar | grep -v -- '-[0-9][0-9.]*\.jar$' | tr '\n' ':')
javac --release 17 -nowarn -cp "$cp" -d "$out" crates/cli/tests/java/Services.java 2> /dev/null
jdk17=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")

# The longest stop (ms, and what it was) among safepoints in [FROM, TO) s of uptime.
longest() {
  awk -v from="$2" -v to="$3" -F'[][]' '/Safepoint "/ {
      t = $2; sub(/s$/, "", t); t += 0
      match($0, /Safepoint "[^"]+"/); op = substr($0, RSTART + 11, RLENGTH - 12)
      match($0, /Total: [0-9]+ ns/); ns = substr($0, RSTART + 7, RLENGTH - 10) + 0
      if (t >= from && t < to && ns > max) { max = ns; what = op }
    } END { printf "%.1f ms (%s)", max / 1e6, what }' "$1"
}

for jdk in "$jdk17" /usr/lib/jvm/temurin-25-jdk-amd64; do
  v=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | awk '/java.specification.version/ {print $3}')
  for watch in none watch; do
    tag="jdk$v-$watch"; log="$out/$tag.safepoints"; rm -f "$log" "$out/$tag.db"*
    scenario=tomcat-steady; extra=()
    if [ "$watch" = watch ]; then scenario=tomcat-sessions; extra=(--watch 'rule:StandardManager>StandardSession'); fi
    "$jdk/bin/java" -Xmx512m "-Xlog:safepoint:file=$log:uptime" -cp "$cp:$out" Services "$scenario" "$seconds" 300 \
      > /dev/null 2> "$out/$tag.err" &
    pid=$!
    sleep 12
    up=$(jcmd "$pid" VM.uptime | awk 'NR == 2 {print $1 + 0}')
    target/release/leakscope attach "$pid" --out "$out/$tag.db" "${extra[@]}" > /dev/null
    wait "$pid"
    warned=$(grep -c "loaded dynamically" "$out/$tag.err" || true)
    printf "JDK %s, %-5s attach: longest stop %s; heap walks after: longest %s; dynamic-agent warning: %s\n" \
      "$v" "$watch" "$(longest "$log" "$up" "$(echo "$up + 3" | bc)")" \
      "$(awk '/HeapWalkOperation/' "$log" | { cat > "$log.walks"; longest "$log.walks" 0 100000; })" \
      "$([ "$warned" -gt 0 ] && echo yes || echo no)"
  done
done
