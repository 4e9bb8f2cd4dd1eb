#!/usr/bin/env bash
# Dumps bigger than memory: `leakscope dominators` on DUMP in memory, then inside a memory
# cgroup limited to FRACTION (default 0.4) of that run's peak, where leakscope reads the
# cgroup's limit, says it goes out of core, and keeps its arrays in temporary files. With RUNS
# (default 1), the two alternate that many times, as this shared machine's speed drifts.
# Prints each run's wall time and peak, whether the outputs are identical, and the ratio of
# the median times.
#
#   sudo benches/out-of-core.sh DUMP [FRACTION] [RUNS]
#
# OOC_TIMEOUT=SECONDS stops a limited run after that long (it fails, and says so);
# LEAKSCOPE_BIN=PATH times that binary.
#
# Needs root for the cgroup (v1 memory controller or v2 with memory enabled).
set -euo pipefail
cd "$(dirname "$0")/.."
dump=${1:?usage: benches/out-of-core.sh DUMP [FRACTION] [RUNS]}
fraction=${2:-0.4}
runs=${3:-1}
out=bench-out
mkdir -p "$out"
# LEAKSCOPE_BIN=PATH times that binary instead of building this checkout's (a copy stays put
# while the tree is rebuilt).
if [ -z "${LEAKSCOPE_BIN:-}" ]; then
  cargo build --release -q -p leakscope
fi
bin=${LEAKSCOPE_BIN:-$PWD/target/release/leakscope}

in_memory() {
  cat "$dump" > /dev/null
  /usr/bin/time -f "%e %M" -o "$out/ooc-mem.time" "$bin" dominators --quiet --json "$dump" > "$out/ooc-mem.json"
  read -r mem_secs mem_kb < "$out/ooc-mem.time"
  echo "$mem_secs" >> "$out/ooc-mem.times"
}

limited() {
  # The page cache the cgroup charges starts empty: the dump is read back under the limit.
  sync
  echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || true
  local status=0
  bash -c "echo \$\$ > $cg/cgroup.procs; exec timeout -s KILL ${OOC_TIMEOUT:-0} /usr/bin/time -f '%e %M' -o $out/ooc-limited.time \
    $bin dominators --json $dump" > "$out/ooc-limited.json" 2> "$out/ooc-limited.err" || status=$?
  if [ "$status" -ne 0 ]; then
    { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; } && echo "  limited to $((limit >> 20)) MB: stopped after OOC_TIMEOUT=${OOC_TIMEOUT} s" && exit 1
    echo "  limited to $((limit >> 20)) MB: failed (exit $status): $(tail -1 "$out/ooc-limited.err")"
    exit 1
  fi
  read -r lim_secs lim_kb < "$out/ooc-limited.time"
  echo "$lim_secs" >> "$out/ooc-limited.times"
}

: > "$out/ooc-mem.times"
: > "$out/ooc-limited.times"
in_memory
limit=$(python3 -c "print(int($mem_kb * 1024 * $fraction))")
if [ -d /sys/fs/cgroup/memory ]; then
  cg=/sys/fs/cgroup/memory/leakscope-ooc-$$
  mkdir "$cg"
  echo "$limit" > "$cg/memory.limit_in_bytes"
  echo "$limit" > "$cg/memory.memsw.limit_in_bytes" 2>/dev/null || true
else
  cg=/sys/fs/cgroup/leakscope-ooc-$$
  mkdir "$cg"
  echo "$limit" > "$cg/memory.max"
  echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
fi
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo "dump: $dump ($(du -m "$dump" | cut -f1) MB)"
for run in $(seq "$runs"); do
  [ "$run" -gt 1 ] && in_memory
  limited
  printf '  in memory:            %8.1f s  peak %6d MB\n' "$mem_secs" $((mem_kb / 1024))
  printf '  limited to %6d MB:  %8.1f s  peak %6d MB (resident, file pages included)\n' $((limit >> 20)) "$lim_secs" $((lim_kb / 1024))
  cmp -s "$out/ooc-mem.json" "$out/ooc-limited.json" && echo "  outputs identical" || echo "  OUTPUTS DIFFER"
done
grep '^leakscope:' "$out/ooc-limited.err" | sed 's/^/  /' || true
python3 - "$out/ooc-mem.times" "$out/ooc-limited.times" <<'PY'
import statistics, sys
mem, lim = ([float(l) for l in open(p)] for p in sys.argv[1:])
print('  time ratio: %.2fx (median %.1f s limited against %.1f s in memory, %d runs each)'
      % (statistics.median(lim) / statistics.median(mem), statistics.median(lim), statistics.median(mem), len(mem)))
PY
