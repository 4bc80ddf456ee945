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
# blocks being written (a run once failed that way, on a machine full of old build trees): say so
# up front, since the tests' own errors will only name the writes that failed.
free_kb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR==2 {print $4}')
if ((free_kb < 8 * 1024 * 1024)); then
  echo "[test] warning: only $((free_kb / 1024)) MiB free under ${TMPDIR:-/tmp}; the build and the cluster's HDFS need about 8 GiB" >&2
fi
# Compile everything before the cluster takes memory and cores.
cargo build --workspace --all-targets --locked
# Spark for tests/cluster/it_spark.rs (pyspark from PyPI into ~/.cache/yarn-am/spark, once) and the
# yarn-am Spark plugin built against it.
SPARK_HOME=$(bash scripts/spark-env.sh)
SPARK_HOME=$SPARK_HOME bash spark/build.sh

# Each phase's time, for the summary at the end (and so a slow phase shows in CI's log).
# Every cargo command names the whole workspace, as the build above does: with one package,
# cargo unifies other features and builds the crates again.
phase() { # name command...
  local name=$1 t=$SECONDS r=0
  shift
  "$@" || r=$?
  echo "[test] $name took $((SECONDS - t))s (exit $r)" >&2
  return $r
}

# The cluster starts in the background (its daemons mostly wait on each other) while the
# tests that need none run: unit tests of every crate, the `offline` binary, yarn-client's
# token files and the doc tests. A failure there does not stop the cluster tests.
started=0
cluster_up=
if ! bash tests/cluster/cluster.sh status >/dev/null 2>&1; then
  started=1
  phase "cluster up" bash tests/cluster/cluster.sh up &
  cluster_up=$!
fi
finish() {
  local rc=$?
  [[ -z "$cluster_up" ]] || wait "$cluster_up" || true
  if ((rc != 0)); then
    echo "----- tests failed (exit $rc); YARN daemon logs follow -----" >&2
    bash tests/cluster/cluster.sh logs 60 >&2 || true
  fi
  ((started)) && bash tests/cluster/cluster.sh down || true
  echo "[test] total $((SECONDS - t0))s" >&2
  exit $rc
}
trap finish EXIT
rc=0
offline() {
  cargo test --workspace --locked --no-fail-fast --lib --bins --test offline --test token_files &&
    cargo test --workspace --locked --no-fail-fast --doc
}
phase "offline tests" offline || rc=$?
if [[ -n "$cluster_up" ]]; then
  up=$cluster_up
  cluster_up=
  wait "$up" || { echo "[test] tests/cluster/cluster.sh up failed" >&2; exit 1; }
fi
eval "$(bash tests/cluster/cluster.sh env)"

# The cluster tests of yarn-am (tests/cluster/main.rs) run concurrently: the harness gets a
# thread for every test, and the cluster gate (tests/cluster/support/gate.rs) runs the ones
# that leave the cluster as they found it YARN_AM_SHARED_TESTS (default 4) at a time, then
# each one that disturbs it alone.
# The secure_cluster tests (it_secure, it_split, it_spark: Kerberos), it_qop (hadoop.rpc.protection
# privacy, then integrity), it_https (every web server TLS only) and it_amrmproxy (every NM
# running the AMRMProxy) restart the shared cluster in their own profile: they run last, one
# pass per profile, so no plain test runs on a cluster of another profile.
all_threads=256
phase "plain cluster tests" cargo test --workspace --locked --no-fail-fast --test cluster -- \
  --test-threads "$all_threads" \
  --skip qop_cluster --skip secure_cluster --skip https_cluster --skip amrmproxy_cluster || rc=$?
# yarn-client's own (yarn-client/tests/client_cluster/main.rs): none disturbs the cluster.
phase "yarn-client cluster tests" cargo test --workspace --locked --no-fail-fast --test client_cluster -- \
  --test-threads 4 || rc=$?
# The Python client (python/): installed into a venv as a user would (`pip install ./python`),
# its unit tests and its integration tests against this cluster with the binary just built.
python_client() {
  local py_env="$HOME/.cache/yarn-am/pyenv"
  python3 -m venv "$py_env" &&
    { "$py_env/bin/python" -c 'import pytest' 2>/dev/null || "$py_env/bin/pip" install -q pytest; } &&
    "$py_env/bin/pip" install -q --force-reinstall --no-deps ./python &&
    YARN_AM_BIN="$PWD/target/debug/yarn-am" YARN_AM_PYTEST_REQUIRE_CLUSTER=1 \
      "$py_env/bin/python" -m pytest -q -rs python/tests
}
phase "python client" python_client || rc=$?
# One pass per profile: its first test restarts the cluster in the profile, the others find
# it up.
profile_pass() { # filter
  cargo test --workspace --locked --no-fail-fast --test cluster -- --test-threads "$all_threads" "$1"
}
phase "secure_cluster (Kerberos)" profile_pass secure_cluster || rc=$?
phase "qop_cluster (privacy, then integrity)" profile_pass qop_cluster || rc=$?
phase "https_cluster (HTTPS only)" profile_pass https_cluster || rc=$?
phase "amrmproxy_cluster (NMs with the AMRMProxy)" profile_pass amrmproxy_cluster || rc=$?
exit $rc
