#!/usr/bin/env bash
# Builds the MapReduce side of the yarn-am/MapReduce comparison (scripts/mr_bench.py) with javac against the test cluster's
# Hadoop jars and the MapReduce jars (`tests/cluster/cluster.sh mapreduce` fetches them):
# mapreduce/target/yarn-am-mr.jar. Rebuilds only when a source is newer than the jar.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
R=${YARN_AM_CLUSTER_DIR:-/tmp/yarn-am-cluster}
out="$here/target"
jar="$out/yarn-am-mr.jar"
[[ -d "$R/mr-lib" ]] || { echo "no MapReduce jars in $R/mr-lib: run tests/cluster/cluster.sh mapreduce" >&2; exit 1; }
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
newest=$(find "$here/src" "$here/build.sh" -type f -newer "$jar" 2>/dev/null | head -1 || true)
[[ -f "$jar" && -z "$newest" ]] && exit 0
javac=${JAVA_HOME:+$JAVA_HOME/bin/}javac
jarcmd=${JAVA_HOME:+$JAVA_HOME/bin/}jar
rm -rf "$out/classes"
mkdir -p "$out/classes"
"$javac" -nowarn --release 17 -cp "$R/lib/*:$R/mr-lib/*" -d "$out/classes" \
  $(find "$here/src/main/java" -name '*.java')
"$jarcmd" --create --file "$jar" -C "$out/classes" .
