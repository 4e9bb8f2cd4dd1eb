#!/usr/bin/env bash
# Time and peak memory of `leakscope growth` on a series of eight ~500 MB dumps, and of its
# summary stage per dump side by side with `leakscope histogram` on the same dump (the
# summary stage should run at histogram speed).
#
#   benches/growth-series.sh [DIR]
#   BASELINE=/path/to/older/leakscope benches/growth-series.sh [DIR]
#
# With BASELINE, `growth` of the eight dumps is also run with that binary (say, a build of an
# earlier commit), alternated with this one, and the ratios are printed.
#
# Without DIR's dumps, writes them with benches/java/GrowSeries.java (needs a JDK and about
# 4 GB of disk). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bench-out/series}
mkdir -p "$dir"
cargo build --release -q -p leakscope
ls=target/release/leakscope

if [ ! -f "$dir/series-08.hprof" ]; then
  javac -d "$dir" benches/java/GrowSeries.java
  java -Xmx3g -cp "$dir" GrowSeries 1500000 8 "$dir"
fi
ls -la "$dir"/series-*.hprof

measure() { # prints "seconds peak_kb"
  /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -n 1
}

# Warm: the dump is in the page cache (as right after it was written); best of two runs each,
# alternated. Cold: the page cache is dropped before each run (needs root), as for dumps
# taken days ago; then both read the file from disk.
cold=false
if [ -w /proc/sys/vm/drop_caches ]; then cold=true; fi
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
min() { echo "if ($1 < $2) $1 else $2" | bc -l; }
echo "per dump: histogram vs summary (the class points-from graph), seconds and peak MB"
hs=0; ss=0; hc=0; sc=0
for f in "$dir"/series-*.hprof; do
  cat "$f" >/dev/null
  read -r ht hm < <(measure "$ls" histogram -q "$f")
  read -r st sm < <(measure "$ls" summary -q "$f" -o /dev/null)
  read -r ht2 _ < <(measure "$ls" histogram -q "$f")
  read -r st2 _ < <(measure "$ls" summary -q "$f" -o /dev/null)
  ht=$(min "$ht" "$ht2"); st=$(min "$st" "$st2")
  printf "%s  warm: histogram %5.2f s %5d MB, summary %5.2f s %5d MB, ratio %.2f" \
    "$(basename "$f")" "$ht" $((hm / 1024)) "$st" $((sm / 1024)) "$(echo "$st / $ht" | bc -l)"
  hs=$(echo "$hs + $ht" | bc -l); ss=$(echo "$ss + $st" | bc -l)
  if $cold; then
    drop; read -r htc _ < <(measure "$ls" histogram -q "$f")
    drop; read -r stc _ < <(measure "$ls" summary -q "$f" -o /dev/null)
    printf "   cold: %5.2f s vs %5.2f s, ratio %.2f" "$htc" "$stc" "$(echo "$stc / $htc" | bc -l)"
    hc=$(echo "$hc + $htc" | bc -l); sc=$(echo "$sc + $stc" | bc -l)
  fi
  echo
done
printf "total warm: histogram %.2f s, summary %.2f s, ratio %.2f\n" "$hs" "$ss" "$(echo "$ss / $hs" | bc -l)"
if $cold; then
  printf "total cold: histogram %.2f s, summary %.2f s, ratio %.2f\n" "$hc" "$sc" "$(echo "$sc / $hc" | bc -l)"
fi

echo "growth over the eight dumps (the last one fully indexed for holders):"
read -r gt gm < <(measure "$ls" growth -q "$dir"/series-*.hprof)
printf "  growth: %.2f s, peak %d MB\n" "$gt" $((gm / 1024))
read -r gt gm < <(measure "$ls" growth -q --holders 0 "$dir"/series-*.hprof)
printf "  growth --holders 0: %.2f s, peak %d MB\n" "$gt" $((gm / 1024))
if [ -n "${BASELINE:-}" ]; then
  echo "growth of the eight dumps, this build vs BASELINE=$BASELINE, alternated, two rounds:"
  for round in 1 2; do
    read -r bt bm < <(measure "$BASELINE" growth -q "$dir"/series-*.hprof)
    read -r nt nm < <(measure "$ls" growth -q "$dir"/series-*.hprof)
    printf "  round %d: baseline %.2f s %d MB, this %.2f s %d MB: time ×%.2f, memory ×%.2f\n" \
      "$round" "$bt" $((bm / 1024)) "$nt" $((nm / 1024)) "$(echo "$nt / $bt" | bc -l)" "$(echo "$nm / $bm" | bc -l)"
  done
fi
"$ls" growth -q "$dir"/series-*.hprof | head -n 30
