#!/usr/bin/env bash
# Installs a real Apache Spark (the pyspark package from PyPI, which carries Spark's jars and
# bin/spark-submit) into one cache folder, and prints SPARK_HOME. Idempotent: a finished install
# (marked by a stamp file naming the version) is reused; a half-done one is removed and redone.
#
#   bash scripts/spark-env.sh          # installs if needed, prints the SPARK_HOME path
#   eval "$(bash scripts/spark-env.sh --export)"   # sets SPARK_HOME and SPARK_PYTHON_VENV
#   bash scripts/spark-env.sh --installed   # prints SPARK_HOME if installed, else exits 1
#                                           # (installs nothing: the docker cluster's nodes)
#
# Spark 4.x needs Java 17+ (the test cluster's JDK). The cache is shared by all worktrees:
# YARN_AM_SPARK_CACHE (default ~/.cache/yarn-am/spark), about 450 MB.
set -euo pipefail
SPARK_VERSION=4.0.1
say() { printf '[spark-env] %s\n' "$*" >&2; }

cache=${YARN_AM_SPARK_CACHE:-$HOME/.cache/yarn-am/spark}
venv="$cache/pyspark-$SPARK_VERSION"
stamp="$venv/.installed"
if [[ "${1:-}" == --installed ]]; then
  [[ -f "$stamp" ]] || exit 1
  "$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
  exit
fi
mkdir -p "$cache"
# One installer at a time (several worktrees may ask at once).
exec 9>"$cache/.lock"
flock 9
if [[ ! -f "$stamp" ]]; then
  rm -rf "$venv"
  say "installing pyspark==$SPARK_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --no-cache-dir --disable-pip-version-check "pyspark==$SPARK_VERSION" >&2
  echo "$SPARK_VERSION" >"$stamp"
fi
home=$("$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
[[ -f "$home/jars/spark-core_2.13-$SPARK_VERSION.jar" ]] || {
  say "no spark-core_2.13-$SPARK_VERSION.jar under $home/jars; remove $venv and run again"
  exit 1
}
if [[ "${1:-}" == --export ]]; then
  printf 'export SPARK_HOME=%q\nexport SPARK_PYTHON_VENV=%q\n' "$home" "$venv"
else
  echo "$home"
fi
