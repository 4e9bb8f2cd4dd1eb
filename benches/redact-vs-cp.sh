#!/usr/bin/env bash
# `leakscope redact` against copying the same file, in one run: `cp` for the plain copy,
# `gzip -1` for the compressed one (the level `redact` writes), and `redact --zero` (arrays
# zeroed, no key: the floor of a rewrite) for the keyed masking. Prints wall time and peak RSS
# of each, and the ratios. The file is read once first, so every run starts from the page
# cache; RSS of `redact` counts the input's mapped pages.
#
#   benches/redact-vs-cp.sh [DUMP]   # default: bench-out/dumps/tomcat.hprof (index-vs-peers.sh makes it)
#   benches/redact-vs-cp.sh arrays   # a heap that is mostly arrays (benches/java/ArrayHeavy.java,
#                                    # 1.5 GB of payloads and text), made once into bench-out/dumps/
set -euo pipefail
cd "$(dirname "$0")/.."
dump=${1:-bench-out/dumps/tomcat.hprof}
out=bench-out/redact; mkdir -p "$out"
if [ "$dump" = arrays ]; then
  dump=bench-out/dumps/arrays.hprof
  if [ ! -s "$dump" ]; then
    mkdir -p bench-out/dumps
    javac -d "$out" benches/java/ArrayHeavy.java
    java -Xmx4g -cp "$out" ArrayHeavy "${ARRAY_HEAP_MB:-1500}" > "$out/arrays.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do grep -q READY "$out/arrays.log" 2>/dev/null && break; sleep 1; done
    jcmd "$pid" GC.heap_dump "$PWD/$dump" > /dev/null
    kill "$pid"
  fi
fi
[ -s "$dump" ] || { echo "no $dump: run benches/index-vs-peers.sh once, or name a dump" >&2; exit 2; }
cargo build --release -q -p leakscope
cat "$dump" > /dev/null

run() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$out/$label.time" "$@" > /dev/null
  read -r secs kb < "$out/$label.time"
  printf '  %-16s %7.2f s %7d MB\n' "$label" "$secs" $((kb / 1024)) >&2
  echo "$secs"
}

echo "dump: $dump ($(du -m "$dump" | cut -f1) MB)" >&2
cp_s=$(run cp cp "$dump" "$out/copy.hprof"); rm -f "$out/copy.hprof"
redact_s=$(run redact target/release/leakscope redact -q "$dump" -o "$out/redacted.hprof"); rm -f "$out/redacted.hprof"
zero_s=$(run "redact --zero" target/release/leakscope redact -q --zero "$dump" -o "$out/zeroed.hprof"); rm -f "$out/zeroed.hprof"
names_s=$(run "redact --names" target/release/leakscope redact -q --names "$dump" -o "$out/named.hprof"); rm -f "$out/named.hprof"
gzip_s=$(run "gzip -1" sh -c "gzip -1 -c '$dump' > '$out/copy.hprof.gz'"); rm -f "$out/copy.hprof.gz"
gz_s=$(run "redact .gz" target/release/leakscope redact -q "$dump" -o "$out/redacted.hprof.gz"); rm -f "$out/redacted.hprof.gz"
printf 'redact / cp: %.1fx   redact / redact --zero: %.2fx   redact --names / cp: %.1fx   redact .gz / gzip -1: %.2fx\n' \
  "$(echo "$redact_s / $cp_s" | bc -l)" "$(echo "$redact_s / $zero_s" | bc -l)" "$(echo "$names_s / $cp_s" | bc -l)" \
  "$(echo "$gz_s / $gzip_s" | bc -l)"
