#!/usr/bin/env python3
"""A runtime shipped with `--archive`, first and second submit: what staging sends and when the
first executor's command starts.

    python3 scripts/ship_bench.py [--rounds 2] [--archive ZIP] [--no-lock]

Per round, on a cluster started afresh (`cluster.sh down` then `up`: empty HDFS, NodeManagers
with no localised files), two submits of the same app: one executor whose command checks the
unpacked archive and puts its start time (`date +%s.%N`, the node's clock, which is this
machine's) into the app's key-value store with `./yarn-am kv put`. The archive is the Spark
plugin's zip of SPARK_HOME/jars (made by spark/ on a first Spark run; default: the newest
~/.cache/yarn-am/spark-libs-*.zip), staged through yarn-am's content-addressed cache on HDFS.
Reported per submit: what `submit` uploaded, its wall time (hashing and uploads included), and
the seconds from the start of `submit` to the executor's command starting (upload, the AM's
start, the container's grant and the NodeManager's localisation: download and unzip on the
first submit, nothing on the second, which reuses its PRIVATE copy). The yarn-am binary is
staged the same way (YARN_AM_BIN, default target/release/yarn-am). Holds the shared cluster
lock unless --no-lock.
"""
import argparse
import contextlib
import glob
import os
import re
import subprocess
import sys
import time

from benchlib import REPO, cluster_env, cluster_lock, median_table, sh

CLUSTER = os.path.join(REPO, "tests/cluster/cluster.sh")


def one_submit(env, binary, archive, mode):
    t0 = time.time()
    p = subprocess.run(
        [binary, "submit", "--name", f"ship-bench-{mode}", "--max-attempts", "1", "--executors", "1",
         "--archive", f"{archive}#__spark_libs__", "--executor-command",
         'test -d __spark_libs__ && ./yarn-am kv put started "$(date +%s.%N)"; sleep 300'],
        env=env, capture_output=True, text=True, check=False)
    t_submit = time.time() - t0
    out = p.stdout + p.stderr
    m = re.search(r"^submitted (application_\S+)", out, re.M)
    if p.returncode != 0 or not m:
        sys.exit(f"submit failed (exit {p.returncode}): {out[-2000:]}")
    app = m.group(1)
    staged = re.search(r"^staged .*$", out, re.M)
    uploaded = re.search(r"\(([\d.]+) MiB\), \d+ already", staged.group(0)) if staged else None
    started = None
    deadline = t0 + 600
    while started is None and time.time() < deadline:
        g = subprocess.run([binary, "kv", "get", app, "started"], env=env, capture_output=True, text=True)
        if g.returncode == 0 and g.stdout.strip():
            started = float(g.stdout.strip())
        else:
            time.sleep(0.25)
    subprocess.run([binary, "kill", app], env=env, capture_output=True)
    if started is None:
        sys.exit(f"{app}: the executor's command never started")
    row = {"mode": mode, "app": app, "uploaded_mib": float(uploaded.group(1)) if uploaded else None,
           "submit_s": round(t_submit, 2), "first_command_s": round(started - t0, 2)}
    print(row, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--archive", default=None)
    ap.add_argument("--no-lock", action="store_true")
    a = ap.parse_args()
    archive = a.archive or max(glob.glob(os.path.expanduser("~/.cache/yarn-am/spark-libs-*.zip")),
                                key=os.path.getmtime, default=None)
    if not archive:
        sys.exit("no archive: pass --archive, or run the Spark plugin once (it makes ~/.cache/yarn-am/spark-libs-*.zip)")
    rows = []
    with contextlib.nullcontext() if a.no_lock else cluster_lock():
        for _ in range(a.rounds):
            sh("bash", CLUSTER, "down")
            sh("bash", CLUSTER, "up")
            env = cluster_env()
            if "YARN_AM_WEBHDFS" not in env:
                sys.exit("the cluster has no WebHDFS address: the cache needs HDFS staging")
            binary = env.get("YARN_AM_BIN", os.path.join(REPO, "target/release/yarn-am"))
            rows.append(one_submit(env, binary, archive, "first"))
            rows.append(one_submit(env, binary, archive, "second"))
        sh("bash", CLUSTER, "down")
    size = os.path.getsize(archive) / (1 << 20)
    print(f"\narchive {os.path.basename(archive)} ({size:.0f} MiB), {a.rounds} fresh clusters\n"
          + median_table(rows, ("first", "second"), ["uploaded_mib", "submit_s", "first_command_s"], "submit",
                         ratio=("second", "first")))


if __name__ == "__main__":
    main()
