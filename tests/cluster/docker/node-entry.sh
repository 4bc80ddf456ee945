#!/bin/bash
# Entry point of every container of the dockerized test cluster (see docker-compose.yml). Runs
# as root only to make the daemon's own folders (in the container's own file system) and hand
# them to the daemon user, then runs the daemon as that user (setpriv). The JVM's arguments are
# the ones cluster.sh would use natively, written to <runtime>/docker/<daemon>.args (one a line)
# by cluster.sh's docker backend.
#
#   yarn-am-node             run the daemon (the container's command); a daemon that exits
#                            ends the container, unless `yarn-am-node restart` asked for it
#   yarn-am-node restart     (docker exec) stop the daemon and start it again in the same
#                            container: YARN containers (setsid) and the file system stay, as
#                            with a native daemon restart (restart-nm, restart-rm)
#
# Environment (docker-compose.yml): YARN_AM_CLUSTER_DIR, NODE_NAME (rm, nm1, nn, dn1, ...),
# NODE_USER (yarn or hdfs), NODE_DIRS (further folders the daemon must own, e.g. the RM's state
# store).
set -uo pipefail
R=$YARN_AM_CLUSTER_DIR
N=$NODE_NAME
U=$NODE_USER
FLAG=/run/yarn-am-restart
PIDF=/run/yarn-am-daemon.pid

if [[ "${1:-}" == restart ]]; then
  touch "$FLAG"
  kill -TERM "$(cat "$PIDF")"
  exit 0
fi

JAVA_HOME=$(dirname "$(dirname "$(readlink -f /usr/bin/java)")")
export JAVA_HOME HADOOP_CONF_DIR="$R/conf" YARN_CONF_DIR="$R/conf"
export PATH="$JAVA_HOME/bin:/usr/local/bin:/usr/bin:/bin"
for d in "$R/$N" ${NODE_DIRS:-}; do
  mkdir -p "$d"
  chown "$U:hadoop" "$d"
done

# exec: the daemon is the process started in the background (its pid is the JVM's).
as_user() {
  exec setpriv --reuid="$U" --regid=hadoop --init-groups \
    env HOME="/home/$U" USER="$U" LOGNAME="$U" "$@"
}

# The daemon's log, truncated at each start as natively (a single file bind-mounted from the host).
: >"$R/logs/$N.log"
# The NameNode formats its (empty, container-local) name folder on its first start.
if [[ -f "$R/docker/$N-format.args" && ! -f "$R/$N/name/current/VERSION" ]]; then
  mapfile -t fargs <"$R/docker/$N-format.args"
  (as_user java "${fargs[@]}") >>"$R/logs/$N.log" 2>&1 </dev/null || { echo "formatting failed" >>"$R/logs/$N.log"; exit 1; }
fi

child=""
trap '[[ -n "$child" ]] && kill -TERM "$child" 2>/dev/null' TERM INT
while :; do
  rm -f "$FLAG"
  mapfile -t args <"$R/docker/$N.args"
  as_user java "${args[@]}" >>"$R/logs/$N.log" 2>&1 </dev/null &
  child=$!
  echo "$child" >"$PIDF"
  wait "$child"
  rc=$?
  # A trapped TERM interrupts wait; wait again until the daemon has really exited.
  while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done
  [[ -f "$FLAG" ]] || exit "$rc"
  : >"$R/logs/$N.log"
done
