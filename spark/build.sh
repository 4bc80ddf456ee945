#!/usr/bin/env bash
# Builds the yarn-am Spark plugin with javac against the jars of the pinned Spark
# (scripts/spark-env.sh installs it): spark/target/yarn-am-spark.jar (the plugin, with its
# META-INF/services entry) and spark/target/yarn-am-spark-tests.jar (the integration test's job).
# Rebuilds only when a source is newer than the jar. Prints nothing but errors.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SPARK_HOME=${SPARK_HOME:-$(bash "$here/../scripts/spark-env.sh")}
out="$here/target"
jar="$out/yarn-am-spark.jar"
tests="$out/yarn-am-spark-tests.jar"
mkdir -p "$out"
exec 9>"$out/.build.lock"   # one build at a time (tests may call this in parallel)
flock 9
newest=$(find "$here/src" "$here/build.sh" -type f -newer "$tests" 2>/dev/null | head -1 || true)
if [[ -f "$jar" && -f "$tests" && -z "$newest" ]]; then
  exit 0
fi
javac=${JAVA_HOME:+$JAVA_HOME/bin/}javac
jarcmd=${JAVA_HOME:+$JAVA_HOME/bin/}jar
rm -rf "$out/classes" "$out/test-classes"
mkdir -p "$out/classes" "$out/test-classes"
"$javac" -nowarn --release 17 -cp "$SPARK_HOME/jars/*" -d "$out/classes" \
  $(find "$here/src/main/java" -name '*.java')
cp -r "$here/src/main/resources/." "$out/classes/"
"$jarcmd" --create --file "$jar" -C "$out/classes" .
"$javac" -nowarn --release 17 -cp "$SPARK_HOME/jars/*:$out/classes" -d "$out/test-classes" \
  $(find "$here/src/test/java" -name '*.java')
"$jarcmd" --create --file "$tests" -C "$out/test-classes" .
