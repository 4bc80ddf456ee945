#!/usr/bin/env bash
# Runs every test: unit, property and CLI tests, and the integration tests against the real
# YARN cluster, which this script starts first (unless one is already up) and stops after,
# also on failure. On failure it prints the tail of every daemon log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/prereqs.sh
for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do [[ -d "$d" ]] && PATH="$d:$PATH"; done
export PATH

t0=$SECONDS
# The test cluster's DataNodes refuse every write once their disk has less free space than the
# blocks being written (stop 31 failed that way, on a machine full of old build trees): say so
# up front, since the tests' own errors will only name the writes that failed.
free_kb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR==2 {print $4}')
if ((free_kb < 8 * 1024 * 1024)); then
  echo "[test] warning: only $((free_kb / 1024)) MiB free under ${TMPDIR:-/tmp}; the build and the cluster's HDFS need about 8 GiB" >&2
fi
# Compile everything before the cluster takes memory and cores.
cargo build --workspace --all-targets --locked
# Spark for tests/it_spark.rs (pyspark from PyPI into ~/.cache/yarn-am/spark, once) and the
# yarn-am Spark plugin built against it.
SPARK_HOME=$(bash scripts/spark-env.sh)
SPARK_HOME=$SPARK_HOME bash spark/build.sh

started=0
if ! bash tests/cluster/cluster.sh status >/dev/null 2>&1; then
  bash tests/cluster/cluster.sh up
  started=1
fi
finish() {
  local rc=$?
  if ((rc != 0)); then
    echo "----- tests failed (exit $rc); YARN daemon logs follow -----" >&2
    bash tests/cluster/cluster.sh logs 60 >&2 || true
  fi
  ((started)) && bash tests/cluster/cluster.sh down || true
  echo "[test] total $((SECONDS - t0))s" >&2
  exit $rc
}
trap finish EXIT
eval "$(bash tests/cluster/cluster.sh env)"
# The secure_cluster tests (it_secure, it_split, it_spark: Kerberos), it_qop (hadoop.rpc.protection
# privacy, then integrity), it_https (every web server TLS only) and it_amrmproxy (every NM
# running the AMRMProxy) restart the shared cluster in their own profile: they run last, one
# profile after the other, so no other binary has to switch the cluster back to plain.
rc=0
cargo test --workspace --locked --no-fail-fast -- --skip qop_cluster --skip secure_cluster --skip https_cluster --skip amrmproxy_cluster || rc=$?
# The Python client (python/): installed into a venv as a user would (`pip install ./python`),
# its unit tests and its integration tests against this cluster with the binary just built.
t_py=$SECONDS
py_env="$HOME/.cache/yarn-am/pyenv"
{ python3 -m venv "$py_env" &&
  { "$py_env/bin/python" -c 'import pytest' 2>/dev/null || "$py_env/bin/pip" install -q pytest; } &&
  "$py_env/bin/pip" install -q --force-reinstall --no-deps ./python &&
  YARN_AM_BIN="$PWD/target/debug/yarn-am" YARN_AM_PYTEST_REQUIRE_CLUSTER=1 \
    "$py_env/bin/python" -m pytest -q -rs python/tests; } || rc=$?
echo "[test] python client took $((SECONDS - t_py))s" >&2
t_secure=$SECONDS
cargo test --locked --no-fail-fast --test it_secure --test it_split --test it_spark -- secure_cluster || rc=$?
echo "[test] it_secure (Kerberos cluster) took $((SECONDS - t_secure))s" >&2
t_qop=$SECONDS
cargo test --locked --test it_qop -- qop_cluster || rc=$?
echo "[test] it_qop (privacy and integrity clusters) took $((SECONDS - t_qop))s" >&2
t_https=$SECONDS
cargo test --locked --test it_https -- https_cluster || rc=$?
echo "[test] it_https (HTTPS-only cluster) took $((SECONDS - t_https))s" >&2
t_proxy=$SECONDS
cargo test --locked --test it_amrmproxy -- amrmproxy_cluster || rc=$?
echo "[test] it_amrmproxy (NMs with the AMRMProxy) took $((SECONDS - t_proxy))s" >&2
exit $rc
