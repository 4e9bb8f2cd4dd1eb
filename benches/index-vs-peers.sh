#!/usr/bin/env bash
# Side-by-side: full indexing (object graph, exact dominators, retained sizes, top retainers)
# by `leakscope dominators`, hprof-analyzer and VisualVM's heap library, on the same dumps, in
# one run. Prints wall time and peak RSS of each, per object, and the ratios.
#
#   benches/index-vs-peers.sh            # the two real dumps below, made once and kept
#   benches/index-vs-peers.sh DUMP...    # dumps of your own
#
# The real dumps are 1-2 GB heaps of applications from Debian's packages, written by
# benches/java/RealHeaps.java into bench-out/dumps/: an in-memory H2 database of orders with
# two indexes (libh2-java), and an embedded Tomcat 10 holding shopping sessions
# (libtomcat10-java). Set REAL_HEAP_MB (default 1100) for their live size.
#
# Peers are skipped when missing: `cargo install --locked hprof-analyzer` (its newest zip
# dependency does not build without --locked), `apt-get install visualvm`. VisualVM needs ~10x
# the dump size in memory; it runs only with VISUALVM=1.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-out
mkdir -p "$out/dumps"
cargo build --release -q -p leakscope

dumps=("$@")
if [ ${#dumps[@]} -eq 0 ]; then
  jars=$(ls /usr/share/java/h2.jar /usr/share/java/tomcat10-*.jar /usr/share/java/servlet-api.jar 2>/dev/null \
    | grep -v -- '-10\.' | paste -sd: -)
  case "$jars" in
    *h2.jar*tomcat10-catalina*) ;;
    *) echo "needs Debian's libh2-java and libtomcat10-java (apt-get install libh2-java libtomcat10-java)" >&2; exit 2 ;;
  esac
  javac -nowarn -cp "$jars" -d "$out" benches/java/RealHeaps.java
  for app in h2 tomcat; do
    dump="$out/dumps/$app.hprof"
    if [ ! -s "$dump" ]; then
      echo "making $dump ..." >&2
      java -Xmx8g -XX:+UseParallelGC -cp "$jars:$out" RealHeaps "$app" "${REAL_HEAP_MB:-1100}" "$dump" >&2
    fi
    dumps+=("$dump")
  done
fi

run() { # label, objects, command...
  local label=$1 objects=$2; shift 2
  if /usr/bin/time -f "%e %M" -o "$out/$label.time" "$@" > "$out/$label.out" 2> "$out/$label.err"; then
    read -r secs kb < "$out/$label.time"
    printf '  %-16s %8.1f s %7d MB %8.1f B/object\n' "$label" "$secs" $((kb / 1024)) "$(echo "$kb * 1024 / $objects" | bc -l)"
    echo "$label $secs $kb" >> "$out/index.txt"
  else
    echo "  $label failed: $(tail -1 "$out/$label.err")"
  fi
}

jar=/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar
for dump in "${dumps[@]}"; do
  info=$(target/release/leakscope info --json --quiet "$dump")
  objects=$(echo "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["objects"])')
  refs=$(echo "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["references"])')
  echo "dump: $dump ($(du -m "$dump" | cut -f1) MB, $objects objects, $refs references)"
  cat "$dump" > /dev/null # every tool starts with the file in the page cache
  : > "$out/index.txt"
  run leakscope "$objects" target/release/leakscope dominators --quiet --top 20 "$dump"
  if command -v hprof-analyzer >/dev/null; then
    run hprof-analyzer "$objects" hprof-analyzer "$dump"
  fi
  if [ "${VISUALVM:-}" = 1 ] && [ -f "$jar" ]; then
    javac -cp "$jar" -d "$out" benches/java/VisualVmTop.java
    # VisualVM caches its index in DUMP.hwcache/; a cached run would not be an indexing run.
    rm -rf "$dump.hwcache"
    run visualvm "$objects" java -Xmx16g -cp "$jar:$out" VisualVmTop "$dump" 20
    rm -rf "$dump.hwcache"
  fi
  awk '$1=="leakscope"{t=$2; m=$3} $1!="leakscope"{pt[$1]=$2; pm[$1]=$3}
    END {for (p in pt) printf "  leakscope vs %s: %.2fx the speed, %.2fx less peak memory\n", p, pt[p]/t, pm[p]/m}' "$out/index.txt"
done
