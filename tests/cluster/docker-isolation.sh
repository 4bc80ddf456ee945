#!/usr/bin/env bash
# By-hand proof of what the docker backend isolates (issue 22), against a running
# `cluster.sh up --docker` cluster; hold /tmp/yarn-am-it.lock while it runs. It submits an app
# (staged through WebHDFS) whose 3 executors each write a marker file under /tmp, wait, then
# list /tmp and report `id`; it reads what they wrote through the NodeManagers' web services
# and checks:
#   - every YARN container runs as yarn (uid 2000), not root;
#   - a container sees only the markers of containers on its own node, never another node's;
#   - the host's /tmp has none of them;
#   - the app's processes, seen from the host's /proc, all belong to uid 2000.
# Exit 0 when all hold. Needs a built yarn-am (YARN_AM_BIN, default
# ${CARGO_TARGET_DIR:-target}/debug/yarn-am).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN=${YARN_AM_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/yarn-am}
say() { printf '[isolation] %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }

[[ "$(bash "$HERE/cluster.sh" backend)" == docker ]] || die "no docker cluster is up (cluster.sh up --docker)"
bash "$HERE/cluster.sh" status >/dev/null || die "the cluster is not ready"
eval "$(bash "$HERE/cluster.sh" env)"
[[ -x "$BIN" ]] || die "no yarn-am binary at $BIN (cargo build, or set YARN_AM_BIN)"

# YARN runs it as `bash -c "<command>"` from its launch script, which expands $VARS first:
# only variables of the container's environment (NM_HOST, CONTAINER_ID), no shell variables.
cmd='id -un > /tmp/yarn-am-iso-$NM_HOST-$CONTAINER_ID; sleep 10; ls /tmp > <LOG_DIR>/tmp.ls; id -un > <LOG_DIR>/id.out; id -u >> <LOG_DIR>/id.out; sleep 600'
app=$("$BIN" submit --name docker-isolation --executors 3 --max-executors 3 --executor-memory 1536 \
  --webhdfs "$YARN_AM_WEBHDFS" --executor-command "$cmd" | awk '/^submitted /{print $2}')
[[ -n "$app" ]] || die "submit printed no application id"
say "submitted $app; waiting for its executors to report"
trap '"$BIN" kill "$app" >/dev/null 2>&1 || true' EXIT

# Executor containers of the app on each NM, and their tmp.ls once written.
python3 - "$app" <<'PY' || die "see above"
import json, subprocess, sys, time, os, glob
app = sys.argv[1]
tail = app[len("application_"):]
def get(url):
    r = subprocess.run(["curl", "-sf", "-m", "10", url], capture_output=True)
    return r.stdout.decode() if r.returncode == 0 else None
def log(nm, cid, name):
    body = get(f"http://{nm}:8042/ws/v1/node/containerlogs/{cid}/{name}")
    if body is None or "LogContents:\n" not in body:
        return None
    text = body.split("LogContents:\n", 1)[1]
    return text.rsplit(f"End of LogType:{name}.", 1)[0]
deadline = time.time() + 120
seen = {}
while time.time() < deadline:
    seen = {}
    for nm in ["nm1", "nm2", "nm3"]:
        js = json.loads(get(f"http://{nm}:8042/ws/v1/node/containers") or "{}")
        cs = ((js.get("containers") or {}).get("container")) or []
        for c in cs if isinstance(cs, list) else [cs]:
            cid = c["id"]
            if tail in cid and not cid.endswith("_000001") and c["state"] == "RUNNING":
                ls, ids = log(nm, cid, "tmp.ls"), log(nm, cid, "id.out")
                if ls is not None and ids is not None:
                    seen[cid] = (nm, ls.split(), ids.split())
    if len(seen) >= 3:
        break
    time.sleep(2)
if len(seen) < 3:
    sys.exit(f"[isolation] FAIL: only {len(seen)} executors reported in 120 s")
ok = True
nodes = {nm for nm, _, _ in seen.values()}
for cid, (nm, ls, ids) in sorted(seen.items()):
    mine = [f for f in ls if f.startswith("yarn-am-iso-") and tail in f]
    foreign = [f for f in mine if not f.startswith(f"yarn-am-iso-{nm}-")]
    print(f"[isolation] {cid} on {nm}: user {ids[0]} uid {ids[1]}; markers in its /tmp: {mine}")
    if ids[0] != "yarn" or ids[1] == "0":
        print(f"[isolation] FAIL: {cid} runs as {ids}"); ok = False
    if f"yarn-am-iso-{nm}-{cid}" not in mine:
        print(f"[isolation] FAIL: {cid} does not see its own marker"); ok = False
    if foreign:
        print(f"[isolation] FAIL: {cid} on {nm} sees another node's markers {foreign}"); ok = False
print(f"[isolation] executors on {len(nodes)} nodes: {sorted(nodes)}")
if len(nodes) < 2:
    print("[isolation] FAIL: all executors on one node: nothing shown about other nodes"); ok = False
on_host = glob.glob(f"/tmp/yarn-am-iso-*{tail}*")
print(f"[isolation] markers in the host's /tmp: {on_host}")
if on_host:
    ok = False
uids = {}
for p in glob.glob("/proc/[0-9]*"):
    try:
        env = open(f"{p}/environ", "rb").read()
        if f"CONTAINER_ID=container_".encode() in env and tail.encode() in env:
            uid = os.stat(p).st_uid
            uids.setdefault(uid, []).append(open(f"{p}/cmdline", "rb").read().split(b"\0")[0].decode())
    except OSError:
        pass
print(f"[isolation] the app's processes by uid, from the host's /proc: { {u: sorted(set(c)) for u, c in uids.items()} }")
if not uids or set(uids) != {2000}:
    print("[isolation] FAIL: a process of the app runs as another uid than yarn's 2000"); ok = False
sys.exit(0 if ok else 1)
PY
say "ok: containers run as yarn, each node's /tmp is its own, none on the host"
