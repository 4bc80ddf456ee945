#!/usr/bin/env python3
"""Real-cluster locality A/B: the simulator's trace families run by yarn-am with
`--strategy spark` and `--strategy default` on a bigger local cluster, beside the simulator's
prediction for the same trace. Not part of `make test`.

Run under the shared cluster lock (each call should fit in ~12 minutes):

    cargo build --bin yarn-am --example locality_trace
    flock /tmp/yarn-am-it.lock python3 scripts/locality_bench.py run \\
        --families uniform,skewed,very-skewed --runs 3 --out target/locality-bench.jsonl
    flock /tmp/yarn-am-it.lock python3 scripts/locality_bench.py run \\
        --families datanode-only,busy --runs 3 --out target/locality-bench.jsonl
    python3 scripts/locality_bench.py report target/locality-bench.jsonl

`run` starts `cluster.sh up --native --nodes 12 --racks 4` (another layout, profile or
backend is restarted), runs every family `--runs` times per strategy, alternating which
strategy goes first, and appends one JSON line per application to --out; at the end it stops
that cluster (`cluster.sh down`) unless --keep. `report` prints the Markdown tables: the A/B
with the calibrated simulator beside it, and the gap per trace for each model
(`examples/locality_trace.rs`: base, previous, fresh order, calibrated).

Per application: tasks by locality (the AM's job report), time from submit to the end
(`submit --wait`) and the driver's wall time, container requests sent (the allocator's
`updated container requests ... added=N` log lines of the AM), containers granted (its
`container granted` lines), and the RM's own count of containers by locality, read from the
application attempt page of the RM web UI (RMAppAttemptMetrics: node-local, rack-local and
off-switch containers by the request level that satisfied them), and the RM's grants in order
(time, container, host, NODE_LOCAL / RACK_LOCAL / OFF_SWITCH) from its log, and per grant
the YARN allocation request id that filled it (-1 strict, 0 relaxed) with the allocator
request the AM matched it to (`am_grants`, from the AM's log). The AM's log is
kept in target/locality-bench/<app>-am.log. `report` also prints default against Spark
paired by seed, with the simulator's prediction and gap.

The `busy` family first submits a competing application (`--executors 12` containers of 2
vcores running `sleep`, no locality): half the cluster's vcores are taken while the trace runs.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request

import benchlib
from benchlib import REPO, sh

CLUSTER = os.path.join(REPO, "tests/cluster/cluster.sh")
FAMILIES = ["uniform", "skewed", "very-skewed", "datanode-only", "busy"]
STRATEGIES = ["spark", "default"]


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cluster_env():
    """benchlib's environment, staging on the local file system: every NM is on this machine,
    and uploading the binary to WebHDFS would add seconds to every submit."""
    env = benchlib.cluster_env()
    env.pop("YARN_AM_WEBHDFS", None)
    return env


def binary(name):
    for profile in ("release", "debug"):
        p = os.path.join(REPO, "target", profile, name)
        if os.path.exists(p):
            return p
    sys.exit(f"{name} not built: cargo build --bin yarn-am --example locality_trace")


def trace_tool():
    return binary(os.path.join("examples", "locality_trace"))


def rm_get(env, path):
    url = f"http://{env['YARN_AM_RM_WEB']}{path}"
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def rm_locality(env, app):
    """The RM's container counts by locality for the app's first attempt, from the attempt
    page's table: rows = how the container was placed (node-local, rack-local, off-switch),
    columns = which request level it satisfied."""
    attempt = "appattempt_" + app[len("application_"):] + "_000001"
    try:
        html = rm_get(env, f"/cluster/appattempt/{attempt}")
    except Exception as e:  # the page is a convenience: keep the run if it is missing
        log(f"no attempt page for {app}: {e}")
        return None
    with open(os.path.join(REPO, "target", "locality-bench", f"{attempt}.html"), "w") as f:
        f.write(html)  # kept: the RM forgets the app when the cluster restarts
    out = {}
    for key, label in (("node", "Node Local"), ("rack", "Rack Local"), ("off_switch", "Off Switch")):
        m = re.search(r"Num " + label + r" Containers \(satisfied by\)\s*</td>(.*?)</tr>", html, re.S)
        if not m:
            return None
        cells = [int(x) for x in re.findall(r"<td[^>]*>\s*(\d+)\s*</td>", m.group(1))]
        out[key] = cells
    return out


def am_container_dir(cluster_dir, app):
    for d in glob.glob(f"{cluster_dir}/nm*/logs/{app}/container_*_000001"):
        return d
    return None


def am_log_counts(am_dir):
    """Requests sent, containers granted, and the hosts executors were launched on."""
    requests = 0
    text = open(os.path.join(am_dir, "stderr"), errors="replace").read()
    for m in re.finditer(r"updated container requests .*?added=(\d+)", text):
        requests += int(m.group(1))
    granted = len(re.findall(r"container granted", text))
    hosts = re.findall(r"launching executor .*?host=(\S+)", text)
    return requests, granted, hosts


def am_grant_requests(am_dir):
    """Each grant with the YARN request key that filled it (yarn-client's `granted by the RM`:
    allocation request id -1 = a strict request, 0 = a relaxed one) and the allocator's request
    it was matched to (`grant matched to a request`: level, named hosts), in log order:
    [container, host, allocation request id, level, request]."""
    text = open(os.path.join(am_dir, "stderr"), errors="replace").read()
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    ids, out = {}, []
    for line in text.splitlines():
        m = re.search(r"granted by the RM.*?container=(\S+).*?allocation_request_id=(-?\d+)", line)
        if m:
            ids[m.group(1)] = int(m.group(2))
            continue
        m = re.search(r"grant matched to a request.*?container=(\S+) host=(\S+) level=(\w+) "
                      r"request=(.*?) placed=", line)
        if m:
            out.append([m.group(1), m.group(2), ids.get(m.group(1)), m.group(3), m.group(4)])
    return out


def rm_grants(cluster_dir, app):
    """The RM's grants to `app`'s first attempt, in order, from its log (CapacityScheduler at
    INFO): each as [time "HH:MM:SS,mmm", container number, host, placement type]. The AM's
    own container is number 1. The RM log is rewritten when the cluster restarts, so these
    are read right after the run."""
    ident = app[len("application_"):]
    grants, kind = [], None
    try:
        lines = open(os.path.join(cluster_dir, "logs", "rm.log"), errors="replace")
    except OSError:
        return None
    for line in lines:
        m = re.search(r"assignedContainer application attempt=appattempt_" + ident + r"_000001 .*type=(\w+)", line)
        if m:
            kind = m.group(1)
            continue
        m = re.search(r"^\S+ (\S+) .*Assigned container container_" + ident + r"_01_(\d+) .* on host ([^:\s]+)", line)
        if m:
            grants.append([m.group(1), int(m.group(2)), m.group(3), kind])
            kind = None
    return grants


def submit(env, job, strategy, name, extra=()):
    cmd = [binary("yarn-am"), "submit", "--job", job, "--strategy", strategy, "--name", name,
           "--max-attempts", "1", "--wait", "--wait-timeout", "600", *extra]
    t0 = time.time()
    p = subprocess.run(cmd, text=True, capture_output=True, env=env)
    elapsed = time.time() - t0
    m = re.search(r"application_\d+_\d+", p.stdout + p.stderr)
    if not m:
        raise RuntimeError(f"submit printed no application id (exit {p.returncode}): {p.stderr[-2000:]}")
    return m.group(0), p.returncode, elapsed


def start_hog(env):
    cmd = [binary("yarn-am"), "submit", "--name", "locality-bench-hog", "--max-attempts", "1",
           "--executors", "12", "--executor-vcores", "2", "--executor-memory", "256",
           "--executor-command", "sleep 900", "--strategy", "default"]
    out = sh(*cmd, env=env)
    app = re.search(r"application_\d+_\d+", out).group(0)
    deadline = time.time() + 120
    while time.time() < deadline:
        info = json.loads(rm_get(env, f"/ws/v1/cluster/apps/{app}"))["app"]
        if info.get("runningContainers", 0) >= 13:  # the AM and 12 executors
            log(f"competing app {app} holds {info['allocatedVCores']} vcores")
            return app
        time.sleep(1)
    raise RuntimeError(f"the competing app {app} did not get its 12 containers in 120 s")


def run(args):
    # The bigger layouts are the native backend's (docker-compose.yml has three NodeManagers).
    env_up = ["bash", CLUSTER, "up", "--native", "--nodes", str(args.nodes), "--racks", str(args.racks)]
    log(" ".join(env_up[1:]))
    t0 = time.time()
    subprocess.run(env_up, check=True)
    log(f"cluster ready in {time.time() - t0:.0f} s")
    env = cluster_env()
    cluster_dir = env["YARN_AM_CLUSTER_DIR"]
    tool = trace_tool()
    os.makedirs(os.path.join(REPO, "target", "locality-bench"), exist_ok=True)
    out = open(args.out, "a")
    try:
        for family in args.families.split(","):
            if family not in FAMILIES:
                sys.exit(f"unknown family {family}: one of {FAMILIES}")
            hog = start_hog(env) if family == "busy" else None
            try:
                for k in range(args.runs):
                    seed = args.seed + k
                    topo = ["--nodes", str(args.nodes), "--racks", str(args.racks), "--seed", str(seed)]
                    job = os.path.join(REPO, "target", "locality-bench", f"{family}-{seed}.json")
                    with open(job, "w") as f:
                        f.write(sh(tool, "job", family, *topo))
                    order = STRATEGIES if k % 2 == 0 else STRATEGIES[::-1]
                    for strategy in order:
                        app, code, elapsed = submit(env, job, strategy, f"locality-{family}-{seed}-{strategy}")
                        am_dir = am_container_dir(cluster_dir, app)
                        report = json.load(open(os.path.join(am_dir, "job-report.json"))) if am_dir else {}
                        requests, granted, hosts = am_log_counts(am_dir) if am_dir else (None, None, [])
                        if am_dir:  # kept: the NM's log folders go when the cluster restarts
                            with open(os.path.join(REPO, "target", "locality-bench", f"{app}-am.log"), "w") as f:
                                f.write(open(os.path.join(am_dir, "stderr"), errors="replace").read())
                        rec = {
                            "family": family, "seed": seed, "strategy": strategy, "app": app,
                            "nodes": args.nodes, "racks": args.racks, "exit": code,
                            "submit_to_end_s": round(elapsed, 2),
                            "wall_time_ms": report.get("wall_time_ms"),
                            "by_locality": report.get("by_locality"),
                            "tasks_total": report.get("tasks_total"),
                            "requests_sent": requests, "containers_granted": granted,
                            "executor_hosts": hosts,
                            "rm_locality": rm_locality(env, app),
                            "rm_grants": rm_grants(cluster_dir, app),
                            "am_grants": am_grant_requests(am_dir) if am_dir else [],
                        }
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
                        bl = rec["by_locality"] or {}
                        log(f"{family} seed {seed} {strategy}: {app} exit {code} in {elapsed:.1f} s, "
                            f"node-local {bl.get('node_local')}/{rec['tasks_total']}, requests {requests}, "
                            f"RM {rec['rm_locality']}")
            finally:
                if hog:
                    subprocess.run([binary("yarn-am"), "kill", hog], env=env, capture_output=True)
    finally:
        out.close()
        if not args.keep:
            # Down, not back up: the next user's `up` picks its own backend (docker where it
            # can run), which an `up` here would pin to native.
            log("stopping the bench's cluster (cluster.sh down)")
            subprocess.run(["bash", CLUSTER, "down"], check=False)


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else float("nan")


def report(args):
    recs = [json.loads(l) for f in args.file for l in open(f) if l.strip()]
    # The simulator's prediction for each trace, computed now (it is deterministic), so the
    # table follows the current model: `base` (the big tables' model), `previous` (the first
    # calibration, one draw), `calibrated` (heartbeat phases, the mean of several draws) and
    # `fresh_order` (the same without the phases).
    tool = trace_tool()
    sims = {}
    for r in recs:
        key = (r["family"], r["seed"], r["nodes"], r["racks"])
        if key not in sims:
            sims[key] = json.loads(sh(tool, "sim", r["family"], "--nodes", str(r["nodes"]),
                                      "--racks", str(r["racks"]), "--seed", str(r["seed"])))
        for model in ("base", "previous", "fresh_order", "calibrated"):
            r[model] = sims[key][model][r["strategy"]]
        r["bound"] = sims[key].get("bound")

    def share(r, rack):
        b = r["by_locality"]
        total = b["node_local"] + b["rack_local"] + b["any"] + b["no_pref"]
        return (b["node_local"] + (b["rack_local"] if rack else 0)) / max(total, 1)

    pct = lambda xs: f"{100 * mean(xs):.0f}%"
    cells = []
    for family in FAMILIES:
        for strategy in STRATEGIES:
            rs = [r for r in recs if r["family"] == family and r["strategy"] == strategy and r["by_locality"]]
            if rs:
                cells.append((family, strategy, rs))
    print("| trace | strategy | runs | node-local: real (±sd) | sim | rack-or-better: real | sim | "
          "submit to end s | driver wall s | sim rounds | requests sent | granted | "
          "RM: executors node / rack / off-switch | sim: off-switch | executor hosts: real | sim |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for family, strategy, rs in cells:
        rm = [r["rm_locality"] for r in rs if r["rm_locality"]]
        rm_cell = "n/a"
        if rm:
            # The AM's own container is one off-switch grant (its ask names no host).
            rm_cell = " / ".join(f"{mean([sum(x[k]) - (k == 'off_switch') for x in rm]):.1f}"
                                 for k in ("node", "rack", "off_switch"))
        real = [share(r, False) for r in rs]
        sd = f" ±{100 * statistics.stdev(real):.0f}" if len(real) > 1 else ""
        hosts = [len(set(r["executor_hosts"])) for r in rs if r.get("executor_hosts")]
        print(f"| {family} | {strategy} | {len(rs)} | {pct(real)}{sd} | "
              f"{pct([r['calibrated']['node_local'] for r in rs])} | "
              f"{pct([share(r, True) for r in rs])} | {pct([r['calibrated']['rack_local'] for r in rs])} | "
              f"{mean([r['submit_to_end_s'] for r in rs]):.1f} | "
              f"{mean([r['wall_time_ms'] for r in rs]) / 1000:.1f} | "
              f"{mean([r['calibrated']['rounds'] for r in rs]):.1f} | "
              f"{mean([r['requests_sent'] for r in rs]):.1f} | {mean([r['containers_granted'] for r in rs]):.1f} | "
              f"{rm_cell} | {mean([r['calibrated']['off_switch'] for r in rs]):.1f} | "
              f"{mean(hosts):.1f} | {mean([r['calibrated'].get('executor_hosts') for r in rs]):.1f} |")
    print()
    print("Default against Spark, paired by seed (difference = default - Spark, points, ± sd of "
          "the mean), with the calibrated simulator's prediction and its gap (model - real):")
    print()
    print("| trace | seeds | node-local: default | spark | paired diff | sim: default (gap) | "
          "sim: spark (gap) | rack-or-better: default | spark | paired diff | executor hosts: "
          "default / spark | RM off-switch executors: default / spark | strict grants (default) | "
          "offline optimum: reached / bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for family in FAMILIES:
        runs = {}
        for r in recs:
            if r["family"] == family and r["by_locality"]:
                runs.setdefault(r["seed"], {})[r["strategy"]] = r
        pairs = [v for v in runs.values() if "default" in v and "spark" in v]
        if not pairs:
            continue
        def col(strategy, f):
            return [f(p[strategy]) for p in pairs]
        def diff(f):
            d = [100 * (f(p["default"]) - f(p["spark"])) for p in pairs]
            sem = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
            return f"{mean(d):+.1f} ±{sem:.1f}"
        node = lambda r: share(r, False)
        rack = lambda r: share(r, True)
        def sim(strategy):
            m, real = mean(col(strategy, lambda r: r["calibrated"]["node_local"])), mean(col(strategy, node))
            return f"{100 * m:.0f}% ({100 * (m - real):+.0f})"
        hosts = lambda s: mean(col(s, lambda r: len(set(r["executor_hosts"])) if r.get("executor_hosts") else None))
        off = lambda s: mean(col(s, lambda r: sum(r["rm_locality"]["off_switch"]) - 1 if r.get("rm_locality") else None))
        def optimum(pairs):
            b = [p["default"].get("bound") for p in pairs]
            if not all(b):
                return "n/a"
            return f"{pct([x['reached'] for x in b])} / {pct([x['upper'] for x in b])}"
        strict = [sum(1 for g in p["default"].get("am_grants", []) if g[2] == -1) for p in pairs]
        allg = [len(p["default"].get("am_grants", [])) for p in pairs]
        print(f"| {family} | {len(pairs)} | {pct(col('default', node))} | {pct(col('spark', node))} | "
              f"{diff(node)} | {sim('default')} | {sim('spark')} | {pct(col('default', rack))} | "
              f"{pct(col('spark', rack))} | {diff(rack)} | {hosts('default'):.1f} / {hosts('spark'):.1f} | "
              f"{off('default'):.1f} / {off('spark'):.1f} | {sum(strict)} of {sum(allg)} | "
              f"{optimum(pairs)} |")
    print()
    print("Simulator vs reality, node-local share (gap = model - real, points):")
    print()
    print("| trace | strategy | runs | real (±sd of the mean) | base (gap) | previous (gap) | "
          "fresh order (gap) | calibrated (gap) | rack-or-better gap, calibrated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for family, strategy, rs in cells:
        real = [share(r, False) for r in rs]
        sem = f" ±{100 * statistics.stdev(real) / len(real) ** 0.5:.0f}" if len(real) > 1 else ""
        def gap(model, rack=False):
            level = "rack_local" if rack else "node_local"
            d = mean([r[model][level] for r in rs]) - mean([share(r, rack) for r in rs])
            return f"{100 * d:+.0f}"
        print(f"| {family} | {strategy} | {len(rs)} | {pct(real)}{sem} | "
              + " | ".join(f"{pct([r[m]['node_local'] for r in rs])} ({gap(m)})"
                           for m in ("base", "previous", "fresh_order", "calibrated"))
              + f" | {gap('calibrated', True)} |")
    if args.runs:
        print()
        print("| trace | seed | strategy | app | node-local | rack-local | any | executor hosts | RM grants |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in recs:
            b = r["by_locality"] or {}
            hosts = r.get("executor_hosts")
            hosts = f"{len(set(hosts))} hosts for {len(hosts)}" if hosts else "n/a"
            grants = r.get("rm_grants")
            grants = " ".join(f"{g[2]}{'' if g[3] == 'NODE_LOCAL' else '(' + (g[3] or '?')[:3].lower() + ')'}"
                              for g in grants[1:]) if grants else "n/a"
            print(f"| {r['family']} | {r['seed']} | {r['strategy']} | {r['app']} | {b.get('node_local')} | "
                  f"{b.get('rack_local')} | {b.get('any')} | {hosts} | {grants} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--nodes", type=int, default=12)
    r.add_argument("--racks", type=int, default=4)
    r.add_argument("--families", default=",".join(FAMILIES))
    r.add_argument("--runs", type=int, default=3)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--out", default=os.path.join(REPO, "target", "locality-bench.jsonl"))
    r.add_argument("--keep", action="store_true", help="leave the bigger cluster running")
    q = sub.add_parser("report")
    q.add_argument("file", nargs="+", help="records (several files are read as one)")
    q.add_argument("--runs", action="store_true", help="also a table of every run")
    a = p.parse_args()
    run(a) if a.cmd == "run" else report(a)


if __name__ == "__main__":
    main()
