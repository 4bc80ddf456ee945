# The docker backend of cluster.sh (`cluster.sh up --docker`, or YARN_AM_CLUSTER_DOCKER=1):
# the same cluster (rm, nm1..nm3, nn, dn1..dn3 at the same addresses and ports, the same
# runtime conf), each daemon in a container of its own (docker-compose.yml at the repository
# root) with host networking, its own file system (its /tmp, local, log and home folders) and a
# non-root user (yarn for the RM and NMs, and so for every YARN container; hdfs for HDFS).
#
# Sourced by cluster.sh after its own functions: what is defined here replaces the native
# version (start_daemon, alive, stop_daemons, ...); cmd_up's steps stay the same.
#
# The engine: a dockerd of our own (--iptables=false --bridge=none; data root, exec root and
# socket under $DK) unless DOCKER_HOST names one that answers. `down` stops the one we started.
# Images, built here (no registry): yarn-am-base:<digest> (debootstrap of the machine's Debian
# suite from its apt mirror: Java 17 JRE, procps, curl; `docker import`) and
# yarn-am-node:<digest> (tests/cluster/docker/: the daemon users and the entry point). The
# digests name every input, so an image is built again only when one of them changed.

DK=${YARN_AM_DOCKER_DIR:-/var/tmp/yarn-am-docker}
DOCKER=/usr/bin/docker           # Debian's client, the engine's own version
COMPOSE=/usr/bin/docker-compose
DOCKER_NAMES=(rm nm1 nm2 nm3 nn dn1 dn2 dn3 kdc)
BASE_PACKAGES=openjdk-17-jre-headless,procps,curl

dk() { DOCKER_HOST=$DOCKER_HOST "$DOCKER" "$@"; }
compose() {
  # The images `up` built (commands other than `up`, such as `mapreduce`, start containers too).
  DOCKER_HOST=$DOCKER_HOST YARN_AM_CLUSTER_DIR="$R" \
    YARN_AM_NODE_IMAGE="${NODE_IMAGE:-$(cat "$DK/node-image" 2>/dev/null || echo yarn-am-node:none)}" \
    YARN_AM_HOSTNAME="$(hostname)" YARN_AM_MR_LIB="$(node_share "$R/mr-lib")" \
    YARN_AM_MR_CONF="$(node_share "$R/mr-conf")" YARN_AM_NODE_KRB="$(node_share "$R/node-krb")" \
    YARN_AM_KDC_IMAGE="${KDC_IMAGE:-$(cat "$DK/kdc-image" 2>/dev/null || echo yarn-am-kdc:none)}" \
    YARN_AM_KDC_REALM="$REALM" \
    "$COMPOSE" -p yarn-am -f "$REPO/docker-compose.yml" "$@"
}
# A read-only share that exists only with a profile or the MapReduce add-on: an empty folder
# stands in without it (a bind mount needs a source).
node_share() { # folder
  if [[ -n "$1" && -d "$1" ]]; then
    echo "$1"
  else
    mkdir -p "$R/docker-empty"
    echo "$R/docker-empty"
  fi
}
cname() { echo "yarn-am-$1"; }
is_docker_daemon() { [[ " ${DOCKER_NAMES[*]} " == *" $1 "* ]]; }

docker_need_tools() {
  [[ -x /usr/sbin/dockerd && -x "$DOCKER" && -x "$COMPOSE" && -x /usr/sbin/debootstrap ]] \
    || "$REPO/scripts/docker-prereqs.sh" \
    || die "the docker backend needs docker.io, docker-compose and debootstrap (scripts/docker-prereqs.sh)"
}

# ---- The engine ---------------------------------------------------------------------------
# DOCKER_HOST: the caller's when it answers, else our own socket (started by engine_start).
engine_pick() {
  if [[ -n "${DOCKER_HOST:-}" && "$DOCKER_HOST" != "unix://$DK/docker.sock" ]] \
    && DOCKER_HOST=$DOCKER_HOST "$DOCKER" version >/dev/null 2>&1; then
    return
  fi
  DOCKER_HOST="unix://$DK/docker.sock"
}

engine_up() { dk version >/dev/null 2>&1; }

engine_start() {
  engine_pick
  engine_up && return
  [[ "$DOCKER_HOST" == "unix://$DK/docker.sock" ]] || die "DOCKER_HOST=$DOCKER_HOST does not answer"
  [[ $(id -u) == 0 ]] || die "starting dockerd needs root (or set DOCKER_HOST to a running engine)"
  mkdir -p "$DK/data" "$DK/exec"
  say "starting dockerd (data root $DK/data, socket $DK/docker.sock)"
  (
    close_inherited_fds
    exec setsid /usr/sbin/dockerd --iptables=false --ip-masq=false --bridge=none \
      --data-root "$DK/data" --exec-root "$DK/exec" --pidfile "$DK/dockerd.pid" \
      -H "unix://$DK/docker.sock" >"$DK/dockerd.log" 2>&1 </dev/null
  ) &
  echo $! >"$DK/started-by-cluster-sh"
  local start=$SECONDS
  until engine_up; do
    kill -0 "$(cat "$DK/started-by-cluster-sh")" 2>/dev/null || { tail -30 "$DK/dockerd.log" >&2; die "dockerd exited (log: $DK/dockerd.log)"; }
    ((SECONDS - start < 60)) || die "dockerd not answering after 60s (log: $DK/dockerd.log)"
    sleep 0.5
  done
  say "dockerd ready after $((SECONDS - start))s"
}

# Stops the dockerd engine_start started (and only that one).
engine_stop() {
  [[ -f "$DK/started-by-cluster-sh" ]] || return 0
  local pid
  pid=$(cat "$DK/started-by-cluster-sh")
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    # Dangling images (an older digest's layers once retagged) cost disk: drop them first.
    dk image prune -f >/dev/null 2>&1 || true
    kill -TERM "$pid"
    local start=$SECONDS
    while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < 30)); do sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && { say "dockerd did not stop in 30s; killing"; kill -KILL "$pid"; }
    say "dockerd stopped"
  fi
  rm -f "$DK/started-by-cluster-sh"
}

# ---- Images -------------------------------------------------------------------------------
# The machine's Debian suite and mirror (the first deb.debian.org-style URI of its apt sources
# that serves the suite itself, not -security).
debian_suite() { . /etc/os-release && echo "${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}"; }
debian_mirror() {
  local m
  m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' | grep -v security | head -1)
  [[ -n "$m" ]] || m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' | grep -v security | head -1)
  [[ -n "$m" ]] || die "no Debian mirror found in the apt sources (/etc/apt/sources.list*)"
  echo "$m"
}

digest() { sha256sum | cut -c1-12; }

build_images() {
  local suite mirror t0
  suite=$(debian_suite)
  mirror=$(debian_mirror)
  BASE_IMAGE="yarn-am-base:$(printf '%s\n' "$suite" "$mirror" "$BASE_PACKAGES" "$(declare -f build_base)" | digest)"
  if ! dk image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    t0=$SECONDS
    build_base "$suite" "$mirror"
    say "built $BASE_IMAGE in $((SECONDS - t0))s"
  fi
  NODE_IMAGE="yarn-am-node:$(cat <(echo "$BASE_IMAGE") "$HERE/docker/Dockerfile" "$HERE/docker/node-entry.sh" | digest)"
  if ! dk image inspect "$NODE_IMAGE" >/dev/null 2>&1; then
    t0=$SECONDS
    DOCKER_BUILDKIT=0 dk build -q --build-arg BASE="$BASE_IMAGE" -t "$NODE_IMAGE" "$HERE/docker" >/dev/null \
      || die "building $NODE_IMAGE failed"
    say "built $NODE_IMAGE in $((SECONDS - t0))s"
    # Older node images (an earlier entry point) are no longer used.
    dk images --format '{{.Repository}}:{{.Tag}}' | grep -E '^yarn-am-(node|base):' \
      | grep -vxF -e "$NODE_IMAGE" -e "$BASE_IMAGE" | xargs -r "$DOCKER" -H "$DOCKER_HOST" rmi >/dev/null 2>&1 || true
  fi
  echo "$NODE_IMAGE" >"$DK/node-image"
  echo "$BASE_IMAGE" >"$DK/base-image"
}

build_base() { # suite mirror
  local root="$DK/rootfs"
  say "building the base image: debootstrap $1 from $2 (Java 17 JRE, procps, curl; about 2 minutes)"
  rm -rf "$root"
  mkdir -p "$root"
  debootstrap --variant=minbase --include="$BASE_PACKAGES" "$1" "$root" "$2" >"$DK/debootstrap.log" 2>&1 \
    || { tail -20 "$DK/debootstrap.log" >&2; rm -rf "$root"; die "debootstrap failed (log: $DK/debootstrap.log)"; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | dk import - "$BASE_IMAGE" >/dev/null || { rm -rf "$root"; die "docker import failed"; }
  rm -rf "$root"
}

# ---- The backend's versions of cluster.sh's daemon functions ------------------------------
daemon_user() { case "$1" in nn | dn*) echo hdfs ;; *) echo yarn ;; esac; }
# Their ids in the image (tests/cluster/docker/Dockerfile; group hadoop is 2000), for files the
# host hands them.
daemon_uid() { case "$1" in nn | dn*) echo 2001 ;; *) echo 2000 ;; esac; }

# The JVM arguments cluster.sh uses natively (start_daemon), one a line, for the container.
write_args() { # file name host heap main-class [args...]
  local file=$1 name=$2 host=$3 heap=$4 cls=$5
  shift 5
  printf '%s\n' "${JPMS_OPTS[@]}" "${KRB_OPTS[@]}" "${DN_DEFAULTS[@]}" "${DAEMON_OPTS[@]}" -Xmx"$heap" -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -Xss512k -Djava.net.preferIPv4Stack=true \
    -Dit.host="$host" -Dit.dir="$R/$name" -Dhadoop.home.dir="$R" -Dhadoop.id.str="$(daemon_user "$name")" \
    -Dhadoop.log.dir="$R/$name/log" -Dyarn.log.dir="$R/$name/log" \
    -cp "$R/conf:$R/hdfs-web:$R/lib/*" "$cls" "$@" >"$file"
}

# running, paused, exited, ... or absent. Asked twice: a busy engine sometimes fails one call.
container_state() {
  dk inspect -f '{{.State.Status}}' "$(cname "$1")" 2>/dev/null \
    || { sleep 0.5; dk inspect -f '{{.State.Status}}' "$(cname "$1")" 2>/dev/null; } || echo absent
}

alive() { is_docker_daemon "$1" && [[ "$(container_state "$1")" =~ ^(running|paused)$ ]]; }

start_daemon() { # name host heap main-class [args...]
  local name=$1
  alive "$name" && { say "$name already running (container $(cname "$name"))"; return; }
  mkdir -p "$R/docker" "$R/logs"
  write_args "$R/docker/$name.args" "$@"
  # The daemon's log file, bind-mounted alone into its container.
  : >"$R/logs/$name.log"
  chown "$(daemon_uid "$name"):2000" "$R/logs/$name.log"
  # A stopped container (a killed node) is replaced: a new host, with an empty file system.
  compose rm -f -s "$name" >/dev/null 2>&1 || true
  compose up -d --no-deps "$name" >"$R/docker/compose-$name.log" 2>&1 \
    || { cat "$R/docker/compose-$name.log" >&2; die "docker-compose up $name failed"; }
  say "started $name (container $(cname "$name"), user $(daemon_user "$name"))"
}

stop_daemons() {
  local d names=()
  for d in "$@"; do is_docker_daemon "$d" && [[ "$(container_state "$d")" != absent ]] && names+=("$d"); done
  ((${#names[@]})) || return 0
  for d in "${names[@]}"; do [[ "$(container_state "$d")" == paused ]] && dk unpause "$(cname "$d")" >/dev/null; done
  compose stop -t 30 "${names[@]}" >/dev/null 2>&1 || true
}

# The NameNode formats its own (container-local) name folder on first start: write the
# format arguments for the entry point.
format_hdfs() {
  mkdir -p "$R/docker"
  write_args "$R/docker/nn-format.args" nn rm 256m org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive
}

started_nms() {
  local n
  for n in nm1 nm2 nm3; do [[ "$(container_state "$n")" != absent ]] && echo "$n"; done
  return 0
}

# YARN containers live inside their NodeManager's container and die with it.
kill_containers() { :; }

# The native conf and jars are shared read-only with the containers: readable by their users.
eval "native_$(declare -f write_conf)"
write_conf() {
  native_write_conf
  chmod -R a+rX "$R/conf" "$R/lib" "$R/hdfs-web"
  local d
  for d in "$R/mr-lib" "$R/mr-conf"; do [[ ! -d "$d" ]] || chmod -R a+rX "$d"; done
  node_krb
}
eval "native_$(declare -f mapreduce_conf)"
mapreduce_conf() {
  native_mapreduce_conf
  [[ ! -d "$R/mr-conf" ]] || chmod -R a+rX "$R/mr-conf"
}

# The secure profile's share of the KDC folder (mounted at <runtime>/kdc in every node): its
# krb5.conf, the service keytab and the web apps' signing secret, readable by the group hadoop
# (the daemons' users), not by others. The KDC's database and the users' keytabs are not in it.
node_krb() {
  rm -rf "$R/node-krb"
  ((SECURE)) || return 0
  mkdir -p "$R/node-krb/keytabs"
  cp "$K/krb5.conf" "$K/http-secret" "$R/node-krb/"
  cp "$K/keytabs/service.keytab" "$R/node-krb/keytabs/"
  chgrp -R 2000 "$R/node-krb"
  chmod 750 "$R/node-krb" "$R/node-krb/keytabs"
  chmod 640 "$R/node-krb/krb5.conf" "$R/node-krb/http-secret" "$R/node-krb/keytabs/service.keytab"
}

docker_check_profile() {
  default_layout || die "--nodes/--racks are not available on the docker backend (docker-compose.yml has nm1..nm3): use --native"
}

# Node loss, with everything on the node: the NM's container is killed (SIGKILL), its YARN
# containers with it. `up` brings a fresh node (empty file system) back.
cmd_kill_node() {
  local n=${1:-}
  [[ " ${NMS[*]} " == *" $n "* ]] || die "kill-node wants one of: ${NMS[*]}"
  alive "$n" || die "$n is not running"
  dk kill "$(cname "$n")" >/dev/null || die "docker kill $(cname "$n") failed"
  say "$n killed (the whole node: container $(cname "$n"))"
}

# A file or folder of a node's own disk (under the runtime folder), copied onto the host at the
# same path, as an operator copies it off the node: tests read container logs this way under
# Kerberos (the NM's web service cannot serve logs without Hadoop's native library, which the
# Maven jars lack) and the NM's private copy of a container's credentials. Absent: nothing.
cmd_from_node() { # node path
  local n=${1:-} path=${2:-}
  is_docker_daemon "$n" || die "from-node wants a daemon: ${DOCKER_NAMES[*]}"
  [[ "$path" == "$R"/* && "$path" != *..* ]] || die "from-node copies paths under $R only"
  [[ "$(container_state "$n")" =~ ^(running|paused|exited)$ ]] || return 0
  mkdir -p "$(dirname "$path")"
  dk cp "$(cname "$n"):$path" "$(dirname "$path")/" >/dev/null 2>&1 || true
}

# A hung node: every process of the NM's container frozen (cgroup freezer) until unpause.
cmd_pause_node() {
  local n=${1:-}
  [[ " ${NMS[*]} " == *" $n "* ]] || die "pause-node wants one of: ${NMS[*]}"
  [[ "$(container_state "$n")" == running ]] || die "$n is not running ($(container_state "$n"))"
  dk pause "$(cname "$n")" >/dev/null || die "docker pause $(cname "$n") failed"
  say "$n paused (hung: its NM and containers are frozen; cluster.sh unpause-node $n)"
}

cmd_unpause_node() {
  local n=${1:-}
  [[ " ${NMS[*]} " == *" $n "* ]] || die "unpause-node wants one of: ${NMS[*]}"
  [[ "$(container_state "$n")" == paused ]] || die "$n is not paused ($(container_state "$n"))"
  dk unpause "$(cname "$n")" >/dev/null || die "docker unpause $(cname "$n") failed"
  say "$n unpaused"
}

# kill-nm on this backend: the NM process is the container's daemon, so killing it (-9) ends the
# container and its YARN containers, as kill-nm does natively. The same as kill-node.
cmd_kill_nm() { cmd_kill_node "$@"; }

# A daemon restart inside its container (yarn-am-node restart): the container's file system and
# processes stay (NM recovery takes its YARN containers back; the RM keeps its state store).
docker_restart() { # name
  dk exec "$(cname "$1")" /usr/local/bin/yarn-am-node restart || die "restarting $1 in $(cname "$1") failed"
  # The entry point starts a new JVM once the old one exited.
  sleep 1
}

# restart-rm and restart-nm (cluster.sh) with the daemon restarted inside its container.
restart_rm_daemon() { docker_restart rm; }
restart_nm_daemon() { # nm
  NM_OLD_PID=$(dk exec "$(cname "$1")" cat /run/yarn-am-daemon.pid)
  docker_restart "$1"
}
restart_nn_daemon() { docker_restart nn; }
# The new JVM (a new pid) answering on its web port, as natively.
nm_restarted() { # nm
  [[ "$(dk exec "$(cname "$1")" cat /run/yarn-am-daemon.pid 2>/dev/null)" != "$NM_OLD_PID" ]] \
    && curl -sf --max-time 3 "${CURL_TLS[@]}" "$(nm_url "$1")/ws/v1/node/info" >/dev/null 2>&1
}

cmd_down() {
  [[ -d "$R" ]] || return 0
  engine_pick
  if engine_up; then
    # NMs first, as natively; then everything goes, containers and their file systems.
    stop_daemons nm1 nm2 nm3
    compose down -t 30 >/dev/null 2>&1 || say "docker-compose down failed"
  fi
  # `up` switching profiles stops the containers only: it goes on with this engine.
  if [[ -z "${UP_IN_PROGRESS:-}" ]]; then
    engine_stop
    rm -f "$R/backend"
  fi
  say "cluster down (docker)"
}

# One daemon's line in `status` (cluster.sh's cmd_status).
daemon_state() { # daemon
  echo "$(container_state "$1") (container $(cname "$1"), docker)"
}

# The KDC of the secure profile: its own container (yarn-am-kdc, user kdc, uid 2002) from
# yarn-am-kdc:<digest> (tests/cluster/docker/Dockerfile.kdc: the base plus Debian's krb5-kdc,
# installed by apt at build time), serving the realm cluster.sh created on the host (kadmin.local
# writes the database; the container reads and locks it, mounted at the same path).
build_kdc_image() {
  KDC_IMAGE="yarn-am-kdc:$(cat <(cat "$DK/base-image") "$HERE/docker/Dockerfile.kdc" | digest)"
  echo "$KDC_IMAGE" >"$DK/kdc-image"
  dk image inspect "$KDC_IMAGE" >/dev/null 2>&1 && return
  local t0=$SECONDS
  DOCKER_BUILDKIT=0 dk build -q --network host --build-arg BASE="$(cat "$DK/base-image")" \
    -f "$HERE/docker/Dockerfile.kdc" -t "$KDC_IMAGE" "$HERE/docker" >"$DK/kdc-build.log" 2>&1 \
    || { tail -20 "$DK/kdc-build.log" >&2; die "building $KDC_IMAGE failed (log: $DK/kdc-build.log)"; }
  say "built $KDC_IMAGE in $((SECONDS - t0))s"
}

kdc_start() {
  alive kdc && return
  build_kdc_image
  chown -R 2002:2002 "$K/db"
  touch "$K/kdc.log"
  chown 2002:2002 "$K/kdc.log"
  compose rm -f -s kdc >/dev/null 2>&1 || true
  compose up -d --no-deps kdc >"$R/docker/compose-kdc.log" 2>&1 \
    || { cat "$R/docker/compose-kdc.log" >&2; die "docker-compose up kdc failed"; }
  kdc_wait
  say "started kdc (container $(cname kdc), user kdc, 127.0.0.1:$KDC_PORT, realm $REALM)"
}

# Whether this engine can run a container as the cluster does (host network, a user switch):
# a machine may start dockerd and still refuse containers (no cgroups, no overlay mounts).
container_runs() {
  dk run --rm --network host --entrypoint /usr/bin/setpriv "$(cat "$DK/node-image")" \
    --reuid=2000 --regid=2000 --clear-groups /bin/true >"$DK/smoke.log" 2>&1 \
    || { say "a test container does not run: $(tail -3 "$DK/smoke.log")"; return 1; }
}

# Runs before cmd_up's own steps (which then use the functions above).
docker_prepare_up() {
  UP_IN_PROGRESS=1
  docker_check_profile
  docker_need_tools
  mkdir -p "$DK"
  if ((BACKEND_DEFAULTED)) && ! (engine_start && build_images && container_runs); then
    say "Docker cannot run here (dockerd log: $DK/dockerd.log): starting the native cluster instead"
    engine_stop
    rm -f "$R/backend"
    exec 9>&-   # the lock: the native `up` takes it again
    exec env YARN_AM_CLUSTER_DOCKER=0 bash "$HERE/cluster.sh" up "$@"
  fi
  engine_start
  build_images
  echo docker >"$R/backend"
}
