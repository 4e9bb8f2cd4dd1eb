#!/usr/bin/env bash
# Time and peak memory of `leakscope growth` on a series of eight ~500 MB dumps, and of its
# summary stage per dump side by side with `leakscope histogram` on the same dump (the
# summary stage should run at histogram speed).
#
#   benches/growth-series.sh [DIR]
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

echo "per dump: histogram vs summary (the class points-from graph), seconds and peak MB"
hs=0; ss=0
for f in "$dir"/series-*.hprof; do
  read -r ht hm < <(measure "$ls" histogram -q "$f")
  read -r st sm < <(measure "$ls" summary -q "$f" -o /dev/null)
  printf "%s  histogram %6.2f s %6d MB   summary %6.2f s %6d MB   ratio %.2f\n" \
    "$(basename "$f")" "$ht" $((hm / 1024)) "$st" $((sm / 1024)) "$(echo "$st / $ht" | bc -l)"
  hs=$(echo "$hs + $ht" | bc -l); ss=$(echo "$ss + $st" | bc -l)
done
printf "total: histogram %.2f s, summary %.2f s, ratio %.2f\n" "$hs" "$ss" "$(echo "$ss / $hs" | bc -l)"

echo "growth over the eight dumps (the last one fully indexed for holders):"
read -r gt gm < <(measure "$ls" growth -q "$dir"/series-*.hprof)
printf "  growth: %.2f s, peak %d MB\n" "$gt" $((gm / 1024))
read -r gt gm < <(measure "$ls" growth -q --holders 0 "$dir"/series-*.hprof)
printf "  growth --holders 0: %.2f s, peak %d MB\n" "$gt" $((gm / 1024))
"$ls" growth -q "$dir"/series-*.hprof | head -n 30
