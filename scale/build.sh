#!/usr/bin/env bash
# Builds the scale harness (a real ResourceManager with simulated NodeManagers, see
# scale/src/yarnam/scale/Harness.java) with javac against the Hadoop jars in $1 (a lib folder,
# e.g. the one scripts/scale-bench.sh copies from Maven Central): scale/target/yarn-am-scale.jar.
# Rebuilds only when a source is newer than the jar. Prints nothing but errors.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=${1:?usage: scale/build.sh HADOOP_LIB_DIR}
out="$here/target"
jar="$out/yarn-am-scale.jar"
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
newest=$(find "$here/src" "$here/build.sh" -type f -newer "$jar" 2>/dev/null | head -1 || true)
if [[ -f "$jar" && -z "$newest" ]]; then
  exit 0
fi
javac=${JAVA_HOME:+$JAVA_HOME/bin/}javac
jarcmd=${JAVA_HOME:+$JAVA_HOME/bin/}jar
rm -rf "$out/classes"
mkdir -p "$out/classes"
"$javac" -nowarn --release 17 -cp "$lib/*" -d "$out/classes" $(find "$here/src" -name '*.java')
# A new file moved into place: a harness still running keeps the jar it opened.
"$jarcmd" --create --file "$jar.tmp" -C "$out/classes" .
mv "$jar.tmp" "$jar"
