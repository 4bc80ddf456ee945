#!/usr/bin/env bash
# The main job: builds yarn-am, starts the local real YARN cluster when no cluster is
# configured (no YARN_AM_RM_WEB / HADOOP_CONF_DIR given), shows the nodes as the RM sees them,
# then runs the sample job (conf/examples/job.json: 60 tasks spread over nm1..nm3) on YARN
# with yarn-am as its ApplicationMaster and prints the locality summary.
# Exit code: the application's outcome (0 succeeded, 1 failed, 3 killed), as `submit --wait`.
# YARN_AM_JOB=path runs another job file instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/prereqs.sh
for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do [[ -d "$d" ]] && PATH="$d:$PATH"; done
export PATH
cargo build --release --locked --bin yarn-am
if [[ -z "${YARN_AM_RM_WEB:-}" && -z "${HADOOP_CONF_DIR:-}" ]]; then
  bash tests/cluster/cluster.sh up
  eval "$(bash tests/cluster/cluster.sh env)"
  echo "(local test cluster; stop it with: tests/cluster/cluster.sh down)" >&2
fi
./target/release/yarn-am nodes
job=${YARN_AM_JOB:-conf/examples/job.json}
echo
echo "running the job in $job on YARN (yarn-am submit --wait --job $job)"
exec ./target/release/yarn-am submit --name yarn-am-sample --max-attempts 1 --wait --job "$job"
