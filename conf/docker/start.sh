#!/usr/bin/env bash
# Entry point of every service in docker-compose.yml: renders the same conf/cluster files the
# local test cluster uses into the image's config folder, with the container's own host name
# and a Docker-side topology table, then runs the daemon given as arguments.
set -euo pipefail
DST=${HADOOP_CONF_DIR:-/opt/hadoop/etc/hadoop}
for f in core-site.xml yarn-site.xml capacity-scheduler.xml log4j.properties; do
  sed "s#@CLUSTER_DIR@#/opt/yarn-am#g" "/opt/yarn-am/conf/$f" >"$DST/$f"
done
mkdir -p /opt/yarn-am/data
export HADOOP_OPTS="${HADOOP_OPTS:-} -Dit.host=$(hostname) -Dit.dir=/opt/yarn-am/data"
exec "$@"
