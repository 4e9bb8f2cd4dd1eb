#!/usr/bin/env bash
# Whether a fork of the JVM is a snapshot of its heap, per JDK and collector (issue 45: walks
# on a forked copy-on-write image): it is when the Java heap is a private mapping, so that
# the child's copy stays as it was at the fork while the JVM runs on. Starts each JVM with a
# 256 MiB heap it has touched and reads /proc/PID/maps: writable shared mappings of 16 MiB
# or more are listed (the heap of a collector that maps it shared, as ZGC's
# `/memfd:java_heap`, is one), with read-only shared files left out (`lib/modules`).
# Also samples the idle VM thread's system call 200 times (`/proc/PID/task/TID/syscall`):
# when it always waits on one futex address, a forked child whose VM thread waits on that
# address again has finished its walk (a child hung on another lock waits elsewhere).
#
#   benches/fork-safety.sh [JAVA_HOME...]
#
# Default: JDK 17 (`java` on the PATH) and JDK 25 at /usr/lib/jvm/temurin-25-jdk-amd64.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/bench-out/fork-safety; mkdir -p "$out"
homes=("$@")
if [ ${#homes[@]} -eq 0 ]; then
  homes=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /usr/lib/jvm/temurin-25-jdk-amd64)
fi
cat > "$out/Touch.java" <<'JAVA'
public class Touch {
    public static void main(String[] args) throws Exception {
        byte[][] kept = new byte[64][];
        for (int i = 0; i < kept.length; i++) kept[i] = new byte[1 << 20];
        System.out.println("ready");
        Thread.sleep(60_000);
        System.out.println(kept.length);
    }
}
JAVA
printf '%-28s %-11s %-55s %s\n' JDK collector "writable shared mappings >= 16 MiB (MiB)" "idle VM thread's waits"
for home in "${homes[@]}"; do
  "$home/bin/javac" -d "$out" "$out/Touch.java"
  for gc in G1 Parallel Serial Shenandoah Z; do
    if ! "$home/bin/java" -XX:+Use${gc}GC -version >/dev/null 2>&1; then
      printf '%-28s %-11s %s\n' "$(basename "$home")" "$gc" "not in this JDK"; continue
    fi
    "$home/bin/java" -Xms256m -Xmx256m -XX:+Use${gc}GC -cp "$out" Touch > "$out/stdout" &
    pid=$!
    for _ in $(seq 100); do grep -q ready "$out/stdout" && break; sleep 0.1; done
    shared=$(python3 - "$pid" <<'PY'
import sys
sizes = {}
for line in open(f"/proc/{sys.argv[1]}/maps"):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if f[1].startswith("rw") and f[1].endswith("s"):
        name = f[5] if len(f) > 5 else "(anonymous)"
        sizes[name] = sizes.get(name, 0) + hi - lo
big = [f"{n} {s >> 20}" for n, s in sorted(sizes.items()) if s >= 16 << 20]
print(", ".join(big) or "none: the heap is private, a fork copies it on write")
PY
)
    idle=$(python3 - "$pid" <<'PY'
import collections, os, sys, time
pid = sys.argv[1]
tid = next(t for t in os.listdir(f"/proc/{pid}/task") if open(f"/proc/{pid}/task/{t}/comm").read().strip() == "VM Thread")
waits = collections.Counter()
for _ in range(200):
    f = open(f"/proc/{pid}/task/{tid}/syscall").read().split()
    waits[" ".join(f[:2])] += 1
    time.sleep(0.005)
print(f"{len(waits)} distinct ({waits.most_common(1)[0][1]} of 200 the same: syscall {waits.most_common(1)[0][0]})")
PY
)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    printf '%-28s %-11s %-55s %s\n' "$(basename "$home")" "$gc" "$shared" "$idle"
  done
done
