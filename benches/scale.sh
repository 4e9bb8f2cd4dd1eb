#!/usr/bin/env bash
# How the cost of leakscope grows with the number of objects. For each size N (default 10^7,
# 10^8 and 4×10^8 objects) it streams two dumps of N objects with the shapes of a service's
# heap (`scale-heap`, from `testkit::scale`: hash maps, lists, a chain through a fifth of the
# heap, shared values; the second dump holds twice the sessions of a leaking registry), then
# times `info` and `dominators` on the second and `growth` on both, and prints wall time, peak
# memory and peak bytes per object. Linear growth shows as constant bytes per object and a
# constant time per object.
#
#   benches/scale.sh [N...]
#
# Disk: about 48 bytes per object per dump, two dumps at a time (4×10^8: 38 GB), in
# $SCALE_DIR (default bench-out/scale); each size's dumps are removed before the next. When two
# do not fit the disk (10^9: 96 GB), the first dump is saved as a summary (`leakscope summary`,
# about 1 MB) and removed before the second is written, and `growth` reads the summary and the
# last dump, with a summary of a third heap between them, since growth needs three heaps to name a
# leak (SCALE_SUMMARY=1 does this at any size). SCALE_GROWTH=0 writes one dump per size and
# times `info` and `dominators` alone.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 10000000 100000000 400000000
dir=${SCALE_DIR:-bench-out/scale}
mkdir -p "$dir"
cargo build --release -q -p leakscope --bin leakscope
cargo build --release -q -p leakscope-testkit --bin scale-heap
bin=$PWD/target/release/leakscope
gen=$PWD/target/release/scale-heap

# Runs a command under GNU time; prints "seconds peak_kb".
measure() {
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > "$dir/out" 2> "$dir/err" || {
    echo "failed: $*" >&2
    tail -5 "$dir/err" >&2
    exit 1
  }
  cat "$dir/time"
}

printf '%-13s %9s  %-11s %9s %10s %8s %8s\n' objects dump command seconds "peak MiB" B/obj ns/obj
for n in "$@"; do
  a=$dir/scale-$n-a.hprof
  b=$dir/scale-$n-b.hprof
  sessions=$((n / 200))
  growth=${SCALE_GROWTH:-1}
  earlier=()
  sum_secs=
  [ "$growth" = 0 ] || read -r gen_secs gen_kb < <(measure "$gen" "$n" "$sessions" "$a")
  [ "$growth" = 0 ] || earlier=("$a")
  free=$(df --output=avail -B1 "$dir" | tail -1)
  if [ "$growth" != 0 ] && { [ "$free" -lt $((n * 60)) ] || [ "${SCALE_SUMMARY:-}" = 1 ]; }; then
    # The second dump would not fit beside the first: keep each earlier dump as its summary,
    # and a third heap between them (growth needs three heaps to name a leak).
    earlier=()
    for step in 1 2; do
      summary=$dir/scale-$n-$step.summary
      read -r sum_secs sum_kb < <(measure "$bin" summary --quiet -o "$summary" "$a")
      rm -f "$a"
      earlier+=("$summary")
      [ "$step" = 2 ] || measure "$gen" "$n" "$((sessions * 3 / 2))" "$a" > /dev/null
    done
  fi
  if [ "$growth" = 0 ]; then
    read -r gen_secs gen_kb < <(measure "$gen" "$n" "$((2 * sessions))" "$b")
  else
    measure "$gen" "$n" "$((2 * sessions))" "$b" > /dev/null
  fi
  objects=$(python3 -c "import json; print(json.load(open('$dir/out'))['objects'])")
  bytes=$(stat -c %s "$b")
  row() {
    local what=$1 secs=$2 kb=$3
    python3 - "$objects" "$bytes" "$what" "$secs" "$kb" <<'EOF'
import sys
objects, size, what, secs, kb = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
print(f"{objects:<13,} {size / 1e9:>6.2f} GB  {what:<11} {secs:>9.1f} {kb / 1024:>10,.0f} {kb * 1024 / objects:>8.1f} {secs * 1e9 / objects:>8.0f}")
EOF
  }
  row generate "$gen_secs" "$gen_kb"
  for cmd in info dominators; do
    cat "$b" > /dev/null
    read -r secs kb < <(measure "$bin" "$cmd" --quiet --json "$b")
    row "$cmd" "$secs" "$kb"
  done
  if [ -n "$sum_secs" ]; then
    row "summary" "$sum_secs" "$sum_kb"
  fi
  if [ "$growth" = 0 ]; then
    rm -f "$b"
    continue
  fi
  read -r secs kb < <(measure "$bin" growth --quiet --json "${earlier[@]}" "$b")
  if [ -n "$sum_secs" ]; then row "growth 2s+1" "$secs" "$kb"; else row "growth 2" "$secs" "$kb"; fi
  python3 -c "
import json
g = json.load(open('$dir/out'))
f = g['findings']
print('             growth:', f[0]['structure'] + ' grows' if f else g.get('not_enough_data'))"
  rm -f "$a" "$b" "${earlier[@]}"
done
