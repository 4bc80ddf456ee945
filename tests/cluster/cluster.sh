#!/usr/bin/env bash
# A real Hadoop cluster on this machine: one ResourceManager and three NodeManagers as
# separate JVMs, from Maven Central jars, each NM with its own host name (nm1..nm3 on
# 127.0.0.11-13) and rack (/rack1 = nm1, nm2; /rack2 = nm3); plus HDFS for staging and
# data locality: the NameNode on rm (127.0.0.10; WebHDFS at http://rm:9870) and a DataNode on
# each of nm1..nm3 (daemons dn1..dn3, their own ports, see dn_ports), replication 2.
#
#   cluster.sh up [--rpc-protection authentication|integrity|privacy] [--secure] [--https]
#                 [--amrmproxy] [--nodes N --racks R]
#                       fetch jars if needed, format HDFS on first use, start, wait until
#                       N nodes are RUNNING and HDFS has 3 live DataNodes (idempotent). The
#                       options choose a profile; a cluster running another profile is
#                       stopped and started again in this one. --secure: Kerberos (an MIT
#                       KDC on 127.0.0.1:60088, realm YARN.TEST, state in <runtime>/kdc),
#                       SPNEGO on the RM web app and WebHDFS, HDFS block tokens.
#                       --https: every web server TLS only (yarn.http.policy and
#                       dfs.http.policy HTTPS_ONLY): RM https://rm:8090 (its web proxy too),
#                       NMs https://nmN:8044, WebHDFS https://rm:9871, DataNodes 98N5; a CA
#                       and the nodes' keystore made with keytool at each start (<runtime>/tls,
#                       <runtime>/conf/ssl); the plain ports 8088, 8042, 9870 stay closed.
#                       --amrmproxy: every NM runs the AMRMProxy (yarn.nodemanager.amrmproxy.
#                       enabled) on nmN:8049: AM containers get the proxy's AMRM token and
#                       must talk to it (tests/cluster/it_amrmproxy.rs).
#                       --nodes N --racks R (benchmarks): N NodeManagers nm1..nmN on
#                       127.0.0.11.. in R racks of ceil(N/R) consecutive nodes, heaps trimmed;
#                       DataNodes stay on nm1..nm3 (default: 3 nodes on 2 racks, as above).
#   cluster.sh profile  print the running (or last started) profile, e.g. `plain`,
#                       `rpc-privacy`, `secure`, `secure rpc-privacy`, `https`, `nodes12-racks4`
#   cluster.sh down     stop every daemon we started (and containers they left behind)
#   cluster.sh status   exit 0 when the cluster is up and ready, 1 otherwise
#   cluster.sh logs [N] tail the last N lines (default 40) of every daemon log
#   cluster.sh env      print the exports a client needs (HADOOP_CONF_DIR, YARN_AM_RM_WEB,
#                       YARN_AM_WEBHDFS; under --secure also KRB5_CONFIG, KRB5CCNAME (a
#                       ticket cache holding alice's ticket) and YARN_AM_TEST_PRINCIPAL /
#                       YARN_AM_TEST_KEYTAB (alice's keytab, for tests)); under --https the
#                       https:// addresses and YARN_AM_CA_FILE (the cluster CA's PEM)
#   cluster.sh kill-nm NM   node failure: kill -9 that NodeManager and its containers
#   cluster.sh restart-rm   stop the ResourceManager and start it again keeping its state
#                       store (work-preserving recovery: apps and containers survive)
#   cluster.sh restart-nm NM   stop that NodeManager and start it again; with NM recovery
#                       its containers keep running and are taken back
#   cluster.sh restart-nn   an HDFS outage: stop the NameNode and start it again on its name
#                       folder (WebHDFS fails meanwhile); back when ready
#   cluster.sh mapreduce   MapReduce on the running cluster (scripts/mr_bench.py): fetch the
#                       MapReduce jars once (<runtime>/mr-lib), write mapred-site.xml and
#                       restart the NMs with the shuffle service the MR AM needs. Later `up`s
#                       keep it while mr-lib exists; a cluster that never ran it has none.
#   cluster.sh rmadmin ARGS   Hadoop's RMAdminCLI on the RM (graceful decommission: write
#                       the host into <runtime>/conf/nodes.exclude, then
#                       `rmadmin -refreshNodes -g SECONDS -server`)
#   cluster.sh backend  print the running (or last started) backend: native or docker
#   cluster.sh from-node NODE PATH   copy PATH (under <runtime>) off that node's own disk to
#                       the same path on this machine (a no-op natively: one disk)
#
# Backends: native (every daemon a JVM on this machine, sharing its disk and user)
# or docker (`up --docker`, or YARN_AM_CLUSTER_DOCKER=1: the same daemons, addresses and conf,
# each in its own container with its own file system, as the non-root user yarn or hdfs; see
# docker.sh and docker-compose.yml). `up` without a choice keeps the backend of a running
# cluster, else takes docker where Docker can run (root with docker.io, which prereqs.sh
# installs, or DOCKER_HOST) and native otherwise, or when dockerd fails to start, or for
# --nodes/--racks; `up --native` / `--docker` switches (down, then up). Other commands act
# on the running backend. Docker backend only:
#   cluster.sh kill-node NM    `docker kill` the NM's container: the whole node, its containers with it
#   cluster.sh pause-node NM   `docker pause` it (a hung node); unpause-node NM resumes it
#   cluster.sh images   build the docker backend's images if their inputs changed (`up --docker` does)
#
# Environment: YARN_AM_CLUSTER_DIR (runtime dir, default /tmp/yarn-am-cluster),
# HADOOP_VERSION (default 3.4.1), JAVA_HOME (default: the Java 17 JDK; Hadoop 3.4 breaks on 23+),
# YARN_AM_READY_TIMEOUT (seconds, default 240), YARN_AM_CLUSTER_HDFS (0: no NameNode/DataNode),
# YARN_AM_NM_HEAP (NM heap under --nodes other than the default layout, default 256m),
# YARN_AM_CLUSTER_DOCKER (1: docker backend, 0: native), YARN_AM_DOCKER_DIR (the docker
# backend's engine and image cache, default /var/tmp/yarn-am-docker), DOCKER_HOST (an engine to
# use instead of starting one).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
R=${YARN_AM_CLUSTER_DIR:-/tmp/yarn-am-cluster}
HADOOP_VERSION=${HADOOP_VERSION:-3.4.1}
READY_TIMEOUT=${YARN_AM_READY_TIMEOUT:-240}
# The web addresses, set again by web_addresses once the profile is known (--https).
RM_WEB=rm:8088
NN_WEB=rm:9870
NMS=(nm1 nm2 nm3)
# YARN_AM_CLUSTER_HDFS=0 leaves HDFS out (saves ~400 MB of RSS when nothing stages to it).
WITH_HDFS=${YARN_AM_CLUSTER_HDFS:-1}
DNS=(dn1 dn2 dn3)
if [[ "$WITH_HDFS" == 0 ]]; then HDFS=(); else HDFS=(nn "${DNS[@]}"); fi
declare -A RACK=([nm1]=/rack1 [nm2]=/rack1 [nm3]=/rack2)

say() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

pick_java() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    local v
    v=$("$JAVA_HOME/bin/java" -version 2>&1 | head -1)
    [[ "$v" == *'"17.'* ]] && return
    say "JAVA_HOME=$JAVA_HOME is not Java 17 ($v); looking for a Java 17 JDK"
  fi
  for d in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-arm64 /usr/lib/jvm/java-17-openjdk* /usr/lib/jvm/temurin-17*; do
    [[ -x "$d/bin/java" ]] && { JAVA_HOME=$d; return; }
  done
  die "no Java 17 JDK found under /usr/lib/jvm (Hadoop 3.4 needs Java 17; install openjdk-17-jdk-headless)"
}

# Name resolution: each NM's NodeId host is the reverse lookup of its address, so the name
# must be the first one on its /etc/hosts line. Added once, between marker comments.
ensure_hosts() {
  local ok=1
  for n in rm "${NMS[@]}"; do
    local want
    want=$(layout_hosts | awk -v n="$n" '$2==n {print $1}')
    [[ "$(getent hosts "$n" | awk '{print $1}' | head -1)" == "$want" ]] || ok=0
  done
  ((ok)) && return
  [[ -w /etc/hosts ]] || die "/etc/hosts lacks the rm/${NMS[0]}..${NMS[-1]} entries and is not writable; add these lines as root:
$(layout_hosts)"
  say "adding rm, ${NMS[0]}..${NMS[-1]} to /etc/hosts"
  local tmp
  tmp=$(mktemp)
  sed '/# yarn-am test cluster begin/,/# yarn-am test cluster end/d' /etc/hosts >"$tmp"
  { echo "# yarn-am test cluster begin"; layout_hosts; echo "# yarn-am test cluster end"; } >>"$tmp"
  cat "$tmp" >/etc/hosts   # in place: /etc/hosts may be a bind mount that cannot be replaced
  rm -f "$tmp"
}

# The stamps name the Hadoop version and the pom's content: a new version starts lib/ afresh;
# a changed pom (e.g. hadoop-hdfs added) only adds jars, so daemons already running from
# lib/ keep every file they loaded their classes from.
fetch_jars() {
  local vstamp="$R/lib/.hadoop-$HADOOP_VERSION" pstamp
  pstamp="$R/lib/.pom-$(sha1sum "$HERE/pom.xml" | cut -c1-12)"
  [[ -f "$vstamp" && -f "$pstamp" ]] && return
  command -v mvn >/dev/null || die "maven (mvn) is not installed"
  say "fetching Hadoop $HADOOP_VERSION jars from Maven Central (first run, or the pom changed)"
  if ! timeout 120 mvn -B -q dependency:get -Dtransitive=false \
      -Dartifact="org.apache.hadoop:hadoop-yarn-api:$HADOOP_VERSION:pom" >"$R/mvn-probe.log" 2>&1; then
    tail -20 "$R/mvn-probe.log" >&2
    die "cannot reach Maven Central (or Hadoop $HADOOP_VERSION is not there): see $R/mvn-probe.log"
  fi
  [[ -f "$vstamp" ]] || rm -rf "$R/lib"
  timeout 900 mvn -B -q -f "$HERE/pom.xml" -Dhadoop.version="$HADOOP_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$R/lib" \
    >"$R/mvn.log" 2>&1 || { tail -30 "$R/mvn.log" >&2; die "downloading Hadoop jars failed: see $R/mvn.log"; }
  rm -f "$R"/lib/.pom-*
  touch "$vstamp" "$pstamp"
  say "jars: $(ls "$R/lib" | wc -l) files, $(du -sh "$R/lib" | cut -f1)"
}

# ---- Node layout (`up --nodes N --racks R`): more NodeManagers, for benchmarks. -----------
# nmI listens on 127.0.0.(10+I); racks hold ceil(N/R) consecutive nodes each (3 on 2 racks is
# the default: nm1 nm2 /rack1, nm3 /rack2). `up` records the layout in $R/layout so that the
# other commands (status, kill-nm, restart-nm) know every NM; `down` stops every NM with a
# pid file, whatever layout started it.
NODES=3
RACKS=2
MAX_NODES=40 # 127.0.0.11..50

parse_layout() { # --nodes|--racks value
  [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 wants a positive number (got '$2')"
  if [[ "$1" == --nodes ]]; then NODES=$2; else RACKS=$2; fi
}

# Validates the parsed layout and names its NMs and racks (NMS, RACK).
check_layout() {
  ((NODES <= MAX_NODES)) || die "--nodes: at most $MAX_NODES NodeManagers (127.0.0.11..$((10 + MAX_NODES))), got $NODES"
  ((RACKS <= NODES)) || die "--racks $RACKS: more racks than the $NODES nodes"
  ((NODES >= 3)) || die "--nodes $NODES: at least 3 (the DataNodes live on nm1..nm3)"
  ((SECURE == 0 || NODES == 3)) || die "--secure runs the default 3-node layout only (principals exist for nm1..nm3)"
  local per=$(((NODES + RACKS - 1) / RACKS)) i
  NMS=()
  RACK=()
  for ((i = 1; i <= NODES; i++)); do
    NMS+=("nm$i")
    RACK[nm$i]=/rack$(((i - 1) / per + 1))
  done
}

# The layout `up` last started (for commands other than up).
load_layout() {
  local n r
  [[ -f "$R/layout" ]] || return 0
  read -r n r <"$R/layout" || return 0
  [[ "$n" =~ ^[0-9]+$ && "$r" =~ ^[0-9]+$ ]] || return 0
  NODES=$n RACKS=$r
  check_layout
}

default_layout() { ((NODES == 3 && RACKS == 2)); }

# The profile word of a non-default layout, empty for the default.
layout_word() { default_layout || echo "nodes$NODES-racks$RACKS"; }

# NodeManagers started by any layout: those with a pid file.
started_nms() {
  local f
  for f in "$R"/nm[0-9]*.pid; do [[ -f "$f" ]] && basename "$f" .pid; done
  return 0
}

# /etc/hosts lines: rm and nm1..nm3 from conf/cluster/hosts, then any further NMs.
layout_hosts() {
  cat "$REPO/conf/cluster/hosts"
  local i
  for ((i = 4; i <= NODES; i++)); do echo "127.0.0.$((10 + i)) nm$i"; done
}

# A non-default layout gets its own rack table (TableMapping looks nodes up by address).
layout_topology() {
  default_layout && return
  local n
  {
    echo "# generated by cluster.sh for --nodes $NODES --racks $RACKS"
    for n in "${NMS[@]}"; do echo "127.0.0.$((10 + ${n#nm})) ${RACK[$n]}"; done
    for n in "${NMS[@]}"; do echo "$n ${RACK[$n]}"; done
  } >"$R/conf/topology.table"
}

# "nm1=/rack1 nm2=/rack1 ..." for nodes_state.
layout_want() {
  local n w=()
  for n in "${NMS[@]}"; do w+=("$n=${RACK[$n]}"); done
  echo "${w[*]}"
}

layout_summary() {
  local n out="" last=""
  for n in "${NMS[@]}"; do
    [[ -n "$last" && "${RACK[$n]}" != "$last" ]] && out+=" ($last)"
    out+=" $n"
    last=${RACK[$n]}
  done
  echo "${out# } ($last)"
}

# NM heap: 384 MB on the default layout; trimmed (YARN_AM_NM_HEAP, default 256m) on bigger
# ones so that a dozen NMs fit beside the other JVMs.
nm_heap() { if default_layout; then echo 384m; else echo "${YARN_AM_NM_HEAP:-256m}"; fi; }

# Profile options of `up`, parsed by parse_profile.
RPC_PROTECTION=authentication
SECURE=0
HTTPS=0
AMRMPROXY=0

parse_profile() {
  while (($#)); do
    case "$1" in
      --rpc-protection)
        RPC_PROTECTION=${2:-}
        [[ "$RPC_PROTECTION" =~ ^(authentication|integrity|privacy)$ ]] \
          || die "--rpc-protection wants authentication, integrity or privacy (got '${2:-}')"
        shift 2 ;;
      --secure) SECURE=1; shift ;;
      --https) HTTPS=1; shift ;;
      --amrmproxy) AMRMPROXY=1; shift ;;
      --nodes | --racks) parse_layout "$1" "${2:-}"; shift 2 ;;
      *) die "unknown option for up: $1" ;;
    esac
  done
  check_layout
  web_addresses
}

# One word per non-default setting, so `plain` means exactly the stock test cluster.
profile_name() {
  local p=()
  ((SECURE)) && p+=(secure)
  [[ "$RPC_PROTECTION" != authentication ]] && p+=("rpc-$RPC_PROTECTION")
  ((HTTPS)) && p+=(https)
  ((AMRMPROXY)) && p+=(amrmproxy)
  [[ -n "$(layout_word)" ]] && p+=("$(layout_word)")
  ((${#p[@]})) || p=(plain)
  echo "${p[*]}"
}

running_profile() { cat "$R/profile" 2>/dev/null || echo plain; }

# A property added to a site file of the runtime conf (before its closing tag).
add_property() { # file name value
  local f="$R/conf/$1"
  sed -i "s#</configuration>#  <property><name>$2</name><value>$3</value></property>\n</configuration>#" "$f"
}

write_conf() {
  mkdir -p "$R/conf"
  # An earlier --https start's TLS files must not linger in another profile's conf.
  rm -rf "$R/conf/ssl" "$R/conf/ssl-server.xml" "$R/conf/ssl-client.xml"
  for f in core-site.xml yarn-site.xml hdfs-site.xml capacity-scheduler.xml log4j.properties topology.table; do
    sed "s#@CLUSTER_DIR@#$R#g" "$REPO/conf/cluster/$f" >"$R/conf/$f"
  done
  # SASL quality of protection on every Hadoop RPC port, token (DIGEST-MD5) connections
  # included: the AMRM and NM connections of an AM are wrapped too.
  [[ "$RPC_PROTECTION" == authentication ]] || add_property core-site.xml hadoop.rpc.protection "$RPC_PROTECTION"
  ((SECURE)) && secure_conf
  # Log aggregation writes to HDFS: without a NameNode each app's NMs would retry it in vain.
  [[ "$WITH_HDFS" != 0 ]] || add_property yarn-site.xml yarn.log-aggregation-enable false
  ((HTTPS)) && https_conf
  # The NMs share this yarn-site, natively on one machine: each binds its proxy to its own
  # host (the daemon's -Dit.host). An AM container reads the value unexpanded and takes its
  # NM_HOST for the host (crates/core/src/am/scheduler_address.rs).
  if ((AMRMPROXY)); then
    add_property yarn-site.xml yarn.nodemanager.amrmproxy.enabled true
    add_property yarn-site.xml yarn.nodemanager.amrmproxy.address '${it.host}:8049'
  fi
  layout_topology
  # Hosts to decommission (yarn.resourcemanager.nodes.exclude-path): empty, the RM needs the
  # file; it_decommission writes a host and runs `cluster.sh rmadmin -refreshNodes -g ...`.
  : >"$R/conf/nodes.exclude"
  # The NameNode and DataNode web servers look for webapps/<name> on the classpath. The Maven
  # Central hadoop-hdfs jar leaves the web UI out (the tarball ships it beside the jars);
  # WebHDFS needs none of it, only the folders to exist.
  mkdir -p "$R/hdfs-web/webapps/hdfs" "$R/hdfs-web/webapps/datanode" "$R/hdfs-web/webapps/static"
  mapreduce_conf
}

# ---- HTTPS-only profile (`up --https`) ---------------------------------------------------
# Every web server of the cluster speaks TLS only (conf/cluster/https/*.xml, appended like the
# secure profile's). Its key material is made with the JDK's keytool at each start, so no
# key outlives the cluster that used it:
#   <runtime>/tls/ca.p12   the CA's key (stays on this machine; the nodes never see it)
#   <runtime>/tls/ca.pem   the CA's certificate: what clients trust (`env`: YARN_AM_CA_FILE)
#   <runtime>/conf/ssl/server.p12       one key for every node, its certificate naming rm,
#                          nm1..nmN, localhost and their addresses, signed by the CA
#   <runtime>/conf/ssl/truststore.p12   the CA, for the daemons (ssl-server/ssl-client.xml)
# The store password is a test-cluster constant (ssl-server.xml holds it as well).
TLS="$R/tls"
TLS_PASS=yarn-am-test
CURL_TLS=()

# The web addresses and URLs of the profile: RM_WEB / NN_WEB (host:port), RM_URL / NN_URL,
# nm_url NODE, and CURL_TLS (curl's trust for them).
web_addresses() {
  if ((HTTPS)); then
    RM_WEB=rm:8090 NN_WEB=rm:9871 NM_WEB_PORT=8044 WEB_SCHEME=https
    CURL_TLS=(--cacert "$TLS/ca.pem")
  else
    RM_WEB=rm:8088 NN_WEB=rm:9870 NM_WEB_PORT=8042 WEB_SCHEME=http
    CURL_TLS=()
  fi
  RM_URL="$WEB_SCHEME://$RM_WEB"
  NN_URL="$WEB_SCHEME://$NN_WEB"
}
nm_url() { echo "$WEB_SCHEME://$1:$NM_WEB_PORT"; }

keytool_q() { "$JAVA_HOME/bin/keytool" "$@" >>"$TLS/keytool.log" 2>&1 || die "keytool $1 failed (log: $TLS/keytool.log)"; }

# A fresh CA and node key (see above). Natively every daemon reads them from <runtime>/conf;
# the docker backend mounts that folder read-only into every node.
https_material() {
  rm -rf "$TLS" "$R/conf/ssl"
  mkdir -p "$TLS" "$R/conf/ssl"
  local store=(-storetype pkcs12 -storepass "$TLS_PASS") san="dns:localhost,ip:127.0.0.1,dns:rm,ip:127.0.0.10" n
  for n in "${NMS[@]}"; do san+=",dns:$n,ip:127.0.0.$((10 + ${n#nm}))"; done
  keytool_q -genkeypair -alias ca -keyalg RSA -keysize 2048 -validity 30 \
    -dname "CN=yarn-am test cluster CA" -ext bc:c -ext ku:c=keyCertSign,cRLSign \
    -keystore "$TLS/ca.p12" "${store[@]}"
  "$JAVA_HOME/bin/keytool" -exportcert -rfc -alias ca -keystore "$TLS/ca.p12" "${store[@]}" \
    >"$TLS/ca.pem" 2>>"$TLS/keytool.log" || die "exporting the CA certificate failed (log: $TLS/keytool.log)"
  keytool_q -genkeypair -alias node -keyalg RSA -keysize 2048 -validity 30 -dname "CN=rm" \
    -keystore "$R/conf/ssl/server.p12" "${store[@]}"
  keytool_q -certreq -alias node -file "$TLS/node.csr" -keystore "$R/conf/ssl/server.p12" "${store[@]}"
  keytool_q -gencert -alias ca -keystore "$TLS/ca.p12" "${store[@]}" -infile "$TLS/node.csr" \
    -outfile "$TLS/node.pem" -rfc -validity 30 -ext "san=$san" \
    -ext ku:c=digitalSignature,keyEncipherment -ext eku=serverAuth
  keytool_q -importcert -noprompt -alias ca -file "$TLS/ca.pem" -keystore "$R/conf/ssl/server.p12" "${store[@]}"
  keytool_q -importcert -alias node -file "$TLS/node.pem" -keystore "$R/conf/ssl/server.p12" "${store[@]}"
  keytool_q -importcert -noprompt -alias ca -file "$TLS/ca.pem" -keystore "$R/conf/ssl/truststore.p12" "${store[@]}"
  chmod 600 "$TLS/ca.p12"
}

# The HTTPS settings at the end of each runtime site file (Hadoop takes the last value), and
# ssl-server.xml / ssl-client.xml beside them (on every daemon's classpath).
https_conf() {
  https_material
  local f tmp
  for f in yarn-site.xml hdfs-site.xml; do
    tmp=$(mktemp)
    sed '/<\/configuration>/d' "$R/conf/$f" >"$tmp"
    sed "s#@CLUSTER_DIR@#$R#g" "$REPO/conf/cluster/https/$f" >>"$tmp"
    echo '</configuration>' >>"$tmp"
    mv "$tmp" "$R/conf/$f"
  done
  for f in ssl-server.xml ssl-client.xml; do
    sed "s#@CLUSTER_DIR@#$R#g" "$REPO/conf/cluster/https/$f" >"$R/conf/$f"
  done
}

# Hadoop 3.4's web apps use Guice/cglib reflection that Java 17 forbids without these.
JPMS_OPTS=(-XX:+IgnoreUnrecognizedVMOptions
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.math=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.util.zip=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.security.util=ALL-UNNAMED
  --add-opens=java.base/sun.security.x509=ALL-UNNAMED
  --add-exports=java.base/sun.net.dns=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED)

# ---- Secure profile: an MIT KDC on loopback with every principal the cluster needs. -------
# All Kerberos state lives in $K (nothing in /etc is read: KRB5_CONFIG / KRB5_KDC_PROFILE).
# The database and keytabs survive `down` (keys stay valid across restarts); only the KDC
# process stops. Principals: rm/rm, nm/nm1..3, nn/rm, dn/nm1..3, HTTP/{rm,nm1..3} in one service
# keytab; the user alice (alice.keytab, and alice-stale.keytab: an older key of hers, for
# "wrong keytab" tests); probe (cluster.sh's own readiness checks, probe.keytab).
K="$R/kdc"
REALM=YARN.TEST
KDC_PORT=${YARN_AM_KDC_PORT:-60088}
SERVICE_PRINCIPALS=(rm/rm nm/nm1 nm/nm2 nm/nm3 nn/rm dn/nm1 dn/nm2 dn/nm3 HTTP/rm HTTP/nm1 HTTP/nm2 HTTP/nm3)
KRB_OPTS=()

krb_env() { export KRB5_CONFIG="$K/krb5.conf" KRB5_KDC_PROFILE="$K/kdc.conf"; }

# The KDC programs live in /usr/sbin, which a non-login shell may not have on PATH.
krb_need_tools() {
  PATH="$PATH:/usr/sbin:/sbin"
  local t
  for t in krb5kdc kdb5_util kadmin.local kinit klist; do
    command -v "$t" >/dev/null || die "--secure needs the MIT Kerberos KDC and tools ($t is missing): run scripts/prereqs.sh (apt-get install krb5-kdc krb5-user)"
  done
}

krb_write_conf() {
  mkdir -p "$K/db" "$K/keytabs"
  cat >"$K/krb5.conf" <<C
[libdefaults]
  default_realm = $REALM
  dns_lookup_realm = false
  dns_lookup_kdc = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  ticket_lifetime = 24h
  renew_lifetime = 7d
[realms]
  $REALM = {
    kdc = 127.0.0.1:$KDC_PORT
  }
[domain_realm]
  rm = $REALM
  nm1 = $REALM
  nm2 = $REALM
  nm3 = $REALM
C
  # A realm block must span several lines ("Cannot find KDC for realm" otherwise).
  cat >"$K/kdc.conf" <<C
[kdcdefaults]
  kdc_listen = 127.0.0.1:$KDC_PORT
  kdc_tcp_listen = 127.0.0.1:$KDC_PORT
[realms]
  $REALM = {
    database_name = $K/db/principal
    key_stash_file = $K/db/stash
    max_life = 24h
    max_renewable_life = 7d
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$K/kdc.log
C
}

kadmin_q() { kadmin.local -r "$REALM" -q "$1" >>"$K/kadmin.log" 2>&1 || die "kadmin.local: '$1' failed (log: $K/kadmin.log)"; }

# Creates the realm, principals and keytabs once. `ktadd` gives a principal new random keys,
# so each is exported exactly once (alice twice on purpose: the first keytab goes stale).
krb_create_realm() {
  [[ -f "$K/db/principal" && -f "$K/keytabs/alice.keytab" && -f "$K/keytabs/probe.keytab" ]] && return
  say "creating the Kerberos realm $REALM in $K"
  rm -rf "$K/db" "$K/keytabs"
  mkdir -p "$K/db" "$K/keytabs"
  kdb5_util create -s -r "$REALM" -P "$(head -c 24 /dev/urandom | base64)" >"$K/kadmin.log" 2>&1 \
    || die "kdb5_util create failed (log: $K/kadmin.log)"
  local p
  for p in "${SERVICE_PRINCIPALS[@]}" alice probe; do kadmin_q "addprinc -randkey $p@$REALM"; done
  kadmin_q "ktadd -k $K/keytabs/service.keytab $(printf "%s@$REALM " "${SERVICE_PRINCIPALS[@]}")"
  kadmin_q "ktadd -k $K/keytabs/alice-stale.keytab alice@$REALM"
  kadmin_q "ktadd -k $K/keytabs/alice.keytab alice@$REALM"
  kadmin_q "ktadd -k $K/keytabs/probe.keytab probe@$REALM"
  chmod 600 "$K"/keytabs/*.keytab
  krb_add_missing_services
  # The web apps sign their hadoop.auth cookies with this; one secret for all of them.
  (umask 077; head -c 32 /dev/urandom | base64 >"$K/http-secret")
}

# A realm made by an older cluster.sh lacks later service principals (dn/nm1..3 came with a
# DataNode per node): add those, appending their keys to the service keytab. Needs kadmin.local
# only, so it runs before the KDC starts.
krb_add_missing_services() {
  local have p
  have=$(klist -kt "$K/keytabs/service.keytab" 2>/dev/null || true)
  for p in "${SERVICE_PRINCIPALS[@]}"; do
    [[ "$have" == *" $p@$REALM"* ]] && continue
    say "adding the principal $p@$REALM to the service keytab"
    kadmin_q "addprinc -randkey $p@$REALM"
    kadmin_q "ktadd -k $K/keytabs/service.keytab $p@$REALM"
  done
}

kdc_start() {
  alive kdc && return
  (
    close_inherited_fds
    exec setsid krb5kdc -n -r "$REALM" >"$K/krb5kdc.out" 2>&1 </dev/null
  ) &
  echo $! >"$R/kdc.pid"
  kdc_wait
  say "started kdc (pid $(cat "$R/kdc.pid"), 127.0.0.1:$KDC_PORT, realm $REALM)"
}

# Until the KDC gives probe a ticket (20 s at most).
kdc_wait() {
  local start=$SECONDS
  until kinit -kt "$K/keytabs/probe.keytab" -c "FILE:$K/probe.cc" "probe@$REALM" >/dev/null 2>&1; do
    alive kdc || { cat "$K/krb5kdc.out" >&2 2>/dev/null; die "the KDC exited (log: $K/kdc.log)"; }
    ((SECONDS - start < 20)) || die "the KDC gives no ticket after 20s (log: $K/kdc.log)"
    sleep 0.2
  done
}

# Fresh tickets: alice's for clients (cluster.sh env), probe's for the readiness checks.
krb_tickets() {
  kinit -kt "$K/keytabs/probe.keytab" -c "FILE:$K/probe.cc" "probe@$REALM" >/dev/null \
    || die "kinit probe failed (log: $K/kdc.log)"
  kinit -kt "$K/keytabs/alice.keytab" -c "FILE:$K/alice.cc" "alice@$REALM" >/dev/null \
    || die "kinit alice failed (log: $K/kdc.log)"
}

secure_start() {
  krb_need_tools
  krb_write_conf
  krb_env
  krb_create_realm
  krb_add_missing_services
  kdc_start
  krb_tickets
  KRB_OPTS=(-Djava.security.krb5.conf="$K/krb5.conf")
}

# The secure site XML (conf/cluster/secure/*.xml) goes at the end of each runtime site file:
# Hadoop takes the last value of a property, so it overrides the plain settings.
secure_conf() {
  local f tmp
  for f in core-site.xml yarn-site.xml hdfs-site.xml; do
    tmp=$(mktemp)
    sed '/<\/configuration>/d' "$R/conf/$f" >"$tmp"
    sed "s#@KRB_DIR@#$K#g" "$REPO/conf/cluster/secure/$f" >>"$tmp"
    echo '</configuration>' >>"$tmp"
    mv "$tmp" "$R/conf/$f"
  done
}

secure_env() {
  echo "export KRB5_CONFIG=$K/krb5.conf"
  echo "export KRB5CCNAME=FILE:$K/alice.cc"
  echo "export YARN_AM_TEST_PRINCIPAL=alice@$REALM"
  echo "export YARN_AM_TEST_KEYTAB=$K/keytabs/alice.keytab"
}

# GET for the readiness checks: SPNEGO with probe's ticket under the secure profile.
web_get() {
  if ((SECURE)); then
    KRB5_CONFIG="$K/krb5.conf" KRB5CCNAME="FILE:$K/probe.cc" \
      curl -sf --max-time 5 "${CURL_TLS[@]}" --negotiate -u : "$1"
  else
    curl -sf --max-time 5 "${CURL_TLS[@]}" "$1"
  fi
}

# WebHDFS names the caller with user.name only under simple auth; with Kerberos a user.name
# that differs from the ticket's user is refused.
user_param() { ((SECURE)) || printf '&user.name=%s' "$(id -un)"; }

alive() { [[ -f "$R/$1.pid" ]] && kill -0 "$(cat "$R/$1.pid")" 2>/dev/null; }

# Daemons must not inherit the caller's open files. A caller that holds a lock, e.g.
# `flock /tmp/yarn-am-cluster.lock cluster.sh up`, would otherwise leave the lock's file open
# in every daemon, and the lock would stay taken for as long as the cluster runs.
close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
  done
  return 0
}

# Extra -D options for the next start_daemon (the DataNodes' ports). Every other JVM reading
# hdfs-site.xml (the NameNode checks dfs.datanode.address) gets DN_DEFAULTS, unused ports.
DAEMON_OPTS=()
DN_DEFAULTS=(-Dit.dn.xfer=9866 -Dit.dn.http=9864 -Dit.dn.ipc=9867 -Dit.dn.https=9865)

start_daemon() { # name host heap main-class [args...]
  local name=$1 host=$2 heap=$3 cls=$4
  shift 4
  alive "$name" && { say "$name already running (pid $(cat "$R/$name.pid"))"; return; }
  mkdir -p "$R/$name" "$R/logs"
  (
    close_inherited_fds
    HADOOP_CONF_DIR="$R/conf" YARN_CONF_DIR="$R/conf" JAVA_HOME="$JAVA_HOME" \
    PATH="$JAVA_HOME/bin:$PATH" \
      exec nohup setsid "$JAVA_HOME/bin/java" "${JPMS_OPTS[@]}" "${KRB_OPTS[@]}" "${DN_DEFAULTS[@]}" "${DAEMON_OPTS[@]}" -Xmx"$heap" -XX:+UseSerialGC \
        -XX:TieredStopAtLevel=1 -Xss512k -Djava.net.preferIPv4Stack=true \
        -Dit.host="$host" -Dit.dir="$R/$name" -Dhadoop.home.dir="$R" -Dhadoop.id.str="$(id -un)" \
        -Dhadoop.log.dir="$R/$name/log" -Dyarn.log.dir="$R/$name/log" \
        -cp "$R/conf:$R/hdfs-web:$R/lib/*" "$cls" "$@" >"$R/logs/$name.log" 2>&1 </dev/null
  ) &
  echo $! >"$R/$name.pid"
  say "started $name (pid $!)"
}

# Prints "RUNNING-count ok|wrong" from the RM's node list; ok only when exactly the layout's
# NMs (nm1..nm3 by default) are RUNNING with the racks of the topology table.
nodes_state() {
  web_get "$RM_URL/ws/v1/cluster/nodes" 2>/dev/null | python3 -c '
import json, sys
want = dict(w.split("=") for w in sys.argv[1].split())
try:
    nodes = ((json.load(sys.stdin).get("nodes") or {}).get("node")) or []
except Exception:
    print("0 wrong"); sys.exit()
got = {n["nodeHostName"]: n["rack"] for n in nodes if n.get("state") == "RUNNING"}
print(len(got), "ok" if got == want else "wrong")' "$(layout_want)" 2>/dev/null || echo "0 down"
}

# Prints "<live DataNodes> ok|wrong" for HDFS: ok when WebHDFS answers for /, the NameNode
# is out of safe mode and exactly the three DataNodes are live.
hdfs_state() {
  [[ "$WITH_HDFS" == 0 ]] && { echo "3 ok"; return; }
  web_get "$NN_URL/webhdfs/v1/?op=GETFILESTATUS$(user_param)" >/dev/null 2>&1 \
    || { echo "0 down"; return; }
  web_get "$NN_URL/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo" 2>/dev/null | python3 -c '
import json, sys
try:
    b = json.load(sys.stdin)["beans"][0]
    live = len(json.loads(b.get("LiveNodes") or "{}"))
except Exception:
    print("0 wrong"); sys.exit()
print(live, "ok" if live == 3 and not b.get("Safemode") else "wrong")' 2>/dev/null || echo "0 down"
}

# Whether any daemon of ours runs (a half-started cluster counts).
all_alive_any() {
  local d
  for d in rm $(started_nms) nn dn "${DNS[@]}"; do alive "$d" && return 0; done
  return 1
}

all_alive() {
  local d
  for d in rm "${NMS[@]}" "${HDFS[@]}"; do alive "$d" || return 1; done
  ((SECURE == 0)) || alive kdc
}

# Ready: every daemon we started is alive (the RM lists a killed NM as RUNNING until its
# liveness expiry), the RM shows nm1..nm3 RUNNING with their racks, and HDFS takes writes.
is_ready() { all_alive && [[ "$(nodes_state)" == "$NODES ok" && "$(hdfs_state)" == "3 ok" ]]; }

wait_ready() {
  local start=$SECONDS last="" yarn_at="" hdfs_at=""
  while ((SECONDS - start < READY_TIMEOUT)); do
    for d in rm "${NMS[@]}" "${HDFS[@]}"; do
      alive "$d" || { tail -40 "$R/logs/$d.log" >&2; die "$d exited during start-up (log: $R/logs/$d.log)"; }
    done
    local s h
    s=$(nodes_state)
    h=$(hdfs_state)
    # When each half got ready, so the cost of HDFS in start-up time stays visible.
    [[ "$s" == "$NODES ok" && -z "${yarn_at:-}" ]] && { yarn_at=$((SECONDS - start)); say "YARN ready after ${yarn_at}s"; }
    [[ "$h" == "3 ok" && -z "${hdfs_at:-}" ]] && { hdfs_at=$((SECONDS - start)); say "HDFS ready after ${hdfs_at}s"; }
    [[ "$s" == "$NODES ok" && "$h" == "3 ok" ]] && return 0
    [[ "$s $h" != "$last" ]] && say "waiting for $NODES RUNNING nodes with racks and 3 live DataNodes: now $s, HDFS $h"
    last="$s $h"
    sleep 1
  done
  cmd_logs 40 >&2
  die "cluster not ready after ${READY_TIMEOUT}s (last: YARN $(nodes_state), HDFS $(hdfs_state))"
}

# HDFS is formatted once and keeps its files across down/up (staging folders are removed by
# the apps). A fresh name dir also needs fresh DataNode dirs: an old one names the old
# cluster id and the DataNode would refuse to register. The layout file marks a name dir made
# for the DataNode-per-node layout; one from the single-DataNode layout (whose blocks lived on
# `rm`) is formatted again.
HDFS_LAYOUT="dn-per-nm 1"
# The layout and the name dir's cluster id: a cluster.sh of the old layout (another worktree)
# formats again without knowing of the layout file, and the cluster id then differs.
hdfs_layout() { echo "$HDFS_LAYOUT $(grep -s '^clusterID=' "$R/nn/name/current/VERSION")"; }
format_hdfs() {
  [[ -f "$R/nn/name/current/VERSION" && "$(cat "$R/nn/layout" 2>/dev/null)" == "$(hdfs_layout)" ]] && return
  say "formatting HDFS (first start of this layout)"
  stop_daemons dn "${DNS[@]}" nn   # a NameNode of the old layout may still run
  rm -rf "$R/nn/name" "$R/dn" "$R"/dn?/data
  mkdir -p "$R/nn" "$R/logs"
  HADOOP_CONF_DIR="$R/conf" "$JAVA_HOME/bin/java" "${JPMS_OPTS[@]}" "${KRB_OPTS[@]}" "${DN_DEFAULTS[@]}" -Xmx256m -XX:+UseSerialGC \
    -Djava.net.preferIPv4Stack=true -Dit.host=rm -Dit.dir="$R/nn" -Dhadoop.home.dir="$R" \
    -Dhadoop.log.dir="$R/nn/log" -cp "$R/conf:$R/hdfs-web:$R/lib/*" \
    org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive \
    >"$R/logs/nn-format.log" 2>&1 </dev/null 9>&- \
    || { tail -30 "$R/logs/nn-format.log" >&2; die "formatting the NameNode failed (log: $R/logs/nn-format.log)"; }
  hdfs_layout >"$R/nn/layout"
}

# A DataNode's data transfer, HTTP and IPC ports: distinct per node, because the NameNode
# sees every DataNode's RPC come from 127.0.0.1 (the kernel's source address for any 127.x
# destination) and tells DataNodes apart by that address and the transfer port. dnN on nmN:
# 98N6 transfer, 98N4 HTTP (WebHDFS redirects), 98N7 IPC, 98N5 HTTPS (under --https, in place
# of HTTP).
dn_ports() { local i=${1#dn}; echo "98${i}6 98${i}4 98${i}7 98${i}5"; }


start_hdfs() {
  [[ "$WITH_HDFS" == 0 ]] && return
  # A NameNode started by an old-layout cluster.sh (one DataNode `dn` on rm) has the old
  # replication and must start again with this conf.
  alive dn && stop_daemons dn nn
  format_hdfs
  start_daemon nn rm 256m org.apache.hadoop.hdfs.server.namenode.NameNode
  local dn xfer http ipc https
  for dn in "${DNS[@]}"; do
    read -r xfer http ipc https < <(dn_ports "$dn")
    DAEMON_OPTS=(-Dit.dn.xfer="$xfer" -Dit.dn.http="$http" -Dit.dn.ipc="$ipc" -Dit.dn.https="$https")
    start_daemon "$dn" "nm${dn#dn}" 192m org.apache.hadoop.hdfs.server.datanode.DataNode
  done
  DAEMON_OPTS=()
}

# ---- MapReduce, on demand only (`cluster.sh mapreduce`, for scripts/mr_bench.py) -------
# The MR jars (mapreduce-pom.xml) go to $MR_LIB, minus every artifact lib/ already has (other
# versions of guava, reload4j, ... would shadow the daemons' own). The stamp names the pom.
MR_LIB="$R/mr-lib"
fetch_mr_jars() {
  local stamp
  stamp="$MR_LIB/.pom-$(sha1sum "$HERE/mapreduce-pom.xml" | cut -c1-12)-$HADOOP_VERSION"
  [[ -f "$stamp" ]] && return
  command -v mvn >/dev/null || die "maven (mvn) is not installed"
  say "fetching the MapReduce $HADOOP_VERSION jars from Maven Central (once)"
  rm -rf "$MR_LIB" "$MR_LIB.tmp"
  timeout 900 mvn -B -q -f "$HERE/mapreduce-pom.xml" -Dhadoop.version="$HADOOP_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$MR_LIB.tmp" \
    >"$R/mvn-mr.log" 2>&1 || { tail -30 "$R/mvn-mr.log" >&2; die "downloading the MapReduce jars failed: see $R/mvn-mr.log"; }
  local f base
  for f in "$MR_LIB.tmp"/*.jar; do
    [[ -f "$R/lib/${f##*/}" ]] && { rm -f "$f"; continue; }
    base=$(basename "$f" | sed -E 's/-[0-9][^-]*(-[a-z]+)?\.jar$//')
    compgen -G "$R/lib/$base-[0-9]*.jar" >/dev/null && rm -f "$f"
  done
  mv "$MR_LIB.tmp" "$MR_LIB"
  touch "$stamp"
  say "MapReduce jars: $(ls "$MR_LIB" | wc -l) files beside lib/"
}

# With the MR jars present: each NM runs MapReduce's ShuffleHandler (the MR AM refuses a
# container whose NM reports no shuffle port, even for map-only jobs) from mr-lib in its own
# class loader, on a port of its own; and MR clients, the MR AM and its tasks get
# $R/mr-conf: the runtime conf with HDFS as the default file system (the MR AM looks for its
# staging folder there) and conf/cluster/mapred-site.xml. conf/ itself gets a mapred-site.xml
# with the shuffle port only: ShuffleHandler's JobConf loads mapred-default.xml (13562) after
# yarn-site.xml, and other Hadoop clients reading conf/ (Spark's YARN mode) must not pick up
# the MR classpath settings.
mapreduce_conf() {
  [[ -d "$MR_LIB" ]] || return 0
  rm -rf "$R/mr-conf"
  cp -r "$R/conf" "$R/mr-conf"
  sed -i "s#<name>fs.defaultFS</name><value>[^<]*</value>#<name>fs.defaultFS</name><value>hdfs://rm:8020</value>#" "$R/mr-conf/core-site.xml"
  sed "s#@CLUSTER_DIR@#$R#g" "$REPO/conf/cluster/mapred-site.xml" >"$R/mr-conf/mapred-site.xml"
  printf '%s\n' '<?xml version="1.0"?>' '<configuration>' \
    '  <property><name>mapreduce.shuffle.port</name><value>0</value></property>' \
    '</configuration>' >"$R/conf/mapred-site.xml"
  grep -q 'mapreduce_shuffle' "$R/conf/yarn-site.xml" && return
  add_property yarn-site.xml yarn.nodemanager.aux-services mapreduce_shuffle
  add_property yarn-site.xml yarn.nodemanager.aux-services.mapreduce_shuffle.class org.apache.hadoop.mapred.ShuffleHandler
  add_property yarn-site.xml yarn.nodemanager.aux-services.mapreduce_shuffle.classpath "$MR_LIB/*"
  add_property yarn-site.xml yarn.nodemanager.aux-services.mapreduce_shuffle.system-classes \
    "-org.apache.hadoop.mapred.,-org.apache.hadoop.mapreduce.,java.,javax.,org.apache.hadoop.,org.slf4j.,org.apache.log4j."
}

cmd_mapreduce() {
  exec 9>"$R/.lock"
  flock -w 600 9 || die "another cluster.sh holds $R/.lock"
  is_ready || die "the cluster is not up (cluster.sh up first)"
  pick_java
  fetch_mr_jars
  mapreduce_conf
  local n restart=()
  for n in "${NMS[@]}"; do
    grep -q 'mapreduce_shuffle listening' "$R/logs/$n.log" 2>/dev/null || restart+=("$n")
  done
  ((${#restart[@]})) || { say "MapReduce ready (client conf: $R/mr-conf)"; return; }
  say "restarting ${restart[*]} with the MapReduce shuffle service"
  stop_daemons "${restart[@]}"
  for n in "${restart[@]}"; do
    rm -rf "$R/$n/recovery"
    start_nm "$n"
  done
  # The RM lists the restarted nodes RUNNING throughout: wait for each NM's own web service
  # (it answers once its services, the shuffle among them, have started).
  local start=$SECONDS
  for n in "${restart[@]}"; do
    until curl -sf --max-time 3 "${CURL_TLS[@]}" "$(nm_url "$n")/ws/v1/node/info" >/dev/null 2>&1; do
      alive "$n" || { tail -40 "$R/logs/$n.log" >&2; die "$n exited (log: $R/logs/$n.log)"; }
      ((SECONDS - start < READY_TIMEOUT)) || die "$n not answering after ${READY_TIMEOUT}s"
      sleep 0.5
    done
    grep -q 'mapreduce_shuffle listening' "$R/logs/$n.log" || die "$n started without the shuffle service (log: $R/logs/$n.log)"
  done
  wait_ready
  say "MapReduce ready (client conf: $R/mr-conf)"
}

cmd_up() {
  parse_profile "$@"
  mkdir -p "$R"
  exec 9>"$R/.lock"
  flock -w 600 9 || die "another cluster.sh holds $R/.lock"
  [[ "$BACKEND" == native ]] || docker_prepare_up "$@"
  local want
  want=$(profile_name)
  if all_alive_any && [[ "$(running_profile)" != "$want" ]]; then
    say "running profile is '$(running_profile)', wanted '$want': restarting"
    cmd_down
  fi
  ((SECURE == 0)) || secure_start
  if is_ready; then say "already up ($RM_URL, profile $want)"; return; fi
  pick_java
  ensure_hosts
  fetch_jars
  write_conf
  local t0=$SECONDS
  if ! alive rm; then
    rm -rf "$R/rmstore"   # old apps must not come back from a previous run
    start_daemon rm rm 512m org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
  fi
  wait_rm_started
  say "ResourceManager STARTED after $((SECONDS - t0))s"
  for n in "${NMS[@]}"; do
    # NM recovery state of containers from an earlier run (or a killed NM) must not come back.
    alive "$n" || rm -rf "$R/$n/recovery"
    # A starting NM renames old local and log folders to *_DEL_* and deletes them in the
    # background; one stopped soon after never finishes, and they pile up (27 GB seen).
    alive "$n" || rm -rf "$R/$n"/local/*_DEL_* "$R/$n"/logs/*_DEL_*
    start_nm "$n"
  done
  start_hdfs
  echo "$want" >"$R/profile"
  echo "$NODES $RACKS" >"$R/layout"
  wait_ready
  local hdfs_note=""
  [[ "$WITH_HDFS" == 0 ]] || hdfs_note=", WebHDFS $NN_URL"
  say "cluster ready after $((SECONDS - t0))s: $RM_URL, nodes $(layout_summary)$hdfs_note"
  if grep -l 'InaccessibleObjectException' "$R"/logs/*.log >/dev/null 2>&1; then
    say "WARNING: InaccessibleObjectException in $(grep -l InaccessibleObjectException "$R"/logs/*.log | xargs)"
  fi
}

# Containers run under setsid (DefaultContainerExecutor), so a killed NM leaves them behind;
# their pid files name them. Kill by recorded pid only, never by pattern.
kill_containers() {
  local f
  while IFS= read -r f; do
    local pid
    pid=$(cat "$f" 2>/dev/null) || continue
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -TERM -- "-$pid" 2>/dev/null || true
  done < <(find "$R" -path '*nmPrivate*' -name '*.pid' 2>/dev/null)
}

# A node failure: the NM and every container it started die at once (kill -9). The RM
# notices after yarn.nm.liveness-monitor.expiry-interval-ms; `up` brings the NM back.
cmd_kill_nm() {
  local n=${1:-}
  [[ " ${NMS[*]} " == *" $n "* ]] || die "kill-nm wants one of: ${NMS[*]}"
  alive "$n" || die "$n is not running"
  kill -KILL "$(cat "$R/$n.pid")"
  rm -f "$R/$n.pid"
  local f
  while IFS= read -r f; do
    local pid
    pid=$(cat "$f" 2>/dev/null) || continue
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -KILL -- "-$pid" 2>/dev/null || true
  done < <(find "$R/$n" -path '*nmPrivate*' -name '*.pid' 2>/dev/null)
  say "$n killed with its containers"
}

start_nm() { start_daemon "$1" "$1" "$(nm_heap)" org.apache.hadoop.yarn.server.nodemanager.NodeManager; }

# Waits until the RM's web service says STARTED.
wait_rm_started() {
  local start=$SECONDS
  until web_get "$RM_URL/ws/v1/cluster/info" 2>/dev/null | grep -q '"state":"STARTED"'; do
    alive rm || { tail -40 "$R/logs/rm.log" >&2; die "ResourceManager exited (log: $R/logs/rm.log)"; }
    ((SECONDS - start < READY_TIMEOUT)) || die "ResourceManager not STARTED after ${READY_TIMEOUT}s"
    sleep 0.5
  done
}

# The daemon restarts behind restart-rm and restart-nm (tests/cluster/docker.sh has its own):
# stop the old JVM, start a new one; nm_restarted says when the new NM answers.
restart_rm_daemon() {
  pick_java
  stop_daemons rm
  start_daemon rm rm 512m org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
}
restart_nm_daemon() { # nm
  pick_java
  stop_daemons "$1"
  start_nm "$1"
}
restart_nn_daemon() {
  pick_java
  ((SECURE == 0)) || KRB_OPTS=(-Djava.security.krb5.conf="$K/krb5.conf")
  stop_daemons nn
  start_daemon nn rm 256m org.apache.hadoop.hdfs.server.namenode.NameNode
}
nm_restarted() { # nm
  curl -sf --max-time 3 "${CURL_TLS[@]}" "$(nm_url "$1")/ws/v1/node/info" >/dev/null 2>&1
}

# RM restart with work-preserving recovery: the state store ($R/rmstore, which `up` wipes)
# is kept, so running apps, their AMs and containers carry on; AMs re-register when the
# RM tells them it does not know them.
cmd_restart_rm() {
  exec 9>"$R/.lock"
  flock -w 600 9 || die "another cluster.sh holds $R/.lock"
  alive rm || die "rm is not running"
  local t0=$SECONDS
  restart_rm_daemon
  wait_rm_started
  wait_ready
  say "rm restarted in $((SECONDS - t0))s"
}

# An HDFS outage: the NameNode stopped and started again on its name folder; WebHDFS and HDFS
# RPC fail meanwhile, and the cluster is ready again once the DataNodes have reported.
cmd_restart_nn() {
  exec 9>"$R/.lock"
  flock -w 600 9 || die "another cluster.sh holds $R/.lock"
  [[ "$WITH_HDFS" != 0 ]] && alive nn || die "nn is not running"
  local t0=$SECONDS
  restart_nn_daemon
  wait_ready
  say "nn restarted in $((SECONDS - t0))s"
}

# NM restart with NM recovery (supervised): the stopped NM neither kills its containers nor
# unregisters, and the new one takes them back from its recovery state. Must be back within
# the RM's NM liveness expiry (45 s) or the RM declares the node lost.
# Hadoop's RMAdminCLI against the running RM's admin port, e.g. `rmadmin -refreshNodes -g 60
# -server` after writing conf/nodes.exclude. Its jar (hadoop-yarn-client, Maven Central) is
# fetched once into <runtime>/admin-lib; the rest of its classpath is lib/.
cmd_rmadmin() {
  pick_java
  local jar="$R/admin-lib/hadoop-yarn-client-$HADOOP_VERSION.jar"
  if [[ ! -f "$jar" ]]; then
    mkdir -p "$R/admin-lib"
    timeout 300 mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
      -Dartifact="org.apache.hadoop:hadoop-yarn-client:$HADOOP_VERSION" \
      -DoutputDirectory="$R/admin-lib" >"$R/mvn-admin.log" 2>&1 ||
      { tail -20 "$R/mvn-admin.log" >&2; die "fetching hadoop-yarn-client failed: see $R/mvn-admin.log"; }
  fi
  timeout 120 "$JAVA_HOME/bin/java" -cp "$R/conf:$R/lib/*:$R/admin-lib/*" \
    org.apache.hadoop.yarn.client.cli.RMAdminCLI "$@"
}

cmd_restart_nm() {
  local n=${1:-}
  [[ " ${NMS[*]} " == *" $n "* ]] || die "restart-nm wants one of: ${NMS[*]}"
  exec 9>"$R/.lock"
  flock -w 600 9 || die "another cluster.sh holds $R/.lock"
  alive "$n" || die "$n is not running"
  local t0=$SECONDS
  restart_nm_daemon "$n"
  # The RM lists the node RUNNING throughout: wait for the new NM's own web service.
  local start=$SECONDS
  until nm_restarted "$n"; do
    alive "$n" || { tail -40 "$R/logs/$n.log" >&2; die "$n exited (log: $R/logs/$n.log)"; }
    ((SECONDS - start < READY_TIMEOUT)) || die "$n not answering after ${READY_TIMEOUT}s"
    sleep 0.5
  done
  wait_ready
  say "$n restarted in $((SECONDS - t0))s"
}

cmd_down() {
  [[ -d "$R" ]] || return 0
  # NMs first: an NM whose RM is gone retries its unregistration instead of exiting. Every NM
  # with a pid file, whatever layout started it.
  stop_daemons $(started_nms)
  stop_daemons rm
  stop_daemons dn "${DNS[@]}" nn
  kill_containers
  stop_daemons kdc
  say "cluster down"
}

stop_daemons() {
  local d start=$SECONDS
  for d in "$@"; do
    alive "$d" && kill -TERM "$(cat "$R/$d.pid")" 2>/dev/null || true
  done
  for d in "$@"; do
    while alive "$d" && ((SECONDS - start < 30)); do sleep 0.5; done
    if alive "$d"; then say "$d did not stop in 30s; killing"; kill -KILL "$(cat "$R/$d.pid")" 2>/dev/null || true; fi
    rm -f "$R/$d.pid"
  done
}

# One daemon's line in `status` (tests/cluster/docker.sh has its own).
daemon_state() { # daemon
  if alive "$1"; then echo "running (pid $(cat "$R/$1.pid"))"; else echo "stopped"; fi
}

cmd_status() {
  local d
  for d in rm "${NMS[@]}" "${HDFS[@]}"; do
    echo "$d: $(daemon_state "$d")"
  done
  local s h
  s=$(nodes_state)
  h=$(hdfs_state)
  echo "RM nodes: $s"
  echo "HDFS live DataNodes: $h"
  [[ "$s" == "$NODES ok" && "$h" == "3 ok" ]]
}

cmd_logs() {
  local n=${1:-40} f
  for f in "$R"/logs/*.log; do
    [[ -f "$f" ]] || continue
    echo "===== $f (last $n lines)"
    tail -n "$n" "$f"
  done
}

cmd_env() {
  echo "export HADOOP_CONF_DIR=$R/conf"
  echo "export YARN_CONF_DIR=$R/conf"
  if ((HTTPS)); then
    echo "export YARN_AM_RM_WEB=$RM_URL"
    echo "export YARN_AM_CA_FILE=$TLS/ca.pem"
  else
    echo "export YARN_AM_RM_WEB=$RM_WEB"
  fi
  [[ "$WITH_HDFS" == 0 ]] || echo "export YARN_AM_WEBHDFS=$NN_URL"
  echo "export YARN_AM_CLUSTER_DIR=$R"
  ((SECURE == 0)) || secure_env
}

# The backend: recorded in $R/backend while a docker cluster is up (`down` removes it).
running_backend() { cat "$R/backend" 2>/dev/null || echo native; }
# `up` with no backend named and no cluster running: docker where Docker can run (root, with the
# engine prereqs.sh installs, or DOCKER_HOST naming an engine), else native. The benchmarks'
# layouts (--nodes/--racks) are native only.
default_backend() {
  local a
  for a in "$@"; do [[ "$a" == --nodes || "$a" == --racks ]] && { echo native; return; }; done
  if [[ -n "${DOCKER_HOST:-}" ]] && DOCKER_HOST=$DOCKER_HOST docker version >/dev/null 2>&1; then
    echo docker
  elif [[ $(id -u) == 0 && -x /usr/sbin/dockerd ]]; then
    echo docker
  else
    echo native
  fi
}
native_running() { [[ -f "$R/rm.pid" ]] && kill -0 "$(cat "$R/rm.pid")" 2>/dev/null; }
BACKEND=$(running_backend)
UP_ARGS=()
# 1 when `up` chose the backend itself: a docker engine that cannot start then falls back to native.
BACKEND_DEFAULTED=0
if [[ "${1:-}" == up ]]; then
  if [[ ! -f "$R/backend" ]] && ! native_running; then
    BACKEND=$(default_backend "${@:2}")
    BACKEND_DEFAULTED=1
  fi
  case "${YARN_AM_CLUSTER_DOCKER:-}" in 1) BACKEND=docker BACKEND_DEFAULTED=0 ;; 0) BACKEND=native BACKEND_DEFAULTED=0 ;; esac
  for a in "${@:2}"; do
    case "$a" in
      --docker) BACKEND=docker BACKEND_DEFAULTED=0 ;;
      --native) BACKEND=native BACKEND_DEFAULTED=0 ;;
      *) UP_ARGS+=("$a") ;;
    esac
  done
  if [[ "$BACKEND" != "$(running_backend)" ]] && { [[ -f "$R/backend" ]] || native_running; }; then
    say "switching the backend from $(running_backend) to $BACKEND: stopping the $(running_backend) cluster"
    YARN_AM_CLUSTER_DOCKER= bash "$0" down
  fi
fi
# shellcheck source=tests/cluster/docker.sh
[[ "$BACKEND" == native ]] || { source "$HERE/docker.sh"; engine_pick; }

# Commands other than `up` act on the running profile (its probes need SPNEGO when secure)
# and layout.
[[ "${1:-}" == up || "$(running_profile)" != *secure* ]] || SECURE=1
[[ "${1:-}" == up || "$(running_profile)" != *https* ]] || HTTPS=1
[[ "${1:-}" == up ]] || { load_layout; web_addresses; }

docker_only() { [[ "$BACKEND" == docker ]] || die "$1 needs the docker backend (cluster.sh up --docker)"; }

case "${1:-}" in
  up) cmd_up "${UP_ARGS[@]}" ;;
  backend) running_backend ;;
  images)
    [[ "$BACKEND" == docker ]] || source "$HERE/docker.sh"
    docker_need_tools
    mkdir -p "$DK"
    engine_start
    t0=$SECONDS
    build_images
    say "images ready in $((SECONDS - t0))s: $(cat "$DK/node-image")"
    [[ "$BACKEND" == docker ]] || engine_stop ;;
  from-node) [[ "$BACKEND" == native ]] || cmd_from_node "${2:-}" "${3:-}" ;;
  kill-node) docker_only kill-node; cmd_kill_node "${2:-}" ;;
  pause-node) docker_only pause-node; cmd_pause_node "${2:-}" ;;
  unpause-node) docker_only unpause-node; cmd_unpause_node "${2:-}" ;;
  mapreduce) cmd_mapreduce ;;
  profile) running_profile ;;
  down) cmd_down ;;
  status) cmd_status ;;
  logs) cmd_logs "${2:-40}" ;;
  kill-nm) cmd_kill_nm "${2:-}" ;;
  restart-rm) cmd_restart_rm ;;
  restart-nn) cmd_restart_nn ;;
  restart-nm) cmd_restart_nm "${2:-}" ;;
  env) cmd_env ;;
  rmadmin) shift; cmd_rmadmin "$@" ;;
  *) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
