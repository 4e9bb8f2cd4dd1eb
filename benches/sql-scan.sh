#!/usr/bin/env bash
# SQL scan speed: `leakscope sql` on DUMP runs the issue's full scan with aggregation
#
#   SELECT class, count(*), sum(retained_bytes) FROM objects GROUP BY class ORDER BY 3 DESC LIMIT 20
#
# three times in one session (the first also builds the dominator tree, which the session keeps),
# and prints each query's time and rows per second, beside `leakscope dominators` on the same
# dump (the index alone) and the binary's size.
#
#   benches/sql-scan.sh DUMP
set -euo pipefail
cd "$(dirname "$0")/.."
dump=${1:?usage: benches/sql-scan.sh DUMP}
out=bench-out
mkdir -p "$out"
cargo build --release -q -p leakscope
bin=$PWD/target/release/leakscope
cat "$dump" > /dev/null

q="SELECT class, count(*), sum(retained_bytes) FROM objects GROUP BY class ORDER BY 3 DESC LIMIT 20"
objects=$("$bin" info --quiet --json "$dump" | python3 -c "import json,sys; print(json.load(sys.stdin)['objects'])")
/usr/bin/time -f "%e %M" -o "$out/sql-dominators.time" "$bin" dominators --quiet --json "$dump" > /dev/null
read -r dom_secs dom_kb < "$out/sql-dominators.time"
printf '%s;\n%s;\n%s;\n' "$q" "$q" "$q" |
  LEAKSCOPE_TIMINGS=1 /usr/bin/time -f "%e %M" -o "$out/sql-scan.time" "$bin" sql --quiet --csv "$dump" \
    > "$out/sql-scan.csv" 2> "$out/sql-scan.err"
read -r sql_secs sql_kb < "$out/sql-scan.time"
echo "dump: $dump, $objects objects; binary: $(du -m "$bin" | cut -f1) MB"
echo "leakscope dominators (index only): ${dom_secs} s, peak $((dom_kb / 1024)) MB"
grep '^query' "$out/sql-scan.err" | awk -v n="$objects" '{printf "%s %d: %.3f s, %.1f M rows/s\n", $1, NR, $3, n / $3 / 1e6}'
echo "leakscope sql (index, then three queries): ${sql_secs} s, peak $((sql_kb / 1024)) MB"
