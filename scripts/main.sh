#!/usr/bin/env bash
# The main job: builds yarn-am, starts the local real YARN cluster when no cluster is
# configured (no YARN_AM_RM_WEB / HADOOP_CONF_DIR given), and shows its nodes as the RM sees them.
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
