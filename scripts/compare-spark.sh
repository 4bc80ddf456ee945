#!/usr/bin/env bash
# Spark on yarn-am beside Spark's own YARN mode on the local test cluster:
# builds the shipped (stripped) yarn-am binary, fetches pyspark from PyPI (scripts/spark-env.sh,
# once into ~/.cache/yarn-am/spark), builds the yarn-am Spark plugin and runs
# scripts/spark_bench.py: the same job (60 tasks of 1 s preferring nm1..nm3, dynamic
# allocation, executors of 2 cores, locality wait 3 s) both ways, alternating, each run under
# the shared cluster lock; prints per-run rows, the medians and their ratios.
#
#   bash scripts/compare-spark.sh [--rounds N] [--task-ms MS] [--out FILE]
#                                 [--deploy-mode client|cluster] [--archive hdfs://NN/PATH.zip]
#
# Needs the running test cluster (bash tests/cluster/cluster.sh up, plain profile). On the
# docker backend (no Spark on the nodes) both masters use a zip of SPARK_HOME/jars put on HDFS
# once as spark.yarn.archive (see spark_bench.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do [[ -d "$d" ]] && PATH="$d:$PATH"; done
export PATH
cargo build --release --locked --bin yarn-am
bash tests/cluster/cluster.sh status >/dev/null || {
  echo "the test cluster is not running: bash tests/cluster/cluster.sh up" >&2
  exit 1
}
export YARN_AM_BIN="${YARN_AM_BIN:-$PWD/target/release/yarn-am}"
exec python3 scripts/spark_bench.py "$@"
