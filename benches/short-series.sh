#!/usr/bin/env bash
# What growth says of the last three, the last four and all eight dumps of sixteen series:
# the test suite's Java programs that leak (Growth.java's map, listeners, thread locals, two
# indexes and slow leak; LeakyApps' Tomcat sessions and Jetty cache; LeakyLibraries' JMX,
# Log4j 2, Guava cache, EventBus and Caffeine) and that do not (Growth.java's phases and full
# LRU cache, LeakyApps' bounded Jetty cache, SteadyApps' H2, Lucene and Tomcat), on Debian's
# jars as scripts/test installs them. One line per series and window: the findings (structure,
# element, growth) and the first candidates.
#
#   benches/short-series.sh [DIR]
#   BASELINE=/path/to/older/leakscope benches/short-series.sh [DIR]
#
# With BASELINE the same table is printed for that binary too (a build of an earlier commit),
# and the lines that differ are listed. The dumps are summarised once (`leakscope summary`),
# and growth reads the summaries. About 10 minutes on 2 cores, most of it the Java programs.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bench-out/short-series}
mkdir -p "$dir"
cargo build -q -p leakscope
ls=$PWD/target/debug/leakscope
src=$PWD/crates/cli/tests/java
j=/usr/share/java
tomcat=$(ls $j/tomcat10-*.jar | grep -v -- '-10\.' | tr '\n' ':')
apps_cp="${tomcat}$j/jetty9-server.jar:$j/jetty9-util.jar:$j/jetty9-http.jar:$j/jetty9-io.jar:$j/servlet-api.jar"
libs_cp="$j/guava.jar:$j/log4j-api.jar:$j/log4j-core.jar:$j/caffeine.jar"
steady_cp="$j/h2.jar:$j/lucene-core-4.10.4.jar:$j/lucene-analyzers-common-4.10.4.jar:${tomcat}"

cd "$dir"
if [ ! -e steady/tomcat-08.hprof ]; then
  mkdir -p growth apps libs steady
  javac -nowarn -d growth "$src/Growth.java"
  javac --release 17 -nowarn -cp "$apps_cp" -d apps "$src/LeakyApps.java"
  javac --release 17 -nowarn -cp "$apps_cp" -d apps/webapp/WEB-INF/classes "$src/webapp/LeakyWebapp.java"
  javac --release 17 -nowarn -cp "$libs_cp" -d libs "$src/LeakyLibraries.java"
  javac --release 17 -nowarn -cp "$steady_cp" -d steady "$src/SteadyApps.java"
  for s in map listeners threadlocal twoindexes slowjitter phases cache; do
    java -Xmx256m -XX:+UseG1GC -cp growth Growth $s 8 growth >/dev/null
  done
  for s in tomcat-sessions jetty-cache jetty-bounded; do
    java -Xmx256m -cp "$apps_cp:apps" -Dleakyapps.webapp="$PWD/apps/webapp" LeakyApps $s 8 apps >/dev/null
  done
  for s in jmx log4j guava-cache eventbus caffeine; do
    java -Xmx256m -Dlog4j2.level=ERROR -cp "$libs_cp:libs" LeakyLibraries $s 8 libs >/dev/null
  done
  for s in h2 lucene tomcat; do
    java -Xmx256m -cp "$steady_cp:steady" SteadyApps $s 8 steady >/dev/null
  done
fi
for f in */*.hprof; do
  [ -e "${f%.hprof}.json" ] || "$ls" summary --quiet "$f" -o "${f%.hprof}.json"
done

table() {
  python3 - "$1" <<'EOF'
import glob, json, os, subprocess, sys
binary = sys.argv[1]
series = {}
for f in sorted(glob.glob("*/*.json")):
    series.setdefault(os.path.basename(f).rsplit("-", 1)[0], []).append(f)
for name, files in sorted(series.items()):
    for label, part in [("last3", files[-3:]), ("last4", files[-4:]), ("all", files)]:
        out = subprocess.run([binary, "growth", "--quiet", "--json", *part], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name:16} {label:6} error: {out.stderr.strip()[:120]}")
            continue
        r = json.loads(out.stdout)
        found = [(x["structure"], x.get("element"), x["growth_bytes"]) for x in r["findings"]][:3]
        first = [x["class"] for x in r["candidates"]][:4]
        print(f"{name:16} {label:6} findings={found} candidates={first} not_enough_data={bool(r.get('not_enough_data'))}")
EOF
}

table "$ls" | tee now.txt
if [ -n "${BASELINE:-}" ]; then
  echo "--- $BASELINE"
  table "$BASELINE" | tee baseline.txt
  echo "--- lines that differ (< baseline, > this build)"
  diff baseline.txt now.txt || true
fi
